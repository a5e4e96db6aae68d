# locked.sh: run a unit test under the integration tests' shared lock
# (lib.sh), so that a test that wants the machine to itself
# (tracing_alone: it compares wake-ups and waits with perf's or the
# kernel's) has it; a unit test beside it made its figures of a loaded
# machine's waits differ from perf's by 10%.
# usage: sh locked.sh PROGRAM [ARGS...]
_lockdir="${BUILDDIR:-.}/tests"
if command -v flock >/dev/null 2>&1 && mkdir -p "$_lockdir" 2>/dev/null &&
	exec 7>>"$_lockdir/.lock-queue" 8>>"$_lockdir/.lock-run"; then
	flock -x -w 600 7 || echo "# not alone: another test still held the queue after 10 minutes"
	flock -s -w 600 8 || echo "# not alone: another test still held the lock after 10 minutes"
	flock -u 7
	exec 7>&-
fi
exec "$@"
