# arch.sh: DWARF unwinding maps registers for the architectures wallprof
# knows (x86_64) and refuses the others in one sentence instead of reading
# the wrong registers: record -g dwarf on another machine, and report of a
# file whose stacks were recorded on another machine than this one.  The
# machine is played with WALLPROF_TEST_MACHINE.  -g fp works everywhere.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test unwinding

[ "$(uname -m)" = x86_64 ] || skip "the tests of DWARF unwinding need an x86_64 host"

run out err env WALLPROF_TEST_MACHINE=aarch64 "$WALLPROF" record -q -o a.data -- true
check_num "record -g dwarf on aarch64: exits 1" "$rc" -eq 1
check_num "record -g dwarf on aarch64: one line" "$(nlines err)" -eq 1
check "record -g dwarf on aarch64: says so, and what to do" \
	grep -q -- "-g dwarf is not supported on aarch64 yet (only on x86_64); use -g fp" err
check "record -g dwarf on aarch64: no file" [ ! -e a.data ]

run out err env WALLPROF_TEST_MACHINE=aarch64 "$WALLPROF" record -q -g fp -o fp.data -- \
	"$WORKLOADS/spin" 0.3
check_num "record -g fp on aarch64: exits 0" "$rc" -eq 0
run rep.out rep.err "$WALLPROF" report -i fp.data
check_num "report of it: exits 0" "$rc" -eq 0
check "report of it: the spinner is there" grep -q ' spinner ' rep.out

# (The stack copies kept, --unwind=report: report is what unwinds them.)
run out err "$WALLPROF" record -q --unwind=report -o x.data -- "$WORKLOADS/spin" 0.3
check_num "record -g dwarf on x86_64: exits 0" "$rc" -eq 0
run f.out f.err env WALLPROF_TEST_MACHINE=aarch64 "$WALLPROF" report -i x.data --format folded \
	--mode on
check_num "report on aarch64 of x86_64 stacks: exits 0" "$rc" -eq 0
check_num "report on aarch64 of x86_64 stacks: one warning" "$(nlines f.err)" -eq 1
check "report on aarch64 of x86_64 stacks: says why user frames are left out" \
	grep -q "recorded on x86_64; wallprof unwinds DWARF stacks only on the machine kind" f.err
# The sampled address itself still names the leaf; its callers would need
# the registers.
check "report on aarch64 of x86_64 stacks: no unwound callers" \
	no_match 'spin_outer;spin_middle_\[i\];spin_leaf|(^|;)main;' f.out
grep -E 'spin_outer;spin_middle_\[i\];spin_leaf|(^|;)main;' f.out | sed 's/^/# unwound? /' | head -n 5
check "report on aarch64 of x86_64 stacks: the times are all there" grep -q '^spinner' f.out
run f.out f.err "$WALLPROF" report -i x.data --format folded --mode on
check "report on x86_64: the unwound user frames" \
	grep -q 'spin_outer;spin_middle_\[i\];spin_leaf' f.out

# Unwound live (--unwind=live), the file's stacks need no unwinder:
# reported on aarch64 they are whole, and no warning says user frames are
# left out (but of samples the unwinder fell behind on, written with their
# copies).
run out err "$WALLPROF" record -q --unwind=live -o l.data -- "$WORKLOADS/spin" 0.3
check_num "record --unwind=live on x86_64: exits 0" "$rc" -eq 0
run f.out f.err env WALLPROF_TEST_MACHINE=aarch64 "$WALLPROF" report -i l.data --format folded \
	--mode on
check_num "report on aarch64 of x86_64 stacks unwound live: exits 0" "$rc" -eq 0
check "report on aarch64 of x86_64 stacks unwound live: the unwound user frames" \
	grep -q 'spin_outer;spin_middle_\[i\];spin_leaf' f.out
raw=$(env WALLPROF_TEST_MACHINE=aarch64 "$WALLPROF" report -i l.data --format json 2>/dev/null |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["quality"]["live_raw_samples"])')
echo "# samples written with their stack copies: ${raw:-?}"
if [ "${raw:-1}" = 0 ]; then
	check "report on aarch64 of x86_64 stacks unwound live: no warning" [ ! -s f.err ]
	sed 's/^/# /' f.err
else
	check "report on aarch64 of x86_64 stacks unwound live, some raw: the warning" \
		grep -q "recorded on x86_64; wallprof unwinds DWARF stacks only on the machine kind" f.err
fi
finish
