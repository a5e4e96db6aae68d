# report-formats.sh: every output format and option of `wallprof report`
# on one recording of the wallclock workload: each run exits 0 and says
# nothing on stderr; folded output passes a strict parser
# (folded-parse.awk); JSON is valid and has the documented keys; the
# filters select the same threads in every format; the figures of one
# format agree with those of another.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
PARSE="$TESTS_SRCDIR/integration/folded-parse.awk"
NAMES='spinner sleeper locker locker2 reader'

# Short, for the many reports of it below.
record_wallclock 0.7
pid=$(wl_field wl.out spinner pid)
spinner=$(wl_field wl.out spinner tid)
reader=$(wl_field wl.out reader tid)
locker=$(wl_field wl.out locker tid)
locker2=$(wl_field wl.out locker2 tid)

# report OUT ARGS...: `wallprof report -i F ARGS... >OUT`: exit 0, some
# output, nothing on stderr.
report() {
	_o=$1; shift
	run "$_o" "$_o.err" "$WALLPROF" report -i F "$@"
	if [ "$rc" -eq 0 ] && [ -s "$_o" ] && [ ! -s "$_o.err" ]; then
		ok "report $*: exit 0, output, nothing on stderr"
	else
		fail "report $*: exit 0 (got $rc), output ($(nlines "$_o") lines), nothing on stderr"
		head -n 3 "$_o.err"
	fi
}
# folded_ok FILE ARGS...: FILE passes the strict parser (ARGS: awk -v settings).
folded_ok() {
	_fo_f=$1; shift
	_fo_n=$#
	for _fo_a; do set -- "$@" -v "$_fo_a"; done
	shift "$_fo_n"
	awk "$@" -f "$PARSE" "$_fo_f"
}
# roots FOLDED: the root frames, sorted, one line.
roots() { cut -d';' -f1 "$1" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# sum_by_root FOLDED: "ROOT TOTAL" per root, sorted.
sum_by_root() {
	awk '{ split($0, f, ";"); s[f[1]] += $NF } END { for (r in s) printf "%s %.0f\n", r, s[r] }' \
		"$1" | sort
}
# jthreads JSON FIELD...: the threads' FIELDs (names as in report-json.py
# but short: pid tid comm wall on off blocked preempted vol invol samples
# approximate start end runnable wakeups), one thread a line, sorted by tid.
jthreads() {
	_j=$1; shift
	python3 "$J" threads "$_j" | awk -F '\t' -v want="$*" 'BEGIN {
		split("pid tid comm wall on off blocked preempted vol invol samples approximate start end runnable wakeups", n, " ")
		for (i in n) col[n[i]] = i
		nw = split(want, w, " ")
	} { l = ""; for (i = 1; i <= nw; i++) l = l (i > 1 ? " " : "") $col[w[i]]; print l }' |
		sort -n
}
# by_name JSON FIELD: "COMM VALUE" lines, sorted.
by_name() { jthreads "$1" comm "$2" | sort; }
# tids TEXT: the thread lines' TIDs of a text report, sorted, one line.
text_tids() { awk '/^  [0-9]+ / { print $1 }' "$1" | sort -n | tr '\n' ' ' | sed 's/ $//'; }

all_roots="wallclock $NAMES"
all_roots_re=$(echo "$all_roots" | tr ' ' '|')

# Every format, default options; the text's table with a row for every
# thread too (by default idle ones are folded).
report t0.txt
report t.txt --threads all
report h.txt --format hist
report f.folded --format folded
report j.json --format json
check "folded: strict parse, thread roots" folded_ok f.folded "roots=$all_roots_re"
check "json: valid, with the documented keys" python3 "$J" check j.json
# Recorded as root, wake-ups split the off-CPU time four ways; else three.
wk=$(python3 "$J" header j.json | awk -F '\t' '$1 == "wakeups" { print $2 }')
echo "# wake-ups recorded: $wk"
if [ "$wk" = true ]; then
	width=89 nhist=4
	check "text: a RUNNABLE column" grep -q '^PID/TID .* RUNNABLE ' t.txt
	check "text: who woke whom" grep -q '^Who woke whom' t.txt
else
	width=80 nhist=3
	check "text: no RUNNABLE column" sh -c '! grep -q RUNNABLE t.txt'
	check "text: the footer says wake-ups were not recorded" \
		grep -q '^# wake-ups were not recorded' t.txt
fi
jthreads j.json tid >j.tids
jthreads j.json tid comm >j.comms
check_num "json: the workload's six threads" "$(nlines j.tids)" -eq 6
check "folded: a root for each thread" [ "$(roots f.folded)" = "$(echo "$all_roots" | tr ' ' '\n' |
	sort | tr '\n' ' ' | sed 's/ $//')" ]
check "text: a line for each thread" [ "$(text_tids t.txt)" = "$(tr '\n' ' ' <j.tids | sed 's/ $//')" ]

# text: the thread table fits in 80 columns (89 with its RUNNABLE column).
wide=$(awk -v w=$width '/^PID\/TID/ { t = 1 } t && /^$/ { t = 0 } t && length($0) > w' t.txt t0.txt)
check "text: the thread table fits in $width columns" [ -z "$wide" ]
[ -z "$wide" ] || printf '%s\n' "$wide"

# hist: each histogram's buckets add up to its number of intervals.
# hist_ok HIST: prints the bad ones.
hist_ok() {
	awk '/ intervals, / { if (title != "" && sum != n) bad = bad title " (" sum " != " n ") "
			title = $0; sub(/:.*/, "", title); n = $(NF - 4) + 0; sum = 0; next }
		/^ *[0-9.]+[mun]?s -> [0-9.]+[mun]?s : +[0-9]+ / { sum += $5 }
		END { if (title != "" && sum != n) bad = bad title " (" sum " != " n ")"
			if (bad != "") { print bad; exit 1 } }' "$1"
}
check "hist: bucket counts add up to the intervals" hist_ok h.txt
check "hist: $nhist histograms" [ "$(grep -c ' intervals, ' h.txt)" -eq $nhist ]
check "hist: '# 6 threads'" grep -qx '# 6 threads' h.txt
report hp.txt --format hist --per-thread
check "hist --per-thread: bucket counts add up" hist_ok hp.txt
check_num "hist --per-thread: a section per thread" "$(grep -c '^# thread ' hp.txt)" -eq 6
# Per thread, the counts follow from the switches: an off-CPU interval per
# switch-out, plus the wait from creation to the first run; an on-CPU slice
# per switch-in; a wake-up latency per wake-up (and that first wait).
jthreads j.json tid vol invol wakeups >j.switches
bad=$(awk -v wk="$wk" 'NR == FNR { vol[$1] = $2; invol[$1] = $3; wakes[$1] = $4; next }
	/^# thread / { tid = $3; next }
	/ intervals, / { n = $(NF - 4); k = $1
		want = (k == "on-CPU" || k == "off-CPU") ? vol[tid] + invol[tid] + 1 :
			k == "wake-up" ? wakes[tid] + 1 : invol[tid] + (wk == "true" ? 0 : 1)
		d = n - want; if (d < -1 || d > 1) print tid, $0, "want", want }' j.switches hp.txt)
check "hist --per-thread: intervals match each thread's switches (+-1)" [ -z "$bad" ]
[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 5
# Each thread's on-CPU slices, as the switch records time them, add up to
# its on-CPU time but for the anchoring to the kernel's figures; where they
# are over 1% off it, the histogram says the kernel's figure (within its
# four digits), and where they are within it, says nothing.
jthreads j.json tid on >j.on
bad=$(awk 'function ns(v) { return v ~ /ns$/ ? v + 0 : v ~ /us$/ ? v * 1e3 : v ~ /ms$/ ? v * 1e6 : v * 1e9 }
	NR == FNR { on[$1] = $2; next }
	/^# thread / { tid = $3; want = got = 0; next }
	/^on-CPU slices/ { slices = ns($(NF - 2)); d = slices - on[tid]; if (d < 0) d = -d
		want = d * 100 > on[tid]; got = 0
		# The slices show four digits: within their rounding of 1%, either.
		if (d * 100 - on[tid] <= slices * 0.05 + 100 && on[tid] - d * 100 <= slices * 0.05 + 100)
			want = -1
		next }
	/^  as the switch records time them/ { got = 1; k = ns($(NF - 3))
		e = k - on[tid]; if (e < 0) e = -e; if (e > on[tid] / 500 + 1) print tid, "says", $(NF - 3), "on", on[tid] }
	/^ +length : / && tid != "" { if (want >= 0 && want != got) print tid, "note", got, "want", want, "slices", slices, "on", on[tid]; tid = "" }' \
	j.on hp.txt)
echo "# hist --per-thread: $(grep -c '^  as the switch records time them' hp.txt) threads' slices over 1% off their on-CPU time"
check "hist --per-thread: the kernel's on-CPU figure said where the slices are over 1% off it" [ -z "$bad" ]
[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 5
# The whole is the sum of the threads.
for k in on-CPU off-CPU preemption $([ "$wk" = true ] && echo wake-up); do
	all=$(awk -v k="$k" '$1 == k { print $(NF - 4) }' h.txt)
	sum=$(awk -v k="$k" '$1 == k { s += $(NF - 4) } END { print s + 0 }' hp.txt)
	check_num "hist: $k intervals are the sum of the threads'" "${all:-x}" -eq "$sum"
done

# --mode: folded lines carry the right markers, weights add up to the
# right times; JSON stacks are of the right kinds; hist shows the right
# histograms.
report fw.folded --format folded --unit ns
for mode in on off blocked preempted $([ "$wk" = true ] && echo runnable); do
	report "m$mode.folded" --format folded --mode $mode --unit ns
	check "--mode $mode: folded strict parse" folded_ok "m$mode.folded" "roots=$all_roots_re" \
		"mode=$mode"
	report "m$mode.json" --format json --mode $mode --top 1000
	kinds=$(python3 "$J" stacks "m$mode.json" | cut -f 4 | sort -u | tr '\n' ' ')
	case $mode in
	on) want='on-cpu ' field=on ;;
	off) want='blocked preempted ' field=off ;;
	blocked) want='blocked ' field=blocked ;;
	preempted) want='preempted ' field=preempted ;;
	runnable) want='runnable ' field=runnable ;;
	esac
	[ "$mode $wk" = "off true" ] && want='blocked preempted runnable '
	check "--mode $mode: JSON stacks of kinds '$want' (got '$kinds')" [ "$kinds" = "$want" ]
	# Per thread, the folded weights (ns) are the JSON thread's time.
	bad=$(jthreads j.json comm "$field" | sort | join -a 1 - "$(sum_by_root "m$mode.folded" >s.$mode; echo s.$mode)" |
		awk '$2 != ($3 == "" ? 0 : $3) { print }')
	check "--mode $mode: each thread's folded weights add up to its $field time" [ -z "$bad" ]
	[ -z "$bad" ] || printf '# comm json folded: %s\n' "$bad"
	report "m$mode.hist" --format hist --mode $mode
	titles=$(awk '/ intervals, / { printf "%s ", $1 }' "m$mode.hist")
	case $mode in
	on) want='on-CPU ' ;;
	off) want='off-CPU preemption ' ;;
	preempted) want='off-CPU preemption ' ;;
	blocked) want='off-CPU ' ;;
	runnable) want='off-CPU wake-up ' ;;
	esac
	[ "$mode $wk" = "off true" ] && want='off-CPU wake-up preemption '
	check "--mode $mode: hist shows '$want' (got '$titles')" [ "$titles" = "$want" ]
done
report moff.txt --mode off
check "--mode: on + off folded weights are the wall ones" [ \
	"$(cat mon.folded moff.folded | sort | cmp - "$(sort fw.folded >fws; echo fws)" && echo same)" = same ]
bad=$(jthreads j.json comm wall | sort | join - "$(sum_by_root fw.folded >s.wall; echo s.wall)" |
	awk '$2 != $3')
check "--mode wall: each thread's folded weights add up to its wall time" [ -z "$bad" ]

# --sort: the thread lines of the text table in the order of the key.
for key in wall on off blocked preempted tid $([ "$wk" = true ] && echo runnable); do
	report "s$key.txt" --sort $key --threads all
	case $key in
	tid) want=$(jthreads j.json tid | tr '\n' ' ') ;;
	*) want=$(jthreads j.json tid "$key" | sort -k2,2nr -k1,1n | cut -d' ' -f1 | tr '\n' ' ') ;;
	esac
	got=$(awk '/^  [0-9]+ / { printf "%s ", $1 }' "s$key.txt")
	check "--sort $key: threads in the order $want(got $got)" [ "$got" = "$want" ]
done

# --unit: weights are the nanoseconds rounded to the unit; lines that round
# to 0 are left out; us is the default.
report fus.folded --format folded --unit us
report fms.folded --format folded --unit ms
check "--unit us is the default" cmp -s fus.folded f.folded
for u in us:1000 ms:1000000; do
	name=${u%:*} div=${u#*:}
	check "--unit $name: strict parse" folded_ok "f$name.folded" "roots=$all_roots_re"
	bad=$(awk -v d="$div" 'NR == FNR { w = $NF; sub(/ [0-9]+$/, ""); ns[$0] = w; next }
		{ w = $NF; sub(/ [0-9]+$/, ""); want = int((ns[$0] + d / 2) / d)
		  if (!($0 in ns) || w != want) print $0, w, "want", want; seen[$0] = 1 }
		END { for (s in ns) if (!(s in seen) && int((ns[s] + d / 2) / d) > 0) print "missing", s }' \
		fw.folded "f$name.folded")
	check "--unit $name: each weight is the ns weight rounded" [ -z "$bad" ]
	[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 3
done

# --no-thread-root: no thread names as roots; the same stacks and weights
# once the roots are taken off (stacks of several threads merged).
report nr.folded --format folded --no-thread-root --unit ns
check "--no-thread-root: strict parse" folded_ok nr.folded "roots=$all_roots_re" thread_root=0
a=$(awk '{ w = $NF; sub(/ [0-9]+$/, ""); sub(/^[^;]*;/, ""); s[$0] += w }
	END { for (k in s) printf "%s %.0f\n", k, s[k] }' fw.folded | sort)
b=$(sort nr.folded)
check "--no-thread-root: the stacks and weights without roots" [ "$a" = "$b" ]

# Filters: the same threads in every format.
# filtered NAME WANT_TIDS ARGS...: json, folded, text and hist --per-thread
# with ARGS show exactly the threads WANT_TIDS (sorted, space-separated).
filtered() {
	_n=$1 _want=$2; shift 2
	report "$_n.json" --format json "$@"
	report "$_n.folded" --format folded "$@"
	report "$_n.txt" --threads all "$@"
	report "$_n.hist" --format hist --per-thread "$@"
	_got=$(jthreads "$_n.json" tid | tr '\n' ' ' | sed 's/ $//')
	check "$*: json threads are $_want (got $_got)" [ "$_got" = "$_want" ]
	_names=$(for t in $_want; do awk -v t="$t" '$1 == t { print $2 }' j.comms; done |
		tr '\n' '|' | sed 's/|$//')
	check "$*: folded strict parse, roots only the selected threads ($_names)" \
		folded_ok "$_n.folded" "roots=$_names"
	_got=$(text_tids "$_n.txt")
	check "$*: text thread lines are $_want (got $_got)" [ "$_got" = "$_want" ]
	_got=$(awk '/^# thread / { print $3 }' "$_n.hist" | sort -n | tr '\n' ' ' | sed 's/ $//')
	check "$*: hist --per-thread sections are $_want (got $_got)" [ "$_got" = "$_want" ]
}
alltids=$(tr '\n' ' ' <j.tids | sed 's/ $//')
filtered pid "$alltids" --pid "$pid"
two=$(printf '%s\n' "$spinner" "$reader" | sort -n | tr '\n' ' ' | sed 's/ $//')
filtered tid "$two" --tid "$spinner,$reader"
check "--tid: folded roots are spinner and reader" [ "$(roots tid.folded)" = "reader spinner" ]
locks=$(printf '%s\n' "$locker" "$locker2" | sort -n | tr '\n' ' ' | sed 's/ $//')
filtered comm "$locks" --comm 'lock.*'
check "--comm 'lock.*': folded roots are the lockers" [ "$(roots comm.folded)" = "locker locker2" ]
report comm2.json --format json --comm locker
check "--comm locker (anchored): only the locker thread" [ "$(jthreads comm2.json tid)" = "$locker" ]
report nopid.json --format json --pid "$(no_pid)"
check_num "--pid of no thread in the recording: no threads" "$(jthreads nopid.json tid | grep -c .)" -eq 0

# --time: every thread's window inside the 0.4 s window; times still add up.
report w.json --format json --time 0.2,0.6
report w.folded --format folded --time 0.2,0.6 --unit ns
check "--time: folded strict parse" folded_ok w.folded "roots=$all_roots_re"
ws=$(python3 "$J" header w.json | awk -F '\t' '$1 == "window_start_ns" { print $2 }')
we=$(python3 "$J" header w.json | awk -F '\t' '$1 == "window_end_ns" { print $2 }')
check_num "--time 0.2,0.6: the window is 0.4 s" $((we - ws)) -eq 400000000
bad=$(jthreads w.json tid wall on blocked preempted start end runnable | awk -v ws="$ws" -v we="$we" '
	$2 > 400000000 || $2 != $3 + $4 + $5 + $8 || $6 < ws || $7 > we || $2 != $7 - $6')
check "--time 0.2,0.6: every thread: wall <= 0.4 s, = on + blocked + preempted + runnable, inside the window" \
	[ -z "$bad" ]
[ -z "$bad" ] || printf '# tid wall on blocked preempted start end runnable: %s\n' "$bad"
# (The spinner's life, in the whole report, may begin or end inside the
# window when the machine is busy: its wall is their overlap.)
set -- $(jthreads j.json tid start end | awk -v t="$spinner" '$1 == t { print $2, $3 }')
lap=$(( (${2:-0} < we ? ${2:-0} : we) - (${1:-0} > ws ? ${1:-0} : ws) ))
[ "$lap" -gt 0 ] || lap=0
check_num "--time 0.2,0.6: the spinner's wall is its life within the window" \
	"$(jthreads w.json tid wall | awk -v t="$spinner" '$1 == t { print $2 }')" -eq "$lap"
bad=$(jthreads w.json comm wall | sort | join - "$(sum_by_root w.folded >s.w; echo s.w)" | awk '$2 != $3')
check "--time 0.2,0.6: each thread's folded weights add up to its wall time in the window" [ -z "$bad" ]
[ -z "$bad" ] || printf '# comm json folded: %s\n' "$bad"
report w.txt --time 0.2,0.6
report w.hist --format hist --time 0.2,0.6
check "--time: hist buckets add up" hist_ok w.hist

# --min-block 5000: thread times unchanged; shorter off-CPU intervals lose
# their stacks, so the off-CPU weights shrink, but not the sleeper's and
# the reader's (10 and 20 ms waits).
report mb.json --format json --min-block 5000
report mb.folded --format folded --min-block 5000 --mode off --unit ns
check "--min-block: folded strict parse" folded_ok mb.folded "roots=$all_roots_re" mode=off allow_empty=1
check "--min-block: thread times unchanged" [ "$(jthreads mb.json tid wall on blocked preempted runnable)" = \
	"$(jthreads j.json tid wall on blocked preempted runnable)" ]
bad=$(jthreads j.json comm off | sort | join - "$(sum_by_root mb.folded >s.mb; echo s.mb)" | awk '$3 > $2')
check "--min-block: no thread's off-CPU weights exceed its off-CPU time" [ -z "$bad" ]
for n in sleeper reader; do
	off=$(by_name j.json off | awk -v n=$n '$1 == n { print $2 }')
	kept=$(awk -v n=$n '$1 == n { print $2 }' s.mb)
	check_num "--min-block 5000: $n keeps most of its off-CPU weight, percent" \
		$((${kept:-0} * 100 / (off + 1))) -ge 90
done
report mb.hist --format hist --min-block 5000

# -o FILE: the same output in the file, none on stdout.
for fmt in text folded json; do
	run o.out o.err "$WALLPROF" report -i F --format $fmt -o "out.$fmt"
	check_num "-o out.$fmt: exit 0" "$rc" -eq 0
	check_num "-o out.$fmt: nothing on stdout" "$(nlines o.out)" -eq 0
	case $fmt in text) ref=t0.txt ;; hist) ref=h.txt ;; folded) ref=f.folded ;; json) ref=j.json ;; esac
	check "-o out.$fmt: the same as on stdout" cmp -s "out.$fmt" "$ref"
done

# A recording that lost records (a one-page ring cannot hold a sample with
# its stack copy): threads marked approximate, "~" in the text table, which
# still fits in 80 columns; the times still add up.
run wl.lost rec.err "$WALLPROF" record -q -m 1 -o L -- "$WORKLOADS/wallclock" 0.3
check_num "record -m 1 exits 0" "$rc" -eq 0
run l.json l.err "$WALLPROF" report -i L --format json
check_num "lossy: report --format json exits 0" "$rc" -eq 0
check "lossy: valid JSON" python3 "$J" check l.json
lost=$(python3 "$J" header l.json | awk -F '\t' '$1 ~ /^lost_/ { s += $2 } END { print s + 0 }')
check_num "lossy: records lost (a sample with its stack copy never fits one page)" "$lost" -gt 0
check "lossy: every thread approximate" \
	[ "$(jthreads l.json approximate | sort -u)" = true ]
bad=$(jthreads l.json tid wall on blocked preempted runnable | awk '$2 != $3 + $4 + $5 + $6')
check "lossy: wall = on + blocked + preempted + runnable all the same" [ -z "$bad" ]
run l.txt l.err "$WALLPROF" report -i L
check_num "lossy: report exits 0" "$rc" -eq 0
check "lossy: thread lines end in ~" grep -Eq '^  [0-9]+ .* ~$' l.txt
check "lossy: a note explains the ~" grep -q '^~ approximate' l.txt
wide=$(awk -v w=$width '/^PID\/TID/ { t = 1 } t && /^$/ { t = 0 } t && length($0) > w' l.txt)
check "lossy: the thread table fits in $width columns" [ -z "$wide" ]
[ -z "$wide" ] || printf '%s\n' "$wide"

# A thread name with a quote, a backslash, a control character, a ';' and
# a byte that is not UTF-8 (the main thread is named after the program):
# JSON stays valid (UTF-8, escaped), folded keeps it one frame, quoted.
odd=$(printf 'q"b\\s\001;x\377')
cp "$WORKLOADS/sleeper" "./$odd" || exit 99
run wl.odd rec.err "$WALLPROF" record -q -o O -- "./$odd" 2 5
check_num "record of a program with an odd name exits 0" "$rc" -eq 0
run o.json o.err "$WALLPROF" report -i O --format json
check_num "odd name: report --format json exits 0" "$rc" -eq 0
check "odd name: valid JSON (UTF-8, escapes)" python3 "$J" check o.json
check "odd name: the name survives in JSON (up to the non-UTF-8 byte)" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="replace"))
sys.exit(not any(t["comm"].startswith("q\"b\\s\x01") for t in d["threads"]))' o.json
run o.folded o.err "$WALLPROF" report -i O --format folded
check_num "odd name: report --format folded exits 0" "$rc" -eq 0
check "odd name: folded strict parse" folded_ok o.folded
check "odd name: the root is one frame, quoted" grep -qF 'q"b\\s\001\073x\377;' o.folded

# A real flame graph tool, if there is one (nothing is installed for this).
fg=''
if command -v flamegraph.pl >/dev/null 2>&1; then
	fg=flamegraph.pl
	run fg.svg fg.err flamegraph.pl f.folded
	check_num "flamegraph.pl accepts the folded output" "$rc" -eq 0
	check "flamegraph.pl made an SVG" grep -q '<svg' fg.svg
	check "flamegraph.pl found nothing to complain about" no_match . fg.err
fi
sscope=''
for d in /usr/lib/node_modules/speedscope /usr/local/lib/node_modules/speedscope; do
	[ -d "$d" ] && sscope=$d
done
if [ -n "$sscope" ] && command -v node >/dev/null 2>&1; then
	fg="$fg speedscope"
	# speedscope's own importer for Brendan Gregg's format, if it ships one.
	imp=$(find "$sscope" -name 'bg-flamegraph*.js' 2>/dev/null | head -n 1)
	echo "# speedscope at $sscope, importer '${imp:-none}'"
fi
[ -n "$fg" ] || skip_check "a flame graph tool reads the folded output" "no flame graph tool"

finish
