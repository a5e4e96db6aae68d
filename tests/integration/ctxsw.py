#!/usr/bin/env python3
# ctxsw.py PID TID OUT [SECONDS]: every 5 ms until the thread is gone (or
# SECONDS, default 120, have passed), append "BEFORE_NS AFTER_NS SWITCHES"
# to OUT: the
# kernel's count of the thread's switch-outs (voluntary and not, from
# /proc/PID/task/TID/status), on the clock of the recordings.  The tests
# bound the switch-outs a recording holds by what the kernel counted
# inside and around its span (lib.sh: kernel_switches).
import sys, time

pid, tid, out = sys.argv[1], sys.argv[2], sys.argv[3]
limit = time.monotonic() + (float(sys.argv[4]) if len(sys.argv) > 4 else 120)
path = "/proc/%s/task/%s/status" % (pid, tid)
with open(out, "a") as f:
    while time.monotonic() < limit:
        before = time.monotonic_ns()
        try:
            with open(path) as s:
                text = s.read()
        except OSError:
            break
        n = 0
        for line in text.splitlines():
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                n += int(line.split()[1])
        # Read between the two times: at most n before, at least n after.
        f.write("%d %d %d\n" % (before, time.monotonic_ns(), n))
        f.flush()
        time.sleep(0.005)
