#!/bin/sh
# identity.sh: who a process was.  One process execs twice under three
# names (symlinks to the execchain workload, 0.2 s of CPU under each): the
# text report names all three, with their times, under the process row;
# JSON gives each name's time (adding up to the process's wall, each about
# 0.2 s) and the command line read after each exec, argument by argument,
# hostile bytes escaped; the trace names the process by its chain.  Each
# name's times are checked against what the stage measured of itself
# (its clock and schedstat) and the exec records of the dump.  A
# process attached to (-p) has the command line read at attach.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
abs() { [ "$1" -lt 0 ] && echo $((-$1)) || echo "$1"; }

for n in stage-one stage-two stage-three; do
	ln -s "$WORKLOADS/execchain" "$n" || { fail "symlink $n"; finish; }
done
esc=$(printf '\033')
# The last stage gets an argument with a space and one with ESC.
steal_mark
run rec.out rec.err "$WALLPROF" record -q -o x.data -- "$PWD/stage-one" 0.2 \
	"$PWD/stage-two" 0.2 "$PWD/stage-three" 0.2 -- "two words" "esc${esc}[2Jx"
check_num "record of the exec chain exits 0" "$rc" -eq 0

# --- text ------------------------------------------------------------------
run x.txt x.err "$WALLPROF" report -i x.data
check_num "text: report exits 0" "$rc" -eq 0
check "text: the process row is named by its last name" grep -Eq '^[0-9]+ +stage-three ' x.txt
names=$(grep -E '^ +names: ' x.txt)
echo "# $names"
check "text: the names line has all three, in order, with times" \
	sh -c "echo '$names' | grep -Eq 'names: stage-one [0-9.]+m?s -> stage-two [0-9.]+m?s -> stage-three [0-9.]+m?s$'"
check "text: the command line read after the last exec, as shell words" \
	grep -Eq "^ +cmdline: .*/stage-three 0\\.2 -- 'two words' .*esc.*2Jx" x.txt
check "text: no raw ESC" no_match "$esc" x.txt

# --- JSON ------------------------------------------------------------------
run x.json x.err "$WALLPROF" report -i x.data --format json
check_num "json: report exits 0" "$rc" -eq 0
cat >names.py <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
main = [t for t in doc["threads"] if t["names"]]
if len(main) != 1:
    print("threads with names: %d" % len(main)); sys.exit(1)
t = main[0]
for n in t["names"]:
    c = n["cmdline"]
    print("name %s wall_ns %d on_ns %d inherited %s args %s source %s" % (
        n["comm"], n["wall_ns"], n["on_cpu_ns"], n["inherited"],
        json.dumps(c["args"] if c else None), c["source"] if c else None))
print("sum_wall %d thread_wall %d" % (sum(n["wall_ns"] for n in t["names"]), t["wall_ns"]))
print("switches %d" % (t["voluntary_switches"] + t["involuntary_switches"]))
print("anchor approximate %s bound %d source %s moved %d kernel %d lost %d" % (
    t["approximate"], t["on_cpu_bound_ns"], t["on_cpu_source"], t["on_cpu_moved_ns"],
    t.get("kernel_on_cpu_ns", 0), doc["header"]["lost_records"] + doc["header"]["lost_samples"]))
print("starts_ordered %s" % all(a["start_ns"] < b["start_ns"] for a, b in zip(t["names"], t["names"][1:])))
PY
python3 names.py x.json >names.out
steal=$(steal_ns)
echo "# steal time since the recording began: $steal ns"
cat names.out | sed 's/^/# /'
check "json: three names, stage-one, stage-two, stage-three" \
	[ "$(awk '$1 == "name" { printf "%s ", $2 }' names.out)" = "stage-one stage-two stage-three " ]
dump x.data x.dump
# When each name began, from the dump's COMM records (its exec; the first
# name from the process's FORK, the launch), and when the last one ended
# (the thread's EXIT): "NAME start_ns", then "end NS".
# A thread runs its exit on past its EXIT, to its last switch-out (which
# the cgroup's switch records show; preempted on the way, it runs again):
# the first switch-out after its EXIT that is no preemption, its tid
# perhaps gone from it (-1), or its pid too, is its end.
awk '$2 == "COMM" && $5 == "exec" { print $4, $1 } $2 == "FORK" { print $2, $1 }
	$2 == "EXIT" { exit_tid = $3; exit_at = $1; print $2, $1; print "EXIT_RECORD", $1
		exit_pid = $3; sub(/\/.*/, "", exit_pid) }
	exit_tid && !last && $2 == "SWITCH_OUT" && $1 > exit_at && $6 != "preempted" &&
		($3 == exit_tid || $3 == "4294967295/4294967295" || $3 == exit_pid "/4294967295") {
		last = $1 }
	END { if (last) print "EXIT", last }' x.dump |
	sort -n -k2,2 | awk '{ split($2, t, "."); printf "%s %.0f\n", $1, t[1] * 1e9 + t[2] }' |
	awk '$1 != "EXIT" && $1 != "EXIT_RECORD" { print; next } $1 == "EXIT_RECORD" { er = $0; next }
		{ ex = $0 } END { if (ex) print ex; if (er) print er }' >execs
sed 's/^/# exec: /' execs
prev_c1=0
for n in stage-one stage-two stage-three; do
	w=$(awk -v n="$n" '$1 == "name" && $2 == n { print $4 }' names.out)
	on=$(awk -v n="$n" '$1 == "name" && $2 == n { print $6 }' names.out)
	st() { awk -v n="$1" -v k="$2" '$1 == "stage" && $2 == n {
		for (i = 3; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' rec.out; }
	t0=$(st "$n" start_ns) t1=$(st "$n" end_ns) c0=$(st "$n" oncpu_start_ns) c1=$(st "$n" oncpu_end_ns)
	if [ -z "$w" ] || [ -z "$t0" ]; then
		fail "json: $n has times, and the stage printed its own"
		continue
	fi
	# Its span is from its exec to the next (or the thread's end).
	b=$(awk -v n="$n" '$1 == n { print $2; exit }' execs)
	[ "$n" = stage-one ] && b=$(awk '$1 == "FORK" { print $2; exit }' execs)
	e=$(awk -v b="${b:-0}" '$2 > b && $1 != "FORK" && $1 != "stage-one" { print $2; exit }' execs)
	if [ "$n" = stage-three ]; then
		# The last ends with its exit path, after its EXIT: at its last
		# switch-out (timed by sched_switch: within 1 ms of the record).
		x=$(awk '$1 == "EXIT_RECORD" { print $2 }' execs)
		z=$(awk '$1 == "EXIT" { print $2 }' execs)
		check "the dump has the last switch-out after the EXIT" [ -n "$z" ]
		check_range "json: $n's wall ($w) is from its exec to its exit path's end (after EXIT, at its last switch-out)" \
			"$w" $((${x:-0} - ${b:-0} - 100000)) $((${z:-0} - ${b:-0} + 1000000))
	else
		check_num "json: $n's wall ($w) is from its exec (or launch) to the next in the dump ($((${e:-0} - ${b:-0})), within 0.1 ms)" \
			"$(abs $((w - (${e:-0} - ${b:-0}))))" -le 100000
	fi
	check_num "json: $n's wall covers what the stage timed of itself" "$w" -ge $((t1 - t0))
	# Its on-CPU time is at least what schedstat counted from the stage's
	# start to its exec, and at most from the last stage's exec to the
	# next stage's start (after the last: 2 ms to exit).  Switch records
	# come tens of us after schedstat's clock: 2 ms either way, and 60 us
	# a switch of the process (a busy machine preempts the stages often).
	next=$(case $n in stage-one) st stage-two oncpu_start_ns ;; stage-two) st stage-three oncpu_start_ns ;;
		*) echo $((c1 + 2000000)) ;; esac)
	# Where records were lost, the report's bound of the thread's error
	# too; and the time the host stole (no exec time of the thread's, so
	# anchoring takes it out of the stages' records, shared by their
	# late switch-ins, not by when it was stolen).
	slack=$((2000000 + 60000 * $(awk '$1 == "switches" { print $2 }' names.out) +
		$(awk '$1 == "anchor" { print $5 }' names.out) + steal))
	check_range "json: $n's on-CPU ($on) within schedstat's, from its own run to the stages' around it" \
		"$on" $((c1 - c0 - slack)) $((${next:-0} - prev_c1 + slack))
	prev_c1=$c1
done
check "json: the names' times add up to the process's wall, to the nanosecond" \
	awk '$1 == "sum_wall" { exit !($2 == $4) }' names.out
check "json: the names in time order" grep -q 'starts_ordered True' names.out
check "json: none inherited (the launched command starts at its exec)" \
	no_match 'inherited True' names.out
check "json: stage-two's command line as read after its exec" \
	grep -q "name stage-two .*args \[\"$PWD/stage-two\", \"0.2\", \"$PWD/stage-three\", \"0.2\", \"--\", \"two words\", \"esc\\\\u001b\[2Jx\"\] source exec" names.out
check "json: stage-three's command line" \
	grep -q "name stage-three .*args \[\"$PWD/stage-three\", \"0.2\", \"--\", \"two words\", \"esc\\\\u001b\[2Jx\"\] source exec" names.out
python3 "$TESTS_SRCDIR/integration/report-json.py" check x.json >x.check
check "json: the schema holds" [ ! -s x.check ]

# --- trace and dump ----------------------------------------------------------
run x.trace x.err "$WALLPROF" report -i x.data --format trace
check "trace: the process is named by its chain" \
	grep -q '"process_name","args":{"name":"stage-one -> stage-two -> stage-three"}' x.trace
check "trace: and labelled with its command line" grep -q '"process_labels"' x.trace
check_num "dump: a CMDLINE record for the launch and one after each exec" \
	"$(grep -c ' CMDLINE ' x.dump)" -eq 4
check "dump: one of them the launch's" grep -q ' CMDLINE [0-9]* launch ' x.dump

# --- attach ------------------------------------------------------------------
"$WORKLOADS/sleeper" 300 10 >sl.out 2>&1 &
sl=$!
bg_pids="$bg_pids $sl"
sleep 0.3
run a.out a.err "$WALLPROF" record -q -o p.data -p "$sl" -d 0.5
check_num "attach: record exits 0" "$rc" -eq 0
dump p.data p.dump
check "attach: the command line read at attach" \
	grep -Eq "CMDLINE $sl attach .*/sleeper 300 10" p.dump
run p.json p.err "$WALLPROF" report -i p.data --format json
python3 - p.json "$sl" >p.names <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for t in doc["threads"]:
    if t["tid"] == int(sys.argv[2]):
        for n in t["names"]:
            print(n["comm"], json.dumps(n["cmdline"]["args"]), n["cmdline"]["source"])
PY
check "attach: JSON gives it, source attach" grep -q '"300", "10"\] attach$' p.names
kill "$sl" 2>/dev/null
finish
