#!/bin/sh
# perf-map-trust.sh: /tmp/perf-PID.map names a process's JIT code only when
# it is a regular file owned by root or by the process's user (perf's
# rule): anyone can make a file of that name in /tmp.  A map that another
# user owns is refused by record, with a warning, and by report's look at
# it later; the process's own user's map is taken.  A huge map (a sparse
# 4 GiB file) is read a piece at a time and no further than 256 MiB: the
# names at its start are kept, in little memory and time, and record says
# it was cut.  (Before: the other user's map named the code, and the huge
# one took record over a gigabyte of memory.)  Root only (chown, --user).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(uname -m)" = x86_64 ] || skip "the jit workload runs x86_64 code"
[ "$(id -u)" -eq 0 ] || skip "needs root to give a map to another user"
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (measures memory)"
maps=''
trap 'rm -f $maps; cleanup' EXIT

# A copy that user nobody can run, in a directory nobody can enter.
mkdir -m 755 bin && cp "$WORKLOADS/jit" bin/ && mkdir -m 1777 w || exit 99
chmod 755 "$tmp"
JIT=$tmp/bin/jit

# start_jit DATA SECONDS [RECORD OPTIONS...]: record the jit workload in the
# background (wp: record's pid), its pid in jpid once its map is there.
start_jit() {
	_data=$1 _secs=$2; shift 2
	rm -f w/jit.pid
	"$WALLPROF" record -q "$@" -o "$_data" -- sh -c 'echo $$ >"$0"; exec "$1" "$2"' \
		"$tmp/w/jit.pid" "$JIT" "$_secs" >jit.out 2>rec.err &
	wp=$!
	bg_pids="$bg_pids $wp"
	wait_until 100 test -s w/jit.pid || return 1
	jpid=$(cat w/jit.pid)
	maps="$maps /tmp/perf-$jpid.map"
	wait_until 100 test -s "/tmp/perf-$jpid.map"
}
saved() { "$WALLPROF" report --dump -i "$1" 2>/dev/null | sed -n 's/^# JIT names saved: //p'; }
named() { "$WALLPROF" report -i "$1" --format folded 2>/dev/null | grep -c ';jit_spin_loop' || true; }

# Another user's map for root's process.
start_jit other.data 1.5 || { fail "the workload wrote its map"; finish; }
chown nobody "/tmp/perf-$jpid.map"
wait "$wp"
check_num "another user's map: record exits 0" $? -eq 0
check "another user's map: record says it is not trusted" \
	grep -q "^wallprof: warning: /tmp/perf-$jpid.map belongs to user $(id -u nobody), neither root nor process $jpid's user" rec.err
check "another user's map: no JIT name saved" [ -z "$(saved other.data)" ]
check_num "another user's map: report does not read it either" "$(named other.data)" -eq 0

# The process's own user's map.
start_jit own.data 1 --user nobody || { fail "the workload wrote its map as nobody"; finish; }
wait "$wp"
check_num "the process's user's map: record exits 0" $? -eq 0
check "the map is nobody's" [ "$(stat -c %U "/tmp/perf-$jpid.map")" = nobody ]
check "the process's user's map: nothing said of it" no_match 'perf-' rec.err
check_num "the process's user's map: its name is saved" "$(saved own.data)" -eq 1
check_num "the process's user's map: report names the code" "$(named own.data)" -ge 1

# A sparse map of 4 GiB whose one line is at its start.
start_jit huge.data 2 || { fail "the workload wrote its map"; finish; }
truncate -s 4G "/tmp/perf-$jpid.map" || exit 99
set -- $(python3 - "$wp" <<'EOS'
import sys, time
# Until it is a zombie (the shell reaps it) or gone.
pid, peak, t0 = int(sys.argv[1]), 0, time.time()
while True:
    try:
        with open("/proc/%d/status" % pid) as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
    except OSError:
        break
    if st.get("State", "Z").split()[0] in ("Z", "X"):
        break
    peak = max(peak, int(st.get("VmHWM", "0 kB").split()[0]))
    time.sleep(0.02)
print(peak, int(time.time() - t0))
EOS
)
peak_kib=${1:-0} secs=${2:-0}
wait "$wp" 2>/dev/null
echo "# huge map: record's peak resident memory $peak_kib KiB, $secs s"
check_num "huge map: record's memory stays under 256 MiB" "$peak_kib" -lt 262144
check_num "huge map: record ends within 20 s" "$secs" -lt 20
check "huge map: record says only its first 256 MiB were read" \
	grep -q "^wallprof: warning: /tmp/perf-$jpid.map is larger than 256 MiB: only its first 256 MiB were read" rec.err
check_num "huge map: the name at its start is saved" "$(saved huge.data)" -eq 1
finish
