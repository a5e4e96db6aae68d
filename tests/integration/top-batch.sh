# top-batch.sh: wallprof top -b, one JSON object per interval, compared
# with what the kernel measured: a thread pinned beside a CPU hog waits
# for its CPU as long as its schedstat says; a pipe reader is blocked,
# woken by the writer; a sleeper is blocked in its sleep.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

command -v jq >/dev/null 2>&1 || skip "jq is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
command -v taskset >/dev/null 2>&1 || skip "taskset is not installed"
N=4

# sample.py PID TID | sample.py --find EXE NAME: the thread's schedstat
# every 20 ms, as "time on_cpu_ns run_delay_ns" (CLOCK_MONOTONIC, the
# intervals' clock).  A reading that took over 2 ms (the sampler itself
# kept off its CPU) is left out: its time would not be the figures'.
cat >sample.py <<'PY'
import os, sys, time
if sys.argv[1] == "--find":
    exe, name, pid, tid = sys.argv[2], sys.argv[3], None, None
    while tid is None:
        for p in os.listdir("/proc"):
            try:
                if p.isdigit() and os.readlink("/proc/%s/exe" % p) == exe:
                    for t in os.listdir("/proc/%s/task" % p):
                        if open("/proc/%s/task/%s/comm" % (p, t)).read().strip() == name:
                            pid, tid = p, t
            except OSError:
                pass
        time.sleep(0.005)
else:
    pid, tid = sys.argv[1], sys.argv[2]
path = "/proc/%s/task/%s/schedstat" % (pid, tid)
while True:
    a = time.monotonic_ns()
    try:
        f = open(path).read().split()
    except OSError:
        break
    b = time.monotonic_ns()
    if b - a < 2000000:
        print((a + b) // 2, f[0], f[1], flush=True)
    time.sleep(0.02)
PY
# kernel FILE FROM TO FIELD: what field (2: on-CPU, 3: run_delay) of the
# samples nearest FROM and TO grew by, per cent of the time between them;
# -1 when no sample lies within 50 ms of either end.
kernel() {
	awk -v a="$2" -v b="$3" -v k="$4" '
	{ da = $1 - a; if (da < 0) da = -da; db = $1 - b; if (db < 0) db = -db
	  if (!ia || da < ba) { ba = da; ia = 1; ra = $k; ta = $1 }
	  if (!ib || db < bb) { bb = db; ib = 1; rb = $k; tb = $1 } }
	END { if (tb > ta && ba < 50000000 && bb < 50000000) printf "%d\n", (rb - ra) * 100 / (tb - ta)
	      else print -1 }' "$1"
}

# 1. A spinner and a hog, both on CPU 0.
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
bg_pids="$bg_pids $hog"
taskset -c 0 python3 -c 'while True: pass' &
spin=$!
bg_pids="$bg_pids $spin"
sleep 1
# The kernel's run_delay sampled on the clock the intervals are dated by.
python3 sample.py $spin $spin >sched.txt &
sampler=$!
bg_pids="$bg_pids $sampler"
"$WALLPROF" top -b -n $N -d 1 --format json -p $spin >spin.json 2>spin.err
rc=$?
kill $sampler $hog $spin 2>/dev/null
check_num "top -b exits 0" $rc -eq 0
check_num "one JSON object per interval" "$(jq -c . spin.json | grep -c '^{')" -eq $N
# Intervals 2..N (the first holds the attach), and the schedstat samples nearest their ends.
from=$(jq -s '.[1].start_ns' spin.json); to=$(jq -s '.[-1].end_ns' spin.json)
kern=$(kernel sched.txt "$from" "$to" 3)
mine=$(jq -s --argjson tid $spin '[.[1:][] | .threads[] | select(.tid == $tid) |
	.runnable_ns + .preempted_ns] | add' spin.json)
span=$(jq -s '[.[1:][] | .end_ns - .start_ns] | add' spin.json)
pct=$(( ${mine%.*} * 100 / span ))
echo "# waiting for a CPU: top ${pct}%, the kernel's schedstat ${kern}%"
if [ "$kern" -ge 0 ]; then
	check_range "runnable + preempted within 5 points of schedstat's run_delay" "$pct" \
		$((kern - 5)) $((kern + 5))
else
	skip_reference "runnable + preempted as schedstat's run_delay" \
		"the sampler read no schedstat near an interval's end (the machine kept it off)"
fi
# Alone beside the hog the kernel shares CPU 0 in halves; others' load shifts both.
# The half is checked only where the kernel measured a half (45-55%): then
# wallprof's figure, within 5 points of it, must lie in 40-60%.
if [ "$kern" -ge 45 ] && [ "$kern" -le 55 ]; then
	check_range "runnable + preempted about half the time, as the kernel's" "$pct" 40 60
else
	# (The kernel's own figure is the test then, checked above.)
	skip_reference "runnable + preempted about half the time" \
		"the kernel measured ${kern}%: other load shares CPU 0"
fi

# 1b. A switch storm beside the hog: pingpong's two threads pass a byte
# through pipes on CPU 0, tens of thousands of wake-ups a second, far
# above the budget (500 a second a CPU) of the wake-up tracepoints, so
# most wake-ups go unrecorded, and each switch-in record comes late: the
# rows are anchored to the threads' schedstat read at each interval's
# end, and match the kernel's figures sampled beside (on-CPU, and the
# waits for a CPU: run_delay).
taskset -c 0 sh -c 'while :; do :; done' &
hog=$!
bg_pids="$bg_pids $hog"
taskset -c 0 "$WORKLOADS/pingpong" 30 >pp.out 2>&1 &
pp=$!
bg_pids="$bg_pids $pp"
wait_until 50 sh -c "[ \$(ls /proc/$pp/task | wc -l) -ge 2 ]"
ptid=$(ls "/proc/$pp/task" | grep -vx "$pp" | head -n 1)
python3 sample.py $pp "$ptid" >pp-sched.txt &
sampler=$!
bg_pids="$bg_pids $sampler"
"$WALLPROF" top -b -n $N -d 1 --format json -p $pp >pp.json 2>pp.err
rc=$?
kill $sampler $hog $pp 2>/dev/null
check_num "storm: top -b exits 0" $rc -eq 0
[ $rc -eq 0 ] || { sed "s/^/# /" pp.err; echo "# pingpong: $(cat pp.out 2>/dev/null)"; }
from=$(jq -s '.[1].start_ns' pp.json); to=$(jq -s '.[-1].end_ns' pp.json)
kwait=$(kernel pp-sched.txt "$from" "$to" 3)
kon=$(kernel pp-sched.txt "$from" "$to" 2)
rows=$(jq -c --argjson tid "$ptid" 'select(.interval > 1) | .threads[] | select(.tid == $tid)' pp.json)
span=$(jq -s '[.[1:][] | .end_ns - .start_ns] | add' pp.json)
# per cent of the intervals
sums() { echo "$rows" | jq -s --argjson s "$span" "map($1) | add * 100 / \$s | floor"; }
waitpct=$(sums '.runnable_ns + .preempted_ns')
onpct=$(sums '.on_cpu_ns')
recpct=$(sums '.on_cpu_records_ns')
estpct=$(sums '.runnable_estimated_ns')
unkpct=$(sums '.runnable_unknown_ns')
anchored=$(echo "$rows" | jq -s 'map(select(.anchored)) | length')
echo "# storm: on-CPU: top ${onpct}% (the switch records ${recpct}%), schedstat ${kon}%;" \
	"waiting for a CPU: top ${waitpct}% (${estpct} of it estimated, of ${unkpct} unknown)," \
	"schedstat ${kwait}%; $anchored of $((N - 1)) intervals anchored"
check_num "storm: an interval after the first anchored to the kernel's figures" "$anchored" -ge 1
if [ "$kwait" -lt 0 ] || [ "$kon" -lt 0 ]; then
	skip_reference "storm: the thread's time as schedstat has it" \
		"the sampler read no schedstat near an interval's end (the machine kept it off)"
elif [ "$anchored" -eq $((N - 1)) ]; then
	check_range "storm: runnable + preempted within 5 points of schedstat's run_delay" \
		"$waitpct" $((kwait - 5)) $((kwait + 5))
	check_range "storm: on-CPU within 5 points of schedstat's" "$onpct" $((kon - 5)) $((kon + 5))
else
	# The machine kept top's read of the figures past an interval's
	# hold: that interval's waits for a CPU are the records' and the
	# estimate of the unrecorded wake-ups, within its bound.
	check_range "storm: schedstat's run_delay within what top knew and its bound, 5 points either side" \
		"$kwait" $((waitpct - estpct - 5)) $((waitpct - estpct + unkpct + 5))
	skip_reference "storm: on-CPU as schedstat's" \
		"an interval was not anchored (the machine kept the read of the figures late)"
fi

# 2. A pipe: the writer writes a byte every 2 ms, the reader reads them;
# another reader waits for a second pipe's bytes in epoll_wait.
cat >pipe.py <<'PY'
import os, select, threading, time, sys
r, w = os.pipe()
r2, w2 = os.pipe()
def reader():
    open("reader.tid", "w").write(str(threading.get_native_id()))
    while os.read(r, 1):
        pass
def epreader():
    ep = select.epoll()
    ep.register(r2, select.EPOLLIN)
    open("epreader.tid", "w").write(str(threading.get_native_id()))
    while True:
        ep.poll()
        os.read(r2, 1)
def writer():
    open("writer.tid", "w").write(str(threading.get_native_id()))
    while True:
        os.write(w, b"x")
        os.write(w2, b"x")
        time.sleep(0.002)
threading.Thread(target=reader, daemon=True).start()
threading.Thread(target=epreader, daemon=True).start()
threading.Thread(target=writer, daemon=True).start()
time.sleep(float(sys.argv[1]))
PY
python3 pipe.py 60 &
py=$!
bg_pids="$bg_pids $py"
wait_until 50 test -s reader.tid -a -s writer.tid -a -s epreader.tid
rtid=$(cat reader.tid); wtid=$(cat writer.tid); etid=$(cat epreader.tid)
"$WALLPROF" top -b -n $N -d 1 --format json -p $py >pipe.json 2>pipe.err
check_num "top -b -p exits 0" $? -eq 0
kill $py 2>/dev/null
# The first interval may hold the attach itself: the last ones are judged.
last=$(jq -c --argjson tid "$rtid" 'select(.interval > 1) | .threads[] |
	select(.tid == $tid)' pipe.json)
nlast=$(echo "$last" | grep -c '^{')
check_num "the reader has a row in every interval after the first" "$nlast" -eq $((N - 1))
# Woken, it waits for a CPU as long as others' load makes it: that part is runnable.
low=$(echo "$last" | jq -s 'map(.blocked_pct + .runnable_pct) | min | floor')
check_num "the reader is blocked (or just woken) 90% of each interval or more" "$low" -ge 90
if [ "$(head -1 pipe.json | jq .wakeups)" = true ]; then
	# The reader wakes for the pipe's byte (the writer), then may wait
	# for Python's lock (the GIL), which whoever holds it hands over: the
	# epoll reader too, woken by the same writer.  Under load that may
	# be the most of an interval's wake-ups: either is a true top waker.
	wk=$(echo "$last" | jq -s --argjson w "$wtid" --argjson e "$etid" \
		'map(select(.top_waker.tid == $w or .top_waker.tid == $e)) | length')
	check_num "the writer ($wtid) or, for the GIL, the epoll reader ($etid) is the reader's top waker in each interval" \
		"$wk" -eq $((N - 1))
	wk=$(echo "$last" | jq -s --argjson w "$wtid" 'map(select(.top_waker.tid == $w)) | length')
	check_num "the writer is its top waker in some interval" "$wk" -ge 1
	# (Python's own lock, the GIL, is a futex: under load some of its
	# blocked time is that, which is right.  The pipe is the rest.)
	io=$(echo "$last" | jq -s 'map(.blocked_kind_pct.io / (.blocked_pct + 0.01) * 100) | min | floor')
	check_num "its blocked time is mostly I/O (the pipe)" "${io:-0}" -ge 60
	other=$(echo "$last" | jq -s 'map(.blocked_kind_pct.other / (.blocked_pct + 0.01) * 100) | max | floor')
	check_num "and little of it unexplained (other), per cent" "${other:-100}" -le 10
else
	skip_check "the writer is the reader's top waker" "wake-ups not recorded here"
fi
# (Innermost, schedule_hrtimeout_range_clock tells nothing; do_epoll_wait,
# or ep_poll on older kernels, says it polls.)
erows=$(jq -c --argjson tid "$etid" 'select(.interval > 1) | .threads[] | select(.tid == $tid)' \
	pipe.json)
eio=$(echo "$erows" | jq -s 'map(.blocked_kind_pct.io / (.blocked_pct + 0.01) * 100) | min | floor')
eother=$(echo "$erows" | jq -s 'map(.blocked_kind_pct.other / (.blocked_pct + 0.01) * 100) | max | floor')
check_num "the epoll reader's blocked time is mostly I/O (a poll)" "${eio:-0}" -ge 60
check_num "and little of it unexplained (other), per cent" "${eother:-100}" -le 10

# 3. A sleeper, launched: 400 sleeps of 10 ms.
python3 sample.py --find "$(readlink -f "$WORKLOADS/sleeper")" sleeper >sleep-sched.txt &
sampler=$!
bg_pids="$bg_pids $sampler"
"$WALLPROF" top -b -n 4 -d 1 --format json -- "$WORKLOADS/sleeper" 3000 10 >sleep.out 2>sleep.err
kill $sampler 2>/dev/null
grep '^{' sleep.out >sleep.json
# Its thread "sleeper" is the one that is not the process's main thread.
tid=$(jq -s '[.[].threads[] | select(.tid != .pid and .comm == "sleeper") | .tid] | first // empty' sleep.json)
[ -n "$tid" ] || { fail "top showed the sleeper thread"; cat sleep.out sleep.err; finish; }
# The first interval holds the command's start: the later ones are judged.
rows=$(jq -c --argjson tid "$tid" 'select(.interval > 1) | .threads[] | select(.tid == $tid)' sleep.json)
check_num "the sleeper has a row in each interval after the first" "$(echo "$rows" | grep -c '^{')" -eq 3
# Blocked sleeping whenever it was neither on a CPU nor waiting for one,
# as the kernel measured it: 90% or more on a quiet machine.
from=$(jq -s '[.[] | select(.interval > 1)][0].start_ns' sleep.json)
to=$(jq -s '.[-1].end_ns' sleep.json)
kon=$(kernel sleep-sched.txt "$from" "$to" 2)
kwait=$(kernel sleep-sched.txt "$from" "$to" 3)
slept=$(echo "$rows" | jq -s 'map(.blocked_kind_pct.sleep) | add / length | floor')
echo "# sleeping: top ${slept}%, the kernel's schedstat $((100 - kon - kwait))% (on-CPU ${kon}%, waiting ${kwait}%)"
if [ "$kon" -ge 0 ] && [ "$kwait" -ge 0 ]; then
	check_range "the sleeper is blocked sleeping as long as schedstat says, within 5 points" \
		"$slept" $((100 - kon - kwait - 5)) $((100 - kon - kwait + 5))
else
	skip_reference "the sleeper is blocked sleeping as long as schedstat says" \
		"the sampler read no schedstat near an interval's end (the machine kept it off)"
fi
check "the sleeper waits in sleep_once" sh -c "echo '$rows' | jq -r '.wait_stack[]?' | grep -qx sleep_once"
check "its wait frame is a sleep" sh -c "echo '$rows' | jq -r .wait_frame | grep -q nanosleep"

# 4. A pipe reader attached alone: its writer is outside the recording,
# and top names it as report does (the name the recorder read), not "?".
mkfifo wfifo
(exec -a topwriter sh -c 'while :; do echo x; sleep 0.01; done' >wfifo) &
writer=$!
bg_pids="$bg_pids $writer"
cat <wfifo >/dev/null &
reader=$!
bg_pids="$bg_pids $reader"
sleep 0.3
"$WALLPROF" top -b -n 3 -d 1 --format json -p "$reader" >outw.out 2>outw.err
names=$(grep '^{' outw.out | jq -r --argjson r "$reader" \
	'select(.interval > 1) | .threads[] | select(.tid == $r) | .top_waker.comm // empty' | sort -u)
echo "# the reader's top wakers: $(echo $names)"
check "the writer outside the recording is named (got '$(echo $names)')" \
	sh -c "[ -n '$names' ] && ! echo '$names' | grep -qx '?'"
kill "$writer" "$reader" 2>/dev/null

# Bad input: one sentence, non-zero.
"$WALLPROF" top -b -n x -p 1 >bad.out 2>bad.err
check_num "a bad count is a usage error" $? -eq 2
check_num "said in one line" "$(nlines bad.err)" -le 2
finish
