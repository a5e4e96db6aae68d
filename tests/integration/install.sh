#!/bin/sh
# make install DESTDIR=... installs the binary, every man page and the bash
# completion, and `man` finds the pages there.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ -n "${BUILDDIR:-}" ] || skip "BUILDDIR is not set (run through make check)"
command -v make >/dev/null 2>&1 || skip "make is not installed"
root=$tmp/root
run make.out make.err make -C "$BUILDDIR" install DESTDIR="$root"
check_num "make install DESTDIR=... exits 0" "$rc" -eq 0
[ "$rc" -eq 0 ] || { cat make.err; finish; }
bin=$(find "$root" -type f -name wallprof -perm -u+x | head -n 1)
check "the wallprof binary is installed" [ -n "$bin" ]
installed() { [ -n "$(find "$root" -name "$1" -path "$2" -print -quit)" ]; }
for page in wallprof.1 wallprof-record.1 wallprof-report.1; do
	check "man page $page is installed in man1" installed "$page" '*/man/man1/*'
done
check "man page wallprof-data.5 is installed in man5" installed wallprof-data.5 '*/man/man5/*'
comp=$(find "$root" -path '*/bash-completion/completions/wallprof' | head -n 1)
check "the bash completion is installed" [ -n "$comp" ]
mandir=$(dirname "$(dirname "$(find "$root" -name wallprof-record.1 | head -n 1)")")
if command -v man >/dev/null 2>&1; then
	MANPATH=$mandir man wallprof-record 2>/dev/null | col -b > page.txt
	check "man 1 wallprof-record finds the installed page" grep -q -- '--call-graph' page.txt
fi
[ -n "$bin" ] && check "the installed binary runs" "$bin" --version
if [ -n "$comp" ] && command -v bash >/dev/null 2>&1; then
	check "the completion script loads in bash" bash -c ". '$comp'"
fi
finish
