#!/usr/bin/env bash
# Run the libFuzzer harnesses of a fuzz build for a bounded time.
#
# usage: tests/fuzz/run.sh BUILD-DIR [SECONDS]
#        tests/fuzz/run.sh --seed-only BUILD-DIR
#
# BUILD-DIR was configured with CC=clang --enable-fuzzers and built.  Seeds:
# recordings of the test workloads made now (small ones, compressed and
# not), and the committed corpora tests/fuzz/corpus-*.  The three harnesses
# run at once, SECONDS each (default 60): fuzz-reader and fuzz-report on
# bytes, fuzz-structured on choices from which it builds whole files (its
# inputs are long from the start: a file needs hundreds of choices).  Any crash, leak, timeout, excess of
# memory or sanitizer report fails the run: the report is printed with the
# input that caused it (in base64, when small), which also stays in
# BUILD-DIR/fuzz/NAME/.  With the bug fixed, that input goes into
# tests/fuzz/corpus-NAME/, which every build's unit tests replay.
# The recorded seeds are made once per build (BUILD-DIR/fuzz-seeds);
# --seed-only makes them and stops, so that tools/check makes them while
# its other stages run.
set -u
seed_only=false
[ "${1:-}" = --seed-only ] && { seed_only=true; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--seed-only] BUILD-DIR [SECONDS]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
seconds=${2:-60}
src=$(cd "$(dirname "$0")" && pwd)
work=$build/fuzz
seeds=$build/fuzz-seeds
# Per input: far beyond what any input takes, even on a busy machine (the
# slowest seen took over 10 s), and what the corpus replay allows.
timeout=60
rss_mb=2048
max_len=262144

harnesses="reader report structured"
for h in $harnesses; do
	[ -x "$build/tests/fuzz/fuzz-$h" ] ||
		{ echo "no $build/tests/fuzz/fuzz-$h: configure with CC=clang --enable-fuzzers and build" >&2; exit 2; }
done
# Seeds recorded from this build's wallprof: small recordings of every
# kind of stack, compressed and not, with the stack copies
# (--unwind=report) and unwound live (the default: a stack table).  Without perf events (an
# unprivileged container), the committed corpora still seed the run.
make_seeds() {
	rm -rf "$seeds"
	mkdir -p "$seeds"
	make -s -C "$build" tests/workloads/spin tests/workloads/wallclock \
		tests/workloads/sleeper tests/workloads/pingpong >/dev/null 2>&1
	seeded=0
	for w in "spin 0.2" "wallclock 0.2" "sleeper 5 10" "pingpong 0.05"; do
		for g in dwarf,1024 fp; do
			for z in --no-compress --compress; do
				for u in report live; do
					name=${w%% *}-${g%%,*}-${z#--}-$u
					# shellcheck disable=SC2086
					if ASAN_OPTIONS=detect_leaks=0 "$build/wallprof" record -q -F 199 \
						-g "$g" "$z" --unwind="$u" -o "$seeds/$name.wprof" -- \
						"$build/tests/workloads/"$w >/dev/null 2>"$seeds/$name.err"; then
						seeded=$((seeded + 1))
					fi
					rm -f "$seeds/$name.err"
				done
			done
		done
	done
	echo "$seeded" >"$seeds/.made"
}
# (Made again when the build's wallprof is newer than they are.)
if [ ! -f "$seeds/.made" ] || [ "$build/wallprof" -nt "$seeds/.made" ]; then
	make_seeds
fi
$seed_only && exit 0
[ "$(cat "$seeds/.made")" -gt 0 ] ||
	echo "note: no recording could be made (no perf events?); seeds are the committed corpora only"
rm -rf "$work"
mkdir -p "$work/reader/new" "$work/report/new" "$work/structured/new"

export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1
for h in $harnesses; do
	if [ "$h" = structured ]; then
		more="-len_control=0 -max_len=16384"
	else
		more="-max_len=$max_len -dict=$src/wallprof.dict"
	fi
	# shellcheck disable=SC2086
	"$build/tests/fuzz/fuzz-$h" -max_total_time="$seconds" -timeout="$timeout" \
		-rss_limit_mb="$rss_mb" $more -detect_leaks=1 -print_final_stats=1 \
		-artifact_prefix="$work/$h/" "$work/$h/new" "$seeds" "$src"/corpus-* \
		>"$work/$h/log" 2>&1 &
	eval "pid_$h=$!"
done
trap 'kill "$pid_reader" "$pid_report" "$pid_structured" 2>/dev/null; exit 1' HUP INT TERM

failed=0
for h in $harnesses; do
	eval "wait \$pid_$h"
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$h/log")
	new=$(sed -n 's/^stat::new_units_added: *//p' "$work/$h/log")
	found=$(find "$work/$h" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) | sort)
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		echo "PASS: fuzz-$h: ${runs:-?} inputs in ${seconds}s (${rate:-?}/s), ${new:-?} new"
		continue
	fi
	failed=1
	echo "FAIL: fuzz-$h (exit status $rc); its report:"
	# The sanitizer's or libFuzzer's own report, without the fuzzing progress.
	grep -v -E '^#[0-9]+[[:space:]]|^"|^###|^INFO: |^Dictionary: |^stat::' "$work/$h/log" | tail -n 80 | sed 's/^/  /'
	for f in $found; do
		size=$(wc -c <"$f")
		echo "  input: $f ($size bytes)"
		echo "  to replay it in any build: tests/unit/test-fuzz-$h INPUT"
		if [ "$size" -le 16384 ]; then
			echo "  (INPUT is the base64 below, decoded with base64 -d)"
			base64 "$f" | sed 's/^/    /'
		fi
	done
done
exit "$failed"
