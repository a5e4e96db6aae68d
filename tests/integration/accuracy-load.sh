#!/bin/sh
# accuracy-load.sh: the ledger against the kernel's own figures on a
# machine that is busy, the way production servers are: two CPU hogs and
# another tracer (perf recording the scheduler's switches system-wide)
# run beside the ground-truth workload for the whole test.
#
#   launched  a client/server program of tens of thousands of short
#             slices a second (tests/workloads/clients), and a spinner:
#             each busy thread's on-CPU time is its schedstat figure
#             within max(2%, 5 ms);
#   attached  the same program, attached before it starts its work (so
#             that all of it is inside the recording): the same bound;
#   -a        beside the same program: on-CPU + idle never more than the
#             CPUs' time, and with the time no record tells, exactly it
#             within 0.1%; no thread on a CPU longer than its wall; no CPU
#             running two threads at once; every sample's event known.
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

[ "$(id -u)" -eq 0 ] || skip "root is needed for -a, wake-ups and the kernel's exit figures"
# Others' wake-up checks must not run beside the tracer this test starts.
tracing_alone

# The load: two busy loops, and another tracer of the scheduler.
for i in 1 2; do
	sh -c 'while :; do :; done' &
	bg_pids="$bg_pids $!"
done
perf_ok=no
if command -v perf >/dev/null 2>&1; then
	perf record -q -e sched:sched_switch -a -o other.data >perf.out 2>&1 &
	perf_pid=$!
	bg_pids="$bg_pids $perf_pid"
	sleep 1
	running "$perf_pid" && perf_ok=yes
fi
if [ "$perf_ok" = yes ]; then
	echo "# load: two busy loops and perf record -e sched:sched_switch -a"
else
	echo "# load: two busy loops (perf could not record: $(head -c 200 perf.out 2>/dev/null))"
fi

# --- launched ---------------------------------------------------------------
run L.out L.err "$WALLPROF" record -q -o L.data -- "$WORKLOADS/clients" 2 3 10
check_num "launched: record exits 0" "$rc" -eq 0
"$WALLPROF" report -i L.data --format json >L.json 2>L.rerr
check "launched: report exits 0" [ -s L.json ]
if busy_ok launched L.out L.json >L.check; then ok "launched: every busy thread"; else
	notok "launched: every busy thread"; fi
cat L.check
run S.out S.err "$WALLPROF" record -q -o S.data -- "$WORKLOADS/spin" 2
"$WALLPROF" report -i S.data --format json >S.json 2>S.rerr
if busy_ok spin S.out S.json >S.check; then ok "spin: the spinner"; else
	notok "spin: the spinner"; fi
cat S.check

# --- attached: the program waits until the recorder is there ---------------
mkfifo go
"$WORKLOADS/clients" 2 3 10 wait <go >A.out 2>A.werr &
wl=$!
bg_pids="$bg_pids $wl"
exec 6>go
record_attached A.data A.err "$wl" -q
echo g >&6
exec 6>&-
wait "$wl"
wait "$rec"
rc=$?
check_num "attached: record exits 0" "$rc" -eq 0
"$WALLPROF" report -i A.data --format json >A.json 2>A.rerr
if busy_ok attached A.out A.json >A.check; then ok "attached: every busy thread"; else
	notok "attached: every busy thread"; fi
cat A.check

# --- -a ------------------------------------------------------------------------
"$WORKLOADS/clients" 4 3 10 >W.out 2>W.werr &
wl=$!
bg_pids="$bg_pids $wl"
sleep 0.5
run W.rout W.err "$WALLPROF" record -q -a -d 2 -o W.data
check_num "-a: record exits 0" "$rc" -eq 0
"$WALLPROF" report -i W.data --format json >W.json 2>W.rerr
"$WALLPROF" report -i W.data --format trace -o W.trace 2>W.terr
python3 - W.json W.trace <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
cpus = rep.get("cpus") or {}
cap = cpus.get("capacity_ns", 0)
on = sum(t["on_cpu_ns"] for t in rep["threads"])
busy = cpus.get("on_cpu_ns", 0)
idle = cpus.get("idle_ns", 0)
unseen = cpus.get("unseen_ns", 0)
failed = 0
def check(cond, what):
    global failed
    failed += not cond
    print(f"{'ok' if cond else 'not ok'} - -a: {what}")
check(cap > 0, f"the report has the CPUs' ledger ({cap} ns)")
check(on + idle <= cap, f"the threads' on-CPU {on} + idle {idle} <= CPUs x duration {cap}")
check(abs(busy - on) <= cap // 1000, f"the CPUs' busy time {busy} is the threads' {on}")
check(abs(busy + idle + unseen - cap) <= cap // 1000,
      f"busy + idle + unseen {busy + idle + unseen} is CPUs x duration {cap} within 0.1%")
over = [t["tid"] for t in rep["threads"] if t["on_cpu_ns"] > t["wall_ns"]]
check(not over, f"no thread's on-CPU time exceeds its wall time {over[:5]}")
unknown = rep["quality"].get("unknown_event_samples", 0)
check(unknown == 0, f"no sample of an unknown event counted ({unknown})")
# One thread at a time on a CPU: the running slices of each CPU never overlap.
tr = json.load(open(sys.argv[2]))
by_cpu = {}
for e in tr["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "on-cpu" and "cpu" in e.get("args", {}):
        by_cpu.setdefault(e["args"]["cpu"], []).append((float(e["ts"]), float(e["dur"]), e["tid"]))
worst = 0
for c, sl in by_cpu.items():
    sl.sort()
    end = -1.0
    for ts, dur, tid in sl:
        if ts < end - 0.0015:          # 1.5 ns of rounding at the microsecond's third decimal
            worst = max(worst, end - ts)
        end = max(end, ts + dur)
check(by_cpu and worst == 0, f"no CPU runs two threads at once ({len(by_cpu)} CPUs, "
      f"worst overlap {worst:.3f} us)")
sys.exit(1 if failed else 0)
EOF
[ $? -eq 0 ] && ok "-a: the CPUs' ledger" || notok "-a: the CPUs' ledger"
wait "$wl"
finish
