#!/bin/sh
# container-escape.sh: a program in a container, run by an unprivileged
# user (nobody, in 'unshare -rm' and a chroot) under root's recorder,
# cannot make root copy a file of the host.  The program maps a library
# of its own, then swaps the library's directory for an absolute link to
# a directory of root's (0700) holding a root-only (0600) file with the
# same build id.  Root's recorder resolves the mapped paths inside the
# program's root (openat2 RESOLVE_IN_ROOT) and copies only the very file
# mapped (device and inode): the root-only file is not copied; the
# program's own files that stay put are.  (Before: root copied the
# root-only file into its cache, byte for byte.)
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root's recorder (and root to make root-only files)"
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
command -v unshare >/dev/null 2>&1 || skip "no unshare(1)"
command -v chroot >/dev/null 2>&1 || skip "no chroot(8)"
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups unshare -r -m true 2>/dev/null ||
	skip "user namespaces are not open to unprivileged users here"

XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
unset WALLPROF_NO_CACHE
chmod 755 "$tmp"

# The host's secret: root's directory and root's file, an ELF (sleeper's)
# with a line of text after it; the program's library is the same ELF.
mkdir -m 700 secret && cp "$WORKLOADS/sleeper" secret/x.so &&
	echo "ROOT-ONLY-SECRET-TEXT" >>secret/x.so && chmod 600 secret/x.so || exit 99

# The container: mapswap and its libraries, the library at /opt/plug, all
# the user's.
mkdir -p R/app R/opt/plug || exit 99
cp "$WORKLOADS/mapswap" R/app/ && cp "$WORKLOADS/sleeper" R/opt/plug/x.so || exit 99
for lib in $(ldd "$WORKLOADS/mapswap" | grep -o '/[^ ]*'); do
	mkdir -p "R$(dirname "$lib")" && cp -L "$lib" "R$lib" || exit 99
done
chown -R nobody R || exit 99

# nobody's program, root's recorder: the swap comes microseconds after the
# mapping, long before the recorder reads the mapping's record.
run out rec.err "$WALLPROF" record -o c.data --user nobody -- \
	unshare -r -m chroot R /app/mapswap 0.5 --swap /opt/plug "$tmp/secret" /opt/plug/x.so
check_num "record exits 0" "$rc" -eq 0
check "the program mapped its file and swapped the directory" grep -qx 'mapped 1' out
check "the directory is a link to root's now" [ -L R/opt/plug ]
sed 's/^/# /' rec.err
files=$tmp/cache/wallprof/files
check "root's secret was not copied" sh -c "! grep -rqs ROOT-ONLY-SECRET-TEXT '$files'"
check "the program's own binary was copied" \
	sh -c "for f in '$files'/*; do cmp -s \"\$f\" R/app/mapswap && exit 0; done; exit 1"
check "every copy is a file the program had" \
	sh -c "for f in '$files'/*; do found=; for g in \$(find R -type f); do cmp -s \"\$f\" \"\$g\" && found=1; done; [ -n \"\$found\" ] || exit 1; done"

# The same program without the swap: its library is kept.
rm -rf R/opt/plug R/opt/plug.old "$files"
mkdir R/opt/plug && cp "$WORKLOADS/sleeper" R/opt/plug/x.so && chown -R nobody R/opt || exit 99
run out rec.err "$WALLPROF" record -o k.data --user nobody -- \
	unshare -r -m chroot R /app/mapswap 0.5 /opt/plug/x.so
check_num "no swap: record exits 0" "$rc" -eq 0
check "no swap: the library was copied" \
	sh -c "for f in '$files'/*; do cmp -s \"\$f\" R/opt/plug/x.so && exit 0; done; exit 1"
finish
