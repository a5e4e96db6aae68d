#!/bin/sh
# report-scale.sh: the text report of a recording of hundreds of processes
# fits on a screen: a single-thread process is one row, the table keeps
# its first rows (--threads) and counts in a last line what it leaves
# out, in numbers that add up with the JSON report's; --threads all,
# --by thread and --by comm.  Its stacks are compact, a line each, and the
# report's last line counts the stacks left out, whose times add up with
# the JSON report's stacks; --stacks full gives every frame.  And a
# system-wide recording read without --mode ranks stacks by on-CPU time: a
# spinner's stack comes first, not the blocked time of the machine's
# sleeping daemons.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

# table TEXT: the rows of the thread table (after its title line, up to
# the blank line), the line of what was left out included; not the lines
# under a process row that say who it was (names, cmdline).
table() {
	awk '/^(PID\/TID|TID|PROCS\/THR) / { t = 1; next } t && /^$/ { exit }
		t && /^ +(names|cmdline): / { next } t' "$1"
}
# rows TABLE: its rows, less the line of what was left out.
rows() { grep -v '^\.\.\. ' "$1"; }
# NS: an awk function, a time as the text report prints it in ns.
NS='function ns(s, m) {
	m = s ~ /ns$/ ? 1 : s ~ /us$/ ? 1e3 : s ~ /ms$/ ? 1e6 : 1e9
	sub(/[a-z]+$/, "", s)
	return s * m
}'
# colsum ROWS FIELD: the times of one column of the rows added up, in ns.
colsum() { awk "$NS"' { s += ns($'"$2"') } END { printf "%.0f\n", s }' "$1"; }
# jsum FIELD [COMM]: a field of the JSON report's threads (of COMM) added up.
jsum() {
	awk -F '\t' -v f="$1" -v c="${2:-}" 'c == "" || $3 == c { s += $f }
		END { printf "%.0f\n", s }' j.threads
}
# near NAME GOT WANT: within 0.2% and a microsecond (4 digits a row).
near() {
	_tol=$(($3 / 500 + 1000))
	_d=$(($2 - $3))
	[ $_d -lt 0 ] && _d=$((-_d))
	check_num "$1 ($2 ns, want $3 ns)" "$_d" -le "$_tol"
}

# jgroups DATA: the JSON report's stacks (one per thread) added up by
# thread name, kind and frames, as the text report adds them up: lines of
# "ns<TAB>comm<TAB>kind<TAB>frames", the most time first.
KIND='{ k = $4 == "on-cpu" ? "on-CPU" : $4 }'
jgroups() {
	"$WALLPROF" report -i "$1" --format json --top 1000000 >"$1.all.json" 2>"$1.all.err"
	python3 "$J" stacks "$1.all.json" |
		awk -F '\t' "$KIND"' { ns[$3 "\t" k "\t" $7] += $5 }
			END { for (s in ns) printf "%.0f\t%s\n", ns[s], s }' |
		sort -t "$(printf '\t')" -k1,1nr
}
# STACK: the first line of a stack in the text report, full or compact.
STACK='^ *[0-9.]+% +~?[0-9.]+[mun]?s +(on-CPU|blocked|preempted|runnable) '
# same_stacks WHAT TEXT GROUPS: the stacks of the text report TEXT are the
# first of GROUPS (jgroups), in order, each with its time.
same_stacks() {
	grep -E "$STACK" "$2" | awk '{ sub(/^~/, "", $2); print $2, $3, $4 }' >"$2.got"
	_i=0
	while read -r _t _kind _comm; do
		_i=$((_i + 1))
		_w=$(sed -n "${_i}p" "$3" | awk -F '\t' '{ print $1, $3, $2 }')
		check "$1: stack $_i is the JSON's ($_kind $_comm, ${_w%% *} ns)" \
			[ "$_kind $_comm" = "${_w#* }" ]
		near "$1: stack $_i's time" \
			"$(echo "$_t" | awk "$NS"' { printf "%.0f", ns($1) }')" "${_w%% *}"
	done <"$2.got"
}

# --- 300 short-lived processes ---------------------------------------------
run rec.out rec.err "$WALLPROF" record -q -o S -- \
	sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done'
check_num "300 processes: record exits 0" "$rc" -eq 0
run j.json j.err "$WALLPROF" report -i S --format json
check_num "json: exit 0" "$rc" -eq 0
python3 "$J" threads j.json >j.threads
nth=$(grep -c . j.threads)
nproc=$(cut -f1 j.threads | sort -u | grep -c .)
sh_pid=$(awk -F '\t' '$3 == "sh" { print $1; exit }' j.threads)
ntrue=$(awk -F '\t' '$3 == "true"' j.threads | grep -c .)
check_num "json: every process (sh and 300 true) is there" "$nproc" -ge 301
check_num "json: 300 'true'" "$ntrue" -eq 300
check_num "json: every thread, every process, whatever the text shows" "$nth" -eq "$nproc"

run t.txt t.err "$WALLPROF" report -i S --mode wall
check_num "text: exit 0" "$rc" -eq 0
# (The '#' lines say what the recording is and how good: a loaded machine
# adds some, such as the switch-ins sched_switch did not time; the stacks
# have a line more each for their wakers.)
check_num "text: the table and the stacks in under 55 lines" "$(grep -vc '^#' t.txt)" -lt 55
check_num "text: the whole report in under 70 lines" "$(nlines t.txt)" -lt 70
grep '^#' t.txt | cut -c 1-100 | sed 's/^/# quality line: /'
last_line=$(tail -n 1 t.txt)
check "text: the last line counts the stacks left out ($last_line)" \
	sh -c "echo '$last_line' | grep -Eq '^\.\.\. and [0-9]+ more stacks? \([0-9.]+[mun]?s\); --top [0-9]+ shows them, --stacks full every frame\$'"
table t.txt >t.table
rows t.table >t.rows
last=$(tail -n 1 t.table)
check "text: the table ends with the line of what it left out ($last)" \
	grep -Eq '^\.\.\. and [0-9]+ more threads in [0-9]+ processes \([0-9.]+[mun]?s wall, [0-9.]+[mun]?s on-CPU\)$' \
	t.table
shown=$(grep -c . t.rows)
more=$(echo "$last" | awk '{ print $3 }')
more_procs=$(echo "$last" | awk '{ print $7 }')
check_num "text: 24 rows by default" "$shown" -eq 24
check_num "text: rows + left out = every thread ($shown + $more)" $((shown + more)) -eq "$nth"
check_num "text: one row per process, + left out = every process" \
	$((shown + more_procs)) -eq "$nproc"
check "text: no thread rows under single-thread processes" no_match '^  [0-9]' t.rows
check_num "text: the single-thread sh is one row" \
	"$(grep -Ec "^$sh_pid +sh " t.rows)" -eq 1
want=$(sort -t "$(printf '\t')" -k4,4nr -k1,1n j.threads | head -n 24 | cut -f1 | tr '\n' ' ')
got=$(awk '{ printf "%s ", $1 }' t.rows)
check "text: the rows are the 24 processes of most wall time, in order" [ "$got" = "$want" ]
rest_wall=$(echo "$last" | sed 's/.*(\([^ ]*\) wall.*/\1/' | awk "$NS"' { printf "%.0f\n", ns($1) }')
rest_on=$(echo "$last" | sed 's/.*wall, \([^ ]*\) on-CPU.*/\1/' | awk "$NS"' { printf "%.0f\n", ns($1) }')
near "text: wall of the rows + left out = of every thread in json" \
	$(($(colsum t.rows 3) + rest_wall)) "$(jsum 4)"
near "text: on-CPU of the rows + left out = of every thread in json" \
	$(($(colsum t.rows 4) + rest_on)) "$(jsum 5)"

# The compact stacks: a line each, in the order and with the times of
# the JSON report's stacks (one per thread) added up over the threads of
# a name; what they leave out is the rest of them.
jgroups S >j.groups
grep -E "$STACK" t.txt >t.stacks
check_num "compact: the --top 10 stacks, a line each" "$(nlines t.stacks)" -eq 10
check "compact: no frame lines" no_match '^ {19}[^ 0-9]' t.txt
check "compact: its wakers a line each, no stacks under them" \
	grep -Eq '^ +[0-9.]+% woken by true, [0-9]+ times, [0-9.]+[mun]?s(;|$)' t.txt
same_stacks compact t.txt j.groups
ngroups=$(nlines j.groups)
more_stacks=$(echo "$last_line" | awk '{ print $3 }')
check_num "compact: shown + left out = every stack of the JSON ($ngroups)" \
	$((10 + more_stacks)) -eq "$ngroups"
check "compact: --top N in the last line is every stack" \
	sh -c "echo '$last_line' | grep -q -- '--top $ngroups shows them'"
rest_stacks=$(echo "$last_line" | sed 's/.*stacks (\([^)]*\)).*/\1/' |
	awk "$NS"' { printf "%.0f\n", ns($1) }')
near "compact: the time left out is the JSON's other stacks'" "$rest_stacks" \
	"$(tail -n +11 j.groups | awk '{ s += $1 } END { printf "%.0f\n", s }')"
total=$(sed -n 's/^Top stacks by wall time (\([^ ]*\) in all):$/\1/p' t.txt |
	awk "$NS"' { printf "%.0f\n", ns($1) }')
near "compact: the title's total is every JSON stack's" "${total:-0}" \
	"$(awk '{ s += $1 } END { printf "%.0f\n", s }' j.groups)"
# Who woke whom: three lines, then the pairs left out, which --top shows.
pairs() { awk '/^WAITING / { t = 1; next } t && /^$/ { exit } t' "$1"; }
pairs t.txt >t.pairs
check_num "compact: who woke whom has 3 lines and what it leaves out" \
	"$(grep -c '^[0-9]' t.pairs)" -eq 3
more_pairs=$(sed -n 's/^\.\.\. and \([0-9]*\) more pairs (.* blocked); --top \([0-9]*\) shows them$/\1 \2/p' t.pairs)
check "compact: ... and N more pairs; --top M shows them" [ -n "$more_pairs" ]
check "compact: the quality lines come before the table" \
	[ "$(grep -n '^# quality' t.txt | cut -d: -f1)" -lt "$(grep -n '^PID/TID' t.txt | cut -d: -f1)" ]

run f.txt f.err "$WALLPROF" report -i S --mode wall --stacks full --top "${more_pairs#* }"
check_num "--stacks full: exit 0" "$rc" -eq 0
check "--stacks full: every frame, a line each" grep -Eq '^ {19}__GI___wait4$' f.txt
check "--stacks full: the wakers' frames" grep -Eq '^ {25}try_to_wake_up \[k\]$' f.txt
check "--stacks full: ends with the quality lines" sh -c "tail -n 1 f.txt | grep -q '^# '"
check "--stacks full: no line of stacks left out" no_match '^\.\.\. and [0-9]+ more stacks?' f.txt
pairs f.txt >f.pairs
check_num "--stacks full --top M: every pair of who woke whom" \
	"$(grep -c '^[0-9]' f.pairs)" -eq $((3 + ${more_pairs%% *}))
run f10.txt f.err "$WALLPROF" report -i S --mode wall --stacks full
grep -E "$STACK" f10.txt >f10.stacks
check "--stacks full: the same stacks as compact, with the same times" \
	[ "$(awk '{ print $1, $2, $3, $4 }' f10.stacks)" = "$(awk '{ print $1, $2, $3, $4 }' t.stacks)" ]

run all.txt all.err "$WALLPROF" report -i S --mode wall --threads all
table all.txt >all.table
check_num "--threads all: a row for every thread" "$(grep -c . all.table)" -eq "$nth"
check "--threads all: no line of what was left out" no_match '^\.\.\. ' all.table
check "--threads all: the rows are every process of the json" \
	[ "$(awk '{ print $1 }' all.table | sort -n | tr '\n' ' ')" = \
	  "$(cut -f1 j.threads | sort -n | tr '\n' ' ')" ]

run t5.txt t5.err "$WALLPROF" report -i S --mode wall --threads 5
table t5.txt >t5.table
check_num "--threads 5: 5 rows" "$(rows t5.table | grep -c .)" -eq 5
check "--threads 5: and $((nth - 5)) more threads in $((nproc - 5)) processes" \
	grep -q "^\.\.\. and $((nth - 5)) more threads in $((nproc - 5)) processes (" t5.table

run c.txt c.err "$WALLPROF" report -i S --mode wall --by comm
table c.txt >c.table
check "--by comm: titled PROCS/THR" grep -q '^PROCS/THR COMM ' c.txt
check "--by comm: one row 300/300 true" grep -Eq '^300/300 +true ' c.table
check "--by comm: one row 1/1 sh" grep -Eq '^1/1 +sh ' c.table
grep -E ' true ' c.table >c.true
near "--by comm: the wall of 'true' is its processes' in json" "$(colsum c.true 3)" \
	"$(jsum 4 true)"
near "--by comm: its on-CPU time too" "$(colsum c.true 4)" "$(jsum 5 true)"
run c1.txt c1.err "$WALLPROF" report -i S --mode wall --by comm --threads 1
table c1.txt >c1.table
n1=$(rows c1.table | awk '{ split($1, a, "/"); print a[2] }')
check "--by comm --threads 1: one row, and 1 more name holding the other threads" \
	grep -q "^\.\.\. and 1 more name: $((nth - ${n1:-0})) threads in" c1.table

run th.txt th.err "$WALLPROF" report -i S --mode wall --by thread
table th.txt >th.table
check "--by thread: titled TID" grep -q '^TID  ' th.txt
check_num "--by thread: 24 rows" "$(rows th.table | grep -c .)" -eq 24
check "--by thread: and $((nth - 24)) more threads" \
	grep -q "^\.\.\. and $((nth - 24)) more threads in $((nproc - 24)) processes (" th.table

# --- a process of several threads: the busiest three first, then more ------
run wl.out rec.err "$WALLPROF" record -q -o W -- "$WORKLOADS/wallclock" 0.3
check_num "wallclock: record exits 0" "$rc" -eq 0
run w.txt w.err "$WALLPROF" report -i W --mode wall
table w.txt >w.table
check_num "wallclock: the process and its 6 threads in the default table" \
	"$(grep -c . w.table)" -eq 7
check "wallclock: a few threads, full stacks: every frame, a line each" \
	grep -Eq '^ {19}wc_spin_leaf$' w.txt
check "wallclock: no line of stacks left out" no_match '^\.\.\. .* stacks' w.txt
run wc.txt w.err "$WALLPROF" report -i W --mode wall --stacks compact
check "wallclock --stacks compact: a line a stack" \
	grep -Eq ' (on-CPU|preempted) +spinner +wc_spin_leaf( |$)' wc.txt
check "wallclock --stacks compact: no frame lines" no_match '^ {19}wc_spin_leaf$' wc.txt
check "wallclock --stacks compact: ends with the stacks left out" \
	sh -c "tail -n 1 wc.txt | grep -Eq '^\.\.\. and [0-9]+ more stacks?'"
run w3.txt w3.err "$WALLPROF" report -i W --mode wall --threads 3
table w3.txt >w3.table
check "--threads 3: the process row, 2 threads, and 4 more threads in 1 process" \
	[ "$(grep -Ec '^[0-9]' w3.table) $(grep -Ec '^  [0-9]' w3.table)" = "1 2" ]
check "--threads 3: ... and 4 more threads in 1 process" \
	grep -q '^\.\.\. and 4 more threads in 1 process (' w3.table

# --- two processes of the same threads: stacks add up by thread name ------
# (locker and locker2 run the same code: their stacks are the same ones.)
run w2.out rec.err "$WALLPROF" record -q -o W2 -- \
	sh -c "$WORKLOADS/wallclock 0.3 & $WORKLOADS/wallclock 0.3; wait"
check_num "two wallclocks: record exits 0" "$rc" -eq 0
jgroups W2 >w2.groups
run w2.txt w2.err "$WALLPROF" report -i W2 --mode wall
same_stacks "two wallclocks" w2.txt w2.groups

# --- -a: the machine's time is on-CPU time ---------------------------------
if ! "$WALLPROF" record -q -o probe.data -a -d 0.1 2>probe.err; then
	skip "-a is not allowed here: $(head -n 1 probe.err)"
fi
# Two spinners, so that they stand out even with other tests running.
"$WORKLOADS/spin" 3.5 >spin1.out &
bg_pids="$bg_pids $!"
"$WORKLOADS/spin" 3.5 >spin2.out &
bg_pids="$bg_pids $!"
sleep 0.3
run a.out a.err "$WALLPROF" record -q -o A -a -d 2
check_num "-a: record exits 0" "$rc" -eq 0
wait
# (Compact when the machine ran more than 24 threads meanwhile, which
# depends on what else ran: --stacks compact says so for the check.)
run a.txt a.err "$WALLPROF" report -i A --stacks compact
check_num "-a: report exits 0" "$rc" -eq 0
check "-a: the header says which defaults apply" grep -q '^# -a defaults: threads and stacks by on-CPU time' a.txt
check "-a: stacks by on-CPU time" grep -q '^Top stacks by on-CPU time' a.txt
# (Other work beside may run more than the spinners: their stack is
# among the top ones, and the top ones come by on-CPU time, most first.)
awk '/^Top stacks/ { t = 1; next } t && /^ *[0-9.]+%/ { print } t && /^$/ { exit }' a.txt >a.top
check "-a: compact, the spinners' on-CPU stack is among the top stacks" \
	grep -Eq ' on-CPU +spinner +spin_leaf( |$)' a.top
check "-a: compact, the top stacks come by on-CPU time, most first ($(head -n 1 a.top))" \
	awk '{ p = $1 + 0 } NR > 1 && p > last + 0.005 { bad = 1 } { last = p } END { exit bad }' a.top
check "-a: the last line counts the waits left out" \
	sh -c "tail -n 1 a.txt | grep -Eq '^\.\.\. (and [0-9]+ more stacks?|every stack is shown)'"
check "-a: then the waits of busy threads" grep -q '^Waits of threads on-CPU 10%+ of their time' a.txt
check_num "-a: the table is cut too, idle threads folded in 5 places and the rest" \
	"$(table a.txt | grep -c .)" -le 36
run aw.txt aw.err "$WALLPROF" report -i A --mode wall
check "-a --mode wall: stacks by wall time" grep -q '^Top stacks by wall time' aw.txt
check "-a --mode wall: no -a defaults" no_match '^(# -a defaults|Waits of)' aw.txt
finish
