#!/bin/sh
# Processes in a chroot and in another mount namespace map files at paths
# that the host does not have: record keeps a copy of each (by build id, in
# the cache directory) while the process lives, and report names their
# frames from it after the chroot or the private mount is gone.  Launched
# with --keep-capabilities (chroot and mount need root's), and seen by -a.
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "chroot and unshare -m need root"
command -v chroot >/dev/null 2>&1 || skip "no chroot(8)"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"

XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
unset WALLPROF_NO_CACHE

# A chroot holding the spin workload at a path the host does not have, and
# the libraries it needs (copies: the same build ids as the host's).
mkroot() {
	mkdir -p "$1/opt/app" || return 1
	cp "$WORKLOADS/spin" "$1/opt/app/spin" || return 1
	for lib in $(ldd "$WORKLOADS/spin" | grep -o '/[^ ]*'); do
		mkdir -p "$1$(dirname "$lib")" && cp -L "$lib" "$1$lib" || return 1
	done
}
mkroot root || skip "cannot build a chroot"

# named FOLDED: spin's spinner stack is named from its own binary.
named() {
	grep -q '^spinner;.*start_thread;spinner;spin_outer;.*spin_leaf [0-9]*$' "$1"
}

# (The stack copies kept, --unwind=report: report unwinds them through the
# copy, or says which file it lacks.  Unwound live, below, needs neither.)
"$WALLPROF" record --unwind=report -o chroot.data --keep-capabilities -- chroot root /opt/app/spin 0.5 \
	>/dev/null 2>record.err
check "chroot: recorded" [ $? -eq 0 ]
check "chroot: record says it kept a copy of the one file the host lacks" \
	grep -q "kept copies of 1 file mapped in a chroot" record.err
check "chroot: the copy is in the cache, by build id" \
	sh -c "ls '$tmp/cache/wallprof/files' | grep -qx '[0-9a-f]\{40\}'"
rm -rf root
"$WALLPROF" report -i chroot.data --format folded --no-cache >chroot.folded 2>report.err
check "chroot gone: report names the frames of /opt/app/spin" named chroot.folded
check "chroot gone: no message about /opt/app/spin" \
	sh -c "! grep -q 'opt/app/spin' report.err"

# Without the copy: frames are addresses, and report says which file it lacks.
XDG_CACHE_HOME=$tmp/empty "$WALLPROF" report -i chroot.data --format folded --no-cache \
	>bare.folded 2>bare.err
check "no copy: the frames are not named" sh -c "! grep -q spin_leaf bare.folded"
check "no copy: report says it cannot open /opt/app/spin" \
	grep -q "cannot open '/opt/app/spin'" bare.err

# Unwound live: the stacks go through the chroot's binary as its process
# saw it (the host has no /opt/app/spin), and the file names them with
# no copy and no chroot left, without a word on stderr from either.
mkroot root || skip "cannot build a chroot"
XDG_CACHE_HOME=$tmp/livecache "$WALLPROF" record -o live.data --unwind=live \
	--keep-capabilities -- chroot root /opt/app/spin 0.5 >/dev/null 2>live-record.err
check "live: recorded" [ $? -eq 0 ]
check "live: record says nothing about /opt/app/spin" \
	sh -c "! grep -q 'opt/app/spin' live-record.err"
rm -rf root "$tmp/livecache"
XDG_CACHE_HOME=$tmp/empty "$WALLPROF" report -i live.data --format folded --no-cache \
	>live.folded 2>live-report.err
check "live, chroot and copy gone: the frames of /opt/app/spin are named" named live.folded
check "live: report says nothing about /opt/app/spin" \
	sh -c "! grep -q 'opt/app/spin' live-report.err"

# --no-buildid-cache: nothing kept, and record says so.
mkroot root2 || skip "cannot build a chroot"
rm -rf "$tmp/cache2"
XDG_CACHE_HOME=$tmp/cache2 "$WALLPROF" record -o nocache.data --no-buildid-cache \
	--keep-capabilities -- chroot root2 /opt/app/spin 0.2 >/dev/null 2>nocache.err
check "--no-buildid-cache: record says a file was not kept" \
	grep -q "1 file mapped in a chroot or another mount namespace was not kept" nocache.err
check "--no-buildid-cache: no copy made" [ ! -e "$tmp/cache2/wallprof/files" ]

# A private tmpfs in a new mount namespace: gone when the process exits.
mkdir -p mnt
"$WALLPROF" record -o ns.data --keep-capabilities -- unshare -m --propagation private sh -c \
	"mount -t tmpfs none '$tmp/mnt' && cp '$WORKLOADS/spin' '$tmp/mnt/' && exec '$tmp/mnt/spin' 0.5" \
	>/dev/null 2>ns-record.err
check "unshare -m: recorded" [ $? -eq 0 ]
check "unshare -m: the host has no such file" [ ! -e "$tmp/mnt/spin" ]
"$WALLPROF" report -i ns.data --format folded --no-cache >ns.folded 2>ns-report.err
check "unshare -m: report names the frames of the private file" named ns.folded
check "unshare -m: no message about it" sh -c "! grep -q 'mnt/spin' ns-report.err"

# -a sees a chrooted process started during the recording.
mkroot root3 || skip "cannot build a chroot"
rm -rf "$tmp/cache"
# The process starts once record holds its events (a busy machine may take
# more than a second to get there), and the recording stops once it ended.
"$WALLPROF" record -o all.data -a -d 60 >/dev/null 2>all-record.err &
rec=$!
bg_pids="$bg_pids $rec"
has_events() { ls -l "/proc/$rec/fd" 2>/dev/null | grep -q 'perf_event'; }
wait_until 600 has_events || fail "-a: record opened its events within 60 s"
sleep 0.2
# (It lives 1.5 s: the drain copies its file when it reads the mapping,
# which a loaded machine delays, and a process gone by then has none.)
chroot root3 /opt/app/spin 1.5 >/dev/null
kill -INT $rec
wait $rec
check "-a: recorded (stopped by SIGINT: 130)" [ $? -eq 130 ]
rm -rf root3
"$WALLPROF" report -i all.data --format folded --no-cache --comm spinner >all.folded 2>all-report.err
check "-a: report names the chrooted process's frames" named all.folded
finish
