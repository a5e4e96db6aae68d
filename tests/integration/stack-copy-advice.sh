#!/bin/sh
# The quality line never advises a stack copy the kernel does not make.
# bigframe spins under three callers in turn, whose samples need about
# 300 bytes, 33 KiB and over 1 MiB of stack copy.  With the default copy
# the report says that some needed more than the kernel copies and what
# share of the cut stacks its largest copy (-g dwarf,65528) would at most
# keep whole: about the mid caller's share of the mid and far callers'
# time, as the workload measured it with its CPU clock.  With that copy,
# the report no longer suggests a larger one.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"

# stacks_line FILE: the "# stacks:" line of a report.
stacks_line() { grep '^# stacks:' "$1"; }

run wl.out rec.err "$WALLPROF" record -q -o A.data -- "$WORKLOADS/bigframe" 1.5
check_num "record -- bigframe exits 0" "$rc" -eq 0
"$WALLPROF" report -i A.data > a.text 2> a.err
line=$(stacks_line a.text)
echo "# $line"
check "says some stacks needed more than the kernel copies" \
	grep -q '^# stacks:.*some needed at least 1\.[0-9] MiB, more than the kernel copies' a.text
check "names the largest copy, -g dwarf,65528" grep -q 'its largest copy, -g dwarf,65528, would keep' a.text
stacks_line a.text > a.stacks
check "advises no copy above 65528 bytes" no_match 'dwarf,([7-9][0-9]{4}|6[6-9][0-9]{3}|655[3-9][0-9]|[0-9]{6,})' a.stacks
pct=$(sed -n 's/.*would keep at most \([0-9.]*\)% of them whole.*/\1/p' a.text)
mid=$(wl_field wl.out main mid_ns)
far=$(wl_field wl.out main far_ns)
want=$(awk -v m="${mid:-0}" -v f="${far:-0}" 'BEGIN { if (m + f > 0) printf "%.0f", 100 * m / (m + f) }')
got=$(awk -v p="${pct:-x}" 'BEGIN { printf "%.0f", p }')
echo "# at most ${pct:-?}% whole; the workload's mid share of mid and far: ${want:-?}%"
check_range "the share it would keep is the mid caller's share (+-15 points)" \
	"${got:-x}" "$(( ${want:-0} - 15 ))" "$(( ${want:-0} + 15 ))"

run wl2.out rec2.err "$WALLPROF" record -q -o B.data -g dwarf,65528 -- "$WORKLOADS/bigframe" 1.5
check_num "record -g dwarf,65528 -- bigframe exits 0" "$rc" -eq 0
"$WALLPROF" report -i B.data > b.text 2> b.err
echo "# $(stacks_line b.text)"
check "with the largest copy: says it is the most the kernel copies" \
	grep -q 'more than the kernel copies: 65528 bytes at most, as recorded' b.text
stacks_line b.text > b.stacks
check "with the largest copy: no advice of a larger -g dwarf" no_match 'dwarf,[0-9]|larger -g' b.stacks
cut=$(sed -n 's/^# stacks: [0-9]* unwound, \([0-9.]*\)% cut short.*/\1/p' b.text)
far2=$(wl_field wl2.out main far_ns)
all2=$(awk -v n="$(wl_field wl2.out main near_ns)" -v m="$(wl_field wl2.out main mid_ns)" \
	-v f="${far2:-0}" 'BEGIN { s = n + m + f; if (s > 0) printf "%.0f", 100 * f / s }')
check_range "with the largest copy only the far caller's stacks are cut (its share, +-15 points)" \
	"$(awk -v p="${cut:-x}" 'BEGIN { printf "%.0f", p }')" "$(( ${all2:-0} - 15 ))" "$(( ${all2:-0} + 15 ))"
finish
