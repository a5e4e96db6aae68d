# lib.sh: helpers for the integration tests (POSIX sh; sourced, not run).
#
# The scripts run wallprof against the real kernel.  Each one sources this
# file and makes its assertions with check/check_num/check_range, each an
# "ok - NAME" or "not ok - NAME" line of TAP (automake's TAP driver counts
# them); the plan ("1..N") is printed when the script exits, after the
# lines it printed, so that no assertion is lost, not even one made in a
# subshell.  `finish` exits 0 when every assertion held, 1 otherwise.
# `skip REASON` skips the rest of the script, `skip_check NAME REASON`
# one check: both are counted and printed as TAP skips (in CI, where
# CI=true, a script that called `core_test` fails instead: its checks are
# the ones the project is for).
#
# Environment (from tests/Makefile.inc): WALLPROF, WORKLOADS, TESTS_SRCDIR.

set -u
LC_ALL=C
export LC_ALL

for v in WALLPROF WORKLOADS TESTS_SRCDIR; do
	eval "[ -n \"\${$v:-}\" ]" || { echo "ERROR: \$$v is not set"; exit 99; }
done
[ -x "$WALLPROF" ] || { echo "ERROR: no wallprof binary at '$WALLPROF'"; exit 99; }

failures=0
bg_pids=''		# background processes to kill on exit
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-test.XXXXXX") || exit 99
# The script's standard output, until it exits: the plan is counted from it.
tap_out="$tmp.tap"
tap_skip_all=''
exec 9>&1 >"$tap_out"
tap_close() {
	[ -n "$tap_out" ] || return 0
	exec >&9
	cat "$tap_out"
	if [ -n "$tap_skip_all" ] && ! grep -Eq '^(not )?ok( |$)' "$tap_out"; then
		echo "1..0 # SKIP $tap_skip_all"
	else
		echo "1..$(grep -Ec '^(not )?ok( |$)' "$tap_out")"
	fi
	rm -f "$tap_out"
	tap_out=''
}
# (WP_TEST_KEEP=1: a failed test's files stay, for a look at what it recorded.)
cleanup() {
	for p in $bg_pids; do running "$p" && kill -KILL "$p" 2>/dev/null; done
	tap_close
	if [ "${WP_TEST_KEEP:-}" = 1 ] && [ "$failures" -gt 0 ]; then
		echo "# its files are kept in $tmp" >&2
		return
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
cd "$tmp" || exit 99

core=''
# core_test WHAT: this script checks what wallprof is for (accuracy,
# wake-ups, attach, unwinding): in CI, any skip of it is a failure.
core_test() { core=$1; }
in_ci() { [ "${CI:-}" = true ]; }

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; failures=$((failures + 1)); }
fail() { notok "$@"; }
# skip REASON: the rest of the script is skipped (counted, with its reason).
skip() {
	if [ -n "$core" ] && in_ci; then
		notok "skipped in CI, where a $core check may not be: $*"
		finish
	fi
	if grep -Eq '^(not )?ok( |$)' "$tap_out"; then
		echo "ok - the rest of the script # SKIP $*"
	else
		tap_skip_all="$*"
	fi
	finish
}
# skip_check NAME REASON: one check skipped, counted with its reason;
# only where the test proved that this machine cannot make the events.
skip_check() {
	if [ -n "$core" ] && in_ci; then
		notok "$1: skipped in CI, where a $core check may not be: $2"
	else
		echo "ok - $1 # SKIP $2"
	fi
}
# skip_reference NAME REASON: a comparison that the machine cannot give
# what it needs, as the test shows: another tool's figures (perf's) when
# that tool failed or was disturbed, or events the kernel dropped, as the
# recording itself says.  Counted and printed, never a core skip: the
# checks against the kernel's own figures remain the test.
skip_reference() { echo "ok - $1 # SKIP $2"; }
finish() {
	[ "$failures" -eq 0 ] && exit 0
	echo "# $failures assertion(s) failed"
	exit 1
}

# check NAME COMMAND...: the command's success is the assertion.
check() {
	_name=$1; shift
	if "$@"; then ok "$_name"; else notok "$_name"; fi
}

# check_num NAME VALUE OP EXPECTED (OP as for test: -eq -ge -le -gt -lt -ne)
check_num() {
	if test "$2" "$3" "$4" 2>/dev/null; then ok "$1 ($2 $3 $4)"
	else notok "$1 (got '$2', want $3 $4)"; fi
}

# check_range NAME VALUE LO HI: LO <= VALUE <= HI, integers.
check_range() {
	if [ "$2" -ge "$3" ] 2>/dev/null && [ "$2" -le "$4" ]; then ok "$1 ($2 in [$3, $4])"
	else notok "$1 (got '$2', want [$3, $4])"; fi
}

# no_match ERE FILE: no line of FILE matches (for check).
no_match() { ! grep -Eq -e "$1" "$2"; }

# no_file ERE [DIR]: no file name in DIR (default .) matches (for check).
no_file() { ! ls -A "${2:-.}" 2>/dev/null | grep -Eq -e "$1"; }

# nlines FILE: lines in FILE, counting an unterminated last line.
nlines() { grep -c '' "$1" 2>/dev/null || true; }

# Every test records the scheduler's tracepoints (wake-ups are on by
# default as root), and while two tracers record them this VM's kernel
# (Linux 6.18) emits no sched_waking for many wake-ups, for both.  So each
# test holds a shared lock (which the tests of one run share) until it ends, and tracing_alone makes it exclusive: a test
# that compares wake-ups with the kernel's, or with perf's, waits until
# no other test runs, and none starts until it ends.  A second lock, taken
# on the way in by both kinds, keeps the shared ones from starving the
# exclusive one: once it waits, the tests that start after it wait for
# it.  The locks are files of the build directory, so that two builds'
# runs never wait for each other.  (No-ops without flock.)
# A process a test left behind keeps its lock: after 10 minutes the
# waiting test goes on, and says so (tools/check names such processes).
# shellcheck source=tests/lock.sh
. "$TESTS_SRCDIR/lock.sh"
tracing_alone() {
	command -v flock >/dev/null 2>&1 || return 0
	flock -u 8
	flock -x -w 600 7 || echo "# not alone: another test still held the queue after 10 minutes"
	flock -x -w 600 8 || echo "# not alone: another test still held the lock after 10 minutes"
	flock -u 7
}

# pg_nobody: a PostgreSQL server run by the user nobody from a cluster
# made in $tmp/db, listening on a Unix socket in $tmp/sock only, stopped
# when the test ends: its postmaster's pid in pm, its programs' directory
# in bin; as_nobody CMD... runs a command as nobody.  Skips the test where
# that cannot be done.
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
pg_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run PostgreSQL as another user (running as uid $(id -u))"
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -n 1)
	[ -n "$bin" ] && [ -x "$bin/initdb" ] || skip "PostgreSQL is not installed (Debian package postgresql-15)"
	id nobody >/dev/null 2>&1 || skip "there is no user nobody"
	command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (Debian package util-linux)"
	chmod 755 "$tmp"
	mkdir db sock && chown nobody db sock || exit 99
	as_nobody "$bin/initdb" -N -A trust -D "$tmp/db" > initdb.out 2>&1 ||
		skip "initdb fails here: $(tail -n 3 initdb.out)"
	trap 'pg_nobody_stop; cleanup' EXIT
	as_nobody "$bin/pg_ctl" -D "$tmp/db" -o "-k $tmp/sock -c listen_addresses=" -l "$tmp/sock/pg.log" \
		-w -t 60 start > start.out 2>&1 ||
		skip "PostgreSQL does not start here: $(tail -n 3 start.out sock/pg.log 2>&1)"
	pm=$(head -n 1 db/postmaster.pid)
}
pg_nobody_stop() { as_nobody "$bin/pg_ctl" -D "$tmp/db" -m immediate -w stop >/dev/null 2>&1; }

# attach_go PID OUT DATA: record -p PID into DATA in the background (its
# status into OUT.rc); once it holds perf events (it has attached), send
# the workload PID its SIGUSR1 (leader-exit, spawner), and wait for the recording.
attach_go() {
	(timeout 60 "$WALLPROF" record -p "$1" -o "$3" <"/dev/null" >"$2" 2>"$2.err"
	 echo $? >"$2.rc") &
	_sub=$!
	_pat="wallprof record -p $1 -o $3\$"
	# Attached to every thread: record starts its first threads of its
	# own (the exit listener, the drain) only once each thread of the
	# process has all its events.  A thread made before then, while
	# record still lists and attaches, may be missed when it lives
	# shorter than a listing takes.
	has_events() {
		for _p in $(pgrep -f "$_pat" 2>/dev/null); do
			ls -l "/proc/$_p/fd" 2>/dev/null | grep -q 'perf_event' &&
				[ "$(ls "/proc/$_p/task" 2>/dev/null | wc -l)" -ge 2 ] && return 0
		done
		return 1
	}
	wait_until 600 has_events || fail "record -p $1 opened its events within 60 s"
	kill -USR1 "$1"
	wait "$_sub"
	rc=$(cat "$2.rc")
}

# foreign_tracers [PID...]: the processes other than these that hold perf
# events now (another profiler or tracer, outside this run's tests), as
# "PID:NAME ..."; none is an empty line.  While another tracer records the
# scheduler's tracepoints, this kernel drops sched_waking for both.
foreign_tracers() {
	for _d in /proc/[0-9]*; do
		_p=${_d#/proc/}
		case " $* $$ " in *" $_p "*) continue ;; esac
		ls -l "$_d/fd" 2>/dev/null | grep -q 'anon_inode:\[perf_event\]' || continue
		printf '%s:%s ' "$_p" "$(cat "$_d/comm" 2>/dev/null)"
	done
	echo
}

# run OUT ERR COMMAND...: run with stdin from /dev/null; status in $rc.
run() {
	_out=$1 _err=$2; shift 2
	"$@" <"/dev/null" >"$_out" 2>"$_err"
	rc=$?
}

# dump DATA OUT: `wallprof report --dump -i DATA > OUT 2> OUT.err`; status.
dump() { "$WALLPROF" report --dump -i "$1" >"$2" 2>"$2.err"; }

# count TYPE DUMP [TID]: records of TYPE (SWITCH_OUT, FORK, ...), of TID if given.
count() {
	awk -v t="$1" -v tid="${3:-}" '$2 == t && (tid == "" || $3 ~ ("/" tid "$")) { n++ }
		END { print n + 0 }' "$2"
}

# samples EVENT DUMP [TID]: SAMPLE lines of EVENT (cpu-clock, context-switches).
samples() {
	awk -v e="$1" -v tid="${3:-}" '$2 == "SAMPLE" && $6 == e &&
		(tid == "" || $3 ~ ("/" tid "$")) { n++ } END { print n + 0 }' "$2"
}

# dump_switches DUMP TID: from the raw switch records of TID in a dump,
# counted here and not by report: "VOLUNTARY INVOLUNTARY OFF_NS", the
# switch-outs (blocked, preempted) and the time between each switch-out
# and the switch-in after it (from its FORK to its first switch-in too).
dump_switches() {
	awk -v tid="$2" '($2 == "SWITCH_OUT" || $2 == "SWITCH_IN" || $2 == "FORK") &&
		$3 ~ ("/" tid "$")' "$1" | sort -n -k1,1 |
	awk '{ split($1, t, "."); ns = t[1] * 1000000000 + t[2] }
		$2 == "FORK" { out = ns; next }
		$2 == "SWITCH_OUT" { if ($6 == "preempted") inv++; else vol++; out = ns; next }
		$2 == "SWITCH_IN" && out != "" { off += ns - out; out = "" }
		END { printf "%d %d %.0f\n", vol, inv, off }'
}

# watch_switches PID TID OUT: count the thread's switch-outs as the kernel
# does, in the background, into OUT (ctxsw.py) until it is gone.
watch_switches() {
	python3 "$TESTS_SRCDIR/integration/ctxsw.py" "$1" "$2" "$3" &
	bg_pids="$bg_pids $!"
	wait_until 50 test -s "$3"
}

# kernel_switches OUT FROM_NS TO_NS [FINAL]: "LO HI", the switch-outs the
# kernel counted (watch_switches) surely inside [FROM_NS, TO_NS], and at
# most around it; past the last reading, the thread's end is taken to
# make at most one more (its exit), or, FINAL given (its schedstat run
# count, which it read itself as it ended), FINAL and one more: a loaded
# machine may keep the watcher from reading for a while before the end.
kernel_switches() {
	awk -v a="$2" -v b="$3" -v final="${4:-0}" '{ t0[NR] = $1; t1[NR] = $2; c[NR] = $3 } END {
		lo0 = -1; lo1 = -1; hi0 = 0; hi1 = -1
		for (i = 1; i <= NR; i++) {
			if (t0[i] >= a && lo0 < 0) lo0 = c[i]
			if (t1[i] <= b) lo1 = c[i]
			if (t1[i] <= a) hi0 = c[i]
			if (t0[i] >= b && hi1 < 0) hi1 = c[i]
		}
		if (hi1 < 0) hi1 = (final > c[NR] ? final : c[NR]) + 1
		lo = lo0 >= 0 && lo1 > lo0 ? lo1 - lo0 : 0
		printf "%d %d\n", lo, hi1 - hi0 }' "$1"
}

# rec_span DUMP TID: "FROM_NS TO_NS", the span in which a recording holds
# every switch of TID, on the monotonic clock: from TID's first switch
# record, or, attached, from its ATTACH record if later (its events are
# opened CPU by CPU: those on one CPU record switches before the next
# CPU's exist), to the last record of all, or TID's EXIT if it has one
# (the kernel counts the switch of its exit, after its events are gone).
rec_span() {
	awk -v tid="$2" '$1 ~ /^[0-9]+\.[0-9]+$/ { split($1, y, "."); v = y[1] * 1000000000 + y[2]
		if (v > to) to = v
		if ($2 == "ATTACH" && $3 == tid) att = v
		if ($2 == "EXIT" && $3 ~ ("/" tid "$")) gone = v
		if ($2 ~ /^SWITCH_(IN|OUT)$/ && $3 ~ ("/" tid "$") && (from == "" || v < from)) from = v }
		END { if (att > from) from = att; if (gone && gone < to) to = gone
			printf "%.0f %.0f\n", from, to }' "$1"
}

# span_switch_outs DUMP TID: TID's SWITCH_OUT records in its rec_span.
span_switch_outs() {
	_from=$(rec_span "$1" "$2" | cut -d ' ' -f 1)
	awk -v tid="$2" -v from="${_from:-0}" '$2 == "SWITCH_OUT" && $3 ~ ("/" tid "$") {
		split($1, y, "."); if (y[1] * 1000000000 + y[2] >= from) n++ }
		END { print n + 0 }' "$1"
}

# switch_event DUMP: the switch-out stacks' event as the dump's SAMPLE
# lines name it (a tracepoint used twice gets its index: "NAME#N").
switch_event() {
	awk '/^# event [0-9]+: .*, switch-out stacks, / {
		n = $3; sub(/:$/, "", n); e = $4; sub(/,$/, "", e); print e; exit }' "$1" >"$1.sw"
	_e=$(cat "$1.sw")
	if [ -n "$_e" ] && [ "$(grep -c "^# event [0-9]*: $_e, " "$1")" -gt 1 ]; then
		_e="$_e#$(awk '/^# event [0-9]+: .*, switch-out stacks, / {
			n = $3; sub(/:$/, "", n); print n; exit }' "$1")"
	fi
	rm -f "$1.sw"
	echo "${_e:-none}"
}

# switch_ins DUMP [WHY]: "ALL UNTIMED", counted here from the dump: the
# switch-ins of known threads from the first sched_switch sample on (the
# "switch times" event), and those with no such sample on their CPU in
# the 2 ms before them (each sample times one switch-in).  WHY: a file
# to write each untimed one to, with its CPU's last sample.
switch_ins() {
	_e=$(times_event "$1")
	grep -E '^[0-9]+\.[0-9]+ ' "$1" | sort -n -k1,1 | awk -v ev="${_e:-none}" -v why="${2:-/dev/null}" '
		function ns(s,  x) { split(s, x, "."); return x[1] * 1000000000 + x[2] }
		# (A sched_switch sample is taken in the context of the task
		# switched out: it times the switch-in that names that task
		# as prev, not one after a switch to a task outside the
		# recording, which wrote none.)
		$2 == "SAMPLE" && $6 == ev { at[$5] = ns($1); from[$5] = $3; seen = 1; next }
		# (A thread preempted on its exit path runs again after its
		# EXIT: a recording with CPU-wide switch records, as a
		# cgroup recording has, keeps it until its last switch-out,
		# the first one not preempted.)
		$2 == "EXIT" { exiting[$3] = 1; next }
		$2 == "FORK" { delete exiting[$3]; delete gone[$3]; next }
		$2 == "SWITCH_OUT" && ($3 in exiting) && $6 != "preempted" { gone[$3] = 1; next }
		$2 == "SWITCH_IN" && seen && $3 !~ /\/4294967295$/ && !($3 in gone) {
			t = ns($1); ins++
			# (The last switch of a task on its way out names no prev:
			# the kernel has let go of its pid by then, and its EXIT
			# may be in no ring of the cgroup events: the last sample of the CPU,
			# taken in the context of that task just before, times
			# the switch all the same.  A process on its way out may
			# still name its pid, not its tid: "PID/4294967295".)
			p = $7; sub(/\/.*/, "/", p)
			if (($5 in at) && (from[$5] == $7 || $7 ~ /^4294967295\// ||
			    ($7 ~ /\/4294967295$/ && index(from[$5], p) == 1)) &&
			    t >= at[$5] && t - at[$5] <= 2000000) delete at[$5]
			else {
				untimed++
				printf "untimed: %s; its CPU'"'"'s last sample: %.0f ns from %s\n", $0,
					($5 in at) ? at[$5] : -1, ($5 in from) ? from[$5] : "-" > why
			}
		}
		END { printf "%d %d\n", ins, untimed }'
}

# times_event DUMP: the name of the switch times' event as the dump's
# sample lines give it ("none" without one).
times_event() {
	_n=$(awk '/^# event [0-9]+: .*, switch times, / { n = $3; sub(/:$/, "", n); print n; exit }' "$1")
	_e=$(awk -v n="${_n:-x}" '$1 == "#" && $2 == "event" && $3 == n ":" { e = $4; sub(/,$/, "", e); print e }' "$1")
	[ -n "$_e" ] && [ "$(grep -c "^# event [0-9]*: $_e, " "$1")" -gt 1 ] && _e="$_e#$_n"
	echo "${_e:-none}"
}

# switch_samples DUMP [TID]: SAMPLE lines with a switch-out stack.
switch_samples() { samples "$(switch_event "$1")" "$1" "${2:-}"; }

# record_attached DATA ERR PID [OPTION...]: wallprof record -p PID in the
# background ($rec), into DATA (its messages in ERR), returning once it
# has attached: its hidden file exists, and a moment more.
record_attached() {
	_data=$1 _err=$2 _pid=$3
	shift 3
	"$WALLPROF" record -o "$_data" -p "$_pid" "$@" >"$_data.rout" 2>"$_err" &
	rec=$!
	bg_pids="$bg_pids $rec"
	_hidden="^\\.$(printf '%s' "$_data" | sed 's/[.]/\\./g')\\.wallprof-"
	wait_until 200 sh -c "ls -A . | grep -q '$_hidden'" ||
		echo "# the recording's file did not appear in 20 s"
	sleep 0.5
}

# busy_ok LABEL WL.OUT REPORT.JSON: every client and server thread the
# workload reported is in the report with its schedstat on-CPU time within
# max(2%, 5 ms), and no thread's on-CPU time exceeds its wall time.
busy_ok() {
	python3 - "$2" "$3" "$1" <<'EOF'
import json, sys
truth = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 8 and f[0] == "thread" and f[1] in ("client", "server", "spinner"):
        truth[int(f[5])] = (f[1], int(f[7]))
rep = json.load(open(sys.argv[2]))
threads = {t["tid"]: t for t in rep["threads"]}
label = sys.argv[3]
bad = 0
if not truth:
    print(f"not ok - {label}: the workload reported its threads")
    sys.exit(1)
for tid, (name, want) in sorted(truth.items()):
    t = threads.get(tid)
    if t is None:
        print(f"not ok - {label}: {name} {tid} is in the report")
        bad += 1
        continue
    got = t["on_cpu_ns"]
    tol = max(want // 50, 5000000)
    ok = abs(got - want) <= tol
    bad += not ok
    print(f"{'ok' if ok else 'not ok'} - {label}: {name} {tid} on-CPU {got} vs schedstat "
          f"{want} (within {tol}; {t.get('on_cpu_source')}, moved {t.get('on_cpu_moved_ns')})")
over = [t for t in rep["threads"] if t["on_cpu_ns"] > t["wall_ns"]]
print(f"{'not ok' if over else 'ok'} - {label}: no thread's on-CPU time exceeds its wall time")
sys.exit(1 if bad or over else 0)
EOF
}

# wl_field OUT THREAD KEY: from a workload's "thread NAME pid P tid T oncpu_ns N
# ..." line in OUT, the value after KEY (pid, tid, oncpu_ns, sleeps, ...).
wl_field() {
	awk -v n="$2" -v k="$3" '$1 == "thread" && $2 == n {
		for (i = 3; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"
}

# max A B: the larger of two integers.
max() { [ "$1" -gt "$2" ] && echo "$1" || echo "$2"; }

# steal_mark, then steal_ns: the CPU time the hypervisor took from this VM
# since the mark (all CPUs).  The kernel leaves it out of a thread's
# schedstat on-CPU time (CONFIG_PARAVIRT_TIME_ACCOUNTING), but it passes
# between the thread's switch records all the same.
steal_ticks() { awk '$1 == "cpu" { print $9 + 0 }' /proc/stat; }
steal_mark() { _steal0=$(steal_ticks); }
steal_ns() {
	_hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
	echo $((($(steal_ticks) - ${_steal0:-0}) * (1000000000 / _hz)))
}

# oncpu_ok LABEL GOT WANT [STEAL_NS [SLICES]]: an on-CPU time GOT is
# schedstat's WANT within 2%, or, for a thread that ran little, within 2 ms
# and 50 us for each of its SLICES (schedstat's third field: each
# switch-in record comes some 20-40 us after the kernel began counting the
# thread on its CPU, and the thread runs a little past its own reading:
# the report line, its exit); above it also within the steal time.  The
# floor is a fraction of what a thread of some milliseconds uses, so that
# a report of nothing, or of half, fails.
oncpu_ok() {
	_tol=$(max $(($3 / 50)) $((2000000 + ${5:-0} * 50000)))
	if [ $(($2 - $3)) -gt 0 ]; then
		check_num "$1: on-CPU $2 vs schedstat $3: diff <= $_tol + steal ${4:-0}" \
			$(($2 - $3)) -le $((_tol + ${4:-0}))
	else
		check_num "$1: on-CPU $2 vs schedstat $3: -diff <= $_tol" $(($3 - $2)) -le "$_tol"
	fi
}

# wait_until TENTHS COMMAND...: poll every 0.1 s until COMMAND succeeds.
# Arguments are expanded once: test a changing state through a function.
wait_until() {
	_n=$1; shift
	while ! "$@"; do
		[ "$_n" -le 0 ] && return 1
		_n=$((_n - 1))
		sleep 0.1
	done
}

# exited PID: the process is gone or a zombie (waiting to be reaped).
exited() {
	_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -z "$_st" ] || [ "$_st" = Z ]
}
running() { ! exited "$1"; }

# no_pid: a process id that is not in use.
no_pid() {
	_p=999999
	while [ -e "/proc/$_p" ]; do _p=$((_p + 1)); done
	echo "$_p"
}

# record_wallclock SECONDS: record the wallclock workload into F (its output
# in wl.out) and check that it reported each of its threads.
record_wallclock() {
	run wl.out rec.err "$WALLPROF" record -q -o F -- "$WORKLOADS/wallclock" "$1"
	check_num "record exits 0" "$rc" -eq 0
	for _n in spinner sleeper locker locker2 reader; do
		[ -n "$(wl_field wl.out "$_n" tid)" ] && continue
		fail "the workload reported its $_n thread"
		cat wl.out rec.err
		finish
	done
}
