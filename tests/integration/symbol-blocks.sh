#!/bin/sh
# symbol-blocks.sh: a small file that repeats its symbol blocks (KSYMS,
# JITMAP), each decoding to 256 MiB, costs report, report --dump and
# convert no more than one bounded block: blocks other than records and
# the summary are not decoded in sequence, and a symbol block larger than
# any recording writes is damaged, said once, and costs only its names.
# (Before: 16 KSYMS blocks of 361 KB in all took report 69 s and 790 MB.)
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 not found (measures time and memory)"
MKBOMB=${BUILDDIR:-}/tests/integration/mkbomb
[ -x "$MKBOMB" ] || { echo "ERROR: no mkbomb at '$MKBOMB'"; exit 99; }
# Far above what reading a small file takes, far below one block's 256 MiB
# decoded twice; and time enough for a loaded machine.
LIMIT_KIB=$((160 * 1024)) LIMIT_SECS=20

# measure OUT ERR COMMAND...: run it; rc, secs (whole) and peak_kib.
measure() {
	set -- "$(python3 - "$@" <<'EOS'
import resource, subprocess, sys, time
with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
    t0 = time.time()
    rc = subprocess.call(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=o, stderr=e)
print(rc, int(time.time() - t0), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
EOS
)"
	# shellcheck disable=SC2086
	set -- $1
	rc=$1 secs=$2 peak_kib=$3
}

# within WHAT: the last measured command stayed within the limits.
within() {
	echo "# $1: exit $rc after $secs s, $peak_kib KiB at most"
	check_num "$1: within $LIMIT_SECS s" "$secs" -lt "$LIMIT_SECS"
	check_num "$1: within $LIMIT_KIB KiB" "$peak_kib" -lt "$LIMIT_KIB"
}

for kind in 3:KSYMS:"kernel symbols" 4:JITMAP:"JIT names"; do
	type=${kind%%:*} rest=${kind#*:}
	name=${rest%%:*} what=${rest#*:}
	# 16 blocks of 256 MiB each: zstd makes each about 22 KB.
	"$MKBOMB" "$name.data" 16 262144 8 63 "$type" | sed 's/^/# /'
	measure r.out r.err "$WALLPROF" report -i "$name.data"
	within "$name x16: report"
	check_num "$name x16: report exits 0" "$rc" -eq 0
	check "$name x16: report says the saved $what are damaged" \
		grep -q "^wallprof: warning: the saved $what are damaged" r.err
	check_num "$name x16: once" "$(grep -c "saved $what" r.err)" -eq 1
	measure d.out d.err "$WALLPROF" report --dump -i "$name.data"
	within "$name x16: report --dump"
	check_num "$name x16: report --dump exits 0" "$rc" -eq 0
	measure c.out c.err "$WALLPROF" convert -i "$name.data" -o "$name.conv"
	within "$name x16: convert"
	check_num "$name x16: convert exits 0" "$rc" -eq 0
	check "$name x16: convert says the $what are left out" \
		grep -q "^wallprof: warning: the saved $what of '$name.data' are damaged: left out" c.err
	check "$name x16: the converted file holds no $name block" sh -c \
		"! '$WALLPROF' report --dump -i '$name.conv' 2>/dev/null | grep -q '^# $what saved'"
done

# A recording's own symbol blocks are read as before.
run wl.out rec.err "$WALLPROF" record -q -o R -- "$WORKLOADS/sleeper" 20 5
check_num "a recording: exit 0" "$rc" -eq 0
run d.out d.err "$WALLPROF" report --dump -i R
check "a recording: its kernel symbols are read" grep -Eq '^# kernel symbols saved: [1-9]' d.out
run r.out r.err "$WALLPROF" report -i R
check "a recording: no word of damage" no_match 'damaged' r.err
finish
