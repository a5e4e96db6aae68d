#!/bin/sh
# window-anchors.sh: a --time window's on-CPU times against the kernel's,
# beside two busy loops.  The client/server workload (tens of thousands
# of short slices a second, where switch records alone read tens of
# percent off) notes each thread's own CPU time every millisecond; the
# kernel's figure at a window's ends lies between two notes.  For windows
# at whole seconds of the recording, where record read the kernel's
# figures, and for one whose ends lie between them, every thread's true
# on-CPU time in the window must lie within wallprof's figure give or
# take the bound it states; at whole seconds that bound must be tight
# (under a tenth of the window), where it is wide between figures.
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

for i in 1 2; do
	sh -c 'while :; do :; done' &
	bg_pids="$bg_pids $!"
done

val() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print -1 }' "$1"; }

run W.out W.err env WL_CPULOG_MS=1 "$WALLPROF" record -q -o W.data -- \
	"$WORKLOADS/clients" 3.5 2 10
check_num "record exits 0" "$rc" -eq 0
check "the workload noted its threads' CPU time" grep -q '^cpulog ' W.out

for w in 1,2 1,3 0.6,2.35; do
	run "W.$w.json" "W.$w.err" "$WALLPROF" report -i W.data --format json --time "$w"
	check_num "report --time $w exits 0" "$rc" -eq 0
	python3 "$TESTS_SRCDIR/integration/window-anchors.py" W.out "W.$w.json" >"W.$w.v"
	grep '^#' "W.$w.v"
	check_num "--time $w: the clients and servers seen" "$(val "W.$w.v" seen)" -eq 4
	check_num "--time $w: each thread's true on-CPU time within wallprof's bound" \
		"$(val "W.$w.v" bad)" -eq 0
	case $w in
	*.*) ;;
	*) check_num "--time $w (whole seconds): every bound under a tenth of the window" \
		"$(val "W.$w.v" loose)" -eq 0 ;;
	esac
done
finish
