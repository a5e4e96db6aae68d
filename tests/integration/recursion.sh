# recursion.sh: a direct recursion (the same return address at every level,
# no frame pointers) is unwound level by level through DWARF CFI: every
# level shows, the stack reaches main, and a recursion deeper than the
# stack copy ends in [truncated] rather than looking complete.  A copy the
# kernel cut short at a page it could not read ends in [stack unreadable]
# instead: no larger copy would have helped.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test unwinding

# heaviest FOLDED: the on-CPU line with the largest weight.
heaviest() { sort -t ' ' -k 2 -n "$1" | tail -n 1; }
# levels LINE: how many rc_recurse frames LINE has.
levels() { printf '%s\n' "$1" | tr ';' '\n' | grep -c '^rc_recurse$'; }

for depth in 4 10 100; do
	run wl.out rec.err "$WALLPROF" record -q -f -o r.data -- "$WORKLOADS/recurse" "$depth" 0.5
	check_num "depth $depth: record exits 0" "$rc" -eq 0
	run f.out f.err "$WALLPROF" report -i r.data --format folded --mode on --no-kernel
	line=$(heaviest f.out)
	check_num "depth $depth: every level of the recursion is a frame" "$(levels "$line")" -eq "$depth"
	check "depth $depth: main -> rc_driver -> rc_recurse ... -> rc_leaf, in order" \
		sh -c 'printf "%s\n" "$1" | grep -Eq ";main;rc_driver;(rc_recurse;){$2}rc_leaf [0-9]+$"' \
		- "$line" "$depth"
	check "depth $depth: not marked truncated" no_match '\[truncated\]' f.out
done

# Deeper than the 256-frame limit: cut there, and saying so.
run wl.out rec.err "$WALLPROF" record -q -f -o r.data -- "$WORKLOADS/recurse" 2000 0.5
check_num "depth 2000: record exits 0" "$rc" -eq 0
run f.out f.err "$WALLPROF" report -i r.data --format folded --mode on --no-kernel
line=$(heaviest f.out)
check "depth 2000: the heaviest stack ends in [truncated] at the root side" \
	sh -c 'printf "%s\n" "$1" | grep -Eq "^recurse;\[truncated\];(rc_recurse;)+rc_leaf [0-9]+$"' - "$line"
check_num "depth 2000: unwound up to the frame limit" "$(levels "$line")" -eq 255

# Deeper than a 1 KiB stack copy holds: cut where the copy ends.
run wl.out rec.err "$WALLPROF" record -q -f -g dwarf,1024 -o r.data -- "$WORKLOADS/recurse" 2000 0.5
check_num "1 KiB copy: record exits 0" "$rc" -eq 0
run f.out f.err "$WALLPROF" report -i r.data --format folded --mode on --no-kernel
line=$(heaviest f.out)
check "1 KiB copy: the heaviest stack ends in [truncated] at the root side" \
	sh -c 'printf "%s\n" "$1" | grep -Eq "^recurse;\[truncated\];(rc_recurse;)+rc_leaf [0-9]+$"' - "$line"
n=$(levels "$line")
check_range "1 KiB copy: the levels that fit in the copy were unwound" "$n" 20 254

# A frame of three pages, given back and touched again: samples in those
# page faults have copies that stop at the page being faulted in.  The
# copy asked for holds the whole stack, so nothing is [truncated].
run wl.out rec.err "$WALLPROF" record -q -f -g dwarf,32768 -o r.data -- "$WORKLOADS/stackfault" 0.5
check_num "stack faults: record exits 0" "$rc" -eq 0
run f.out f.err "$WALLPROF" report -i r.data --format folded --mode on
check "stack faults: no stack is marked [truncated]" no_match '\[truncated\]' f.out
check "stack faults: a stack in a fault on the stack ends in [stack unreadable]" \
	grep -Eq '^stackfault;\[stack unreadable\];sf_frame;sf_touch;.*asm_exc_page_fault_\[k\]' f.out
check "stack faults: [stack unreadable] is never anywhere else" \
	no_match '^[^;]*;.+;\[stack unreadable\](;| )' f.out
run t.out t.err "$WALLPROF" report -i r.data
line=$(grep '^# stacks:' t.out)
echo "# $line"
check "stack faults: the footer says the kernel could not read some stacks" \
	sh -c 'printf "%s\n" "$1" | grep -Eq "[0-9.]+% where the kernel could not read the stack"' - "$line"
check "stack faults: and does not advise a larger copy" \
	sh -c '! printf "%s\n" "$1" | grep -q "dwarf,"' - "$line"
finish
