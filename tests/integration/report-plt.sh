# report-plt.sh: a frame in a PLT stub is named as binutils names the
# stub, name@plt, not file+offset (nor _init, as perf 6.1 names it).  The
# plt workload spends much of its time in its strnlen@plt stub;
# built PIE and not, and with IBT's .plt.sec.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v objdump >/dev/null 2>&1 || skip "no objdump (binutils)"

for build in plt plt-nopie plt-ibt; do
	wl="$WORKLOADS/$build"
	stub=$(objdump -d -j .plt -j .plt.sec -j .plt.got "$wl" |
		sed -n 's/^0*\([0-9a-f]*\) <strnlen@plt>:$/\1/p')
	check "$build: objdump names a strnlen@plt stub (at 0x$stub)" test -n "$stub"
	run rec.out rec.err "$WALLPROF" record -q -f -o "$build.data" -- "$wl" 1
	check_num "$build: record exits 0" "$rc" -eq 0
	# (On-CPU time only: a loaded machine adds waits, not stub time.)
	run f.out f.err "$WALLPROF" report -i "$build.data" --no-cache --format folded --mode on
	check_num "$build: report exits 0" "$rc" -eq 0
	total=$(awk '{ t += $NF } END { print t + 0 }' f.out)
	# The innermost user frame: a loaded machine adds kernel frames of
	# preemption on top of it (finish_task_switch after a switch-in).
	in_stub=$(awk '{ s = $1; sub(/;[^;]*_\[k\].*$/, "", s) }
		s ~ /;plt_loop[^;]*;strnlen@plt$/ { t += $NF } END { print t + 0 }' f.out)
	# (Some 25% of the samples on a quiet machine; beside busy loops the
	# timer's interrupts land elsewhere, down to 1% seen: what is checked
	# is the stub's name.)
	echo "# $build: strnlen@plt is the innermost user frame in $in_stub of $total on-CPU"
	check_num "$build: the stub's frame is strnlen@plt, under plt_loop" "$in_stub" -gt 0
	check "$build: no frame of the program shows as an offset" \
		no_match "(^|;)$build\\+0x" f.out
	check "$build: nor as _init" no_match ";_init( |;)" f.out
done
# On-CPU only: on a loaded machine the preempted stacks can outrank it.
run t.out t.err "$WALLPROF" report -i plt.data --no-cache --mode on --top 5
check "the text report names the stub" grep -q '^ *strnlen@plt$' t.out
# A second report reads the names from the symbol cache.
mkdir cache
XDG_CACHE_HOME=$tmp/cache "$WALLPROF" report -i plt.data --format folded >c1.out 2>&1
XDG_CACHE_HOME=$tmp/cache "$WALLPROF" report -i plt.data --format folded >c2.out 2>&1
check "a report from the symbol cache names it too" grep -q ';strnlen@plt ' c2.out
finish
