#!/bin/sh
# disk-full-fit.sh: a full disk costs only what did not fit.  Plain,
# rotating and flight recordings (at the end and on SIGUSR1) into a
# tmpfs of 400 KiB: the file keeps at least 90% of the space there was
# (the block that does not fit is split, records go in small blocks once
# space runs low, and 8 KiB are kept for the closing blocks); its summary
# says it was cut short, and where, and counts what the file holds; report
# shows the cut.  A flight recorder's file is never committed as if
# complete after a write error.  (Before: 24 to 104 KB of the 400 KiB were
# kept, and a flight recorder's file said it was complete.)  The files
# keep the stack copies (--unwind=report), which fill the room within a
# second or two (unwound live, a file grows with the distinct stacks),
# and their samples are counted in --dump's raw SAMPLE lines.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs (running as uid $(id -u))"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (reads the JSON report)"
J=$TESTS_SRCDIR/integration/report-json.py
mkdir M || exit 99
mount -t tmpfs -o size=400k,mode=0755 wallprof-test "$tmp/M" 2>mount.err ||
	skip "cannot mount a tmpfs: $(cat mount.err)"
trap 'umount "$tmp/M" 2>/dev/null; cleanup' EXIT

avail() { stat -f -c '%a %S' M | awk '{ print $1 * $2 }'; }
size() { stat -c %s "$1"; }
# The dump's summary field before WORD ("# summary: 0.1 s, 96 records, ...").
summary() { sed -n "s/^# summary: .* \([0-9][0-9]*\) $2[,]*.*/\1/p" "$1"; }

# any_samples EVENT DUMP: samples of EVENT (all when empty), raw (SAMPLE)
# or unwound live (STACK_SAMPLE, "id N (EVENT)"); not those dated at the
# file's start, which restate the stacks of the threads off-CPU then (a
# flight recorder's file), from before what it counts.
any_samples() {
	awk -v e="$1" '/^# started: / { s = $NF; sub(/\)$/, "", s) }
		$1 == s { next }
		$2 == "SAMPLE" && (e == "" || $6 == e) { n++ }
		$2 == "STACK_SAMPLE" && (e == "" || $8 == "(" e ")") { n++ } END { print n + 0 }' "$2"
}
# was_cut WHAT FILE FREE: the checks for a file a full disk cut short, which
# had FREE bytes of room.
was_cut() {
	_what=$1 _f=$2 _free=$3
	check "$_what: the file is there" [ -f "$_f" ]
	_size=$(size "$_f" 2>/dev/null || echo 0)
	echo "# $_what: $_size bytes of $_free free"
	check_num "$_what: it keeps at least 90% of the room ($_size of $_free bytes)" \
		$((_size * 10)) -ge $((_free * 9))
	dump "$_f" d
	check_num "$_what: report --dump reads it to its end" $? -eq 0
	check "$_what: its summary says it stopped at an error" grep -q '^# ring bytes .*, stop error' d
	check "$_what: and that a full disk cut it short" \
		grep -q '^# cut short at [0-9.]* s by a write error: No space left on device$' d
	# What the summary counts is what the file holds.
	check_num "$_what: the summary's switches are the file's" \
		"$(summary d switches)" -eq $(($(count SWITCH_IN d) + $(count SWITCH_OUT d)))
	check_num "$_what: the summary's samples are the file's cpu-clock samples" \
		"$(summary d samples)" -eq "$(any_samples cpu-clock d)"
	# The other samples: switch-out stacks and wake-ups (switch times
	# count as neither).
	check_num "$_what: the summary's off-CPU stacks and wake-ups are the file's" \
		$(($(summary d off-CPU) + $(summary d wake-ups))) -eq \
		$(($(any_samples '' d) - $(any_samples cpu-clock d) - $(any_samples "$(times_event d)" d)))
	check_num "$_what: records were kept" "$(count SWITCH_OUT d)" -gt 0
	run r.out r.err "$WALLPROF" report -i "$_f"
	check_num "$_what: report exits 0" "$rc" -eq 0
	check "$_what: report's header shows the cut" \
		grep -q '^# cut short at .* by a write error (No space left on device)' r.out
	"$WALLPROF" report -i "$_f" --format json >r.json 2>/dev/null
	python3 "$J" header r.json >h.out
	check "$_what: JSON: cut_short gives the error" \
		grep -q "^cut_short	{'at_ns': [0-9]*, 'error': 'No space left on device'}$" h.out
	python3 "$J" invariants r.json >inv.out
	check "$_what: JSON: every thread adds up and fits the file's span" [ ! -s inv.out ]
	sed 's/^/# /' inv.out | head -n 5
}

# Plain, uncompressed; compressed (some 90 KB a second of spin) with 200
# KiB left.
for how in --no-compress --compress; do
	[ "$how" = --compress ] && { dd if=/dev/zero of=M/filler bs=4k count=50 2>/dev/null || exit 99; }
	free=$(avail)
	# Seconds of its own CPU time: on a busy machine it takes longer, not less room.
	run wl.out rec.err "$WALLPROF" record --unwind=report "$how" -o M/p.data -- "$WORKLOADS/spin" 4 cpu
	check_num "plain $how: record exits 3 (cut short)" "$rc" -eq 3
	check "plain $how: record says where it was cut" \
		grep -q "^wallprof: wrote .* MiB to 'M/p.data', cut short at .* by a write error (No space left on device)$" rec.err
	was_cut "plain $how" M/p.data "$free"
	rm -f M/*
done

# Unwound live: the unwinder writes after the drain, which has handed it
# records the file never got; the summary counts what the file holds (it
# counted the drain's: 3048 switches against the file's 2810, once).  A
# storm's switch records fill the room even live.
free=$(avail)
run wl.out rec.err "$WALLPROF" record --unwind=live --no-compress -o M/l.data -- "$WORKLOADS/pingpong" 4
check_num "live: record exits 3 (cut short)" "$rc" -eq 3
check "live: record says where it was cut" \
	grep -q "^wallprof: wrote .* MiB to 'M/l.data', cut short at .* by a write error (No space left on device)$" rec.err
was_cut "live" M/l.data "$free"
rm -f M/*

# Rotating: the file being written when the disk filled is the last one.
free=$(avail)
run wl.out rec.err "$WALLPROF" record --unwind=report --no-compress --rotate 1 -o M/r.data -- "$WORKLOADS/spin" 2
check_num "rotate: record exits 3" "$rc" -eq 3
last=$(ls M/r.0*.data | tail -n 1)
all=$(cat M/r.0*.data | wc -c)
check_num "rotate: the files keep at least 90% of the room ($all of $free bytes)" \
	$((all * 10)) -ge $((free * 9))
was_cut "rotate, its last file" "$last" "$((free - all + $(size "$last")))"
rm -f M/*

# The flight recorder's file at the end.
free=$(avail)
run wl.out rec.err "$WALLPROF" record --unwind=report --no-compress --flight-recorder 2 -o M/e.data -- \
	"$WORKLOADS/spin" 2
check_num "flight recorder: record exits 3" "$rc" -eq 3
check "flight recorder: record says the file was cut short" \
	grep -q "^wallprof: warning: 'M/e.0001.data' was cut short at .* by a write error (No space left on device)" rec.err
was_cut "flight recorder" M/e.0001.data "$free"
rm -f M/*

# The flight recorder's file on SIGUSR1: cut short, the recording runs on,
# and the file at the end, for which nothing is left, is not made at all.
free=$(avail)
"$WALLPROF" record --unwind=report --no-compress --flight-recorder 2 -o M/u.data -- "$WORKLOADS/spin" 3 \
	>wl.out 2>rec.err &
wp=$!
bg_pids="$bg_pids $wp"
sleep 1.5
kill -USR1 "$wp"
wait "$wp"
rc=$?
check_num "SIGUSR1: record exits 3 (its last file could not be written)" "$rc" -eq 3
check "SIGUSR1: the workload ran to its end" grep -q '^thread spinner ' wl.out
was_cut "SIGUSR1" M/u.0001.data "$free"
check "SIGUSR1: no second file, empty or not" no_file 'u\.0002' M
check "SIGUSR1: no temporary file" no_file 'wallprof-' M
finish
