#!/bin/sh
# wallprof with file capabilities (setcap cap_perfmon,cap_sys_ptrace,
# cap_syslog+ep), run by an ordinary user (nobody), attaches only to what
# that user could trace itself: -p and -t of root's process, of a process
# of nobody's that is not dumpable (it runs a program with file
# capabilities) or that runs with another group, and -a are each refused
# in one line that names --any-process, without a data file; with
# --any-process they work.  nobody's own process is recorded with
# off-CPU stacks, and root running the same copy is not restricted.  A
# set-user-ID copy refuses to record at all; report drops the capabilities.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to give a copy of wallprof file capabilities"
command -v setcap >/dev/null 2>&1 || skip "setcap is not installed (Debian package libcap2-bin)"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (Debian package util-linux)"
id nobody >/dev/null 2>&1 || skip "there is no user nobody"
ngid=$(id -g nobody)
as_nobody() { setpriv --reuid=nobody --regid="$ngid" --clear-groups "$@"; }
# For background processes, whose pid $! must be the program's own.
nobody="setpriv --reuid=nobody --regid=$ngid --clear-groups"
as_nobody sh -c 'exit 0' || skip "cannot run commands as nobody"

# nobody runs copies from a directory it can enter: the build tree may be
# in one it cannot, and so may $TMPDIR.
chmod 755 "$tmp"
dir=$tmp
if ! as_nobody test -x "$dir"; then
	dir=$(mktemp -d /tmp/wallprof-attach.XXXXXX) || exit 99
	trap 'cleanup; rm -rf "$dir"' EXIT
	chmod 755 "$dir"
	as_nobody test -x "$dir" || skip "user nobody cannot enter $tmp nor $dir"
fi
cd "$dir" || exit 99
sleep_bin=$(command -v sleep)
cp "$WALLPROF" wallprof-caps && cp "$WORKLOADS/sleeper" sleeper && cp "$sleep_bin" sleep-caps &&
	chmod 755 wallprof-caps sleeper sleep-caps || exit 99
setcap cap_perfmon,cap_sys_ptrace,cap_syslog+ep wallprof-caps 2> setcap.err ||
	skip "setcap failed here (a file system without capabilities?): $(cat setcap.err)"
# A program that gains a capability, which its user cannot trace.
setcap cap_net_raw+p sleep-caps 2> setcap.err || skip "setcap failed here: $(cat setcap.err)"
mkdir data && chmod 1777 data
as_nobody ./sleeper 1 1 >/dev/null || skip "nobody cannot run a copy of the sleeper workload in $dir"
# A nosuid mount ignores file capabilities.
as_nobody ./wallprof-caps record -q -o data/probe.data -- true 2> probe.err
grep -q 'CAP_PERFMON' probe.err && skip "file capabilities are not honoured here (nosuid mount?)"

# Processes nobody could not trace: root's; nobody's own but holding a
# capability, or with root's group, or undumpable (prctl, from python3).
sleep 60 &
root_pid=$!
$nobody ./sleep-caps 60 &
caps_pid=$!
setpriv --reuid=nobody --regid=0 --clear-groups sleep 60 &
group_pid=$!
bg_pids="$root_pid $caps_pid $group_pid"
nodump_pid=
for py in "$(command -v python3)" /usr/bin/python3; do
	[ -n "$py" ] && as_nobody "$py" -c 'import ctypes' 2>/dev/null || continue
	$nobody "$py" -c 'import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)	# PR_SET_DUMPABLE
time.sleep(60)' &
	nodump_pid=$!
	bg_pids="$bg_pids $nodump_pid"
	break
done
[ -n "$nodump_pid" ] || echo "# nobody cannot run python3: no undumpable process of nobody's is tried"
# And one it could: its own.
$nobody "$sleep_bin" 60 &
own_pid=$!
bg_pids="$bg_pids $own_pid"
for p in $root_pid $caps_pid $group_pid $nodump_pid $own_pid; do
	wait_until 50 running "$p" || { fail "process $p started"; finish; }
done
# /proc/PID files belong to root while the process is undumpable.
[ -z "$nodump_pid" ] || wait_until 50 sh -c "[ \"\$(stat -c %u /proc/$nodump_pid/stat)\" = 0 ]" ||
	{ fail "the python3 process made itself undumpable"; finish; }
wait_until 50 grep -q '^CapPrm:.*2000$' "/proc/$caps_pid/status" ||
	{ fail "the process running sleep-caps holds CAP_NET_RAW"; finish; }

n=0
refused() {	# refused NAME ARGS...: nobody's record ARGS is refused, naming --any-process
	_what=$1; shift
	n=$((n + 1))
	# -d: a recording that is not refused still ends (and the check fails).
	run out err as_nobody ./wallprof-caps record -q -o "data/r$n.data" -d 2 "$@"
	check_num "$_what: exit status 1" "$rc" -eq 1
	check_num "$_what: one line on stderr" "$(nlines err)" -eq 1
	check "$_what: an error that names --any-process" \
		grep -q '^wallprof: error: refusing .*--any-process' err
	check "$_what: no data file" [ ! -e "data/r$n.data" ]
	sed 's/^/# /' err
}
refused "-p root's process" -p "$root_pid"
refused "-t root's process" -t "$root_pid"
refused "-p process 1" -p 1
refused "-p nobody's process holding a capability" -p "$caps_pid"
[ -z "$nodump_pid" ] || refused "-p nobody's undumpable process" -p "$nodump_pid"
refused "-p nobody's process with group root" -p "$group_pid"
refused "-p nobody's own process and root's" -p "$own_pid,$root_pid"
refused "-a" -a
refused "-a with a command" -a -- true

# What nobody could trace: its own process, with kernel stacks (the
# sleeper workload sleeps 40 times 100 ms, in a second thread).  The
# switch-out stacks are counted in --dump's raw SAMPLE lines: raw stacks
# (--unwind=report).
$nobody ./sleeper 40 100 > own.out &
sleeper_pid=$!
bg_pids="$bg_pids $sleeper_pid"
wait_until 50 sh -c "[ \"\$(ls /proc/$sleeper_pid/task 2>/dev/null | wc -l)\" -ge 2 ]" ||
	{ fail "the sleeper workload started its thread"; finish; }
run out err as_nobody ./wallprof-caps record -q --unwind=report -o data/own.data -p "$sleeper_pid" -d 1.5
check_num "-p nobody's own process: exit status 0" "$rc" -eq 0
check "-p nobody's own process: no message" [ ! -s err ]
sed 's/^/# /' err
dump data/own.data d
check_num "-p nobody's own process: switch-out stacks (1.5 s of 100 ms sleeps)" \
	"$(switch_samples d)" -ge 5
# And its own command, as before.
run out err as_nobody ./wallprof-caps record -q -o data/cmd.data -- ./sleeper 100 3
check_num "a command of nobody's: exit status 0" "$rc" -eq 0

# --any-process: the capabilities reach everything, as granted.
for what in "-p $root_pid" "-t $root_pid" "-p $caps_pid" "-p $group_pid" "-a"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	run out err as_nobody ./wallprof-caps record -q -o "data/a$n.data" --any-process $what -d 1
	check_num "--any-process $what: exit status 0" "$rc" -eq 0
	check "--any-process $what: the data file" [ -s "data/a$n.data" ]
	sed 's/^/# /' err
done

# Root is not restricted, with the copy or with the build itself.
for wp in ./wallprof-caps "$WALLPROF"; do
	run out err "$wp" record -q -o "data/root-$n.data" -p "$caps_pid,$group_pid" -d 1
	check_num "root, $wp -p nobody's processes: exit status 0" "$rc" -eq 0
	check "root, $wp: no error" no_match 'error' err
	n=$((n + 1))
done

# report needs none of the capabilities, and a crafted recording names the
# paths it opens: it drops them at once.  (Its -o on a FIFO holds it in
# open() until the FIFO is read, long enough to look at it.)
mkfifo -m 666 data/out.fifo || exit 99
chmod 644 "data/root-$((n - 1)).data"
$nobody ./wallprof-caps report -i "data/root-$((n - 1)).data" -o data/out.fifo 2>report.err &
rpid=$!
wait_until 50 test -e "/proc/$rpid/status" || true
sleep 0.3
caps=$(sed -n 's/^Cap\(Prm\|Eff\):[[:space:]]*//p' "/proc/$rpid/status" 2>/dev/null | sort -u)
timeout 10 cat data/out.fifo >/dev/null
wait "$rpid"
sed 's/^/# /' report.err
check "report through the copy runs without its capabilities" [ "$caps" = 0000000000000000 ]
[ "$caps" = 0000000000000000 ] || echo "# CapPrm/CapEff: $caps"

# A set-user-ID copy: record refuses before anything else.
cp "$WALLPROF" wallprof-suid && chmod 4755 wallprof-suid || exit 99
cp "$(command -v id)" id-suid && chmod 4755 id-suid || exit 99
if [ "$(as_nobody ./id-suid -u)" = 0 ]; then
	run out err as_nobody ./wallprof-suid record -q -o data/suid.data -- true
	check_num "set-user-ID copy: exit status 1" "$rc" -eq 1
	check_num "set-user-ID copy: one line on stderr" "$(nlines err)" -eq 1
	check "set-user-ID copy: it says set-user-ID" grep -q '^wallprof: error: .*set-user-ID' err
	check "set-user-ID copy: no data file" [ ! -e data/suid.data ]
	sed 's/^/# /' err
else
	echo "# set-user-ID bits are not honoured here: that part is not tested"
fi
finish
