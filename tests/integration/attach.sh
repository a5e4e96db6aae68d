# attach.sh: record -p PID and -t TID on processes that already run.
# What existed at attach time is synthesized from /proc (THREAD, COMM,
# MMAP2 "synthesized"); threads created afterwards inherit the events and
# appear with a FORK record.  The switch-outs recorded are bounded by the
# kernel's own count of them, read all along (watch_switches), not by what
# the workload would do on an idle machine.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test attach

# start OUT COMMAND...: start a workload in the background; $wl is its pid
# once it printed its "pid N" line (exits the test if it never does).
start() {
	_o=$1; shift
	: >"$_o"	# truncate here: the background shell may truncate it too late
	"$@" >"$_o" 2>&1 &
	wl=$!
	bg_pids="$bg_pids $wl"
	wait_until 100 grep -q '^pid ' "$_o" || { fail "$1 started"; finish; }
	[ "$(sed -n 's/^pid //p' "$_o")" = "$wl" ] || { fail "$1 printed its pid"; finish; }
}

# --- -p on a process that starts a thread after the attach ---------------
start late.out "$WORKLOADS/late-thread" 1.5 0.5
pid=$wl
# A busy loop beside it: as root its on-CPU samples come from events per
# CPU, which sample the loop too; none of them may be kept.
sh -c 'while :; do :; done' &
hog=$!
bg_pids="$bg_pids $hog"
# It stops by itself when the process exits.  (Its samples are counted in
# --dump's raw SAMPLE lines: raw stacks, --unwind=report.)
run rec.out rec.err timeout 60 "$WALLPROF" record --unwind=report -p "$pid" -o F
check_num "-p: record exits 0 when the process exits" "$rc" -eq 0
kill "$hog" 2>/dev/null
wait "$pid"
check_num "-p: the workload exits 0" $? -eq 0
late=$(wl_field late.out late tid)
late_on=$(wl_field late.out late oncpu_ns)
[ -n "$late" ] || { fail "-p: the workload reported its late thread"; cat late.out; finish; }
dump F d
check_num "-p: report --dump exits 0" $? -eq 0
check_num "-p: a THREAD record for the main thread" "$(count THREAD d "$pid")" -eq 1
check "-p: a synthesized COMM for the main thread" \
	grep -Eq "^[0-9.]+ COMM $pid/$pid late-thread cpu -1 synthesized$" d
check_num "-p: synthesized executable MMAP2 of the workload binary" \
	"$(awk '$2 == "MMAP2" && $NF == "synthesized" && / r-x / && $(NF - 3) ~ /\/late-thread$/ \
		{ n++ } END { print n + 0 }' d)" -ge 1
check_num "-p: one FORK record for the late thread $late" \
	"$(awk -v x="$pid/$late" -v p="$pid/$pid" '$2 == "FORK" && $3 == x && $5 == p { n++ }
		END { print n + 0 }' d)" -eq 1
check_num "-p: no THREAD record for the late thread (it is new)" "$(count THREAD d "$late")" -eq 0
n=$(samples cpu-clock d "$late")
want=$(awk -v on="$late_on" 'BEGIN { printf "%d", on * 999 / 1e9 + 0.5 }')
tol=$(awk -v w="$want" 'BEGIN { t = int(w / 10 + 0.5); print t < 3 ? 3 : t }')
check_num "-p: cpu-clock samples of the late thread" "$n" -gt 0
check_range "-p: late thread samples match its CPU time (expect $want)" "$n" \
	$((want - tol)) $((want + tol))
# (A wake-up may come in its context: an interrupt that stopped it.)
check_num "-p: no on-CPU sample of the busy loop beside it ($hog)" \
	"$(samples cpu-clock d "$hog")" -eq 0
if [ "$(id -u)" -eq 0 ]; then
	check "-p as root: on-CPU samples from events per CPU" grep -q '^# flags: .* oncpu-per-cpu' d
	check "-p as root: the threads' records from a dummy event" \
		grep -q '^# event [0-9]*: dummy, task and switch records, ' d
fi
check "-p: nothing was lost" grep -q '^# lost: 0 records, 0 samples' d
check "-p: stopped because the target exited" grep -q ', stop target-exited, ' d

# --- -t on the main thread of a sleeping process, for one second --------
"$WORKLOADS/sleeper" 500 20 >sl.out 2>&1 &
pid=$!
bg_pids="$bg_pids $pid"
two_threads() { [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -eq 2 ]; }
wait_until 50 two_threads || { fail "the sleeper started its thread"; finish; }
worker=$(ls "/proc/$pid/task" | grep -vx "$pid")
run rec.out rec.err timeout 60 "$WALLPROF" record -t "$pid" -d 1 -o T
check_num "-t main thread -d 1: record exits 0" "$rc" -eq 0
dump T d
check_num "-t main thread: report --dump exits 0" $? -eq 0
check "-t main thread: stopped by the duration" grep -q ', stop duration, ' d
secs=$(sed -n 's/^# summary: \([0-9]*\)\..*/\1/p' d)
check_range "-t main thread: recorded about 1 s" "${secs:-x}" 1 3
check_num "-t main thread: a THREAD record for it" "$(count THREAD d "$pid")" -eq 1
check_num "-t main thread: nothing of its other thread" \
	"$(awk -v t="$worker" '$3 ~ ("/" t "$") { n++ } END { print n + 0 }' d)" -eq 0
check "-t main thread: the process still runs" running "$pid"

# -t on the other thread: its sleeps, and nothing of the main thread.
watch_switches "$pid" "$worker" t2.sw
run rec.out rec.err timeout 60 "$WALLPROF" record -t "$worker" -d 1 -o T2
check_num "-t other thread -d 1: record exits 0" "$rc" -eq 0
dump T2 d
check "-t other thread: stopped by the duration" grep -q ', stop duration, ' d
set -- $(kernel_switches t2.sw $(rec_span d "$worker"))
check_range "-t other thread: its switch-outs, as the kernel counted them in the recording's span" \
	"$(span_switch_outs d "$worker")" "$1" "$2"
check_num "-t other thread: some (20 ms sleeps in 1 s)" "$(count SWITCH_OUT d "$worker")" -gt 0
check_num "-t other thread: nothing of the main thread" \
	"$(awk -v t="$pid" '$2 != "THREAD" && $2 != "COMM" && $2 != "MMAP2" &&
		$3 ~ ("/" t "$") { n++ } END { print n + 0 }' d)" -eq 0
kill "$pid"
wait "$pid" 2>/dev/null

# --- -p on a process whose main thread has exited ----------------------
# Such a process lives on as long as another thread does, but its main
# thread shows as a zombie in /proc/PID/stat and /proc/PID/maps is empty:
# liveness and mappings must come from the threads that still run.
start le.out "$WORKLOADS/leader-exit" 0 100
pid=$wl
wait_until 50 exited "$pid"	# the main thread is a zombie now
worker=$(ls "/proc/$pid/task" | grep -vx "$pid")
watch_switches "$pid" "$worker" l.sw
attach_go "$pid" rec.out L
check_num "-p after the main thread exited: record exits 0" "$rc" -eq 0
check "-p after the main thread exited: no error" no_match '^wallprof: error' rec.out.err
check "-p after the main thread exited: recording lasted until the process exited" \
	grep -q '^thread worker ' le.out
wait "$pid"
worker=$(wl_field le.out worker tid)
if dump L d; then
	check_num "-p after the main thread exited: a THREAD record for the worker" \
		"$(count THREAD d "${worker:-x}")" -eq 1
	set -- $(kernel_switches l.sw $(rec_span d "$worker") "$(wl_field le.out worker slices)")
	check_range "-p after the main thread exited: the worker's switch-outs, as the kernel counted them" \
		"$(span_switch_outs d "${worker:-x}")" "$1" "$2"
	check_num "-p after the main thread exited: some" "$(count SWITCH_OUT d "${worker:-x}")" -gt 0
	check_num "-p after the main thread exited: synthesized MMAP2 of the binary" \
		"$(awk '$2 == "MMAP2" && $NF == "synthesized" && $(NF - 3) ~ /\/leader-exit$/ \
			{ n++ } END { print n + 0 }' d)" -ge 1
else
	fail "-p after the main thread exited: report --dump exits 0"
fi

# The main thread exits while recording: the process is still alive.
start le.out "$WORKLOADS/leader-exit" 0.3 100
pid=$wl
two_threads() { [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -eq 2 ]; }
wait_until 50 two_threads
worker=$(ls "/proc/$pid/task" | grep -vx "$pid")
watch_switches "$pid" "$worker" l2.sw
attach_go "$pid" rec.out L2
check_num "-p, main thread exits meanwhile: record exits 0" "$rc" -eq 0
check "-p, main thread exits meanwhile: recording lasted until the process exited" \
	grep -q '^thread worker ' le.out
wait "$pid"
worker=$(wl_field le.out worker tid)
dump L2 d
set -- $(kernel_switches l2.sw $(rec_span d "$worker") "$(wl_field le.out worker slices)")
check_range "-p, main thread exits meanwhile: the worker's switch-outs, as the kernel counted them" \
	"$(span_switch_outs d "${worker:-x}")" "$1" "$2"
check_num "-p, main thread exits meanwhile: some" "$(count SWITCH_OUT d "${worker:-x}")" -gt 0

# --- -p on a process whose children already run ---------------------------
# They are not followed (a server's workers, forked before): record says
# so, naming one and the -p that lists them; not once they are listed.
sh -c 'sleep 5 & sleep 5 & wait' &
parent=$!
bg_pids="$bg_pids $parent"
wait_until 100 sh -c "[ \"\$(pgrep -c -P $parent)\" -eq 2 ]"
kids=$(pgrep -d, -P "$parent")
run kids.out kids.err "$WALLPROF" record -d 0.2 -o K -p "$parent"
check_num "-p, children already running: record exits 0" "$rc" -eq 0
check "-p, children already running: record says they are not followed, and how to list them" \
	grep -Fq "process $parent has 2 child processes already running (" kids.err
check "-p, children already running: the -p that lists them" \
	grep -Fq "which -p does not follow: list them too, as -p \"\$(pgrep -d, -P $parent),$parent\"" kids.err
run kids2.out kids2.err "$WALLPROF" record -d 0.2 -o K2 -p "$kids,$parent"
check_num "-p, children listed too: record exits 0" "$rc" -eq 0
check "-p, children listed too: no word of them" no_match 'child process' kids2.err
kill "$parent" $(echo "$kids" | tr , ' ') 2>/dev/null

finish
