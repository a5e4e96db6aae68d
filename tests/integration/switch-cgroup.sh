#!/bin/sh
# switch-cgroup.sh: a launched command runs in a cgroup of its own (under
# wallprof's, in the cgroup v2 hierarchy) on which the switch-out stacks
# are taken per CPU; the cgroup is gone when record ends, what the command
# left running is back in wallprof's cgroup, a cgroup a killed wallprof
# left is removed by the next; the stub that launches the command is not
# in the recording.  Without cgroup v2 (hidden in a mount namespace of its
# own) the per-task events take the same stacks.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "making cgroups needs root"
mnt=$(awk '$(NF - 2) == "cgroup2" || ($(NF - 3) == "-" && $(NF - 2) == "cgroup2") { print $5; exit }' \
	/proc/self/mountinfo)
[ -n "$mnt" ] || skip "no cgroup v2 hierarchy mounted"
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ "$own" = / ] && own=
parent="$mnt$own"
[ -w "$parent" ] || skip "cannot make cgroups in $parent"

# --- the command's cgroup, while it runs and after -------------------------
# A cgroup as a killed wallprof leaves it: named after a process gone.
stale="$parent/wallprof-2147483646"
mkdir "$stale" 2>/dev/null || true
run out.txt rec.err "$WALLPROF" record -q -o A -- sh -c \
	'sed -n "s/^0:://p" /proc/self/cgroup; sleep 5 >/dev/null 2>&1 & echo "left $!"; sleep 0.3'
check_num "record exits 0" "$rc" -eq 0
cg=$(head -n 1 out.txt)
left=$(awk '$1 == "left" { print $2 }' out.txt)
bg_pids="$bg_pids $left"
echo "# the command ran in $cg"
check "the command ran in a cgroup of its own, under wallprof's" \
	test "${cg%/wallprof-*}" = "${own:-}" -a "$cg" != "${own:-/}"
check "its cgroup is gone" test ! -e "$mnt$cg"
check "what it left running is back in wallprof's cgroup" \
	test "$(sed -n 's/^0:://p' "/proc/$left/cgroup" 2>/dev/null)" = "${own:-/}"
check "a cgroup a killed wallprof left is gone" test ! -e "$stale"
kill "$left" 2>/dev/null
rmdir "$stale" 2>/dev/null

# --- switch-out stacks, and no stub ----------------------------------------
# The switch-in checks below count sched_switch samples, which this VM's
# kernel drops while another test traces the scheduler (lib.sh).  They
# and the switch-out stacks are counted in --dump's raw SAMPLE lines: the
# recordings keep raw stacks (--unwind=report).
tracing_alone
run wl.out rec.err "$WALLPROF" record -q --unwind=report -o S -- "$WORKLOADS/sleeper" 30 10
check_num "sleeper: record exits 0" "$rc" -eq 0
dump S d
tid=$(wl_field wl.out sleeper tid)
outs=$(count SWITCH_OUT d "$tid")
check_num "sleeper: a switch-out stack per switch-out ($outs)" "$(switch_samples d "$tid")" -eq "$outs"
check_num "sleeper: no switch-out stack of another process" \
	"$(awk -v e="$(switch_event d)" -v p="$(wl_field wl.out sleeper pid)" \
		'$2 == "SAMPLE" && $6 == e && $3 !~ ("^" p "/") { n++ } END { print n + 0 }' d)" -eq 0
run j.txt j.err "$WALLPROF" report -i S --format folded --mode blocked
check "sleeper: its sleeps have their stack" grep -q 'sleep_once;.*nanosleep' j.txt
# The on-CPU event is on the cgroup too: its switch records are the
# CPU-wide kind, and no record is of the stub (it forked the command).
check "sleeper: the switch records name the other thread (CPU-wide)" \
	grep -Eq ' SWITCH_OUT [0-9]+/[0-9]+ cpu [0-9]+ .*next [0-9]+/[0-9]+' d
pid=$(wl_field wl.out sleeper pid)
# (An exiting task's last switch-out, once it is unhashed, names no one: -1.)
awk -v p="$pid" '$2 ~ /^(SWITCH_IN|SWITCH_OUT|COMM|MMAP2|FORK|EXIT)$/ &&
	$3 !~ ("^(" p "|4294967295)/")' d > others
check_num "sleeper: no switch, task or mapping record of another process" "$(nlines others)" -eq 0
sed 's/^/# another process: /' others | head -n 5
# (The earliest: the dump lists each pass over the rings CPU by CPU.)
awk '$2 == "COMM" { print $1, $3, $4, $5 }' d | sort -n | head -n 1 | cut -d ' ' -f 2- > c1
check "sleeper: the first COMM record is the command's exec" grep -q "^$pid/$pid sleeper exec\$" c1
# Two execs: the first name covers the time before the first exec too.
run e.out e.err "$WALLPROF" record -q -o E -- env "$WORKLOADS/sleeper" 5 2
check_num "env sleeper: record exits 0" "$rc" -eq 0
run t1.txt t1.err "$WALLPROF" report -i E
check "env sleeper: named env, then sleeper, and nothing before" \
	grep -Eq '^ +names: env [0-9.]+[mun]?s -> sleeper [0-9.]+[mun]?s$' t1.txt
grep -Eq '^ +names: env [0-9.]+[mun]?s -> sleeper [0-9.]+[mun]?s$' t1.txt ||
	{ grep -E 'names:|^[0-9]' t1.txt | head -n 8 | sed 's/^/# /'; }

# The command's first samples, before its exec and within it, are the
# cgroup's events' too: it runs the stub's copy of wallprof until the
# exec returns, with registers of that copy while the new image is being
# mapped.  They keep only their kernel part, never a frame at an address
# no file is mapped at.  (At 20 kHz an exec takes tens of samples; three
# runs, so that one surely has some.)
cp "$WORKLOADS/wallclock" ./wc || exit 99
: > x.all
for i in 1 2 3; do
	run x.out x.err "$WALLPROF" record -q -f -F 20000 -o X -- ./wc 0.05
	check_num "exec at 20 kHz, run $i: record exits 0" "$rc" -eq 0
	run x.folded x.err "$WALLPROF" report -i X --format folded --no-thread-root
	cat x.folded >> x.all
done
check "exec at 20 kHz: samples in execve, with their kernel part only" \
	grep -Eq '^entry_SYSCALL_64[^;]*;do_syscall_64[^;]*;__x64_sys_execve' x.all
check "exec at 20 kHz: no frame outside the mapped files ([unknown])" no_match '\[unknown\]' x.all
grep '\[unknown\]' x.all | head -n 2 | cut -c 1-200 | sed 's/^/# /'

# The switch-ins that sched_switch did not time (none is taken in some
# idle tasks' context): counted in JSON, a footer line past 5%.
check "as root, the recording times switches with sched_switch" grep -q '^# event .*switch times' d
if grep -q '^# event .*switch times' d; then
	run js.json js.err "$WALLPROF" report -i S --format json
	python3 - js.json >ins.txt <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
q = d["quality"]
outs = sum(t["voluntary_switches"] + t["involuntary_switches"] for t in d["threads"])
print(q["switch_ins"], q["switch_ins_untimed"], outs, len(d["threads"]))
EOF2
	read -r ins untimed outs nth <ins.txt
	echo "# switch-ins $ins, untimed $untimed; switch-outs $outs in $nth threads"
	# (No other test traces the scheduler now: tracing_alone.)
	check_num "JSON: sched_switch samples counted" "$ins" -gt 0
	check_range "JSON: a switch-in per switch-out (+- a thread's first and last)" \
		"$ins" $((outs - nth)) $((outs + nth))
	set -- $(switch_ins d untimed.txt)
	check_num "JSON: the switch-ins, as counted from the dump" "$ins" -eq "$1"
	check_num "JSON: the untimed switch-ins, as counted from the dump ($2 of $1)" "$untimed" -eq "$2"
	[ "$untimed" -eq "$2" ] || sed 's/^/# /' untimed.txt 2>/dev/null | head -n 5
	run t.txt t.err "$WALLPROF" report -i S
	if [ $((untimed * 20)) -ge "$ins" ]; then
		check "text: the footer says how on-CPU time was anchored, or that it reads short" \
			grep -Eq '^# on-CPU: (anchored to the kernel|[0-9]+ switch-ins are timed by their switch records)' t.txt
	else
		check "text: no footer line under 5%" no_match '^# switch-ins:' t.txt
	fi
fi

# --- without cgroup v2: the threads' own events ----------------------------
if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	run wl2.out rec2.err unshare -m sh -c 'umount -l "$1" && shift && exec "$@"' sh "$mnt" \
		"$WALLPROF" record -q --unwind=report -o N -- "$WORKLOADS/sleeper" 30 10
	check_num "no cgroup v2: record exits 0" "$rc" -eq 0
	dump N d2
	tid=$(wl_field wl2.out sleeper tid)
	outs=$(count SWITCH_OUT d2 "$tid")
	check_num "no cgroup v2: a switch-out stack per switch-out ($outs)" \
		"$(switch_samples d2 "$tid")" -eq "$outs"
	run j2.txt j2.err "$WALLPROF" report -i N --format folded --mode blocked
	check "no cgroup v2: its sleeps have their stack" grep -q 'sleep_once;.*nanosleep' j2.txt
fi
finish
