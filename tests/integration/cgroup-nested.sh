#!/bin/sh
# cgroup-nested.sh: a launched command that makes cgroups inside its own
# (wallprof-PID/sub, as a container runtime or a service manager does) and
# leaves a daemon in one: record removes the whole tree at its end and
# moves the daemon back to wallprof's cgroup; a tree a killed wallprof
# left, with a process in a nested cgroup, is removed by the next
# recording the same way.
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
cg_of() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
# Every recording that starts removes what killed ones left in its parent
# cgroup, the one the tests share: another test's recording would take
# the stale tree made below between its mkdir and its use (seen in CI).
tracing_alone

# --- at the end of the recording -------------------------------------------
# The command makes sub/deeper inside its cgroup, starts a daemon there,
# and prints both.  (Moving into a cgroup is writing to its cgroup.procs.)
cat >cmd.sh <<EOS
cg=\$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$mnt\$cg/sub/deeper" || exit 1
sleep 30 >/dev/null 2>&1 &
echo \$! >"$mnt\$cg/sub/deeper/cgroup.procs" || exit 1
echo "daemon \$!"
sleep 30 >/dev/null 2>&1 &
echo \$! >"$mnt\$cg/sub/cgroup.procs" || exit 1
echo "daemon \$!"
echo "cg \$cg"
EOS
run out.txt rec.err "$WALLPROF" record -q -o A -- sh cmd.sh
check_num "record exits 0" "$rc" -eq 0
cg=$(awk '$1 == "cg" { print $2 }' out.txt)
daemons=$(awk '$1 == "daemon" { print $2 }' out.txt)
bg_pids="$bg_pids $daemons"
echo "# the command ran in $cg; its daemons: $(echo $daemons)"
check "the command ran in a cgroup of its own" test "${cg%/wallprof-*}" = "${own:-}"
check_num "it left two daemons" "$(echo $daemons | wc -w)" -eq 2
check "the nested cgroups are gone" test ! -e "$mnt$cg/sub"
check "its cgroup is gone" test ! -e "$mnt$cg"
for p in $daemons; do
	check "daemon $p is back in wallprof's cgroup" test "$(cg_of "$p")" = "${own:-/}"
	check "daemon $p still runs" running "$p"
	kill "$p" 2>/dev/null
done
check "no warning" no_match '^wallprof: warning' rec.err

# --- at the next start: what a killed wallprof left ------------------------
# Named after a process that is gone, with a daemon two levels down.
stale="$parent/wallprof-2147483645"
mkdir -p "$stale/sub/deeper" || exit 99
sleep 30 >/dev/null 2>&1 &
d=$!
bg_pids="$bg_pids $d"
echo "$d" >"$stale/sub/deeper/cgroup.procs" || exit 99
run out.txt rec.err "$WALLPROF" record -q -o B -- true
check_num "the next recording exits 0" "$rc" -eq 0
check "the stale tree is gone" test ! -e "$stale"
check "its daemon is in wallprof's cgroup" test "$(cg_of "$d")" = "${own:-/}"
check "its daemon still runs" running "$d"
kill "$d" 2>/dev/null
# Left in case the check failed: the daemon is gone, so rmdir works.
rmdir "$stale/sub/deeper" "$stale/sub" "$stale" 2>/dev/null

# A live wallprof's cgroup is never touched: named after a running process.
sleep 30 >/dev/null 2>&1 &
live=$!
bg_pids="$bg_pids $live"
mkdir -p "$parent/wallprof-$live/sub" || exit 99
run out.txt rec.err "$WALLPROF" record -q -o C -- true
check "a running wallprof's cgroup is left alone" test -d "$parent/wallprof-$live/sub"
rmdir "$parent/wallprof-$live/sub" "$parent/wallprof-$live"
kill "$live"
finish
