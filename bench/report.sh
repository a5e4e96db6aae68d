#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/report.sh: `wallprof report --format folded` against perf's way to
# the same folded stacks (`perf script | fold`), at several recording
# sizes, each recorded by both tools in this run with the same events.
# Prints, per size, the median wall time and peak memory of each side and
# the ratios: wallprof's first report (cold: an empty symbol cache, as on
# a machine that never reported these files, saving what it names) and a
# repeated one (warm: the symbol cache filled by an earlier report).  A benchmark, not a test: it
# prints figures and never fails on them.
#
# perf's side: `perf script -F comm,tid,period,ip,sym --no-inline` would be
# faster but loses inline frames; perf's default output (with inline frames
# and DWARF unwinding) is what FlameGraph's stackcollapse-perf.pl consumes,
# so that is what is timed, piped into a small awk folder equivalent to
# stackcollapse-perf.pl (FlameGraph is not packaged in Debian 12).
#
# Environment:
#   BENCH_SIZES="spin:0.5 pingpong:2 pingpong:5"   workload:seconds, smallest
#       first; workloads: spin (one CPU-bound thread), pingpong (two threads
#       handing a token back and forth: a context-switch storm), work
#       (bench/work.c on every CPU, calibrated to the seconds)
#   BENCH_RUNS=5        runs per figure (medians)
#   BENCH_WAKEUPS=off   wallprof record's --wakeups: off records the same
#       events as perf's side; stacks (record's default) adds every
#       wake-up with its waker's stack, some 3x the records of a storm
#   BENCH_UNWIND=report wallprof record's --unwind: live records stacks
#       unwound while recording (a stack table), report keeps raw stacks
#   BENCH_NO_BUILD=1    skip make
set -euo pipefail
unset WALLPROF_NO_CACHE
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
runs=${BENCH_RUNS:-5}
wakeups=${BENCH_WAKEUPS:-off}
sizes=${BENCH_SIZES:-spin:0.5 pingpong:2 pingpong:5}
export LC_ALL=C
command -v perf >/dev/null || { echo "bench: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
bench_build wallprof tests/workloads/pingpong tests/workloads/spin || exit 1
# Older builds (for before/after figures) may not know --wakeups.
wp_rec=()
if "$wp" record --help 2>&1 | grep -q -- '--wakeups'; then
	wp_rec=(--wakeups="$wakeups")
fi
# Always said: record's default is live (it was report before).
if "$wp" record --help 2>&1 | grep -q -- '--unwind'; then
	wp_rec+=(--unwind="${BENCH_UNWIND:-report}")
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Folding like stackcollapse-perf.pl: comm;outer;...;leaf count, with
# inline frames kept and kernel frames suffixed _[k].
cat > "$tmp/fold.awk" <<'AWK'
/^[^ \t]/ { if (stack != "") n[comm stack]++; comm = $1; stack = ""; next }
/^[ \t]+[0-9a-f]+ / {
	f = $2; for (i = 3; i < NF; i++) f = f " " $i
	sub(/\+0x[0-9a-f]+$/, "", f)
	if ($NF ~ /kernel\.kallsyms/) f = f "_[k]"
	stack = ";" f stack; next
}
/^$/ { if (stack != "") n[comm stack]++; stack = "" }
END { if (stack != "") n[comm stack]++; for (s in n) print s, n[s] }
AWK

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# run_once LABEL CMD...: one timed run, appended to $tmp/LABEL.t as
# "seconds peakKiB" (wall time to the microsecond, peak resident memory
# from /usr/bin/time); its output goes to $tmp/LABEL.out.
run_once() {
	local label=$1 t0 t1; shift
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%M' -o "$tmp/$label.kb" "$@" > "$tmp/$label.out" 2>/dev/null
	t1=$EPOCHREALTIME
	echo "$t0 $t1 $(cat "$tmp/$label.kb")" | awk '{ printf "%.4f %d\n", $2 - $1, $3 }' >> "$tmp/$label.t"
}

# medians LABEL: "seconds peakKiB", the medians of LABEL's runs.
medians() {
	echo "$(cut -d' ' -f1 "$tmp/$1.t" | median) $(cut -d' ' -f2 "$tmp/$1.t" | median)"
}

# time_it LABEL CMD...: runs BENCH_RUNS times; prints medians LABEL.
time_it() {
	local label=$1 r; shift
	: > "$tmp/$label.t"
	for ((r = 0; r < runs; r++)); do
		run_once "$label" "$@"
	done
	medians "$label"
}

# time_wallprof CMD...: cold and warm reports, one of each in turn so that
# both meet the same machine; the medians in $tmp/cold.t and warm.t.
# Cold: a new cache directory for every run, empty.  Warm: one filled by a
# report first.
time_wallprof() {
	local r
	: > "$tmp/cold.t"
	: > "$tmp/warm.t"
	rm -rf "$tmp/cache" "$tmp"/fresh-*
	XDG_CACHE_HOME=$tmp/cache "$@" > /dev/null
	for ((r = 0; r < runs; r++)); do
		XDG_CACHE_HOME=$tmp/fresh-$r run_once cold "$@"
		XDG_CACHE_HOME=$tmp/cache run_once warm "$@"
	done
}

# The command that runs workload for about secs seconds.
workload_cmd() {
	case $1 in
	spin | pingpong) echo "$build/tests/workloads/$1 $2" ;;
	work)
		[ -x "$tmp/work" ] ||
			cc -O2 -g -fomit-frame-pointer -pthread -o "$tmp/work" "$bench_here/work.c"
		echo "$tmp/work $("$tmp/work" --calibrate "$2") $(nproc)" ;;
	*) echo "bench: unknown workload '$1'" >&2; return 1 ;;
	esac
}

echo "bench: $(date -u '+%Y-%m-%d %H:%M UTC'), wallprof $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?') (record ${wp_rec[*]:-with its defaults}), $(perf --version), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n%-16s %9s %9s %9s %9s %8s %8s %8s %8s %8s\n' recording "wp MiB" "perf MiB" \
	"cold s" "warm s" "perf s" "cold x" "warm x" "wp RSS" "perf RSS"
for size in $sizes; do
	name=${size%%:*}
	secs=${size#*:}
	read -r -a cmd <<< "$(workload_cmd "$name" "$secs")"
	perf record -q -o "$tmp/P.data" -e cpu-clock/period=1001001/ -e context-switches/period=1/ \
		--switch-events --call-graph dwarf,8192 -- "${cmd[@]}" >/dev/null 2>&1
	"$wp" record -q -f "${wp_rec[@]}" -o "$tmp/W.data" -- "${cmd[@]}" >/dev/null
	# perf.data's gigabytes are written back meanwhile otherwise.
	sync
	report=("$wp" report -q -i "$tmp/W.data" --format folded --unit ns)

	time_wallprof "${report[@]}"
	read -r cold_s cold_kb <<< "$(medians cold)"
	read -r warm_s _ <<< "$(medians warm)"
	cmp -s "$tmp/cold.out" "$tmp/warm.out" || echo "bench: cold and warm outputs differ!" >&2

	# perf script's own peak memory (the awk folder is measured separately).
	read -r ps_s ps_kb <<< "$(time_it perfscript perf script -i "$tmp/P.data")"
	read -r aw_s aw_kb <<< "$(time_it fold awk -f "$tmp/fold.awk" "$tmp/perfscript.out")"
	perf_s=$(awk -v a="$ps_s" -v b="$aw_s" 'BEGIN { printf "%.4f", a + b }')
	perf_kb=$((ps_kb > aw_kb ? ps_kb : aw_kb))
	awk -v n="$name $secs s" -v w="$(stat -c %s "$tmp/W.data")" -v p="$(stat -c %s "$tmp/P.data")" \
		-v c="$cold_s" -v h="$warm_s" -v f="$perf_s" -v wk="$cold_kb" -v pk="$perf_kb" 'BEGIN {
		printf "%-16s %9.1f %9.1f %9.3f %9.3f %8.3f %7.1fx %7.1fx %8.1f %8.1f\n",
			n, w / 1048576, p / 1048576, c, h, f, (c > 0 ? f / c : 0), (h > 0 ? f / h : 0),
			wk / 1024, pk / 1024 }'
	echo "    stacks: wallprof $(wc -l < "$tmp/cold.out"), perf $(wc -l < "$tmp/fold.out")" >&2
	rm -f "$tmp/P.data" "$tmp/W.data" "$tmp/perfscript.out"
done
echo
echo "x: how many times faster than perf script | fold (medians of $runs runs);" \
	"RSS: peak MiB (wallprof's cold report; perf script or the folder)."
echo "bench: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
