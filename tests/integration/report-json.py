# report-json.py: `wallprof report --format json` output as lines that the
# shell scripts can take apart with awk (run by python3; not executable).
#
#	python3 report-json.py check FILE     validate; problems on stdout, exit 1
#	python3 report-json.py threads FILE   one line per thread, tab-separated:
#		pid tid comm wall_ns on_cpu_ns off_cpu_ns blocked_ns preempted_ns
#		voluntary_switches involuntary_switches samples approximate
#		start_ns end_ns runnable_ns wakeups wakeups_unrecorded
#		on_cpu_bound_ns
#	python3 report-json.py stacks FILE    one line per stack, tab-separated:
#		pid tid comm kind ns samples frames
#	    frames innermost first, joined by ';', kernel ones ending in _[k]
#	    and inlined ones in _[i] (as in folded output)
#	python3 report-json.py wakers FILE    one line per waker of a blocked
#	    stack entry, tab-separated: pid tid comm ns waker_pid waker_tid
#	    waker_comm waker_kind waker_ns waker_count waker_frames
#	python3 report-json.py header FILE    "key<TAB>value" per header field
#	python3 report-json.py invariants FILE
#	    what holds for any recording, problems on stdout, exit 1: each
#	    thread's wall = on + blocked + runnable + preempted and lies in the
#	    window; a blocked stack's wakers end no more than its time; no
#	    two threads with one tid overlap in time; the on-CPU time of all
#	    threads fits in the CPUs (a thread existed once, not twice)
#
# Invalid JSON: a message and status 2, whatever the command.
import json
import sys

THREAD_KEYS = ["pid", "tid", "comm", "wall_ns", "on_cpu_ns", "off_cpu_ns", "blocked_ns",
               "preempted_ns", "voluntary_switches", "involuntary_switches", "samples",
               "approximate", "start_ns", "end_ns", "runnable_ns", "wakeups",
               "wakeups_unrecorded", "on_cpu_bound_ns"]
STACK_KEYS = ["pid", "tid", "comm", "kind", "ns", "samples", "frames"]
WAKER_KEYS = ["pid", "tid", "comm", "kind", "ns", "count", "frames"]
TOP_KEYS = ["header", "threads", "cpus", "mode", "stacks", "quality"]
NAME_KEYS = ["comm", "start_ns", "wall_ns", "on_cpu_ns", "inherited", "cmdline"]


def value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def check(doc):
    problems = []
    if not isinstance(doc, dict):
        return ["the document is not an object"]
    for k in TOP_KEYS:
        if k not in doc:
            problems.append("no top-level key '%s'" % k)
    for i, t in enumerate(doc.get("threads", [])):
        for k in THREAD_KEYS:
            if k not in t:
                problems.append("thread %d: no key '%s'" % (i, k))
        for k in THREAD_KEYS:
            if k in ("comm", "approximate"):
                continue
            v = t.get(k)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                problems.append("thread %d: %s is %r, not a natural number" % (i, k, v))
        if not isinstance(t.get("comm"), str):
            problems.append("thread %d: comm is not a string" % i)
        if not isinstance(t.get("approximate"), bool):
            problems.append("thread %d: approximate is not a boolean" % i)
        if not isinstance(t.get("names"), list):
            problems.append("thread %d: names is not a list" % i)
        for n in t.get("names") or []:
            for k in NAME_KEYS:
                if k not in n:
                    problems.append("thread %d: a name without '%s'" % (i, k))
        if t.get("names") and sum(n.get("wall_ns", 0) for n in t["names"]) != t.get("wall_ns"):
            problems.append("thread %d: its names' wall_ns do not add up to its own" % i)
    for i, s in enumerate(doc.get("stacks", [])):
        for k in STACK_KEYS:
            if k not in s:
                problems.append("stack %d: no key '%s'" % (i, k))
        if s.get("kind") not in ("on-cpu", "blocked", "preempted", "runnable"):
            problems.append("stack %d: kind %r" % (i, s.get("kind")))
        if "wakers" in s and s.get("kind") != "blocked":
            problems.append("stack %d: wakers on a %r stack" % (i, s.get("kind")))
        for w in s.get("wakers", []):
            for k in WAKER_KEYS:
                if k not in w:
                    problems.append("stack %d: a waker without '%s'" % (i, k))
            if w.get("kind") not in ("thread", "interrupt", "timer", "idle"):
                problems.append("stack %d: waker kind %r" % (i, w.get("kind")))
        for f in s.get("frames", []):
            if not isinstance(f.get("name"), str) or not f["name"]:
                problems.append("stack %d: a frame without a name" % i)
    return problems


def invariants(doc):
    problems = []
    h = doc["header"]
    start, end = h["window_start_ns"], h["window_end_ns"]
    by_tid = {}
    for t in doc["threads"]:
        who = "thread %d/%d (%r)" % (t["pid"], t["tid"], t["comm"])
        if t["on_cpu_ns"] + t["blocked_ns"] + t.get("runnable_ns", 0) + t["preempted_ns"] != \
                t["wall_ns"]:
            problems.append("%s: wall %d != on + blocked + runnable + preempted" %
                            (who, t["wall_ns"]))
        if t["end_ns"] - t["start_ns"] != t["wall_ns"]:
            problems.append("%s: wall %d is not end - start" % (who, t["wall_ns"]))
        if t["start_ns"] < start or t["end_ns"] > end:
            problems.append("%s: [%d, %d] outside the window [%d, %d]" %
                            (who, t["start_ns"], t["end_ns"], start, end))
        names = t.get("names") or []
        if names and sum(n["on_cpu_ns"] for n in names) != t["on_cpu_ns"]:
            problems.append("%s: its names' on-CPU %d != its %d" %
                            (who, sum(n["on_cpu_ns"] for n in names), t["on_cpu_ns"]))
        by_tid.setdefault(t["tid"], []).append(t)
    for tid, ts in by_tid.items():
        ts.sort(key=lambda t: t["start_ns"])
        for a, b in zip(ts, ts[1:]):
            if b["start_ns"] < a["end_ns"]:
                problems.append("tid %d: two threads overlap in time ([%d, %d] and [%d, %d])" %
                                (tid, a["start_ns"], a["end_ns"], b["start_ns"], b["end_ns"]))
    for s in doc["stacks"]:
        woken = sum(w["ns"] for w in s.get("wakers", []))
        if woken > s["ns"]:
            problems.append("stack of %d/%d: wakers end %d ns of its %d ns" %
                            (s["pid"], s["tid"], woken, s["ns"]))
    on = sum(t["on_cpu_ns"] for t in doc["threads"])
    # A little slack for the clocks of different CPUs.
    room = h["nr_cpus"] * (end - start) * 1.01
    if on > room:
        problems.append("%.3f s on-CPU in all, more than %d CPUs had in %.3f s" %
                        (on / 1e9, h["nr_cpus"], (end - start) / 1e9))
    return problems


def frame(f):
    name = f.get("name", "")
    if f.get("kernel"):
        return name + "_[k]"
    if f.get("inlined"):
        return name + "_[i]"
    return name


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("invalid JSON in %s: %s" % (path, e))
        return 2
    if cmd == "check":
        problems = check(doc)
        for p in problems:
            print(p)
        return 1 if problems else 0
    if cmd == "invariants":
        problems = invariants(doc)
        for p in problems:
            print(p)
        return 1 if problems else 0
    if cmd == "threads":
        for t in doc["threads"]:
            print("\t".join(value(t.get(k)) for k in THREAD_KEYS))
    elif cmd == "stacks":
        for s in doc["stacks"]:
            print("\t".join([value(s.get(k)) for k in STACK_KEYS[:-1]] +
                            [";".join(frame(f) for f in s["frames"])]))
    elif cmd == "wakers":
        for s in doc["stacks"]:
            for w in s.get("wakers", []):
                print("\t".join([value(s.get(k)) for k in ("pid", "tid", "comm", "ns")] +
                                [value(w.get(k)) for k in WAKER_KEYS[:-1]] +
                                [";".join(frame(f) for f in w["frames"])]))
    elif cmd == "header":
        for k, v in doc["header"].items():
            print("%s\t%s" % (k, value(v)))
        print("mode\t%s" % doc.get("mode"))
    else:
        print("unknown command " + cmd)
        return 2
    return 0


sys.exit(main())
