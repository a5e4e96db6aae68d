#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/soak.sh: `wallprof record` of a mixed workload for a long time, with
# wallprof's resident memory over time, which should stay flat: nothing
# that record keeps may grow with the length of the recording.
#
#	bench/soak.sh [SECONDS]     default 600 (10 minutes); try 60 first
#
# The workloads run for SECONDS, all at once (BENCH_WORKLOADS chooses):
#   wallclock   threads that spin, sleep, fight over a mutex, wait on a pipe
#   churn       short threads (5 ms each) one after the other, and a process
#               every fourth thread
#   pingpong    two threads passing a byte through pipes: a switch storm
#               that alone keeps both CPUs of a small machine busy
# recorded with wallprof's defaults (stacks at every switch-out included).
# Every BENCH_INTERVAL seconds it prints the time, wallprof record's
# resident memory (VmRSS of the process, its threads included) and the size
# of the file so far; then the growth of the resident memory from the end
# of the first tenth of the run (rings mapped, buffers allocated) to the
# end, and, unless BENCH_NO_REPORT is set, report's peak memory and time on
# the recording.  A benchmark, not a test: it prints figures, it never
# fails on them.
#
# Environment (defaults after =):
#   BENCH_SECONDS=600       how long, when no argument is given
#   BENCH_WORKLOADS="wallclock churn pingpong"
#   BENCH_INTERVAL          seconds between samples (default: SECONDS / 20)
#   BENCH_NO_REPORT=1       do not report on the recording at the end
#   BENCH_NO_BUILD=1        do not run make (use the binaries as they are)
#   BENCH_BUILD=DIR         the build directory (default: build/, as tools/setup)
#   TMPDIR                  where the data file goes (default /tmp; about
#                           1 MiB per second of recording)
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
secs=${1:-${BENCH_SECONDS:-600}}
workloads=${BENCH_WORKLOADS:-wallclock churn pingpong}
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 10 ] || die "'$secs' is not a number of seconds, 10 or more"
interval=${BENCH_INTERVAL:-$(( secs / 20 ))}
[ "$interval" -ge 1 ] || interval=1
command -v python3 >/dev/null 2>&1 || die "python3 is missing (apt-get install python3)"
bench_build wallprof tests/workloads/wallclock tests/workloads/churn tests/workloads/pingpong ||
	die "cannot build"

d=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-soak.XXXXXX")
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$d"
}
trap cleanup EXIT

wl=$build/tests/workloads
cmd=
for w in $workloads; do
	case $w in
	wallclock | pingpong) cmd="$cmd'$wl/$w' $secs & " ;;
	churn) cmd="$cmd'$wl/churn' $secs 5000 & " ;;
	*) die "unknown workload '$w' (wallclock, churn or pingpong)" ;;
	esac
done
echo "bench: recording $workloads for $secs s" >&2
"$wp" record -q -o "$d/soak.data" -- sh -c "${cmd}wait" >"$d/workload.out" 2>"$d/record.err" &
pid=$!

# rss_kib PID: the resident memory of the process, or nothing once it is gone.
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
# file_bytes: the recording so far (under a temporary name until it ends).
file_bytes() { du -sb "$d" 2>/dev/null | cut -f1; }

start=$(date +%s)
printf '%8s %10s %10s\n' "time(s)" "RSS(MiB)" "file(MiB)"
: >"$d/rss"
while kill -0 "$pid" 2>/dev/null; do
	sleep "$interval"
	kib=$(rss_kib "$pid")
	[ -n "$kib" ] || break
	t=$(( $(date +%s) - start ))
	echo "$t $kib" >>"$d/rss"
	awk -v t="$t" -v k="$kib" -v b="$(file_bytes)" \
		'BEGIN { printf "%8d %10.1f %10.1f\n", t, k / 1024, b / 1048576 }'
done
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || { cat "$d/record.err" >&2; die "wallprof record failed (status $rc)"; }

# Growth after the first tenth of the run, when everything is set up.
awk -v from="$(( secs / 10 ))" '
	$1 >= from && !n++ { first = $2; lo = $2; hi = $2 }
	$1 >= from { last = $2; if ($2 < lo) lo = $2; if ($2 > hi) hi = $2 }
	END {
		if (!n) { print "no samples after the first tenth of the run"; exit }
		printf "RSS from %d s to the end: %.1f MiB first, %.1f MiB last, %.1f to %.1f MiB;" \
			" grew %+.1f MiB (%+.1f%%)\n", from, first / 1024, last / 1024, lo / 1024,
			hi / 1024, (last - first) / 1024, 100 * (last - first) / first
	}' "$d/rss"
awk -v b="$(stat -c %s "$d/soak.data")" 'BEGIN { printf "recording: %.1f MiB\n", b / 1048576 }'

if [ -z "${BENCH_NO_REPORT:-}" ]; then
	echo "bench: reporting" >&2
	python3 - "$wp" report -q -i "$d/soak.data" -o /dev/null <<'EOF'
import resource, subprocess, sys, time
t = time.time()
subprocess.run(sys.argv[1:], check=True)
print("report: %.1f s, peak %.1f MiB" %
      (time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
EOF
fi
