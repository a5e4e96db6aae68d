# errors.sh: failures are reported in one line, with a non-zero status,
# never a crash, and a failed record leaves no file (not even a temporary
# one) behind.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

ulimit -c 0 2>/dev/null	# a crash must not leave a core file in the way

# error WHAT STATUS OUTPUT COMMAND...: COMMAND fails with STATUS and one
# "wallprof: error: " line on stderr, and OUTPUT (if not '') is not created.
error() {
	_what=$1 _want=$2 _output=$3; shift 3
	run out err "$@"
	check_num "$_what: exit status $_want" "$rc" -eq "$_want"
	check_num "$_what: exactly one line on stderr" "$(nlines err)" -eq 1
	check "$_what: it starts with 'wallprof: error: '" grep -q '^wallprof: error: ' err
	if [ -n "$_output" ]; then
		check "$_what: no output file" [ ! -e "$_output" ]
		check "$_what: no temporary file" no_file '\.wallprof-' "$(dirname "$_output")"
	fi
}

pid=$(no_pid)
error "-p $pid (no such process)" 1 F "$WALLPROF" record -p "$pid" -o F
error "-t $pid (no such thread)" 1 F "$WALLPROF" record -t "$pid" -o F
error "-o under /proc" 1 '' "$WALLPROF" record -o /proc/nope/x.data -- true
error "-o in a missing directory" 1 nodir/x.data "$WALLPROF" record -o nodir/x.data -- true

# An existing file is kept as it is without -f.
echo "keep me" >old.data
error "existing output without -f" 1 '' "$WALLPROF" record -o old.data -- true
check "existing output without -f: the file is untouched" grep -qx 'keep me' old.data
check "existing output without -f: no temporary file" no_file '\.wallprof-'

# Commands that cannot run: 127 not found, 126 not executable (like sh).
error "a command that does not exist" 127 F "$WALLPROF" record -o F -- /nonexistent/cmd
error "a command not on the PATH" 127 F "$WALLPROF" record -o F -- wallprof-no-such-command
echo 'not a program' >notexec
chmod 644 notexec
error "a command that is not executable" 126 F "$WALLPROF" record -o F -- ./notexec

# report on files that are not (complete) recordings.
error "report on /etc/passwd" 1 '' "$WALLPROF" report --dump -i /etc/passwd
check_num "report on /etc/passwd: nothing on stdout" "$(nlines out)" -eq 0
error "report on a missing file" 1 '' "$WALLPROF" report --dump -i missing.data
error "report on a directory" 1 '' "$WALLPROF" report --dump -i .
: >empty.data
error "report on an empty file" 1 '' "$WALLPROF" report --dump -i empty.data

# A real recording, cut short: the records up to the cut, then one error.
run wl.out rec.err "$WALLPROF" record --no-compress -o R -- "$WORKLOADS/sleeper" 20 5
check_num "a recording for the truncation tests" "$rc" -eq 0
size=$(wc -c <R)
head -c $((size / 2)) R >half.data
error "report on a file cut in half" 1 '' "$WALLPROF" report --dump -i half.data
check "cut in half: the header is printed" grep -q '^# wallprof data' out
check "cut in half: no summary" no_match '^# summary' out
head -c $((size - 8)) R >cut.data
error "report on a file missing its last 8 bytes" 1 '' "$WALLPROF" report --dump -i cut.data
check_num "cut short: the records before the cut are printed" "$(count SWITCH_OUT out)" -ge 20
check "cut short: no summary" no_match '^# summary' out

# Cut exactly before the summary block (a recording that did not finish):
# every record, then "# no summary", a warning and status 0.  The summary
# is the last block; find where it starts.
k=8
while [ $k -le 1024 ]; do
	head -c $((size - k)) R >nosum.data
	"$WALLPROF" report --dump -i nosum.data >out 2>err && break
	k=$((k + 8))
done
check "without its summary block: report --dump exits 0" [ $k -le 1024 ]
check "without its summary block: '# no summary: the recording did not finish'" \
	grep -qx '# no summary: the recording did not finish' out
check_num "without its summary block: one line on stderr" "$(nlines err)" -eq 1
check "without its summary block: it is a warning" grep -q '^wallprof: warning: ' err
check_num "without its summary block: every record is printed" "$(count SWITCH_OUT out)" -ge 20

# Damaged files: bytes overwritten here and there.  Any verdict but a crash.
crashes=''
for at in 16 40 64 100 200 400 1000 2000 $((size / 3)) $((size / 2)) $((size - 100)); do
	for fill in '\377' '\000' '\125'; do
		cp R bad.data
		# shellcheck disable=SC2059 # octal escapes in the format
		printf "$fill$fill$fill$fill$fill$fill$fill$fill" |
			dd of=bad.data bs=1 seek="$at" conv=notrunc 2>/dev/null
		"$WALLPROF" report --dump -i bad.data >out 2>err
		s=$?
		[ $s -le 1 ] || crashes="$crashes $at:$fill:$s"
		[ $s -eq 0 ] || grep -q '^wallprof: error: ' err || crashes="$crashes $at:$fill:silent"
	done
done
check "damaged files: exit 0 or 1 with an error line, never a crash (${crashes:-none})" \
	[ -z "$crashes" ]
check "no core file" no_file '^core'

finish
