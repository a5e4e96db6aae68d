#!/bin/sh
# The man pages format without a single warning (groff -ww, mandoc -Tlint).
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
top=$TESTS_SRCDIR/..
command -v groff >/dev/null 2>&1 || skip "groff is not installed (Debian package groff)"
cd "$tmp" || exit 1
for page in "$top"/man/*.[1-8]; do
	name=$(basename "$page")
	groff -man -Tutf8 -ww -z "$page" 2> groff.err
	check "$name: groff -man -ww reports nothing" [ ! -s groff.err ]
	[ -s groff.err ] && cat groff.err
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -Tlint "$page" > mandoc.err 2>&1
		check "$name: mandoc -Tlint reports nothing" [ ! -s mandoc.err ]
		[ -s mandoc.err ] && cat mandoc.err
	fi
	# Rendered for an 80-column terminal, no line is wider.
	MANWIDTH=80 man -l "$page" 2>/dev/null | col -b > rendered
	check_num "$name: renders to text" "$(wc -l < rendered)" -gt 10
	check_num "$name: no line wider than 80 columns" \
		"$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' rendered)" -le 80
done
finish
