# system-wide-beside.sh: record -a beside another recorder of the same
# threads.  From Linux 6.1 on, the kernel hands one sample in turn to every
# software event that a context switch fires, and an event that comes after
# another keeps what that one filled in: its id, time and stacks.  An
# attached recording's context-switches events come first on the CPU's
# list (a task's events are put back at its head at every switch-in), so
# an -a recording's own context-switches event got their ids: a storm of
# samples of no event of the file, which report counted as on-CPU samples
# at the switch-out address (schedule < read at the top of a blocked
# thread's on-CPU stacks).  -a now takes its switch-out stacks from the
# sched_switch tracepoint, whose events each get their own sample; and a
# sample whose event the file does not describe is never on-CPU time,
# only a count in the quality lines (checked on a crafted file).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

# --- a file with samples of an event it does not describe -------------------
# One thread: 40 on-CPU samples in craft_work, 30 of an unknown event id at
# a kernel address (craft_schedule), then blocked; the CPU time is the
# switch records'.
python3 - "$TESTS_SRCDIR/fuzz" <<'EOF' || { fail "the crafted file was written"; finish; }
import struct, sys
sys.path.insert(0, sys.argv[1])
import craft as c

ms = 10**6
t = c.START
recs = [c.trailed(c.RECORD_COMM, c.MISC_COMM_EXEC, struct.pack("<II", c.PID, c.PID) + b"craft\0",
                  c.PID, t + ms, 0)]
for i in range(40):
    recs.append(c.sample(c.PID, t + 2 * ms + i * 100000, c.ONCPU_ID,
                         [c.CONTEXT_KERNEL, 0xffffffff81000010]))
    if i < 30:
        recs.append(c.sample(c.PID, t + 2 * ms + i * 100000 + 50000, 77,
                             [c.CONTEXT_KERNEL, 0xffffffff81000110], c.MISC_KERNEL))
recs += [c.trailed(c.RECORD_SWITCH, c.MISC_SWITCH_OUT, b"", c.PID, t + 7 * ms, c.SWITCH_ID),
         c.rec(c.RECORD_ROUND, 0, b"")]
ksyms = b"ffffffff81000000 craft_work\nffffffff81000100 craft_schedule\n"
data = c.header(c.meta()) + c.block(c.BLOCK_RECORDS, b"".join(recs)) + \
    c.block(c.BLOCK_KSYMS, ksyms) + c.summary()
open("unknown.data", "wb").write(data)
EOF
run u.json u.err "$WALLPROF" report -i unknown.data --format json --mode on
check_num "crafted: report exits 0" "$rc" -eq 0
unknown=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["quality"]["unknown_event_samples"])' u.json 2>/dev/null)
check_num "crafted: the 30 samples of an unknown event are counted apart" "${unknown:-x}" -eq 30
python3 "$J" threads u.json >u.threads
check_num "crafted: the thread's samples are its 40 on-CPU ones" \
	"$(awk -F '\t' '$3 == "craft" { print $11 }' u.threads)" -eq 40
python3 "$J" stacks u.json >u.stacks
check "crafted: the unknown event's stack is no on-CPU stack" no_match 'craft_schedule' u.stacks
check "crafted: the on-CPU stack is craft_work's" grep -q 'craft_work_\[k\]' u.stacks
run u.txt u.err "$WALLPROF" report -i unknown.data
check "crafted: the quality line counts them" \
	grep -q "^# quality: .*, 30 samples of events not the recording's left out" u.txt

# --- record -a beside an attached recording of a switch storm ---------------
"$WALLPROF" record -q -o probe.data -a -d 0.1 2>probe.err ||
	skip "-a is not allowed here: $(head -n 1 probe.err)"
# Two tracers of the scheduler at once: wake-up tests wait for this one.
tracing_alone
"$WORKLOADS/pingpong" 8 >pp.out 2>&1 &
pp=$!
bg_pids="$bg_pids $pp"
"$WALLPROF" record -q -o att.data -p "$pp" -d 6 >att.out 2>att.err &
att=$!
bg_pids="$bg_pids $att"
# Its events are open once its file has its header.
has_header() {
	for f in .att.data.wallprof-*; do [ -s "$f" ] && return 0; done
	return 1
}
wait_until 100 has_header || { fail "the attached recording started"; cat att.err; finish; }
sleep 0.5
# (Its samples are counted in --dump's raw SAMPLE lines: --unwind=report.
# Unwound live, they were raw only when the unwinder fell behind.)
run all.out all.err "$WALLPROF" record --unwind=report -o all.data -a -d 2
check_num "-a: record exits 0" "$rc" -eq 0
wait "$att"
check_num "the attached recording exits 0" $? -eq 0
wait "$pp"
dump all.data all.d
check_num "-a: report --dump exits 0" $? -eq 0
ponged=$(awk '$2 == "SAMPLE" && $3 ~ /^'"$pp"'\// { n++ } END { print n + 0 }' all.d)
check_num "-a: samples of the storm's threads" "$ponged" -gt 100
check_num "-a: no sample of an event the file does not describe" \
	"$(awk '$2 == "SAMPLE" && $6 == "?" { n++ } END { print n + 0 }' all.d)" -eq 0
check "-a: record left no sample out" no_match 'not the recording' all.err
run all.json all.err "$WALLPROF" report -i all.data --format json --mode on --top 50
check_num "-a: report exits 0" "$rc" -eq 0
unknown=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["quality"]["unknown_event_samples"])' all.json 2>/dev/null)
check_num "-a: report counts no unknown sample" "${unknown:-x}" -eq 0
python3 "$J" stacks all.json >all.stacks
# A ping or pong on the CPU is writing or reading: the switch-out address
# (schedule, its innermost kernel frame at a switch-out) is a few percent
# at most of its on-CPU stacks; with the stray samples it was most.
sched=$(awk -F '\t' -v p="$pp" '$1 == p && $4 == "on-cpu" && $7 ~ /^(__)?schedule_\[k\]/ {
	s += $5 } END { printf "%.0f\n", s }' all.stacks)
on=$(awk -F '\t' -v p="$pp" '$1 == p && $4 == "on-cpu" { s += $5 } END { printf "%.0f\n", s }' \
	all.stacks)
check_num "-a: the storm has on-CPU stacks" "$on" -gt 0
check_num "-a: schedule tops at most 10% of the storm's on-CPU time ($sched of $on ns)" \
	$((sched * 10)) -le "$on"
dump att.data att.d
check_num "attached: no sample of an event the file does not describe" \
	"$(awk '$2 == "SAMPLE" && $6 == "?" { n++ } END { print n + 0 }' att.d)" -eq 0
finish
