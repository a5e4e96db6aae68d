# lock.sh: the shared test lock (sourced by integration/lib.sh and
# unit/locked.sh).  Every test holds a shared lock on fd 8 until it
# ends; tracing_alone (lib.sh) makes it exclusive.  The queue lock on
# fd 7, taken on the way in by both kinds, keeps the shared ones from
# starving an exclusive one.  The locks are files of the build
# directory, so that two builds' runs never wait for each other.
# (No-ops without flock.)
_lockdir="${BUILDDIR:-.}/tests"
if command -v flock >/dev/null 2>&1 && mkdir -p "$_lockdir" 2>/dev/null &&
	exec 7>>"$_lockdir/.lock-queue" 8>>"$_lockdir/.lock-run"; then
	flock -x -w 600 7 || echo "# not alone: another test still held the queue after 10 minutes"
	flock -s -w 600 8 || echo "# not alone: another test still held the lock after 10 minutes"
	flock -u 7
fi
