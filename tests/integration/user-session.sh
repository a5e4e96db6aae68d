#!/bin/sh
# record --user runs the command with that user's HOME, USER, LOGNAME and
# SHELL (of the rest, PATH and the like: see user-env.sh), in a session of its own
# without a controlling terminal: run on a terminal, the command cannot
# open /dev/tty nor push input into the terminal with TIOCSTI (which
# root's shell would read after wallprof ends).  A Ctrl-C on the terminal
# reaches wallprof only, which ends the command and exits 130.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for --user (running as uid $(id -u))"
getent passwd nobody >/dev/null 2>&1 || skip "there is no user nobody"
command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (Debian package util-linux)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
# The command runs as nobody: from a directory and with an interpreter
# that nobody can use (python3 on root's PATH may be in root's home).
chmod 755 "$tmp"
py=
# (The system's first: an interpreter under root's home may pass this
# probe, as setpriv keeps some of root's rights, and fail under --user.)
for p in /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3)"; do
	[ -n "$p" ] && as_nobody "$p" -c 'import fcntl, termios' 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || skip "user nobody cannot run python3 (tried the one on PATH and /usr/bin/python3)"

# --- The environment -------------------------------------------------------
home=$(getent passwd nobody | cut -d: -f6)
shell=$(getent passwd nobody | cut -d: -f7)
[ -n "$shell" ] || shell=/bin/sh
run env.out env.err env HOME=/root USER=root LOGNAME=root SHELL=/bin/bash KEEP=kept \
	"$WALLPROF" record -q -o E --user nobody -- /usr/bin/env
check_num "record --user nobody -- env exits 0" "$rc" -eq 0
sed 's/^/# /' env.err
check "HOME is nobody's ($home)" grep -qxF "HOME=$home" env.out
check "USER is nobody" grep -qx 'USER=nobody' env.out
check "LOGNAME is nobody" grep -qx 'LOGNAME=nobody' env.out
check "SHELL is nobody's ($shell)" grep -qxF "SHELL=$shell" env.out
for v in HOME USER LOGNAME SHELL; do
	check_num "$v is set once" "$(grep -c "^$v=" env.out)" -eq 1
done
check "PATH is kept" grep -qxF "PATH=$PATH" env.out
# Without --user nothing changes.
run env2.out env2.err env HOME=/somewhere KEEP=kept "$WALLPROF" record -q -o E2 -- /usr/bin/env
check_num "record -- env exits 0" "$rc" -eq 0
check "without --user, HOME is passed on" grep -qx 'HOME=/somewhere' env2.out

# --- The terminal ------------------------------------------------------------
# The probe runs as nobody on the terminal that wallprof runs on.
probe='
import fcntl, os, termios
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("ctty yes")
except OSError as e:
    print("ctty no (%s)" % e.strerror)
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"#")
    print("tiocsti yes")
except OSError as e:
    print("tiocsti no (%s)" % e.strerror)
print("sid %d pid %d" % (os.getsid(0), os.getpid()))
'
legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo unknown)
echo "# dev.tty.legacy_tiocsti: $legacy"
run tty.out tty.err python3 "$TESTS_SRCDIR/integration/pty-run.py" --timeout 60 -- \
	"$WALLPROF" record -q -o T --user nobody -- "$py" -c "$probe"
check_num "on a terminal: record --user exits 0" "$rc" -eq 0
sed 's/^/# /' tty.out tty.err
check "the command has no controlling terminal (/dev/tty cannot be opened)" \
	grep -q '^ctty no' tty.out
check "the command cannot push input into the terminal (TIOCSTI)" grep -q '^tiocsti no' tty.out
sid=$(sed -n 's/^sid \([0-9]*\) pid \([0-9]*\)$/\1 \2/p' tty.out)
[ -n "$sid" ] || sid="none printed"
check "the command leads a session of its own (sid, pid: $sid)" [ "${sid% *}" = "${sid#* }" ]
# Without --user (the same user as wallprof) the terminal stays shared.
run tty2.out tty2.err python3 "$TESTS_SRCDIR/integration/pty-run.py" --timeout 60 -- \
	"$WALLPROF" record -q -o T2 -- "$py" -c "$probe"
check_num "on a terminal: record without --user exits 0" "$rc" -eq 0
check "without --user the command keeps the controlling terminal" grep -q '^ctty yes' tty2.out

# --- Ctrl-C ------------------------------------------------------------------
start=$(date +%s)
run int.out int.err python3 "$TESTS_SRCDIR/integration/pty-run.py" --timeout 60 \
	--interrupt-on READY -- \
	"$WALLPROF" record -q -o I --user nobody -- sh -c 'echo READY; exec sleep 30'
took=$(($(date +%s) - start))
check_num "Ctrl-C: wallprof exits 130 (SIGINT)" "$rc" -eq 130
check_num "Ctrl-C: the command was ended, not waited for (seconds)" "$took" -lt 20
check "Ctrl-C: the recording was written" [ -s I ]
finish
