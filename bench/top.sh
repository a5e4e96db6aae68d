#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/top.sh: what `wallprof top` itself costs at the default refresh
# (-d 1), measured side by side: its own CPU time (utime + stime from
# /proc/PID/stat) and its RSS, watching
#	idle	a sleeper (100 sleeps of 10 ms a second): an idle machine's load
#	storm	pingpong, a context-switch storm
#	churn	churn: short threads and processes, one after the other
# for SECS seconds each (default 20; BENCH_TOP_SECS).  Batch mode (-b),
# so that the figure is the recording's, the monitor's and the printing's,
# not a terminal's; the full screen draws once a second on top of it.
# Prints one line per case: CPU % of one core, RSS at the start and end.
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
hz=$(getconf CLK_TCK)

one() {
	local name=$1 p w t0 c0 r0 t1 c1 r1
	shift
	"$@" >"$out/$name.wl" 2>&1 &
	w=$!
	sleep 0.5
	"$wp" top -b -d 1 --format json -p "$w" >"$out/$name.json" 2>"$out/$name.err" &
	p=$!
	# From the second interval on: the attach and the first unwinding are not the refresh.
	until [ "$(grep -c '^{' "$out/$name.json" 2>/dev/null)" -ge 2 ]; do
		kill -0 $p 2>/dev/null || { echo "$name: top ended: $(cat "$out/$name.err")"; return; }
		sleep 0.1
	done
	t0=$(date +%s%N); c0=$(ticks $p); r0=$(rss $p)
	sleep "$secs"
	t1=$(date +%s%N); c1=$(ticks $p); r1=$(rss $p)
	kill -INT $p; wait $p
	kill $w 2>/dev/null; wait $w 2>/dev/null
	awk -v n="$name" -v c=$((c1 - c0)) -v hz="$hz" -v ns=$((t1 - t0)) -v r0="$r0" -v r1="$r1" \
		-v lost="$(jq -s '[.[].lost] | add' "$out/$name.json")" \
		'BEGIN { printf "%-6s cpu %5.1f%% of one core  rss %6.1f -> %6.1f MiB  lost %d\n",
			n, 100 * c / hz / (ns / 1e9), r0 / 1024, r1 / 1024, lost }'
}

one idle "$wl/sleeper" 1000000 10
one storm "$wl/pingpong" $((secs + 30))
one churn "$wl/churn" $((secs + 30))
