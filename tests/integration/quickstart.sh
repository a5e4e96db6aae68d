# quickstart.sh: the README's quick start works as written, from a fresh
# clone in a directory other users cannot enter: tools/setup installs,
# builds and prints a report, leaves the tree clean, and does not stop
# tools/check (which builds out of tree) from configuring its own builds.
# When the tree under test is itself such a clone, set up by tools/setup
# as the README says (CI runs the README's two commands in a fresh clone
# in a private directory), that run is the one judged, from what it kept
# in build/setup.log: the same checks, without a second build.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

top=$(cd "$TESTS_SRCDIR/.." && pwd)
command -v git >/dev/null 2>&1 || skip "no git to clone the source tree"
# (A release tarball unpacked inside some checkout is not one.)
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] ||
	skip "the source tree is not a git checkout"
[ "$(id -u)" -eq 0 ] || skip "tools/setup may install packages; run as root"

grep -q '^    tools/setup$' "$top/README.md" || fail "README.md's quick start says 'tools/setup'"
grep -q '^    tools/check$' "$top/README.md" || fail "README.md's quick start says 'tools/check'"
here=$(pwd)

# setup_was_fresh: build/setup.log is from a run of tools/setup on this
# commit, begun in a clean tree without build/, in a directory only its
# owner may enter, and the tree is as committed now.  In after: whether
# the tree was clean when tools/setup ended.
setup_was_fresh() {
	local head c clean mode
	head=$(git -C "$top" rev-parse HEAD) || return 1
	[ -f "$top/build/setup.log" ] || return 1
	read -r _ _ _ c _ clean _ mode _ after <"$top/build/setup.log" || return 1
	[ "$c" = "$head" ] && [ "$clean" = yes ] && [ $((0$mode & 077)) -eq 0 ] &&
		[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ]
}

if setup_was_fresh; then
	echo "# judging this checkout's own run of tools/setup (its build/setup.log)"
	sed 1d "$top/build/setup.log" >setup.out
	tree=$top
	check "the tree was clean after tools/setup" [ "$after" = yes ]
else
	# The clone holds what is committed: the quick start of the tree as it lands.
	mkdir -m 700 priv
	run clone.out clone.err git clone -q "$top" priv/wallprof
	check_num "git clone exits 0" "$rc" -eq 0
	[ "$rc" -eq 0 ] || { cat clone.err; finish; }
	tree=$here/priv/wallprof
	cd "$tree" || exit 99
	run "$here/setup.out" "$here/setup.err" timeout 600 tools/setup
	check_num "tools/setup exits 0" "$rc" -eq 0
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$here/setup.out" "$here/setup.err" | tail -n 20
	cd "$here" || exit 99
fi
check "tools/setup prints the example's report" grep -q '^PID/TID ' setup.out
check "the report has the example's spinner thread" grep -q ' spinner ' setup.out
check "no raw schedstat lines of the workload" no_match 'oncpu_ns' setup.out
check "the kernel's figures are said to be what to compare with" \
	grep -q "^The kernel's own count of each thread's time on a CPU" setup.out
check_num "and given for each of its six threads" \
	"$(grep -Ec '^  [a-z0-9]+ +tid [0-9]+ +[0-9.]+ ms on-CPU$' setup.out)" -eq 6
if [ "$tree" != "$top" ]; then
	check "the tree is clean after tools/setup" [ -z "$(git -C "$tree" status --porcelain)" ]
	git -C "$tree" status --porcelain | sed 's/^/# /'
fi

# tools/check's first step: its own out-of-tree builds.  Judging this
# checkout, tools/check has configured its own already (it runs this
# test): what would stop it, a tree configured in place, is checked.
if [ "$tree" = "$top" ]; then
	check "the tree is not configured in place (out-of-tree builds work)" \
		[ ! -f "$tree/config.status" ]
else
	mkdir b
	run conf.out conf.err sh -c "cd b && '$tree/configure' -q"
	check_num "an out-of-tree configure works after tools/setup" "$rc" -eq 0
	[ "$rc" -eq 0 ] || head -n 5 conf.err
fi
finish
