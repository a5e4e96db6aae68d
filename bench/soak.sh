#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/soak.sh: `wallprof record` of a mixed workload for a long time, with
# wallprof's resident memory and its files' size over time: nothing that
# record keeps may grow with the length of the recording.
#
#	bench/soak.sh [SECONDS]     default 600 (10 minutes) per mode; try 60 first
#
# The workloads run for SECONDS, all at once (BENCH_WORKLOADS chooses):
#   wallclock   threads that spin, sleep, fight over a mutex, wait on a pipe
#   churn       short threads (5 ms each) one after the other, and a process
#               every fourth thread
#   pingpong    two threads passing a byte through pipes: a switch storm
#               that alone keeps both CPUs of a small machine busy
# recorded with wallprof's defaults (stacks at every switch-out included),
# once in each mode (BENCH_MODES chooses, in this order):
#   plain       one file, with the stack copies (--unwind=report)
#   flight      --flight-recorder BENCH_WINDOW: nothing written but at a
#               SIGUSR1 sent at each quarter of the run, and at the end
#               (--unwind=report)
#   rotate      --rotate BENCH_ROTATE: a new file every interval
#               (--unwind=report)
#   live        --unwind=live (the default): one file of distinct stacks,
#               which grows with the stacks the workloads have, not with
#               time
#   live-flight, live-rotate   flight and rotate, unwound live
# Every BENCH_INTERVAL seconds it prints the time, wallprof record's
# resident memory (VmRSS of the process, its threads included), the bytes
# of its files so far (complete ones and the one being written), how many
# files are complete, and the size of the newest complete one; then the
# growth of the resident memory from the end of the first tenth of the
# run to the end, and, unless BENCH_NO_REPORT is set, report's peak
# memory and time on the newest file.  A benchmark, not a test: it prints
# figures, it never fails on them.
#
# Environment (defaults after =):
#   BENCH_SECONDS=600       how long, when no argument is given
#   BENCH_WORKLOADS="wallclock churn pingpong"
#   BENCH_MODES="plain flight rotate"   (or any of the modes above)
#   BENCH_WINDOW=10         --flight-recorder seconds
#   BENCH_ROTATE            --rotate seconds (default: SECONDS / 10, at least 1)
#   BENCH_INTERVAL          seconds between samples (default: SECONDS / 20)
#   BENCH_NO_REPORT=1       do not report on the recording at the end
#   BENCH_NO_BUILD=1        do not run make (use the binaries as they are)
#   BENCH_BUILD=DIR         the build directory (default: build/, as tools/setup)
#   TMPDIR                  where the data files go (default /tmp; about
#                           1 MiB per second of recording with pingpong, in
#                           plain and rotate modes; one mode's at a time)
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
# The stack copies kept: said, as live is the default (a build from before
# it knows no --unwind, and keeps them anyway).
raw=()
"$wp" record --help 2>&1 | grep -q -- '--unwind' && raw=(--unwind=report)

modes=${BENCH_MODES:-plain flight rotate}
window=${BENCH_WINDOW:-10}
rotate=${BENCH_ROTATE:-$(( secs / 10 ))}
[ "$rotate" -ge 1 ] || rotate=1
for m in $modes; do
	case $m in plain | flight | rotate | live | live-flight | live-rotate) ;;
	*) die "unknown mode '$m' (plain, flight, rotate, live, live-flight or live-rotate)" ;;
	esac
done

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

# rss_kib PID: the resident memory of the process, or nothing once it is gone.
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null || true; }
# dir_bytes: the files so far, temporary ones included.
dir_bytes() { du -sb "$d/out" 2>/dev/null | cut -f1; }
# complete: the complete files, oldest first.
complete() { find "$d/out" -maxdepth 1 -name 'soak*.data' | sort; }

soak() {
	local mode=$1 opts=() start t kib rc last n sent=0
	case $mode in
	plain) opts=(${raw[@]+"${raw[@]}"}) ;;
	flight) opts=(${raw[@]+"${raw[@]}"} --flight-recorder "$window") ;;
	rotate) opts=(${raw[@]+"${raw[@]}"} --rotate "$rotate") ;;
	live) opts=(--unwind=live) ;;
	live-flight) opts=(--unwind=live --flight-recorder "$window") ;;
	live-rotate) opts=(--unwind=live --rotate "$rotate") ;;
	esac
	rm -rf "$d/out"
	mkdir "$d/out"
	echo "bench: $mode: recording $workloads for $secs s ${opts[*]}" >&2
	"$wp" record -q "${opts[@]}" -o "$d/out/soak.data" -- sh -c "${cmd}wait" \
		>"$d/workload.out" 2>"$d/record.err" &
	pid=$!
	start=$(date +%s)
	printf '%-11s %8s %10s %10s %6s %10s\n' mode "time(s)" "RSS(MiB)" "files(MiB)" files \
		"last(MiB)"
	: >"$d/rss"
	while kill -0 "$pid" 2>/dev/null; do
		sleep "$interval"
		kib=$(rss_kib "$pid")
		[ -n "$kib" ] || break
		t=$(( $(date +%s) - start ))
		# The flight recorder writes what it keeps at each quarter of the run.
		if [ "${mode#live-}" = flight ] && [ $(( t * 4 / secs )) -gt "$sent" ] && [ "$t" -lt "$secs" ]; then
			sent=$(( t * 4 / secs ))
			kill -USR1 "$pid" 2>/dev/null || true
		fi
		echo "$t $kib" >>"$d/rss"
		last=$(complete | tail -n 1)
		n=$(complete | grep -c '' || true)
		awk -v m="$mode" -v t="$t" -v k="$kib" -v b="$(dir_bytes)" -v n="$n" \
			-v l="$(if [ -n "$last" ]; then stat -c %s "$last"; else echo 0; fi)" \
			'BEGIN { printf "%-11s %8d %10.1f %10.1f %6d %10.1f\n", m, t, k / 1024,
				 b / 1048576, n, l / 1048576 }'
	done
	rc=0
	wait "$pid" || rc=$?
	pid=
	[ "$rc" -eq 0 ] || { cat "$d/record.err" >&2; die "wallprof record failed (status $rc)"; }

	# Growth after the first tenth of the run, when everything is set up.
	awk -v m="$mode" -v from="$(( secs / 10 ))" '
		$1 >= from && !n++ { first = $2; lo = $2; hi = $2 }
		$1 >= from { last = $2; if ($2 < lo) lo = $2; if ($2 > hi) hi = $2 }
		END {
			if (!n) { print m ": no samples after the first tenth of the run"; exit }
			printf "%s: RSS from %d s to the end: %.1f MiB first, %.1f MiB last, %.1f to " \
				"%.1f MiB; grew %+.1f MiB (%+.1f%%)\n", m, from, first / 1024,
				last / 1024, lo / 1024, hi / 1024, (last - first) / 1024,
				100 * (last - first) / first
		}' "$d/rss"
	last=$(complete | tail -n 1)
	[ -n "$last" ] || die "$mode: no file written"
	awk -v m="$mode" -v b="$(dir_bytes)" -v n="$(complete | grep -c '' || true)" \
		-v l="$(stat -c %s "$last")" 'BEGIN {
		printf "%s: %d file(s), %.1f MiB in all, the last %.1f MiB\n", m, n, b / 1048576,
			l / 1048576 }'
	grep -h 'flight recorder let' "$d/record.err" | sed "s/^/$mode: /" || true

	if [ -z "${BENCH_NO_REPORT:-}" ]; then
		echo "bench: $mode: reporting $(basename "$last")" >&2
		python3 - "$mode" "$wp" report -q -i "$last" -o /dev/null <<'EOF'
import resource, subprocess, sys, time
t = time.time()
subprocess.run(sys.argv[2:], check=True)
print("%s: report: %.1f s, peak %.1f MiB" %
      (sys.argv[1], time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
EOF
	fi
}

for m in $modes; do
	soak "$m"
done
