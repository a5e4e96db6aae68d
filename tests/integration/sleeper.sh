# sleeper.sh: the off-CPU records of a thread that sleeps a known number of
# times.  As root, every switch-out of a profiled thread gives one
# SWITCH_OUT record (and a SWITCH_IN when it runs again) and one
# switch-out sample with the off-CPU stack.  Those samples are counted in
# --dump's raw SAMPLE lines: the recordings keep raw stacks
# (--unwind=report).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test accuracy

SLEEPS=20
# Besides its sleeps the thread may block a few times while it starts
# (page faults on I/O, locks in the thread library) and when it reports.
EXTRA=5

run wl.out rec.err "$WALLPROF" record --unwind=report -o F -- "$WORKLOADS/sleeper" $SLEEPS 10
check_num "record exits with the command's status" "$rc" -eq 0
tid=$(wl_field wl.out sleeper tid)
check_num "the workload slept $SLEEPS times" "$(wl_field wl.out sleeper sleeps)" -eq $SLEEPS
[ -n "$tid" ] || { fail "the workload reported its sleeper thread's tid"; cat wl.out rec.err; finish; }
dump F d
check_num "report --dump exits 0" $? -eq 0
check_num "report --dump prints nothing on stderr" "$(nlines d.err)" -eq 0

outs=$(count SWITCH_OUT d "$tid")
sw=$(switch_event d)
ins=$(count SWITCH_IN d "$tid")
blocked=$(awk -v tid="$tid" '$2 == "SWITCH_OUT" && $3 ~ ("/" tid "$") && $6 == "blocked" { n++ }
	END { print n + 0 }' d)
check_range "SWITCH_OUT records of the sleeper thread $tid" "$outs" $SLEEPS $((SLEEPS + EXTRA))
check_range "SWITCH_IN records match SWITCH_OUT (+-1)" "$ins" $((outs - 1)) $((outs + 1))
check_num "every sleep is a 'blocked' switch-out" "$blocked" -ge $SLEEPS
check_num "one switch-out stack sample ($sw) per SWITCH_OUT" "$(switch_samples d "$tid")" -eq "$outs"
nostack=$(awk -v tid="$tid" -v e="$sw" '$2 == "SAMPLE" && $6 == e && $3 ~ ("/" tid "$") &&
	!(/ callchain [1-9]/ && / stack [0-9]+\/[1-9]/) { n++ } END { print n + 0 }' d)
check_num "off-CPU samples carry a kernel callchain and a user stack" "$nostack" -eq 0
check "the header flags switches and off-cpu-stacks" \
	grep -Eq '^# flags:.* switches( .*)? off-cpu-stacks( |$)' d
check "nothing was lost" grep -q '^# lost: 0 records, 0 samples' d
check "the recording stopped when the target exited" grep -q ', stop target-exited, exit status 0$' d
check "the thread's name was recorded" grep -Eq "^[0-9.]+ COMM [0-9]+/$tid sleeper( |$)" d

# --no-off-cpu: no switch records, no switch-out stacks.
run wl.out rec.err "$WALLPROF" record --unwind=report --no-off-cpu -o G -- "$WORKLOADS/sleeper" $SLEEPS 10
check_num "--no-off-cpu: record exits 0" "$rc" -eq 0
dump G d
check_num "--no-off-cpu: report --dump exits 0" $? -eq 0
check_num "--no-off-cpu: no SWITCH_OUT records" "$(count SWITCH_OUT d)" -eq 0
check_num "--no-off-cpu: no SWITCH_IN records" "$(count SWITCH_IN d)" -eq 0
check_num "--no-off-cpu: no switch-out stack samples" "$(switch_samples d)" -eq 0
check "--no-off-cpu: the header has no switches flag" no_match '^# flags:.* switches' d
check "--no-off-cpu: nothing was lost" grep -q '^# lost: 0 records, 0 samples' d

finish
