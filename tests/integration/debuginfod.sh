# debuginfod.sh: with DEBUGINFOD_URLS, report asks a debuginfod server for
# what it cannot find here: the debug file that names a stripped
# program's frames, and the program itself once it is gone.  Without it,
# those frames stay file+offset and the footer says which debug file
# would name them; with a server that cannot be reached, report says so
# once and goes on.  The server is Debian's debuginfod serving a
# directory (-F) on a free port; its 0.188 has no option to bind one
# address, so it listens on every interface, and is only ever asked at
# 127.0.0.1.  It is killed on exit.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v debuginfod >/dev/null 2>&1 || skip "no debuginfod (Debian package debuginfod)"
command -v python3 >/dev/null 2>&1 || skip "no python3 to wait for the server"
command -v objcopy >/dev/null 2>&1 || skip "no objcopy (binutils)"
unset DEBUGINFOD_URLS
export DEBUGINFOD_CACHE_PATH="$tmp/client-cache"
export XDG_CACHE_HOME="$tmp/cache"

# The spin workload (-g), its DWARF and symbols split off into a debug
# file that nothing here points to (no .gnu_debuglink, not beside it nor
# under /usr/lib/debug).
mkdir srv
objcopy --only-keep-debug "$WORKLOADS/spin" srv/spin.debug &&
	objcopy --strip-all --remove-section=.gnu_debuglink "$WORKLOADS/spin" spin ||
	skip "objcopy cannot split the workload's debug information"
id=$(readelf -n spin | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
check "the stripped program has a build id" test -n "$id"
run rec.out rec.err "$WALLPROF" record -q -o s.data -- ./spin 1
check_num "record exits 0" "$rc" -eq 0

run f.out f.err "$WALLPROF" report -i s.data --no-cache --format folded
check "without a server, the program's frames are unnamed" grep -q ';spin+0x' f.out
check "and not named" no_match ';spin_leaf' f.out
run t.out t.err "$WALLPROF" report -i s.data --no-cache --top 1
grep '^#   ' t.out | sed 's/^/# /'
debug=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
check "the footer says which debug file would name them" \
	grep -Eq "^#   [0-9.]+% in $tmp/spin: no symbols there \(stacks of .*\); its debug symbols would name them: $debug\$" t.out

# A server that cannot be reached: said once, and the report goes on.
start=$(date +%s)
DEBUGINFOD_URLS=http://127.0.0.1:1 run u.out u.err "$WALLPROF" report -i s.data --no-cache \
	--format folded
check_num "with an unreachable server, report exits 0" "$rc" -eq 0
check_num "and soon, seconds" "$(($(date +%s) - start))" -le 20
check_num "saying so once" "$(grep -c 'did not answer' u.err)" -eq 1
check "and its frames unnamed" grep -q ';spin+0x' u.out

# The server, holding the debug file and the stripped program.
cp spin srv/spin-exe
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F -p "$port" -d "$tmp/db.sqlite" -t 0 -g 0 "$tmp/srv" >srv.log 2>&1 &
bg_pids="$bg_pids $!"
server=http://127.0.0.1:$port
# Ready once it answers for the build id (it scans in the background).
if ! python3 - "$server/buildid/$id/debuginfo" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
        sys.exit(0)
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY
then
	sed 's/^/# server: /' srv.log | tail -5
	skip "debuginfod did not serve the debug file within 20 s"
fi

export DEBUGINFOD_URLS="$server"
run f2.out f2.err "$WALLPROF" report -i s.data --no-cache --format folded
check_num "with the server, report exits 0" "$rc" -eq 0
check "it says it is fetching the debug file" \
	grep -q "fetching the debug file of '$tmp/spin' from debuginfod" f2.err
check "and names the program's frames" grep -q ';spin_outer;spin_middle_\[i\];spin_leaf ' f2.out
check "none unnamed" no_match ';spin\+0x' f2.out
check "the downloaded file is in the client's cache" \
	test -s "$DEBUGINFOD_CACHE_PATH/$id/debuginfo"

# The symbol cache keeps what the downloaded file named.
"$WALLPROF" report -i s.data --format folded >c1.out 2>c1.err
run c2.out c2.err "$WALLPROF" report -i s.data --format folded
check "a report from the symbol cache names them too" grep -q ';spin_leaf ' c2.out
check "without fetching again" no_match 'fetching' c2.err

# The program itself gone: the server supplies it too.
rm spin
run g.out g.err "$WALLPROF" report -i s.data --no-cache --format folded
check_num "with the program gone, report exits 0" "$rc" -eq 0
check "it fetches the program" grep -q "fetching the file of '$tmp/spin'" g.err
check "and names its frames" grep -q ';spin_leaf ' g.out
check "with no warning that it is missing" no_match 'cannot open' g.err
finish
