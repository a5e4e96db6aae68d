# record-disk-full.sh: a full file system cuts a recording short, and the
# data written before is kept: the events stop at the error, the command
# runs on to its end, the file is complete up to its last whole block with
# a summary that says it was cut short and why, record exits 3 (the
# command's own status being 0), and report reads it and says so.  On a
# tmpfs of 4 MiB that the test mounts in its own directory (root only).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs (running as uid $(id -u))"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (reads the JSON report)"
J=$TESTS_SRCDIR/integration/report-json.py
mkdir M || exit 99
mount -t tmpfs -o size=4m,mode=0755 wallprof-test "$tmp/M" 2>mount.err ||
	skip "cannot mount a tmpfs: $(cat mount.err)"
# Unmounted whatever happens, before lib.sh removes the directory.
trap 'umount "$tmp/M" 2>/dev/null; cleanup' EXIT

# cut_short WHAT FILE: the checks every recording cut short by ENOSPC passes.
cut_short() {
	_what=$1 _f=$2
	check_num "$_what: record exits 3 (cut short; the command's status is 0)" "$rc" -eq 3
	check "$_what: the error is 'No space left on device'" \
		grep -q "^wallprof: error: cannot write '$_f': No space left on device" rec.err
	check "$_what: it says the recording stopped and the command runs on" \
		grep -q '^wallprof: warning: the recording stopped at .* and .* runs on$' rec.err
	check "$_what: the last line says where the data is and that it was cut short" \
		grep -q "^wallprof: wrote .* MiB to '$_f', cut short at .* by a write error (No space left on device)$" rec.err
	check "$_what: the workload ran to its end" grep -q '^thread spinner ' wl.out
	check_num "$_what: record took as long as the workload" "$t" -ge 4
	check "$_what: the file is there" [ -f "$_f" ]
	check "$_what: no temporary file left" no_file '\.wallprof-' M
	dump "$_f" d
	check_num "$_what: report --dump reads it to its end (status 0)" $? -eq 0
	check "$_what: no error from report --dump" no_match '^wallprof: error' d.err
	check "$_what: the summary says why it stopped" grep -q '^# ring bytes .*, stop error, exit status 0$' d
	check "$_what: and that it was cut short" \
		grep -q '^# cut short at [0-9.]* s by a write error: No space left on device$' d
	_at=$(sed -n 's/^# cut short at \([0-9]*\)\..*/\1/p' d)
	check_range "$_what: cut short early (at ${_at:-?} s of 4)" "${_at:-9}" 0 3
	check_num "$_what: cpu-clock samples were kept" "$(samples cpu-clock d)" -gt 10
	run r.out r.err "$WALLPROF" report -i "$_f"
	check_num "$_what: report exits 0" "$rc" -eq 0
	check "$_what: the report's header says it was cut short" \
		grep -q '^# cut short at .* by a write error (No space left on device): the figures end' r.out
	check "$_what: report warns about it" grep -q "^wallprof: warning: '$_f' was cut short at " r.err
	# (A disk that fills at once may cut the file before the spinner is made.)
	check "$_what: the workload is reported" grep -Eq ' (spinner|spin) ' r.out
	"$WALLPROF" report -i "$_f" --format json >r.json 2>/dev/null
	python3 "$J" header r.json >h.out
	check "$_what: JSON: header.cut_short gives the error" \
		grep -q "^cut_short	{'at_ns': [0-9]*, 'error': 'No space left on device'}$" h.out
	python3 "$J" invariants r.json >inv.out
	check "$_what: JSON: every thread adds up and fits the recording" [ ! -s inv.out ]
}

# Uncompressed: the file system fills within about half a second.
t0=$(date +%s)
# (At 20 kHz: a busy machine that gives the spinner a twentieth of a CPU
# still fills the 4 MiB in a second, with the stack copies kept:
# --unwind=report.  Unwound live, the file grows with the distinct stacks.)
run wl.out rec.err "$WALLPROF" record --unwind=report -F 20000 --no-compress -o M/out.data -- "$WORKLOADS/spin" 4
t=$(( $(date +%s) - t0 ))
cut_short "--no-compress" M/out.data
rm -f M/out.data

# Compressed, on a file system with 48 KiB left.
dd if=/dev/zero of=M/filler bs=64k 2>/dev/null
truncate -s -48K M/filler || exit 99
t0=$(date +%s)
run wl.out rec.err "$WALLPROF" record --unwind=report -F 20000 -o M/out.data -- "$WORKLOADS/spin" 4
t=$(( $(date +%s) - t0 ))
cut_short "compressed, 48 KiB free" M/out.data

finish
