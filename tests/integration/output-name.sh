#!/bin/sh
# output-name.sh: an output name that names no file (empty, or ending in
# '/') is refused before anything runs: one error line, status 1, the
# command never launched, and no temporary file left under a name nobody
# asked for (an empty -o made "..wallprof-XXXXXX").
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

mkdir d
# refused WHAT ARGS...: record ARGS -- a command that leaves a mark, refused.
refused() {
	_what=$1; shift
	rm -f ran
	run out err "$WALLPROF" record "$@" -- sh -c 'echo ran >ran'
	check_num "$_what: exit status 1" "$rc" -eq 1
	check_num "$_what: one line on stderr" "$(nlines err)" -eq 1
	check "$_what: it is an error that says what is wrong" \
		grep -Eq "^wallprof: error: .*(name is empty|ends in '/')" err
	sed 's/^/# /' err
	check "$_what: the command did not run" [ ! -e ran ]
	check "$_what: no temporary file here" no_file 'wallprof-'
	check "$_what: no temporary file in d" no_file 'wallprof-' d
	check "$_what: no numbered file" no_file '^\.?0001'
}
refused "-o ''" -o ''
refused "-o d/" -o d/
refused "-o missing/" -o missing/
refused "--rotate 1 -o ''" --rotate 1 -o ''
refused "--rotate 1 -o d/" --rotate 1 -o d/
refused "--flight-recorder 2 -o ''" --flight-recorder 2 -o ''

# convert: the same names are refused.
# (convert takes a file of stack copies: --unwind=report.)
run out err "$WALLPROF" record -q --unwind=report -o F -- true
check_num "a recording to convert" "$rc" -eq 0
run out err "$WALLPROF" convert -i F -o ''
check_num "convert -o '': exit status 1" "$rc" -eq 1
check "convert -o '': it says the name is empty" grep -q 'name is empty' err
check "convert -o '': no temporary file" no_file 'wallprof-'

# A name that does name a file still works.
run out err "$WALLPROF" record -q -o d/x.data -- true
check_num "-o d/x.data: exit status 0" "$rc" -eq 0
check "-o d/x.data: the file is there" [ -f d/x.data ]
finish
