#!/bin/sh
# wallprof installed with file capabilities (setcap
# cap_perfmon,cap_sys_ptrace,cap_syslog+ep) lets an ordinary user record
# with off-CPU stacks whose kernel frames are named, and the command it
# launches still has no capability at all.  Without cap_syslog, at
# kernel.perf_event_paranoid 2, /proc/kallsyms shows that user only zero
# addresses: record says so in one warning naming what is missing, and
# report does not blame kernel.kptr_restrict when it is 0.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to give a copy of wallprof file capabilities"
command -v setcap >/dev/null 2>&1 || skip "setcap is not installed (Debian package libcap2-bin)"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (Debian package util-linux)"
id nobody >/dev/null 2>&1 || skip "there is no user nobody"
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
as_nobody sh -c 'exit 0' || skip "cannot run commands as nobody"

# nobody runs copies of wallprof and of the workload from a directory it can
# enter: the build tree may be in one it cannot (CI checks out into a
# private mktemp -d directory), and so may $TMPDIR.
chmod 755 "$tmp"
dir=$tmp
if ! as_nobody test -x "$dir"; then
	dir=$(mktemp -d /tmp/wallprof-setcap.XXXXXX) || exit 99
	trap 'cleanup; rm -rf "$dir"' EXIT
	chmod 755 "$dir"
	as_nobody test -x "$dir" || skip "user nobody cannot enter $tmp nor $dir"
fi
cd "$dir" || exit 99
cp "$WALLPROF" wallprof && cp "$WALLPROF" wallprof-caps && cp "$WALLPROF" wallprof-nosyslog &&
	cp "$WORKLOADS/sleeper" sleeper && chmod 755 wallprof wallprof-caps wallprof-nosyslog sleeper ||
	exit 99
setcap cap_perfmon,cap_sys_ptrace,cap_syslog+ep wallprof-caps 2> setcap.err ||
	skip "setcap failed here (a file system without capabilities?): $(cat setcap.err)"
setcap cap_perfmon,cap_sys_ptrace+ep wallprof-nosyslog 2> setcap.err ||
	skip "setcap failed here: $(cat setcap.err)"
mkdir out && chmod 1777 out
as_nobody ./sleeper 1 1 >/dev/null || skip "nobody cannot run a copy of the sleeper workload in $dir"
# A nosuid mount ignores file capabilities.
as_nobody ./wallprof-caps record -q -o out/probe.data -- true 2> probe.err
grep -q 'CAP_PERFMON' probe.err && skip "file capabilities are not honoured here (nosuid mount?)"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
kptr=$(cat /proc/sys/kernel/kptr_restrict)
echo "# kernel.perf_event_paranoid $paranoid, kernel.kptr_restrict $kptr"

# (The switch-out stacks are counted in --dump's raw SAMPLE lines: raw
# stacks, --unwind=report.)
run cmd.out cmd.err as_nobody ./wallprof-caps record -q --unwind=report -o out/F.data -- \
	sh -c 'grep ^Cap /proc/self/status; exec "$0" 5 10' ./sleeper
check_num "record as nobody with file capabilities exits 0" "$rc" -eq 0
check "no warning about missing privileges" no_match 'CAP_PERFMON|CAP_SYSLOG|paranoid|kptr' cmd.err
for f in CapEff CapPrm CapInh CapAmb; do
	v=$(sed -n "s/^$f:[[:space:]]*//p" cmd.out)
	check "the launched command's $f is zero (got '$v')" [ "$v" = 0000000000000000 ]
done
dump out/F.data d
check "the file has off-CPU stacks (kernel-mode sampling allowed)" grep -q 'off-cpu-stacks' d
tid=$(wl_field cmd.out sleeper tid)
check_num "switch-out stacks of the sleeper thread" \
	"$(switch_samples d "${tid:-x}")" -ge 5

# Report as nobody without capabilities: kernel names can only come from
# the symbols that record saved, not from /proc/kallsyms.
if [ "$kptr" -le 1 ]; then
	# (--mode wall: every wait with its stack; the default folds an
	# idle thread's waits to a line, and what it shows of the on-CPU
	# stacks depends on the load.)
	run rep.out rep.err as_nobody ./wallprof report -i out/F.data --mode wall
	check_num "report as nobody exits 0" "$rc" -eq 0
	check "with cap_syslog, report names kernel frames (such as 'schedule [k]')" \
		grep -Eq '^ +[A-Za-z_][A-Za-z0-9_.]* \[k\]$' rep.out
	check "with cap_syslog, no kernel frame is an address" no_match '\[kernel\] 0x' rep.out
	check "with cap_syslog, report does not warn" no_match 'warning' rep.err
else
	echo "# kernel.kptr_restrict is $kptr: no kernel names for anyone, not even with cap_syslog"
fi

# Without cap_syslog: kernel stacks, no symbols, one warning at record time.
run cmd.out cmd.err as_nobody ./wallprof-nosyslog record -q --unwind=report -o out/G.data -- ./sleeper 5 10
check_num "record without cap_syslog exits 0" "$rc" -eq 0
dump out/G.data g
tid=$(wl_field cmd.out sleeper tid)
check_num "without cap_syslog: switch-out stacks of the sleeper thread" \
	"$(switch_samples g "${tid:-x}")" -ge 5
if [ "$kptr" -eq 0 ] && [ "$paranoid" -le 1 ]; then
	echo "# kernel.perf_event_paranoid is $paranoid: everyone sees kernel addresses"
	check "at paranoid $paranoid, no warning" no_match 'warning' cmd.err
else
	check_num "without cap_syslog: one line on stderr" "$(nlines cmd.err)" -eq 1
	check "without cap_syslog: it is a warning that kernel symbols are missing" \
		grep -q '^wallprof: warning: kernel stacks were recorded without their symbols' cmd.err
	if [ "$kptr" -ge 2 ]; then
		check "it names kernel.kptr_restrict $kptr" grep -q "kernel.kptr_restrict is $kptr" cmd.err
	else
		check "it names CAP_SYSLOG" grep -q 'CAP_SYSLOG' cmd.err
		check "it does not blame kernel.kptr_restrict" no_match 'kptr_restrict' cmd.err
	fi
	run rep.out rep.err as_nobody ./wallprof report -i out/G.data --mode wall
	check_num "report as nobody exits 0" "$rc" -eq 0
	check "without cap_syslog, kernel frames are addresses" grep -q '\[kernel\] 0x' rep.out
	check_num "report warns once" "$(grep -c '^wallprof: warning: kernel frames are shown as addresses' rep.err)" -eq 1
	if [ "$kptr" -eq 0 ]; then
		check "report does not blame kernel.kptr_restrict (it is 0)" \
			no_match 'kptr_restrict' rep.err
		check "report names CAP_SYSLOG" grep -q 'CAP_SYSLOG' rep.err
	fi
fi
finish
