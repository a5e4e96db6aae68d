#!/bin/sh
# Code of no file that no perf map names (a JIT's) is one frame per
# mapping, "[anonymous ADDRESS]", not one per address: a JVM's busy
# thread (tests/workloads/IdlePool.java) then has most of its on-CPU time
# in a few stacks, where each address was a stack of its own.  The
# quality line says how to get names for the runtime it found: for the
# JVM, jcmd with that process's ID, or -XX:+DumpPerfMapAtExit, with which
# the same thread's frames get their Java names; for node,
# --perf-basic-prof.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 ||
	skip "no JDK (Debian package openjdk-17-jdk-headless)"
javac -d . "$TESTS_SRCDIR/workloads/IdlePool.java" 2> javac.err ||
	skip "javac fails here: $(head -n 3 javac.err)"

# top_stacks FOLDED: how many of the heaviest stacks hold 80% of the weight.
top_stacks() {
	awk '{ w = $NF; sub(/ [0-9]+$/, ""); s[$0] += w; t += w }
		END { for (k in s) print s[k]; print "total", t }' "$1" |
	sort -k1,1nr | awk '$1 == "total" { t = $2; next } { v[++n] = $1 }
		END { for (i = 1; i <= n; i++) { s += v[i]; if (s >= 0.8 * t) { print i; exit } } print n }'
}

run wl.out rec.err "$WALLPROF" record -q -o J.data -- java -cp . IdlePool 1 4
check_num "record -- java IdlePool exits 0" "$rc" -eq 0
pid=$("$WALLPROF" report -i J.data --format json | python3 -c '
import json, sys
print(next(t["pid"] for t in json.load(sys.stdin)["threads"] if t["comm"] == "cruncher"))')
"$WALLPROF" report -i J.data --format folded --mode on --comm cruncher > c.folded
n=$(top_stacks c.folded)
echo "# cruncher: $(nlines c.folded) stacks on-CPU, 80% of the time in $n"
check_num "cruncher's on-CPU time: 80% of it in at most 3 stacks" "${n:-99}" -le 3
check "its stacks have [anonymous 0x...] frames" grep -q '\[anonymous 0x[0-9a-f]*\]' c.folded
check "and no frame of an address alone" no_match '\[unknown\] 0x' c.folded
"$WALLPROF" report -i J.data > J.text 2> text.err
grep '^#.*\[anonymous\]' J.text | sed 's/^/# /'
check "the quality line names jcmd with the JVM's ID ($pid)" \
	grep -q "^#.*\\[anonymous\\].*'jcmd $pid Compiler.perfmap' writes its names to /tmp/perf-$pid.map" J.text
check "and -XX:+DumpPerfMapAtExit" grep -q '^#.*\[anonymous\].*-XX:+DumpPerfMapAtExit' J.text

# With the map the JVM writes at exit, report names the same code.
run wl2.out rec2.err "$WALLPROF" record -q -o M.data -- \
	java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp . IdlePool 1 4
check_num "record -- java -XX:+DumpPerfMapAtExit IdlePool exits 0" "$rc" -eq 0
mpid=$("$WALLPROF" report -i M.data --format json | python3 -c '
import json, sys
print(next(t["pid"] for t in json.load(sys.stdin)["threads"] if t["comm"] == "cruncher"))')
[ -n "$mpid" ] && trap 'rm -f "/tmp/perf-$mpid.map"; cleanup' EXIT
check "the JVM wrote /tmp/perf-$mpid.map" [ -s "/tmp/perf-$mpid.map" ]
"$WALLPROF" report -i M.data --format folded --mode on --comm cruncher > m.folded 2> m.err
check "cruncher's frames have their Java names" grep -q 'IdlePool' m.folded

# node: V8's code, and its own hint.
if command -v node >/dev/null 2>&1; then
	cat > hot.js <<'JS'
function hot(n) { let x = 1; for (let i = 0; i < n; i++) x = (x * 1103515245 + 12345) % 2147483648; return x; }
const until = Date.now() + 1500; let s = 0;
while (Date.now() < until) s += hot(100000);
console.log(s > 0 ? "done" : "?");
JS
	run n.out n.err "$WALLPROF" record -q -o N.data -- node hot.js
	check_num "record -- node hot.js exits 0" "$rc" -eq 0
	"$WALLPROF" report -i N.data > N.text 2> ntext.err
	grep '^#.*\[anonymous\]' N.text | sed 's/^/# /'
	check "node: the quality line names --perf-basic-prof" \
		grep -q '^#.*\[anonymous\].*node.s (V8): run it with --perf-basic-prof' N.text
else
	echo "# no node here: its hint is not checked"
fi
finish
