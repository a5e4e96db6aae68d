#!/bin/sh
# export-clickhouse.sh: `wallprof export` into a real clickhouse-server,
# started here on 127.0.0.1 from a temporary config (as nobody when run as
# root), stopped when the script ends.  Two workloads are recorded and
# exported as two hosts (the second with a host name and a label of
# tabs, quotes, backslashes and escape sequences, and the hostile
# workload run from a hostile path); then, per host and per thread, the
# ledger in the server equals `report --format json` of its file to the
# nanosecond, and every stack row (with its frames) and every waker row
# equals the JSON report's stacks and wakers; the names of threads,
# command lines and files come back as the very bytes; a second export
# adds no row, an export cut short before its last table is completed
# without a duplicate, stacks are stored once per hash; and a refused
# statement or a server that is down give one sentence and exit 1.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

server=/usr/sbin/clickhouse-server
[ -x "$server" ] || skip "clickhouse-server is not installed (tools/deps.sh installs it)"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the server's rows"
PY="$TESTS_SRCDIR/integration/export-clickhouse.py"

# hex STRING: its bytes as ClickHouse's hex() prints them.
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; }
# q SQL: the server's answer.
q() { python3 "$PY" query "$url" "$1"; }

# --- the server: a config of our own, a free port, a data directory ---
# The directory must be the server's user's: not under $tmp (mode 700).
chdir=$(mktemp -d "${TMPDIR:-/tmp}/wallprof-ch.XXXXXX") || exit 99
ch_pid=''
ch_stop() {
	[ -n "$ch_pid" ] || return 0
	kill -TERM "$ch_pid" 2>/dev/null
	wait "$ch_pid" 2>/dev/null
	ch_pid=''
}
trap 'ch_stop; rm -rf "$chdir"; cleanup' EXIT
as_user=''
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 || skip "no setpriv to run the server as nobody"
	as_user='setpriv --reuid=nobody --regid=nogroup --clear-groups'
fi
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# ch_run: the server of config.xml, its pid in ch_pid; 0 once it answers.
ch_run() {
	[ -n "$as_user" ] && chown -R nobody "$chdir"
	# timeout: the server goes even if this script is killed too hard for its trap.
	$as_user timeout -k 5 900 "$server" --config-file="$chdir/config.xml" \
		>"$chdir/server.out" 2>&1 &
	ch_pid=$!
	url="http://127.0.0.1:$port/"
	python3 "$PY" wait "$url" 60 && return 0
	ch_stop
	return 1
}
# ch_start: the server on a free port (three tries: another may take it first).
ch_start() {
	for _try in 1 2 3; do
		port=$(free_port)
		sh "$TESTS_SRCDIR/../tools/clickhouse-config" "$chdir" "$port" || return 1
		ch_run && return 0
	done
	echo "# clickhouse-server did not start:"
	tail -n 5 "$chdir/server.out" "$chdir/err.log" 2>/dev/null | sed 's/^/# /'
	return 1
}
check "clickhouse-server answers on 127.0.0.1" ch_start || finish
check "version: $(q 'SELECT version()')" [ -n "$(q 'SELECT version()')" ]

# --- two recordings ---------------------------------------------------
record_wallclock 0.7
mv F wallclock.data
esc=$(printf '\033') bel=$(printf '\007') csi=$(printf '\233') tab=$(printf '\t')
nl='
'
dir="$tmp/dir$esc[1m"
exe="wl$esc]2;title$bel$nl;x${csi}2J'\\"
mkdir "$dir" && cp "$WORKLOADS/hostile" "$dir/$exe" || exit 99
run rec2.out rec2.err "$WALLPROF" record -q -o hostile.data -- "$dir/$exe" 1 \
	"arg$esc[2J$bel" "q'uote\\$tab$nl"
check_num "record the hostile workload at a hostile path" "$rc" -eq 0

host1=alpha
host2="be'ta\\$tab$nl$esc[31m"
label2="v'1\\$tab$nl$esc]2;x$bel"
run ex1.out ex1.err "$WALLPROF" export --clickhouse "$url" --create-tables --host "$host1" \
	--label deploy=v42 wallclock.data
check_num "export the wallclock recording (with --create-tables): exit 0" "$rc" -eq 0
cat ex1.err | sed 's/^/# /'
run ex2.out ex2.err "$WALLPROF" export --clickhouse "$url" --host "$host2" \
	--label "deploy=$label2" --label service=x hostile.data
check_num "export the hostile recording: exit 0" "$rc" -eq 0
sed 's/^/# /' ex2.err

# --- per host, per thread: the ledger and the stacks ---------------------
# py_check NAME TAG COMMAND ARGS...: the checker's TAP lines, each named with TAG.
py_check() {
	_n=$1 _tag=$2; shift 2
	python3 "$PY" "$@" >"$_n.check" 2>&1
	_rc=$?
	sed -n "s/^ok - /ok - $_tag: /p; s/^not ok - /not ok - $_tag: /p; /^#/p" "$_n.check"
	failures=$((failures + $(grep -c '^not ok - ' "$_n.check")))
	if ! grep -Eq '^(not )?ok - ' "$_n.check" || [ "$_rc" -gt 1 ]; then
		fail "$_tag: the checker ran (exit $_rc)"
		tail -n 3 "$_n.check" | sed 's/^/# /'
	fi
}
for h in 1 2; do
	eval "host=\$host$h"
	file=wallclock.data
	[ "$h" -eq 2 ] && file=hostile.data
	run "$h.json" "$h.json.err" "$WALLPROF" report -q -i "$file" --format json --top 1000000
	check_num "host $h: report --format json exits 0" "$rc" -eq 0
	py_check "ledger$h" "host $h" ledger "$url" "$(hex "$host")" "$h.json"
	py_check "stacks$h" "host $h" stacks "$url" "$(hex "$host")" "$h.json"
done

# --- report --from: folded stacks added up by the server ---------------
# merged FILE...: folded lines (--unit ns) with equal stacks added up, sorted.
merged() {
	cat "$@" | awk '{ w = $NF; sub(/ [0-9]+$/, ""); s[$0] += w } END { for (k in s) printf "%s %.0f\n", k, s[k] }' |
		sort
}
# from_check NAME FILES -- REPORT-OPTIONS...: report --from with those
# options gives the folded output of FILES (each with the same options) merged.
from_check() {
	_n=$1 _files=''; shift
	while [ "$1" != -- ]; do _files="$_files $1"; shift; done
	shift
	_want=''
	for _f in $_files; do
		_mode=$(echo "$*" | sed -n 's/.*--mode \([a-z]*\).*/--mode \1/p')
		case " $* " in *" --wakers "*) _mode="$_mode --wakers" ;; esac
		"$WALLPROF" report -q -i "$_f" --format folded --unit ns $_mode >"$_n.$_f.folded" ||
			fail "$_n: report -i $_f --format folded"
		_want="$_want $_n.$_f.folded"
	done
	merged $_want >"$_n.want"
	run "$_n.out" "$_n.err" "$WALLPROF" report --from "$url" --unit ns "$@"
	check_num "$_n: report --from exits 0" "$rc" -eq 0
	sort "$_n.out" >"$_n.got"
	check "$_n: $(wc -l <"$_n.got") lines, the folded stacks of$_files merged" \
		cmp -s "$_n.want" "$_n.got"
	[ -s "$_n.want" ] || fail "$_n: the files have folded stacks"
	cmp -s "$_n.want" "$_n.got" || diff "$_n.want" "$_n.got" | head -n 6 | sed 's/^/# /'
}
from_check both-hosts wallclock.data hostile.data --
from_check host1 wallclock.data -- --host "$host1"
from_check host2 hostile.data -- --host "$host2"
from_check both-named wallclock.data hostile.data -- --host "$host2" --host "$host1"
from_check label wallclock.data -- --label deploy=v42 --since -1d --until 2100-01-01
from_check blocked wallclock.data hostile.data -- --mode blocked
from_check on-host2 hostile.data -- --mode on --host "$host2" --format folded
from_check wakers wallclock.data hostile.data -- --wakers
from_check wakers-blocked wallclock.data -- --wakers --mode blocked --host "$host1"
run f1.out f1.err "$WALLPROF" report --from "$url" --since 2100-01-01
check_num "report --from, files of 2100: exit 0" "$rc" -eq 0
check_num "... no line" "$(nlines f1.out)" -eq 0
check "... and a warning that no row matched" grep -q "no exported rows" f1.err
run f2.out f2.err "$WALLPROF" report --from "$url" --format json
check_num "report --from --format json (not computed in the server yet): exit 2" "$rc" -eq 2
run f3.out f3.err "$WALLPROF" report --from "$url" --since yesterday
check_num "report --from --since yesterday (not a time): exit 2" "$rc" -eq 2

# --- the names, as their bytes --------------------------------------------
H2=$(hex "$host2")
comms=$(q "SELECT DISTINCT hex(comm) FROM wallprof_threads WHERE hex(host) = '$H2'")
check "a thread named with an OSC sequence, as its bytes" \
	sh -c "echo '$comms' | grep -qx '$(hex "$esc]2;pwn$bel")'"
check "a thread named with raw C1 bytes, as its bytes" \
	sh -c "echo '$comms' | grep -qx '$(hex "c1${csi}2J$(printf '\205')x")'"
args=$(q "SELECT DISTINCT concat(hex(cmdline[1]), ' ', hex(cmdline[3]), ' ', hex(cmdline[4]))
	FROM wallprof_threads WHERE hex(host) = '$H2' AND pid = tid")
check_num "the hostile process's command line: path and arguments, as their bytes" \
	"$(echo "$args" | grep -cx "$(hex "$dir/$exe") $(hex "arg$esc[2J$bel") $(hex "q'uote\\$tab$nl")")" -eq 1
labels=$(q "SELECT DISTINCT concat(hex(labels.key[1]), ' ', hex(labels.value[1]), ' ',
	hex(labels.value[2])) FROM wallprof_samples WHERE hex(host) = '$H2'")
check "the hostile label, as its bytes, in every row" \
	[ "$labels" = "$(hex deploy) $(hex "$label2") $(hex x)" ]
files=$(q "SELECT count() FROM wallprof_stacks ARRAY JOIN frames.file AS f
	WHERE hex(f) = '$(hex "$dir/$exe")'")
check_num "frames in the file at the hostile path name it as its bytes" "$files" -gt 0

# --- each file once ---------------------------------------------------
# counts: files threads samples stacks, and the distinct stack hashes.
counts() {
	q "SELECT (SELECT count() FROM wallprof_files), (SELECT count() FROM wallprof_threads),
		(SELECT count() FROM wallprof_samples), (SELECT count() FROM wallprof_stacks),
		(SELECT uniqExact(hash) FROM wallprof_stacks)" | tr '\t' ' '
}
before=$(counts)
set -- $before
check_num "two files in wallprof_files" "$1" -eq 2
check_num "one stack row per hash ($4 rows)" "$4" -eq "$5"
run ex3.out ex3.err "$WALLPROF" export --clickhouse "$url" --host "$host1" \
	--label deploy=v42 wallclock.data
check_num "the wallclock recording again: exit 0" "$rc" -eq 0
check "... says it is in ClickHouse already" grep -q 'in ClickHouse already' ex3.err
run ex4.out ex4.err "$WALLPROF" export --clickhouse "$url" --host "$host2" hostile.data
check_num "the hostile recording again (as the same file): exit 0" "$rc" -eq 0
check "a second export adds no row (files threads samples stacks: $before)" \
	[ "$(counts)" = "$before" ]

# An export cut short before its last table: the files row deleted, the
# others there; exporting again completes it with no duplicate.
id1=$(q "SELECT file_id FROM wallprof_files WHERE host = 'alpha'")
q "ALTER TABLE wallprof_files DELETE WHERE file_id = '$id1'" >/dev/null
for _i in $(seq 1 300); do
	[ "$(q "SELECT count() FROM wallprof_files WHERE file_id = '$id1'")" = 0 ] && break
	sleep 0.2
done
check "the files row of the wallclock recording is gone" \
	[ "$(q "SELECT count() FROM wallprof_files WHERE file_id = '$id1'")" = 0 ]
run ex5.out ex5.err "$WALLPROF" export --clickhouse "$url" --host "$host1" \
	--label deploy=v42 wallclock.data
check_num "the export cut short, again: exit 0" "$rc" -eq 0
check "... completes it with no duplicate (files threads samples stacks: $before)" \
	[ "$(counts)" = "$before" ]

# --- record --rotate --export, the server stopped part of the time ------
# 1-second files for 10 s; the server dies once the first file is
# complete and comes back 3 s later on the same port: the files completed meanwhile wait on disk and
# go once it answers; in the end every file is in the server once.
"$WALLPROF" record -o rot.data --rotate 1 --export "$url" -- "$WORKLOADS/wallclock" 10 \
	>rot.out 2>rot.err </dev/null &
rec=$!
bg_pids="$bg_pids $rec"
# Killed (a crash: no shutdown, which takes seconds on a loaded machine)
# once the first file is complete: the next ones end while it is down.
# (The exporter runs at a lower priority: on a loaded machine it may lag
# the recording by seconds, and be in the middle of a file then.)
for _i in $(seq 1 600); do
	[ -e rot.0001.data ] && break
	sleep 0.1
done
check "record --rotate 1 completes a first file" [ -e rot.0001.data ]
pkill -KILL -P "$ch_pid"
wait "$ch_pid" 2>/dev/null
ch_pid=''
down=$(date +%s)
sleep 3
up=$(date +%s)
check "the server comes back on port $port" ch_run
wait "$rec"
rc=$?
check_num "record --rotate 1 --export, the server down for 3 s: exit 0" "$rc" -eq 0
sed 's/^/# /' rot.err | tail -n 6
nrot=$(ls rot.*.data | wc -l)
check_num "it wrote files ($nrot)" "$nrot" -ge 9
check "... and met the server down" grep -q "cannot reach ClickHouse" rot.err
check "... and says they are all in ClickHouse" grep -q "wallprof: $nrot files in ClickHouse" rot.err
check_num "every file is in wallprof_files once" \
	"$(q "SELECT count() FROM (SELECT path, count() AS n, uniqExact(file_id) AS ids
		FROM wallprof_files WHERE path LIKE 'rot.%' GROUP BY path HAVING n = 1 AND ids = 1)")" \
	-eq "$nrot"
check_num "files that ended while it was down (from $down to $up) went once it was back" \
	"$(q "SELECT count() FROM wallprof_files WHERE path LIKE 'rot.%'
		AND toUnixTimestamp(end_time) > $down AND toUnixTimestamp(end_time) < $up
		AND toUnixTimestamp(exported_at) >= $up")" -gt 0
rothost=$(q "SELECT DISTINCT hex(host) FROM wallprof_files WHERE path LIKE 'rot.%'")
for f in rot.*.data; do
	id=$(q "SELECT file_id FROM wallprof_files WHERE path = '$f'")
	"$WALLPROF" report -q -i "$f" --format json >"$f.json" || fail "report -i $f"
	py_check "ledger-$f" "$f" ledger "$url" "$rothost" "$f.json" "$id"
done

# --- errors -----------------------------------------------------------
run e1.out e1.err "$WALLPROF" export --clickhouse "${url}?database=nowhere" wallclock.data
check_num "a database that does not exist: exit 1" "$rc" -eq 1
check_num "... one line on stderr" "$(nlines e1.err)" -eq 1
check "... saying what the server said" grep -q "refused.*nowhere" e1.err
sed 's/^/# /' e1.err
run e2.out e2.err "$WALLPROF" export wallclock.data
check_num "no --clickhouse: exit 2" "$rc" -eq 2
run e3.out e3.err "$WALLPROF" export --clickhouse "$url" --label 'a b=c' wallclock.data
check_num "a label key with a space: exit 2" "$rc" -eq 2
run e4.out e4.err "$WALLPROF" export --clickhouse "ftp://127.0.0.1:$port/" wallclock.data
check_num "not an http URL: exit 1" "$rc" -eq 1
check_num "... one line on stderr" "$(nlines e4.err)" -eq 1
run e5.out e5.err "$WALLPROF" export --clickhouse "$url" nothing.data
check_num "a file that does not exist: exit 1" "$rc" -eq 1
check_num "... one line on stderr" "$(nlines e5.err)" -eq 1
ch_stop
run e6.out e6.err "$WALLPROF" export --clickhouse "$url" wallclock.data hostile.data
check_num "the server stopped: exit 1" "$rc" -eq 1
check_num "... one line on stderr, not one per file" "$(nlines e6.err)" -eq 1
check "... saying it cannot reach the server" grep -q "cannot reach ClickHouse" e6.err
sed 's/^/# /' e6.err
finish
