# locked.sh: run a unit test under the integration tests' shared lock
# (tests/lock.sh), so that a test that wants the machine to itself
# (tracing_alone in lib.sh) has it.
# usage: sh locked.sh PROGRAM [ARGS...]
# shellcheck source=tests/lock.sh
. "${TESTS_SRCDIR:-$(dirname "$0")/..}/lock.sh"
exec 7>&-
exec "$@"
