#!/usr/bin/env python3
"""The kernel's per-thread figures of a server, and a report against them.

  servers.py watch OUT PID...
      reads every thread of these processes and of the processes they
      start, every 5 ms, from /proc/PID/task/TID/schedstat (its first
      field: the thread's on-CPU time so far), until they are gone or
      SIGTERM: "TID PID COMM MONO_NS ON_CPU_NS" lines into OUT, MONO_NS
      the monotonic clock (the recording's) at the reading; OUT.ready
      once the first reading is done.
  servers.py compare LABEL MODE REPORT.json OUT [options]
      for every thread of OUT, the kernel's on-CPU time against the
      report's: launched (MODE launched), its whole life, to its last
      reading; attached or -a (MODE attached, system), over the thread's
      span in the recording, between LO (the readings just inside the
      span) and HI (just outside it).  Prints TAP lines and a table of
      the figures; exits 1 when a check failed.  With system, the CPUs'
      ledger too.
      --busy NS     a thread is busy when the kernel counted at least NS
                    of on-CPU time (default 20 ms): its figure must be
                    the kernel's within max(2%, 5 ms)
      --exit-ns NS  launched: what a thread may run after its last
                    reading (its exit) and the report rightly counts
                    (default 2 ms): allowed above, not below

The readings bracket the recording's ends closely where the server is
idle there: the test stops the load (SIGSTOP) before the recording ends
and lets it go only once the recording has begun.
"""
import json
import os
import signal
import sys
import time

CAP_LINE = 4096          # a schedstat or comm line is a few dozen bytes


def read_small(path):
    with open(path, "rb") as f:
        return f.read(CAP_LINE).decode("utf-8", "replace")


def children(pid):
    """The child processes of every thread of PID."""
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task")[:100000]:
            try:
                kids += read_small(f"/proc/{pid}/task/{tid}/children").split()
            except OSError:
                pass
    except OSError:
        pass
    return kids


def watch(out, roots, period=0.005, limit=100.0):
    """Read every thread of ROOTS and of the processes they start, every
    PERIOD seconds, until they are all gone, SIGTERM, or LIMIT seconds:
    "TID PID COMM MONO_NS ON_CPU_NS" lines, a reading each.  A thread that
    has exited but is not yet reaped still reads its final figure."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    live = set(roots)
    rows = []
    comms = {}
    end = time.monotonic() + limit
    while live and not stop and time.monotonic() < end:
        for pid in list(live):
            live.update(children(pid))
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                live.discard(pid)
                continue
            for tid in tids[:100000]:
                base = f"/proc/{pid}/task/{tid}"
                try:
                    ns = int(read_small(base + "/schedstat").split()[0])
                    if tid not in comms:
                        comms[tid] = read_small(base + "/comm").strip().replace(" ", "_") or "?"
                except (OSError, ValueError, IndexError):
                    continue
                rows.append(f"{tid} {pid} {comms[tid]} {time.clock_gettime_ns(time.CLOCK_MONOTONIC)} {ns}\n")
        if not os.path.exists(out + ".ready"):
            open(out + ".ready", "w").close()
        time.sleep(period)
    with open(out + ".tmp", "w") as f:
        f.write("".join(rows))
    os.replace(out + ".tmp", out)


def load_series(path):
    """Each thread's readings: {tid: (pid, comm, [(mono, ns), ...])}."""
    threads = {}
    for line in open(path):
        f = line.split()
        if len(f) != 5:
            continue
        tid = int(f[0])
        threads.setdefault(tid, (int(f[1]), f[2], []))[2].append((int(f[3]), int(f[4])))
    return threads


def bracket(readings, at):
    """The readings just before and just after the time AT (None where
    there is none)."""
    before = after = None
    for mono, ns in readings:
        if mono <= at:
            before = ns
        elif after is None:
            after = ns
    return before, after


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "watch":
        watch(sys.argv[2], sys.argv[3:])
        return 0
    args = sys.argv[2:]
    opts = {"--busy": 20_000_000, "--exit-ns": 2_000_000}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = int(args[i + 1])
            i += 2
        else:
            pos.append(args[i])
            i += 1
    label, mode, report, series = pos[:4]
    series = load_series(series)
    rep = json.load(open(report))
    threads = {t["tid"]: t for t in rep["threads"]}
    failed = 0

    def check(cond, what):
        nonlocal failed
        failed += not cond
        print(f"{'ok' if cond else 'not ok'} - {label}: {what}")

    first = min((r[0][0] for _, _, r in series.values()), default=None)
    if mode != "launched":
        check(first is not None and first < rep["header"]["start_ns"],
              f"schedstat was read before the recording began ({first} < "
              f"{rep['header']['start_ns']})")

    # The table, for the log: every thread of the server.
    print(f"# {label}: TID COMM KERNEL_NS(LO..HI) WALLPROF_NS DIFF_NS ERR% SOURCE MOVED")
    busy = 0
    for tid, (pid, comm, rd) in sorted(series.items()):
        t = threads.get(tid)
        if mode == "launched":
            # Its last reading, and no more than the time it lived on
            # after it: the watcher may miss the final figure of a
            # process its parent reaps at once (a loaded machine delays
            # the readings; PostgreSQL's checkpointer works until its exit).
            lo = hi = rd[-1][1]
            if t and t["end_ns"] > rd[-1][0]:
                hi += t["end_ns"] - rd[-1][0]
        else:
            start = t["start_ns"] if t else rep["header"]["start_ns"]
            end = t["end_ns"] if t else rep["header"]["end_ns"]
            s0, s1 = bracket(rd, start)
            e0, e1 = bracket(rd, end)
            if s0 is None:          # born in the recording: from 0
                s0 = s1 = 0
            if s1 is None:
                s1 = s0
            if e0 is None:
                continue            # gone before the recording began
            if e1 is None:          # gone before it ended: its last reading
                e1 = e0
            lo, hi = max(e0 - s1, 0), e1 - s0
        want = (lo + hi) // 2
        got = t["on_cpu_ns"] if t else None
        err = (got - want) / want * 100 if t and want else 0.0
        print(f"#   {tid} {comm} {lo}..{hi} {got} {got - want if t else '-'} "
              f"{err:+.2f}% {t.get('on_cpu_source') if t else 'absent'} "
              f"{t.get('on_cpu_moved_ns') if t else '-'}")
        if want < opts["--busy"]:
            continue
        busy += 1
        if t is None:
            check(False, f"{comm} {tid}, busy ({want} ns on-CPU), is in the report")
            continue
        tol = max(want // 50, 5_000_000)
        top = hi + tol + (opts["--exit-ns"] if mode == "launched" else 0)
        check(lo - tol <= got <= top,
              f"{comm} {tid} on-CPU {got} vs schedstat {lo}..{hi}: {got - want:+d} "
              f"({err:+.2f}%) within [{lo - tol}, {top}]")
    check(busy > 0, f"the load kept a thread of the server busy ({busy})")

    # Every thread of the report, not only the server's.
    bad_wall = [t["tid"] for t in rep["threads"]
                if t["wall_ns"] != t["on_cpu_ns"] + t["off_cpu_ns"]
                or t["off_cpu_ns"] != t["blocked_ns"] + t["runnable_ns"] + t["preempted_ns"]]
    check(not bad_wall, f"wall = on + off and off = blocked + runnable + preempted, "
          f"every thread ({len(rep['threads'])}; wrong: {bad_wall[:5]})")
    over = [t["tid"] for t in rep["threads"] if t["on_cpu_ns"] > t["wall_ns"]]
    check(not over, f"no thread's on-CPU time exceeds its wall time {over[:5]}")
    if mode == "system":
        cpus = rep.get("cpus") or {}
        cap = cpus.get("capacity_ns", 0)
        on = sum(t["on_cpu_ns"] for t in rep["threads"])
        idle = cpus.get("idle_ns", 0)
        check(cap > 0 and on + idle <= cap,
              f"on-CPU {on} + idle {idle} = {on + idle} <= CPUs x duration {cap}")
        unknown = rep["quality"].get("unknown_event_samples", 0)
        check(unknown == 0, f"no sample of an unknown event counted ({unknown})")
    anchors = rep["quality"].get("on_cpu_anchors") or {}
    q = rep["quality"]
    print(f"# {label}: anchors {json.dumps(anchors, sort_keys=True)}")
    print(f"# {label}: switch-ins {q.get('switch_ins')} untimed {q.get('switch_ins_untimed')}, "
          f"records {q.get('records')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
