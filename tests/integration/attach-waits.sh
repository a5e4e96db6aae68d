# attach-waits.sh: a thread asleep since before the recording shows where
# it waits.  Attached (or with -a), a thread that never wakes while the
# recording runs makes no switch-out, so the recording would hold no
# stack of its wait; record reads, as it attaches, where each sleeping
# thread waits (its system call's stack and instruction pointers, its
# stack memory) and report unwinds that like a switch-out sample.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
[ "$(id -u)" -eq 0 ] || skip "reading another process's stack needs the right to trace it: run as root"
J="$TESTS_SRCDIR/integration/report-json.py"

# A process asleep in nanosleep all along, and a multi-threaded one whose
# main thread waits in pthread_join from before the attach to its end.
sleep 30 &
sl=$!
bg_pids="$bg_pids $sl"
"$WORKLOADS/wallclock" 3 >wc.out 2>&1 &
wl=$!
bg_pids="$bg_pids $wl"
# (Its threads are made at once; the main thread joins them then.)
sleep 0.5

# waited PID TID FILE: the frames of TID's longest blocked stack in FILE's JSON report.
waited() {
	python3 "$J" stacks "$3" | awk -F '\t' -v p="$1" -v t="$2" \
		'$1 == p && $2 == t && $4 == "blocked" && $5 > best { best = $5; f = $7 }
		 END { print f }'
}
# share PID TID FILE: that stack's per mille of the thread's wall time.
share() {
	python3 "$J" threads "$3" >"$3.threads"
	python3 "$J" stacks "$3" | awk -F '\t' -v p="$1" -v t="$2" -v w="$(awk -F '\t' \
		-v p="$1" -v t="$2" '$1 == p && $2 == t { print $4 }' "$3.threads")" \
		'$1 == p && $2 == t && $4 == "blocked" && $5 > best { best = $5 }
		 END { printf "%d", w ? best * 1000 / w : 0 }'
}

run rec.out rec.err "$WALLPROF" record -q -o W.data -p "$sl,$wl" -d 0.5
check_num "record -p: exits 0" "$rc" -eq 0
run W.json W.jerr "$WALLPROF" report -i W.data --format json --threads all --top 1000
check_num "report: exits 0" "$rc" -eq 0
frames=$(waited "$sl" "$sl" W.json)
echo "# sleep's wait: $frames"
check "the sleeping process waits in nanosleep" sh -c "echo '$frames' | grep -q nanosleep"
check_num "for the whole recording: its wait's share of its wall time, per mille" \
	"$(share "$sl" "$sl" W.json)" -ge 900
frames=$(waited "$wl" "$wl" W.json)
echo "# the workload's main thread's wait: $frames"
check "the main thread waits in main, joining its threads" sh -c "echo '$frames' | grep -q ';main'"
"$WALLPROF" report --dump -i W.data 2>/dev/null | grep "THREAD .*/$sl\b" | sed 's/^/# /'
check "the file says it was off-CPU at the start" \
	sh -c "'$WALLPROF' report --dump -i W.data 2>/dev/null | grep -q 'THREAD .*$sl/$sl.*off-cpu blocked'"

# With frame pointers /proc gives too little to walk the stack: the wait
# is one since before the recording, said so, not a stackless mystery.
run rec.out rec.err "$WALLPROF" record -q -g fp -o F.data -p "$sl" -d 0.3
check_num "record -g fp -p: exits 0" "$rc" -eq 0
run F.txt F.err "$WALLPROF" report -i F.data --mode wall
check "-g fp: the wait is named for what it is" grep -q '\[waiting since before the recording\]' F.txt

# -a: the same for every thread of the machine (the sleeper among them).
run rec.out rec.err "$WALLPROF" record -q -a -o A.data -d 0.3
check_num "record -a: exits 0" "$rc" -eq 0
run A.json A.jerr "$WALLPROF" report -i A.data --format json --threads all --top 100000
check_num "report -a: exits 0" "$rc" -eq 0
frames=$(waited "$sl" "$sl" A.json)
check "-a: the sleeping process waits in nanosleep ($frames)" sh -c "echo '$frames' | grep -q nanosleep"
python3 "$J" invariants A.json >inv.txt
check "-a: the report's invariants hold" [ ! -s inv.txt ]
sed 's/^/# /' inv.txt | head -n 5
kill "$sl" 2>/dev/null
wait "$wl" 2>/dev/null
finish
