# waitgraph.sh: why threads waited, on the waitfor workload, whose threads
# wait for each other in known ways; figures compared with what the
# workload measured itself.
#  - prodcons: the wait-for graph names the producer's sleep as the one
#    knot (the timer, entered from the producer, through nanosleep); the
#    four workers are one node waiting for the producer; the producer's
#    waits for the timer are its items, 5 ms each; text, DOT, SVG and JSON
#    agree on the edges drawn.
#  - chain: main's critical path over the wait it timed itself adds up to
#    that window, and holds w2's 200 ms of CPU in wf_spin_cpu and its
#    100 ms timer, as w2 measured them; the flame graph and the trace
#    show the same path.
#  - tcp: of the client's blocked time, 90% or more went to the server
#    thread or the network (every wake-up recorded, and with record's
#    default budget, whose unrecorded wake-ups are shared out).
#  - dd reading a file with O_DIRECT waits for the disk, in a wait per
#    read at most (where the file system takes O_DIRECT).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "the wake-up tracepoints need root (or CAP_PERFMON) here"
[ -d /sys/kernel/tracing ] || skip "this kernel has no tracefs"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON reports"
tracing_alone
P="$TESTS_SRCDIR/integration/waitgraph.py"

# wakings DATA: the sched_waking samples of a recording.  While another
# tracer records the scheduler's tracepoints, this VM's kernel emits none
# for many wake-ups (lib.sh's tracing_alone, which other checkouts' tests
# do not see): a recording with fewer than the workload surely made is
# made again, and says so.
wakings() { dump "$1" "$1.dump" && grep -Ec ' (STACK_)?SAMPLE .* \(?sched:sched_waking(#[0-9]+)?\)? ' "$1.dump"; }

# woken JSON TID: how many of TID's waits a recorded wake-up ended
# (report --format json's threads), which the graph can name a waker for.
woken() {
	python3 -c 'import json, sys
print(next((t["wakeups"] for t in json.load(open(sys.argv[1]))["threads"]
	    if t["tid"] == int(sys.argv[2])), 0))' "$1" "$2"
}
others=	# other tracers seen meanwhile (lib.sh's foreign_tracers)
# This VM's kernel takes no tracepoint sample in CPU 1's idle context
# (wallprof-report(1), "Wake-ups"): a timer's or a disk's wake-up made
# there is lost, for every tracer (unpinned, 1 to 48 of some 90 of the
# producer's were recorded; on CPU 0, all).  The workloads whose waits
# such interrupts end run on CPU 0.
pin=
taskset -c 0 true 2>/dev/null && pin="taskset -c 0"

# val FILE NAME: the value of a "name value" line.
val() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print -1 }' "$1"; }
# No shown thread's direct edges hold more than its blocked time.
check_overspent() {
	python3 "$P" overspent "$1" >"$1.over"
	sed -n 's/^overspent_node /# /p' "$1.over"
	check_num "$2: no thread's edges hold more than its blocked time" \
		"$(val "$1.over" overspent)" -eq 0
}
abs() { [ "$1" -lt 0 ] && echo $((-$1)) || echo "$1"; }

# Producer and consumers.  Each item's sleep ends in a wake-up by the
# timer; a recording whose file holds fewer than 95% of them (the kernel
# dropped them: see wakings, and pin) is made again, and says so.
for try in 1 2 3 4; do
	rm -f pc.data
	others="$others$(foreign_tracers)"
	run pc.out pc.err "$WALLPROF" record -q -o pc.data -- $pin "$WORKLOADS/waitfor" prodcons 2
	[ "$rc" -eq 0 ] || sed 's/^/# record: /' pc.err
	others="$others$(foreign_tracers)"
	producer=$(wl_field pc.out producer tid)
	items=$(wl_field pc.out producer items)
	"$WALLPROF" report -i pc.data --format json --top 1 >pc.hdr 2>/dev/null
	pc_woken=$(woken pc.hdr "${producer:-0}")
	[ "$pc_woken" -ge "$(( ${items:-0} * 95 / 100 ))" ] && break
	echo "# prodcons, try $try: $pc_woken of the producer's $items sleeps ended in a recorded wake-up: again"
done
check_num "prodcons: record exits 0" "$rc" -eq 0
# (Some 200 on a quiet machine; beside four busy loops and other tests, 78.)
check_num "prodcons: the workload made items" "${items:-0}" -gt 40
pc_short=
[ "$pc_woken" -ge "$((items * 95 / 100))" ] || pc_short=yes
run pc.json pc.jerr "$WALLPROF" report -i pc.data --format waitgraph-json
check_num "prodcons: waitgraph-json exits 0" "$rc" -eq 0
python3 "$P" knots pc.json "$producer" >pc.k
check_overspent pc.json prodcons
cat pc.k | sed 's/^/# /'
check_num "prodcons: one knot" "$(val pc.k knots)" -eq 1
check_num "prodcons: the knot is the timer" "$(val pc.k knot_is_timer)" -eq 1
check_num "prodcons: the producer puts 90% of the weight into it, per mille" \
	"$(val pc.k from_thread_permille)" -ge 900
check_num "prodcons: ... waiting in nanosleep, per mille" "$(val pc.k nanosleep_permille)" -ge 900
# Each item's 5 ms sleep, and the timer's slack: at most 15% more.  Only
# if the kernel told of the wake-ups: while another tracer records the
# scheduler, it drops many, for every tracer.
if [ -n "$pc_short" ] && [ -n "${others% }" ]; then
	why="the kernel told of $pc_woken wake-ups of $items sleeps, with another tracer: ${others% }"
	skip_check "prodcons: the producer's own waits for the timer, ms" "$why"
	skip_check "prodcons: one wait for the timer per item" "$why"
else
	check_range "prodcons: the producer's own waits for the timer, ms (items x 5 ms = $((items * 5)))" \
		"$(( $(val pc.k direct_ns) / 1000000 ))" "$((items * 5))" "$((items * 5 * 115 / 100))"
	check_range "prodcons: one wait for the timer per item" "$(val pc.k waits)" \
		"$((items * 95 / 100))" "$items"
fi
# Whatever the kernel dropped, each wake-up it told of is in the graph.
check_range "prodcons: the producer's waits for the timer, against its $pc_woken recorded wake-ups" \
	"$(val pc.k waits)" "$((pc_woken * 95 / 100 - 2))" "$((pc_woken + 2))"
check_num "prodcons: the heaviest waiter for the producer is the four workers, one node" \
	"$(val pc.k heaviest_waiter_threads)" -eq 4
edges=$(python3 -c 'import json, sys
print(sum(1 for e in json.load(open(sys.argv[1]))["waitgraph"]["edges"] if not e["dropped"]))' pc.json)
run pc.txt pc.terr "$WALLPROF" report -i pc.data --format waitgraph
check_num "prodcons: waitgraph exits 0" "$rc" -eq 0
check "prodcons: text: the timer's knot, entered from the producer" \
	grep -Eq "^  producer \([0-9]+/$producer\) -> \[timer\] .* into knot 1$" pc.txt
check "prodcons: text: the workers as one node" grep -Eq "^  worker x4 \([0-9]+\) -> producer" pc.txt
run pc.dot pc.derr "$WALLPROF" report -i pc.data --format waitgraph-dot
check_num "prodcons: waitgraph-dot exits 0" "$rc" -eq 0
check_num "prodcons: DOT: the edges of the JSON" "$(grep -c '^  n[0-9]* -> n[0-9]* ' pc.dot)" -eq "$edges"
check_num "prodcons: DOT: one digraph" "$(grep -c '^digraph' pc.dot)" -eq 1
check "prodcons: DOT: closed" [ "$(tail -n 1 pc.dot)" = "}" ]
run pc.svg pc.serr "$WALLPROF" report -i pc.data --format waitgraph-svg
check_num "prodcons: waitgraph-svg exits 0" "$rc" -eq 0
python3 "$P" svg pc.svg >pc.s
check_num "prodcons: SVG: well-formed, the edges of the JSON" "$(val pc.s svg_edges)" -eq "$edges"
check_num "prodcons: SVG: nodes drawn" "$(val pc.s svg_nodes)" -ge 3
run pc.none pc.nerr "$WALLPROF" report -i pc.data --format waitgraph-json --wait-groups none \
	--wait-threshold 0
check_num "prodcons: --wait-groups none --wait-threshold 0 exits 0" "$rc" -eq 0
check "prodcons: ... no node of several threads, no edge dropped" python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["waitgraph"]
sys.exit(any(len(n.get("tids", [])) > 1 for n in g["nodes"]) or any(e["dropped"] for e in g["edges"]))' pc.none
# A thread's times in the graph are the ledger's (report --format json):
# on-CPU anchored to the kernel's figures, not the switch records alone.
"$WALLPROF" report -i pc.data --format json >pc.ledger 2>/dev/null
check "prodcons: every thread's node has the ledger's on-CPU, runnable, preempted and blocked time" \
	python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["waitgraph"]
led = {t["tid"]: t for t in json.load(open(sys.argv[2]))["threads"]}
bad = 0
for n in g["nodes"]:
    if n["kind"] != "threads" or len(n["tids"]) != 1 or n["tids"][0] not in led:
        continue
    t = led[n["tids"][0]]
    got = (n["on_cpu_ns"], n["runnable_ns"], n["preempted_ns"], sum(n["blocked_ns"].values()))
    want = (t["on_cpu_ns"], t["runnable_ns"], t["preempted_ns"], t["blocked_ns"])
    if got != want:
        print("# tid %d: graph %s, ledger %s" % (n["tids"][0], got, want))
        bad += 1
sys.exit(bad)' pc.none pc.ledger
run pc.bad pc.berr "$WALLPROF" report -i pc.data --format waitgraph --wait-groups sometimes
check_num "prodcons: a bad --wait-groups: exit 2" "$rc" -eq 2
check "prodcons: ... one sentence that names it" grep -q "wait-groups" pc.berr

# A chain of waits: main <- w1 (condition variable) <- w2 (pipe), w2 spins and sleeps:
# three wake-ups at least, two of them made by the workload's threads
# (w2 waking w1, w1 waking main), which the path follows.
for try in 1 2 3 4 5 6; do
	rm -f chain.data
	run chain.out chain.err "$WALLPROF" record -q -o chain.data -- $pin "$WORKLOADS/waitfor" chain
	[ "$rc" -eq 0 ] || sed 's/^/# record: /' chain.err
	n=$(wakings chain.data)
	own=$(grep -Ec " (STACK_)?SAMPLE $(wl_field chain.out main pid)/[0-9]+ .* \\(?sched:sched_waking(#[0-9]+)?\\)? " \
		chain.data.dump)
	[ "$n" -ge 3 ] && [ "$own" -ge 2 ] && break
	echo "# chain, try $try: the kernel emitted $n sched_waking samples of 3 or more," \
		"$own of the workload's of 2: again"
	others="$others$(foreign_tracers)"
done
check_num "chain: record exits 0" "$rc" -eq 0
main=$(wl_field chain.out main tid)
run chain.hdr chain.herr "$WALLPROF" report -i chain.data --format json --top 1
start=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["header"]["start_ns"])' chain.hdr)
w0=$(wl_field chain.out main wait_start) w1=$(wl_field chain.out main wait_end)
window=$(awk -v s="$start" -v a="$w0" -v b="$w1" 'BEGIN { printf "%.9f-%.9f", (a - s) / 1e9, (b - s) / 1e9 }')
echo "# main waited $(( (w1 - w0) / 1000000 )) ms: --critical-path $main@$window"
run cp.json cp.err "$WALLPROF" report -i chain.data --format json --top 1 --critical-path "$main@$window"
check_num "chain: json --critical-path exits 0" "$rc" -eq 0
python3 "$P" path cp.json >cp.v
cat cp.v | sed 's/^/# /'
check_num "chain: the path adds up to its window" "$(val cp.v sum_ns)" -eq "$(val cp.v window_ns)"
check_num "chain: the window is main's wait as it timed it, within 1 ms, us" \
	"$(abs $(( ($(val cp.v window_ns) - (w1 - w0)) / 1000 )))" -le 1000
spin_cpu=$(wl_field chain.out w2 spin_cpu_ns)
spin=$(val cp.v w2_spin_ns)
check_range "chain: w2 on-CPU in wf_spin_cpu, ms" "$((spin / 1000000))" 190 210
# (The path's boundaries are the switch records', not anchored to the
# kernel's figures: off by up to what anchoring moved w2's total, which
# the ledger gives, as the man page says.)
w2=$(wl_field chain.out w2 tid)
moved=$(python3 -c 'import json, sys
print(next((abs(t["on_cpu_moved_ns"]) for t in json.load(open(sys.argv[1]))["threads"]
            if t["tid"] == int(sys.argv[2])), 0))' chain.hdr "${w2:-0}")
echo "# w2 path on-CPU $spin ns, measured $spin_cpu ns, anchoring moved its total by $moved ns"
check_num "chain: ... within 2% of the CPU time w2 measured ($spin_cpu ns) and what anchoring moved ($moved ns), us off" \
	"$(abs $(( (spin - spin_cpu) / 1000 )))" -le $(( (spin_cpu / 50 + moved) / 1000 ))
check_range "chain: the timer that woke w2, ms" "$(( $(val cp.v timer_ns) / 1000000 ))" 95 105
z=$(( $(wl_field chain.out w2 sleep_end) - $(wl_field chain.out w2 sleep_start) ))
check_num "chain: the timer and w2's wait for a CPU after it: the sleep w2 measured ($z ns), per mille off" \
	"$(abs $(( ($(val cp.v timer_then_cpu_ns) - z) * 1000 / z )))" -le 20
check_num "chain: the timer's segment names w2's wf_chain_sleep" "$(val cp.v w2_sleep_frames)" -eq 1
# A slice with no sample of its own takes its thread's nearest: on the
# path, no on-CPU time of a thread that had samples is without a stack.
bare=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sampled = {t["tid"] for t in d["threads"] if t["samples"] > 0}
print(sum(s["ns"] for s in d["critical_path"]["segments"]
          if s["kind"] == "on-CPU" and s.get("tid") in sampled and not s.get("frames")))' cp.json)
check_num "chain: the path's on-CPU time of sampled threads all has stacks (ns without)" "$bare" -eq 0
run cp.txt cp.terr "$WALLPROF" report -i chain.data --critical-path "$main@$window"
check_num "chain: text --critical-path exits 0" "$rc" -eq 0
check "chain: text: the path's holders" grep -Eq "^ +[0-9.]+ ms +[0-9.]+%  w2 \([0-9]+\) on-CPU$" cp.txt
check "chain: text: the timer, for w2" grep -Eq "^ +[0-9.]+ ms +[0-9.]+%  \[timer\] woke w2 \([0-9]+\)$" cp.txt
run cp.svg cp.serr "$WALLPROF" report -i chain.data --format flamegraph --critical-path "$main@$window"
check_num "chain: flamegraph --critical-path exits 0" "$rc" -eq 0
check "chain: flame graph: well-formed, w2's spin and the timer" python3 -c '
import sys, xml.etree.ElementTree as ET
t = "".join(ET.parse(sys.argv[1]).getroot().itertext())
sys.exit(not ("wf_spin_cpu" in t and "[timer]" in t and "Critical path of main" in t))' cp.svg
run cp.trace cp.trerr "$WALLPROF" report -i chain.data --format trace --critical-path "$main@$window"
check_num "chain: trace --critical-path exits 0" "$rc" -eq 0
check "chain: trace: a track of the path, as long as the window" python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "critical-path"]
total = sum(float(e["dur"]) for e in ev)
sys.exit(not ev or abs(total * 1000 - int(sys.argv[2])) > 1000)' cp.trace "$(val cp.v window_ns)"
run cp.bad cp.berr "$WALLPROF" report -i chain.data --format folded --critical-path "$main"
check_num "chain: --critical-path with folded: exit 2" "$rc" -eq 2
check "chain: ... a sentence that names it" grep -q "critical-path" cp.berr
run cp.none cp.nerr "$WALLPROF" report -i chain.data --critical-path 1
check_num "chain: --critical-path of no thread: exit 1" "$rc" -eq 1
check_num "chain: ... one sentence" "$(nlines cp.nerr)" -eq 1
check "chain: ... and no report" [ ! -s cp.none ]

# Loopback TCP: the client waits for the server, through the network.
for how in all default; do
	opt=--switch-stacks=all
	[ "$how" = default ] && opt=
	# Each request wakes the server and the client: unless gated, twice as many.
	for try in 1 2 3; do
		rm -f "tcp-$how.data"
		run "tcp-$how.out" "tcp-$how.err" "$WALLPROF" record -q $opt -o "tcp-$how.data" -- \
			"$WORKLOADS/waitfor" tcp 2
		requests=$(wl_field "tcp-$how.out" client requests)
		n=$(wakings "tcp-$how.data")
		[ "$how" = default ] || [ "$n" -ge "${requests:-0}" ] && break
		echo "# tcp, try $try: the kernel emitted $n sched_waking samples for $requests requests: again"
	done
	check_num "tcp ($how): record exits 0" "$rc" -eq 0
	client=$(wl_field "tcp-$how.out" client tid) server=$(wl_field "tcp-$how.out" server tid)
	run "tcp-$how.json" "tcp-$how.jerr" "$WALLPROF" report -i "tcp-$how.data" --format waitgraph-json
	check_num "tcp ($how): waitgraph-json exits 0" "$rc" -eq 0
	python3 "$P" share "tcp-$how.json" "$client" "$server" >"tcp-$how.v"
	check_overspent "tcp-$how.json" "tcp ($how)"
	cat "tcp-$how.v" | sed "s/^/# $how: /"
	if [ "$how" = all ]; then
		check_num "tcp (all): the client's blocked time that the server or the network ended, per mille" \
			"$(val "tcp-$how.v" to_server_or_network_permille)" -ge 900
	else
		# Gated wake-ups are shared out; the kernel's missing ones (see wakings) are not.
		check_num "tcp (default): ... of the waits whose wake-up was recorded or gated, per mille" \
			"$(val "tcp-$how.v" of_known_permille)" -ge 900
	fi
	[ "$how" = all ] &&
		check_range "tcp (all): the client's waits for them, against its $requests requests" \
			"$(val "tcp-$how.v" waits)" "$((requests / 2))" "$((requests + 2))"
done

# The disk: direct reads, each a wait for the block device's completion
# (of a file on the disk already: reading pages under writeback waits for
# the kworker that ends it).
dd if=/dev/zero of=disk.in bs=1M count=16 conv=fsync 2>/dev/null
if dd if=disk.in of=/dev/null bs=64k count=1 iflag=direct 2>/dev/null; then
	# A recording whose file lacks the wake-ups of over a fifth of dd's
	# blocked time (the kernel dropped them, see wakings) is made again.
	for try in 1 2 3; do
		rm -f dd.data
		others="$others$(foreign_tracers)"
		run dd.out dd.err "$WALLPROF" record -q -o dd.data -- $pin dd if=disk.in of=/dev/null bs=16k iflag=direct
		others="$others$(foreign_tracers)"
		dd_tid=$(python3 -c 'import json, sys
print(next(t["tid"] for t in json.load(open(sys.argv[1]))["threads"] if t["comm"] == "dd"))' \
			"$("$WALLPROF" report -i dd.data --format json --top 1 >dd.json; echo dd.json)")
		run dd.g dd.gerr "$WALLPROF" report -i dd.data --format waitgraph-json
		python3 "$P" device dd.g "$dd_tid" disk >dd.v
		[ "$(val dd.v unknown_permille)" -le 200 ] && break
		echo "# disk, try $try: $(val dd.v unknown_permille) per mille of dd's blocked time without a recorded wake-up: again"
	done
	check_num "disk: record exits 0" "$rc" -eq 0
	cat dd.v | sed 's/^/# /'
	check_overspent dd.g disk
	check_num "disk: of dd's blocked time whose wake-up was recorded, what the disk ended, per mille" \
		"$(val dd.v of_known_permille)" -ge 800
	# (The recording itself shows when the kernel dropped the wake-ups:
	# this VM's kernel takes no tracepoint sample in an idle CPU's
	# context, where disk completions often end the wait.)
	if [ "$(val dd.v unknown_permille)" -gt 200 ]; then
		skip_reference "disk: dd's blocked time that the disk ended, per mille" \
			"the kernel recorded no wake-up for $(val dd.v unknown_permille) per mille of it${others:+, with another tracer: ${others% }}"
	else
		# (What the kernel dropped the wake-up of is unknown, not the
		# disk's: no edge stands for it.)
		check_num "disk: dd's blocked time that the disk ended or that has no recorded wake-up, per mille" \
			"$(( $(val dd.v device_permille) + $(val dd.v unknown_permille) ))" -ge 900
	fi
	# (The waits counted are those with a recorded wake-up.  dd's reads
	# may come faster than twice the switch-out stacks' budget, when
	# record turns the wake-ups off part of the time: then the waits
	# counted are at most those recorded, and the rest estimated.)
	set -- $(python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["quality"].get("wakeups_gated") or {}
print(int(bool(g.get("gated"))), g.get("waits_recorded", 0))' dd.json)
	if [ "$1" = 1 ]; then
		echo "# disk: the wake-ups were gated: $2 waits had their wake-up recorded"
		check_range "disk: a wait per recorded wake-up at most (wake-ups gated)" \
			"$(val dd.v waits)" 1 "$2"
	elif [ "$(val dd.v unknown_permille)" -gt 200 ]; then
		check_range "disk: a wait per read at most (1024 reads)" "$(val dd.v waits)" 1 1024
	else
		check_range "disk: a wait per read at most (1024 reads)" "$(val dd.v waits)" 100 1024
	fi
	check_num "disk: the disk is a knot" "$(val dd.v knot)" -eq 1
else
	echo "# SKIP-PART: this file system takes no O_DIRECT read: no disk wait to check"
fi
finish
