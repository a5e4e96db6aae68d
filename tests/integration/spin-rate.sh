# spin-rate.sh: on-CPU samples come at the requested rate of CPU time.
# The ground truth is the kernel's own figure for the spinning thread
# (schedstat on-CPU nanoseconds, printed by the workload), so the check
# holds on a loaded machine too: samples = oncpu_ns * HZ / 1e9, +-10%
# (the kernel's hrtimer-driven cpu-clock is exact to a sample or two; the
# margin covers the thread's start and exit around the measurement).
# The samples, their registers and stack copies are read in --dump's raw
# SAMPLE lines: the recordings keep raw stacks (--unwind=report).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

# rate HZ SECONDS FILE: record spin at HZ for SECONDS of its CPU time
# (however long the machine takes to give them) and compare with the
# ground truth.
rate() {
	_hz=$1 _secs=$2 _f=$3
	run wl.out rec.err "$WALLPROF" record --unwind=report -F "$_hz" -o "$_f" -- "$WORKLOADS/spin" "$_secs" cpu
	check_num "-F $_hz: record exits 0" "$rc" -eq 0
	_tid=$(wl_field wl.out spinner tid)
	_on=$(wl_field wl.out spinner oncpu_ns)
	if [ -z "$_tid" ] || [ -z "$_on" ]; then
		fail "-F $_hz: the workload reported its spinner thread"
		return
	fi
	dump "$_f" d
	check_num "-F $_hz: report --dump exits 0" $? -eq 0
	_n=$(samples cpu-clock d "$_tid")
	_want=$(awk -v on="$_on" -v hz="$_hz" 'BEGIN { printf "%d", on * hz / 1e9 + 0.5 }')
	# +-10%, and at least +-3 samples when the machine gave it little CPU.
	_tol=$(awk -v w="$_want" 'BEGIN { t = int(w / 10 + 0.5); print t < 3 ? 3 : t }')
	check_num "-F $_hz: the spinner ran (${_on} ns on CPU)" "$_want" -gt 50
	check_range "-F $_hz: cpu-clock samples of the spinner (expect $_want)" "$_n" \
		$((_want - _tol)) $((_want + _tol))
	check "-F $_hz: nothing was lost" grep -q '^# lost: 0 records, 0 samples' d
	# (On its exit path, once its memory is gone, a thread has no user
	# registers: the samples after its last one with them are excused.)
	_bad=$(grep -E '^[0-9]+\.[0-9]+ ' d | sort -n -k1,1 |
		awk -v tid="$_tid" '$2 == "SAMPLE" && $6 == "cpu-clock" && $3 ~ ("/" tid "$") {
			if (/ regs abi(64|32) / && / stack [0-9]+\/[1-9]/) { n += pending; pending = 0 }
			else pending++ } END { print n + 0 }')
	check_num "-F $_hz: every sample carries registers and a user stack (-g dwarf)" "$_bad" -eq 0
}

rate 999 0.5 F999
rm -f F999
rate 200 0.5 F200
rm -f F200

# -g fp: a callchain in every sample and no stack copy.
run wl.out rec.err "$WALLPROF" record --unwind=report -g fp -o Ffp -- "$WORKLOADS/spin" 0.3
check_num "-g fp: record exits 0" "$rc" -eq 0
dump Ffp d
check_num "-g fp: report --dump exits 0" $? -eq 0
check_num "-g fp: report --dump prints nothing on stderr" "$(nlines d.err)" -eq 0
check "-g fp: the header says call graph fp" grep -q '^# sample_type: .*, call graph fp$' d
check_num "-g fp: cpu-clock samples recorded" "$(samples cpu-clock d)" -gt 0
# (Wake-ups reaching a run queue, new threads' and switch times carry
# none by design.)
check_num "-g fp: every sample has a callchain" \
	"$(awk '$2 == "SAMPLE" && $6 !~ /^sched:sched_(wakeup|switch)/ && !/ callchain [1-9]/ { n++ }
		END { print n + 0 }' d)" -eq 0
check_num "-g fp: no sample has a stack copy" \
	"$(awk '$2 == "SAMPLE" && / stack / { n++ } END { print n + 0 }' d)" -eq 0
check "-g fp: the recording finished" grep -q '^# summary: ' d

# -g none: bare samples; switches are still recorded, without stacks.
run wl.out rec.err "$WALLPROF" record --unwind=report -g none -o Fnone -- "$WORKLOADS/spin" 0.3
check_num "-g none: record exits 0" "$rc" -eq 0
dump Fnone d
check_num "-g none: report --dump exits 0" $? -eq 0
check_num "-g none: report --dump prints nothing on stderr" "$(nlines d.err)" -eq 0
check "-g none: the header says call graph none" grep -q '^# sample_type: .*, call graph none$' d
check_num "-g none: cpu-clock samples recorded" "$(samples cpu-clock d)" -gt 0
check_num "-g none: no sample has a callchain, registers or stack" \
	"$(awk '$2 == "SAMPLE" && / (callchain|regs|stack) / { n++ } END { print n + 0 }' d)" -eq 0
check_num "-g none: no switch-out stack samples" "$(switch_samples d)" -eq 0
check_num "-g none: switches are still recorded" "$(count SWITCH_OUT d)" -gt 0
check "-g none: the recording finished" grep -q '^# summary: ' d

finish
