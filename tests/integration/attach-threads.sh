# attach-threads.sh: attaching (-p, -t) to processes that keep making short
# threads records what launching the same workload records: every thread,
# exact on-CPU time (against the kernel's schedstat and getrusage) and on-CPU
# samples at the rate asked for, in the main thread too.  Checks the cases
# that attaching got wrong: a thread whose short-lived children took its
# sampling state with them when they exited, threads created by threads not
# yet attached, and a thread named twice with -t.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test attach

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

# start OUT COMMAND...: start a workload in the background; $wl is its pid
# once it printed its "pid N" line.
start() {
	_o=$1; shift
	: >"$_o"
	"$@" >"$_o" 2>&1 &
	wl=$!
	bg_pids="$bg_pids $wl"
	wait_until 100 grep -q '^pid ' "$_o" || { fail "$1 started"; finish; }
}

# figures DATA NAME: report DATA as JSON into NAME.json and its threads into
# NAME.threads (see report-json.py), checking the invariants.
figures() {
	run "$2.json" "$2.err" "$WALLPROF" report -i "$1" --format json --top 1
	check_num "$2: report exits 0" "$rc" -eq 0
	python3 "$J" threads "$2.json" >"$2.threads"
	python3 "$J" invariants "$2.json" >"$2.inv"
	check "$2: the invariants of any recording hold" [ ! -s "$2.inv" ]
	head -n 3 "$2.inv"
}
# col NAME AWK-CONDITION COLUMN: sum of COLUMN over the threads matching.
col() {
	awk -F '\t' "$2 { s += \$$3 } END { printf \"%.0f\\n\", s }" "$1.threads"
}
period=$(( 1000000000 / 999 ))

# --- join: the main thread spins 200 us, then makes a thread and joins it --
for how in launch attach; do
	if [ "$how" = launch ]; then
		run j.out rec.err "$WALLPROF" record -q -o j-$how.data -- \
			"$WORKLOADS/spawner" join 1.5 200 0
	else
		# (It starts its work once record has attached: attach_go.)
		start j.out "$WORKLOADS/spawner" join 1.5 200 -1
		attach_go "$wl" rec.out j-$how.data
		wait "$wl"
	fi
	check_num "join, $how: record exits 0" "$rc" -eq 0
	pid=$(wl_field j.out main pid)
	[ -n "$pid" ] || { fail "join, $how: the workload reported"; cat j.out rec.err; finish; }
	figures j-$how.data j-$how
	main_on=$(col j-$how "\$2 == $pid" 5)
	main_samples=$(col j-$how "\$2 == $pid" 11)
	# Attached: what the process ran before its work began (its start,
	# the wait for the attach) is left out of the ground truth.
	truth=$(($(wl_field j.out main oncpu_ns) - $(wl_field j.out main go_oncpu_ns)))
	# (Attached, its wait for the signal after the attach is recorded
	# too: some tens of 10 ms sleeps, up to 2 ms of CPU.)
	check_range "join, $how: main's on-CPU time is schedstat's ($truth), within 10% (and 2 ms)" \
		"$main_on" $((truth * 9 / 10)) $((truth * 11 / 10 + 2000000))
	# (Samples lost in the rings, which the recording counts, are not
	# wallprof's to deliver: then this says nothing.)
	lost=$(python3 -c 'import json, sys; h = json.load(open(sys.argv[1]))["header"]
print(h["lost_records"] + h["lost_samples"])' j-$how.json 2>/dev/null)
	share=$((main_samples * period * 100 / (main_on + 1)))
	# Attached with events per CPU, a tick that falls in a switch goes
	# to the thread switched in: main gains the ticks of its short
	# threads' exits and loses those of its own switches (82% to 117%
	# seen): 70 to 130%.
	least=85 most=110
	"$WALLPROF" report --dump -i j-$how.data 2>/dev/null | grep -q '^# flags: .* oncpu-per-cpu' &&
		least=70 most=130
	if [ "${lost:-0}" -gt 0 ] && [ "$share" -lt "$least" ]; then
		skip_reference "join, $how: main's samples are its on-CPU time / period, percent" \
			"$share%, but the recording lost $lost records or samples"
	else
		check_range "join, $how: main's samples are its on-CPU time / period, percent" \
			"$share" "$least" "$most"
	fi
	# Each of the thousands of threads has a few microseconds of exit path
	# after its EXIT record, outside its window by design.
	all_on=$(col j-$how "\$1 == $pid" 5)
	check_range "join, $how: the process's on-CPU time is getrusage's, percent" \
		$((all_on * 100 / ($(wl_field j.out main cpu_ns) - $(wl_field j.out main go_cpu_ns)))) 80 110
	# Attached with events per CPU, the CPU's clock samples the short
	# threads too (a thread's own clock gave them none: each ran less
	# than a period).
	if [ "$most" = 130 ]; then
		short=$((($(col j-$how "\$1 == $pid" 11) - main_samples) * period * 100 /
			(all_on - main_on + 1)))
		if [ "${lost:-0}" -gt 0 ] && [ "$short" -lt 70 ]; then
			skip_reference "join, attach per CPU: the short threads' samples are their on-CPU time / period, percent" \
				"$short%, but the recording lost $lost records or samples"
		else
			check_range "join, attach per CPU: the short threads' samples are their on-CPU time / period, percent" \
				"$short" 70 130
		fi
	fi
	check_num "join, $how: one thread per thread made, and main" \
		"$(awk -F '\t' -v p="$pid" '$1 == p' j-$how.threads | wc -l)" \
		-eq $(($(wl_field j.out main threads) + 1))
done

# The spawned threads run 200 us each, less than a sampling period: the
# footer says how much on-CPU time has no sample, and why; a higher -F
# samples them.
run t.out t.err "$WALLPROF" report -i j-launch.data
check "join: the footer says the short threads' time has no samples, and what to do" \
	grep -Eq '^# samples: [0-9.]+% of on-CPU time has none, in [0-9]+ threads .*a higher -F' t.out
run j.out rec.err "$WALLPROF" record -q -F 20000 -o j-fast.data -- \
	"$WORKLOADS/spawner" join 1 200 0
run t.out t.err "$WALLPROF" report -i j-fast.data --format json --top 1
share=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
on = sum(t["on_cpu_ns"] for t in d["threads"])
print(int(100 * d["quality"]["unsampled_on_cpu_ns"] / max(on, 1)))' t.out)
check_num "join at -F 20000: on-CPU time without samples, percent" "${share:-100}" -le 5

# --- chain: each thread spins, makes the next and exits ------------------
# Attached while the chain runs, each thread lives 200 us: a thread listed
# is often gone, and its successor made, before its events are set up.
for how in launch attach; do
	if [ "$how" = launch ]; then
		run c.out rec.err "$WALLPROF" record -q -o c-$how.data -- \
			"$WORKLOADS/spawner" chain 1.5 200 0
	else
		start c.out "$WORKLOADS/spawner" chain 2.5 200 0
		sleep 0.5
		run rec.out rec.err timeout 60 "$WALLPROF" record -q -p "$wl" -o c-$how.data
		wait "$wl"
	fi
	check_num "chain, $how: record exits 0" "$rc" -eq 0
	pid=$(wl_field c.out main pid)
	[ -n "$pid" ] || { fail "chain, $how: the workload reported"; cat c.out rec.err; finish; }
	figures c-$how.data c-$how
	# Followed without a break: the chain's threads, in order of creation,
	# each start at most a few milliseconds after the one before ends, from
	# the start of the recording to its end.  (How many there are depends
	# on how fast the chain runs while it is recorded.)
	follow=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
h = d["header"]
ch = sorted((t for t in d["threads"] if t["pid"] == int(sys.argv[2]) and t["tid"] != t["pid"]),
	    key=lambda t: t["start_ns"])
gap = max([b["start_ns"] - a["end_ns"] for a, b in zip(ch, ch[1:])] or [10**12])
edge = max(ch[0]["start_ns"] - h["start_ns"], h["end_ns"] - ch[-1]["end_ns"]) if ch else 10**12
print(len(ch), gap // 1000000, edge // 1000000)' c-$how.json "$pid")
set -- $follow
# (How many the chain made, it says: all of them launched, those after
# the attach attached.)
made=$(wl_field c.out main threads)
if [ "$how" = launch ]; then
	check_num "chain, $how: the chain's threads are recorded, all $made" "${1:-0}" -eq "${made:-x}"
else
	check_range "chain, $how: the chain's threads since the attach are recorded, of $made" \
		"${1:-0}" 1 "${made:-0}"
fi
# (Margins for a loaded machine: losing the chain leaves most of 2 s.)
check_num "chain, $how: no break between one thread and the next, ms" "${2:-9999}" -le 100
check_num "chain, $how: followed from the start of the recording to its end, ms" "${3:-9999}" -le 500
	check "chain, $how: the thread lists settled" no_match 'kept appearing' rec.err
	sed 's/^/# /' rec.err
	# Long on a CPU or blocked: one whose exit was missed.  (On a loaded
	# machine a new thread can wait for a CPU for hundreds of ms: runnable
	# or preempted time, which is no error.)
	check_num "chain, $how: no thread of the chain lives long on a CPU or blocked" \
		"$(awk -F '\t' -v p="$pid" '$1 == p && $2 != p && $5 + $7 > 100000000' c-$how.threads | wc -l)" -eq 0
	# Its CPU time, against getrusage's for the part of its life recorded.
	on=$(col c-$how "\$1 == $pid" 5)
	cpu=$(wl_field c.out main cpu_ns)
	# Attached, the part of its 2.5 s recorded: the recording's window
	# (shorter when a slow machine takes long to attach), the share of
	# getrusage's time that the window's share of its life would give.
	# A loaded machine runs the chain unevenly, so above that share the
	# bound is its whole life's CPU time, which no part of it exceeds.
	hi=115
	if [ "$how" = attach ]; then
		win=$(python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["header"]
print(min(h["window_end_ns"] - h["window_start_ns"], 2500000000))' c-$how.json)
		all=$cpu
		cpu=$((cpu * (win / 1000000) / 2500))
		hi=$((all * 105 / (cpu > 0 ? cpu : 1)))
		[ "$hi" -ge 115 ] || hi=115
	fi
	check_range "chain, $how: the chain's on-CPU time against getrusage's, percent" \
		$((on * 100 / cpu)) 60 "$hi"
done

# --- -t T,T is -t T ---------------------------------------------------------
start t.out "$WORKLOADS/spawner" join 1.5 2000 0.2
run rec.out rec.err timeout 60 "$WALLPROF" record -q -t "$wl,$wl" -o t.data -d 1
check_num "-t T,T: record exits 0" "$rc" -eq 0
figures t.data t
main_on=$(col t "\$2 == $wl" 5)
main_samples=$(col t "\$2 == $wl" 11)
check_range "-t T,T: samples are on-CPU time / period, not twice that, percent" \
	$((main_samples * period * 100 / (main_on + 1))) 85 110
finish
