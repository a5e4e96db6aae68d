#!/bin/sh
# Every option that a subcommand's --help lists (made from its option
# table) is documented in its man page's OPTIONS section, and every option
# documented there exists; the completion script offers exactly those
# options; and every word of report's --format, --mode, --sort, --by and
# --stacks and record's --event and --wakeups (from the tables that, e.g.,
# `wallprof report --format help` prints) is documented under its option
# and offered by the completion.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
top=$TESTS_SRCDIR/..
completion=$top/completions/wallprof

# help_options CMD: the long names that `wallprof CMD --help` lists.
help_options() {
	"$WALLPROF" "$1" --help |
		sed -n 's/^ *\(-[a-zA-Z], \)\{0,1\}--\([a-z][a-z0-9-]*\).*/\2/p' | sort -u
}

# man_options PAGE: the \-\-names in the page's OPTIONS section.
man_options() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | sed 's/\\-/-/g; s/\\f[BIRP]//g' |
		grep -o -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u
}

# man_words PAGE OPTION: the words set in bold in the paragraph of --OPTION.
man_words() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | awk -v o="$2" '
		/^\.B[IR]? +\\-/ {
			s = "\\-\\-" o
			i = index($0, s)
			inside = i > 0 && substr($0, i + length(s), 1) ~ /^([ "=]|)$/
			next
		}
		inside && /^\.BR? / { gsub(/\\-/, "-", $2); print $2 }'
}

# complete WORDS...: what the completion script offers for the command
# line WORDS (the last one being completed), one a line; bash-completion's
# own functions are stood in for.
complete() {
	bash -c '
		_init_completion() {
			words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
			cur=${words[cword]} prev=${words[cword - 1]}
		}
		_filedir() { :; }
		_pids() { :; }
		_command_offset() { :; }
		complete() { :; }
		. "$0" || exit 1
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
		_wallprof
		printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$WALLPROF" "$@" | sort -u
}

compare() {
	_cmd=$1 _man=$top/man/wallprof-$1.1
	help_options "$_cmd" > code.txt
	man_options "$_man" > man.txt
	check_num "$_cmd: --help lists options" "$(wc -l < code.txt)" -gt 3
	for o in $(comm -23 code.txt man.txt); do
		fail "$_cmd: --$o is accepted but not documented in $(basename "$_man")"
	done
	for o in $(comm -13 code.txt man.txt); do
		fail "$_cmd: --$o is documented in $(basename "$_man") but not accepted"
	done
	check "$_cmd: --help and man page agree" cmp -s code.txt man.txt
	if [ -n "$have_bash" ]; then
		complete "$_cmd" -- | sed 's/^--//' > offered.txt
		check "$_cmd: the completion offers the options of --help" cmp -s code.txt offered.txt
	fi
}

have_bash=
if command -v bash >/dev/null 2>&1; then
	have_bash=yes
else
	skip_check "the completion script" "no bash"
fi

compare record
compare report
compare convert
compare export
compare top

# The words of the options that take one of a set, from their tables.
for cw in report:format report:mode report:sort report:by report:stacks record:event record:wakeups; do
	c=${cw%%:*} o=${cw#*:}
	"$WALLPROF" "$c" --$o help > words.txt
	check_num "$c --$o help exits 0" "$?" -eq 0
	cut -f1 words.txt | sort -u > code.txt
	check_num "$c --$o help lists words" "$(wc -l < code.txt)" -gt 2
	man_words "$top/man/wallprof-$c.1" "$o" | sort -u > man.txt
	for w in $(comm -23 code.txt man.txt); do
		fail "$c --$o $w is accepted but not documented under --$o in wallprof-$c.1"
	done
	check "every word of $c --$o is documented under it" [ -z "$(comm -23 code.txt man.txt)" ]
	if [ -n "$have_bash" ]; then
		complete "$c" --$o '' > offered.txt
		check "the completion offers the words of $c --$o" cmp -s code.txt offered.txt
	fi
done

# The top-level options, and the commands that the completion offers.
for o in help version; do
	check "wallprof.1 documents --$o" grep -q -- "\\\\-\\\\-$o" "$top/man/wallprof.1"
done
if [ -n "$have_bash" ]; then
	complete r > offered.txt
	printf 'record\nreport\n' > want.txt
	check "the completion offers the commands" cmp -s want.txt offered.txt
	complete c > offered.txt
	printf 'convert\n' > want.txt
	check "the completion offers convert" cmp -s want.txt offered.txt
fi
finish
