#!/bin/sh
# The first screen of the default report answers for a JVM with many idle
# threads and a busy one (tests/workloads/IdlePool.java, run by Debian's
# OpenJDK): the thread the report finds busiest, cruncher (it runs until
# it has had 1.5 s of CPU), has a row in the first 40 lines and its stack
# is the first on-CPU one, also within them; cruncher's on-CPU time is
# the one the JVM measured; the 20 idle pool workers are one folded
# line; the default flame graph gives the busiest thread at least three
# times the share it has among every wait (--mode wall), and the
# workers' waits none.  --threads all still lists every worker, and
# --sort wall still sorts by wall time.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 ||
	skip "no JDK (Debian package openjdk-17-jdk-headless)"
fs() { python3 "$TESTS_SRCDIR/integration/first-screen.py" "$@"; }

javac -d . "$TESTS_SRCDIR/workloads/IdlePool.java" 2> javac.err ||
	skip "javac fails here: $(head -n 3 javac.err)"
run wl.out rec.err "$WALLPROF" record -q -o J.data -- java -cp . IdlePool 1.5 20
check_num "record -- java IdlePool exits 0" "$rc" -eq 0
sed 's/^/# /' wl.out
"$WALLPROF" report -i J.data --format json > J.json 2> json.err
busiest=$(fs busiest J.json | cut -d' ' -f2-)
check "the report's busiest thread is cruncher (got '$busiest')" [ "$busiest" = cruncher ]
# The JVM's own figure for cruncher: the report's is the same.
cr=$(awk '$2 == "cruncher" { print $4 }' wl.out)
got=$(python3 -c '
import json, sys
print(sum(t["on_cpu_ns"] for t in json.load(open(sys.argv[1]))["threads"] if t["comm"] == "cruncher"))' J.json)
check_range "cruncher's on-CPU time is the JVM's (+-25% + 20 ms, in ms)" "$(( ${got:-0} / 1000000 ))" \
	"$(( ${cr:-0} * 3 / 4000000 - 20 ))" "$(( ${cr:-0} * 5 / 4000000 + 20 ))"
"$WALLPROF" report -i J.data > J.text 2> text.err
head -n 40 J.text | sed 's/^/# | /'
fs text J.text "$busiest" 40 first > first.out
rc=$?
cat first.out
check_num "$busiest's row and first stack are in the first 40 lines" "$rc" -eq 0
fs rows J.text > rows
check "the 20 idle workers are folded into one line" \
	grep -Eq '^idle (2[0-9]|[3-9][0-9]) threads' rows
check_num "no worker has a row of its own" "$(grep -c '^worker-' rows)" -eq 0
check "the fold names the workers" grep -Eq '^idle .*worker-[0-9]+, worker-' J.text

"$WALLPROF" report -i J.data --threads all > all.text 2> all.err
fs rows all.text > all.rows
check_num "--threads all: every worker has a row" "$(grep -c '^worker-' all.rows)" -eq 20
check_num "--threads all: nothing folded" "$(grep -c '^idle ' all.rows)" -eq 0
"$WALLPROF" report -i J.data --sort wall > wall.text 2> wall.err
awk '/^PID\/TID/ { t = 1; next } t && /^$/ { exit } t && /^  [0-9]/ { print substr($0, 24, 7) }' wall.text > wall.col
# decreasing FILE: the durations of FILE, one a line, never grow.
decreasing() {
	awk 'function ns(d,  u) { u = d; sub(/^[0-9.]+/, "", u)
		return (d + 0) * (u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }
	{ n = ns($1); if (NR > 1 && n > last) bad = 1; last = n } END { exit bad || NR < 3 }' "$1"
}
check "--sort wall: the thread rows in decreasing wall time ($(tr '\n' ' ' < wall.col))" decreasing wall.col
"$WALLPROF" report -i J.data --format flamegraph -o J.svg 2> fg.err
"$WALLPROF" report -i J.data --format flamegraph --mode wall -o W.svg 2> fgw.err
fs flame J.svg > flame.out
fs flame W.svg > flamew.out
sed 's/^/# default: /' flame.out | head -n 5
sed 's/^/# --mode wall: /' flamew.out | head -n 5
# share FILE NAME: the per mille of the root that frames of that name above it hold.
share() { awk -v n="$2" '{ w = $1; sub(/^[0-9.]+ /, "") } $0 == n { s += w } END { printf "%d", s * 1000 }' "$1"; }
check_num "the default flame graph gives $busiest three times its share among every wait (per mille, --mode wall $(share flamew.out "$busiest"))" \
	"$(share flame.out "$busiest")" -ge "$(( $(share flamew.out "$busiest") * 3 ))"
workers=$(awk '{ w = $1; sub(/^[0-9.]+ /, "") } /^worker-/ { s += w } END { printf "%d", s * 1000 }' flame.out)
# (What the idle workers ran, starting, is on-CPU time the graph shows:
# no more than that, rounded up.)
w_on=$("$WALLPROF" report -i J.data --format json 2>/dev/null | python3 -c 'import json, sys
print(sum(t["on_cpu_ns"] for t in json.load(sys.stdin)["threads"] if t["comm"].startswith("worker-")))')
root=$(fs flame-root J.svg)
check_num "and the idle workers' waits none: their share no more than their on-CPU's (per mille)" \
	"$workers" -le "$(( ${w_on:-0} * 1000 / ${root:-1} + 1 ))"

check "its title says whose waits it shows" grep -q 'flame graph: on-CPU time, and the waits of threads not idle' J.svg
check "its subtitle says what it left out" grep -Eq 'off-CPU of [0-9]+ idle threads left out' J.svg
finish
