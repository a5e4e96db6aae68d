#!/bin/sh
# The first screen of the default report answers for a JVM with many idle
# threads and one busy one (tests/workloads/IdlePool.java, run by
# Debian's OpenJDK): the thread that the JVM measured busiest, cruncher,
# has a row in the first 40 lines and its stack is the first on-CPU one,
# also within them; the 20 idle pool workers are one folded line; and the
# default flame graph gives cruncher a visible share, at least three
# times the one it has among every wait (--mode wall).  --threads all
# still lists every worker, and --sort wall still sorts by wall time.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1 ||
	skip "no JDK (Debian package openjdk-17-jdk-headless)"
fs() { python3 "$TESTS_SRCDIR/integration/first-screen.py" "$@"; }

javac -d . "$TESTS_SRCDIR/workloads/IdlePool.java" 2> javac.err ||
	skip "javac fails here: $(head -n 3 javac.err)"
run wl.out rec.err "$WALLPROF" record -q -o J.data -- java -cp . IdlePool 3 20
check_num "record -- java IdlePool exits 0" "$rc" -eq 0
sed 's/^/# /' wl.out
# The JVM's own figures: cruncher is the busiest of the threads it measured.
cr=$(awk '$2 == "cruncher" { print $4 }' wl.out)
c1=$(awk '$2 == "contender-1" { print $4 }' wl.out)
check "the JVM measured cruncher busier than a contender (${cr:-?} > ${c1:-?} ns)" \
	[ "${cr:-0}" -gt "${c1:-0}" ]

"$WALLPROF" report -i J.data --format json > J.json 2> json.err
set -- $(fs busiest J.json)
check "the report's busiest thread is cruncher too (got '${1:-}')" [ "${1:-}" = cruncher ]
check_range "its on-CPU time is the JVM's (+-25%, ms)" "$(( ${2:-0} / 1000000 ))" \
	"$(( ${cr:-0} * 3 / 4000000 ))" "$(( ${cr:-0} * 5 / 4000000 ))"

"$WALLPROF" report -i J.data > J.text 2> text.err
head -n 40 J.text | sed 's/^/# | /'
fs text J.text cruncher 40 first > first.out
rc=$?
cat first.out
check_num "cruncher's row and first stack are in the first 40 lines" "$rc" -eq 0
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
awk '/^PID\/TID/ { t = 1; next } t && /^$/ { exit } t && /^  [0-9]/ { print $3 }' wall.text > wall.col
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
share=$(awk '$2 == "cruncher" { printf "%d", $1 * 1000 }' flame.out)
wshare=$(awk '$2 == "cruncher" { printf "%d", $1 * 1000 }' flamew.out)
check_num "the default flame graph gives cruncher a sixth of its width or more (per mille)" \
	"${share:-0}" -ge 166
check_num "three times its share among every wait (per mille, --mode wall ${wshare:-?})" \
	"${share:-0}" -ge "$(( ${wshare:-1000} * 3 ))"
check "its title says whose waits it shows" grep -q 'flame graph: on-CPU time, and the waits of threads not idle' J.svg
check "its subtitle says what it left out" grep -Eq 'off-CPU of [0-9]+ idle threads left out' J.svg
finish
