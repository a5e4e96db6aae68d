# report-errors.sh: `wallprof report` on bad input says so in one clear
# line and fails, never crashes; a damaged recording still gets the report
# of what could be read; a recorded binary that is gone or was replaced
# gives one warning and frames shown as addresses, never misnamed; bad
# option values are usage errors.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

ulimit -c 0 2>/dev/null	# a crash must not leave a core file in the way
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
PARSE="$TESTS_SRCDIR/integration/folded-parse.awk"

# refused WHAT ARGS...: report fails with status 1, one "wallprof: error: "
# line on stderr, nothing on stdout.
refused() {
	_what=$1; shift
	run out err "$WALLPROF" report "$@"
	check_num "$_what: exit status 1" "$rc" -eq 1
	check_num "$_what: exactly one line on stderr" "$(nlines err)" -eq 1
	check "$_what: it starts with 'wallprof: error: '" grep -q '^wallprof: error: ' err
	check_num "$_what: nothing on stdout" "$(nlines out)" -eq 0
}

# Files that are not recordings.
: >empty.data
refused "an empty file" -i empty.data
check "an empty file: says it is not a wallprof data file" grep -q 'not a wallprof data file' err
head -c 4096 /dev/urandom >random.data
refused "4 KiB of random bytes" -i random.data
check "random bytes: says it is not a wallprof data file" grep -q 'not a wallprof data file' err
refused "a missing file" -i missing.data
refused "a missing file (json)" -i missing.data --format json

# A real recording, uncompressed so that a cut falls inside the records;
# the workload runs from a copy, for the missing and changed binary below,
# which report reads to unwind the stack copies: --unwind=report.
cp "$WORKLOADS/wallclock" ./wc || exit 99
run wl.out rec.err "$WALLPROF" record -q --unwind=report --no-compress -o R -- "$tmp/wc" 0.5
check_num "a recording for the tests" "$rc" -eq 0
run good.json good.err "$WALLPROF" report -i R --format json
check_num "report on the intact recording exits 0" "$rc" -eq 0
check_num "report on the intact recording: nothing on stderr" "$(nlines good.err)" -eq 0
run good.folded good.err "$WALLPROF" report -i R --format folded --no-thread-root
check "the intact recording names the workload's functions" grep -q ';wc_spin_leaf ' good.folded
check "the intact recording has no frame outside the mapped files ([unknown])" \
	no_match '\[unknown\]' good.folded

# A newer format version: the u32 after the 8-byte magic.
cp R future.data
printf '\003\000\000\000' | dd of=future.data bs=1 seek=8 conv=notrunc 2>/dev/null
refused "format version 3" -i future.data
check "format version 3: says which version it is and which it reads" \
	grep -Eq 'version 3.*versions 1 to 2' err

# Cut in the middle of a block of records that is not the first (so that
# there is something before the cut): the report of what came before the
# cut, one error line naming the damage, status 1.  Blocks (wallprof-data(5)):
# a 24-byte file header with the meta size at offset 16, the meta, then
# blocks of a 24-byte header {u32 type, u32 flags, u64 size, u64 raw_size}
# and the payload padded to 8 bytes; type 1 holds records.  The blocks of
# the rings' records are those with ROUND records (type 100) in them; a
# block before them holds what record wrote first (trace formats).
size=$(wc -c <R)
cut=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 24 + struct.unpack_from("<Q", d, 16)[0]
blocks = []
while off + 24 <= len(d):
    t, f, s, r = struct.unpack_from("<IIQQ", d, off)
    rec, rounds = off + 24, 0
    while t == 1 and rec + 8 <= off + 24 + s:
        rt, rm, rs = struct.unpack_from("<IHH", d, rec)
        rounds += rt == 100
        rec += max(rs, 8)
    if t == 1 and rounds:
        blocks.append((s, off))
    off += 24 + (s + 7) // 8 * 8
if len(blocks) > 1:
    s, off = max(blocks[1:])
    print(off + 24 + s // 2)
' R)
[ -n "$cut" ] || { echo "# a single block of records: cut in the middle of the file"; cut=$((size / 2)); }
echo "# cutting the $size-byte recording at $cut"
for fmt in text json folded; do
	head -c "$cut" R >half.data
	run half.$fmt half.err "$WALLPROF" report -i half.data --format $fmt
	check_num "cut in the middle, $fmt: exit status 1" "$rc" -eq 1
	check_num "cut in the middle, $fmt: one line on stderr" "$(nlines half.err)" -eq 1
	check "cut in the middle, $fmt: an error about the damage" \
		grep -Eq '^wallprof: error: .*(truncated|corrupt|damage)' half.err
	check_num "cut in the middle, $fmt: still a report" "$(nlines half.$fmt)" -ge 3
done
# The threads named in the part kept (a busy machine may start the spinner
# after the cut) are in the thread table.
"$WALLPROF" report --dump -i half.data 2>/dev/null |
	awk '$2 == "COMM" { split($3, p, "/"); print p[2], $4 }' | sort -u >half.comms
check "cut in the middle: the part kept names threads" [ -s half.comms ]
# (Every thread: by default idle ones are folded into a line per place.)
"$WALLPROF" report -i half.data --threads all >half.all 2>/dev/null
missing=$(while read -r t c; do grep -Eq "^ *$t +$c " half.all || echo "$t/$c"; done <half.comms)
check "cut in the middle, text: the thread table has the threads the part kept names (missing: ${missing:-none})" \
	[ -z "$missing" ]
check "cut in the middle, text: the footer says the file is damaged" grep -q 'damaged file' half.text
check "cut in the middle, json: valid JSON" python3 "$J" check half.json
check "cut in the middle, json: damaged and not complete" \
	[ "$(python3 "$J" header half.json | awk -F '\t' '$1 == "damaged" || $1 == "complete" { printf "%s=%s ", $1, $2 }')" = \
	  "complete=false damaged=true " ]
check "cut in the middle, folded: strict parse" awk -f "$PARSE" half.folded
# Compressed blocks, cut in the middle.
run wl2.out rec.err "$WALLPROF" record -q -o Z -- "$WORKLOADS/wallclock" 0.3
check_num "a compressed recording" "$rc" -eq 0
zsize=$(wc -c <Z)
head -c $((zsize / 2)) Z >zhalf.data
run zhalf.out zhalf.err "$WALLPROF" report -i zhalf.data
check_num "compressed, cut in the middle: exit status 1" "$rc" -eq 1
check_num "compressed, cut in the middle: one line on stderr" "$(nlines zhalf.err)" -eq 1
check "compressed, cut in the middle: an error line" grep -q '^wallprof: error: ' zhalf.err

# Bytes overwritten in the records: any verdict but a crash; JSON printed
# is whole.
crashes='' broken=''
for k in 1 2 3 4 5 6; do
	for pat in '\377' '\000'; do
		cp R dmg.data
		off=$((size * k / 7))
		i=0 bytes=''
		while [ $i -lt 64 ]; do bytes="$bytes$pat"; i=$((i + 1)); done
		# shellcheck disable=SC2059
		printf "$bytes" | dd of=dmg.data bs=1 seek=$off conv=notrunc 2>/dev/null
		run dmg.json dmg.err "$WALLPROF" report -i dmg.data --format json
		[ "$rc" -ge 128 ] && crashes="$crashes $off/$pat:$rc"
		[ "$rc" -le 1 ] && [ -s dmg.json ] && ! python3 "$J" check dmg.json >/dev/null &&
			broken="$broken $off/$pat:$rc"
	done
done
check "64 overwritten bytes at 6 places: no crash (${crashes:-none})" [ -z "$crashes" ]
check "64 overwritten bytes at 6 places: the JSON printed is valid (${broken:-all})" [ -z "$broken" ]
check "no core file" no_file '^core'

# The recorded binary is gone: status 0, one warning naming it, its frames
# shown as module+offset (or addresses), the times unchanged.
jtimes() {
	python3 "$J" threads "$1" | cut -f 2,4-11
}
rm -f wc
run miss.folded miss.err "$WALLPROF" report -i R --format folded --no-thread-root
check_num "binary gone: exit status 0" "$rc" -eq 0
check_num "binary gone: one line on stderr" "$(nlines miss.err)" -eq 1
check "binary gone: a warning naming the file" grep -q "^wallprof: warning: .*'$tmp/wc'" miss.err
check "binary gone: folded strict parse" awk -v thread_root=0 -f "$PARSE" miss.folded
check "binary gone: frames as wc+0x..." grep -Eq '(^|;)wc\+0x[0-9a-f]+(;| )' miss.folded
check "binary gone: no frame named after its functions" no_match '(^|;)(wc_[a-z_]+|main)(_\[i\])?(;| )' miss.folded
# Without the file's CFI the unwinder cannot know the caller of a frame in
# it; a guess at an address that no file is mapped at is no frame at all.
check "binary gone: no made-up frames outside the mapped files ([unknown])" \
	no_match '\[unknown\]' miss.folded
grep '\[unknown\]' miss.folded | head -n 1 | cut -c 1-160 | sed 's/^/# /'
run miss.json miss.err "$WALLPROF" report -i R --format json
check "binary gone: the same times" [ "$(jtimes miss.json)" = "$(jtimes good.json)" ]
run miss.text miss.err "$WALLPROF" report -i R
check "binary gone: the text footer counts a missing file" grep -Eq '\b1 missing\b' miss.text

# Another binary at the same path: one warning that it changed (by build
# id), frames as addresses, not named after the other binary's functions.
cp "$WORKLOADS/spin" ./wc || exit 99
run chg.folded chg.err "$WALLPROF" report -i R --format folded --no-thread-root
check_num "binary changed: exit status 0" "$rc" -eq 0
check_num "binary changed: one line on stderr" "$(nlines chg.err)" -eq 1
check "binary changed: a warning that '$tmp/wc' changed (build id)" \
	grep -Eq "^wallprof: warning: .*'$tmp/wc'.*changed.*build id" chg.err
check "binary changed: folded strict parse" awk -v thread_root=0 -f "$PARSE" chg.folded
check "binary changed: frames as wc+0x..." grep -Eq '(^|;)wc\+0x[0-9a-f]+(;| )' chg.folded
check "binary changed: no frame named after the other binary's functions" \
	no_match '(^|;)(spin_[a-z]+|spinner|main|wc_[a-z_]+)(_\[i\])?(;| )' chg.folded
check "binary changed: no made-up frames outside the mapped files ([unknown])" \
	no_match '\[unknown\]' chg.folded
run chg.json chg.err "$WALLPROF" report -i R --format json
check "binary changed: the same times" [ "$(jtimes chg.json)" = "$(jtimes good.json)" ]
run chg.text chg.err "$WALLPROF" report -i R
check "binary changed: the text footer counts a changed file" grep -Eq 'binaries since recording: 1 changed' chg.text

# Bad option values: a usage error in one line; no output file.
cp "$WORKLOADS/wallclock" ./wc
# one_of VALUE CHOICE...
one_of() {
	_v=$1; shift
	for _c; do [ "$_v" = "$_c" ] && return 0; done
	return 1
}
# usage WHAT ARGS...
usage() {
	_what=$1; shift
	rm -f out.file
	run out err "$WALLPROF" report -i R -o out.file "$@"
	check "$_what: exit status 2 or 1 (got $rc)" one_of "$rc" 2 1
	check_num "$_what: exactly one line on stderr" "$(nlines err)" -eq 1
	check "$_what: it names the option" grep -q -e "$(echo "$1" | sed 's/=.*//')" err
	check_num "$_what: nothing on stdout" "$(nlines out)" -eq 0
	check "$_what: no output file" [ ! -e out.file ]
	head -n 1 err | sed 's/^/# /'
}
usage "--format bogus" --format bogus
usage "--mode x" --mode x
usage "--sort x" --sort x
usage "--unit x" --unit x
usage "--time 5,1" --time 5,1
usage "--top 0" --top 0
usage "--comm '('" --comm '('
usage "--grep '('" --grep '('
usage "--tid x" --tid x
usage "--min-block -5" --min-block -5

finish
