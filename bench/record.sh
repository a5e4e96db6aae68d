#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/record.sh: `wallprof record` and `perf record` side by side, with the
# same events, on the same workloads, in one run of this script.
#
# Events (wallprof's defaults, spelled out for perf): on-CPU cpu-clock
# samples every 1001001 ns (999 Hz), a sample at every context switch
# (context-switches, period 1), context-switch records, DWARF user stacks of
# 8192 bytes and kernel callchains.
#
# For each workload and configuration (no profiler, perf, wallprof, ...) it
# runs BENCH_RUNS times, interleaved, and prints the medians: file size, lost
# records and lost %, samples captured, the workload's slowdown and the
# profiler's peak RSS.  A benchmark, not a test: it prints figures, it never
# fails on them.  See bench/README.md for the columns and measured figures.
#
# Environment (defaults after =):
#   BENCH_RUNS=3            runs of every configuration; medians are printed
#   BENCH_SECONDS=3         duration of pingpong/spin; work is calibrated to it
#   BENCH_WORKLOADS="pingpong work"   any of: pingpong work spin
#   BENCH_PINGPONG_CPUS=0   taskset CPU list for pingpong; empty: not pinned
#   BENCH_WORK_THREADS=$(nproc)      threads of the fixed-work workload
#   BENCH_CONFIGS="perf perf-z perf-nostacks wallprof wallprof-all wallprof-alt"
#                           profiled configurations:
#       perf            perf record, the events above
#       perf-z          the same with -z (zstd)
#       perf-m16M       the same with -m 16M (wallprof's ring size)
#       perf-nostacks   perf without the context-switches event: switch
#                       records and on-CPU samples only, the floor that
#                       bounded switch-out stacks can approach
#       wallprof        wallprof record with its defaults (stacks unwound
#                       while recording, when the binary unwinds live by
#                       default; else the stack copies kept)
#       wallprof-all    wallprof --switch-stacks=all: a stack at every
#                       switch-out, as perf here
#       wallprof-live   wallprof --unwind=live: stacks unwound while
#                       recording, a stack table in the file (the default
#                       now; for builds from before it was)
#       wallprof-raw    wallprof --unwind=report: the stack copies kept in
#                       the file, for report to unwind
#       wallprof-rate   wallprof --switch-stacks=$BENCH_SWITCH_RATE (default
#                       4000 a second per CPU): switch-out stacks bounded,
#                       the rest estimated
#       wallprof-alt    wallprof --no-compress if it has that option
#                       (compression is then the default), else wallprof -z
#       wallprof-nc, wallprof-z     either one explicitly
#       wallprof-wakeups  wallprof's own default as root: wake-ups too
#                       (bounded with the switch-out stacks)
#                       Every other wallprof configuration adds --wakeups=off
#                       when the binary has it: perf records no wake-ups here
#                       (bench/wakeups.sh compares them).
#   BENCH_NO_BUILD=1        do not run make (use the binaries as they are)
#   BENCH_BUILD=DIR         the build directory (default: build/, as tools/setup)
#   TMPDIR                  where the data files go (default /tmp)
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
runs=${BENCH_RUNS:-3}
secs=${BENCH_SECONDS:-3}
workloads=${BENCH_WORKLOADS:-pingpong work}
pp_cpus=${BENCH_PINGPONG_CPUS-0}
work_threads=${BENCH_WORK_THREADS:-$(nproc)}
configs=${BENCH_CONFIGS:-perf perf-z perf-nostacks wallprof wallprof-wakeups wallprof-all wallprof-alt}
switch_rate=${BENCH_SWITCH_RATE:-4000}
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

# --- what we need --------------------------------------------------------
missing=()
command -v perf >/dev/null 2>&1 || missing+=(linux-perf)
[ -x /usr/bin/time ] || missing+=(time)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
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

bench_build wallprof tests/workloads/pingpong tests/workloads/spin || die "cannot build"

d=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-bench.XXXXXX")
trap 'rm -rf "$d"' EXIT
cc -O2 -g -fomit-frame-pointer -pthread -o "$d/work" "$bench_here/work.c" || die "cannot build bench/work.c"

# shellcheck disable=SC2054 # "dwarf,8192" is one argument
perf_events=(-e cpu-clock/period=1001001/ -e context-switches/period=1/ --switch-events
	--call-graph dwarf,8192)
if ! perf record -q -o "$d/P.data" "${perf_events[@]}" -- true >"$d/perf-check.log" 2>&1; then
	cat "$d/perf-check.log" >&2
	die "perf record does not work here (see above)"
fi
rm -f "$d/P.data"

if "$wp" record --help 2>&1 | grep -q -- '--no-compress'; then
	wp_has_nc=1
else
	wp_has_nc=
fi
# wallprof records wake-ups by default when it may; perf here records none,
# so every wallprof configuration turns them off (bench/wakeups.sh measures
# what they cost).
wp_opts=()
if "$wp" record --help 2>&1 | grep -q -- '--wakeups'; then
	wp_opts=(--wakeups=off)
fi
# Switch-out stacks bounded, or all (older wallprofs took one at every
# switch-out and know no option for it).
wp_rate=() wp_all=()
if "$wp" record --help 2>&1 | grep -q -- '--switch-stacks'; then
	wp_rate=(--switch-stacks="$switch_rate")
	wp_all=(--switch-stacks=all)
fi

# config -> label and profiler argv (without the workload)
cfg_label() {
	case $1 in
	base) echo "no profiler" ;;
	perf) echo "perf" ;;
	perf-z) echo "perf -z" ;;
	perf-m16M) echo "perf -m 16M" ;;
	perf-nostacks) echo "perf, no switch stacks" ;;
	wallprof) echo "wallprof" ;;
	wallprof-wakeups) echo "wallprof, wake-ups" ;;
	wallprof-all) echo "wallprof --switch-stacks=all" ;;
	wallprof-live) echo "wallprof --unwind=live" ;;
	wallprof-raw) echo "wallprof --unwind=report" ;;
	wallprof-rate) echo "wallprof --switch-stacks=$switch_rate" ;;
	wallprof-alt) if [ -n "$wp_has_nc" ]; then echo "wallprof --no-compress"; else echo "wallprof -z"; fi ;;
	wallprof-nc) echo "wallprof --no-compress" ;;
	wallprof-z) echo "wallprof -z" ;;
	*) die "unknown configuration '$1'" ;;
	esac
}
set_prof() {
	case $1 in
	base) prof=() ;;
	perf) prof=(perf record -o "$d/P.data" "${perf_events[@]}" --) ;;
	perf-z) prof=(perf record -z -o "$d/P.data" "${perf_events[@]}" --) ;;
	perf-m16M) prof=(perf record -m 16M -o "$d/P.data" "${perf_events[@]}" --) ;;
	perf-nostacks) prof=(perf record -o "$d/P.data" -e cpu-clock/period=1001001/ --switch-events
		--call-graph dwarf,8192 --) ;;
	wallprof) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} -o "$d/W.data" -f --) ;;
	wallprof-wakeups) prof=("$wp" record -q -o "$d/W.data" -f --) ;;
	wallprof-rate) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} ${wp_rate[@]+"${wp_rate[@]}"} -o "$d/W.data" -f --) ;;
	wallprof-all) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} ${wp_all[@]+"${wp_all[@]}"} -o "$d/W.data" -f --) ;;
	wallprof-live) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} --unwind=live -o "$d/W.data" -f --) ;;
	wallprof-raw) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} --unwind=report -o "$d/W.data" -f --) ;;
	wallprof-alt)
		if [ -n "$wp_has_nc" ]; then
			prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} --no-compress -o "$d/W.data" -f --)
		else
			prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} -z -o "$d/W.data" -f --)
		fi ;;
	wallprof-nc) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} --no-compress -o "$d/W.data" -f --) ;;
	wallprof-z) prof=("$wp" record -q ${wp_opts[@]+"${wp_opts[@]}"} -z -o "$d/W.data" -f --) ;;
	esac
}
for c in $configs; do cfg_label "$c" >/dev/null; done
for wl in $workloads; do
	case $wl in pingpong|work|spin) ;; *) die "unknown workload '$wl'" ;; esac
done

# --- workloads -----------------------------------------------------------
work_iters=
set_cmd() {
	case $1 in
	pingpong)
		if [ -n "$pp_cpus" ]; then
			cmd=(taskset -c "$pp_cpus" "$build/tests/workloads/pingpong" "$secs")
		else
			cmd=("$build/tests/workloads/pingpong" "$secs")
		fi ;;
	work) cmd=("$d/work" "$work_iters" "$work_threads") ;;
	spin) cmd=("$build/tests/workloads/spin" "$secs") ;;
	*) die "unknown workload '$1'" ;;
	esac
}
# The workload's own figure: pingpong rounds/s, work wall seconds, spin none.
# wl_cpu: the workload's own CPU seconds (schedstat of its threads, or
# getrusage for work), profiling costs charged to its threads included.
wl_result() {
	case $1 in
	pingpong) awk -v s="$secs" '/^thread ping /{for (i = 1; i < NF; i++) if ($i == "rounds") print $(i + 1) / s}' "$2" ;;
	work) awk '/^work /{for (i = 1; i < NF; i++) if ($i == "wall_ns") print $(i + 1) / 1e9}' "$2" ;;
	*) ;;
	esac
}
wl_cpu() {
	case $1 in
	work) awk '/^work /{for (i = 1; i < NF; i++) if ($i == "cpu_ns") print $(i + 1) / 1e9}' "$2" ;;
	*) awk '/^thread /{for (i = 1; i < NF; i++) if ($i == "oncpu_ns") { t += $(i + 1); n++ } }
		END { if (n) print t / 1e9 }' "$2" ;;
	esac
}
case " $workloads " in
*" work "*)
	work_iters=$("$d/work" --calibrate "$secs")
	say "work: $work_threads threads x $work_iters iterations (about $secs s per thread on an idle CPU)" ;;
esac

# --- figures of one data file --------------------------------------------
# Prints: size lost records oncpu switch_stacks lost_records_written
# (records = kernel records written, PERF_RECORD_LOST ones included, as
# wallprof counts them; lost = records the kernel dropped; "?" when unknown).
perf_figures() {
	local f=$1 size
	size=$(stat -c %s "$f")
	# perf 6.1 cannot always read back its own -z files ("failed to
	# process type: 81") and still exits 0: such a file counts as unread.
	perf report --stats -i "$f" >"$d/stats.txt" 2>"$d/stats.err" || true
	if grep -q 'failed to process' "$d/stats.err"; then
		echo "$size ? ? ? ? ?"
		return
	fi
	awk -v size="$size" '
	/ stats:$/ { ev = $1; next }
	$2 == "events:" {
		if (ev == "Aggregated") {
			# records the kernel wrote (perf'"'"'s own synthesized types excluded)
			if ($1 ~ /^(SAMPLE|MMAP|MMAP2|COMM|EXIT|FORK|THROTTLE|UNTHROTTLE|LOST|SWITCH|SWITCH_CPU_WIDE|NAMESPACES|KSYMBOL|BPF_EVENT|CGROUP|TEXT_POKE|READ|AUX|ITRACE_START)$/)
				rec += $3
			if ($1 == "LOST") chunks = $3
		} else {
			# per event: SAMPLE = captured, LOST_SAMPLES = the kernel'"'"'s
			# count of records lost (switch records count on cpu-clock)
			if ($1 == "LOST_SAMPLES") lost += $3
			if ($1 == "SAMPLE" && ev ~ /^cpu-clock/) on += $3
			if ($1 == "SAMPLE" && ev ~ /^context-switches/) sw += $3
		}
		seen = 1
	}
	END {
		if (!seen) { print size, "?", "?", "?", "?", "?"; exit }
		print size, lost + 0, rec + 0, on + 0, sw + 0, chunks + 0
	}' "$d/stats.txt"
}
wallprof_figures() {
	local f=$1 size
	size=$(stat -c %s "$f")
	{ "$wp" report --dump -i "$f" 2>/dev/null || true; } | awk -v size="$size" '
	function num(word,   i) {
		for (i = 2; i <= NF; i++)
			if ($i == word || $i == word ",") return $(i - 1)
		return "?"
	}
	$2 == "LOST" { chunks++ }
	/^# summary:/ { rec = num("records"); on = num("samples"); sw = num("off-CPU"); wk = num("wake-ups") }
	/^# lost:/ { lr = num("records"); ls = num("samples") }
	END {
		if (rec == "" || lr == "") { print size, "?", "?", "?", "?", "?", "?"; exit }
		print size, (lr == "?" || ls == "?") ? "?" : lr + ls, rec, on, sw, chunks + 0, wk == "?" ? 0 : wk
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
		# the same one (the biggest file's deletion, say)
		read -r -a all <<<"base $configs"
		for ((i = 0; i < ${#all[@]}; i++)); do
			c=${all[(i + r - 1) % ${#all[@]}]}
			rm -f "$d/P.data" "$d/W.data"
			set_prof "$c"
			set_cmd "$wl"
			status=0
			/usr/bin/time -f '%M %e %U %S' -o "$d/time.out" "${prof[@]}" "${cmd[@]}" \
				>"$d/out.txt" 2>"$d/err.txt" || status=$?
			# the last line: time(1) may put "Command exited with
			# non-zero status" first
			read -r rss elapsed ucpu scpu <<<"$(tail -n 1 "$d/time.out")" || true
			case $rss in ''|*[!0-9]*) rss='?'; elapsed='?'; ucpu=; scpu= ;; esac
			result=$(wl_result "$wl" "$d/out.txt")
			wcpu=$(wl_cpu "$wl" "$d/out.txt")
			slices=$(awk '/^thread /{for (i = 1; i < NF; i++) if ($i == "slices") { t += $(i + 1); n++ } }
				END { if (n) print t }' "$d/out.txt")
			# the profiler's CPU time: the whole tree's minus the workload's
			pcpu=$(awk -v u="${ucpu:-?}" -v s="${scpu:-?}" -v w="${wcpu:-?}" 'BEGIN {
				if (u == "?" || s == "?" || w == "?") print "?"; else printf "%.3f\n", u + s - w }')
			if [ "$status" != 0 ]; then
				say "$wl $c run $r: exit status $status; its stderr:"
				tail -n 5 "$d/err.txt" >&2
			fi
			case $c in
			base) figs="? ? ? ? ? ?" ;;
			perf*) if [ -f "$d/P.data" ]; then figs=$(perf_figures "$d/P.data"); else figs="? ? ? ? ? ?"; fi ;;
			wallprof*) if [ -f "$d/W.data" ]; then figs=$(wallprof_figures "$d/W.data"); else figs="? ? ? ? ? ?"; fi ;;
			esac
			wk=0
			read -r size lost rec on sw chunks wk <<<"$figs"
			# lost % as wallprof prints it: lost / (written + lost)
			pct=$(awk -v l="$lost" -v w="$rec" 'BEGIN {
				if (l == "?" || w == "?") print "?"
				else if (l + w == 0) print 0
				else printf "%.4f\n", 100 * l / (l + w) }')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$c" "$r" \
				"$size" "$lost" "$rec" "$pct" "$on" "$sw" "${result:-?}" "$rss" "$elapsed" \
				"${wcpu:-?}" "$pcpu" "${slices:-?}" "$chunks" "${wk:-0}" >>"$res"
			say "$(printf '%-8s run %d/%d %-13s size %-11s lost %-7s on-cpu %-5s switch-stacks %-7s result %-8s wl-cpu %-6s prof-cpu %-6s rss %s KiB, %s s' \
				"$wl" "$r" "$runs" "$c" "$size" "$lost" "$on" "$sw" "${result:-?}" "${wcpu:-?}" "$pcpu" "$rss" "$elapsed")"
			rm -f "$d/P.data" "$d/W.data"
			sync
		done
	done
done

# --- the table -----------------------------------------------------------
# median WORKLOAD CONFIG COLUMN (columns of results.tsv, 1-based)
median() {
	awk -F '\t' -v wl="$1" -v c="$2" -v col="$3" '$1 == wl && $2 == c && $col != "?" { print $col }' "$res" |
		sort -g | awk '{ v[NR] = $1 } END {
			if (NR == 0) print "?"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# KiB per captured stack: the median of every run's own figure
per_stack() {
	awk -F '\t' -v wl="$1" -v c="$2" '$1 == wl && $2 == c && $4 != "?" && $8 != "?" && $8 + $9 > 0 {
		print $4 / 1024 / ($8 + $9) }' "$res" | sort -g | awk '{ v[NR] = $1 } END {
			if (NR == 0) print "?"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo
echo "wallprof record vs perf record: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -sr), $(nproc) CPUs, perf $(perf --version | awk '{print $3}'), wallprof $("$wp" --version 2>/dev/null | awk '{print $NF; exit}')"
rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null) || rev=
if [ -n "$rev" ] && ! git -C "$top" diff --quiet HEAD -- src cmd include 2>/dev/null; then
	rev="$rev + uncommitted changes in src/ cmd/ include/"
fi
[ -n "$rev" ] && echo "wallprof built from ${rev}"
echo "load average before: $load0, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $runs runs; events: cpu-clock period 1001001 ns, context-switches period 1 (wallprof: its default budget; wallprof-rate: --switch-stacks=$switch_rate), switch records, dwarf 8192, kernel callchains"
[ ${#wp_opts[@]} -eq 0 ] || echo "wallprof runs with ${wp_opts[*]} (no wake-ups, as perf here)"
case " $workloads " in *" pingpong "*)
	if [ -n "$pp_cpus" ]; then
		echo "pingpong pinned with taskset -c $pp_cpus (the profilers are not pinned)"
	else
		echo "pingpong not pinned"
	fi ;;
esac
case " $workloads " in *" work "*) echo "work: $work_threads threads x $work_iters iterations" ;; esac
echo
printf '%-9s %-23s %9s %9s %8s %6s %6s %13s %12s %9s %10s %11s %8s %7s\n' \
	workload tool 'size(MiB)' 'KiB/stack' lost 'lost%' on-cpu switch-stacks result slowdown% 'wl-CPU(s)' \
	'prof-CPU(s)' 'RSS(MiB)' 'time(s)'
for wl in $workloads; do
	base=$(median "$wl" base 10)
	case $wl in pingpong) unit='rnd/s' ;; work) unit='s' ;; *) unit= ;; esac
	for c in base $configs; do
		size=$(median "$wl" "$c" 4); lost=$(median "$wl" "$c" 5); pct=$(median "$wl" "$c" 7)
		on=$(median "$wl" "$c" 8); sw=$(median "$wl" "$c" 9); result=$(median "$wl" "$c" 10)
		rss=$(median "$wl" "$c" 11); el=$(median "$wl" "$c" 12); ps=$(per_stack "$wl" "$c")
		wcpu=$(median "$wl" "$c" 13); pcpu=$(median "$wl" "$c" 14)
		awk -v wl="$wl" -v label="$(cfg_label "$c")" -v size="$size" -v ps="$ps" -v lost="$lost" \
			-v pct="$pct" -v on="$on" -v sw="$sw" -v res="$result" -v unit="$unit" -v base="$base" \
			-v rss="$rss" -v el="$el" -v cfg="$c" -v wcpu="$wcpu" -v pcpu="$pcpu" 'BEGIN {
			f2 = "%.2f"
			s_size = size == "?" ? "-" : sprintf(size >= 1048576 * 100 ? "%.0f" : "%.2f", size / 1048576)
			s_ps = ps == "?" ? "-" : sprintf(f2, ps)
			s_lost = lost == "?" ? "-" : sprintf("%d", lost)
			s_pct = pct == "?" ? "-" : sprintf(f2, pct)
			s_on = on == "?" ? "-" : sprintf("%d", on)
			s_sw = sw == "?" ? "-" : sprintf("%d", sw)
			if (res == "?") s_res = "-"
			else if (unit == "rnd/s") s_res = sprintf("%.0f %s", res, unit)
			else s_res = sprintf("%.2f %s", res, unit)
			if (cfg == "base" || res == "?" || base == "?" || base == 0) s_slow = "-"
			else if (unit == "rnd/s") s_slow = sprintf("%.1f", 100 * (1 - res / base))
			else s_slow = sprintf("%.1f", 100 * (res / base - 1))
			s_rss = rss == "?" ? "-" : sprintf("%.1f", rss / 1024)
			s_wcpu = wcpu == "?" ? "-" : sprintf(f2, wcpu)
			s_pcpu = pcpu == "?" ? "-" : sprintf(f2, pcpu)
			s_el = el == "?" ? "-" : sprintf(f2, el)
			printf "%-9s %-23s %9s %9s %8s %6s %6s %13s %12s %9s %10s %11s %8s %7s\n", wl, label, s_size,
				s_ps, s_lost, s_pct, s_on, s_sw, s_res, s_slow, s_wcpu, s_pcpu, s_rss, s_el
		}'
	done
	for c in $configs; do
		awk -F '\t' -v wl="$wl" -v c="$c" -v label="$(cfg_label "$c")" '
		$1 == wl && $2 == c { n++; if ($4 != "?" && $5 == "?") u++ }
		END { if (u) printf "  %s: %d of %d data files could not be read back; their figures are left out\n", label, u, n }' "$res"
	done
	# Every time slice of a pingpong thread gives a switch-in and a
	# switch-out record and, with a stack at every switch-out, a stack:
	# 3 x slices + on-CPU samples is what the kernel generated (2 x slices
	# + on-CPU samples + stacks written when the stacks are bounded, as in
	# wallprof's configurations other than wallprof-all); written (less the PERF_RECORD_LOST records)
	# + lost should match it, give or take a few dozen COMM, MMAP2, FORK
	# and EXIT records.  Negative: losses the tool did not count.
	if [ "$wl" = pingpong ]; then
		awk -F '\t' -v wl="$wl" -v cfgs="$configs" '
		$1 == wl && $5 != "?" && $8 != "?" && $15 != "?" && $16 != "?" {
			n[$2]++
			v = $6 - $16 - $17 + $5 - ($2 ~ /^wallprof/ && $2 != "wallprof-all" ? 2 * $15 + $8 + $9 : $2 == "perf-nostacks" ? 2 * $15 + $8 : 3 * $15 + $8)
			a = v < 0 ? -v : v
			if (n[$2] == 1 || a > mx[$2]) { mx[$2] = a; mv[$2] = v }
		}
		END {
			line = "  accounting check, written + lost - wake-ups - (3 x slices + on-cpu), worst of the runs:"
			m = split(cfgs, c, " ")
			for (i = 1; i <= m; i++) if (n[c[i]]) line = line sprintf(" %s %+d;", c[i], mv[c[i]])
			print line
		}' "$res"
	fi
	# For fixed work the CPU it takes is steadier than its wall time when
	# other tasks share the machine: workload + profiler CPU vs none.
	if [ "$wl" = work ]; then
		line="  CPU for the same work (workload + profiler) vs no profiler:"
		bcpu=$(median "$wl" base 13)
		for c in $configs; do
			line+=$(awk -F '\t' -v wl="$wl" -v c="$c" -v b="$bcpu" -v label="$(cfg_label "$c")" '
			$1 == wl && $2 == c && $13 != "?" && $14 != "?" { v[++n] = $13 + $14 }
			END {
				if (!n || b == "?" || b == 0) exit
				# median of the runs
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
				m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				printf " %s %+.1f%%;", label, 100 * (m / b - 1)
			}' "$res")
		done
		echo "$line"
	fi
	# ratios of every wallprof configuration to perf (and to perf -z)
	for c in $configs; do
		case $c in wallprof*) ;; *) continue ;; esac
		for p in perf perf-z; do
			case " $configs " in *" $p "*) ;; *) continue ;; esac
			awk -v lw="$(cfg_label "$c")" -v lp="$(cfg_label "$p")" \
				-v ws="$(median "$wl" "$c" 4)" -v psz="$(median "$wl" "$p" 4)" \
				-v wk="$(per_stack "$wl" "$c")" -v pk="$(per_stack "$wl" "$p")" \
				-v wl_="$(median "$wl" "$c" 7)" -v pl="$(median "$wl" "$p" 7)" 'BEGIN {
				sz = (ws == "?" || psz == "?" || psz == 0) ? "-" : sprintf("%.3f", ws / psz)
				ks = (wk == "?" || pk == "?" || pk == 0) ? "-" : sprintf("%.3f", wk / pk)
				if (wl_ == "?" || pl == "?") lr = "-"
				else if (pl == 0 && wl_ == 0) lr = "- (neither lost any)"
				else if (pl == 0) lr = "- (perf lost none, wallprof " sprintf("%.2f", wl_) "%)"
				else lr = sprintf("%.3f", wl_ / pl)
				printf "  ratio %s / %s: size %s, KiB/stack %s, lost%% %s\n", lw, lp, sz, ks, lr
			}'
		done
	done
	# the project's targets: every wallprof configuration against perf
	case " $configs " in *" perf "*)
		for c in $configs; do
			case $c in wallprof*) ;; *) continue ;; esac
			awk -F '\t' -v wl="$wl" -v c="$c" -v label="$(cfg_label "$c")" \
				-v ws="$(median "$wl" "$c" 4)" -v psz="$(median "$wl" perf 4)" \
				-v wk="$(per_stack "$wl" "$c")" -v pk="$(per_stack "$wl" perf)" \
				-v wl_="$(median "$wl" "$c" 7)" -v pl="$(median "$wl" perf 7)" '
			$1 == wl && $2 == c && $7 != "?" { n++; if ($7 > 0) { k++; if ($7 > mx) mx = $7 } }
			$1 == wl && $2 == "perf" && $7 != "?" {
				if (!pn++ || $7 < pmin) pmin = $7
				if ($7 > pmax) pmax = $7
			}
			END {
				pr = sprintf("perf median %.2f%%, range %.2f-%.2f%%", pl, pmin, pmax)
				if (!n || pl == "?") t1 = "unknown"
				else if (!k) t1 = sprintf("met, none lost in %d of %d runs (%s)", n, n, pr)
				else if (wl_ * 10 <= pl && pl > 0) t1 = sprintf("met but not none: lost in %d of %d runs (max %.2f%%, median %.2f%%; %s)", k, n, mx, wl_, pr)
				else t1 = sprintf("NOT met: lost in %d of %d runs (max %.2f%%, median %.2f%%; %s)", k, n, mx, wl_, pr)
				if (ws == "?" || psz == "?" || psz == 0) t2 = "unknown"
				else t2 = sprintf("%s: file %.3f of perf.data%s", ws * 4 <= psz ? "met" : "NOT met", ws / psz, \
					(wk == "?" || pk == "?" || pk == 0) ? "" : sprintf(", %.3f per captured stack", wk / pk))
				printf "  target (%s) lost%% far below perf, aim none: %s\n", label, t1
				printf "  target (%s) size <= 1/4 of perf.data: %s\n", label, t2
			}' "$res"
		done
		# The switch storm: the slowdown of each against perf's (the
		# target: wallprof's default at most half of perf's).
		if [ "$wl" = pingpong ]; then
			base=$(median "$wl" base 10)
			for c in $configs; do
				case $c in wallprof*) ;; *) continue ;; esac
				awk -v label="$(cfg_label "$c")" -v b="$base" -v w="$(median "$wl" "$c" 10)" \
					-v p="$(median "$wl" perf 10)" -v dflt="$(case $c in wallprof|wallprof-wakeups) echo 1 ;; esac)" 'BEGIN {
					if (b == "?" || w == "?" || p == "?" || b == 0 || p >= b) exit
					sw = 1 - w / b; sp = 1 - p / b
					printf "  slowdown (%s) %.1f%% vs perf %.1f%%: ratio %.2f%s\n", label, 100 * sw, 100 * sp,
						sw / sp, dflt ? (sw * 2 <= sp ? " (target <= 0.5: met)" : " (target <= 0.5: NOT met)") : ""
				}'
			done
		fi ;;
	esac
	echo
done
echo "per-run figures (TSV: workload config run size lost records lost% on-cpu switch-stacks result rss_kib elapsed_s wl_cpu_s prof_cpu_s slices lost_records_written wakeups):"
cat "$res"
