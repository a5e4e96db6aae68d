#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/export.sh: `wallprof export` into ClickHouse and `report --from`
# against `report` of the same files.  One recording of the wallclock
# workload rotated into BENCH_FILES files goes into a clickhouse-server
# started here on 127.0.0.1 (as nobody when run as root), from a
# temporary config; then it times the export (files and rows a second),
# `report --from --format folded` over every file (the server adds them
# up) and `report --format folded` of each file in turn, warm (the symbol
# cache filled), and checks that the two give the same stacks.  A
# benchmark, not a test: it prints figures and never fails on them.
#
# Environment:
#   BENCH_FILES=100         files of the recording
#   BENCH_FILE_SECONDS=1    seconds per file (--rotate)
#   BENCH_RUNS=3            runs of each report (medians)
#   BENCH_NO_BUILD=1        skip make
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
files=${BENCH_FILES:-100}
secs=${BENCH_FILE_SECONDS:-1}
runs=${BENCH_RUNS:-3}
export LC_ALL=C
server=/usr/sbin/clickhouse-server
[ -x "$server" ] || { echo "bench: clickhouse-server is missing (tools/deps.sh installs it)" >&2; exit 1; }
bench_build wallprof tests/workloads/wallclock || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
chdir=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench-ch.XXXXXX")
ch_pid=''
stop() {
	[ -n "$ch_pid" ] && kill -TERM "$ch_pid" 2>/dev/null && wait "$ch_pid" 2>/dev/null
	rm -rf "$tmp" "$chdir"
}
trap stop EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/"
sh "$top/tools/clickhouse-config" "$chdir" "$port" 4000000000
as_user=()
if [ "$(id -u)" -eq 0 ]; then
	chown -R nobody "$chdir"
	as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
"${as_user[@]}" timeout -k 5 7200 "$server" --config-file="$chdir/config.xml" \
	>"$chdir/server.out" 2>&1 &
ch_pid=$!
q() { curl -sS --data-binary "$1" "$url"; }
for _i in $(seq 1 300); do q 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
echo "bench: clickhouse-server $(q 'SELECT version()') on $url" >&2

# now: seconds, with nanoseconds.
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "bench: recording $files files of $secs s" >&2
"$wp" record -q -o "$tmp/b.data" --rotate "$secs" -- "$build/tests/workloads/wallclock" \
	"$(echo "$files * $secs - 0.5" | bc)" >/dev/null
mapfile -t fs < <(ls "$tmp"/b.*.data)
bytes=$(cat "${fs[@]}" | wc -c)

"$wp" export --clickhouse "$url" --create-tables -q
# The symbol cache filled, as for the warm reports.
for f in "${fs[@]}"; do "$wp" report -q -i "$f" --format folded >/dev/null; done
t0=$(now)
"$wp" export --clickhouse "$url" -q "${fs[@]}"
t1=$(now)
rows=$(q 'SELECT (SELECT count() FROM wallprof_threads) + (SELECT count() FROM wallprof_samples)')
stacks=$(q 'SELECT count() FROM wallprof_stacks')
t2=$(now)
"$wp" export --clickhouse "$url" -q "${fs[@]}"
t3=$(now)

from=() each=()
for _r in $(seq 1 "$runs"); do
	a=$(now)
	"$wp" report --from "$url" --unit ns >"$tmp/from.folded"
	b=$(now)
	for f in "${fs[@]}"; do "$wp" report -q -i "$f" --format folded --unit ns; done >"$tmp/each.folded"
	c=$(now)
	from+=("$(echo "$b - $a" | bc)")
	each+=("$(echo "$c - $b" | bc)")
done
awk '{ w = $NF; sub(/ [0-9]+$/, ""); s[$0] += w } END { for (k in s) printf "%s %.0f\n", k, s[k] }' \
	"$tmp/each.folded" | sort >"$tmp/each.merged"
sort "$tmp/from.folded" >"$tmp/from.sorted"
same=different
cmp -s "$tmp/each.merged" "$tmp/from.sorted" && same=same
[ "$same" = same ] || { diff "$tmp/each.merged" "$tmp/from.sorted" | head -n 20 | cut -c1-300 >&2; } || true

export_s=$(echo "$t1 - $t0" | bc)
printf '%d files (%.1f MiB), %d thread and stack rows, %d stacks\n' "${#fs[@]}" \
	"$(echo "$bytes / 1048576" | bc -l)" "$rows" "$stacks"
printf 'export:             %6.2f s  (%.1f files/s, %.0f rows/s)\n' "$export_s" \
	"$(echo "${#fs[@]} / $export_s" | bc -l)" "$(echo "$rows / $export_s" | bc -l)"
printf 'export again:       %6.2f s  (every file in the server already)\n' \
	"$(echo "$t3 - $t2" | bc)"
printf 'report --from:      %6.2f s  (median of %d; folded, every file)\n' \
	"$(printf '%s\n' "${from[@]}" | median)" "$runs"
printf 'report, each file:  %6.2f s  (median of %d; folded, warm symbol cache)\n' \
	"$(printf '%s\n' "${each[@]}" | median)" "$runs"
printf 'folded stacks:      %s (%d lines)\n' "$same" "$(wc -l <"$tmp/from.sorted")"
