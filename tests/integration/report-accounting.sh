# report-accounting.sh: `wallprof report` splits every thread's wall time
# exactly into on-CPU, blocked, runnable and preempted time, its on-CPU
# time is the kernel's, and (with wake-ups recorded) so is its wait for a
# CPU.  The wallclock workload's threads print their own
# schedstat figures (on-CPU time, run-queue wait) just before they return:
# the ground truth.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
NAMES='spinner sleeper locker locker2 reader'

steal_mark
record_wallclock 1.5
steal_ns=$(steal_ns)
echo "# steal time during the recording: $steal_ns ns"

run json rep.err "$WALLPROF" report -i F --format json
check_num "report --format json exits 0" "$rc" -eq 0
check_num "report --format json: nothing on stderr" "$(nlines rep.err)" -eq 0
check "the JSON report is valid, with the documented keys" python3 "$J" check json
python3 "$J" threads json >threads 2>&1
python3 "$J" header json >header 2>&1
hdr() { awk -F '\t' -v k="$1" '$1 == k { print $2 }' header; }
check "the header says the recording is complete" [ "$(hdr complete)" = true ]
check_num "lost records" "$(hdr lost_records)" -eq 0
check_num "lost samples" "$(hdr lost_samples)" -eq 0
duration=$(hdr duration_ns)
period=$(hdr sample_period_ns)
wakeups=$(hdr wakeups)
echo "# wake-ups recorded: $wakeups"

dump F d
check_num "report --dump exits 0" "$?" -eq 0
run folded fold.err "$WALLPROF" report -i F --format folded --unit ns
check_num "report --format folded --unit ns exits 0" "$rc" -eq 0
run text text.err "$WALLPROF" report -i F --threads all
check_num "report (text) exits 0" "$rc" -eq 0

# tf TID FIELD: a field of a thread's line in threads (see report-json.py).
tf() {
	awk -F '\t' -v tid="$1" -v k="$2" 'BEGIN {
		split("pid tid comm wall on off blocked preempted vol invol samples approximate start end runnable wakeups", n, " ")
		for (i in n) col[n[i]] = i
	} $2 == tid { print $col[k]; exit }' threads
}
abs() { [ "$1" -lt 0 ] && echo $((-$1)) || echo "$1"; }

for n in $NAMES; do
	tid=$(wl_field wl.out "$n" tid)
	oncpu=$(wl_field wl.out "$n" oncpu_ns)
	runq=$(wl_field wl.out "$n" runq_ns)
	if [ -z "$(tf "$tid" tid)" ]; then
		fail "$n: thread $tid is in the JSON report"
		continue
	fi
	comm=$(tf "$tid" comm) wall=$(tf "$tid" wall) on=$(tf "$tid" on) off=$(tf "$tid" off)
	blocked=$(tf "$tid" blocked) pre=$(tf "$tid" preempted) runnable=$(tf "$tid" runnable)
	check "$n: its name is '$n' (got '$comm')" [ "$comm" = "$n" ]
	check "$n: not approximate" [ "$(tf "$tid" approximate)" = false ]
	check_num "$n: wall_ns == on_cpu_ns + blocked_ns + runnable_ns + preempted_ns" \
		"$wall" -eq $((on + blocked + runnable + pre))
	# Off-CPU time and switch counts against the raw switch records,
	# counted here from the dump: report times a switch by its
	# sched_switch when it has one, tens of microseconds before the record.
	set -- $(dump_switches d "$tid")
	check_num "$n: voluntary switches == the dump's blocked switch-outs" "$(tf "$tid" vol)" -eq "$1"
	check_num "$n: involuntary switches == the dump's preempted switch-outs" "$(tf "$tid" invol)" -eq "$2"
	# Time the hypervisor stole while a thread ran is no exec time of
	# its (schedstat), so anchoring counts it off-CPU (preempted): the
	# raw switch intervals and the run-queue figures differ by up to it.
	tol=$((1000000 + ($1 + $2) * 100000 + steal_ns))
	check_num "$n: off_cpu_ns $off within $tol of the dump's switch-out to switch-in time $3" \
		"$(abs $((off - $3)))" -le "$tol"
	[ "$wakeups" = true ] || check_num "$n: no runnable time without wake-ups" "$runnable" -eq 0
	check_num "$n: wall_ns <= the recording's duration" "$wall" -le "$duration"
	oncpu_ok "$n" "$on" "$oncpu" "$steal_ns" "$(wl_field wl.out "$n" slices)"
	# Every preempted interval is time on the run queue, so it cannot
	# exceed schedstat's run-queue wait (which also counts the wait after
	# each wake-up: runnable time, or blocked without wake-ups).
	tol=$(($(max $((runq / 20)) 20000000) + steal_ns))
	check_num "$n: preempted_ns $pre <= schedstat runq_ns $runq + $tol" "$pre" -le $((runq + tol))
	if [ "$wakeups" = true ]; then
		# With wake-ups, the two waits for a CPU are all of it.  The
		# kernel writes a switch-in record after it has switched the
		# thread's events in, some 20-40 us (on a VM) after schedstat
		# stopped counting the wait: allow 50 us per switch-in.
		switches=$(($(tf "$tid" vol) + $(tf "$tid" invol)))
		tol=$(($(max $((runq / 50)) 5000000) + switches * 50000 + steal_ns))
		check_num "$n: preempted + runnable ($((pre + runnable))) within $tol of schedstat runq_ns $runq" \
			"$(abs $((pre + runnable - runq)))" -le "$tol"
		tol=$(($(max $((off / 50)) 5000000) + switches * 50000 + steal_ns))
		check_num "$n: blocked_ns $blocked within $tol of off-CPU - runq ($((off - runq)))" \
			"$(abs $((blocked - (off - runq))))" -le "$tol"
	fi
	echo "# preempted vs runq: $n: preempted_ns $pre runnable_ns $runnable runq_ns $runq (blocked_ns $blocked," \
		"voluntary $(tf "$tid" vol), involuntary $(tf "$tid" invol), schedstat slices" \
		"$(wl_field wl.out "$n" slices))"
	# The folded stacks of the thread add up to its wall time.
	sum=$(awk -v n="$n" '{ split($0, f, ";") } f[1] == n { s += $NF; l++ }
		END { printf "%.0f %d\n", s, l }' folded)
	lines=${sum#* } sum=${sum% *}
	check_num "$n: its folded stacks (ns) add up to its wall time ($wall, $lines lines)" \
		"$(abs $((sum - wall)))" -le "$lines"
	check "$n: the text table shows thread $tid" grep -Eq "^  $tid +$n " text
done

# The spinner never blocks: its off-CPU time is preemption, which is all
# of its run-queue wait; its on-CPU samples come at the sampling period.
tid=$(wl_field wl.out spinner tid)
runq=$(wl_field wl.out spinner runq_ns)
pre=$(tf "$tid" preempted) on=$(tf "$tid" on)
tol=$(($(max $((runq / 20)) 20000000) + steal_ns))
check_num "spinner: preempted_ns $pre within $tol of schedstat runq_ns $runq" \
	"$(abs $((pre - runq)))" -le "$tol"
check_num "spinner: blocked_ns is (nearly) nothing" "$(tf "$tid" blocked)" -le 20000000
est=$(($(tf "$tid" samples) * period))
tol=$(max $((on / 10)) 20000000)
check_num "spinner: samples x period ($est) within $tol of on_cpu_ns $on" \
	"$(abs $((est - on)))" -le "$tol"

# The sleeper is off the CPU because it sleeps: blocked, not preempted.
tid=$(wl_field wl.out sleeper tid)
blocked=$(tf "$tid" blocked) off=$(tf "$tid" off)
# Its wait for a CPU after each wake-up is runnable time when wake-ups are
# recorded, blocked time otherwise.
[ "$wakeups" = true ] && blocked=$((blocked + $(tf "$tid" runnable)))
check_num "sleeper: blocked (and runnable) share of off-CPU time, percent" \
	"$(awk -v b="$blocked" -v o="$off" 'BEGIN { printf "%d", o ? 100 * b / o : 0 }')" -ge 95
check_num "sleeper: a voluntary switch for each sleep" "$(tf "$tid" vol)" \
	-ge "$(wl_field wl.out sleeper sleeps)"
check_num "sleeper: off-CPU time, ms" $((off / 1000000)) -ge 1000

# The reader blocks for each byte; the lockers block for each other.
tid=$(wl_field wl.out reader tid)
check_num "reader: voluntary switches, at least half the bytes read" \
	$(($(tf "$tid" vol) * 2)) -ge "$(wl_field wl.out reader bytes)"
for n in locker locker2; do
	tid=$(wl_field wl.out $n tid)
	check_num "$n: voluntary switches (waits for the mutex)" "$(tf "$tid" vol)" -ge 10
	check_num "$n: blocked time, ms" $(($(tf "$tid" blocked) / 1000000)) -ge 20
done

echo "# kernel $(uname -r)"
finish
