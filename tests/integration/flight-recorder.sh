# flight-recorder.sh: `wallprof record --flight-recorder SECONDS` keeps only
# the last SECONDS in memory and writes them to a complete file on SIGUSR1
# (fr.0001.data) and at the end (the next number): a file that report
# reads on its own, spanning about SECONDS and ending at the signal, with
# the names and symbolized stacks of threads whose program was mapped long
# before its window; and wallprof's resident memory stays flat over a run
# six times the window.  The same unwinding while recording (--unwind=live).
# A wait that began before the window keeps its stack.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON reports"
J="$TESTS_SRCDIR/integration/report-json.py"

run out err "$WALLPROF" record --flight-recorder 0 -o fr.data -- true
check_num "--flight-recorder 0: exit status 2" "$rc" -eq 2
check_num "--flight-recorder 0: one line on stderr" "$(nlines err)" -eq 1

rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
now_ns() { date +%s%N; }

# 12 s of the wallclock workload with a 2 s window; SIGUSR1 at 6 s.
"$WALLPROF" record -v --flight-recorder 2 -o fr.data -- "$WORKLOADS/wallclock" 12 \
	>wl.out 2>rec.err &
wp=$!
bg_pids="$bg_pids $wp"
: >rss
for s in 1 2 3 4 5 6; do
	sleep 1
	echo "$s $(rss_kib "$wp")" >>rss
done
check "nothing written before the signal" no_file '^fr\.[0-9]' .
sent=$(now_ns)
kill -USR1 "$wp"
have_dump() { [ -f fr.0001.data ]; }
check "SIGUSR1: fr.0001.data appears within 3 s" wait_until 30 have_dump
written=$(now_ns)
echo "# written $(((written - sent) / 1000000)) ms after the signal"
for s in 7 8 9 10 11 12; do
	sleep 1
	k=$(rss_kib "$wp")
	[ -n "$k" ] && echo "$s $k" >>rss
done
wait "$wp"
check_num "record exits 0 (the command's status)" $? -eq 0
sed 's/^/# rss(KiB) at /' rss
# What it keeps stays about a window's worth: at most twice the first
# file's records (which span the window) and 1 MiB, where keeping all 12 s
# would be six times as much.
kept=$(sed -n 's/.*kept at most \([0-9]*\) bytes of records at once.*/\1/p' rec.err)
size=$(stat -c %s fr.0001.data)
echo "# kept at most ${kept:-?} bytes of records, compressed; fr.0001.data is $size bytes"
check_num "it kept at most twice a window's records (and 1 MiB)" "${kept:-999999999}" \
	-le $((2 * size + 1048576))
# Its resident memory: printed; it may rise while a file is written
# (blocks drained meanwhile stay mapped for reuse, up to drain.c's
# SPARE_BLOCKS of 4 MiB) and otherwise stays flat.
first=$(awk '$1 == 3 { print $2 }' rss)
hi=$(awk '$1 >= 3 && $2 > hi { hi = $2 } END { print hi + 0 }' rss)
echo "# resident memory: $first KiB at 3 s, $hi KiB at most after"
# AddressSanitizer keeps freed memory in quarantine (256 MiB): no bound there.
if ldd "$WALLPROF" 2>/dev/null | grep -q libasan; then
	skip_check "resident memory from 3 s to the end grows < 24 MiB" \
		"an AddressSanitizer build keeps freed memory in quarantine"
else
	check_num "resident memory from 3 s to the end grows < 24 MiB" $((hi - first)) -lt 24576
fi
check "the end wrote a second file, fr.0002.data" [ -f fr.0002.data ]
check "the last message names both" grep -q "to 2 files, 'fr.0001.data' to 'fr.0002.data'" rec.err
check "it says how many older records were let go" grep -q 'flight recorder let [0-9]* older records go' rec.err
check_num "no temporary file left" "$(ls -A | grep -c '^\.fr\.' || true)" -eq 0

for f in fr.0001.data fr.0002.data; do
	run json err "$WALLPROF" report -i "$f" --format json
	check_num "$f: report exits 0" "$rc" -eq 0
	check "$f: valid JSON with the documented keys" python3 "$J" check json
	check "$f: the ledger's invariants hold" python3 "$J" invariants json
	python3 "$J" header json >header
	python3 "$J" threads json >threads
	dur=$(awk -F '\t' '$1 == "duration_ns" { print $2 }' header)
	# (The window exactly: what kept blocks hold from before it is the
	# file's start state, however long a block spans.)
	check_range "$f: spans the 2 s window (got $dur ns)" "$dur" 1900000000 2000000000
	# The workload mapped its program 4 s or more before this window.
	"$WALLPROF" report -q -i "$f" --format folded >folded 2>/dev/null
	check "$f: the spinner is named and its stack symbolized" \
		grep -q '^spinner;.*wc_spin_outer;.*wc_spin_leaf' folded
	check "$f: the locker is named and its stack symbolized" grep -q '^locker;.*wc_lock_hold' folded
	for n in spinner sleeper locker reader; do
		wall=$(awk -F '\t' -v n="$n" '$3 == n { print $4; exit }' threads)
		[ "$f" = fr.0001.data ] &&
			check_num "$f: $n is there for the whole window" "${wall:-0}" -eq "$dur"
	done
done
# The first file ends at the signal.
python3 "$J" header "$(
	"$WALLPROF" report -q -i fr.0001.data --format json >j1 && echo j1)" >h1
end=$(awk -F '\t' '$1 == "start_realtime_ns" { s = $2 } $1 == "duration_ns" { d = $2 }
	END { printf "%.0f", s + d }' h1)
d=$((end - sent))
[ "$d" -lt 0 ] && d=$((-d))
check_num "fr.0001.data ends within 100 ms of the signal (off by $((d / 1000000)) ms)" \
	"$d" -lt 100000000
dump fr.0001.data d
check "fr.0001.data: its summary says 'stop dumped'" grep -q ', stop dumped, ' d
dump fr.0002.data d
check "fr.0002.data: its summary says 'stop target-exited'" grep -q ', stop target-exited, ' d

# Unwound while recording: each file begins with the stack table so far
# (stacks first seen long before its window) and names its places.
# At the same time, a wait that began long before the window keeps its
# stack: sleep blocks for 4 s in one call, the window is 1 s, SIGUSR1 at
# 2.5 s, unwound after and while recording.
"$WALLPROF" record -q --unwind=live --flight-recorder 2 -o lfr.data -- "$WORKLOADS/wallclock" 6 \
	>/dev/null 2>lrec.err &
wp=$!
bg_pids="$bg_pids $wp"
for mode in raw live; do
	opt=
	[ "$mode" = live ] && opt=--unwind=live
	# shellcheck disable=SC2086 # no option or one
	"$WALLPROF" record -q $opt --flight-recorder 1 -o "z$mode.data" -- sleep 4 >/dev/null 2>&1 &
	eval "wp_$mode=$!"
	bg_pids="$bg_pids $!"
done
sleep 2.5
kill -USR1 "$wp_raw" "$wp_live"
sleep 1
kill -USR1 "$wp"
wait "$wp"
check_num "live: record exits 0" $? -eq 0
for f in lfr.0001.data lfr.0002.data; do
	run json err "$WALLPROF" report -i "$f" --format json
	check_num "live: $f: report exits 0" "$rc" -eq 0
	check "live: $f: the ledger's invariants hold" python3 "$J" invariants json
	python3 "$J" header json >header
	dur=$(awk -F '\t' '$1 == "duration_ns" { print $2 }' header)
	check_range "live: $f: spans the 2 s window (got $dur ns)" "$dur" 1900000000 2000000000
	dump "$f" d
	check_num "live: $f: its samples are unwound (STACK_SAMPLE records)" \
		"$(count STACK_SAMPLE d)" -gt 100
	check "live: $f: it names its places (a NAMES block)" grep -q '^# place names saved' d
	"$WALLPROF" report -q -i "$f" --format folded >folded 2>/dev/null
	check "live: $f: the spinner is named and its stack symbolized" \
		grep -q '^spinner;.*wc_spin_outer;.*wc_spin_leaf' folded
	check "live: $f: the locker is named and its stack symbolized" grep -q '^locker;.*wc_lock_hold' folded
done

for mode in raw live; do
	eval "wait \$wp_$mode"
	f="z$mode.0001.data"
	check "$mode: SIGUSR1 wrote $f" [ -f "$f" ]
	dump "$f" d
	# (Its state at the file's start, also when the drain's first block,
	# which holds its switch-out, spans the request.)
	check "$mode: $f: the sleeper's THREAD record says it is off-CPU, blocked" \
		grep -q ' THREAD [0-9/]* off-cpu blocked$' d
	"$WALLPROF" report -q -i "$f" --format folded --unit ns >folded 2>/dev/null
	in_stack=$(awk '/clock_nanosleep;.*\[off-cpu:blocked\]/ { n += $NF } END { print n + 0 }' folded)
	all=$(awk '/\[off-cpu:blocked\]/ { n += $NF } END { print n + 0 }' folded)
	check_num "$mode: $f: its blocked time ($in_stack of $all ns) is in clock_nanosleep's stack" \
		$((in_stack * 100)) -ge $((all * 99))
	check_num "$mode: $f: and it has some" "$all" -gt 800000000
done

finish
