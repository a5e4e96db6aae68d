#!/bin/sh
# report-open.sh: report opens regular files only.  A FIFO, a directory or
# a device given with -i is refused in one line, at once.  A recording that
# names a FIFO or a device where a mapped file was (the file replaced after
# recording, or the name in the file changed), or whose file's debuglink
# leads to one, is reported without waiting on it or reading from it: the
# file counts as missing, with one warning that names it.  Every report
# runs under timeout, since what went wrong before was a hang.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v timeout >/dev/null 2>&1 || skip "no timeout(1) (Debian package coreutils)"
command -v python3 >/dev/null 2>&1 || skip "no python3 to edit a recording"
T='timeout 20'

# --- -i names something that is not a regular file -----------------------
mkfifo fifo && mkdir dir || exit 99
for input in fifo dir /dev/zero /dev/null; do
	case $input in
	fifo) kind='a FIFO' ;;
	dir) kind='a directory' ;;
	*) kind='a character device' ;;
	esac
	for mode in --format=text --dump; do
		run out err $T "$WALLPROF" report -i "$input" "$mode"
		check_num "-i $input $mode: exit status 1, no hang" "$rc" -eq 1
		check_num "-i $input $mode: one line on stderr" "$(nlines err)" -eq 1
		check "-i $input $mode: says it is $kind" \
			grep -q "^wallprof: error: '$input' is $kind, not a regular file$" err
		check_num "-i $input $mode: nothing on stdout" "$(nlines out)" -eq 0
	done
done

# --- the mapped file replaced after recording ------------------------------
# The workload runs from a copy, by a relative path, so that its absolute
# path is in the MMAP2 records only (not in the recorded command line).
# The recordings keep the stack copies (--unwind=report): report opens the
# mapped files and their debug files to unwind and name them.
mkdir lib && cp "$WORKLOADS/spin" lib/wl || exit 99
run wl.out rec.err "$WALLPROF" record -q --unwind=report --no-compress -o R -- ./lib/wl 0.3
check_num "record the workload" "$rc" -eq 0
run good.folded good.err $T "$WALLPROF" report -i R --format folded
check_num "intact: exit status 0" "$rc" -eq 0
check "intact: the workload's functions are named" grep -q ';spin_outer;' good.folded

# replaced KIND WHAT: report R as text and folded; the file counts as
# missing, in one warning that says what it is.
replaced() {
	for fmt in text folded; do
		run "r.$fmt" r.err $T "$WALLPROF" report -i R --format "$fmt"
		check_num "$2, $fmt: exit status 0, no hang" "$rc" -eq 0
		check_num "$2, $fmt: one line on stderr" "$(nlines r.err)" -eq 1
		check "$2, $fmt: a warning that it is $1" grep -q \
			"^wallprof: warning: '$tmp/lib/wl' is $1, not a regular file; its frames are shown as addresses$" \
			r.err
	done
	check "$2: counted missing" grep -q ', 1 missing' r.text
	check "$2: frames as wl+0x..." grep -Eq '(^|;)wl\+0x[0-9a-f]+(;| )' r.folded
}
rm lib/wl && mkfifo lib/wl || exit 99
replaced 'a FIFO' "the file replaced by a FIFO"
rm lib/wl && ln -s /dev/zero lib/wl || exit 99
replaced 'a character device' "the file replaced by a link to /dev/zero"
rm lib/wl && mkdir lib/wl || exit 99
replaced 'a directory' "the file replaced by a directory"

# --- the recording names a device ------------------------------------------
# Uncompressed blocks carry no checksum: the path in the MMAP2 records can
# be rewritten in place (a shorter name, padded with NULs).
rename() {
	python3 -c '
import sys
old, new = sys.argv[1].encode() + b"\0", sys.argv[2].encode() + b"\0"
d = open("R", "rb").read()
n = d.count(old)
d = d.replace(old, new + b"\0" * (len(old) - len(new)))
open(sys.argv[3], "wb").write(d)
sys.exit(0 if n else 1)' "$tmp/lib/wl" "$1" "$2"
}
check "the recording renamed to /dev/zero" rename /dev/zero Z
run z.text z.err $T "$WALLPROF" report -i Z
check_num "/dev/zero named in the file: exit status 0" "$rc" -eq 0
check "/dev/zero named in the file: one warning, a character device" grep -q \
	"^wallprof: warning: '/dev/zero' is a character device, not a regular file;" z.err
check_num "/dev/zero named in the file: nothing else on stderr" "$(nlines z.err)" -eq 1
# /dev/stdin is here a FIFO that has a writer and no data: it must not be
# opened (a read from it would wait for ever).
check "the recording renamed to /dev/stdin" rename /dev/stdin S
mkfifo in || exit 99
exec 3<>in
$T "$WALLPROF" report -i S <in >s.text 2>s.err
rc=$?
exec 3>&-
check_num "/dev/stdin named in the file: exit status 0, no read" "$rc" -eq 0
check "/dev/stdin named in the file: one warning, a FIFO" grep -q \
	"^wallprof: warning: '/dev/stdin' is a FIFO, not a regular file;" s.err

# --- the separate debug file replaced --------------------------------------
if command -v objcopy >/dev/null 2>&1; then
	mkdir dl dl/.debug && cp "$WORKLOADS/spin" dl/wl || exit 99
	objcopy --only-keep-debug dl/wl dl/.debug/wl.debug &&
		objcopy --strip-debug dl/wl &&
		objcopy --add-gnu-debuglink=dl/.debug/wl.debug dl/wl || exit 99
	run wl.out rec.err "$WALLPROF" record -q --unwind=report -o D -- ./dl/wl 0.3
	check_num "record the workload with a debuglink" "$rc" -eq 0
	# The first place searched is beside the file: a FIFO, then a device.
	for bad in fifo zero; do
		rm -f dl/wl.debug
		if [ $bad = fifo ]; then mkfifo dl/wl.debug; else ln -s /dev/zero dl/wl.debug; fi
		run d.folded d.err $T "$WALLPROF" report -i D --format folded --mode on
		check_num "a $bad where the debug file is looked for first: exit status 0" \
			"$rc" -eq 0
		check_num "a $bad where the debug file is looked for first: nothing on stderr" \
			"$(nlines d.err)" -eq 0
		check "a $bad there: the debug file found next, inline frames named" \
			grep -q ';spin_outer;spin_middle_\[i\];spin_leaf' d.folded
	done
else
	skip_check "debug files found by build id, then next to the file" "no objcopy (Debian package binutils)"
fi
finish
