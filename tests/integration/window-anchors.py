#!/usr/bin/env python3
"""window-anchors.py CLIENTS_OUT REPORT_JSON: each client and server's
on-CPU time in the report's --time window against its own notes (the
workload's cpulog lines: the kernel's figure of a thread's CPU time at an
instant lies between the notes before and after it).  Prints a line per
thread and, last, "bad N" (threads whose true time lies outside
wallprof's figure give or take its stated bound) and "loose N" (threads
whose bound is over a tenth of the window)."""
import bisect
import json
import sys

TOL_NS = 1000000  # the clocks' reads, and the notes' own


def main():
    logs = {}
    for line in open(sys.argv[1]):
        f = line.split()
        if f and f[0] == "cpulog":
            logs.setdefault(int(f[1]), []).append((int(f[2]), int(f[3])))
    rep = json.load(open(sys.argv[2]))
    h = rep["header"]
    ws, we = h["window_start_ns"], h["window_end_ns"]
    bad = loose = seen = 0
    for t in rep["threads"]:
        notes = sorted(logs.get(t["tid"], []))
        if t["comm"] not in ("client", "server") or len(notes) < 2:
            continue
        times = [n[0] for n in notes]
        i, j = bisect.bisect_right(times, ws), bisect.bisect_right(times, we)
        # Both ends between two notes: the thread ran across the window.
        if i == 0 or j == 0 or i == len(notes) or j == len(notes):
            print("# %d %s: its notes do not cover the window" % (t["tid"], t["comm"]))
            continue
        lo = notes[j - 1][1] - notes[i][1]
        hi = notes[j][1] - notes[i - 1][1]
        on, bound = t["on_cpu_ns"], t["on_cpu_bound_ns"]
        good = on + bound + TOL_NS >= lo and on - bound - TOL_NS <= hi
        seen += 1
        bad += not good
        loose += bound * 10 > we - ws
        print("# %d %s: wallprof %.2f ms within %.2f (%s), the kernel's %.2f..%.2f ms%s" %
              (t["tid"], t["comm"], on / 1e6, bound / 1e6, t["on_cpu_source"], lo / 1e6,
               hi / 1e6, "" if good else "  <- outside"))
    print("seen", seen)
    print("bad", bad)
    print("loose", loose)


main()
