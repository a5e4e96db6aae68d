# report-stacks.sh: the stacks of `wallprof report` name the functions that
# the wallclock workload's threads really were in, innermost last in folded
# output, with inlined and kernel frames marked; --no-kernel, --no-user,
# --grep and --lines do what they say; a too small stack copy shows as
# [truncated] stacks and a footer that says so.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test unwinding

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
SRC="$TESTS_SRCDIR/workloads/wallclock.c"

record_wallclock 1
spinner=$(wl_field wl.out spinner tid)
sleeper=$(wl_field wl.out sleeper tid)
reader=$(wl_field wl.out reader tid)

# report OUT ARGS...: `wallprof report -i F ARGS... >OUT`, checked to exit 0
# without a word on stderr.
report() {
	_o=$1; shift
	run "$_o" "$_o.err" "$WALLPROF" report -i F "$@"
	check_num "report $*: exit status" "$rc" -eq 0
	check_num "report $*: nothing on stderr" "$(nlines "$_o.err")" -eq 0
	[ "$rc" -eq 0 ] || head -n 3 "$_o.err"
}
# heaviest FOLDED [ROOT]: the line of FOLDED (of thread ROOT) with the largest weight.
heaviest() {
	awk -v r="${2:-}" '{ split($0, f, ";") } r == "" || f[1] == r {
		if ($NF + 0 > max) { max = $NF + 0; line = $0 } } END { print line }' "$1"
}
# weight FOLDED ROOT [ERE]: total weight of ROOT's lines (that match ERE).
weight() {
	# The ERE goes through the environment: awk -v would eat its backslashes.
	WEIGHT_RE=${3:-} awk -v r="$2" 'BEGIN { re = ENVIRON["WEIGHT_RE"] } { split($0, f, ";") }
		f[1] == r && (re == "" || $0 ~ re) { s += $NF } END { printf "%.0f\n", s }' "$1"
}
# matches ERE STRING
matches() { printf '%s\n' "$2" | grep -Eq -e "$1"; }

# (a) The spinner's heaviest on-CPU stack: the leaf, the inlined middle,
# the outer function, innermost first.
report a.json --format json --tid "$spinner" --mode on --top 5
python3 "$J" stacks a.json >a.stacks
top=$(head -n 1 a.stacks)
check "(a) the top on-CPU stack is the spinner's" \
	matches "^[0-9]+	$spinner	spinner	on-cpu	" "$top"
frames=$(printf '%s\n' "$top" | cut -f 7)
echo "# (a) $frames"
check "(a) it is wc_spin_leaf, wc_spin_middle (inlined), wc_spin_outer, innermost first" \
	matches '^wc_spin_leaf;wc_spin_middle_\[i\];wc_spin_outer;' "$frames"
check "(a) under wc_spinner and start_thread" matches ';wc_spinner;([^;]*;)*start_thread(;|$)' "$frames"
check "(a) JSON marks only wc_spin_middle inlined in it" \
	[ "$(printf '%s\n' "$frames" | tr ';' '\n' | grep -c '_\[i\]$')" -eq 1 ]
report a.folded --format folded --tid "$spinner" --mode on
line=$(heaviest a.folded)
check "(a) folded: the heaviest line ends ...;wc_spin_outer;wc_spin_middle_[i];wc_spin_leaf" \
	matches '^spinner;([^;]*;)*wc_spinner;wc_spin_outer;wc_spin_middle_\[i\];wc_spin_leaf [0-9]+$' "$line"
on=$(weight a.folded spinner) inleaf=$(weight a.folded spinner ';wc_spin_leaf(;| )')
check_num "(a) wc_spin_leaf carries most of the spinner's on-CPU time, percent" \
	$((inleaf * 100 / (on + 1))) -ge 80

# (b) The sleeper is off the CPU in wc_sleep_once -> libc's nanosleep ->
# the kernel's schedule().
report b.json --format json --tid "$sleeper" --mode off --top 1
frames=$(python3 "$J" stacks b.json | cut -f 7)
echo "# (b) $frames"
check "(b) JSON: the top off-CPU stack has a libc nanosleep frame right inside wc_sleep_once" \
	matches '(^|;)[^;]*nanosleep[^;]*;wc_sleep_once;' "$frames"
check "(b) JSON: the libc frame is not a kernel frame" \
	matches '(^|;)[^;]*nanosleep[^];]*;wc_sleep_once;' "$frames"
report b.folded --format folded --tid "$sleeper" --mode off
line=$(heaviest b.folded)
check "(b) folded: the heaviest off-CPU line is blocked in wc_sleep_once" \
	matches '^sleeper;([^;]*;)*wc_sleep_once;[^;]*nanosleep[^;]*;.*\[off-cpu:blocked\] [0-9]+$' "$line"
check "(b) folded: with kernel frames, schedule_[k] innermost" \
	matches ';(__)?schedule_\[k\];\[off-cpu:blocked\] [0-9]+$' "$line"
all=$(weight b.folded sleeper '\[off-cpu:blocked\]')
ours=$(weight b.folded sleeper ';wc_sleep_once;[^;]*nanosleep.*\[off-cpu:blocked\]')
check_num "(b) wc_sleep_once's stacks carry the sleeper's blocked time, percent" \
	$((ours * 100 / (all + 1))) -ge 95

# (c) The reader blocks in wc_pipe_wait -> read.
report c.folded --format folded --tid "$reader" --mode blocked
line=$(heaviest c.folded)
echo "# (c) $line"
check "(c) the reader's heaviest blocked stack is wc_pipe_wait -> read" \
	matches '^reader;([^;]*;)*wc_reader;wc_pipe_wait;[^;]*read[^;]*;' "$line"
all=$(weight c.folded reader) ours=$(weight c.folded reader ';wc_pipe_wait;[^;]*read')
check_num "(c) those stacks carry the reader's blocked time, percent" \
	$((ours * 100 / (all + 1))) -ge 95

# (d) The lockers block in the mutex, under wc_lock_round.
report d.folded --format folded --comm 'locker2?' --mode blocked
for n in locker locker2; do
	line=$(heaviest d.folded $n)
	echo "# (d) $line"
	check "(d) $n: the heaviest blocked stack waits for the lock in wc_lock_round" \
		matches "^$n;([^;]*;)*wc_lock_round;([^;]*;)*[^;]*(lll_lock|futex|pthread_mutex_lock)" "$line"
	all=$(weight d.folded $n)
	ours=$(weight d.folded $n ';wc_lock_round;([^;]*;)*[^;]*(lll_lock|futex|pthread_mutex_lock)')
	check_num "(d) $n: the lock's stacks carry its blocked time, percent" \
		$((ours * 100 / (all + 1))) -ge 80
done
report d2.folded --format folded --comm 'locker2?' --mode on
for n in locker locker2; do
	check "(d) $n: the heaviest on-CPU stack is wc_lock_hold under wc_lock_round" \
		matches "^$n;([^;]*;)*wc_lock_round;wc_lock_hold(;| )" "$(heaviest d2.folded $n)"
done

# (e) --no-kernel drops every kernel frame, --no-user every user frame;
# neither changes the times.
report all.folded --format folded --unit ns
check "(e) without options there are kernel frames" grep -q '_\[k\]' all.folded
total=$(awk '{ s += $NF } END { printf "%.0f\n", s }' all.folded)
report e1.folded --format folded --unit ns --no-kernel
check "(e) --no-kernel: no _[k] frame" no_match '_\[k\]' e1.folded
check "(e) --no-kernel: user frames remain" grep -q ';wc_spin_leaf ' e1.folded
check_num "(e) --no-kernel: the same total time" \
	"$(awk '{ s += $NF } END { printf "%.0f\n", s }' e1.folded)" -eq "$total"
report e1.json --format json --no-kernel --top 1000
check "(e) --no-kernel: no kernel frame in JSON" no_match '"kernel": *true' e1.json
report e2.folded --format folded --unit ns --no-user
bad=$(awk '{ n = split($0, f, ";"); sub(/ [0-9]+$/, "", f[n])
	for (i = 2; i <= n; i++) if (f[i] !~ /_\[k\]$/ && f[i] !~ /^\[[^]]*\]$/) { print; next } }' e2.folded)
check "(e) --no-user: only kernel frames and [markers] under the thread root" [ -z "$bad" ]
[ -z "$bad" ] || printf '%s\n' "$bad" | head -n 3
check "(e) --no-user: kernel frames remain" grep -q ';schedule_\[k\];' e2.folded
check_num "(e) --no-user: the same total time" \
	"$(awk '{ s += $NF } END { printf "%.0f\n", s }' e2.folded)" -eq "$total"

# (f) --grep keeps the stacks with a matching frame, and only them.
report f.folded --format folded --grep wc_pipe_wait
check_num "(f) --grep wc_pipe_wait: some stacks" "$(nlines f.folded)" -ge 1
# The frame may be the leaf (an on-CPU sample right in it): "wc_pipe_wait ".
check_num "(f) --grep wc_pipe_wait: stacks without the frame" \
	"$(grep -Ecv ';wc_pipe_wait[; ]' f.folded)" -eq 0
check "(f) --grep wc_pipe_wait: only the reader's" [ "$(cut -d';' -f1 f.folded | sort -u)" = reader ]
check "(f) --grep wc_pipe_wait: every such stack of the full report is kept" \
	[ "$(grep -Ec ';wc_pipe_wait[; ]' all.folded)" -eq "$(nlines f.folded)" ]
report f.json --format json --grep wc_pipe_wait --top 1000
check "(f) --grep wc_pipe_wait: every JSON stack has the frame" \
	[ "$(python3 "$J" stacks f.json | grep -Ecv '(;|	)wc_pipe_wait(;|$)')" -eq 0 ]

# (g) --lines: the workload's frames get (wallclock.c:LINE), LINE inside
# the function's body in the source.
report g.folded --format folded --lines
check "(g) --lines: workload frames have (wallclock.c:N)" \
	grep -Eq ';wc_spin_leaf \(wallclock\.c:[0-9]+\)' g.folded
nolines=$(tr ';' '\n' <g.folded | sed 's/ [0-9]*$//' | grep -E '^wc_[a-z_]+(_\[i\])?$' | sort -u)
check "(g) --lines: no workload frame without its line ('$nolines')" [ -z "$nolines" ]
# body FUNC: "FIRST LAST" lines of FUNC's definition in the source.
body() {
	awk -v f="$1" '$0 ~ ("^[A-Za-z].*[ *]" f "\\(") && !/;$/ { first = NR }
		first && !last && /^}/ { last = NR } END { print first, last }' "$SRC"
}
for fn in wc_spin_leaf wc_spin_middle wc_spin_outer wc_sleep_once wc_pipe_wait wc_lock_round \
	wc_lock_hold; do
	range=$(body $fn)
	lines=$(tr ';' '\n' <g.folded | sed -n "s/^$fn (wallclock\\.c:\\([0-9]*\\)).*/\\1/p" | sort -nu)
	if [ -z "$lines" ]; then
		fail "(g) --lines: a $fn frame with a line"
		continue
	fi
	out=$(for l in $lines; do [ "$l" -ge "${range% *}" ] && [ "$l" -le "${range#* }" ] ||
		echo "$l"; done)
	check "(g) --lines: $fn lines $(echo "$lines" | tr "\n" " ")are in its body (lines $range)" [ -z "$out" ]
done
check "(g) --lines: inlined frames keep their mark" \
	grep -Eq ';wc_spin_middle \(wallclock\.c:[0-9]+\)_\[i\];' g.folded

# (h) A stack copy of 64 bytes cuts the stacks short: they end (outermost)
# in [truncated], and the footer says how many and what size would do.
run wl.out rec.err "$WALLPROF" record -q -g dwarf,64 -o G -- "$WORKLOADS/wallclock" 0.5
check_num "(h) record -g dwarf,64 exits 0" "$rc" -eq 0
run h.folded h.err "$WALLPROF" report -i G --format folded
check_num "(h) report exits 0" "$rc" -eq 0
user=$(grep -c ';wc_' h.folded)
check_num "(h) stacks with workload frames" "$user" -ge 5
check_num "(h) ...all of them start (outermost) with [truncated]" \
	"$(grep ';wc_' h.folded | grep -vEc '^[^;]*;\[(truncated|stack unreadable)\];')" -eq 0
check "(h) [truncated] is never anywhere else" \
	no_match '^[^;]*;.+;\[truncated\](;| )' h.folded
run h.text h.err "$WALLPROF" report -i G
check_num "(h) text report exits 0" "$rc" -eq 0
stacks=$(grep '^# stacks:' h.text)
echo "# (h) $stacks"
pct=$(printf '%s\n' "$stacks" | sed -n 's/.* \([0-9]*\)\.[0-9]% cut short by the stack copy.*/\1/p')
size=$(printf '%s\n' "$stacks" | sed -n 's/.*needed at least -g dwarf,\([0-9]*\)).*/\1/p')
check_num "(h) the footer says most stacks were cut short, percent" "${pct:-0}" -ge 50
check_num "(h) the footer suggests a larger stack copy" "${size:-0}" -gt 64
# The footer names a lower bound ("they need more than"); if it ever
# promises that a size would cover them, hold it to that: a new recording
# with that size cuts (almost) nothing short.
if printf '%s\n' "$stacks" | grep -q 'would have covered them' && [ "${size:-0}" -gt 64 ]; then
	run wl.out rec.err "$WALLPROF" record -q -g "dwarf,$size" -o H -- "$WORKLOADS/wallclock" 0.5
	check_num "(h) record -g dwarf,$size exits 0" "$rc" -eq 0
	run h2.text h2.err "$WALLPROF" report -i H
	stacks=$(grep '^# stacks:' h2.text)
	echo "# (h) with -g dwarf,$size: $stacks"
	pct=$(printf '%s\n' "$stacks" | sed -n 's/.* \([0-9]*\.[0-9]\)% cut short by the stack copy.*/\1/p')
	check "(h) -g dwarf,$size 'would have covered them': under 1% cut short (got ${pct:-?}%)" \
		awk -v p="${pct:-100}" 'BEGIN { exit !(p < 1) }'
fi

finish
