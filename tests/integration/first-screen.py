#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# first-screen.py: what the first screen of a report shows, for
# first-screen-jvm.sh and first-screen-make.sh.
#
#   first-screen.py busiest JSON         the on-CPU time in ns of the thread
#                                        with the most in a --format json
#                                        report, and its name (which may hold
#                                        spaces)
#   first-screen.py text REPORT NAME N [first]
#                                        whether the first N lines of a text
#                                        report hold a row of the thread
#                                        table for NAME, and the on-CPU
#                                        stacks' title with a stack of NAME
#                                        under it (with "first": the first
#                                        stack); prints what it found, exit
#                                        0 or 1
#   first-screen.py rows REPORT          the thread table's rows: the name,
#                                        one a line, "idle N" for a fold
#   first-screen.py flame SVG            the flame graph's frames above the
#                                        root (threads): share of the root
#                                        and name, widest first
#   first-screen.py flame-root SVG       the root frame's nanoseconds
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def frames(path):
    """Each frame of the SVG: its depth, nanoseconds and name."""
    out = []
    for g in ET.parse(path).getroot().iter(NS + "g"):
        if g.get("class") == "f":
            out.append({"d": int(g.get("data-d")), "n": int(g.get("data-n")),
                        "name": (g.find(NS + "title").text or "").split("\n")[0]})
    return out

ROW = re.compile(r"^ *(\d+ procs|\d+|idle) +(.{1,12}?) +~?[0-9.]+[num]?s ")


def table(lines):
    """(line number, id, name) of each row of the thread table."""
    rows, inside = [], False
    for i, line in enumerate(lines):
        if line.startswith("PID/TID ") or line.startswith("TID ") or line.startswith("PROCS/THR "):
            inside = True
            continue
        if inside and not line.strip():
            break
        m = ROW.match(line) if inside else None
        if m:
            rows.append((i + 1, m.group(1), m.group(2).strip()))
    return rows


def main():
    cmd = sys.argv[1]
    if cmd == "busiest":
        with open(sys.argv[2]) as f:
            rep = json.load(f)
        t = max(rep["threads"], key=lambda t: t["on_cpu_ns"])
        print(t["on_cpu_ns"], t["comm"])
    elif cmd == "rows":
        with open(sys.argv[2]) as f:
            for _, rid, name in table(f.read().split("\n")):
                print("idle " + name if rid == "idle" else name)
    elif cmd == "text":
        name, n = sys.argv[3], int(sys.argv[4])
        with open(sys.argv[2]) as f:
            lines = f.read().split("\n")
        ok = True
        rows = [r for r in table(lines) if r[2] == name and r[1] != "idle"]
        if rows and rows[0][0] <= n:
            print("# %s has a row at line %d" % (name, rows[0][0]))
        else:
            print("# no row of %s in the first %d lines" % (name, n))
            ok = False
        title = next((i for i, l in enumerate(lines) if l.startswith("Top stacks by on-CPU")), None)
        first = None
        if title is not None:
            stack = re.compile(r"^ *[0-9.]+% +~?[0-9.]+[num]?s +on-CPU +(.*?)( {2,}.*)?$")
            first = next(((i, stack.match(l).group(1)) for i, l in enumerate(lines)
                          if i > title and stack.match(l) and
                          (len(sys.argv) > 5 or stack.match(l).group(1) == name)), None)
        if first is None:
            print("# no on-CPU stack")
            ok = False
        else:
            # The stack's frames: the line itself (compact) or the one after.
            last = first[0] + (2 if first[0] + 1 < len(lines) and
                               lines[first[0] + 1].startswith(" " * 19) else 1)
            print("# on-CPU stacks at line %d, %s's at %d, ending its first frame at %d" %
                  (title + 1, first[1], first[0] + 1, last))
            if first[1] != name or last > n:
                ok = False
        sys.exit(0 if ok else 1)
    elif cmd == "flame":
        fr = frames(sys.argv[2])
        root = next(f for f in fr if f["d"] == 0)
        for f in sorted((f for f in fr if f["d"] == 1), key=lambda f: -f["n"]):
            print("%.4f %s" % (f["n"] / root["n"] if root["n"] else 0, f["name"]))
    elif cmd == "flame-root":
        print(next(f for f in frames(sys.argv[2]) if f["d"] == 0)["n"])
    else:
        sys.exit("unknown command " + cmd)


main()
