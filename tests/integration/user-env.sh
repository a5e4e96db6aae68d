#!/bin/sh
# record --user resets the environment as sudo's env_reset does: the
# command gets the user's HOME, USER, LOGNAME and SHELL, keeps TERM,
# COLORTERM, PATH, LANG, LANGUAGE, LC_* and TZ, and none of root's other
# variables (a secret, LD_PRELOAD).  --preserve-env=LIST keeps the named
# variables too (NAME* a prefix), --preserve-env all of them; a bad list,
# or --preserve-env without --user, is one usage error before anything
# runs.  Without --user the whole environment passes on.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for --user (running as uid $(id -u))"
getent passwd nobody >/dev/null 2>&1 || skip "there is no user nobody"
chmod 755 "$tmp"
home=$(getent passwd nobody | cut -d: -f6)

# envrun OUT [OPTIONS...]: record /usr/bin/env as nobody with a known
# environment; the command's environment in OUT, the status in $rc.
envrun() {
	_o=$1; shift
	run "$_o" "$_o.err" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm-256color \
		COLORTERM=truecolor LANG=C.UTF-8 LANGUAGE=en LC_TIME=C LC_NUMERIC=C TZ=UTC \
		HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
		ROOT_SECRET=hunter2 LD_PRELOAD=/nonexistent.so MAKEFLAGS=-j2 MAKELEVEL=0 CC=gcc \
		"$WALLPROF" record -q -o "$_o.data" --user nobody "$@" -- /usr/bin/env
}

envrun default
check_num "record --user nobody -- env exits 0" "$rc" -eq 0
for v in PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm-256color COLORTERM=truecolor LANG=C.UTF-8 \
	LANGUAGE=en LC_TIME=C LC_NUMERIC=C TZ=UTC "HOME=$home" USER=nobody LOGNAME=nobody; do
	check "kept or set: $v" grep -qxF "$v" default
done
for v in ROOT_SECRET LD_PRELOAD MAKEFLAGS MAKELEVEL CC; do
	check "root's $v does not reach nobody's command" no_match "^$v=" default
done
check_num "nothing else: 12 variables (with SHELL)" "$(nlines default)" -eq 12

envrun list --preserve-env=CC,MAKE*
check_num "--preserve-env=CC,MAKE* exits 0" "$rc" -eq 0
for v in CC=gcc MAKEFLAGS=-j2 MAKELEVEL=0 TERM=xterm-256color USER=nobody; do
	check "--preserve-env=CC,MAKE*: $v" grep -qxF "$v" list
done
check "--preserve-env=CC,MAKE*: no ROOT_SECRET" no_match '^ROOT_SECRET=' list
check "--preserve-env=CC,MAKE*: no LD_PRELOAD" no_match '^LD_PRELOAD=' list

envrun all --preserve-env
check_num "--preserve-env exits 0" "$rc" -eq 0
for v in ROOT_SECRET=hunter2 CC=gcc MAKEFLAGS=-j2 "HOME=$home" USER=nobody LOGNAME=nobody; do
	check "--preserve-env: $v" grep -qxF "$v" all
done
check_num "--preserve-env: HOME once" "$(grep -c '^HOME=' all)" -eq 1

for bad in "--preserve-env=" "--preserve-env=A,,B" "--preserve-env=1X" "--preserve-env=A-B" \
	"--preserve-env=*"; do
	run o e "$WALLPROF" record -q -o bad.data --user nobody "$bad" -- true
	check_num "$bad: a usage error" "$rc" -eq 2
	check_num "$bad: one line" "$(nlines e)" -eq 1
	check "$bad: no file" [ ! -e bad.data ]
done
run o e "$WALLPROF" record -q -o bad.data --preserve-env=CC -- true
check_num "--preserve-env without --user: a usage error" "$rc" -eq 2
check "... which says so" grep -q 'only with --user' e

# Without --user nothing is taken away.
run plain plain.err env ROOT_SECRET=hunter2 "$WALLPROF" record -q -o plain.data -- /usr/bin/env
check "without --user the environment passes on" grep -qx 'ROOT_SECRET=hunter2' plain
finish
