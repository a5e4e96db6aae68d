#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/threads.sh: the memory `wallprof report` takes per recorded thread.
#
# Records two workloads that make short threads, one after the other, each
# for BENCH_SHORT and for BENCH_SECONDS seconds:
#   spawner   tests/workloads/spawner join: threads of one process;
#   churn     tests/workloads/churn: a process too every fourth thread.
# Each thread spins BENCH_SPIN_US microseconds, far less than a sampling
# period, so most get no sample (servers that start a thread per request).
# Then reports each recording (text, to /dev/null) and prints its threads,
# report's peak resident memory and wall time, and the difference in peak
# memory between the long and the short recording divided by the
# difference in threads: what one more thread costs, whatever the fixed
# costs (libraries, debug information, caches, buffers).  For churn, that
# includes a quarter of a process per thread.
# A benchmark, not a test: it prints figures, it never fails on them.
#
# Environment (defaults after =):
#   BENCH_SECONDS=16        the long recordings (some 100k threads on 2 CPUs)
#   BENCH_SHORT=1           the short ones
#   BENCH_SPIN_US=1         how long each thread spins
#   BENCH_WORKLOADS="spawner churn"
#   BENCH_NO_BUILD=1        do not run make (use the binaries as they are)
#   BENCH_BUILD=DIR         the build directory (default: build/, as tools/setup)
#   TMPDIR                  where the data files go (default /tmp)
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
secs=${BENCH_SECONDS:-16}
short=${BENCH_SHORT:-1}
spin_us=${BENCH_SPIN_US:-1}
workloads=${BENCH_WORKLOADS:-spawner churn}
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || die "python3 is missing (apt-get install python3)"
bench_build wallprof tests/workloads/spawner tests/workloads/churn || die "cannot build"

d=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
trap 'rm -rf "$d"' EXIT

# peak CMD...: run CMD (output to /dev/null); prints "PEAK_KIB SECONDS".
peak() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys, time
t = time.time()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.2f" % (time.time() - t))
EOF
}

# threads DATA: the threads in the recording's report.
threads() {
	"$wp" report -q -i "$1" --format json |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["threads"]))'
}

# workload NAME SECONDS: the command that runs it.
workload() {
	case $1 in
	spawner) echo "$build/tests/workloads/spawner join $2 $spin_us 0" ;;
	churn) echo "$build/tests/workloads/churn $2 $spin_us" ;;
	*) die "unknown workload '$1' (spawner or churn)" ;;
	esac
}

printf '%-8s %8s %9s %10s %8s\n' workload threads "file MiB" "peak MiB" seconds
for w in $workloads; do
	declare -A nthr=() kib=()
	for run in short long; do
		s=$short
		[ $run = long ] && s=$secs
		echo "bench: recording $w for $s s" >&2
		# shellcheck disable=SC2046 # the command is words
		"$wp" record -q -o "$d/$run.data" -- $(workload "$w" "$s") >/dev/null
		nthr[$run]=$(threads "$d/$run.data")
		read -r kib[$run] took <<<"$(peak "$wp" report -q -i "$d/$run.data" -o /dev/null)"
		awk -v w="$w" -v n="${nthr[$run]}" -v b="$(stat -c %s "$d/$run.data")" \
			-v k="${kib[$run]}" -v t="$took" 'BEGIN {
			printf "%-8s %8d %9.1f %10.1f %8.2f\n", w, n, b / 1048576, k / 1024, t }'
		rm -f "$d/$run.data"
	done
	if [ "${nthr[long]}" -gt "${nthr[short]}" ]; then
		echo "$w: $(( (kib[long] - kib[short]) * 1024 / (nthr[long] - nthr[short]) ))" \
			"bytes per thread (peak memory, long minus short, over the threads added)"
	else
		echo "$w: the long recording has no more threads than the short one" >&2
	fi
done
