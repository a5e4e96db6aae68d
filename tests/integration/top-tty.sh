# top-tty.sh: wallprof top's full screen, driven through tmux (send-keys,
# capture-pane): the rows and their columns beside what the kernel counted,
# H, a sort key, the filter, Enter's stacks, p, a resize, Left and Right at
# 80 columns, the s key's recording read back by report, q leaving the
# terminal as it was, NO_COLOR, and a dumb terminal refused.  Every wait
# is for what the screen shows, with a timeout, so that a loaded machine
# only slows it.
# Each check also saves the screen it judged in the test's log.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (tools/deps.sh installs it)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"

# A tmux server of this test's own, its socket in the test's directory.
TMUX_TMPDIR=$tmp
export TMUX_TMPDIR
unset TMUX
tm() { tmux -L top-tty -f /dev/null "$@"; }
W=160 H=40
tm new-session -d -x $W -y $H -s t "env -u NO_COLOR TERM=screen PS1='$ ' sh" ||
	skip "tmux cannot start a session here"
bg_pids="$bg_pids $(tm display -p -t t '#{pid}')"
tm set -g window-size manual 2>/dev/null

# screen [FILE]: the pane's text now (into FILE, default screen.txt).
screen() { tm capture-pane -p -t t >"${1:-screen.txt}"; }
# wait_screen TENTHS ERE: until a line of the pane matches (screen.txt holds it).
has_screen() { screen && grep -Eq -e "$1" screen.txt; }
wait_screen() { wait_until "$1" has_screen "$2"; }
# show LABEL: the screen judged, into the log.
show() { echo "# --- $1"; sed 's/^/# /' screen.txt; }
keys() { tm send-keys -t t "$@"; }
# The state tmux keeps of the terminal's modes.
modes() {
	tm display -p -t t '#{alternate_on} #{cursor_flag} #{insert_flag} #{keypad_cursor_flag}
#{keypad_flag} #{mouse_any_flag} #{mouse_button_flag} #{mouse_standard_flag} #{origin_flag}
#{wrap_flag} #{pane_width}x#{pane_height}'
}
# The interval number in the title line.
interval() { sed -n '1s/^wallprof top - interval \([0-9]*\),.*/\1/p' screen.txt; }
# rows_of N: field N of each row of the table (1 PID, 2 TID, 3 COMM, 7 BLK%, 13 SW/s).
rows_of() { awk -v c="$1" '/^ *[0-9]+ +[0-9]+ +[^ ]+ +[0-9.]+ / { print $c }' screen.txt; }

# The watched: a sleeper (100 sleeps a second in sleep_once), and a pipe
# whose writer wakes its reader every 2 ms (a switch storm would be the
# cost's test: bench/top.sh).
"$WORKLOADS/sleeper" 100000 10 >sleeper.out 2>&1 &
sl=$!
bg_pids="$bg_pids $sl"
"$WORKLOADS/wakeups" pipe 600 >pipe.out 2>&1 &
pp=$!
bg_pids="$bg_pids $pp"
tids_of() { ls "/proc/$1/task" 2>/dev/null | grep -v "^$1\$"; }
named() { for _t in $(tids_of $1); do [ "$(cat /proc/$1/task/$_t/comm)" = "$2" ] && echo $_t; done; }
two_threads() { [ -n "$(named $sl sleeper)" ] && [ -n "$(named $pp reader)" ] &&
	[ -n "$(named $pp writer)" ]; }
wait_until 100 two_threads || { fail "the workloads started their threads"; finish; }
sltid=$(named $sl sleeper)
wtid=$(named $pp writer)
rtid=$(named $pp reader)
ppcomm=$(cat /proc/$pp/comm)

# The terminal before: some text, the prompt, its modes.
keys "clear; echo before-top-1; echo before-top-2" Enter
wait_screen 100 '^before-top-2$' || { fail "the shell in tmux answered"; finish; }
wait_screen 50 '^\$ ?$'
screen before.txt
modes >modes.before
# A file already named as the first save would be: the s key passes it over.
echo old >wallprof-top.0001.data
cat >run-top.sh <<EOF
stty -g >stty.before
"$WALLPROF" top --keep 4 -p $sl,$pp 2>top.err
echo \$? >top.rc
stty -g >stty.after
EOF
keys "sh run-top.sh" Enter

# 1. Rows with their columns, for each watched thread.
if ! wait_screen 300 "^ *$sl +$sltid +sleeper "; then
	show "no row for the sleeper"; fail "the screen shows the sleeper's thread"
	keys q; finish
fi
wait_screen 300 "^ *$pp +$wtid +writer "
show "the first screen"
# Kept for the README's screenshot.
cp screen.txt "$(dirname "$WALLPROF")/tests/top-tty-screen.txt" 2>/dev/null
check "the header names every column" grep -Eq \
	'^ +PID +TID +COMM +ON% +RUN% +PRE% +BLK% +LOCK +IO +SLEEP +NET +OTHER +SW/s +WAKER +WAITS IN' \
	screen.txt
# The sleeper's thread: blocked mostly, all of it sleeping, in sleep_once.
row=$(grep -E "^ *$sl +$sltid +sleeper " screen.txt)
blk=$(echo "$row" | awk '{ printf "%d", $7 }'); slp=$(echo "$row" | awk '{ printf "%d", $10 }')
check_num "the sleeper's thread is blocked most of the interval" "$blk" -ge 50
check_range "its blocked time is sleep" "$slp" $((blk - 1)) $((blk + 1))
# (Its frame: the kernel's nanosleep and the program's sleep_once; once
# in a CI run the heaviest wait's stack had no kernel frame: sleep_once.)
check "it waits in sleep_once (in its nanosleep)" \
	sh -c "echo '$row' | grep -Eq '(nanosleep < )?sleep_once'"
# The sleeper's main thread waits in pthread_join from before the attach: off a CPU.
on0=$(awk '{ print $1 }' /proc/$sl/task/$sl/schedstat)
main=$(grep -E "^ *$sl +$sl +sleeper " screen.txt | awk '{ printf "%d", $4 }')
on1=$(awk '{ print $1 }' /proc/$sl/task/$sl/schedstat)
echo "# the sleeper's main thread: top ON% $main; the kernel ran it $(( (on1 - on0) / 1000 )) us meanwhile"
check_num "its main thread, blocked since before the attach, is not shown on a CPU" "${main:-100}" -le 5
# The writer's switches a second, against the kernel's count over the seconds around.
sw() { awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$pp/task/$wtid/status"; }
k0=$(sw); t0=$(date +%s%N)
wait_screen 300 "^ *$pp +$wtid +writer "
i0=$(interval)
wait_until 300 eval 'has_screen . && [ "$(interval)" -gt "$((i0 + 1))" ]'
k1=$(sw); t1=$(date +%s%N)
mine=$(grep -E "^ *$pp +$wtid +writer " screen.txt | awk '{ printf "%d", $13 }')
kern=$(( (k1 - k0) * 1000000000 / (t1 - t0) ))
echo "# the writer's switches a second: top $mine, the kernel $kern over the same seconds"
check_range "the writer's switches a second are the kernel's, within a factor of 3" "${mine:-0}" \
	$((kern / 3)) $((kern * 3 + 10))

# 2. H: a row per process, its threads counted.
keys H
wait_screen 100 '^ +PID +THREADS +COMM' || show "after H"
check "H shows processes" grep -q -- '- processes, by' screen.txt
n=$(grep -E "^ *$pp +[0-9]+ +$ppcomm " screen.txt | awk '{ print $2 }')
check_num "the pipe's process row counts its threads" "${n:-0}" -eq "$(ls /proc/$pp/task | wc -l)"
check "no thread row is left" no_match "^ *$pp +$rtid +reader " screen.txt
keys H
wait_screen 100 '^ +PID +TID +COMM'
check "H again shows threads" grep -q -- '- threads, by' screen.txt

# 3. Sort keys: > steps through them; by switches, the SW/s column falls.
keys '>' '>' '>'
wait_screen 100 'by switches' || show "after > > >"
wait_screen 30 "^ *$pp +$wtid +writer "
rows_of 13 >sw.txt
check "sorted by switches, SW/s never rises down the rows" sort -s -n -r -c sw.txt
rows_of 3 >swcomm.txt
check "the pipe's threads (500 a second) come first" sh -c "head -2 swcomm.txt | sort | tr '\n' ' ' | grep -qx 'reader writer '"

keys '>'
wait_screen 100 'by pid'
rows_of 1 >pid.txt
check "sorted by pid, PID never falls down the rows" sort -s -n -c pid.txt
check "both processes are shown" sh -c "grep -qx $sl pid.txt && grep -qx $pp pid.txt"

# 4. The filter: only the names that contain it.
keys / ead Enter
wait_screen 100 "filter 'ead'" || show "after / ead"
wait_screen 30 "^ *$pp +$rtid +reader "
rows_of 3 >comm.txt
check "the filter keeps rows" test -s comm.txt
check "every row's name contains 'ead'" sh -c '! grep -qv ead comm.txt'
check "the sleeper is filtered out" no_match sleeper comm.txt
keys / Enter
wait_screen 100 "^ *$sl +$sltid +sleeper "
check "an empty filter shows every row" no_match "filter '" screen.txt

# 5. Enter: the chosen thread's stacks (the first row, by switches: a storm thread,
#    so filter to the sleeper and sort by switches: its thread is first; Home
#    selects it).
keys / sleeper Enter '<' Home
wait_until 100 eval "has_screen 'by switches' && has_screen \"filter 'sleeper'\""
wait_screen 100 "^ *$sl +$sltid +sleeper "
first=$(rows_of 2 | head -1)
check_num "the sleeper's thread is the first row, by switches" "${first:-0}" -eq "$sltid"
keys Enter
wait_screen 100 "^Thread $sl/$sltid sleeper:" || show "after Enter"
show "a thread's stacks"
check "its blocked stack is shown, as sleep" grep -Eq '^ +[0-9.]+% +blocked in sleep$' screen.txt
check "its frames down to sleep_once are listed" grep -Eq '^ +sleep_once$' screen.txt
check "kernel frames are marked" grep -Eq '^ +do_nanosleep \[k\]$' screen.txt
keys Escape
wait_screen 100 '^ +PID +TID +COMM' || show "after Escape"
check "Escape goes back to the rows" grep -Eq "^ *$sl +$sltid +sleeper " screen.txt

# 6. p: the interval shown stays, until p again.
keys p
wait_screen 100 'PAUSED'
i0=$(interval)
# Paused, the intervals the monitor closes (every second) must not show.
t_end=$(($(date +%s) + 3))
moved=0
while [ "$(date +%s)" -le $t_end ]; do
	screen; [ "$(interval)" = "$i0" ] || moved=1
	sleep 0.2
done
check_num "paused, the screen keeps interval $i0 for 3 s" $moved -eq 0
keys p
wait_until 300 eval 'has_screen . && [ "$(interval)" -gt "$i0" ]'
check "p again shows new intervals" sh -c "[ '$(interval)' -gt '$i0' ] && ! grep -q PAUSED screen.txt"

# 7. A resize: drawn again to the new size, then back.
tm resize-window -t t -x 100 -y 20
wait_until 100 eval 'has_screen "^wallprof top" && [ "$(awk "length > 100" screen.txt | wc -l)" -eq 0 ] &&
	[ "$(wc -l <screen.txt)" -le 20 ]'
show "100x20"
check "at 100x20 the title is drawn" grep -q '^wallprof top - interval' screen.txt
check "and the sleeper's row" grep -Eq "^ *$sl +$sltid +sleeper " screen.txt
check_num "no line is wider than the pane" "$(awk 'length > 100' screen.txt | wc -l)" -eq 0

# 7b. At 80x24 the columns past NET are off the screen: Right brings them in,
#     PID, TID and COMM staying; Left takes them back.
tm resize-window -t t -x 80 -y 24
wait_until 100 eval 'has_screen "^ +PID +TID +COMM +ON%" &&
	[ "$(awk "length > 80" screen.txt | wc -l)" -eq 0 ]'
show "80x24"
check "at 80x24 WAITS IN is off the screen" no_match 'WAITS IN' screen.txt
keys Right Right Right Right Right Right Right Right Right Right Right Right
wait_screen 100 '^ +PID +TID +COMM +WAITS IN$' || show "after Right x 12"
check "Right scrolls WAITS IN into view, after COMM" \
	grep -Eq '^ +PID +TID +COMM +WAITS IN$' screen.txt
check "where the sleeper waits is shown at 80 columns" \
	grep -Eq "^ *$sl +$sltid +sleeper +do_nanosleep < sleep_once" screen.txt
check_num "no line is wider than the pane" "$(awk 'length > 80' screen.txt | wc -l)" -eq 0
keys Left Left Left Left Left Left Left Left Left Left Left Left
wait_screen 100 '^ +PID +TID +COMM +ON% +RUN%' || show "after Left x 12"
check "Left scrolls back to ON%" grep -Eq '^ +PID +TID +COMM +ON% +RUN%' screen.txt
tm resize-window -t t -x $W -y $H
wait_screen 100 'WAITS IN$'
check "back at ${W}x$H the rows are drawn whole again" grep -q 'WAITS IN$' screen.txt

# 8. s: the last seconds, as a recording report reads, named on the status line.
sleep_until_kept() { [ "$(interval)" -ge 6 ] 2>/dev/null || { screen; false; }; }
wait_until 300 sleep_until_kept
keys s
wait_screen 300 "^saved the last 4 s \(at most\) to '[^']*'" || show "after s"
saved=$(sed -n "s/^saved the last 4 s (at most) to '\([^']*\)'.*/\1/p" screen.txt)
echo "# the s key saved '$saved'"
check "the status line names wallprof-top.0002.data (0001 was there)" \
	test "$saved" = wallprof-top.0002.data
check "the file it names was written" test -s "$saved"
check "the file that was there is left alone" sh -c 'test "$(cat wallprof-top.0001.data)" = old'
"$WALLPROF" report -i "$saved" --format json >saved.json 2>saved.err
check_num "report reads it" $? -eq 0
dur=$(jq '.header.duration_ns / 1000000 | floor' saved.json)
check_range "it holds the last 4 s (ms)" "${dur:-0}" 3500 4600
wall=$(jq --argjson t "$sltid" '[.threads[] | select(.tid == $t) | .wall_ns] | add // 0 |
	. / 1000000 | floor' saved.json)
check_num "the sleeper's thread is in it all along (ms)" "$wall" -ge $((dur * 9 / 10))

# 9. q: the terminal as it was.
keys q
wait_until 300 test -s top.rc
check_num "q exits 0" "$(cat top.rc)" -eq 0
# Beside the storm the rings may overflow: said once the screen is gone, never as an error.
sed 's/^/# stderr: /' top.err
check "no error was said" no_match '^wallprof: error' top.err
wait_screen 100 '^\$ ?$'
screen after.txt
modes >modes.after
show "after q"
# The lines before are there as they were, then the command, then the prompt.
before=$(grep -c '' before.txt)
last=$(awk 'NF { n = NR } END { print n }' before.txt)
head -n $((last - 1)) before.txt >b.txt
head -n $((last - 1)) after.txt >a.txt
check "the screen before top is there as it was" cmp -s b.txt a.txt
check "then the command, then the prompt" sh -c \
	"sed -n '${last}p' after.txt | grep -qx '\\$ sh run-top.sh' && sed -n '$((last + 1))p' after.txt | grep -Eqx '\\$ ?'"
check "nothing of top's screen is left" no_match 'wallprof top - interval|WAITS IN' after.txt
check "the terminal's modes are as before (tmux's flags)" cmp -s modes.before modes.after
check "the line settings are as before (stty -g)" cmp -s stty.before stty.after
echo "# before: $before lines; modes $(tr '\n' ' ' <modes.before)"

# 10. Colour: the title bar in colour, and none with NO_COLOR.
sgr_colour() { tm capture-pane -e -p -t t | grep -Eq '\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)(;[0-9;]*)?m'; }
for mode in colour nocolour; do
	rm -f top.rc
	if [ $mode = colour ]; then env=''; else env='NO_COLOR=1'; fi
	keys "clear; $env \"$WALLPROF\" top --keep 0 -p $sl 2>top.err; echo \$? >top.rc" Enter
	wait_screen 300 "^ *$sl +$sltid +sleeper "
	if [ $mode = colour ]; then
		check "without NO_COLOR the title bar has colour" sgr_colour
	else
		check "with NO_COLOR no colour escape is drawn" eval '! sgr_colour'
		check "the title bar is still marked (reverse video)" sh -c \
			"tmux -L top-tty capture-pane -e -p -t t | grep -q '\\[7m *PID'"
	fi
	keys q
	wait_until 300 test -s top.rc
done

# 11. A dumb terminal: one sentence, non-zero, nothing drawn.
rm -f top.rc
keys "clear; TERM=dumb \"$WALLPROF\" top -p $sl 2>top.err; echo \$? >top.rc" Enter
wait_until 300 test -s top.rc
check_num "TERM=dumb exits non-zero" "$(cat top.rc)" -ne 0
check_num "with one line" "$(nlines top.err)" -eq 1
check "that says why and what to use" grep -q 'dumb.*-b' top.err
screen
check "and draws nothing" no_match 'wallprof top - interval' screen.txt
kill $sl $pp 2>/dev/null

# 12. At 80x24, a command's threads: mostly-off (blocked 80% of its time,
#     spinning in deep stacks the rest), and later a spinner that sorts
#     above it.
tm resize-window -t t -x 80 -y 24
mkfifo go.fifo
rm -f top.rc
cat >run-top2.sh <<EOF
"$WALLPROF" top --keep 0 -- sh -c '"$WORKLOADS/mostly-off" 600 5 & echo \$! >mo.pid
	read x <go.fifo; "$WORKLOADS/spin" 600; wait' 2>top.err
echo \$? >top.rc
EOF
keys "clear; sh run-top2.sh" Enter
wait_until 300 test -s mo.pid
mo=$(cat mo.pid)
bg_pids="$bg_pids $mo"
wait_until 100 eval '[ -n "$(named $mo mostly-off)" ]'
motid=$(named $mo mostly-off)
# selected [FIELD]: the TID (or field FIELD) of the line drawn in reverse
# video (an SGR with 7), the selection's; 0: none.
esc=$(printf '\033')
selected() {
	tm capture-pane -e -p -t t | grep -aE "$esc\\[([0-9]+;)*7m" | sed "s/$esc\\[[0-9;]*m//g" |
		awk -v f="${1:-2}" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { s = $f; exit } END { print s + 0 }'
}
# line_of ERE: the number of the first line of the screen that matches.
line_of() { grep -En -e "$1" screen.txt | sed -n '1s/:.*//p'; }
wait_screen 300 "^ *$mo +$motid +mostly-off " || show "no row for mostly-off"
# Select it: End, then Up or Down towards its line until the reverse line
# is its (each key waits for the selection to move, so that none overshoots).
sel_line() {
	tm capture-pane -e -p -t t | grep -anE "$esc\\[([0-9]+;)*7m" | sed -n '1s/:.*//p'
}
keys End
wait_until 50 eval '[ "$(sel_line)" -gt "$(screen && line_of "^ *$mo +$motid +mostly-off ")" ]'
tries=0
while [ "$(selected)" != "$motid" ] && [ $tries -lt 20 ]; do
	tries=$((tries + 1))
	was=$(selected)
	screen
	if [ "$(line_of "^ *$mo +$motid +mostly-off ")" -lt "$(sel_line)" ]; then
		keys Up
	else
		keys Down
	fi
	wait_until 50 eval '[ "$(selected)" != "$was" ]'
done
check_num "Up and Down select mostly-off's thread" "$(selected)" -eq "$motid"
at=$(screen && line_of "^ *$mo +$motid +mostly-off ")
# The spinner starts and sorts above it, on-CPU all the time; a few
# intervals go by.
timeout 30 sh -c 'echo go >go.fifo'
spinner_above() {
	has_screen " spinner " && [ "$(line_of " spinner ")" -lt "$(line_of " $motid +mostly-off ")" ]
}
wait_until 300 spinner_above || show "no spinner above mostly-off"
i0=$(interval)
wait_until 300 eval 'has_screen . && [ "$(interval)" -gt "$((i0 + 2))" ]'
show "the spinner above mostly-off"
now=$(line_of "^ *$mo +$motid +mostly-off ")
echo "# mostly-off was on line $at, is now on line $now"
check "the spinner sorts above mostly-off" spinner_above
check_num "the selection stayed on mostly-off's thread" "$(selected)" -eq "$motid"
keys Enter
wait_screen 100 '^Thread [0-9]+/[0-9]+ ' || show "after Enter"
show "Enter on mostly-off"
check "Enter opens the selected thread's stacks" grep -q "^Thread $mo/$motid mostly-off:" screen.txt
keys Escape
wait_screen 100 '^ +PID +TID +COMM'

# 13. mostly-off's stacks, in an interval (paused) where its table row says it
#     was blocked longer than in any other state: the blocked stack comes
#     first, within 24 rows, and Down scrolls the view.  On a machine so
#     loaded that its waits for a CPU outlast its sleeps, skipped.
# First the spinner's, as it ends: the view says so; back in the table the
# selection keeps its line, now mostly-off's.
spid=$(awk '$3 == "spinner" { print $1; exit }' screen.txt)
sptid=$(awk '$3 == "spinner" { print $2; exit }' screen.txt)
# (Home again and again: the spinner is first but for a slow interval.)
wait_until 100 eval 'keys Home; [ "$(selected)" = "$sptid" ]'
keys Enter
wait_screen 100 "^Thread $spid/$sptid spinner:" || show "Enter on the spinner"
kill "$spid"
wait_screen 300 "^Thread $sptid is not in this interval: it has ended" || show "the spinner killed"
check "the stacks of a thread that ended say so" grep -q "^Thread $sptid is not in this interval" \
	screen.txt
keys Escape
wait_until 300 eval 'has_screen "^ +PID +TID +COMM" && ! grep -q " spinner " screen.txt'
check_num "the selection keeps its line, the first" "$(selected)" -eq "$motid"
blocked_most() {
	grep -E "^ *$mo +$motid +mostly-off " screen.txt | tr -d '~' |
		awk '{ exit !($7 > $4 && $7 > $5 && $7 > $6) }'
}
found=0 tries=0
while [ $found = 0 ] && [ $tries -lt 15 ]; do
	tries=$((tries + 1))
	keys p
	wait_screen 100 PAUSED
	wait_screen 100 "^ *$mo +$motid +mostly-off "
	if blocked_most; then found=1; break; fi
	i0=$(interval)
	keys p
	wait_until 300 eval 'has_screen . && ! grep -q PAUSED screen.txt && [ "$(interval)" -gt "$i0" ]'
done
show "paused, mostly-off's row"
if [ $found = 1 ]; then
	keys Enter
	wait_screen 100 "^Thread $mo/$motid mostly-off:" || show "after Enter"
	show "mostly-off's stacks, paused"
	first=$(grep -E '^ +[0-9.]+%  [a-z]' screen.txt | head -1)
	echo "# the first stack: $first"
	check "its first stack is a blocked one, in sleep" \
		sh -c "echo '$first' | grep -Eq 'blocked in sleep$'"
	# The frames under the blocked stack's heading, down to the next blank line.
	awk '/^ +[0-9.]+%  blocked in sleep$/ { on = 1; next } /^$/ { on = 0 } on' screen.txt \
		>blocked.txt
	check "its blocked stack's frames down to mo_nap are within 24 rows" \
		grep -Eq '^ +mo_nap$' blocked.txt
	# The line of the blocked stack's heading (-1: none shown).
	blocked_at() { _l=$(line_of '^ +[0-9.]+%  blocked in sleep$'); echo "${_l:--1}"; }
	p0=$(blocked_at)
	keys Down Down
	wait_until 100 eval 'has_screen . && [ "$(blocked_at)" -eq "$((p0 - 2))" ]'
	show "after Down Down"
	check_num "Down Down scrolls the stacks up two lines" "$(blocked_at)" -eq $((p0 - 2))
	check "the thread's heading stays on line 3" sh -c "sed -n 3p screen.txt |
		grep -q '^Thread $mo/$motid mostly-off:'"
	keys End
	wait_until 100 eval 'has_screen . && [ "$(blocked_at)" -eq -1 ]'
	check_num "End shows the last stacks, the first one scrolled off" "$(blocked_at)" -eq -1
	keys Home
	wait_until 100 eval 'has_screen . && [ "$(blocked_at)" -eq "$p0" ]'
	check_num "Home goes back to the top" "$(blocked_at)" -eq "$p0"
	keys Escape
	wait_screen 100 '^ +PID +TID +COMM'
else
	skip_check "mostly-off's blocked stack first" "its row never showed it blocked most (a loaded machine)"
fi

# 14. H on mostly-off's thread: its process is selected, and Enter shows the
#     stacks of all its threads (mostly-off's sleep among them), not its
#     first thread's (the main thread's join) alone.
keys H
wait_screen 100 '^ +PID +THREADS +COMM' || show "after H"
check_num "H takes the selection to the thread's process" "$(selected 1)" -eq "$mo"
keys Enter
wait_screen 100 "^Process $mo \\(2 threads\\) mostly-off:" || show "Enter on the process"
pages=0
while ! has_screen '^ +mo_nap$' && [ $pages -lt 10 ]; do
	keys NPage; sleep 0.2; pages=$((pages + 1))
done
show "mostly-off's process, after $pages PgDn"
check "a process's stacks are all its threads', mostly-off's among them" \
	grep -Eq '^ +mo_nap$' screen.txt
keys Escape
wait_screen 100 '^ +PID +THREADS +COMM'
keys q
wait_until 300 test -s top.rc
check_num "q exits 0" "$(cat top.rc)" -eq 0
kill $mo 2>/dev/null
finish
