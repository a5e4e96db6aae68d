#!/usr/bin/env python3
"""cputime.py OUT CMD...: run CMD, then write to OUT this process's pid and
the CPU time (user + system, ns) that the kernel counted for CMD and all
its descendants (getrusage RUSAGE_CHILDREN); exit with CMD's status."""
import os
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.getpid()} {round((ru.ru_utime + ru.ru_stime) * 1e9)}\n")
sys.exit(rc if rc >= 0 else 128 - rc)
