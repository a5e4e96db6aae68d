#!/bin/sh
# real-servers.sh: Debian's Redis and PostgreSQL under their own benchmarks
# (redis-benchmark, pgbench) over loopback, profiled as a user would:
# launched (record -- SERVER), attached (record -p PID -d SECS) and
# system-wide (record -a -d SECS) while the load runs.  Each busy thread's
# on-CPU time is checked against the kernel's own (schedstat's first
# field, read every 5 ms by servers.py watch): launched, over the
# thread's whole life; attached and -a, over its span in the recording,
# between the readings just inside and just outside the span.  The load
# (the benchmark, under SIGSTOP) runs only well inside the recording, so
# that the server is idle at its ends and the readings bracket the same
# work closely.  Bound: max(2%, 5 ms) for every busy thread.  Every thread of
# every recording: wall = on + off, on-CPU never above wall; with -a, the
# threads' on-CPU plus idle never above CPUs x duration.
#
# The servers listen on 127.0.0.1 only, on free ports, with their data in
# the test's directory, each under timeout(1), so that they stop even if
# the test is killed; the trap stops them when it ends.
#
# Environment: WP_SERVERS_LOAD seconds of load in each recording (1.5),
# WP_SERVERS_REDIS_N requests of the launched Redis's benchmark (20000),
# WP_SERVERS_SHOW=1 to print every figure (they are in the log anyway).
. "$TESTS_SRCDIR/integration/lib.sh"

load_s=${WP_SERVERS_LOAD:-1.5}
redis_n=${WP_SERVERS_REDIS_N:-20000}
life=120			# no server or load outlives this many seconds
compare="python3 $TESTS_SRCDIR/integration/servers.py compare"
watch="python3 $TESTS_SRCDIR/integration/servers.py watch"
# attached and -a: the recording is ended (SIGINT) once the load has
# stopped; -d only bounds it, however slow a loaded machine is.
rec_d=60

command -v python3 >/dev/null 2>&1 || skip "no python3"
root=no
[ "$(id -u)" -eq 0 ] && root=yes

# Anything this script started that is still there at the end.
srv_pids='' load_pids='' rec_pids='' pg_data='' watcher=''
srv_cleanup() {
	for p in $load_pids; do kill -KILL "$p" 2>/dev/null; done
	[ -n "$watcher" ] && kill -TERM "$watcher" 2>/dev/null
	for p in $rec_pids; do kill -INT "$p" 2>/dev/null; done
	[ -n "$redis_port" ] && redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1
	[ -n "$pg_data" ] && [ -f "$pg_data/postmaster.pid" ] &&
		kill -INT "$(head -n 1 "$pg_data/postmaster.pid")" 2>/dev/null
	for p in $srv_pids $rec_pids; do
		wait_until 50 exited "$p" || kill -KILL "$p" 2>/dev/null
	done
	[ -n "${WP_SERVERS_KEEP:-}" ] && cp -a "$tmp" "$WP_SERVERS_KEEP"
	cleanup
}
redis_port=''
trap srv_cleanup EXIT

# free_port: a TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# load_of PID: the load is the child of timeout PID (which forwards no
# SIGSTOP): its pid into load, both into load_pids.
load_of() {
	load=''
	_child() { load=$(pgrep -P "$1" | head -n 1); [ -n "$load" ]; }
	wait_until 50 _child "$1"
	load_t=$1
	load_pids="$load $1"
}

# hidden_file NAME: the recording to NAME has begun (its hidden file is there).
hidden_file() { ls -A . | grep -q "^\.$1\.wallprof-"; }

# watch_start PREFIX PID...: schedstat of PIDs' threads (and of their
# children's) into PREFIX.kernel, every 5 ms, until watch_stop or
# they are gone.
watch_start() {
	_w=$1; shift
	# At a real-time priority where allowed, so that a loaded machine
	# does not delay its readings (those of exiting processes most of all).
	_rt=''
	chrt -f 10 true 2>/dev/null && _rt="chrt -f 10"
	$_rt $watch "$_w.kernel" "$@" &
	watcher=$!
	wait_until 600 test -e "$_w.kernel.ready" ||
		fail "$_w: schedstat read within 60 s"
}
watch_stop() {
	[ -n "$watcher" ] || return 0
	[ "${1:-}" = wait ] || kill -TERM "$watcher" 2>/dev/null
	wait "$watcher"
	watcher=''
}

# window PREFIX LOADPID RECPID: the load (stopped on entry) runs inside
# the recording that RECPID makes, from once it has begun for LOAD
# seconds; then the recording is ended (SIGINT) and the watcher stopped.
window() {
	_pre=$1 _load=$2 _rec=$3
	if ! wait_until 300 hidden_file "$_pre.data"; then
		fail "$_pre: the recording began within 30 s ($(head -c 300 "$_pre.err"))"
		return 1
	fi
	stamp "$_pre: recording"
	sleep 0.3
	kill -CONT "$_load" 2>/dev/null
	sleep "$load_s"
	kill -STOP "$_load" 2>/dev/null
	if exited "$_rec"; then
		fail "$_pre: the recording still ran when the load stopped (-d $rec_d)"
		return 1
	fi
	stamp "$_pre: load stopped"
	sleep 0.2
	kill -INT "$_rec" 2>/dev/null
	wait "$_rec"
	rc=$?
	watch_stop
	stamp "$_pre: recorded"
	check_num "$_pre: record ends on SIGINT, its file complete (130)" "$rc" -eq 130
}

# stamp WHAT: the time, for the log.
stamp() { echo "# $(date +%T.%N | cut -c1-12) $*"; }

# record_and_check PREFIX MODE TARGET WATCHED: with the load stopped,
# watch WATCHED's threads, record -p TARGET (MODE attached) or -a (MODE
# system) while the load runs, check the report against schedstat, and
# end the load.
record_and_check() {
	watch_start "$1" "$4"
	if [ "$2" = attached ]; then
		"$WALLPROF" record -q -o "$1.data" -p "$3" -d "$rec_d" >"$1.out" 2>"$1.err" &
	else
		"$WALLPROF" record -q -o "$1.data" -a -d "$rec_d" >"$1.out" 2>"$1.err" &
	fi
	rec=$!
	rec_pids=$rec
	window "$1" "$load" "$rec" && report_check "$1" "$2"
	rec_pids=''
	kill -KILL "$load" 2>/dev/null
	wait "$load_t" 2>/dev/null
	load_pids=''
}

# report_check PREFIX MODE: the report's JSON against schedstat.
report_check() {
	stamp "$1: report"
	if ! "$WALLPROF" report -i "$1.data" --format json >"$1.json" 2>"$1.rerr"; then
		fail "$1: report exits 0 ($(head -c 300 "$1.rerr"))"
		return
	fi
	stamp "$1: compare"
	$compare "$1" "$2" "$1.json" "$1.kernel" >"$1.check"
	_st=$?
	cat "$1.check"
	[ "$_st" -eq 0 ] || grep -q "^not ok" "$1.check" ||
		fail "$1: the comparison ran ($(tail -n 3 "$1.check"))"
}

# ---------------------------------------------------------------- Redis ---
redis_tests() {
	mkdir -p redis
	# launched: the whole life of every thread, to its last reading.
	redis_port=$(free_port)
	timeout -k 3 "$life" "$WALLPROF" record -q -o RL.data -- redis-server --port "$redis_port" \
		--bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/redis" >RL.out 2>RL.err &
	rec=$!
	rec_pids="$rec"
	if ! wait_until 300 redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
		skip_check "redis" "redis-server did not start: $(head -c 300 RL.err)"
		return
	fi
	rpid=$(redis-cli -p "$redis_port" info server | tr -d '\r' | sed -n 's/^process_id://p')
	watch_start RL "$rpid"
	timeout -k 3 "$life" redis-benchmark -p "$redis_port" -c 20 -n "$redis_n" -t set,get -q \
		>RL.bench 2>&1
	redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1
	wait "$rec"
	check_num "redis launched: record exits 0" "$?" -eq 0
	watch_stop wait
	rec_pids=''
	report_check RL launched
	# A process whose one thread shown is its main one (the others idle,
	# folded) is one row, not a row and the same figures again under it.
	# Whether Redis's other threads (jemalloc's purger) did anything
	# depends on the run, so: count the thread rows under its row.
	"$WALLPROF" report -i RL.data >RL.txt 2>/dev/null
	under=$(awk -v p="$rpid" '/^PID\/TID/ { t = 1; next } t && !NF { exit }
		t && /^[0-9]/ { inp = $1 == p; next }
		t && inp && /^  [0-9]/ { n++; if ($1 == p) main = 1 }
		END { print (n == 1 && main) ? "main alone" : n + 0 }' RL.txt)
	check "redis launched: no row repeats the process's figures for its main thread alone ($under)" \
		test "$under" != "main alone"
	check "redis launched: its process has a row" grep -Eq "^$rpid +redis-server " RL.txt
	# Its clients' requests come over loopback: the network's softirq
	# wakes it, run by the client itself in the system call that sent
	# the request, so the table of wakers names that client (a thread
	# outside the recording), with the softirq.
	if grep -q '^wake-ups' RL.txt 2>/dev/null || grep -q 'Who woke whom' RL.txt; then
		check "redis launched: who woke it names the client whose send ran the softirq (NET_RX)" \
			grep -Eq "^$rpid/$rpid redis-server +[0-9]+/[0-9]+ [^ ]+ \(softirq NET_RX\)" RL.txt
	else
		skip_check "redis launched: who woke it" "no wake-ups recorded (root or CAP_PERFMON)"
	fi

	# attached and -a: a server of its own, and a load that waits
	# (stopped) until the recording has begun.
	for m in attached system; do
		pre=RA
		[ "$m" = system ] && pre=RS
		[ "$m" = system ] && [ "$root" = no ] &&
			{ skip_check "redis -a" "-a needs root or CAP_PERFMON"; continue; }
		redis_port=$(free_port)
		timeout -k 3 "$life" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' \
			--appendonly no --dir "$tmp/redis" >$pre.server 2>&1 &
		srv_pids=$!
		wait_until 300 redis-cli -p "$redis_port" ping >/dev/null 2>&1 ||
			{ fail "redis $m: the server answers"; continue; }
		rpid=$(redis-cli -p "$redis_port" info server | tr -d '\r' | sed -n 's/^process_id://p')
		timeout -k 3 "$life" redis-benchmark -p "$redis_port" -c 20 -n 100000000 -t get -q \
			>$pre.bench 2>&1 &
		load_of $!
		sleep 0.3
		kill -STOP "$load" 2>/dev/null
		record_and_check $pre "$m" "$rpid" "$rpid"
		redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1
		wait "$srv_pids"
		srv_pids=''
	done
	redis_port=''
}

if command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 &&
	command -v redis-cli >/dev/null 2>&1; then
	redis_tests
else
	skip_check "redis" "no redis-server, redis-cli or redis-benchmark (Debian: redis-server, redis-tools; tools/deps.sh)"
fi

# ----------------------------------------------------------- PostgreSQL ---
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
# as_pg COMMAND...: as the user the cluster belongs to (postgres refuses root).
as_pg() {
	if [ "$root" = yes ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
	else "$@"; fi
}

# pg_start PREFIX plain|record [RECORD-ARGS...]: a fresh copy of the
# cluster, started on a free port (under record -o PREFIX.data with
# record); its pid in pg_pid.
pg_start() {
	_pre=$1 _how=$2; shift 2
	pg_port=$(free_port)
	pg_data=$tmp/pg/run
	if [ "$_pre" = init ]; then
		pg_data=$tmp/pg/template
	else
		rm -rf "$tmp/pg/run"
		as_pg cp -a "$tmp/pg/template" "$tmp/pg/run"
	fi
	_args="-D $pg_data -k $tmp/pg/sock -p $pg_port -c listen_addresses=127.0.0.1
		-c autovacuum=off -c fsync=off -c synchronous_commit=off -c max_connections=20
		-c shared_buffers=16MB"
	if [ "$_how" = record ]; then
		# shellcheck disable=SC2086
		timeout -k 3 "$life" "$WALLPROF" record -q -o "$_pre.data" "$@" \
			-- "$pgbin/postgres" $_args >"$_pre.out" 2>"$_pre.err" &
		rec_pids=$!
	else
		# shellcheck disable=SC2086
		timeout -k 3 "$life" setsid $(as_pg_cmd) "$pgbin/postgres" $_args \
			>"$_pre.server" 2>&1 &
		srv_pids=$!
	fi
	pg_up() { "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$pg_port"; }
	wait_until 300 pg_up || return 1
	pg_pid=$(head -n 1 "$pg_data/postmaster.pid")
}
as_pg_cmd() {
	[ "$root" = yes ] && echo "setpriv --reuid=postgres --regid=postgres --init-groups --"
}

# pg_procs: the postmaster and its children, comma-separated with $1.
pg_procs() {
	{ echo "$pg_pid"; pgrep -P "$pg_pid"; } | tr '\n' "${1:- }" | sed "s/${1:- }\$//"
}

pgbench_bg() {
	timeout -k 3 "$life" pgbench -n -h 127.0.0.1 -p "$pg_port" -U "$pg_user" -c 4 -j 2 -T 100 \
		postgres >"$1.bench" 2>&1 &
	load_of $!
	# The clients are connected once each has a backend.
	backends() {
		[ "$(pgrep -P "$pg_pid" -f '127\.0\.0\.1\(' | wc -l)" -ge 4 ] || exited "$load"
	}
	wait_until 100 backends
	running "$load" || fail "$1: pgbench runs ($(tail -n 2 "$1.bench"))"
	sleep 0.3
}

pg_stop() {
	kill -INT "$pg_pid" 2>/dev/null
	for p in $srv_pids $rec_pids; do
		wait "$p"
		rc=$?
	done
	srv_pids='' rec_pids='' pg_data=''
}

pg_tests() {
	mkdir -p "$tmp/pg"
	chmod 711 "$tmp"
	pg_user=$(id -un)
	if [ "$root" = yes ]; then
		pg_user=postgres
		chown postgres "$tmp/pg"
	fi
	as_pg mkdir -p "$tmp/pg/sock"
	if ! as_pg "$pgbin/initdb" -D "$tmp/pg/template" -A trust -U "$pg_user" >pg-initdb.out 2>&1; then
		skip_check "postgresql" "initdb failed: $(tail -n 3 pg-initdb.out)"
		return
	fi
	if ! pg_start init plain; then
		skip_check "postgresql" "postgres did not start: $(tail -n 3 init.server)"
		return
	fi
	pgbench -i -q -s 1 -h 127.0.0.1 -p "$pg_port" -U "$pg_user" postgres >pg-init.out 2>&1 ||
		fail "pgbench -i ($(tail -n 2 pg-init.out))"
	pg_stop
	rm -rf "$tmp/pg/template/postmaster.pid"

	# launched: the backends exit when the clients go, and the server's
	# shutdown follows.
	_user=''
	[ "$root" = yes ] && _user="--user postgres"
	# shellcheck disable=SC2086
	if ! pg_start PL record $_user; then
		fail "postgresql launched: the server answers ($(head -c 300 PL.err))"
		pg_stop
	else
		watch_start PL "$pg_pid"
		pgbench_bg PL
		sleep "$load_s"
		# The clients stop, then go: each backend then runs only its exit.
		kill -STOP "$load" 2>/dev/null
		sleep 0.3
		kill -KILL "$load" 2>/dev/null
		wait "$load_t" 2>/dev/null
		load_pids=''
		sleep 0.2
		pg_stop
		check_num "postgresql launched: record exits 0" "$rc" -eq 0
		watch_stop wait
		report_check PL launched
	fi

	for m in attached system; do
		pre=PA
		[ "$m" = system ] && pre=PS
		[ "$m" = system ] && [ "$root" = no ] &&
			{ skip_check "postgresql -a" "-a needs root or CAP_PERFMON"; continue; }
		pg_start $pre plain || { fail "postgresql $m: the server answers"; pg_stop; continue; }
		pgbench_bg $pre
		kill -STOP "$load" 2>/dev/null
		record_and_check $pre "$m" "$(pg_procs ,)" "$pg_pid"
		pg_stop
	done
}

if [ -n "$pgbin" ] && [ -x "$pgbin/postgres" ] && [ -x "$pgbin/initdb" ] &&
	command -v pgbench >/dev/null 2>&1 && { [ "$root" = no ] || id postgres >/dev/null 2>&1; }; then
	pg_tests
else
	skip_check "postgresql" "no PostgreSQL server, pgbench or user postgres (Debian: postgresql-15; tools/deps.sh)"
fi
finish
