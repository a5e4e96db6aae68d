#!/usr/bin/env python3
"""pty-run.py: run a command on a new pseudo-terminal, its controlling terminal.

usage: pty-run.py [--interrupt-on TEXT] [--timeout SECONDS] -- COMMAND [ARG...]

The command runs in a new session whose controlling terminal is a new
pty, as in a terminal window, with the pty as its standard input, output
and error.  What it writes there is copied to standard output (CR LF as
LF).  With --interrupt-on, a Ctrl-C is typed once TEXT has appeared in
the output.  The exit status is the command's (128 + the signal when a
signal ended it), 124 when it ran past the timeout (default 60 s; it is
then killed), 127 when it could not be run.
"""
import os
import pty
import select
import signal
import sys
import time


def main():
    args = sys.argv[1:]
    interrupt_on = None
    timeout = 60.0
    while args and args[0] != "--":
        if args[0] == "--interrupt-on" and len(args) > 1:
            interrupt_on = args[1].encode()
        elif args[0] == "--timeout" and len(args) > 1:
            timeout = float(args[1])
        else:
            sys.exit(__doc__.split("\n\n")[1])
        args = args[2:]
    args = args[1:]
    if not args:
        sys.exit(__doc__.split("\n\n")[1])

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(args[0], args)
        except OSError as e:
            os.write(2, ("pty-run.py: cannot run %s: %s\n" % (args[0], e.strerror)).encode())
        os._exit(127)

    out = b""
    sent = False
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""  # EIO: nothing holds the terminal open any more
        if not data:
            break
        out += data
        if interrupt_on is not None and not sent and interrupt_on in out:
            os.write(fd, b"\x03")
            sent = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    sys.stdout.buffer.write(out.replace(b"\r\n", b"\n"))
    sys.stdout.flush()
    if timed_out:
        return 124
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
