#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/wakeups.sh: what recording wake-ups costs, `wallprof record` with each
# --wakeups mode next to `perf record` recording the same tracepoints.
#
# Every profiled configuration records record.sh's events (cpu-clock every
# 1001001 ns, a sample at every context switch, switch records, DWARF user
# stacks of 8192 bytes and kernel callchains), and some add wake-ups:
# sched:sched_waking, sched:sched_wakeup and sched:sched_wakeup_new, with the
# waker's stack on sched_waking only ("stacks") or on none of them
# ("nostacks").  wallprof picks them with --wakeups=off|nostacks|stacks;
# perf gets the tracepoints with -e, and call-graph=no on those without
# stacks.
#
# For each workload and configuration it runs BENCH_RUNS times, interleaved,
# and prints the medians: file size, wake-up records captured, lost records,
# the workload's slowdown, the profiler's CPU time and peak RSS; then what
# each wake-up mode adds to the same tool without wake-ups, and wallprof's
# figures over perf's.  A benchmark, not a test: it prints figures, it never
# fails on them.  See bench/README.md for the columns and measured figures.
#
# Environment (defaults after =):
#   BENCH_RUNS=3            runs of every configuration; medians are printed
#   BENCH_SECONDS=3         how long each workload runs
#   BENCH_WORKLOADS="pingpong wallclock"   either or both:
#       pingpong        tests/workloads/pingpong: a switch storm, one wake-up
#                       per round; the result is rounds/s
#       wallclock       tests/workloads/wallclock: spinner, sleeper, two mutex
#                       lockers and a pipe reader; the result is the lockers'
#                       rounds/s (the mutex goes from one to the other by a
#                       futex wake-up)
#   BENCH_PINGPONG_CPUS=0   taskset CPU list for pingpong; empty: not pinned
#   BENCH_CONFIGS="wallprof-off wallprof-nostacks wallprof-stacks perf
#                  perf-nostacks perf-stacks perf-waking perf-z perf-stacks-z"
#       wallprof-off        wallprof record --wakeups=off
#       wallprof-nostacks   wallprof record --wakeups=nostacks
#       wallprof-stacks     wallprof record --wakeups=stacks
#       perf                perf record, record.sh's events, no wake-ups
#       perf-nostacks       + the three tracepoints, none with a stack
#       perf-stacks         + the three tracepoints, stacks on sched_waking
#                           only: the same as wallprof --wakeups=stacks
#       perf-waking         + -e sched:sched_waking alone (with stacks)
#       perf-z, perf-stacks-z   perf and perf-stacks with -z (zstd)
#   BENCH_NO_BUILD=1        do not run make (use the binaries as they are)
#   BENCH_BUILD=DIR         the build directory (default: build/, as tools/setup)
#   TMPDIR                  where the data files go (default /tmp; a perf file
#                           of a 3 s storm takes about 2.5 GB)
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
runs=${BENCH_RUNS:-3}
secs=${BENCH_SECONDS:-3}
workloads=${BENCH_WORKLOADS:-pingpong wallclock}
pp_cpus=${BENCH_PINGPONG_CPUS-0}
configs=${BENCH_CONFIGS:-wallprof-off wallprof-nostacks wallprof-stacks perf perf-nostacks perf-stacks perf-waking perf-z perf-stacks-z}
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

# --- what we need --------------------------------------------------------
missing=()
command -v perf >/dev/null 2>&1 || missing+=(linux-perf)
[ -x /usr/bin/time ] || missing+=(time)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing ${missing[*]}"
		apt-get install -y -q "${missing[@]}" >&2 ||
			{ apt-get update -q >&2 && apt-get install -y -q "${missing[@]}" >&2; }
	else
		die "missing: ${missing[*]} (Debian packages); install them (as root: apt-get install ${missing[*]})"
	fi
fi
for wl in $workloads; do
	case $wl in pingpong|wallclock) ;; *) die "unknown workload '$wl'" ;; esac
done

bench_build wallprof tests/workloads/pingpong tests/workloads/wallclock || die "cannot build"

d=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-wakeups.XXXXXX")
mounted=
cleanup() {
	rm -rf "$d"
	if [ -n "$mounted" ]; then umount "$mounted" 2>/dev/null || true; fi
}
trap cleanup EXIT

# shellcheck disable=SC2054 # "dwarf,8192" is one argument
perf_events=(-e cpu-clock/period=1001001/ -e context-switches/period=1/ --switch-events
	--call-graph dwarf,8192)
perf_nostacks=(-e sched:sched_waking/call-graph=no/ -e sched:sched_wakeup/call-graph=no/
	-e sched:sched_wakeup_new/call-graph=no/)
perf_stacks=(-e sched:sched_waking -e sched:sched_wakeup/call-graph=no/
	-e sched:sched_wakeup_new/call-graph=no/)
perf_waking=(-e sched:sched_waking)
if ! perf record -q -o "$d/P.data" "${perf_events[@]}" -- true >"$d/perf-check.log" 2>&1; then
	cat "$d/perf-check.log" >&2
	die "perf record does not work here (see above)"
fi
# perf finds tracepoints in tracefs, at /sys/kernel/tracing or under debugfs;
# as root, mount it when neither is there (and unmount it at the end).
perf_tp=1
if ! perf record -q -o "$d/P.data" "${perf_stacks[@]}" -- true >"$d/perf-check.log" 2>&1; then
	if [ "$(id -u)" = 0 ] && [ ! -d /sys/kernel/tracing/events ] &&
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
		mounted=/sys/kernel/tracing
		say "mounted tracefs on $mounted for perf (unmounted at the end)"
	fi
	if ! perf record -q -o "$d/P.data" "${perf_stacks[@]}" -- true >"$d/perf-check.log" 2>&1; then
		cat "$d/perf-check.log" >&2
		say "perf cannot record the sched tracepoints here (see above); perf runs will not record wake-ups"
		perf_tp=
	fi
fi
rm -f "$d/P.data"

if "$wp" record --help 2>&1 | grep -q -- '--wakeups'; then
	wp_wakeups=1
else
	wp_wakeups=
	say "this wallprof has no --wakeups: it records no wake-ups, and its only configuration is wallprof-off"
fi

# config -> label, the same tool without wake-ups, and profiler argv
cfg_label() {
	case $1 in
	base) echo "no profiler" ;;
	wallprof-off) if [ -n "$wp_wakeups" ]; then echo "wallprof --wakeups=off"; else echo "wallprof"; fi ;;
	wallprof-nostacks) echo "wallprof --wakeups=nostacks" ;;
	wallprof-stacks) echo "wallprof --wakeups=stacks" ;;
	perf) echo "perf" ;;
	perf-nostacks) echo "perf +wakeups nostacks" ;;
	perf-stacks) echo "perf +wakeups stacks" ;;
	perf-waking) echo "perf +sched_waking" ;;
	perf-z) echo "perf -z" ;;
	perf-stacks-z) echo "perf -z +wakeups stacks" ;;
	*) die "unknown configuration '$1'" ;;
	esac
}
cfg_ref() {
	case $1 in
	wallprof-nostacks|wallprof-stacks) echo wallprof-off ;;
	perf-nostacks|perf-stacks|perf-waking) echo perf ;;
	perf-stacks-z) echo perf-z ;;
	*) ;;
	esac
}
set_prof() {
	case $1 in
	base) prof=() ;;
	wallprof-off)
		if [ -n "$wp_wakeups" ]; then
			prof=("$wp" record -q --wakeups=off -o "$d/W.data" -f --)
		else
			prof=("$wp" record -q -o "$d/W.data" -f --)
		fi ;;
	wallprof-nostacks) prof=("$wp" record -q --wakeups=nostacks -o "$d/W.data" -f --) ;;
	wallprof-stacks) prof=("$wp" record -q --wakeups=stacks -o "$d/W.data" -f --) ;;
	perf) prof=(perf record -o "$d/P.data" "${perf_events[@]}" --) ;;
	perf-nostacks) prof=(perf record -o "$d/P.data" "${perf_events[@]}" "${perf_nostacks[@]}" --) ;;
	perf-stacks) prof=(perf record -o "$d/P.data" "${perf_events[@]}" "${perf_stacks[@]}" --) ;;
	perf-waking) prof=(perf record -o "$d/P.data" "${perf_events[@]}" "${perf_waking[@]}" --) ;;
	perf-z) prof=(perf record -z -o "$d/P.data" "${perf_events[@]}" --) ;;
	perf-stacks-z) prof=(perf record -z -o "$d/P.data" "${perf_events[@]}" "${perf_stacks[@]}" --) ;;
	esac
}
kept=
for c in $configs; do
	cfg_label "$c" >/dev/null
	case $c in
	wallprof-nostacks|wallprof-stacks)
		[ -n "$wp_wakeups" ] || { say "leaving out $c"; continue; } ;;
	perf-nostacks|perf-stacks|perf-waking|perf-stacks-z)
		[ -n "$perf_tp" ] || { say "leaving out $c"; continue; } ;;
	esac
	kept="$kept $c"
done
configs=${kept# }
[ -n "$configs" ] || die "no configuration left to run"

# --- workloads -----------------------------------------------------------
set_cmd() {
	case $1 in
	pingpong)
		if [ -n "$pp_cpus" ]; then
			cmd=(taskset -c "$pp_cpus" "$build/tests/workloads/pingpong" "$secs")
		else
			cmd=("$build/tests/workloads/pingpong" "$secs")
		fi ;;
	wallclock) cmd=("$build/tests/workloads/wallclock" "$secs") ;;
	esac
}
# The workload's own figure: pingpong's rounds/s; for wallclock, the two
# lockers' rounds/s together.  wallclock runs for a fixed time whatever the
# profiler costs it, so its wall time says nothing; the lockers' rounds are
# the work it gets done, and each round hands the mutex over by a wake-up.
wl_result() {
	case $1 in
	pingpong) awk -v s="$secs" '/^thread ping /{for (i = 1; i < NF; i++) if ($i == "rounds") print $(i + 1) / s}' "$2" ;;
	wallclock) awk -v s="$secs" '/^thread locker/{for (i = 1; i < NF; i++) if ($i == "rounds") { t += $(i + 1); n++ } }
		END { if (n) print t / s }' "$2" ;;
	esac
}
# The workload's CPU seconds: the sum of its threads' schedstat on-CPU time
# (what the kernel spends sampling them is charged to them, so it is in).
wl_cpu() {
	awk '/^thread /{for (i = 1; i < NF; i++) if ($i == "oncpu_ns") { t += $(i + 1); n++ } }
		END { if (n) print t / 1e9 }' "$1"
}

# --- figures of one data file --------------------------------------------
# Prints: size lost records wakings wakeups oncpu switch_stacks ("?" when
# unknown).  records: the kernel's records written; lost: those it dropped;
# wakings: sched_waking samples; wakeups: samples of all three tracepoints.
perf_figures() {
	local f=$1 size
	size=$(stat -c %s "$f")
	# perf 6.1 cannot always read back its own -z files ("failed to
	# process type: 81") and still exits 0: such a file counts as unread.
	perf report --stats -i "$f" >"$d/stats.txt" 2>"$d/stats.err" || true
	if grep -q 'failed to process' "$d/stats.err"; then
		echo "$size ? ? ? ? ? ?"
		return
	fi
	awk -v size="$size" '
	/ stats:$/ { ev = $1; next }
	$2 == "events:" {
		if (ev == "Aggregated") {
			if ($1 ~ /^(SAMPLE|MMAP|MMAP2|COMM|EXIT|FORK|THROTTLE|UNTHROTTLE|LOST|SWITCH|SWITCH_CPU_WIDE|NAMESPACES|KSYMBOL|BPF_EVENT|CGROUP|TEXT_POKE|READ|AUX|ITRACE_START)$/)
				rec += $3
		} else {
			if ($1 == "LOST_SAMPLES") lost += $3
			if ($1 == "SAMPLE" && ev ~ /^sched:sched_waking/) wk += $3
			if ($1 == "SAMPLE" && ev ~ /^sched:sched_wak/) wu += $3
			if ($1 == "SAMPLE" && ev ~ /^cpu-clock/) on += $3
			if ($1 == "SAMPLE" && ev ~ /^context-switches/) sw += $3
		}
		seen = 1
	}
	END {
		if (!seen) { print size, "?", "?", "?", "?", "?", "?"; exit }
		print size, lost + 0, rec + 0, wk + 0, wu + 0, on + 0, sw + 0
	}' "$d/stats.txt"
}
# wallprof: the # summary: and # lost: lines of the dump, and its SAMPLE
# records counted by event (their sum over the three tracepoints is the
# "N wake-ups" of record's summary line).
wallprof_figures() {
	local f=$1 size
	size=$(stat -c %s "$f")
	{ "$wp" report --dump -i "$f" 2>/dev/null || true; } | awk -v size="$size" '
	function num(word,   i) {
		for (i = 2; i <= NF; i++)
			if ($i == word || $i == word ",") return $(i - 1)
		return "?"
	}
	$2 == "SAMPLE" {
		if ($6 == "sched:sched_waking") wk++
		if ($6 ~ /^sched:sched_wak/) wu++
		next
	}
	/^# summary:/ { rec = num("records"); on = num("samples"); sw = num("off-CPU") }
	/^# lost:/ { lr = num("records"); ls = num("samples") }
	END {
		if (rec == "" || lr == "") { print size, "?", "?", "?", "?", "?", "?"; exit }
		print size, (lr == "?" || ls == "?") ? "?" : lr + ls, rec, wk + 0, wu + 0, on, sw
	}'
}

# --- the runs ------------------------------------------------------------
res=$d/results.tsv
: >"$res"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
say "data files in $d; $runs runs of: base $configs"
for wl in $workloads; do
	for ((r = 1; r <= runs; r++)); do
		# rotate the order every run, so no configuration always follows
		# the same one
		read -r -a all <<<"base $configs"
		for ((i = 0; i < ${#all[@]}; i++)); do
			c=${all[(i + r - 1) % ${#all[@]}]}
			rm -f "$d/P.data" "$d/W.data"
			set_prof "$c"
			set_cmd "$wl"
			status=0
			/usr/bin/time -f '%M %e %U %S' -o "$d/time.out" "${prof[@]}" "${cmd[@]}" \
				>"$d/out.txt" 2>"$d/err.txt" || status=$?
			read -r rss elapsed ucpu scpu <<<"$(tail -n 1 "$d/time.out")" || true
			case $rss in ''|*[!0-9]*) rss='?'; elapsed='?'; ucpu=; scpu= ;; esac
			result=$(wl_result "$wl" "$d/out.txt")
			wcpu=$(wl_cpu "$d/out.txt")
			pcpu=$(awk -v u="${ucpu:-?}" -v s="${scpu:-?}" -v w="${wcpu:-?}" 'BEGIN {
				if (u == "?" || s == "?" || w == "?") print "?"; else printf "%.3f\n", u + s - w }')
			if [ "$status" != 0 ]; then
				say "$wl $c run $r: exit status $status; its stderr:"
				tail -n 5 "$d/err.txt" >&2
			fi
			case $c in
			base) figs="? ? ? ? ? ? ?" ;;
			perf*) if [ -f "$d/P.data" ]; then figs=$(perf_figures "$d/P.data"); else figs="? ? ? ? ? ? ?"; fi ;;
			wallprof*) if [ -f "$d/W.data" ]; then figs=$(wallprof_figures "$d/W.data"); else figs="? ? ? ? ? ? ?"; fi ;;
			esac
			read -r size lost rec wk wu on sw <<<"$figs"
			pct=$(awk -v l="$lost" -v w="$rec" 'BEGIN {
				if (l == "?" || w == "?") print "?"
				else if (l + w == 0) print 0
				else printf "%.4f\n", 100 * l / (l + w) }')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$c" "$r" \
				"$size" "$lost" "$rec" "$pct" "$wk" "$wu" "${result:-?}" "$rss" "$elapsed" \
				"${wcpu:-?}" "$pcpu" "$on" "$sw" >>"$res"
			say "$(printf '%-9s run %d/%d %-17s size %-11s lost %-7s wakings %-7s wake-ups %-7s result %-8s wl-cpu %-6s prof-cpu %-6s rss %s KiB, %s s' \
				"$wl" "$r" "$runs" "$c" "$size" "$lost" "$wk" "$wu" "${result:-?}" "${wcpu:-?}" "$pcpu" "$rss" "$elapsed")"
			rm -f "$d/P.data" "$d/W.data"
			sync
		done
	done
done

# --- the tables ----------------------------------------------------------
# median WORKLOAD CONFIG COLUMN (columns of results.tsv, 1-based)
median() {
	awk -F '\t' -v wl="$1" -v c="$2" -v col="$3" '$1 == wl && $2 == c && $col != "?" { print $col }' "$res" |
		sort -g | awk '{ v[NR] = $1 } END {
			if (NR == 0) print "?"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# slowdown WORKLOAD CONFIG: % of the baseline's result lost, from medians
slowdown() {
	awk -v r="$(median "$1" "$2" 10)" -v b="$(median "$1" base 10)" 'BEGIN {
		if (r == "?" || b == "?" || b == 0) print "?"; else printf "%.4f\n", 100 * (1 - r / b) }'
}

echo
echo "wake-ups: wallprof record vs perf record: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs, perf $(perf --version | awk '{print $3}'), wallprof $("$wp" --version 2>/dev/null | awk '{print $NF; exit}')"
rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null) || rev=
if [ -n "$rev" ] && ! git -C "$top" diff --quiet HEAD -- src cmd include 2>/dev/null; then
	rev="$rev + uncommitted changes in src/ cmd/ include/"
fi
[ -n "$rev" ] && echo "wallprof built from ${rev}"
echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $runs runs of $secs s; base events: cpu-clock period 1001001 ns, context-switches period 1, switch records, dwarf 8192, kernel callchains"
echo "wake-ups: sched_waking, sched_wakeup, sched_wakeup_new; \"stacks\": the waker's stack on sched_waking only"
case " $workloads " in *" pingpong "*)
	if [ -n "$pp_cpus" ]; then
		echo "pingpong pinned with taskset -c $pp_cpus (the profilers are not pinned); result: rounds/s"
	else
		echo "pingpong not pinned; result: rounds/s"
	fi ;;
esac
case " $workloads " in *" wallclock "*) echo "wallclock: result: the two lockers' mutex rounds/s" ;; esac
echo
printf '%-9s %-28s %9s %8s %8s %8s %6s %10s %9s %9s %11s %8s %7s\n' \
	workload tool 'size(MiB)' wakings wake-ups lost 'lost%' result slowdown% 'wl-CPU(s)' \
	'prof-CPU(s)' 'RSS(MiB)' 'time(s)'
for wl in $workloads; do
	for c in base $configs; do
		awk -v wl="$wl" -v label="$(cfg_label "$c")" -v cfg="$c" \
			-v size="$(median "$wl" "$c" 4)" -v lost="$(median "$wl" "$c" 5)" \
			-v pct="$(median "$wl" "$c" 7)" -v wk="$(median "$wl" "$c" 8)" \
			-v wu="$(median "$wl" "$c" 9)" -v res="$(median "$wl" "$c" 10)" \
			-v slow="$(slowdown "$wl" "$c")" -v rss="$(median "$wl" "$c" 11)" \
			-v el="$(median "$wl" "$c" 12)" -v wcpu="$(median "$wl" "$c" 13)" \
			-v pcpu="$(median "$wl" "$c" 14)" 'BEGIN {
			f2 = "%.2f"
			s_size = size == "?" ? "-" : sprintf(size >= 1048576 * 100 ? "%.0f" : "%.2f", size / 1048576)
			s_wk = wk == "?" ? "-" : sprintf("%d", wk)
			s_wu = wu == "?" ? "-" : sprintf("%d", wu)
			s_lost = lost == "?" ? "-" : sprintf("%d", lost)
			s_pct = pct == "?" ? "-" : sprintf(f2, pct)
			s_res = res == "?" ? "-" : sprintf("%.0f/s", res)
			s_slow = (cfg == "base" || slow == "?") ? "-" : sprintf("%.1f", slow)
			s_rss = rss == "?" ? "-" : sprintf("%.1f", rss / 1024)
			s_wcpu = wcpu == "?" ? "-" : sprintf(f2, wcpu)
			s_pcpu = pcpu == "?" ? "-" : sprintf(f2, pcpu)
			s_el = el == "?" ? "-" : sprintf(f2, el)
			printf "%-9s %-28s %9s %8s %8s %8s %6s %10s %9s %9s %11s %8s %7s\n", wl, label, s_size,
				s_wk, s_wu, s_lost, s_pct, s_res, s_slow, s_wcpu, s_pcpu, s_rss, s_el
		}'
	done
	for c in $configs; do
		awk -F '\t' -v wl="$wl" -v c="$c" -v label="$(cfg_label "$c")" '
		$1 == wl && $2 == c { n++; if ($4 != "?" && $5 == "?") u++ }
		END { if (u) printf "  %s: %d of %d data files could not be read back; their figures are left out\n", label, u, n }' "$res"
	done
	# Pinned, pingpong's ping wakes pong once a round (pong, woken, takes
	# the CPU and finds ping still runnable when it answers): wakings per
	# round show how many of them the file holds.
	if [ "$wl" = pingpong ]; then
		line="  sched_waking records per round (about 1 when none is missing):"
		for c in $configs; do
			case $c in wallprof-off|perf|perf-z) continue ;; esac
			line+=$(awk -F '\t' -v wl="$wl" -v c="$c" -v s="$secs" -v label="$(cfg_label "$c")" '
			$1 == wl && $2 == c && $8 != "?" && $10 != "?" && $10 > 0 { v[++n] = $8 / ($10 * s) }
			END {
				if (!n) exit
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
				printf " %s %.3f;", label, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			}' "$res")
		done
		echo "$line"
	fi
	echo
done

# What each wake-up mode adds to the same tool without wake-ups: medians
# against medians.  Per wake-up: over the wake-up records captured.
echo "extra cost of wake-ups, over the same tool without them (differences of the medians above)"
printf '%-9s %-28s %-22s %10s %9s %10s %12s %9s %9s\n' workload tool 'over' '+size(MiB)' '+B/wake' \
	'+slowdown' '+prof-CPU(s)' '+us/wake' '+RSS(MiB)'
for wl in $workloads; do
	for c in $configs; do
		ref=$(cfg_ref "$c")
		[ -n "$ref" ] || continue
		case " $configs " in *" $ref "*) ;; *) continue ;; esac
		awk -v wl="$wl" -v label="$(cfg_label "$c")" -v rlabel="$(cfg_label "$ref")" \
			-v s="$(median "$wl" "$c" 4)" -v rs="$(median "$wl" "$ref" 4)" \
			-v wu="$(median "$wl" "$c" 9)" \
			-v sl="$(slowdown "$wl" "$c")" -v rsl="$(slowdown "$wl" "$ref")" \
			-v p="$(median "$wl" "$c" 14)" -v rp="$(median "$wl" "$ref" 14)" \
			-v m="$(median "$wl" "$c" 11)" -v rm="$(median "$wl" "$ref" 11)" 'BEGIN {
			ds = (s == "?" || rs == "?") ? "?" : s - rs
			dp = (p == "?" || rp == "?") ? "?" : p - rp
			s_ds = ds == "?" ? "-" : sprintf("%+.2f", ds / 1048576)
			s_bw = (ds == "?" || wu == "?" || wu == 0) ? "-" : sprintf("%+.0f", ds / wu)
			s_sl = (sl == "?" || rsl == "?") ? "-" : sprintf("%+.1f pt", sl - rsl)
			s_dp = dp == "?" ? "-" : sprintf("%+.2f", dp)
			s_uw = (dp == "?" || wu == "?" || wu == 0) ? "-" : sprintf("%+.1f", 1e6 * dp / wu)
			s_dm = (m == "?" || rm == "?") ? "-" : sprintf("%+.1f", (m - rm) / 1024)
			printf "%-9s %-28s %-22s %10s %9s %10s %12s %9s %9s\n", wl, label, rlabel, s_ds, s_bw,
				s_sl, s_dp, s_uw, s_dm
		}'
	done
done
echo

# wallprof over perf recording the same wake-ups
pairs=
for c in wallprof-nostacks wallprof-stacks; do
	case " $configs " in *" $c "*) ;; *) continue ;; esac
	case $c in
	wallprof-nostacks) ps="perf-nostacks" ;;
	*) ps="perf-stacks perf-waking perf-stacks-z" ;;
	esac
	for p in $ps; do
		case " $configs " in *" $p "*) pairs="$pairs $c:$p" ;; esac
	done
done
if [ -n "$pairs" ]; then
	echo "ratios, wallprof / perf (medians; extra: over the same tool without wake-ups)"
	for wl in $workloads; do
		for pr in $pairs; do
			c=${pr%%:*} p=${pr#*:}
			cr=$(cfg_ref "$c") pref=$(cfg_ref "$p")
			awk -v wl="$wl" -v lc="$(cfg_label "$c")" -v lp="$(cfg_label "$p")" \
				-v s="$(median "$wl" "$c" 4)" -v ps="$(median "$wl" "$p" 4)" \
				-v rs="$(median "$wl" "$cr" 4)" -v prs="$(median "$wl" "$pref" 4)" \
				-v wk="$(median "$wl" "$c" 8)" -v pwk="$(median "$wl" "$p" 8)" \
				-v l="$(median "$wl" "$c" 7)" -v pl="$(median "$wl" "$p" 7)" \
				-v r="$(median "$wl" "$c" 10)" -v pr_="$(median "$wl" "$p" 10)" \
				-v c_="$(median "$wl" "$c" 14)" -v pc="$(median "$wl" "$p" 14)" \
				-v m="$(median "$wl" "$c" 11)" -v pm="$(median "$wl" "$p" 11)" '
			function ratio(a, b) { return (a == "?" || b == "?" || b + 0 == 0) ? "-" : sprintf("%.3f", a / b) }
			BEGIN {
				es = (s == "?" || rs == "?") ? "?" : s - rs
				pes = (ps == "?" || prs == "?") ? "?" : ps - prs
				if (l == "?" || pl == "?") lr = "-"
				else if (pl == 0 && l == 0) lr = "- (neither lost any)"
				else if (pl == 0) lr = sprintf("- (perf lost none, wallprof %.2f%%)", l)
				else lr = sprintf("%.3f", l / pl)
				printf "  %-9s %s / %s: size %s, extra size %s, wakings captured %s, lost%% %s, result %s, prof-CPU %s, RSS %s\n",
					wl, lc, lp, ratio(s, ps), ratio(es, pes), ratio(wk, pwk), lr, ratio(r, pr_), ratio(c_, pc), ratio(m, pm)
			}'
		done
	done
	echo
fi
echo "per-run figures (TSV: workload config run size lost records lost% wakings wake-ups result rss_kib elapsed_s wl_cpu_s prof_cpu_s on-cpu switch-stacks):"
cat "$res"
