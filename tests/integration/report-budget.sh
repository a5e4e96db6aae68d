# report-budget.sh: a stack of the report holds at most 512 frames, kernel
# and user together.  A user stack cut to fit the room its sample's kernel
# frames left ends in [truncated] at the root side, whether it was unwound
# for that sample or found already unwound for another sample with more or
# fewer kernel frames.  The deep-inline workload's user stacks are about
# 510 frames (256 levels, inlined frames included) and are met under kernel
# stacks of several depths.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

run wl.out rec.err "$WALLPROF" record -q -o F -- "$WORKLOADS/deep-inline" 300 1
check_num "record exits 0" "$rc" -eq 0
run f.out f.err "$WALLPROF" report -i F --format folded
check_num "report exits 0" "$rc" -eq 0

# One line per stack of the recursion: its frames (the thread name and an
# [off-cpu:...] leaf aside), whether [truncated] is at the root side, and
# whether it has kernel frames.
awk '$1 ~ /;dl_recurse;/ { n = split($1, f, ";"); k = n - 1
	if (f[n] ~ /^\[off-cpu:/) k--
	print k, (f[2] == "[truncated]"), ($1 ~ /_\[k\](;|$)/) }' f.out >deep
check_num "stacks of the recursion" "$(nlines deep)" -gt 0
check_num "stacks of more than 512 frames" "$(awk '$1 > 512 { n++ } END { print n + 0 }' deep)" -eq 0
# (A stack taken on the way down, preempted mid-recursion on a busy
# machine, is shallower and whole: only those at the limit count.)
check_num "stacks at the frame limit not ending in [truncated]" \
	"$(awk '!$2 && $1 >= 500 { n++ } END { print n + 0 }' deep)" -eq 0
# Else the workload did not reach the budget and the test proves nothing.
check_num "stacks with kernel frames that fill all 512 frames" \
	"$(awk '$3 && $1 == 512 { n++ } END { print n + 0 }' deep)" -gt 0
[ "$failures" -eq 0 ] || head -n 20 deep
finish
