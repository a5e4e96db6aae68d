#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/servers.sh: what profiling costs a real server.  PostgreSQL under
# pgbench and Redis under redis-benchmark, from Debian's packages, on
# loopback, each run alone and under every profiler configuration in turn
# (alternating, BENCH_RUNS rounds), a fresh server for every run.  Prints
# one table: the medians of throughput, its ratio to the same round's
# server alone, the recorder's CPU seconds (user + system) per second of
# benchmark (launched, less the server's own, which GNU time counts as
# the recorder's child's), and the server's own CPU per operation (its threads' and its
# reaped children's, from /proc) with its ratio to the round's alone.  A benchmark, not a test: it prints figures and never fails
# on them.
#
# Configurations (BENCH_CONFIGS, in this order by default):
#   alone             the server and the benchmark only
#   wallprof-attach   wallprof record -p SERVER (its defaults)
#   wallprof-launch   wallprof record -- SERVER (its defaults)
#   wallprof-service  the server started in a cgroup of its own (as systemd
#                     runs a service), then wallprof record -p with every
#                     process in it: attached through the cgroup
#   wallprof-off      wallprof record -p SERVER --wakeups=off
#   wallprof-nostacks wallprof record -p SERVER --wakeups=nostacks
#   wallprof-allstacks wallprof record -p SERVER --wakeups=all-stacks (the
#                     clients' stacks too, as the default once took them)
#   wallprof-noswitch wallprof record -p SERVER --switch-stacks=1 (one
#                     switch-out stack a second per CPU: almost none)
#   wallprof-nooff    wallprof record -p SERVER --no-off-cpu (on-CPU samples
#                     only: no switch records, stacks or wake-ups)
#   wallprof-nostack  wallprof record -p SERVER -g none (no stack copies)
#   wallprof-switchN  wallprof record -p SERVER --switch-stacks=N
#   wallprof-freqN    wallprof record -p SERVER -F N (on-CPU samples a second)
#   wallprof-raw      wallprof record -p SERVER --unwind=report (stack
#                     copies in the file, unwound by report: the default
#                     until live unwinding became it)
#   wallprof-before   wallprof record -p SERVER with the wallprof binary
#                     BENCH_BEFORE names (a build of an earlier commit:
#                     a change measured side by side with what it changes)
# (the last three, not run by default, take the default apart)
#   wallprof-top      wallprof top -b -p SERVER (batch mode, the default
#                     refresh of a second, its JSON thrown away): what
#                     watching a server live costs it (not run by default)
#   perf              perf record -p SERVER -e cpu-clock -e cs
#                     --switch-events --call-graph dwarf (what perf needs
#                     for on- and off-CPU stacks)
#   offcputime        libbpf-tools' offcputime -p SERVER (in-kernel, off-CPU
#                     stacks only, summed in the kernel)
#
# Environment (defaults after =):
#   BENCH_RUNS=6              rounds; every configuration runs once a round
#   BENCH_SERVERS="redis pgbench"
#   BENCH_SECONDS=6           how long pgbench runs (-T)
#   BENCH_REDIS_REQUESTS=300000   redis-benchmark -n (GET, 20 clients)
#   BENCH_PGBENCH_CLIENTS=4   pgbench -c (and -j 2)
#   BENCH_CONFIGS             as above
#   BENCH_PIN=1               the server on CPU 0, the benchmark on CPU 1
#                             (0: unpinned; unpinned figures moved 30% from
#                             run to run on two CPUs)
#   BENCH_NO_BUILD=1, BENCH_BUILD=DIR   as bench/lib.sh
#   BENCH_BEFORE=PATH         the wallprof binary of wallprof-before
#   TMPDIR                    where servers' data and recordings go
# Needs root (PostgreSQL runs as the user postgres; perf and offcputime
# need privileges), the Debian packages postgresql, redis-server,
# redis-tools, linux-perf, libbpf-tools, time.
set -euo pipefail

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
runs=${BENCH_RUNS:-6}
servers=${BENCH_SERVERS:-redis pgbench}
secs=${BENCH_SECONDS:-6}
redis_n=${BENCH_REDIS_REQUESTS:-300000}
pg_clients=${BENCH_PGBENCH_CLIENTS:-4}
configs=${BENCH_CONFIGS:-alone wallprof-attach wallprof-service wallprof-launch wallprof-off wallprof-nostacks perf offcputime}
pin_server=() pin_load=()
if [ "${BENCH_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
	pin_server=(taskset -c 0) pin_load=(taskset -c 1)
fi
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run as root (PostgreSQL runs as postgres; the tracers need privileges)"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
for need in redis-server:redis-server redis-benchmark:redis-tools perf:linux-perf \
	/usr/bin/time:time; do
	command -v "${need%%:*}" >/dev/null 2>&1 || die "${need%%:*} is missing (Debian package ${need#*:})"
done
[ -n "$pgbin" ] && [ -x "$pgbin/postgres" ] && command -v pgbench >/dev/null ||
	die "PostgreSQL is missing (Debian package postgresql)"
offcpu=$(command -v offcputime || true)
bench_build wallprof

work=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-servers.XXXXXX")
chmod 755 "$work"
server_pid=''
rec_pid=''
# wallprof-service's cgroup (v2), under this script's own.
cg_parent=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)$(sed -n 's/^0::\/*/\//p' /proc/self/cgroup | sed 's/\/$//')
cg="$cg_parent/wallprof-bench-$$"
cg_empty() {
	[ -d "$cg" ] || return 0
	while read -r p; do echo "$p" >"$cg_parent/cgroup.procs"; done <"$cg/cgroup.procs" 2>/dev/null
	rmdir "$cg" 2>/dev/null || true
}
cleanup() {
	[ -n "$rec_pid" ] && pkill -INT -P "$rec_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null
	sleep 0.5
	pkill -f "$work/" 2>/dev/null || true
	cg_empty
	rm -rf "$work"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 20000))

# The PostgreSQL cluster, made once and copied for every run: its tables
# as pgbench -i made them.
if [[ " $servers " == *" pgbench "* ]]; then
	echo "bench: making a PostgreSQL cluster" >&2
	install -d -o postgres -m 700 "$work/pg-template" "$work/pgsock"
	runuser -u postgres -- "$pgbin/initdb" -D "$work/pg-template" -A trust >/dev/null
	runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg-template" -w -l "$work/pgsock/pg-init.log" \
		-o "-k $work/pgsock -c listen_addresses=127.0.0.1 -p $port" start >/dev/null
	runuser -u postgres -- pgbench -q -i -s 10 -h 127.0.0.1 -p "$port" postgres >/dev/null 2>&1
	runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg-template" -w stop >/dev/null
fi

# server_cmd SERVER: the server's command line, in the foreground, into scmd.
server_cmd() {
	case $1 in
	redis) scmd=("${pin_server[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no
		--daemonize no --dir "$work/run" --logfile "$work/run/redis.log") ;;
	pgbench) scmd=("${pin_server[@]}" "$pgbin/postgres" -D "$work/run/pg" -k "$work/pgsock"
		-c listen_addresses=127.0.0.1 -p "$port" -c synchronous_commit=off) ;;
	esac
}

# ready SERVER: whether the server answers.
ready() {
	case $1 in
	redis) redis-cli -p "$port" ping >/dev/null 2>&1 ;;
	pgbench) runuser -u postgres -- "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$port" ;;
	esac
}

# load SERVER: run the benchmark; prints its throughput.
load() {
	case $1 in
	redis) "${pin_load[@]}" redis-benchmark -p "$port" -c 20 -n "$redis_n" -t get --csv 2>/dev/null |
		awk -F'"' '/^"GET"/ { print $4 }' ;;
	pgbench) "${pin_load[@]}" runuser -u postgres -- pgbench -h 127.0.0.1 -p "$port" -c "$pg_clients" -j 2 \
		-T "$secs" postgres 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p' ;;
	esac
}

# the pid of the server's main process, once it is up (launched under
# a recorder, the server is the recorder's child).
find_server() {
	case $1 in
	redis) pgrep -f "^redis-server 127.0.0.1:$port" | head -n 1 ;;
	pgbench) head -n 1 "$work/run/pg/postmaster.pid" 2>/dev/null ;;
	esac
}

stop_server() {
	case $1 in
	redis) redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true ;;
	pgbench) runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/run/pg" -w -m fast stop \
		>/dev/null 2>&1 || true ;;
	esac
}

# server_cpu PID: the server's CPU seconds so far (user + system, its
# threads' and its reaped children's: PostgreSQL's backends).
tck=$(getconf CLK_TCK)
server_cpu() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
		awk -v t="$tck" '{ printf "%.3f", ($12 + $13 + $14 + $15) / t }' || echo 0
}

# cpu_of TIMEFILE: user + system seconds from /usr/bin/time -f '%U %S'.
cpu_of() { awk 'END { printf "%.3f", $1 + $2 }' "$1" 2>/dev/null || echo 0; }

# one SERVER CONFIG: a fresh server, the profiler, the benchmark.
# Prints "throughput recorder_cpu_seconds load_seconds".
one() {
	local s=$1 c=$2 pid t0 t1 tput rc_cpu=0 sc_end=0 as=() scmd=()
	rm -rf "$work/run" && mkdir -p "$work/run" && chmod 777 "$work/run"
	[ "$s" = pgbench ] && cp -a "$work/pg-template" "$work/run/pg"
	rm -f "$work/run/pg/postmaster.pid"
	server_cmd "$s"
	[ "$s" = pgbench ] && as=(--user postgres)
	if [ "$c" = wallprof-launch ]; then
		/usr/bin/time -f '%U %S' -o "$work/time" "$wp" record -q -o "$work/W.data" \
			"${as[@]}" -- "${scmd[@]}" >/dev/null 2>"$work/rec.err" &
		rec_pid=$!
	elif [ "$c" = wallprof-service ]; then
		mkdir -p "$cg" || die "cannot make a cgroup under $cg_parent"
		local run=("${scmd[@]}")
		[ "$s" = pgbench ] && run=(runuser -u postgres -- "${scmd[@]}")
		# shellcheck disable=SC2016
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "${run[@]}" \
			>/dev/null 2>&1 &
	elif [ "$s" = pgbench ]; then
		runuser -u postgres -- "${scmd[@]}" >/dev/null 2>&1 &
	else
		"${scmd[@]}" >/dev/null 2>&1 &
	fi
	for _ in $(seq 100); do ready "$s" && break; sleep 0.1; done
	ready "$s" || die "$s did not start ($c)"
	pid=$(find_server "$s")
	server_pid=$pid
	case $c in
	wallprof-attach | wallprof-off | wallprof-nostacks | wallprof-allstacks | \
	wallprof-noswitch | wallprof-nooff | wallprof-nostack | wallprof-switch[0-9]* | \
	wallprof-freq[0-9]* | wallprof-raw | wallprof-before)
		local extra=() bin=$wp
		if [ "$c" = wallprof-before ]; then
			bin=${BENCH_BEFORE:-}
			[ -x "$bin" ] || die "wallprof-before needs BENCH_BEFORE=a wallprof binary"
		fi
		[[ "$c" == wallprof-switch[0-9]* ]] && extra=(--switch-stacks="${c#wallprof-switch}")
		[[ "$c" == wallprof-freq[0-9]* ]] && extra=(-F "${c#wallprof-freq}")
		[ "$c" = wallprof-noswitch ] && extra=(--switch-stacks=1)
		[ "$c" = wallprof-nooff ] && extra=(--no-off-cpu)
		[ "$c" = wallprof-nostack ] && extra=(-g none)
		[ "$c" = wallprof-raw ] && extra=(--unwind=report)
		[ "$c" = wallprof-off ] && extra=(--wakeups=off)
		[ "$c" = wallprof-nostacks ] && extra=(--wakeups=nostacks)
		[ "$c" = wallprof-allstacks ] && extra=(--wakeups=all-stacks)
		/usr/bin/time -f '%U %S' -o "$work/time" "$bin" record -q -o "$work/W.data" \
			"${extra[@]}" -p "$pid" >/dev/null 2>"$work/rec.err" &
		rec_pid=$! ;;
	wallprof-service)
		/usr/bin/time -f '%U %S' -o "$work/time" "$wp" record -v -o "$work/W.data" \
			-p "$(paste -sd, "$cg/cgroup.procs")" >/dev/null 2>"$work/rec.err" &
		rec_pid=$! ;;
	wallprof-top)
		/usr/bin/time -f '%U %S' -o "$work/time" "$wp" top -b --format json -p "$pid" \
			>/dev/null 2>"$work/rec.err" &
		rec_pid=$! ;;
	perf)
		/usr/bin/time -f '%U %S' -o "$work/time" perf record -q -o "$work/P.data" \
			-e cpu-clock -e cs --switch-events --call-graph dwarf -p "$pid" \
			>/dev/null 2>"$work/rec.err" &
		rec_pid=$! ;;
	offcputime)
		/usr/bin/time -f '%U %S' -o "$work/time" "$offcpu" -p "$pid" \
			>"$work/offcpu.out" 2>"$work/rec.err" &
		rec_pid=$! ;;
	esac
	# Attached recorders start before the benchmark does.
	[ "$c" = alone ] || [ "$c" = wallprof-launch ] || sleep 1
	c0=$(server_cpu "$pid")
	t0=$(date +%s.%N)
	tput=$(load "$s")
	t1=$(date +%s.%N)
	# (The backends exit as pgbench disconnects; their time is the
	# postmaster's once it has reaped them.)
	sleep 0.5
	c1=$(server_cpu "$pid")
	if [ "$c" = wallprof-launch ]; then
		# (The server is the recorder's child: GNU time counts its CPU
		# too, which is taken out below, as it stands before it stops.)
		sc_end=$(server_cpu "$pid")
		stop_server "$s"
		wait "$rec_pid" || true
	elif [ "$c" != alone ]; then
		# (GNU time ignores SIGINT: the recorder is its child.)
		pkill -INT -P "$rec_pid" 2>/dev/null || true
		wait "$rec_pid" || true
		stop_server "$s"
	else
		stop_server "$s"
	fi
	wait "$server_pid" 2>/dev/null || true
	for _ in $(seq 50); do ready "$s" || break; sleep 0.1; done
	if [ "$c" = wallprof-service ]; then
		grep -q "attached through the processes' own cgroup" "$work/rec.err" ||
			echo "bench: wallprof-service was not attached through the cgroup:" \
				"$(grep -m1 'cgroup' "$work/rec.err")" >&2
		cg_empty
	fi
	[ "$c" = alone ] || rc_cpu=$(cpu_of "$work/time")
	[ "$c" = wallprof-launch ] &&
		rc_cpu=$(awk -v a="$rc_cpu" -v b="${sc_end:-0}" 'BEGIN { d = a - b; printf "%.3f", (d > 0 ? d : 0) }')
	rec_pid='' server_pid=''
	rm -f "$work/W.data" "$work/P.data" "$work/time"
	echo "${tput:-0} $rc_cpu $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
		"$(awk -v a="${c0:-0}" -v b="${c1:-0}" 'BEGIN { printf "%.3f", b - a }')"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

res=$work/results
: >"$res"
for s in $servers; do
	for r in $(seq "$runs"); do
		for c in $configs; do
			[ "$c" = offcputime ] && [ -z "$offcpu" ] && continue
			read -r tput cpu secs_run scpu < <(one "$s" "$c")
			echo "bench: $s round $r $c: $tput/s, recorder ${cpu}s CPU in ${secs_run}s, server ${scpu}s" >&2
			echo "$s $r $c $tput $cpu $secs_run $scpu" >>"$res"
		done
	done
done

unit() { [ "$1" = redis ] && echo "GET/s" || echo "tps"; }
echo
echo "Medians of $runs rounds; the ratio is each round's throughput over the same round's 'alone'."
echo
for s in $servers; do
	echo "$s ($(unit "$s"))"
	echo
	echo "| configuration | throughput | against alone | recorder CPU s per s | server CPU us per op | against alone |"
	echo "|---|---|---|---|---|---|"
	for c in $configs; do
		grep -q " $c " "$res" || continue
		t=$(awk -v s="$s" -v c="$c" '$1 == s && $3 == c { print $4 }' "$res" | median)
		ratio=$(awk -v s="$s" -v c="$c" '$1 == s && $3 == "alone" { a[$2] = $4 }
			$1 == s && $3 == c { v[$2] = $4 } END { for (r in v) if (a[r] > 0) print v[r] / a[r] }' "$res" | median)
		cpu=$(awk -v s="$s" -v c="$c" '$1 == s && $3 == c && $6 > 0 { print $5 / $6 }' "$res" | median)
		# Server CPU per operation: what profiling adds to each request,
		# steadier than throughput on a machine that other work shares.
		sop=$(awk -v s="$s" -v c="$c" '$1 == s && $3 == c && $4 * $6 > 0 { print $7 / ($4 * $6) * 1e6 }' "$res" | median)
		sratio=$(awk -v s="$s" -v c="$c" '$4 * $6 > 0 { o = $7 / ($4 * $6) }
			$1 == s && $3 == "alone" && $4 * $6 > 0 { a[$2] = o }
			$1 == s && $3 == c && $4 * $6 > 0 { v[$2] = o } END { for (r in v) if (a[r] > 0) print v[r] / a[r] }' "$res" | median)
		printf '| %s | %s | %.3fx | %s | %.1f | %.3fx |\n' "$c" "$t" "$ratio" \
			"$([ "$c" = alone ] && echo - || printf '%.3f' "$cpu")" "${sop:-0}" "${sratio:-0}"
	done
	echo
done
