#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# flamegraph.py: read an SVG of `wallprof report --format flamegraph` back
# for tests/integration/flamegraph.sh.
#
#   flamegraph.py frames SVG      one line per frame: depth, offset_ns,
#                                 ns, x, y, width, name (tab-separated)
#   flamegraph.py check SVG       the frames nest: each lies inside the
#                                 one below it (above, inverted), and the
#                                 root spans the frames' width; prints
#                                 "ok" or what is wrong, exit 0 or 1
#   flamegraph.py text SVG ID     the text of the element with that id
#   flamegraph.py title SVG       the title (first <text class="title">)
#   flamegraph.py json-sum JSON FIELD [COMM]
#                                 the sum of FIELD over the report's
#                                 threads (of that name)
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def frames(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        rect = g.find(NS + "rect")
        title = g.find(NS + "title").text or ""
        out.append({
            "d": int(g.get("data-d")), "o": int(g.get("data-o")), "n": int(g.get("data-n")),
            "x": float(rect.get("x")), "y": float(rect.get("y")),
            "w": float(rect.get("width")), "name": title.split("\n")[0],
        })
    return root, out


def check(path):
    svg, fr = frames(path)
    problems = []
    roots = [f for f in fr if f["d"] == 0]
    if len(roots) != 1:
        return ["%d root frames" % len(roots)]
    root = roots[0]
    width = float(svg.get("data-frames-width"))
    if abs(root["w"] - width) > 0.01:
        problems.append("root is %.2f wide, not %.2f" % (root["w"], width))
    # Callees lie on their caller's span, one row further from the root.
    by_depth = {}
    for f in fr:
        by_depth.setdefault(f["d"], []).append(f)
    for d, row in by_depth.items():
        row.sort(key=lambda f: f["o"])
        for a, b in zip(row, row[1:]):
            if a["o"] + a["n"] > b["o"]:
                problems.append("%s and %s overlap at depth %d" % (a["name"], b["name"], d))
        if d == 0:
            continue
        callers = by_depth.get(d - 1, [])
        for f in row:
            if not any(c["o"] <= f["o"] and f["o"] + f["n"] <= c["o"] + c["n"] for c in callers):
                problems.append("%s at depth %d has no caller under it" % (f["name"], d))
        ys = set(f["y"] for f in row)
        if len(ys) != 1:
            problems.append("depth %d is drawn on %d rows" % (d, len(ys)))
    for f in fr:
        want = width * f["n"] / root["n"] if root["n"] else 0
        if abs(f["w"] - want) > 0.02:
            problems.append("%s is %.2f wide for %.2f" % (f["name"], f["w"], want))
            break
    return problems[:10]


def main():
    cmd = sys.argv[1]
    if cmd == "frames":
        for f in frames(sys.argv[2])[1]:
            print("%d\t%d\t%d\t%.2f\t%.1f\t%.2f\t%s" % (f["d"], f["o"], f["n"], f["x"], f["y"],
                                                       f["w"], f["name"]))
    elif cmd == "check":
        problems = check(sys.argv[2])
        print("\n".join(problems) if problems else "ok")
        sys.exit(1 if problems else 0)
    elif cmd == "text":
        svg = ET.parse(sys.argv[2]).getroot()
        for t in svg.iter(NS + "text"):
            if t.get("id") == sys.argv[3]:
                print(t.text or "")
    elif cmd == "title":
        svg = ET.parse(sys.argv[2]).getroot()
        for t in svg.iter(NS + "text"):
            if t.get("class") == "title":
                print(t.text or "")
                break
    elif cmd == "json-sum":
        with open(sys.argv[2]) as f:
            rep = json.load(f)
        comm = sys.argv[4] if len(sys.argv) > 4 else None
        print(sum(t[sys.argv[3]] for t in rep["threads"] if comm is None or t["comm"] == comm))
    else:
        sys.exit("unknown command " + cmd)


main()
