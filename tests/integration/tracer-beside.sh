# tracer-beside.sh: stacks taken by a tracepoint start at the traced code
# when other tracers use the same tracepoints.  perf takes a tracepoint's
# stack from its probe's caller; alone on the tracepoint, that caller is
# the traced code (__schedule for sched_switch, try_to_wake_up for
# sched_waking).  Once a second tracer adds a probe of its own (ftrace's
# here, in a trace instance), the tracepoint calls its iterator, which
# calls each probe: the caller, and the innermost frame of every
# switch-out and waker stack, became __traceiter_sched_switch.  Recorded
# beside `perf record -e sched:sched_switch -a` and such a trace instance:
# perf's own stacks show the iterator (so the case is there), wallprof's
# (launched and -a) start at __schedule and try_to_wake_up.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
command -v perf >/dev/null 2>&1 || skip "no perf to record beside wallprof"
J="$TESTS_SRCDIR/integration/report-json.py"
# Recording wake-ups mounts tracefs when it may.
"$WALLPROF" record -q --wakeups=stacks -o probe.data -- true 2>probe.err ||
	skip "wake-ups cannot be recorded here: $(head -n 1 probe.err)"
tracefs=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d "$d/instances" ] && [ -w "$d/instances" ] && { tracefs=$d; break; }
done
[ -n "$tracefs" ] || skip "no writable tracefs instances: no second tracer to add"
"$WALLPROF" record -q -o probe-a.data -a -d 0.1 2>probe.err ||
	skip "-a is not allowed here: $(head -n 1 probe.err)"
tracing_alone

# A second tracer: ftrace's probes on sched_switch and sched_waking, in an
# instance of this test's own, removed at the end.
inst=$tracefs/instances/wallprof-test-$$
end_tracer() {
	[ -d "$inst" ] || return 0
	echo 0 >"$inst/events/sched/sched_switch/enable" 2>/dev/null
	echo 0 >"$inst/events/sched/sched_waking/enable" 2>/dev/null
	rmdir "$inst" 2>/dev/null
}
trap 'end_tracer; cleanup' EXIT
mkdir "$inst" && echo 1 >"$inst/events/sched/sched_switch/enable" &&
	echo 1 >"$inst/events/sched/sched_waking/enable" ||
	{ fail "a trace instance traces sched_switch and sched_waking"; finish; }
# perf runs its command once its events are on; the command ends when told.
perf record -B -N -g -q -e sched:sched_switch -a -o perf.data -- \
	sh -c 'touch perf.ready; while [ ! -e perf.stop ]; do sleep 0.1; done' \
	</dev/null >perf.out 2>&1 &
perf_pid=$!
bg_pids="$bg_pids $perf_pid"
wait_until 600 test -e perf.ready || { fail "perf record started"; cat perf.out; finish; }

run wl.out rec.err "$WALLPROF" record -q -o L -- "$WORKLOADS/wakeups" pipe 0.5
check_num "launched: record exits 0" "$rc" -eq 0
"$WORKLOADS/wakeups" pipe 1.5 >wla.out 2>&1 &
bg_pids="$bg_pids $!"
run rec.out reca.err "$WALLPROF" record -q -o A -a -d 0.7
check_num "-a: record exits 0" "$rc" -eq 0
touch perf.stop
wait "$perf_pid"
check_num "perf record exits 0" $? -eq 0
end_tracer

# The case: perf's own sched_switch stacks start in the iterator.
perf script -i perf.data -F ip,sym 2>perf.err | awk 'BEGIN { first = 1 } NF == 0 { first = 1; next }
	first { print $2; first = 0 }' | sort | uniq -c | sort -rn >perf.first
sed 's/^/# perf: innermost /' perf.first | head -n 3
if grep -q ' __traceiter_sched_switch$' perf.first; then
	ok "the case: perf's stacks start in __traceiter_sched_switch"
else
	fail "the case: perf's stacks start in __traceiter_sched_switch"
	sed 's/^/# perf record: /' perf.out | head -n 5
	sed 's/^/# perf script: /' perf.err | head -n 5
fi

# tracing NAMES: the names of the tracing machinery, one per line.
tracing='^(__traceiter_|__probestub_|__SCT__tp_func_|perf_trace_|perf_tp_event|perf_swevent_|___?perf_sw_event|__perf_event_overflow|trace_event_raw_event_|trace_event_buffer_|__bpf_trace_|bpf_trace_run|trace_call_bpf)'
for f in L A; do
	run $f.json $f.err "$WALLPROF" report -i $f --format json --top 100000 --mode off
	check_num "$f: report exits 0" "$rc" -eq 0
	python3 "$J" stacks $f.json >$f.stacks
	python3 "$J" wakers $f.json >$f.wakers
	# Innermost frames of the stacks of blocked time, and of their wakers.
	awk -F '\t' '$4 == "blocked" { split($7, fr, ";"); print fr[1] }' $f.stacks |
		sort | uniq -c | sort -rn >$f.inner
	awk -F '\t' '{ split($11, fr, ";"); print fr[1] }' $f.wakers | sort | uniq -c |
		sort -rn >$f.winner
	sed "s/^/# $f: blocked, innermost /" $f.inner | head -n 3
	sed "s/^/# $f: waker, innermost /" $f.winner | head -n 3
	# (schedule: a software context-switches event's, which no tracepoint takes.)
	check_num "$f: switch-out stacks starting in __schedule or schedule" \
		"$(awk '$2 ~ /^(__)?schedule_\[k\]$/ { n += $1 } END { print n + 0 }' $f.inner)" -gt 0
	check "$f: no switch-out stack starts in the tracing machinery" \
		no_match " $(echo "$tracing" | sed 's/^\^//')" $f.inner
	check_num "$f: waker stacks starting in try_to_wake_up" \
		"$(awk '$2 == "try_to_wake_up_[k]" { n += $1 } END { print n + 0 }' $f.winner)" -gt 0
	check "$f: no waker stack starts in the tracing machinery" \
		no_match " $(echo "$tracing" | sed 's/^\^//')" $f.winner
done
finish
