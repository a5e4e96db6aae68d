# lost-records.sh: a recorder that cannot keep up loses records in the
# kernel's rings.  Here it is stopped (SIGSTOP) three times for 0.3 s while
# the workload runs, as a starved drain is on a loaded machine, so that the
# rings overflow for certain.  The report marks the threads approximate and
# gives each one's on-CPU bound (on_cpu_bound_ns, and the largest in the
# text report's note); schedstat's figure lies
# within it, launched in one file and rotated over several (where a file's
# first kernel figure comes late, after the stop), and the invariants of
# any recording hold.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

J="$TESTS_SRCDIR/integration/report-json.py"
NAMES="spinner sleeper locker locker2 reader main"

# starve NAME ARGS...: record wallclock 3 s with ARGS into NAME.data,
# stopping the recorder three times once the workload runs.
starve() {
	_n=$1; shift
	"$WALLPROF" record -q -m 8 "$@" -o "$_n.data" -- "$WORKLOADS/wallclock" 3 \
		>"$_n.wl" 2>"$_n.err" &
	_p=$!
	# Once the workload's threads run (record has its events then).
	wait_until 100 pgrep -f "$WORKLOADS/wallclock" >/dev/null
	sleep 0.3
	for _i in 1 2 3; do
		kill -STOP "$_p"
		sleep 0.3
		kill -CONT "$_p"
		sleep 0.4
	done
	wait "$_p"
	rc=$?
}

# ledger FILE...: per thread (by tid) over the files: "tid on bound approx"
ledger() {
	for _f in "$@"; do
		"$WALLPROF" report -q -i "$_f" --format json >"$_f.json" 2>"$_f.rerr" ||
			echo "report failed: $_f" >>ledger.err
		python3 "$J" invariants "$_f.json" >>"$_f.inv"
	done
	python3 - "$@" <<'EOF'
import json, sys
t = {}
for f in sys.argv[1:]:
    for x in json.load(open(f + ".json"))["threads"]:
        y = t.setdefault(x["tid"], [0, 0, 0])
        y[0] += x["on_cpu_ns"]
        y[1] += x["on_cpu_bound_ns"]
        y[2] += 1 if x["approximate"] else 0
for k, y in sorted(t.items()):
    print(k, *y)
EOF
}

# lost FILE...: the records the files say the rings lost, in all.
lost() {
	for _f in "$@"; do
		"$WALLPROF" report --dump -i "$_f" 2>/dev/null |
			sed -n 's/^# lost: \([0-9]*\) records, \([0-9]*\) samples.*/\1 \2/p'
	done | awk '{ n += $1 + $2 } END { print n + 0 }'
}

# judge LABEL FILE...: each thread's on-CPU over the files within the
# reports' bound of schedstat's.
judge() {
	_l=$1; shift
	check_num "$_l: record exits 0" "$rc" -eq 0
	_lost=$(lost "$@")
	check_num "$_l: the stopped recorder lost records (the files say $_lost)" "$_lost" -gt 0
	ledger "$@" >"$_l.ledger"
	check "$_l: every report was made" [ ! -s ledger.err ]
	for _f in "$@"; do
		check "$_l: $_f: the invariants of any recording hold" [ ! -s "$_f.inv" ]
		head -n 5 "$_f.inv"
	done
	for n in $NAMES; do
		tid=$(wl_field "$_l.wl" "$n" tid)
		want=$(wl_field "$_l.wl" "$n" oncpu_ns)
		slices=$(wl_field "$_l.wl" "$n" slices)
		set -- $(awk -v t="$tid" '$1 == t { print $2, $3, $4 }' "$_l.ledger")
		if [ -z "$tid" ] || [ $# -ne 3 ]; then
			fail "$_l: $n: reported by the workload (tid '$tid') and in the reports"
			continue
		fi
		check_num "$_l: $n: approximate in some file, as records were lost" "$3" -gt 0
		# oncpu_ok's tolerance, the steal, and the reports' bound.
		tol=$(($(max $((want / 50)) $((2000000 + ${slices:-0} * 50000))) + $2 + $(steal_ns)))
		d=$(($1 - want)); [ "$d" -lt 0 ] && d=$((-d))
		check_num "$_l: $n: on-CPU $1 vs schedstat $want: |diff| <= $tol (bound $2)" \
			"$d" -le "$tol"
	done
}

steal_mark
starve one
judge one one.data

# The text report says what ~ means and how far on-CPU may be off.
run one.txt one.terr "$WALLPROF" report -i one.data
check "one: the text marks approximate threads and gives the on-CPU bound" \
	grep -Eq '^~ approximate: .*; on-CPU (within [0-9.]+[mun]?s of the truth at most|anchored to the kernel.s own figures still)' one.txt

steal_mark
starve rot --rotate 1
judge rot $(ls rot.[0-9]*.data 2>/dev/null)
check_num "rot: several files" "$(ls rot.[0-9]*.data 2>/dev/null | wc -l)" -ge 2

finish
