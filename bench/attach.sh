#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/attach.sh: `wallprof record -p` and `perf record -p` on the same
# running process that keeps making short threads (tests/workloads/spawner
# join: its main thread spins SPIN_US, then makes a thread that spins as
# long and joins it).  Each tool attaches for BENCH_SECONDS, one after the
# other, with the same events (cpu-clock every 1001001 ns); the main
# thread's on-CPU time over each window is read from its schedstat, the
# kernel's own figure.  Printed: the main thread's samples, and samples per
# expected sample (on-CPU time / period), for each tool.  A benchmark, not a
# test.
#
# Environment: BENCH_SECONDS=2, BENCH_SPIN_US=200, BENCH_NO_BUILD, BENCH_BUILD
# (see bench/lib.sh).
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
secs=${BENCH_SECONDS:-2}
spin=${BENCH_SPIN_US:-200}
period=1001001
export LC_ALL=C
command -v perf >/dev/null || { echo "bench: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
bench_build wallprof tests/workloads/spawner || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
trap 'kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

"$build/tests/workloads/spawner" join $((4 * secs + 4)) "$spin" 0.5 >"$tmp/wl.out" &
pid=$!
while ! grep -q '^pid ' "$tmp/wl.out"; do sleep 0.1; done
sleep 1
printf '%-26s %10s %12s %17s\n' tool "main on" "main samples" "samples/expected"
# The main thread's on-CPU time over each tool's own window: wallprof's
# figure (exact, from switch records, and tested against schedstat), and
# for perf schedstat read by the command perf runs for its duration.
"$wp" record -q -f -o "$tmp/W.data" -p "$pid" -d "$secs"
read -r n on < <("$wp" report -i "$tmp/W.data" --format json |
	python3 -c 'import json, sys
d = json.load(sys.stdin)
m = [t for t in d["threads"] if t["tid"] == int(sys.argv[1])][0]
print(m["samples"], m["on_cpu_ns"])' "$pid")
printf '%-26s %8.1fms %12d %17.2f\n' "wallprof record -p" "$(echo "$on / 1000000" | bc -l)" \
	"$n" "$(echo "$n * $period / $on" | bc -l)"
perf record -q -o "$tmp/P.data" -e cpu-clock/period=$period/ -p "$pid" -- \
	sh -c "cut -d ' ' -f 1 /proc/$pid/task/$pid/schedstat; sleep $secs;
	       cut -d ' ' -f 1 /proc/$pid/task/$pid/schedstat" >"$tmp/ss" 2>/dev/null
on=$(($(sed -n 2p "$tmp/ss") - $(sed -n 1p "$tmp/ss")))
n=$(perf script -i "$tmp/P.data" -F tid 2>/dev/null | awk -v t="$pid" '$1 == t' | wc -l)
printf '%-26s %8.1fms %12d %17.2f\n' "perf record -p" "$(echo "$on / 1000000" | bc -l)" \
	"$n" "$(echo "$n * $period / $on" | bc -l)"
