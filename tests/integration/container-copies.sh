#!/bin/sh
# container-copies.sh: what root's recorder copies of the files a program
# in a container maps (run by nobody, in 'unshare -rm' and a chroot) is
# bounded by what the copies hold, not by what the program claims: a
# sparse ELF of 3 GiB (its data a few KiB) is copied sparse, in moments;
# one with 300 MiB of data is not copied, and record says why; copying is
# stopped by SIGINT; and the cache is pruned by age and size, least
# recently used first (storing and opening a copy renew its time of use),
# never the copies of the recording that prunes.  (Before: the sparse
# file became a 3 GiB copy taking half a minute, SIGINT waited for the
# copying, and the cache grew for good.)
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root's recorder"
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
command -v chroot >/dev/null 2>&1 || skip "no chroot(8)"
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups unshare -r -m true 2>/dev/null ||
	skip "user namespaces are not open to unprivileged users here"

XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
unset WALLPROF_NO_CACHE WALLPROF_FILES_MAX_SIZE WALLPROF_FILES_MAX_AGE
files=$tmp/cache/wallprof/files
chmod 755 "$tmp"

# A container holding mapswap and its libraries, the user's.
mkdir -p R/app R/opt || exit 99
cp "$WORKLOADS/mapswap" R/app/ || exit 99
for lib in $(ldd "$WORKLOADS/mapswap" | grep -o '/[^ ]*'); do
	mkdir -p "R$(dirname "$lib")" && cp -L "$lib" "R$lib" || exit 99
done
# in_container DATA SECONDS FILE...: root records nobody's program mapping
# FILEs, with the stack copies (--unwind=report), which report unwinds
# through the copies.
in_container() {
	_d=$1 _s=$2; shift 2
	"$WALLPROF" record -v --unwind=report -o "$_d" --user nobody -- unshare -r -m chroot R /app/mapswap \
		"$_s" "$@"
}
# copy_of FILE: the cache's copy of FILE (by content), or nothing.
copy_of() {
	for _f in "$files"/*; do
		[ -f "$_f" ] && cmp -s "$_f" "$1" && { echo "$_f"; return 0; }
	done
	return 1
}

# --- a sparse ELF of 3 GiB -------------------------------------------------
cp "$WORKLOADS/sleeper" R/opt/big.so && truncate -s 3G R/opt/big.so && chown -R nobody R ||
	exit 99
t0=$(date +%s)
run out rec.err in_container sparse.data 0.3 /opt/big.so
t=$(( $(date +%s) - t0 ))
check_num "sparse: record exits 0" "$rc" -eq 0
check_num "sparse: record took a few seconds at most ($t s)" "$t" -le 10
copy=$(copy_of R/opt/big.so)
check "sparse: the file was copied, whole" [ -n "$copy" ]
check_num "sparse: the copy is 3 GiB long" "$(stat -c %s "${copy:-/dev/null}")" -eq $((3 << 30))
kib=$(du -k "${copy:-/dev/null}" | cut -f1)
check_num "sparse: the copy takes little of the disk ($kib KiB)" "${kib:-0}" -lt 1024
run r.out r.err "$WALLPROF" report -i sparse.data --no-cache
check_num "sparse: report exits 0" "$rc" -eq 0

# --- 300 MiB of data ---------------------------------------------------------
cp "$WORKLOADS/spin" R/opt/dense.so && dd if=/dev/zero bs=1M count=300 2>/dev/null >>R/opt/dense.so &&
	chown nobody R/opt/dense.so || exit 99
run out rec.err in_container dense.data 0.3 /opt/dense.so
check_num "dense: record exits 0" "$rc" -eq 0
check "dense: the file was not copied" sh -c "! du -k '$files'/* | awk '\$1 > 100000' | grep -q ."
check "dense: record says why" \
	grep -q '^wallprof: warning: 1 file mapped in a chroot or another mount namespace was not kept: more than 256 MiB of data each' rec.err
rm -f R/opt/dense.so

# --- SIGINT while copying ------------------------------------------------------
# Four files of 20 MiB of data (each another program: another build id),
# copied as from a slow disk (50 ms a MiB): the signal comes as the first
# is copied.
i=0
for w in wallclock recurse twosites branches; do
	i=$((i + 1))
	cp "$WORKLOADS/$w" "R/opt/d$i.so" && head -c 20M /dev/zero | tr '\0' "$i" >>"R/opt/d$i.so" ||
		exit 99
done
chown nobody R/opt/d*.so || exit 99
WALLPROF_TEST_COPY_DELAY_US=50000
export WALLPROF_TEST_COPY_DELAY_US
# (exec: the signal goes to record itself, not to a subshell.)
(exec "$WALLPROF" record -v -o int.data --user nobody -- unshare -r -m chroot R /app/mapswap \
	0.3 /opt/d1.so /opt/d2.so /opt/d3.so /opt/d4.so) >out 2>rec.err &
wp=$!
unset WALLPROF_TEST_COPY_DELAY_US
bg_pids="$bg_pids $wp"
wait_until 300 grep -q "copying '/opt/d1.so'" rec.err
kill -INT "$wp"
t0=$(date +%s)
wait "$wp"
rc=$?
t=$(( $(date +%s) - t0 ))
check_num "SIGINT: record exits 0 (the recording had ended)" "$rc" -eq 0
check_num "SIGINT: record ended soon after it ($t s)" "$t" -le 3
check "SIGINT: record says the copying was stopped" \
	grep -Eq '^wallprof: warning: copying stopped by Interrupt: [1-4] files? mapped in a chroot or another mount namespace (was|were) not kept' rec.err
check "SIGINT: the data file is there, complete" sh -c "'$WALLPROF' report --dump -i int.data 2>/dev/null | grep -q '^# summary'"
check "SIGINT: no half copy left" no_file '^\.' "$files"
rm -f R/opt/d*.so

# --- pruning -------------------------------------------------------------------
# Old copies, one 40 days unused, three of 600 KiB 1 to 3 days unused, and
# a temporary file a killed recorder left 2 days ago; the cache may hold 1 MiB.
rm -rf "$files"
mkdir -p "$files" || exit 99
mk() { head -c "$2" /dev/urandom >"$files/$1" && touch -d "$3 days ago" "$files/$1"; }
mk 0000000000000000000000000000000000000040 4096 40
mk 0000000000000000000000000000000000000003 614400 3
mk 0000000000000000000000000000000000000002 614400 2
mk 0000000000000000000000000000000000000001 614400 1
mk .0000000000000000000000000000000000000005.123456 4096 2
cp "$WORKLOADS/pingpong" R/opt/small.so && chown nobody R/opt/small.so || exit 99
WALLPROF_FILES_MAX_SIZE=1M
export WALLPROF_FILES_MAX_SIZE
run out rec.err in_container prune.data 0.3 /opt/small.so
unset WALLPROF_FILES_MAX_SIZE
check_num "prune: record exits 0" "$rc" -eq 0
gone() { [ ! -e "$files/$1" ]; }
check "prune: the copy unused for 40 days is gone" gone 0000000000000000000000000000000000000040
check "prune: the least recently used ones are gone, to fit 1 MiB" \
	sh -c "[ ! -e '$files/0000000000000000000000000000000000000003' ] && [ ! -e '$files/0000000000000000000000000000000000000002' ]"
check "prune: the most recently used one is kept" [ -e "$files/0000000000000000000000000000000000000001" ]
check "prune: the recording's own copy is kept" sh -c "[ -n \"\$(cd '$tmp' && for f in '$files'/*; do cmp -s \"\$f\" R/opt/small.so && echo y; done)\" ]"
check "prune: the killed recorder's temporary file is gone" no_file '^\.' "$files"
check "prune: record says what it removed" grep -q '^wallprof: removed [0-9]* old copies of files' rec.err
# Using a copy renews it: report opens the copy of mapswap, whose frames
# are in the stacks (the host has no /app/mapswap).
copy=$(copy_of R/app/mapswap)
touch -d "40 days ago" "${copy:-/dev/null}"
run r.out r.err "$WALLPROF" report -i prune.data --no-cache
check "report: opening the copy renewed its time of use" \
	[ "$(( $(date +%s) - $(stat -c %Y "${copy:-/dev/null}") ))" -lt 3600 ]
finish
