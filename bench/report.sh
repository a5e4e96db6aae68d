#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/report.sh: `wallprof report --format folded` against perf's way to
# the same folded stacks (`perf script | fold`), on recordings of the same
# workload with the same events, made in this run.  Prints wall time and
# peak memory of each side and the ratios.  A benchmark, not a test.
#
# perf's side: `perf script -F comm,tid,period,ip,sym --no-inline` would be
# faster but loses inline frames; perf's default output (with inline frames
# and DWARF unwinding) is what FlameGraph's stackcollapse-perf.pl consumes,
# so that is what is timed, piped into a small awk folder equivalent to
# stackcollapse-perf.pl (FlameGraph is not packaged in Debian 12).
#
# Environment: BENCH_RUNS=3, BENCH_SECONDS=2, BENCH_WORKLOAD=pingpong
# (pingpong or spin), BENCH_NO_BUILD=1 to skip make.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
runs=${BENCH_RUNS:-3}
secs=${BENCH_SECONDS:-2}
workload=${BENCH_WORKLOAD:-pingpong}
export LC_ALL=C
command -v perf >/dev/null || { echo "bench: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
bench_build wallprof "tests/workloads/$workload" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cmd=("$build/tests/workloads/$workload" "$secs")

echo "bench: recording ${cmd[*]} with perf and wallprof (same events)" >&2
perf record -q -o "$tmp/P.data" -e cpu-clock/period=1001001/ -e context-switches/period=1/ \
	--switch-events --call-graph dwarf,8192 -- "${cmd[@]}" >/dev/null 2>&1
"$wp" record -q -f -o "$tmp/W.data" -- "${cmd[@]}" >/dev/null

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

# time_it LABEL CMD...: runs BENCH_RUNS times; prints "seconds peakKiB" medians.
time_it() {
	local label=$1; shift
	: > "$tmp/$label.t"
	for ((r = 0; r < runs; r++)); do
		/usr/bin/time -f '%e %M' -o "$tmp/$label.one" "$@" > "$tmp/$label.out" 2>/dev/null
		cat "$tmp/$label.one" >> "$tmp/$label.t"
	done
	echo "$(cut -d' ' -f1 "$tmp/$label.t" | median) $(cut -d' ' -f2 "$tmp/$label.t" | median)"
}

read -r wp_s wp_kb <<< "$(time_it wallprof "$wp" report -q -i "$tmp/W.data" --format folded --unit ns)"
# perf script's own peak memory (the awk folder is measured separately).
read -r ps_s ps_kb <<< "$(time_it perfscript perf script -i "$tmp/P.data")"
read -r aw_s aw_kb <<< "$(time_it fold awk -f "$tmp/fold.awk" "$tmp/perfscript.out")"
perf_s=$(awk -v a="$ps_s" -v b="$aw_s" 'BEGIN { printf "%.2f", a + b }')
perf_kb=$(( ps_kb > aw_kb ? ps_kb : aw_kb ))
wp_lines=$(wc -l < "$tmp/wallprof.out")
perf_lines=$(wc -l < "$tmp/fold.out")
wp_size=$(stat -c %s "$tmp/W.data")
perf_size=$(stat -c %s "$tmp/P.data")

printf '\n%-34s %10s %12s %10s %12s\n' "report (${cmd[*]})" seconds "peak MiB" "stacks" "input MiB"
printf '%-34s %10s %12.1f %10s %12.1f\n' "wallprof report --format folded" "$wp_s" \
	"$(echo "$wp_kb / 1024" | bc -l)" "$wp_lines" "$(echo "$wp_size / 1048576" | bc -l)"
printf '%-34s %10s %12.1f %10s %12.1f\n' "perf script | fold" "$perf_s" \
	"$(echo "$perf_kb / 1024" | bc -l)" "$perf_lines" "$(echo "$perf_size / 1048576" | bc -l)"
awk -v a="$wp_s" -v b="$perf_s" -v c="$wp_kb" -v d="$perf_kb" 'BEGIN {
	printf "ratio: wallprof is %.1fx faster, uses %.2fx the peak memory of perf\n",
		(a > 0 ? b / a : 0), (d > 0 ? c / d : 0) }'
