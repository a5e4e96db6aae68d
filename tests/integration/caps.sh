#!/bin/sh
# The command that wallprof record launches never inherits wallprof's
# capabilities: CapEff, CapPrm, CapInh and CapAmb of the child are all zero,
# whether it runs as root or, with --user, as another user.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
chmod 755 "$tmp"
failed=0

check_caps() {
	name=$1 file=$2
	for f in CapEff CapPrm CapInh CapAmb; do
		v=$(sed -n "s/^$f:[[:space:]]*//p" "$file")
		if [ "$v" = "0000000000000000" ]; then
			echo "ok - $name: $f is zero"
		else
			echo "not ok - $name: $f is '$v'"
			failed=1
		fi
	done
}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root to show that root's capabilities are not inherited"
	exit 77
fi

# As root: without dropping them the child would have every capability.
"$WALLPROF" record -q -o root.data -- sh -c 'cat /proc/self/status' > root.status
rc=$?
[ $rc -eq 0 ] || { echo "not ok - record as root exited $rc"; failed=1; }
check_caps root root.status
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' root.status)
if [ "$bnd" = "0000000000000000" ]; then
	echo "ok - root: bounding set emptied"
else
	echo "not ok - root: CapBnd is '$bnd'"
	failed=1
fi

# As another user.
if getent passwd nobody >/dev/null; then
	"$WALLPROF" record -q -o user.data --user nobody -- sh -c 'id -u; cat /proc/self/status' > user.status
	rc=$?
	[ $rc -eq 0 ] || { echo "not ok - record --user nobody exited $rc"; failed=1; }
	if [ "$(head -n 1 user.status)" = "$(id -u nobody)" ]; then
		echo "ok - --user nobody runs the command as nobody"
	else
		echo "not ok - --user nobody ran as uid '$(head -n 1 user.status)'"
		failed=1
	fi
	check_caps user user.status
	n=$("$WALLPROF" report --dump -i user.data | grep -c ' COMM .* exec ')
	if [ "$n" -ge 1 ]; then
		echo "ok - the command run as nobody is recorded"
	else
		echo "not ok - no exec COMM record for the command run as nobody"
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
exit $failed
