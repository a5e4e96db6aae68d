# sigint.sh: stopping a recording.  SIGINT or SIGTERM to wallprof (only)
# ends the launched command, keeps a complete data file and exits 128+sig;
# the file appears under its name only when it is complete.  -d stops
# with status 0; otherwise record exits with the command's status.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

# spin_child PID: wallprof's child once it has exec'd the spin workload.
spin_child() {
	_c=$(pgrep -P "$1" -x spin 2>/dev/null || ps -o pid= -o comm= --ppid "$1" |
		awk '$2 == "spin" { print $1 }')
	[ -n "$_c" ] && child=$_c
}
tmp_files() { ls -A | grep -c '^\.F\.wallprof-' || true; }
one_tmp_file() { [ "$(tmp_files)" -eq 1 ]; }

# stop_with SIG STATUS: record spin, send SIG to wallprof after ~1 s.
# (Its samples are counted in --dump's raw SAMPLE lines: raw stacks,
# --unwind=report.)
stop_with() {
	_sig=$1 _want=$2
	rm -f F
	"$WALLPROF" record --unwind=report -o F -- "$WORKLOADS/spin" 30 >wl.out 2>rec.err &
	wp=$!
	bg_pids="$bg_pids $wp"
	child=''
	if ! wait_until 100 spin_child "$wp"; then
		fail "$_sig: the workload started"
		kill -KILL "$wp"
		return
	fi
	bg_pids="$bg_pids $child"
	sleep 1
	# While recording: only the temporary file exists.
	check "$_sig: while recording, F does not exist yet" [ ! -e F ]
	check_num "$_sig: while recording, one temporary file .F.wallprof-*" "$(tmp_files)" -eq 1
	check "$_sig: still recording after 1 s" running "$wp"

	kill -"$_sig" "$wp"
	_t0=$(date +%s)
	if ! wait_until 100 exited "$wp"; then
		fail "$_sig: wallprof exits within 10 s"
		kill -KILL "$wp"
	fi
	wait "$wp"
	_rc=$?
	_t=$(( $(date +%s) - _t0 ))
	check_num "$_sig: wallprof exits with status $_want" "$_rc" -eq "$_want"
	# (The command would spin for 30 s: a busy machine may take a few
	# seconds to write the file, never that.)
	check_num "$_sig: wallprof exits without waiting for the command, seconds" "$_t" -lt 20
	check "$_sig: the workload ($child) is gone" exited "$child"
	check "$_sig: F exists" [ -f F ]
	check_num "$_sig: no temporary file left" "$(tmp_files)" -eq 0
	check_num "$_sig: no error message" "$(grep -c '^wallprof: error' rec.err)" -eq 0
	dump F d
	check_num "$_sig: report --dump exits 0" $? -eq 0
	check "$_sig: the summary says 'stop signal'" grep -q '^# ring bytes .*, stop signal, ' d
	check_num "$_sig: cpu-clock samples recorded" "$(samples cpu-clock d)" -gt 10
}
stop_with INT 130
stop_with TERM 143

# -d: stops after the duration with status 0 and ends the command.
rm -f F
t0=$(date +%s)
run wl.out rec.err timeout 60 "$WALLPROF" record -d 1 -o F -- "$WORKLOADS/spin" 30
t=$(( $(date +%s) - t0 ))
check_num "-d 1: record exits 0" "$rc" -eq 0
check_num "-d 1: record does not wait for the command (30 s), seconds" "$t" -lt 20
dump F d
check "-d 1: the recording spans 1 s (and less than 2)" grep -Eq '^# summary: 1\.[0-9]+ s,' d
child=$(awk '$2 == "COMM" && $4 == "spin" && $5 == "exec" { sub("/.*", "", $3); print $3; exit }' d)
check "-d 1: the workload (${child:-?}) is gone" exited "${child:-0}"
check "-d 1: the summary says 'stop duration'" grep -q '^# ring bytes .*, stop duration, ' d
check_num "-d 1: no temporary file left" "$(tmp_files)" -eq 0

# -p: a signal ends the recording, never the process it attached to.
"$WORKLOADS/sleeper" 1000 10 >sl.out 2>&1 &
target=$!
bg_pids="$bg_pids $target"
rm -f F
"$WALLPROF" record -p "$target" -o F >/dev/null 2>rec.err &
wp=$!
bg_pids="$bg_pids $wp"
wait_until 100 one_tmp_file || fail "-p: wallprof created its temporary file"
sleep 0.5
kill -INT "$wp"
wait_until 100 exited "$wp" || kill -KILL "$wp"
wait "$wp"
check_num "-p, INT: wallprof exits with status 130" $? -eq 130
check "-p, INT: the attached process still runs" running "$target"
dump F d
check "-p, INT: the summary says 'stop signal'" grep -q '^# ring bytes .*, stop signal, ' d
kill "$target"

# The command's exit status, like time(1).
run wl.out rec.err "$WALLPROF" record -o E1 -- sh -c 'exit 3'
check_num "record exits with the command's status 3" "$rc" -eq 3
run wl.out rec.err "$WALLPROF" record -o E2 -- sh -c 'kill -USR1 $$'
check_num "record exits 128+10 when the command dies of SIGUSR1" "$rc" -eq 138
dump E2 d
check "a command that dies of a signal leaves a complete file" grep -q '^# summary' d

finish
