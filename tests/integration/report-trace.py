#!/usr/bin/env python3
# report-trace.py: check a `report --format trace` timeline against the
# `report --format json` report of the same recording and options.
#
#   report-trace.py check TRACE JSON [--min-block-us N] [--partial]
#		[--kinds K,...] [--names NAME,...] [--some-threads]
#
# It reads both back with python's json module and checks, printing one
# "ok - " or "not ok - " line per assertion (exit 1 if any failed):
#   - the documented fields: displayTimeUnit, otherData, traceEvents; each
#     event's ph (M, X or i), pid, tid, name, ts (and dur for X);
#   - the tracks are the JSON report's threads, no more: thread_name and
#     process_name metadata for each, with its name (and process_labels,
#     a command line, for some processes);
#   - a thread's slices never overlap and lie inside the report's window;
#   - per thread and kind (on-cpu, blocked, runnable, preempted), the
#     slices add up to the JSON report's time, to the nanosecond (blocked
#     and runnable within the recording's estimated runnable time, which
#     the timeline does not split out), and the kinds to its wall time;
#     its instant events are its samples.
# With --min-block-us, off-CPU slices shorter than that are left out of
# the trace: off-CPU sums may be smaller, and no slice is shorter but
# those the window cuts.  --partial: off-CPU sums may be smaller
# (--waker-comm selects blocked time, not threads).  With
# --kinds, only those kinds may appear (--mode); the others must not.
# --names: thread names that must be among the tracks.  --some-threads: the
# report shows some of the recording's threads (--tid, --pid), so the
# recording's estimate may lie in others' waits.
import json
import sys
from decimal import Decimal

KINDS = {"on-cpu": "on_cpu_ns", "blocked": "blocked_ns", "runnable": "runnable_ns",
         "preempted": "preempted_ns"}
failures = 0


def check(ok, what):
    global failures
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failures += 1
    return ok


def ns(us):
    """A trace time (microseconds, three decimals) in nanoseconds, exactly."""
    return int(Decimal(us) * 1000)


def main(argv):
    if len(argv) < 4 or argv[1] != "check":
        sys.stderr.write("usage: report-trace.py check TRACE JSON [options]\n")
        return 2
    min_block = 0
    partial = False
    some_threads = False
    kinds = set(KINDS)
    names = []
    opts = argv[4:]
    while opts:
        if opts[0] == "--min-block-us":
            min_block = int(opts[1]) * 1000
        elif opts[0] == "--partial":
            partial = True
            opts = opts[1:]
            continue
        elif opts[0] == "--some-threads":
            some_threads = True
            opts = opts[1:]
            continue
        elif opts[0] == "--kinds":
            kinds = set(opts[1].split(","))
        elif opts[0] == "--names":
            names = opts[1].split(",")
        else:
            sys.stderr.write("unknown option %s\n" % opts[0])
            return 2
        opts = opts[2:]
    with open(argv[2], "rb") as f:
        trace = json.loads(f.read().decode("utf-8"), parse_float=Decimal)
    with open(argv[3], "rb") as f:
        report = json.loads(f.read().decode("utf-8"))

    check(trace.get("displayTimeUnit") in ("ms", "ns"), "displayTimeUnit is set")
    other = trace.get("otherData", {})
    check(other.get("command") == report["header"]["command"] and
          other.get("mode") == report["mode"],
          "otherData: command, mode %s" % report["mode"])
    events = trace.get("traceEvents")
    if not check(isinstance(events, list), "traceEvents is a list"):
        return 1
    start = report["header"]["start_ns"]
    wstart = report["header"]["window_start_ns"] - start
    wend = report["header"]["window_end_ns"] - start
    check(ns(other["window_start_us"]) == wstart and ns(other["window_end_us"]) == wend,
          "otherData: the report's window")

    threads = {}
    for t in report["threads"]:
        threads[(t["pid"], t["tid"])] = t
    pids = {t["pid"] for t in report["threads"]}
    thread_names, process_names = {}, {}
    slices, samples = {}, {}
    bad = []
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        ph = e.get("ph")
        if not isinstance(e.get("name"), str) or not all(isinstance(x, int) for x in key):
            bad.append(e)
        elif ph == "M":
            if e["name"] == "thread_name":
                thread_names[key] = e["args"]["name"]
            elif e["name"] == "process_name":
                process_names[key[0]] = e["args"]["name"]
            elif e["name"] != "process_labels" or \
                    not isinstance(e.get("args", {}).get("labels"), str):
                bad.append(e)
        elif ph == "X":
            unrec = e.get("args", {}).get("wakeup_recorded", True) is False
            if e.get("cat") not in KINDS or not e["name"].startswith(e["cat"]) or \
               not isinstance(e.get("ts"), Decimal) or not isinstance(e.get("dur"), Decimal) or \
               e.get("args", {}).get("wakeup_recorded", False) is not False or \
               (unrec and e["cat"] != "blocked"):
                bad.append(e)
            else:
                slices.setdefault(key, []).append((ns(e["ts"]), ns(e["dur"]), e["cat"], unrec))
        elif ph == "i":
            if e.get("s") != "t" or not isinstance(e.get("ts"), Decimal) or \
               not isinstance(e.get("args", {}).get("stack"), list):
                bad.append(e)
            else:
                samples.setdefault(key, []).append(ns(e["ts"]))
        else:
            bad.append(e)
    check(not bad, "every event has the documented fields (%d bad%s)"
          % (len(bad), ": %s" % bad[0] if bad else ""))
    check(set(thread_names) == set(threads),
          "a named track for each thread of the report, no more (%d, %d)"
          % (len(thread_names), len(threads)))
    check(all(thread_names.get(k) == t["comm"] for k, t in threads.items()),
          "tracks are named by their threads' names")
    check(set(process_names) == pids, "a process name for each process")
    for n in names:
        check(n in thread_names.values(), "a track named %s" % n)
    others = set(slices) - set(threads) | set(samples) - set(threads)
    check(not others, "no events of threads the report does not show (%s)" % sorted(others))

    # A wait whose wake-up went unrecorded while the tracepoints were
    # closed is one blocked slice in the timeline (args.wakeup_recorded
    # false), where the totals move an estimated runnable part out of it
    # (wallprof-report(1)): blocked and runnable may differ by as much as
    # the recording's estimate, and by the same amount, at most the
    # thread's such slices.
    est = report.get("quality", {}).get("wakeups_gated", {}).get("runnable_estimated_ns", 0)
    slack = {"blocked": est, "runnable": est}
    flagged = sum(s[1] for sl in slices.values() for s in sl if s[3])
    # (Only where the trace has blocked slices: not --mode on.)
    check(flagged or not est or min_block or partial or some_threads or
          "blocked" not in kinds,
          "slices of unrecorded wake-ups (%d ns) where runnable time was "
          "estimated (%d ns)" % (flagged, est))

    for key, t in sorted(threads.items()):
        what = "%s (tid %d)" % (t["comm"], t["tid"])
        sl = sorted(slices.get(key, []))
        overlaps = [(a, b) for a, b in zip(sl, sl[1:]) if a[0] + a[1] > b[0]]
        check(not overlaps, "%s: %d slices, none overlapping%s"
              % (what, len(sl), " (%s)" % (overlaps[0],) if overlaps else ""))
        outside = [s for s in sl if s[0] < wstart or s[0] + s[1] > wend or s[1] <= 0]
        check(not outside, "%s: every slice is inside the window and not empty" % what)
        sums = {k: 0 for k in KINDS}
        for ts, dur, cat, unrec in sl:
            sums[cat] += dur
        # Totals anchored to the kernel's own figures moved time between
        # kinds (on_cpu_moved_ns, wait_moved_ns): the slices are the
        # timeline as recorded, which adds up to the totals less those.
        moved = dict(t.get("wait_moved_ns", {}), **{"on-cpu": t.get("on_cpu_moved_ns", 0)})
        for k in kinds:
            sums[k] += moved.get(k, 0)
        unrec_ns = sum(s[1] for s in sl if s[3])
        for k, field in KINDS.items():
            if k not in kinds:
                check(sums[k] == 0, "%s: no %s slices (--mode)" % (what, k))
            elif (min_block or partial) and k != "on-cpu":
                check(sums[k] <= t[field] + slack.get(k, 0), "%s: %s %d <= %d (+ %d estimated)"
                      % (what, k, sums[k], t[field], slack.get(k, 0)))
                short = [s for s in sl if s[2] == k and s[1] < min_block and
                         s[0] != wstart and s[0] + s[1] != wend]
                check(not short, "%s: no %s slice shorter than the --min-block, "
                      "but at the window's ends" % (what, k))
            else:
                check(abs(sums[k] - t[field]) <= slack.get(k, 0), "%s: %s %d ns == %d (+- %d estimated)"
                      % (what, k, sums[k], t[field], slack.get(k, 0)))
        if {"blocked", "runnable"} <= kinds and not min_block and not partial:
            moved = sums["blocked"] - t["blocked_ns"]
            check(moved == t["runnable_ns"] - sums["runnable"] and 0 <= moved <= unrec_ns,
                  "%s: what the totals moved from blocked to runnable (%d ns, %d ns) is in its "
                  "slices of unrecorded wake-ups (%d ns)"
                  % (what, moved, t["runnable_ns"] - sums["runnable"], unrec_ns))
        if kinds == set(KINDS) and not min_block and not partial:
            check(sum(sums.values()) == t["wall_ns"],
                  "%s: the kinds add up to its wall time %d" % (what, t["wall_ns"]))
        n = len(samples.get(key, []))
        want = t["samples"] if "on-cpu" in kinds else 0
        check(n == want, "%s: %d samples, as in the report (%d)" % (what, n, want))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
