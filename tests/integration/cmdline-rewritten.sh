#!/bin/sh
# PostgreSQL's processes rewrite their command lines in place ("postgres:
# checkpointer") and pad the rest of the old arguments with NULs, which
# /proc/PID/cmdline shows as dozens of empty arguments.  Attached to a
# running server, the text report, the JSON and the trace's
# process_labels show each process's title without them: the arguments
# are /proc's with the trailing empty ones dropped.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
pg_nobody
kids=$(pgrep -P "$pm" | paste -sd, -)
check "the server has background processes" [ -n "$kids" ]

# What /proc says: the titles, and that they are padded.
padded=0
for p in $(echo "$kids" | tr , ' '); do
	python3 -c '
import sys
a = open("/proc/%s/cmdline" % sys.argv[1], "rb").read().split(b"\0")[:-1]
while len(a) > 1 and a[-1] == b"": a.pop()
n = len(open("/proc/%s/cmdline" % sys.argv[1], "rb").read().split(b"\0")) - 1
print(sys.argv[1], n - len(a), "\x1f".join(x.decode() for x in a))' "$p" >> proc.txt 2>/dev/null
done
padded=$(awk '$2 > 0' proc.txt | wc -l)
check_num "processes whose /proc command line ends with empty arguments" "$padded" -ge 1

run out err "$WALLPROF" record -q -o A.data -p "$pm,$kids" -d 1
check_num "record -p the server exits 0" "$rc" -eq 0
"$WALLPROF" report -i A.data --threads all > text 2> text.err
check "the text report shows 'postgres: checkpointer'" grep -q "cmdline: 'postgres: checkpointer *'" text
check "no empty argument in the text report" no_match "cmdline: .*'' ''" text
"$WALLPROF" report -i A.data --format json > json 2> json.err
python3 - proc.txt json > cmp.out <<'EOF'
import json, sys
want = {}
for line in open(sys.argv[1]):
    pid, pad, args = line.rstrip("\n").split(" ", 2)
    want[int(pid)] = args.split("\x1f")
got = {}
def walk(o):
    if isinstance(o, dict):
        if isinstance(o.get("pid"), int) and isinstance(o.get("names"), list):
            for n in o["names"]:
                c = n.get("cmdline")
                if c:
                    got[o["pid"]] = c["args"]
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(json.load(open(sys.argv[2])))
same = sum(1 for p in want if got.get(p) == want[p])
empty = sum(1 for a in got.values() if len(a) > 1 and a[-1] == "")
print(len(want), same, empty)
EOF
read -r nwant same empty < cmp.out
check_num "JSON: every process's arguments are /proc's without the trailing empty ones" "${same:-0}" -eq "${nwant:-x}"
check_num "JSON: no argument list ends with an empty one" "${empty:-1}" -eq 0
"$WALLPROF" report -i A.data --format trace > trace 2> trace.err
check "the trace labels a process 'postgres: checkpointer'" grep -q '"labels":"'"'"'postgres: checkpointer' trace
check "no empty argument in the trace's labels" no_match "\"labels\":\"[^\"]*'' ''" trace
finish
