#!/bin/sh
# Colour only when asked or on a terminal: --color=always colours, a pipe
# gets none by default, NO_COLOR turns auto off, --color=never wins.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
cd "$tmp" || exit 1
esc=$(printf '\033')
run rec.out rec.err "$WALLPROF" record -q -o F -- "$WORKLOADS/sleeper" 3 5
check_num "record a small file" "$rc" -eq 0
has_esc() { grep -q "$esc" "$1"; }
"$WALLPROF" report -i F > plain.txt
check "into a pipe: no colour by default" sh -c "! grep -q '$esc' plain.txt"
"$WALLPROF" report -i F --color=always > always.txt
check "--color=always: coloured" has_esc always.txt
"$WALLPROF" report -i F --color > bare.txt
check "--color alone means always" has_esc bare.txt
NO_COLOR=1 "$WALLPROF" report -i F --color=auto > nocolor.txt
check "NO_COLOR with auto: no colour" sh -c "! grep -q '$esc' nocolor.txt"
"$WALLPROF" report -i F --color=never > never.txt
check "--color=never: no colour" sh -c "! grep -q '$esc' never.txt"
check "coloured and plain reports say the same" \
	sh -c "sed 's/$esc\\[[0-9;]*m//g' always.txt | cmp -s - never.txt"
run bad.out bad.err "$WALLPROF" report -i F --color=sometimes
check_num "--color=sometimes is a usage error" "$rc" -eq 2
# Messages on stderr are coloured only with --color=always.
"$WALLPROF" record --color=always -o F -- true 2> msg.err
check "a coloured error message with --color=always" has_esc msg.err
"$WALLPROF" record -o F -- true 2> msg2.err
check "no colour in messages to a pipe" sh -c "! grep -q '$esc' msg2.err"
finish
