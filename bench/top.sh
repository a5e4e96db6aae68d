#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/top.sh: what `wallprof top` itself costs at the default refresh
# (-d 1), measured side by side: its own CPU time (utime + stime from
# /proc/PID/stat) and its RSS, watching
#	idle	a sleeper (100 sleeps of 10 ms a second): an idle machine's load
#	storm	pingpong, a context-switch storm
#	churn	churn: short threads and processes, one after the other
# for SECS seconds each (default 20; BENCH_TOP_SECS), from its second
# interval on.  Batch mode (-b), so that the figure is the recording's,
# the monitor's and the printing's, not a terminal's; the full screen
# draws once a second on top of it.  Prints one line per run: CPU % of
# one core, RSS at the start and end, records lost, and the workload's
# context switches a second over the same seconds (/proc: what the
# kernel counted).
#
#	BENCH_TOP_CASES		the cases, in order (default "idle storm churn")
#	BENCH_TOP_ROUNDS	rounds of them all (default 1); with more than
#				one, the medians per case follow
#	BENCH_TOP_OTHER		another wallprof binary (say, main's): each
#				round runs every case with it, then with this
#				build's, alternating on a shared machine, and
#				the medians are per binary
#	BENCH_TOP_ARGS		more options for top (say, --keep 0)
#	BENCH_TOP_SCREEN	set: the full screen, in tmux, instead of -b
#				(records lost are not known then: 0)
#	BENCH_TOP_MEMORY	instead, SECS of the full screen (in tmux,
#				--keep 30) watching churn: RSS every 10 s
#
# usage: bench/top.sh [SECS]
set -u
. "$(dirname "$0")/lib.sh"
bench_build wallprof tests/workloads/sleeper tests/workloads/pingpong \
	tests/workloads/churn || exit 1
secs=${1:-${BENCH_TOP_SECS:-20}}
wl=$build/tests/workloads
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# Context switches of every thread of a process so far.
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}
hz=$(getconf CLK_TCK)
screen=wallprof-bench-top-$$

# one LABEL BINARY CASE: a line "LABEL CASE cpu% rss0 rss1 lost switches/s"
one() {
	local label=$1 bin=$2 name=$3 p w t0 c0 r0 s0 t1 c1 r1 s1
	case $name in
	idle) "$wl/sleeper" 1000000 10 >"$out/wl" 2>&1 & ;;
	storm) "$wl/pingpong" $((secs + 60)) >"$out/wl" 2>&1 & ;;
	churn) "$wl/churn" $((secs + 60)) >"$out/wl" 2>&1 & ;;
	*) echo "bench/top.sh: no case '$name'" >&2; return 1 ;;
	esac
	w=$!
	sleep 0.5
	if [ -n "${BENCH_TOP_SCREEN:-}" ]; then
		# shellcheck disable=SC2086 # the extra options, split
		tmux new-session -d -s "$screen" -x 160 -y 50 \
			"cd '$out' && exec '$bin' top ${BENCH_TOP_ARGS:-} -p $w 2>'$out/top.err'"
		sleep 1
		p=$(tmux display -p -t "$screen" '#{pane_pid}')
		sleep 2
	else
		# shellcheck disable=SC2086
		"$bin" top -b -d 1 --format json ${BENCH_TOP_ARGS:-} -p "$w" >"$out/top.json" \
			2>"$out/top.err" &
		p=$!
		# From the second interval on: the attach and the first unwinding are not the refresh.
		until [ "$(grep -c '^{' "$out/top.json" 2>/dev/null)" -ge 2 ]; do
			if ! kill -0 $p 2>/dev/null; then
				echo "$label $name: top ended: $(cat "$out/top.err")" >&2
				kill $w 2>/dev/null; wait $w 2>/dev/null
				return 1
			fi
			sleep 0.1
		done
	fi
	t0=$(date +%s%N); c0=$(ticks $p); r0=$(rss $p); s0=$(switches $w)
	sleep "$secs"
	t1=$(date +%s%N); c1=$(ticks $p); r1=$(rss $p); s1=$(switches $w)
	if [ -n "${BENCH_TOP_SCREEN:-}" ]; then
		tmux send-keys -t "$screen" q
		sleep 1
		tmux kill-session -t "$screen" 2>/dev/null
		# Lost records: the full screen says so only on its bottom line.
		echo '{"lost":0}' >"$out/top.json"
	else
		kill -INT $p; wait $p
	fi
	kill $w 2>/dev/null; wait $w 2>/dev/null
	awk -v l="$label" -v n="$name" -v c=$((c1 - c0)) -v hz="$hz" -v ns=$((t1 - t0)) \
		-v r0="$r0" -v r1="$r1" -v sw=$((s1 - s0)) \
		-v lost="$(jq -s '[.[].lost] | add' "$out/top.json")" \
		'BEGIN { printf "%s %s %.2f %.1f %.1f %d %.0f\n", l, n, 100 * c / hz / (ns / 1e9),
			r0 / 1024, r1 / 1024, lost, sw / (ns / 1e9) }'
}

memory() {
	local w p s=wallprof-bench-top-$$ t0 now
	command -v tmux >/dev/null || { echo "bench/top.sh: BENCH_TOP_MEMORY needs tmux" >&2; return 1; }
	"$wl/churn" $((BENCH_TOP_MEMORY + 60)) >"$out/wl" 2>&1 &
	w=$!
	tmux new-session -d -s "$s" -x 160 -y 50 \
		"cd '$out' && exec '$wp' top --keep 30 -p $w 2>'$out/top.err'"
	sleep 1
	p=$(tmux display -p -t "$s" '#{pane_pid}')
	t0=$(date +%s)
	echo "seconds rss_MiB cpu_s"
	while now=$(date +%s); [ $((now - t0)) -le "$BENCH_TOP_MEMORY" ]; do
		awk -v t=$((now - t0)) -v r="$(rss "$p")" -v c="$(ticks "$p")" -v hz="$hz" \
			'BEGIN { printf "%d %.1f %.1f\n", t, r / 1024, c / hz }'
		sleep 10
	done
	tmux send-keys -t "$s" q
	sleep 2
	tmux kill-session -t "$s" 2>/dev/null
	kill $w 2>/dev/null; wait $w 2>/dev/null
}

if [ -n "${BENCH_TOP_MEMORY:-}" ]; then
	memory
	exit
fi

rounds=${BENCH_TOP_ROUNDS:-1}
cases=${BENCH_TOP_CASES:-idle storm churn}
echo "label case cpu_pct rss0_MiB rss1_MiB lost switches_per_s" | tee "$out/all"
for ((r = 1; r <= rounds; r++)); do
	for c in $cases; do
		if [ -n "${BENCH_TOP_OTHER:-}" ]; then
			one other "$BENCH_TOP_OTHER" "$c" | tee -a "$out/all"
		fi
		one this "$wp" "$c" | tee -a "$out/all"
	done
done
[ "$rounds" -gt 1 ] || exit 0
echo "medians over $rounds rounds:"
for l in other this; do
	for c in $cases; do
		awk -v l=$l -v c=$c '$1 == l && $2 == c' "$out/all" >"$out/sel"
		[ -s "$out/sel" ] || continue
		med() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
		printf "%-5s %-5s cpu %5.1f%% of one core  rss end %6.1f MiB  lost %d  switches/s %.0f\n" \
			"$l" "$c" "$(cut -d' ' -f3 "$out/sel" | med)" "$(cut -d' ' -f5 "$out/sel" | med)" \
			"$(cut -d' ' -f6 "$out/sel" | med)" "$(cut -d' ' -f7 "$out/sel" | med)"
	done
done
