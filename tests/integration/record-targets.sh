# record-targets.sh: what -o may replace.  Only a regular file, and only
# one this user may replace: a device node, a FIFO, a symbolic link or a
# directory is refused, with or without -f, before the command runs, and
# left as it was; one that appears during the recording is left alone too,
# and the data kept under a printed name.  In a sticky directory, another
# user's file is refused up front; one that another user creates during
# the recording keeps the data under a printed name.  Root only: device
# nodes (made here, never under /dev) and a second user.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to make device nodes and switch users (running as uid $(id -u))"

# refused WHAT OUTPUT TEST [-f]: record to OUTPUT is refused in one line
# before the command runs, and OUTPUT still passes test TEST (-c, -p, ...).
refused() {
	_what=$1 _to=$2 _test=$3; shift 3
	rm -f ran
	run out err "$WALLPROF" record "$@" -o "$_to" -- touch ran
	check_num "$_what: exit status 1" "$rc" -eq 1
	check_num "$_what: one line" "$(nlines err)" -eq 1
	check "$_what: it says only regular files are written" \
		grep -q "^wallprof: error: '$_to' is .*; wallprof writes its data only to regular files (choose another name with -o)$" err
	check "$_what: the command did not run" [ ! -e ran ]
	check "$_what: '$_to' is as it was" [ "$_test" "$_to" ]
	check "$_what: no temporary file" no_file '\.wallprof-'
}

mknod null c 1 3 || skip "cannot make a device node here"
for f in '' -f; do
	refused "a character device ${f:-without -f}" null -c $f
	check "a character device ${f:-without -f}: it says what it is" \
		grep -q "'null' is a character device;" err
done
check "the device node still works" sh -c 'echo x >null && [ ! -s null ]'
mknod blk b 7 255 || exit 99
refused "a block device with -f" blk -b -f
mkfifo fifo || exit 99
refused "a FIFO with -f" fifo -p -f
echo keep >target
ln -s target link || exit 99
refused "a symbolic link with -f" link -h -f
check "a symbolic link with -f: its target is untouched" grep -qx keep target

# A device node that appears under the name during the recording: left
# alone, even with -f, and the data kept under a printed name.
"$WALLPROF" record -f -o late -- sleep 1 >out 2>err &
wp=$!
bg_pids="$bg_pids $wp"
has_tmp() { ls -A | grep -q '^\.late\.wallprof-'; }
wait_until 50 has_tmp || fail "the recording created its temporary file"
mknod late c 1 3
wait "$wp"
check_num "a device node made meanwhile: exit status 3" $? -eq 3
check "a device node made meanwhile: it is still a device node" [ -c late ]
kept=$(sed -n "s/^wallprof: error: 'late' became a character device during the recording and is left as it is; the recording is kept as '\(late\.wallprof-......\)'$/\1/p" err)
check "a device node made meanwhile: the error names where the data is (${kept:-none})" [ -n "$kept" ]
check "a device node made meanwhile: the data is complete" \
	sh -c '"$WALLPROF" report --dump -i "$1" | grep -q "^# summary"' sh "${kept:-none}"
sed 's/^/# /' err

# Another user's file in a sticky directory.
command -v setpriv >/dev/null 2>&1 || skip "setpriv not found (util-linux)"
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
grp=$(id -gn nobody)
as_nobody() { setpriv --reuid=nobody --regid="$grp" --clear-groups "$@"; }
chmod 755 "$tmp"
mkdir -m 1777 st bin && cp "$WALLPROF" bin/ || exit 99
WP=$tmp/bin/wallprof
echo root >st/rootfile
run out err as_nobody "$WP" record -f -o st/rootfile -- touch st/ran
check_num "-f over another user's file in a sticky directory: exit status 1" "$rc" -eq 1
check_num "-f over another user's file in a sticky directory: one line" "$(nlines err)" -eq 1
check "-f over another user's file in a sticky directory: it says why" \
	grep -q "^wallprof: error: cannot replace 'st/rootfile': it belongs to another user, in a directory with the sticky bit; choose another name with -o$" err
check "-f over another user's file in a sticky directory: the command did not run" [ ! -e st/ran ]
check "-f over another user's file in a sticky directory: the file is untouched" grep -qx root st/rootfile

# The same file made by root during the recording: the rename at the end
# fails (EPERM), and the data is kept.  Recording as nobody needs
# kernel.perf_event_paranoid <= 2.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 4)
[ "$paranoid" -le 2 ] || skip "nobody may not record at paranoid level $paranoid"
as_nobody "$WP" record -f -o st/late -- sleep 1 >out 2>err &
wp=$!
bg_pids="$bg_pids $wp"
has_tmp() { ls -A st | grep -q '^\.late\.wallprof-'; }
wait_until 50 has_tmp || fail "nobody's recording created its temporary file"
echo root >st/late
wait "$wp"
check_num "another user's file made meanwhile: exit status 3" $? -eq 3
check "another user's file made meanwhile: it is untouched" grep -qx root st/late
kept=$(sed -n "s/^wallprof: error: cannot replace 'st\/late': Operation not permitted; the recording is kept as '\(st\/late\.wallprof-......\)'$/\1/p" err)
check "another user's file made meanwhile: the error names where the data is (${kept:-none})" [ -n "$kept" ]
check "another user's file made meanwhile: the data is complete" \
	sh -c '"$WALLPROF" report --dump -i "$1" | grep -q "^# summary"' sh "${kept:-none}"
sed 's/^/# /' err

finish
