# quickstart.sh: the README's quick start works as written, from a fresh
# clone in a directory other users cannot enter: tools/setup installs,
# builds and prints a report, leaves the tree clean, and does not stop
# tools/check (which builds out of tree) from configuring its own builds.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

top=$(cd "$TESTS_SRCDIR/.." && pwd)
command -v git >/dev/null 2>&1 || skip "no git to clone the source tree"
# (A release tarball unpacked inside some checkout is not one.)
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] ||
	skip "the source tree is not a git checkout"
[ "$(id -u)" -eq 0 ] || skip "tools/setup may install packages; run as root"

# The clone holds what is committed: the quick start of the tree as it lands.
mkdir -m 700 priv
run clone.out clone.err git clone -q "$top" priv/wallprof
check_num "git clone exits 0" "$rc" -eq 0
[ "$rc" -eq 0 ] || { cat clone.err; finish; }
cd priv/wallprof || exit 99
grep -q '^    tools/setup$' README.md || fail "README.md's quick start says 'tools/setup'"
grep -q '^    tools/check$' README.md || fail "README.md's quick start says 'tools/check'"

run ../../setup.out ../../setup.err timeout 600 tools/setup
check_num "tools/setup exits 0" "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# /' ../../setup.out ../../setup.err | tail -n 20
check "tools/setup prints the example's report" grep -q '^PID/TID ' ../../setup.out
check "the report has the example's spinner thread" grep -q ' spinner ' ../../setup.out
check "no raw schedstat lines of the workload" no_match 'oncpu_ns' ../../setup.out
check "the kernel's figures are said to be what to compare with" \
	grep -q "^The kernel's own count of each thread's time on a CPU" ../../setup.out
check_num "and given for each of its six threads" \
	"$(grep -Ec '^  [a-z0-9]+ +tid [0-9]+ +[0-9.]+ ms on-CPU$' ../../setup.out)" -eq 6
check "the tree is clean after tools/setup" [ -z "$(git status --porcelain)" ]
git status --porcelain | sed 's/^/# /'

# tools/check's first step: its own out-of-tree builds.
mkdir ../b
run ../../conf.out ../../conf.err sh -c 'cd ../b && ../wallprof/configure -q'
check_num "an out-of-tree configure works after tools/setup" "$rc" -eq 0
[ "$rc" -eq 0 ] || head -n 5 ../../conf.err
finish
