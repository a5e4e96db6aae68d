#!/usr/bin/env python3
# waitgraph.py: reads wallprof's wait-for graph (--format waitgraph-json)
# and critical path (the critical_path member of --format json) for
# waitgraph.sh, and prints the figures the test compares, one
# "name value" line each (integers: ns, or per-mille for shares).
#
#   waitgraph.py knots GRAPH TID      the knots, and what thread TID's node
#                                     puts into the first one
#   waitgraph.py share GRAPH TID OTHER  of TID's blocked time, what went to
#                                     OTHER's node or the network device
#   waitgraph.py device GRAPH TID CAUSE  of TID's blocked time, what went to
#                                     the device CAUSE (disk, network, ...)
#   waitgraph.py path JSON            the critical path by holder and kind
#   waitgraph.py svg FILE             parses the SVG: nodes and edges drawn
import json
import sys
import xml.etree.ElementTree as ET


def load(path):
    with open(path) as f:
        return json.load(f)


def node_of(g, tid):
    for n in g["nodes"]:
        if n["kind"] == "threads" and tid in n.get("tids", []):
            return n
    return None


def knots(path, tid):
    g = load(path)["waitgraph"]
    nodes = g["nodes"]
    print("knots", len(g["knots"]))
    # What each knot is, for a count other than the one expected.
    for k in g["knots"]:
        print("knot_members", " + ".join(nodes[i].get("cause") or nodes[i].get("label", "?")
                                 for i in k["nodes"]))
    me = node_of(g, tid)
    print("node_threads", len(me["tids"]) if me else 0)
    if not g["knots"]:
        return
    k = g["knots"][0]
    members = [nodes[i] for i in k["nodes"]]
    print("knot_nodes", len(members))
    print("knot_is_timer", int(len(members) == 1 and members[0].get("cause") == "timer"))
    into = [e for e in g["edges"] if e["to"] in k["nodes"] and e["from"] not in k["nodes"]
            and not e["dropped"]]
    total = sum(e["weight_ns"] for e in into)
    mine = [e for e in into if me is not None and e["from"] == me["id"]]
    print("knot_in_ns", total)
    print("from_thread_permille", sum(e["weight_ns"] for e in mine) * 1000 // max(total, 1))
    print("direct_ns", sum(e["direct_ns"] for e in mine))
    print("waits", sum(e["count"] for e in mine))
    nanosleep = 0
    for e in mine:
        for s in e["waiting"]:
            if any("nanosleep" in f["name"] for f in s["frames"]):
                nanosleep += s["ns"]
    print("nanosleep_permille", nanosleep * 1000 // max(sum(e["weight_ns"] for e in mine), 1))
    # The workers: one node, waiting for this thread's node.
    if me is not None:
        waiters = [e for e in g["edges"] if e["to"] == me["id"] and e["from"] != me["id"]]
        best = max(waiters, key=lambda e: e["direct_ns"], default=None)
        print("heaviest_waiter_threads",
              len(nodes[best["from"]].get("tids", [])) if best else 0)


def share(path, tid, other):
    g = load(path)["waitgraph"]
    me, them = node_of(g, tid), node_of(g, other)
    if me is None:
        print("blocked_ns 0")
        return
    blocked = sum(me["blocked_ns"].values())
    good = est = count = 0
    for e in g["edges"]:
        to = g["nodes"][e["to"]]
        if e["from"] != me["id"]:
            continue
        if (them is not None and e["to"] == them["id"]) or to.get("cause") == "network":
            good += e["direct_ns"]
            est += e["estimated_ns"]
            count += e["count"]
    print("blocked_ns", blocked)
    print("to_server_or_network_permille", good * 1000 // max(blocked, 1))
    # Of the waits whose wake-up was recorded, or gated and estimated.
    unknown = me["blocked_ns"].get("unknown", 0)
    print("unknown_permille", unknown * 1000 // max(blocked, 1))
    print("of_known_permille", good * 1000 // max(blocked - unknown, 1))
    print("recorded_permille", (good - est) * 1000 // max(blocked, 1))
    print("waits", count)


def device(path, tid, cause):
    g = load(path)["waitgraph"]
    me = node_of(g, tid)
    if me is None:
        print("blocked_ns 0")
        return
    blocked = sum(me["blocked_ns"].values())
    mine = [e for e in g["edges"] if e["from"] == me["id"] and
            g["nodes"][e["to"]].get("cause") == cause]
    print("blocked_ns", blocked)
    ended = sum(e["direct_ns"] for e in mine)
    unknown = me["blocked_ns"].get("unknown", 0)
    print("device_permille", ended * 1000 // max(blocked, 1))
    # Of the waits whose wake-up was recorded (or gated and estimated).
    print("unknown_permille", unknown * 1000 // max(blocked, 1))
    print("of_known_permille", ended * 1000 // max(blocked - unknown, 1))
    print("waits", sum(e["count"] for e in mine))
    print("knot", int(any(g["nodes"][e["to"]].get("knot") for e in mine)))


def path(path):
    cp = load(path)["critical_path"]
    segs = cp["segments"]
    print("window_ns", cp["window_ns"])
    print("sum_ns", sum(s["ns"] for s in segs))
    spin = sum(s["ns"] for s in segs if s["kind"] == "on-CPU" and s.get("comm") == "w2"
               and any(f["name"] == "wf_spin_cpu" for f in s["frames"]))
    print("w2_spin_ns", spin)
    print("w2_on_ns", sum(s["ns"] for s in segs if s["kind"] == "on-CPU" and s.get("comm") == "w2"))
    timer = sum(s["ns"] for s in segs if s["kind"] == "device" and s.get("cause") == "timer"
                and s.get("comm") == "w2")
    print("timer_ns", timer)
    # The timer's wake-up, then w2 waiting for a CPU: the sleep as w2 measured it.
    after = 0
    for i, s in enumerate(segs):
        if s["kind"] == "device" and s.get("cause") == "timer":
            for t in segs[i + 1:]:
                if t.get("comm") != "w2" or t["kind"] not in ("runnable", "preempted"):
                    break
                after += t["ns"]
    print("timer_then_cpu_ns", timer + after)
    print("w2_sleep_frames", int(any(s["kind"] == "device" and
                                     any(f["name"] == "wf_chain_sleep" for f in s["frames"])
                                     for s in segs)))
    print("unexplained_ns", sum(s["ns"] for s in segs if s["kind"] == "blocked"))


def overspent(path):
    """Shown thread nodes whose direct edges hold more than their blocked time.

    A node's blocked time is the ledger's; the edges out of it share that
    time among whom it waited for, so they add up to it at most (a
    nanosecond of rounding per edge).
    """
    g = load(path)["waitgraph"]
    out = {}
    for e in g["edges"]:
        out.setdefault(e["from"], []).append(e["direct_ns"])
    bad = []
    for n in g["nodes"]:
        if n.get("kind") != "threads" or not n.get("shown"):
            continue
        direct = sum(out.get(n["id"], []))
        if direct > sum(n["blocked_ns"].values()) + len(out.get(n["id"], [])):
            bad.append("%s: %d > %d" % (n.get("label", n["id"]), direct,
                                        sum(n["blocked_ns"].values())))
    print("overspent", len(bad))
    for b in bad[:5]:
        print("overspent_node", b)


def svg(path):
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    groups = list(root.iter(ns + "g"))
    print("svg_nodes", sum(1 for g in groups if g.get("class") == "node"))
    print("svg_edges", sum(1 for g in groups if g.get("class") == "edge"))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "knots":
        knots(sys.argv[2], int(sys.argv[3]))
    elif cmd == "share":
        share(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "device":
        device(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "path":
        path(sys.argv[2])
    elif cmd == "overspent":
        overspent(sys.argv[2])
    elif cmd == "svg":
        svg(sys.argv[2])
    else:
        sys.exit("usage: waitgraph.py knots|share|device|path|overspent|svg ...")
