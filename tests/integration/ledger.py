#!/usr/bin/env python3
"""Check the invariants every recording's ledger must hold.

Reads `wallprof report --format json` (mode wall) and `--mode on` output
and prints TAP-like "ok - ..." / "not ok - ..." lines; exits 1 when one
fails.

  ledger.py NAME WALL.json ON.json [--comm C ...] [--cpu-ns N] [--min-reach F]

Invariants, for any recording:
  - every thread: wall = on-CPU + off-CPU, off-CPU = blocked + runnable +
    preempted, exactly; it lives inside the recording; wall <= duration;
  - all threads' on-CPU together <= CPUs x duration;
  - the on-CPU time whose stack has user frames: at least --min-reach of
    it (default 0.9) has an outermost frame where a thread begins (_start,
    main, __libc_start_*, start_thread, clone), and at most
    --max-truncated (default 0.1) is cut by the stack copy's size.
Optional ground truth:
  --comm C    a thread named C is in the recording (repeatable)
  --cpu-ns N  the threads' on-CPU sum is N (the CPU time the kernel
              counted, e.g. from getrusage) within 5% + 20 ms
  --exclude-pid P  leave process P out of that sum (a wrapper that
              measured it)
  --stacks-of C  the stack checks only for threads named C (repeatable):
              a system-wide recording on a shared machine holds programs
              that the test did not start, whose binaries may have been
              rebuilt under them
"""
import argparse
import json
import sys

ROOTS = ("_start", "main", "__libc_start_main", "__libc_start_main_impl",
         "__libc_start_call_main", "start_thread", "__clone3", "clone3",
         "__clone", "clone")

failed = 0


def check(name, cond, detail=""):
    global failed
    if cond:
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}{': ' + detail if detail else ''}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("wall")
    ap.add_argument("on")
    ap.add_argument("--comm", action="append", default=[])
    ap.add_argument("--cpu-ns", type=int)
    ap.add_argument("--min-reach", type=float, default=0.9)
    ap.add_argument("--exclude-pid", type=int, default=-1)
    ap.add_argument("--max-truncated", type=float, default=0.1)
    ap.add_argument("--stacks-of", action="append", default=[])
    a = ap.parse_args()
    with open(a.wall) as f:
        w = json.load(f)
    with open(a.on) as f:
        on = json.load(f)
    h = w["header"]
    dur = h["duration_ns"]
    start, end = h["start_ns"], h["end_ns"]
    ncpu = h["nr_cpus"]
    bad = []
    total_on = measured_on = 0
    for t in w["threads"]:
        tag = f"{t['comm']} {t['pid']}/{t['tid']}"
        total_on += t["on_cpu_ns"]
        if t["pid"] != a.exclude_pid:
            measured_on += t["on_cpu_ns"]
        if t["wall_ns"] != t["on_cpu_ns"] + t["off_cpu_ns"]:
            bad.append(f"{tag}: wall {t['wall_ns']} != on + off")
        if t["off_cpu_ns"] != t["blocked_ns"] + t["runnable_ns"] + t["preempted_ns"]:
            bad.append(f"{tag}: off != blocked + runnable + preempted")
        if t["wall_ns"] > dur or t["start_ns"] < start or t["end_ns"] > end:
            bad.append(f"{tag}: outside the recording")
    check(f"{a.name}: {len(w['threads'])} threads, each wall = on + off "
          "exactly and inside the recording", not bad, "; ".join(bad[:5]))
    check(f"{a.name}: on-CPU of all threads {total_on / 1e9:.3f}s <= "
          f"{ncpu} CPUs x {dur / 1e9:.3f}s", total_on <= ncpu * dur)
    comms = {t["comm"] for t in w["threads"]}
    for c in a.comm:
        check(f"{a.name}: thread '{c}' is in the recording", c in comms,
              f"comms: {sorted(comms)[:20]}")
    if a.cpu_ns is not None:
        tol = a.cpu_ns * 0.05 + 20e6
        check(f"{a.name}: on-CPU {measured_on / 1e9:.3f}s matches the kernel's "
              f"CPU time {a.cpu_ns / 1e9:.3f}s (5% + 20 ms)",
              abs(measured_on - a.cpu_ns) <= tol)
    # A stack reaches where its thread began when one of its outermost user
    # frames is a thread's first function: a stripped program's _start has
    # no name, but __libc_start_main_impl, its callee, does.  A stack cut
    # by the stack copy's size is marked [truncated], one whose copy the
    # kernel could not read to the end [stack unreadable]: counted apart.
    user_ns = reach_ns = trunc_ns = 0
    worst = {}
    for s in on["stacks"]:
        if s["kind"] != "on-cpu":
            continue
        if a.stacks_of and s["comm"] not in a.stacks_of:
            continue
        names = [f["name"] for f in s["frames"] if not f.get("kernel")]
        if "[truncated]" in names or "[stack unreadable]" in names:
            trunc_ns += s["ns"]
            continue
        user = [n for n in names if not n.startswith("[")]
        if not user:
            continue
        user_ns += s["ns"]
        if any(n in ROOTS for n in user[-3:]):
            reach_ns += s["ns"]
        else:
            worst[user[-1]] = worst.get(user[-1], 0) + s["ns"]
    if user_ns:
        share = reach_ns / user_ns
        top = sorted(worst.items(), key=lambda kv: -kv[1])[:3]
        check(f"{a.name}: {share:.0%} of on-CPU time with a whole user stack "
              f"reaches where its thread began (want >= {a.min_reach:.0%})",
              share >= a.min_reach, f"cut short at {top}")
        tshare = trunc_ns / (user_ns + trunc_ns)
        check(f"{a.name}: {tshare:.0%} of on-CPU time with a user stack is "
              f"truncated by the stack copy's size (want <= {a.max_truncated:.0%})",
              tshare <= a.max_truncated)
    else:
        check(f"{a.name}: on-CPU stacks have user frames", False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
