#!/bin/sh
# The command that wallprof record launches runs with the privileges its
# user has without wallprof: as root it has the very capabilities, groups
# and IDs that the same command has when root's shell runs it.  With
# --user it runs as that user, with exactly that user's real, effective and
# saved user and group IDs and supplementary groups, and CapEff, CapPrm,
# CapInh, CapAmb and CapBnd all zero; --drop-capabilities gives root's
# command none either (chroot then fails, and wallprof says why).
# --keep-capabilities, the default now, is still accepted from root.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
chmod 755 "$tmp"
failed=0

check_caps() {
	name=$1 file=$2
	for f in CapEff CapPrm CapInh CapAmb CapBnd; do
		v=$(sed -n "s/^$f:[[:space:]]*//p" "$file")
		if [ "$v" = "0000000000000000" ]; then
			echo "ok - $name: $f is zero"
		else
			echo "not ok - $name: $f is '$v'"
			failed=1
		fi
	done
}

# check_ids NAME FILE LINE WANT: the real, effective and saved IDs of the
# Uid: or Gid: LINE of a /proc/PID/status FILE are all WANT.
check_ids() {
	got=$(awk -v l="$3:" '$1 == l { print $2, $3, $4 }' "$2")
	if [ "$got" = "$4 $4 $4" ]; then
		echo "ok - $1: real, effective and saved $3 are $4"
	else
		echo "not ok - $1: real, effective and saved $3 are '$got', want $4"
		failed=1
	fi
}

# same NAME A B: the capability sets, user and group IDs and groups of two
# /proc/PID/status files are the same.
same() {
	for f in CapEff CapPrm CapInh CapAmb CapBnd Uid Gid Groups NoNewPrivs; do
		a=$(sed -n "s/^$f:[[:space:]]*//p" "$2")
		b=$(sed -n "s/^$f:[[:space:]]*//p" "$3")
		if [ -n "$a" ] && [ "$a" = "$b" ]; then
			echo "ok - $1: $f is the same as without wallprof ($a)"
		elif [ -z "$a" ] && [ -z "$b" ] && [ "$f" = Groups ]; then
			echo "ok - $1: no supplementary groups, as without wallprof"
		else
			echo "not ok - $1: $f is '$a', without wallprof '$b'"
			failed=1
		fi
	done
}

if [ "$(id -u)" -ne 0 ]; then
	skip "needs root to show what root's command keeps and loses"
fi

# Give wallprof itself supplementary groups and inheritable and ambient
# capabilities: root's command keeps them as root's shell would, and a
# command run with --user or --drop-capabilities must not get them.
wrap=
if command -v setpriv >/dev/null 2>&1 &&
	setpriv --groups 4,27 --inh-caps +net_raw --ambient-caps +net_raw true 2>/dev/null; then
	wrap='setpriv --groups 4,27 --inh-caps +net_raw --ambient-caps +net_raw'
else
	echo "# setpriv cannot add groups and capabilities here: wallprof runs without them"
fi

# As root: what root's shell gives the command, and nothing less.
$wrap sh -c 'cat /proc/self/status' > plain.status
$wrap "$WALLPROF" record -q -o root.data -- sh -c 'cat /proc/self/status' > root.status
rc=$?
[ $rc -eq 0 ] || { echo "not ok - record as root exited $rc"; failed=1; }
same root root.status plain.status
v=$(sed -n 's/^CapEff:[[:space:]]*//p' root.status)
if [ -n "$v" ] && [ "$v" != "0000000000000000" ]; then
	echo "ok - root's command has capabilities ($v)"
else
	echo "not ok - root's command has CapEff '$v'"
	failed=1
fi

# --drop-capabilities: root's command keeps uid 0 and loses them all.
$wrap "$WALLPROF" record -q -o drop.data --drop-capabilities -- sh -c 'cat /proc/self/status' > drop.status
rc=$?
[ $rc -eq 0 ] || { echo "not ok - record --drop-capabilities exited $rc"; failed=1; }
check_caps drop drop.status
check_ids drop drop.status Uid 0

# As another user.
if getent passwd nobody >/dev/null; then
	$wrap "$WALLPROF" record -q -o user.data --user nobody -- sh -c 'id -u; cat /proc/self/status' > user.status
	rc=$?
	[ $rc -eq 0 ] || { echo "not ok - record --user nobody exited $rc"; failed=1; }
	if [ "$(head -n 1 user.status)" = "$(id -u nobody)" ]; then
		echo "ok - --user nobody runs the command as nobody"
	else
		echo "not ok - --user nobody ran as uid '$(head -n 1 user.status)'"
		failed=1
	fi
	check_caps user user.status
	check_ids user user.status Uid "$(id -u nobody)"
	check_ids user user.status Gid "$(id -g nobody)"
	got=$(sed -n 's/^Groups:[[:space:]]*//p' user.status | tr -s ' \t' '\n\n' | sed '/^$/d' | sort -n | tr '\n' ' ')
	want=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		echo "ok - user: supplementary groups are those of nobody ($want)"
	else
		echo "not ok - user: supplementary groups are '$got', want '$want' (id -G nobody)"
		failed=1
	fi
	n=$("$WALLPROF" report --dump -i user.data | grep -c ' COMM .* exec ')
	if [ "$n" -ge 1 ]; then
		echo "ok - the command run as nobody is recorded"
	else
		echo "not ok - no exec COMM record for the command run as nobody"
		failed=1
	fi
fi

# --keep-capabilities, the default, is still accepted and changes nothing.
$wrap "$WALLPROF" record -q -o keep.data --keep-capabilities -- sh -c 'cat /proc/self/status' > keep.status
same keep keep.status plain.status
if command -v chroot >/dev/null 2>&1; then
	if "$WALLPROF" record -q -o chroot.data -- chroot / true 2> chroot.err &&
		[ ! -s chroot.err ]; then
		echo "ok - chroot launched by root runs, quietly"
	else
		echo "not ok - chroot launched by root: $(cat chroot.err)"
		failed=1
	fi
	"$WALLPROF" record -q -o chroot2.data --drop-capabilities -- chroot / true 2> chroot.err
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l < chroot.err)" -eq 2 ] &&
		grep -q "'chroot' failed; it ran without capabilities (--drop-capabilities)" chroot.err; then
		echo "ok - chroot with --drop-capabilities fails, and wallprof says why in one line"
	else
		echo "not ok - chroot with --drop-capabilities: exit $rc, $(cat chroot.err)"
		failed=1
	fi
fi
"$WALLPROF" record -q -o both.data --keep-capabilities --drop-capabilities -- true 2> err
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l < err)" -eq 1 ]; then
	echo "ok - --keep-capabilities with --drop-capabilities: a usage error"
else
	echo "not ok - --keep-capabilities with --drop-capabilities: exit $rc, $(cat err)"
	failed=1
fi
"$WALLPROF" record -q -o keep.data --keep-capabilities --user nobody -- true 2> err
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l < err)" -eq 1 ]; then
	echo "ok - --keep-capabilities with --user: a usage error"
else
	echo "not ok - --keep-capabilities with --user: exit $rc, $(cat err)"
	failed=1
fi
if getent passwd nobody >/dev/null && command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid nobody --regid nogroup --init-groups --inh-caps=-all \
		"$WALLPROF" record -q -o /tmp/never.data --keep-capabilities -- true 2> err
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l < err)" -eq 1 ] && grep -q 'is for root' err; then
		echo "ok - --keep-capabilities from another user: refused in one line"
	else
		echo "not ok - --keep-capabilities from another user: exit $rc, $(cat err)"
		failed=1
	fi
fi

# A bad user name is one line and exit 1, before anything runs.
"$WALLPROF" record -q -o bad.data --user no-such-user-xyz -- true 2> err
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < err)" -eq 1 ] && [ ! -e bad.data ]; then
	echo "ok - unknown --user: one line, exit 1, no file"
else
	echo "not ok - unknown --user: exit $rc, $(wc -l < err) lines, file $(ls bad.data 2>/dev/null)"
	failed=1
fi
[ "$failed" -eq 0 ] || failures=$((failures + 1))
finish
