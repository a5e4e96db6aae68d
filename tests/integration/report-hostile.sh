# report-hostile.sh: `wallprof report` on recordings damaged or made to
# hurt: times no recording can hold are clamped into the recording and
# counted, never shifted past 64 bits or shown as centuries of wall time;
# a small file that decodes to gigabytes of records (a zstd bomb) ends
# with one clear message or a report of what was valid, in bounded time
# and memory, never out of memory.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

ulimit -c 0 2>/dev/null	# a crash must not leave a core file in the way
command -v python3 >/dev/null 2>&1 || skip "no python3 to edit the recordings"
J="$TESTS_SRCDIR/integration/report-json.py"

# A recording, uncompressed so that its records can be edited in place.
run wl.out rec.err "$WALLPROF" record -q --no-compress -o R -- "$WORKLOADS/sleeper" 5 2
check_num "a recording for the tests" "$rc" -eq 0

# damage_times FILE TIME: from the last switch-in on, every kernel record
# of the file but samples gets TIME in its sample_id trailer, whose time
# field is 24 bytes before the record's end with the sample_type wallprof
# records (TID, TIME, CPU, IDENTIFIER; wallprof-data(5)); prints how many.
# Blocks: a 24-byte file header with the meta size at offset 16, the meta,
# then blocks of {u32 type, u32 flags, u64 size, u64 raw_size} and the
# payload padded to 8 bytes; type 1 holds records, flags 0 means stored.
damage_times() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
path, when = sys.argv[1], int(sys.argv[2], 0)
d = bytearray(open(path, "rb").read())
off = 24 + struct.unpack_from("<Q", d, 16)[0]
recs = []
while off + 24 <= len(d):
    t, f, s, r = struct.unpack_from("<IIQQ", d, off)
    if t == 1 and f == 0:
        p, end = off + 24, off + 24 + s
        while p + 8 <= end:
            rt, misc, size = struct.unpack_from("<IHH", d, p)
            recs.append((rt, misc, size, p))
            p += size
    off += 24 + (s + 7) // 8 * 8
last = max(i for i, (rt, misc, size, p) in enumerate(recs) if rt in (14, 15) and not misc & 0x2000)
n = 0
for rt, misc, size, p in recs[last:]:
    if rt < 64 and rt != 9:
        struct.pack_into("<Q", d, p + size - 24, when)
        n += 1
open(path, "wb").write(d)
print(n)
EOF
}

# A switch-in dated 2^64 - 2^60 ns, 1.8e10 s after boot: the off-CPU
# interval before it would be longer than 2^63 ns, the last bucket of the
# histograms, whose upper end does not fit in 64 bits.
cp R late.data
n=$(damage_times late.data 0xF000000000000000)
check_num "records dated 2^64 - 2^60 ns" "${n:-0}" -ge 2
for fmt in hist text json; do
	run late.$fmt late.err "$WALLPROF" report -i late.data --format $fmt
	check_num "impossible times, $fmt: exit status 0" "$rc" -eq 0
	check_num "impossible times, $fmt: one line on stderr" "$(nlines late.err)" -eq 1
	check "impossible times, $fmt: a warning that counts them" \
		grep -q "^wallprof: warning: .*$n records are dated outside the recording" late.err
done
cat late.err
run late.pt late.err "$WALLPROF" report -i late.data --format hist --per-thread
check_num "impossible times, hist --per-thread: exit status 0" "$rc" -eq 0
check "impossible times, hist: no interval of 2^63 ns or more" \
	no_match '9223372036|-> 0ns' late.hist
check "impossible times, hist --per-thread: none either" no_match '9223372036|-> 0ns' late.pt
check "impossible times, hist: every interval fits in the recording" \
	no_match '[0-9]{4,}\.[0-9]s' late.hist
check "impossible times, text: the footer counts them" \
	grep -q "^# quality: .*, $n with impossible times" late.text
check "impossible times, json: valid" python3 "$J" check late.json
check "impossible times, json: the header counts them" \
	[ "$(python3 "$J" header late.json | awk -F '\t' '$1 == "impossible_times" { print $2 }')" = "$n" ]
check "impossible times, json: wall = on + off, inside the recording" \
	python3 "$J" invariants late.json

# Dated before the recording began (but not 0, which means no time).
cp R early.data
n=$(damage_times early.data 1000)
run early.json early.err "$WALLPROF" report -i early.data --format json
check_num "dated at boot: exit status 0" "$rc" -eq 0
check "dated at boot: a warning that counts them" \
	grep -q "^wallprof: warning: .*$n records are dated outside the recording" early.err
check "dated at boot: wall = on + off, inside the recording" python3 "$J" invariants early.json

# bounded OUT ERR COMMAND...: run COMMAND with stdin from /dev/null, killed
# past $LIMIT_KIB KiB of resident memory or $LIMIT_SECS seconds; its
# address space is limited to $LIMIT_KIB too, except under AddressSanitizer
# (which reserves terabytes of it).  Sets rc (137 when killed), secs (whole
# seconds taken), peak_kib (its peak resident memory) and killed (memory,
# time or nothing).
LIMIT_KIB=$((1024 * 1024)) LIMIT_SECS=60
# (The sanitizers make reading 2 GiB of records some five times slower.)
ldd "$WALLPROF" 2>/dev/null | grep -q libasan && LIMIT_SECS=180
asan=0
ldd "$WALLPROF" 2>/dev/null | grep -q libasan && asan=1
bounded() {
	set -- "$(python3 - "$asan" "$LIMIT_KIB" "$LIMIT_SECS" "$@" <<'EOF'
import resource, subprocess, sys, time
asan, lim, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out, err = sys.argv[4], sys.argv[5]
def limit():
    if not asan:
        resource.setrlimit(resource.RLIMIT_AS, (lim * 1024, lim * 1024))
with open(out, "w") as o, open(err, "w") as e:
    p = subprocess.Popen(sys.argv[6:], stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                         preexec_fn=limit)
t0, killed = time.time(), ""
while p.poll() is None:
    time.sleep(0.05)
    try:
        with open("/proc/%d/status" % p.pid) as f:
            rss = int([l for l in f if l.startswith("VmRSS:")][0].split()[1])
    except (OSError, IndexError):
        rss = 0
    if rss > lim or time.time() - t0 > secs:
        killed = "memory" if rss > lim else "time"
        p.kill()
rc = p.wait()
print(128 - rc if rc < 0 else rc, int(time.time() - t0),
      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, killed)
EOF
)"
	# shellcheck disable=SC2086
	set -- $1
	rc=$1 secs=$2 peak_kib=$3 killed=${4:-nothing}
}

MKBOMB=${BUILDDIR:-}/tests/integration/mkbomb
[ -x "$MKBOMB" ] || { echo "ERROR: no mkbomb at '$MKBOMB'"; exit 99; }

# 40 zstd blocks of 64 MiB of 8-byte records of a type no kernel writes,
# without ROUND records: 335 million records in 227 KB of file.
"$MKBOMB" bomb8.data 40 65536 8 | sed 's/^/# /'
bounded bomb8.out bomb8.err "$WALLPROF" report -i bomb8.data
echo "# exit $rc after $secs s, $peak_kib KiB at most, killed for: $killed"
check "8-byte records: not killed (for $killed)" [ "$killed" = nothing ]
check_num "8-byte records: exit status 1" "$rc" -eq 1
check_num "8-byte records: within $LIMIT_SECS s" "$secs" -lt "$LIMIT_SECS"
check_num "8-byte records: within $LIMIT_KIB KiB" "$peak_kib" -lt "$LIMIT_KIB"
check_num "8-byte records: one line on stderr" "$(nlines bomb8.err)" -eq 1
check "8-byte records: an error that names the bomb" \
	grep -q "^wallprof: error: 'bomb8.data': .*decompression bomb" bomb8.err
check "8-byte records: the report of what was read says it is damaged" \
	grep -q '^# quality: .*damaged file' bomb8.out
sed 's/^/# /' bomb8.err

# 128 blocks of 16 MiB of records of 64 KiB each: 2 GiB of records, few
# enough for a file of 235 KB, which without ROUND records would all be
# kept waiting for one.  The time-ordering queue releases them early; they
# are all there is, so everything is reported.
"$MKBOMB" bomb64k.data 128 16384 65528 | sed 's/^/# /'
bounded bomb64k.out bomb64k.err "$WALLPROF" report -i bomb64k.data
echo "# exit $rc after $secs s, $peak_kib KiB at most, killed for: $killed"
check "64 KiB records: not killed (for $killed)" [ "$killed" = nothing ]
check_num "64 KiB records: exit status 0" "$rc" -eq 0
check_num "64 KiB records: within $LIMIT_SECS s" "$secs" -lt "$LIMIT_SECS"
check_num "64 KiB records: within $LIMIT_KIB KiB" "$peak_kib" -lt "$LIMIT_KIB"
check_num "64 KiB records: one line on stderr" "$(nlines bomb64k.err)" -eq 1
check "64 KiB records: a warning that the recording did not finish" \
	grep -q "^wallprof: warning: 'bomb64k.data' has no summary" bomb64k.err
check "64 KiB records: every record read, no damage" \
	grep -q '^# quality: 32768 records, the recording did not finish$' bomb64k.out

# The intact recording has none, and says nothing of them.
run good.text good.err "$WALLPROF" report -i R
check_num "intact: exit status 0" "$rc" -eq 0
check_num "intact: nothing on stderr" "$(nlines good.err)" -eq 0
check "intact: no impossible times in the footer" no_match 'impossible' good.text
check "no core file" no_file '^core'

finish
