# rotate.sh: `wallprof record --rotate SECONDS` writes a new complete file
# every interval (out.0001.data, out.0002.data, ...), each reported on its
# own with the expected stacks and names, and nothing is lost at the
# boundaries: each file spans exactly its interval, and a thread's times
# in consecutive files join without gap or overlap and add up to its
# whole life in the recording, whose on-CPU time is the kernel's
# (schedstat, as report-accounting.sh checks it); the same unwinding
# while recording (--unwind=live).  Also: usage errors,
# an attached process's state (names, mappings) in every file, and a
# recording stopped by SIGINT or killed.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON reports"
NAMES='spinner sleeper locker locker2 reader'

# Usage errors: one line, status 2, no file.
for bad in "--rotate 0" "--rotate 0.5" "--rotate abc" "--rotate -1" "--rotate 1e3" \
	"--rotate 2 --flight-recorder 2"; do
	# shellcheck disable=SC2086 # the options are words
	run out err "$WALLPROF" record $bad -o out.data -- true
	check_num "record $bad: exit status 2" "$rc" -eq 2
	check_num "record $bad: one line on stderr" "$(nlines err)" -eq 1
	check "record $bad: no file" no_file '^out\.' .
done

# files PREFIX: the complete files of a rotation, in order.
files() { ls -A | grep -E "^$1\.[0-9]{4,}\.data\$" | sort; }
tmp_files() { ls -A | grep -c "^\.$1\..*wallprof-" || true; }

# ledger PREFIX: every file's JSON report; then one line per file
# ("file NAME start end duration lost") and per thread ("thread TID COMM
# WALL ON OFF FIRST_START LAST_END GAPS FILES APPROX"), where GAPS counts
# the joins between consecutive files that are not exact, and APPROX the
# files whose report marks the thread approximate (records lost around it).
ledger() {
	for f in $(files "$1"); do
		"$WALLPROF" report -q -i "$f" --format json >"$f.json" 2>"$f.err" ||
			echo "report failed: $f" >>ledger.err
	done
	python3 - $(files "$1") <<'EOF'
import json, sys
threads = {}
for f in sys.argv[1:]:
    d = json.load(open(f + ".json"))
    h = d["header"]
    print("file", f, h["start_ns"], h["end_ns"], h["duration_ns"],
          h["lost_records"] + h["lost_samples"])
    for t in d["threads"]:
        k = t["tid"]
        x = threads.setdefault(k, {"comm": t["comm"], "wall": 0, "on": 0, "off": 0,
                                   "first": t["start_ns"], "last": None, "gaps": 0, "n": 0,
                                   "approx": 0, "bound": 0})
        if x["last"] is not None and x["last"] != t["start_ns"]:
            x["gaps"] += 1
        x["last"] = t["end_ns"]
        x["wall"] += t["wall_ns"]; x["on"] += t["on_cpu_ns"]; x["off"] += t["off_cpu_ns"]
        x["n"] += 1
        x["approx"] += 1 if t["approximate"] else 0
        x["bound"] += t["on_cpu_bound_ns"]
        x["comm"] = t["comm"]
for k, x in sorted(threads.items()):
    print("thread", k, x["comm"], x["wall"], x["on"], x["off"], x["first"], x["last"],
          x["gaps"], x["n"], x["approx"], x["bound"])
EOF
}
# lf TID FIELD: a field of a thread's line of the ledger (file L).
lf() {
	awk -v tid="$1" -v k="$2" 'BEGIN {
		split("tid comm wall on off first last gaps files approx bound", n, " ")
		for (i in n) col[n[i]] = i + 1
	} $1 == "thread" && $2 == tid { print $col[k]; exit }' L
}

# 1. A launched command, 4.5 s, a file a second: raw, and unwound live
# (each file then carries the stack table so far and its places' names).
# rotation PREFIX [OPTION...]
rotation() {
p=$1
shift
steal_mark
run wl.out rec.err "$WALLPROF" record "$@" --rotate 1 -o $p.data -- "$WORKLOADS/wallclock" 4.5
check_num "$p: record $* --rotate 1 exits 0" "$rc" -eq 0
steal_ns=$(steal_ns)
n=$(files $p | grep -c '' || true)
check_range "$p: 4.5 s in 1 s files: 5 files (got $n: $(files $p | tr '\n' ' '))" "$n" 5 6
check_num "$p: no temporary file left" "$(tmp_files $p)" -eq 0
check "$p: the summary names the first and last files" \
	grep -q "to $n files, '$p.0001.data' to '$p.000$n.data'" rec.err
ledger $p >L
check "$p: every file reports (report -i FILE exits 0)" [ ! -e ledger.err ]
awk '$1 == "file" { print "# " $0 }' L
# Each file spans its own second, and ends where the next one starts.
check "$p: every file but the last spans exactly 1 s" \
	awk '$1 == "file" { f[++n] = $5 } END { for (i = 1; i < n; i++) if (f[i] != 1000000000) exit 1 }' L
check "$p: each file starts where the one before ended" \
	awk '$1 == "file" { if (n++ && $3 != end) exit 1; end = $4 }' L
for f in $(files $p); do
	dump "$f" "$f.d"
	last=$(files $p | tail -n 1)
	if [ "$f" = "$last" ]; then
		check "$f: the last file's summary says 'stop target-exited'" \
			grep -q ', stop target-exited, ' "$f.d"
	else
		check "$f: its summary says 'stop rotated'" grep -q ', stop rotated, ' "$f.d"
	fi
	# The state at its start: a THREAD record for every thread alive.
	[ "$f" = $p.0001.data ] ||
		check_num "$f: six THREAD records at its start" "$(count THREAD "$f.d")" -ge 6
	if [ "$p" = live ]; then
		check_num "$f: its samples are unwound (STACK_SAMPLE records)" \
			"$(count STACK_SAMPLE "$f.d")" -gt 100
		check "$f: it names its places (a NAMES block)" grep -q '^# place names saved' "$f.d"
	fi
	"$WALLPROF" report -q -i "$f" --format folded >"$f.folded" 2>/dev/null
	check "$f: the spinner's stack (wc_spin_leaf) is there" grep -q 'wc_spin_leaf' "$f.folded"
	check "$f: the sleeper's stack (wc_sleep_once) is there" grep -q 'wc_sleep_once' "$f.folded"
done
for name in $NAMES; do
	tid=$(wl_field wl.out "$name" tid)
	oncpu=$(wl_field wl.out "$name" oncpu_ns)
	if [ -z "$(lf "$tid" tid)" ]; then
		fail "$p: $name: thread $tid is in the reports"
		continue
	fi
	wall=$(lf "$tid" wall) on=$(lf "$tid" on) off=$(lf "$tid" off)
	check "$p: $name: named '$name' in the files" [ "$(lf "$tid" comm)" = "$name" ]
	check_num "$p: $name: in every file" "$(lf "$tid" files)" -eq "$n"
	check_num "$p: $name: its spans in consecutive files join exactly" "$(lf "$tid" gaps)" -eq 0
	check_num "$p: $name: the sum of on + off over the files is the sum of wall" \
		$((on + off)) -eq "$wall"
	check_num "$p: $name: the sum of wall is its whole life in the recording" \
		"$wall" -eq $(($(lf "$tid" last) - $(lf "$tid" first)))
	# Where the rings lost records around the thread (a loaded machine
	# starving the recorder), its report says it is approximate, and by
	# how much its on-CPU time may be off: the kernel's figures anchor
	# each file's span, but not the part of a file before its first
	# figure.  The sum over the files is within the sum of the bounds.
	if [ "$(lf "$tid" approx)" -gt 0 ]; then
		bound=$(lf "$tid" bound)
		_tol=$(max $((oncpu / 50)) 2000000)
		_d=$((on - oncpu)); [ "$_d" -lt 0 ] && _d=$((-_d))
		check_num "$p: $name: over the files, approximate in $(lf "$tid" approx) (records lost: $(awk '$1 == "file" { n += $6 } END { print n + 0 }' L)): on-CPU $on vs schedstat $oncpu: |diff| <= $_tol + the reports' bound $bound + steal $steal_ns" \
			"$_d" -le $((_tol + bound + steal_ns))
	else
		oncpu_ok "$p: $name: over the files" "$on" "$oncpu" "$steal_ns" \
			"$(wl_field wl.out "$name" slices)"
	fi
done
}
rotation out --unwind=report
rotation live --unwind=live

# 1b. A wait across the boundaries keeps its stack: sleep blocks for 3.5 s
# in one call; every later file begins with it off-CPU (its THREAD record
# says so) and gives its time to the stack it went off-CPU in.
for mode in raw live; do
	opt=--unwind=report
	[ "$mode" = live ] && opt=--unwind=live
	run out err "$WALLPROF" record -q "$opt" --rotate 1 -o "z$mode.data" -- sleep 3.5
	check_num "$mode: sleep 3.5 --rotate 1: record exits 0" "$rc" -eq 0
	for f in $(files "z$mode" | tail -n +2); do
		dump "$f" "$f.d"
		check "$mode: $f: the sleeper's THREAD record says it is off-CPU, blocked" \
			grep -q ' THREAD [0-9/]* off-cpu blocked$' "$f.d"
		"$WALLPROF" report -q -i "$f" --format folded --unit ns >"$f.folded" 2>/dev/null
		in_stack=$(awk '/clock_nanosleep;.*\[off-cpu:blocked\]/ { n += $NF } END { print n + 0 }' "$f.folded")
		all=$(awk '/\[off-cpu:blocked\]/ { n += $NF } END { print n + 0 }' "$f.folded")
		check_num "$mode: $f: its blocked time ($in_stack of $all ns) is in clock_nanosleep's stack" \
			$((in_stack * 100)) -ge $((all * 99))
		check_num "$mode: $f: and it has some" "$all" -gt 400000000
	done
done

# 1c. Threads that exited stay out of the later files: a thread's last
# switch-out comes after its EXIT (with -a, or a launched command's cgroup
# events), and must not bring it back to life in every file after (it
# did: 119 threads, 119 s of wall in a one-second file of two threads).
# The churn makes some 500 short threads and processes in its second; the
# files after it hold sh and sleep only.  The flight recorder keeps the
# same model for its file.
for how in rotate flight; do
	if [ "$how" = rotate ]; then
		opt="--rotate 1"
	else
		opt="--flight-recorder 1"
	fi
	# shellcheck disable=SC2086 # the option is two words
	run out err "$WALLPROF" record -q $opt -o "ch$how.data" -- \
		sh -c "'$WORKLOADS/churn' 1 500; exec sleep 2.8"
	check_num "churn --$how: record exits 0" "$rc" -eq 0
	# Files that begin a second and more after the churn ended.
	if [ "$how" = rotate ]; then
		late=$(files "ch$how" | sed -n '3,$p' | tr '\n' ' ')
	else
		late=$(files "ch$how")
	fi
	check "churn --$how: files after the churn (${late:-none})" [ -n "$late" ]
	for f in $late; do
		"$WALLPROF" report -q -i "$f" --format json >"$f.json" 2>"$f.err"
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = d["threads"]
print(len(t), sum(x["wall_ns"] for x in t) // 1000000,
      ",".join(sorted(set(x["comm"] or "?" for x in t))))' "$f.json" >"$f.t"
		read -r nr wall names <"$f.t"
		check_num "churn --$how: $f: only the threads alive then (sleep; got $names)" \
			"${nr:-99}" -le 2
		check_num "churn --$how: $f: their wall time, ms, at most two threads' whole file" \
			"${wall:-99999}" -le 2100
	done
done

# 2. An attached process: the names and mappings of what ran before the
# recording are in every file, not only the first.
"$WORKLOADS/wallclock" 6 >wl2.out &
wl=$!
bg_pids="$bg_pids $wl"
sleep 0.5
run out rec2.err "$WALLPROF" record -q --rotate 1 -d 3.5 -o att.data -p "$wl"
check_num "record -p --rotate 1 -d 3.5 exits 0" "$rc" -eq 0
n=$(files att | grep -c '' || true)
check_range "-p: 3.5 s in 1 s files: 4 files" "$n" 4 5
for f in $(files att); do
	"$WALLPROF" report -q -i "$f" --format folded >"$f.folded" 2>"$f.err"
	check "-p: $f: report exits 0" [ $? -eq 0 ]
	check "-p: $f: the spinner is named and its stack symbolized" \
		grep -q '^spinner;.*wc_spin_leaf' "$f.folded"
done
ledger att >L
wait "$wl"	# its threads tell their ids as they end
tid=$(wl_field wl2.out spinner tid)
check_num "-p: the spinner ($tid) is in every file" "$(lf "$tid" files)" -eq "$n"
check_num "-p: the spinner's spans join exactly" "$(lf "$tid" gaps)" -eq 0

# 2b. A quiet command (no record for seconds; -d 0: no limit): each file
# is complete on time all the same.
# (Timed from when record holds its events: a busy machine may take
# longer than that to start it.)
"$WALLPROF" record -q --rotate 1 -d 0 -o quiet.data -- sleep 3 >/dev/null 2>&1 &
wp=$!
bg_pids="$bg_pids $wp"
has_events() { ls -l "/proc/$wp/fd" 2>/dev/null | grep -q 'perf_event'; }
wait_until 600 has_events || fail "quiet: record opened its events within 60 s"
sleep 1.8
check "quiet: quiet.0001.data is complete 0.8 s after its end" [ -f quiet.0001.data ]
wait "$wp"
check_num "quiet: exit status 0" $? -eq 0
for f in $(files quiet); do
	run out err "$WALLPROF" report -i "$f"
	check_num "quiet: report -i $f exits 0" "$rc" -eq 0
done

# 3. SIGINT: the last file ends at the signal, complete; SIGKILL: the file
# being written stays under its temporary name, and report reads it.
# (The last file's samples are counted in --dump's raw SAMPLE lines:
# --unwind=report.  Timed from when record holds its events, as above:
# the signal comes half-way through the third file, however long a busy
# machine took to start the recording.)
"$WALLPROF" record -q --unwind=report --rotate 1 -o int.data -- "$WORKLOADS/spin" 30 >/dev/null 2>int.err &
wp=$!
bg_pids="$bg_pids $wp"
wait_until 600 has_events || fail "SIGINT: record opened its events within 60 s"
sleep 2.5
kill -INT "$wp"
wait "$wp"
check_num "SIGINT: exit status 130" $? -eq 130
last=$(files int | tail -n 1)
check "SIGINT: files written" [ -n "$last" ]
check_num "SIGINT: no temporary file left" "$(tmp_files int)" -eq 0
if [ -n "$last" ]; then
	dump "$last" d
	check "SIGINT: the last file's summary says 'stop signal'" grep -q ', stop signal, ' d
	check_num "SIGINT: cpu-clock samples in the last file" "$(samples cpu-clock d)" -gt 10
fi
# spin for 4 s only: nothing is left to end its workload after a SIGKILL.
"$WALLPROF" record -q --rotate 1 -o kill.data -- "$WORKLOADS/spin" 4 >/dev/null 2>&1 &
wp=$!
bg_pids="$bg_pids $wp"
wait_until 600 has_events || fail "SIGKILL: record opened its events within 60 s"
sleep 2.2
kill -KILL "$wp"
wait "$wp" 2>/dev/null
check "SIGKILL: the first file is complete" [ -f kill.0001.data ]
check_num "SIGKILL: one temporary file left" "$(tmp_files kill)" -eq 1
cut=$(ls -A | sed -n 's/^\.\(kill\.[0-9]*\.data\)\.wallprof-.*/\1/p' | head -n 1)
run out err "$WALLPROF" report -i "$cut" --format folded
check_num "SIGKILL: report -i $cut reads its temporary file, exit 0" "$rc" -eq 0
check "SIGKILL: and shows the spinning stack" grep -q 'spin' out

finish
