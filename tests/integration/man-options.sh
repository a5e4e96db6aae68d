#!/bin/sh
# Every long option that the command-line parsers accept is documented in
# its man page's OPTIONS section, and every option documented there exists.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
top=$TESTS_SRCDIR/..

# code_options FILE TABLE: the long names in a getopt_long option table.
code_options() {
	sed -n "/^static const struct option $2\\[\\] = {/,/^};/p" "$1" |
		sed -n 's/^[[:space:]]*{ "\([a-z][a-z0-9-]*\)",.*/\1/p' | sort -u
}

# man_options PAGE: the \-\-names in the page's OPTIONS section.
man_options() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | sed 's/\\-/-/g; s/\\f[BIRP]//g' |
		grep -o -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u
}

compare() {
	_what=$1 _code=$2 _man=$3
	code_options "$_code" "$4" > code.txt
	man_options "$_man" > man.txt
	check_num "$_what: the parser has options" "$(wc -l < code.txt)" -gt 3
	for o in $(comm -23 code.txt man.txt); do
		fail "$_what: --$o is accepted but not documented in $(basename "$_man")"
	done
	for o in $(comm -13 code.txt man.txt); do
		fail "$_what: --$o is documented in $(basename "$_man") but not accepted"
	done
	check "$_what: parser and man page agree" cmp -s code.txt man.txt
}

cd "$tmp" || exit 1
compare record "$top/cmd/record.c" "$top/man/wallprof-record.1" record_options
compare report "$top/cmd/report.c" "$top/man/wallprof-report.1" report_options

# The top-level options.
for o in help version; do
	check "wallprof.1 documents --$o" grep -q -- "\\\\-\\\\-$o" "$top/man/wallprof.1"
done
finish
