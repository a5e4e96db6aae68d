# cli.sh: help, version and usage errors of the command line.
# Usage errors must exit 2 with exactly one line on stderr and nothing on
# stdout, before anything is recorded.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

# wallprof --help
run out err "$WALLPROF" --help
check_num "--help exits 0" "$rc" -eq 0
check "--help mentions record" grep -q -w record out
check "--help mentions report" grep -q -w report out
check_num "--help prints nothing on stderr" "$(nlines err)" -eq 0

# wallprof --version: "wallprof <version>", the version configure knows.
run out err "$WALLPROF" --version
check_num "--version exits 0" "$rc" -eq 0
check_num "--version prints one line" "$(nlines out)" -eq 1
check "--version prints 'wallprof <version>'" grep -Eq '^wallprof [0-9]+(\.[0-9]+)+[^ ]*$' out
config_h=$(dirname "$WALLPROF")/config.h
if [ -f "$config_h" ]; then
	want=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$config_h")
	check "--version matches PACKAGE_VERSION '$want'" grep -qx "wallprof $want" out
fi

# wallprof help record: the man page, or the usage text as a fallback.
MANPAGER=cat PAGER=cat MANWIDTH=80
export MANPAGER PAGER MANWIDTH
run out err "$WALLPROF" help record
check_num "help record exits 0" "$rc" -eq 0
check "help record shows text about --call-graph" grep -q -e '--call-graph' out
# Without man(1) on the PATH: the built-in usage text.
run out err env PATH=/nonexistent "$WALLPROF" help record
check_num "help record without man(1) exits 0" "$rc" -eq 0
check "help record without man(1) shows the usage text" grep -q -e '--call-graph' out

# wallprof record --help lists every long option of the option table.
run out err "$WALLPROF" record --help
check_num "record --help exits 0" "$rc" -eq 0
opts=$(sed -n '/option record_options\[\]/,/^};/s/^[[:space:]]*{ "\([a-z0-9-]*\)",.*/\1/p' \
	"$TESTS_SRCDIR/../cmd/record.c" 2>/dev/null)
[ -n "$opts" ] || opts='freq event call-graph no-off-cpu pid tid all-cpus user duration
	output force compress mmap-pages quiet verbose help'
missing=''
for o in $opts; do
	grep -Eq -e "--$o([^a-z-]|\$)" out || missing="$missing --$o"
done
check "record --help lists every long option (missing:${missing:- none})" [ -z "$missing" ]

# Usage errors: exit 2, exactly one line on stderr, nothing on stdout, and
# no data file.
usage_error() {
	_what=$1; shift
	run out err "$@"
	check_num "$_what: exit status 2" "$rc" -eq 2
	check_num "$_what: one line on stderr" "$(nlines err)" -eq 1
	check_num "$_what: nothing on stdout" "$(nlines out)" -eq 0
	check "$_what: no wallprof.data written" [ ! -e wallprof.data ]
}
usage_error "record --bogus" "$WALLPROF" record --bogus -- true
usage_error "record -e bogus (unknown event)" "$WALLPROF" record -e bogus -o F -- true
usage_error "record -F (missing value)" "$WALLPROF" record -F
usage_error "record -F abc" "$WALLPROF" record -F abc -- true
usage_error "record -F 0" "$WALLPROF" record -F 0 -- true
usage_error "record -g foo" "$WALLPROF" record -g foo -- true
usage_error "record -g dwarf,100000" "$WALLPROF" record -g dwarf,100000 -- true
usage_error "record -m 3" "$WALLPROF" record -m 3 -- true
usage_error "record -d -1" "$WALLPROF" record -d -1 -- true
# On-CPU time estimated from samples needs samples that count time.
usage_error "record --no-off-cpu -e cycles" "$WALLPROF" record --no-off-cpu -e cycles -o F -- true
usage_error "record -p abc" "$WALLPROF" record -p abc
usage_error "record -p 1 -- true (two targets)" "$WALLPROF" record -p 1 -- true
usage_error "record (no target)" "$WALLPROF" record
usage_error "frob (unknown subcommand)" "$WALLPROF" frob
usage_error "help frob" "$WALLPROF" help frob
usage_error "report --bogus" "$WALLPROF" report --bogus
usage_error "report -i (missing value)" "$WALLPROF" report --dump -i
check "usage error names the bad option" grep -q -e "'-i'" err

run out err "$WALLPROF"
check_num "no arguments: exit status 2" "$rc" -eq 2
check "no arguments: usage on stderr" grep -q '^usage: wallprof' err

finish
