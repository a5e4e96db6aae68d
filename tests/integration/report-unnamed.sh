# report-unnamed.sh: the quality footer counts every frame without a
# function name as unnamed, and names the stripped library that holds
# them and what would name it.  xz spends its time in Debian's stripped
# liblzma.so.5, whose internal functions have no symbols.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v xz >/dev/null 2>&1 || skip "no xz"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
lib=$(ldd "$(command -v xz)" | awk '$1 ~ /^liblzma\.so/ { print $3 }')
[ -n "$lib" ] || skip "xz is not linked with a shared liblzma"
lib=$(readlink -f "$lib")
# A library with debug information would name its frames: nothing to show.
if readelf -S "$lib" 2>/dev/null | grep -q '\.symtab'; then
	skip "$lib has a symbol table here"
fi

# Incompressible text, so that xz works in liblzma for some 2 s of CPU
# (thousands of samples: the shares below need no more).
head -c 400000 /dev/urandom | od -A n -t x1 >in.txt
run rec.out rec.err "$WALLPROF" record -q -o x.data -- xz -T2 -k -6 in.txt
check_num "record xz exits 0" "$rc" -eq 0
run t.out t.err "$WALLPROF" report -i x.data --top 1
check_num "report exits 0" "$rc" -eq 0
pct=$(sed -n 's/^# frames: \([0-9]*\)\.[0-9]*% unnamed.*/\1/p' t.out)
check_num "the footer counts liblzma's frames as unnamed, percent" "${pct:-0}" -ge 30
grep '^#   ' t.out | sed 's/^/# /'
check "a footer line names $lib as having no symbols" \
	grep -Eq "^#   [0-9.]+% in $lib: no symbols there" t.out
share=$(sed -n "s|^#   [0-9.]*% in $lib: no symbols there (stacks of [0-9.]*[mun]*s, \([0-9]*\)\.[0-9]% of the time).*|\1|p" t.out)
check_num "and the share of the time its stacks cover, percent" "${share:-0}" -ge 50
id=$(readelf -n "$lib" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
if [ -n "$id" ]; then
	debug=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	check "and the debug file that would name them ($debug)" \
		grep -q "^#   [0-9.]*% in $lib: .*[:,] [a-z ]*$debug\$" t.out
fi
pkg=$(dpkg-query -S "$lib" 2>/dev/null | sed -n '1s/:.*//p')
[ -z "$pkg" ] && pkg=$(dpkg-query -S "${lib#/usr}" 2>/dev/null | sed -n '1s/:.*//p')
if [ -n "$pkg" ]; then
	check "and says which debug package would name them ($pkg-dbgsym)" \
		grep -q "^#   [0-9.]*% in $lib: .*(Debian: $pkg-dbgsym" t.out
fi
run j.out j.err "$WALLPROF" report -i x.data --format json --top 1
check_num "report --format json exits 0" "$rc" -eq 0
first=$(python3 -c 'import json, sys
q = json.load(open(sys.argv[1]))["quality"]
f = q["unnamed_files"][0]
print(f["file"], f["reason"], f["package"], int(100 * f["frames"] / q["frames"]),
      f["stack_ns"] > 0, f["debug_file"])' j.out)
echo "# JSON: $first"
check "JSON: the first unnamed place is liblzma, with no symbols" \
	sh -c 'case "$1" in "$2 no-symbols "*) exit 0;; esac; exit 1' - "$first" "$lib"
[ -n "$id" ] && check "JSON: with the time of its stacks and its debug file" \
	sh -c 'case "$1" in *" True $2") exit 0;; esac; exit 1' - "$first" "$debug"
[ -n "$pkg" ] && check "JSON: with its package" \
	sh -c 'case "$1" in "$2 no-symbols $3 "*) exit 0;; esac; exit 1' - "$first" "$lib" "$pkg"
finish
