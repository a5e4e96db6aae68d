# report-json.py: `wallprof report --format json` output as lines that the
# shell scripts can take apart with awk (run by python3; not executable).
#
#	python3 report-json.py check FILE     validate; problems on stdout, exit 1
#	python3 report-json.py threads FILE   one line per thread, tab-separated:
#		pid tid comm wall_ns on_cpu_ns off_cpu_ns blocked_ns preempted_ns
#		voluntary_switches involuntary_switches samples approximate
#		start_ns end_ns
#	python3 report-json.py stacks FILE    one line per stack, tab-separated:
#		pid tid comm kind ns samples frames
#	    frames innermost first, joined by ';', kernel ones ending in _[k]
#	    and inlined ones in _[i] (as in folded output)
#	python3 report-json.py header FILE    "key<TAB>value" per header field
#
# Invalid JSON: a message and status 2, whatever the command.
import json
import sys

THREAD_KEYS = ["pid", "tid", "comm", "wall_ns", "on_cpu_ns", "off_cpu_ns", "blocked_ns",
               "preempted_ns", "voluntary_switches", "involuntary_switches", "samples",
               "approximate", "start_ns", "end_ns"]
STACK_KEYS = ["pid", "tid", "comm", "kind", "ns", "samples", "frames"]
TOP_KEYS = ["header", "threads", "mode", "stacks", "quality"]


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
    for i, s in enumerate(doc.get("stacks", [])):
        for k in STACK_KEYS:
            if k not in s:
                problems.append("stack %d: no key '%s'" % (i, k))
        if s.get("kind") not in ("on-cpu", "blocked", "preempted"):
            problems.append("stack %d: kind %r" % (i, s.get("kind")))
        for f in s.get("frames", []):
            if not isinstance(f.get("name"), str) or not f["name"]:
                problems.append("stack %d: a frame without a name" % i)
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
    if cmd == "threads":
        for t in doc["threads"]:
            print("\t".join(value(t.get(k)) for k in THREAD_KEYS))
    elif cmd == "stacks":
        for s in doc["stacks"]:
            print("\t".join([value(s.get(k)) for k in STACK_KEYS[:-1]] +
                            [";".join(frame(f) for f in s["frames"])]))
    elif cmd == "header":
        for k, v in doc["header"].items():
            print("%s\t%s" % (k, value(v)))
        print("mode\t%s" % doc.get("mode"))
    else:
        print("unknown command " + cmd)
        return 2
    return 0


sys.exit(main())
