# live-record.sh: `record --unwind=live` unwinds while recording: the file
# has a stack table and no stack copies; each thread's on-CPU time matches
# the kernel's schedstat as in a raw recording; the expected stacks are
# there, through inlined and frame-pointer-less code and across an exec
# (live-convert.sh checks how much smaller such files are).  A
# deliberately slowed unwinder falls behind: the drain goes on, the
# samples it could not unwind are written raw and counted, and report
# reads the mixed file with every thread and stack.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

size() { wc -c < "$1" | tr -d ' '; }
# on_cpu JSON TID: the thread's on_cpu_ns.
on_cpu() { python3 "$J" threads "$1" | awk -F '\t' -v t="$2" '$2 == t { print $5 }'; }
# schedstat_ok FILE NAME: NAME's on-CPU time in FILE's report is its
# schedstat's (within oncpu_ok's bound, as in report-accounting.sh).
schedstat_ok() {
	"$WALLPROF" report -q -i "$1" --format json > "$1.json"
	_tid=$(wl_field "$1.wl" "$2" tid)
	_want=$(wl_field "$1.wl" "$2" oncpu_ns)
	_got=$(on_cpu "$1.json" "$_tid")
	check "$1: $2's on-CPU time is in the report" [ -n "$_got" ]
	oncpu_ok "$1: $2" "${_got:-0}" "$_want" "$(cat "$1.steal")" "$(wl_field "$1.wl" "$2" slices)"
}

steal_mark
"$WALLPROF" record -q -o raw.data -- "$WORKLOADS/wallclock" 1 > raw.data.wl 2> rec.err
check_num "raw: record exits 0" "$?" -eq 0
steal_ns > raw.data.steal
steal_mark
run live.data.wl rec.err "$WALLPROF" record -q --unwind=live -o live.data -- "$WORKLOADS/wallclock" 1
steal_ns > live.data.steal
check_num "live: record exits 0" "$rc" -eq 0
dump live.data d.out
check "live: the file is format version 2" grep -q '^# wallprof data, format version 2' d.out
check "live: its samples name stacks" grep -Eq ' STACK_SAMPLE .* stack [0-9]+' d.out
# On a machine loaded enough, the unwinder may fall behind for real.
if grep -q 'the unwinder fell behind' rec.err; then
	echo "# the unwinder fell behind: $(cat rec.err)"
else
	check "live: nothing on stderr" [ ! -s rec.err ]
	cat rec.err
	check "live: no stack copy is left in it" no_match ' SAMPLE .* stack [1-9][0-9]*/' d.out
fi
echo "# wallclock 1 s: raw $(size raw.data) bytes, live $(size live.data) bytes"
for n in spinner locker locker2; do
	schedstat_ok raw.data "$n"
	schedstat_ok live.data "$n"
done
run f.out f.err "$WALLPROF" report -i live.data --format folded --mode on --no-kernel
check_num "live: report --format folded exits 0" "$rc" -eq 0
check "live: nothing on report's stderr" [ ! -s f.err ]
check "live: spinner's stack through the inlined frame, to its thread's start" \
	grep -Eq '^spinner;(.*;)?start_thread;wc_spinner;wc_spin_outer;wc_spin_middle_\[i\];wc_spin_leaf [0-9]+$' f.out
check "live: the lockers' stack" grep -Eq '^locker2?;.*wc_lock_round;wc_lock_hold' f.out
run f.out f.err "$WALLPROF" report -i live.data --format folded --mode blocked
check "live: reader blocked in the pipe read" \
	grep -Eq '^reader;.*wc_pipe_wait;.*read.*;schedule_\[k\];(__schedule_\[k\];)?\[off-cpu:blocked\] [0-9]+$' f.out

# Across execs: the process model follows each new program.
ln -s "$WORKLOADS/execchain" first && ln -s "$WORKLOADS/execchain" second ||
	{ fail "symlinks"; finish; }
run x.out x.err "$WALLPROF" record -q --unwind=live -o exec.data -- ./first 0.3 ./second 0.3
check_num "exec: record exits 0" "$rc" -eq 0
run f.out f.err "$WALLPROF" report -i exec.data --format folded --mode on --no-kernel
check "exec: the process burns CPU in chain_burn, from main" \
	grep -Eq "^second;_start;.*;main;chain_burn [0-9]+$" f.out
run t.out t.err "$WALLPROF" report -i exec.data
check "exec: it was first, then second" grep -Eq 'names: first .* -> second' t.out
# Each program's samples unwound with its own mappings: none unnamed, but
# for the vdso's internal functions (its image names only its exported
# entries: a page fault in the pvclock reader lands before the first),
# and the first entry of .plt, lazy binding's call of the resolver, which
# has no name (plt.h): a sample lands there now and then.
plt0=$(readelf -SW "$WORKLOADS/execchain" 2>/dev/null | awk '$2 == ".plt" { print $4 }')
"$WALLPROF" report -i exec.data --format folded 2>/dev/null >exec.folded
unnamed=$(tr ';' '\n' <exec.folded | grep -E '\+0x|\[unknown' | grep -v '^\[vdso\]+0x' |
	awk -v p="$((0x${plt0:-0}))" '{ a = $1; sub(/ [0-9]+$/, "", a); sub(/.*\+0x/, "", a)
		v = 0; for (i = 1; i <= length(a); i++) v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
		if (p && $0 ~ /^execchain\+0x/ && v >= p && v < p + 16) next; print }' | wc -l)
check_num "exec: no frame is unnamed (but the vdso's own, and .plt's first entry)" "$unnamed" -eq 0
if [ "$unnamed" -ne 0 ]; then
	grep '^# frames' t.out | sed 's/^/# /'
	grep -E '\+0x|\[unknown' exec.folded | head -n 5 | sed 's/^/# unnamed: /'
fi

# A slowed unwinder: 1 s a block, while the drain hands it a 2 MiB block
# several times a second; the samples it has no time for go raw.
steal_mark
WALLPROF_TEST_UNWIND_DELAY_US=1000000 "$WALLPROF" record -q --unwind=live -o slow.data -- \
	"$WORKLOADS/wallclock" 2.5 > slow.data.wl 2> slow.err
check_num "slow: record exits 0" "$?" -eq 0
steal_ns > slow.data.steal
check "slow: a warning says how many samples were not unwound" \
	grep -Eq '[0-9]+ samples were written with their stack copies' slow.err
cat slow.err
dump slow.data d.out
# Usually both kinds (mixed): the unwinder unwinds what it finds alone in
# its queue; on a loaded machine there may be no such moment.
grep -q ' STACK_SAMPLE ' d.out || echo "# slow: every sample went raw"
check "slow: and raw samples with stack copies" grep -Eq ' SAMPLE .* stack [1-9][0-9]*/' d.out
run t.out t.err "$WALLPROF" report -i slow.data
check_num "slow: report exits 0" "$rc" -eq 0
check "slow: the quality line counts the samples left to report" \
	grep -Eq '^# stacks: .*, [1-9][0-9]* by report: the live unwinder fell behind' t.out
"$WALLPROF" report -q -i slow.data --format json > slow.json
check "slow: JSON counts them" grep -Eq '"live_raw_samples": [1-9]' slow.json
for n in spinner locker locker2; do
	schedstat_ok slow.data "$n"
done
run f.out f.err "$WALLPROF" report -i slow.data --format folded --mode on --no-kernel
check "slow: spinner's stack is whole" \
	grep -Eq '^spinner;(.*;)?start_thread;wc_spinner;wc_spin_outer;wc_spin_middle_\[i\];wc_spin_leaf [0-9]+$' f.out

run r.out r.err "$WALLPROF" record -q --unwind=later -o bad.data -- true
check_num "--unwind=later is a usage error" "$rc" -eq 2
check "and says which words it takes" grep -q "neither 'report' nor 'live'" r.err
finish
