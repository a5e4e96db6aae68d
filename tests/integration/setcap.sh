#!/bin/sh
# wallprof installed with file capabilities (setcap cap_perfmon,cap_sys_ptrace+ep)
# lets an ordinary user record with off-CPU stacks, and the command it
# launches still has no capability at all.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to give a copy of wallprof file capabilities"
command -v setcap >/dev/null 2>&1 || skip "setcap is not installed (Debian package libcap2-bin)"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (Debian package util-linux)"
id nobody >/dev/null 2>&1 || skip "there is no user nobody"
cd "$tmp" || exit 1
chmod 755 "$tmp"
cp "$WALLPROF" ./wallprof-caps && chmod 755 wallprof-caps
setcap cap_perfmon,cap_sys_ptrace+ep wallprof-caps 2> setcap.err ||
	skip "setcap failed here (a file system without capabilities?): $(cat setcap.err)"
mkdir out && chmod 1777 out
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody sh -c 'exit 0' || skip "cannot run commands as nobody"
as_nobody test -x "$WORKLOADS/sleeper" || skip "nobody cannot run $WORKLOADS/sleeper"
# A nosuid mount ignores file capabilities.
as_nobody ./wallprof-caps record -q -o out/probe.data -- true 2> probe.err
grep -q 'CAP_PERFMON' probe.err && skip "file capabilities are not honoured here (nosuid mount?)"

run cmd.out cmd.err as_nobody ./wallprof-caps record -q -o out/F.data -- \
	sh -c 'grep ^Cap /proc/self/status; exec "$0" 5 10' "$WORKLOADS/sleeper"
check_num "record as nobody with file capabilities exits 0" "$rc" -eq 0
check "no warning about missing privileges" no_match 'CAP_PERFMON|paranoid' cmd.err
for f in CapEff CapPrm CapInh CapAmb; do
	v=$(sed -n "s/^$f:[[:space:]]*//p" cmd.out)
	check "the launched command's $f is zero (got '$v')" [ "$v" = 0000000000000000 ]
done
dump out/F.data d
check "the file has off-CPU stacks (kernel-mode sampling allowed)" grep -q 'off-cpu-stacks' d
tid=$(wl_field cmd.out sleeper tid)
check_num "switch-out stacks of the sleeper thread" \
	"$(samples context-switches d "${tid:-x}")" -ge 5
finish
