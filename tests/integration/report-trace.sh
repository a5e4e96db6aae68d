# report-trace.sh: `report --format trace` on a recording of the wallclock
# workload, read back by report-trace.py against `--format json` with the
# same options: valid trace-event JSON with its documented fields, a named
# track for each thread shown and none other, slices of a thread that
# never overlap, and that add up, kind by kind, to the thread's times in
# the JSON report, to the nanosecond; under --time, the thread filters,
# --mode, --min-block and --waker-comm; the waits of a storm whose
# wake-ups the gate left unrecorded.  Then the slices' names and
# arguments for the workload's known stacks, and errors.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the trace back"
T="$TESTS_SRCDIR/integration/report-trace.py"

record_wallclock 0.7
pid=$(wl_field wl.out spinner pid)
reader=$(wl_field wl.out reader tid)
locker=$(wl_field wl.out locker tid)

# both NAME ARGS...: json and trace reports with ARGS exit 0 and say
# nothing on stderr; NAME.json, NAME.trace.
both() {
	_n=$1; shift
	run "$_n.json" "$_n.json.err" "$WALLPROF" report -i F --format json "$@"
	_rj=$rc
	run "$_n.trace" "$_n.trace.err" "$WALLPROF" report -i F --format trace "$@"
	if [ "$_rj" -eq 0 ] && [ "$rc" -eq 0 ] && [ ! -s "$_n.json.err" ] &&
	   [ ! -s "$_n.trace.err" ] && [ -s "$_n.trace" ]; then
		ok "report --format json|trace $*: exit 0, nothing on stderr"
	else
		fail "report --format json|trace $*: exit 0 (got $_rj, $rc), nothing on stderr"
		head -n 3 "$_n.json.err" "$_n.trace.err"
	fi
}
# trace_check NAME [CHECKER OPTIONS]: report-trace.py's assertions, each one here.
trace_check() {
	_n=$1; shift
	python3 "$T" check "$_n.trace" "$_n.json" "$@" >"$_n.check" 2>&1
	_rc=$?
	grep '^not ok' "$_n.check" | sed 's/^not ok - //' | while IFS= read -r l; do
		echo "not ok - $_n: $l"
	done
	if [ "$_rc" -eq 0 ]; then
		ok "$_n: $(grep -c '^ok' "$_n.check") checks of the trace against the JSON report"
	else
		fail "$_n: the trace agrees with the JSON report"
		grep -v '^ok' "$_n.check" | grep -v '^not ok' | head -n 5
	fi
}

both all
trace_check all --names spinner,sleeper,locker,locker2,reader
both window --time 0.2,0.5
trace_check window
both tid --tid "$locker"
trace_check tid --some-threads
both pid --pid "$pid" --comm 'locker.*|reader'
trace_check pid --names locker,locker2,reader --some-threads
both short --time 0.1,0.6 --min-block 1000
trace_check short --min-block-us 1000
both blocked --mode blocked
trace_check blocked --kinds blocked
both on --mode on --comm spinner
trace_check on --kinds on-cpu
wk=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["header"]["wakeups"])' all.json)
if [ "$wk" = True ]; then
	both timer --waker-comm '\[timer\]'
	trace_check timer --kinds blocked --partial
	check "--waker-comm: only blocked slices that a timer ended" python3 -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
sys.exit(not ev or any(e["args"]["waker"]["name"] != "[timer]" for e in ev))' timer.trace
fi
# A storm over the --switch-stacks budget, where the gate closes the
# wake-up tracepoints at times: its waits whose wake-up went unrecorded
# are blocked slices so marked, and what the totals moved from blocked
# to runnable (an estimate) is within them, thread by thread.
if [ "$wk" = True ]; then
	run g.out g.err "$WALLPROF" record -q -o G --switch-stacks=500 -- "$WORKLOADS/pingpong" 0.5
	check_num "a storm: record exits 0" "$rc" -eq 0
	run storm.json storm.json.err "$WALLPROF" report -i G --format json
	run storm.trace storm.trace.err "$WALLPROF" report -i G --format trace
	trace_check storm --names ping,pong
	est=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["quality"]["wakeups_gated"]["runnable_estimated_ns"])' storm.json)
	echo "# the storm's estimated runnable time: $est ns"
	check "a storm: slices of unrecorded wake-ups" grep -q '"wakeup_recorded":false' storm.trace
fi

# A smaller timeline without the short waits.
both short-all --min-block 1000
check_num "--min-block 1000 leaves out slices" "$(grep -c '"ph":"X"' short-all.trace)" -lt \
	"$(grep -c '"ph":"X"' all.trace)"

# The stacks the workload is known for, by thread name: the reader
# blocks in wc_pipe_wait, the sleeper in wc_sleep_once (woken by a timer,
# when wake-ups are recorded, but for its last sleep), the spinner runs
# in wc_spin_leaf.
check "slices: names and stacks of the workload's known waits and work" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {e["tid"]: e["args"]["name"] for e in d["traceEvents"] if e["name"] == "thread_name"}
def longest(comm, cat):
    sl = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == cat and
          names.get(e["tid"]) == comm]
    return max(sl, key=lambda e: e["dur"])
bad = []
r = longest("reader", "blocked")
if "wc_pipe_wait" not in r["args"]["stack"] or not r["name"].startswith("blocked: "):
    bad.append(r)
# (Most of its sleeps: on a loaded machine, one stack in a hundred or so
# has been seen to stop unwinding at __GI___clock_nanosleep.)
sl = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "blocked" and
      names.get(e["tid"]) == "sleeper"]
known = sum(e["dur"] for e in sl if "wc_sleep_once" in e["args"]["stack"])
if not sl or known < 0.9 * sum(e["dur"] for e in sl):
    bad.append(longest("sleeper", "blocked"))
s = max([e for e in sl if "wc_sleep_once" in e["args"]["stack"]] or sl, key=lambda e: e["dur"])
woken = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "blocked" and
         names.get(e["tid"]) == "sleeper" and "waker" in e["args"]]
if sys.argv[2] == "True" and (len(woken) < 5 or
                              any(e["args"]["waker"]["name"] != "[timer]" for e in woken)):
    bad.append(woken[0] if woken else s)
for e in (r, s):
    if e["name"].split(": ")[1].split(" <- ")[0] in ("schedule", "__schedule"):
        bad.append(e)
# The spinner slices are named by a sample in them: most of its time is
# in wc_spin_leaf, the rest in the clock reads of its loop (vdso, wl_now), and
# a sample may have caught it in the kernel, on its way back from an
# interrupt.  So: most of its on-CPU time in slices named wc_spin_leaf,
# and its longest slice in wc_spinner.
ons = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "on-cpu" and
       names.get(e["tid"]) == "spinner"]
def user(e):
    return [f for f in e["args"].get("stack", []) if not f.endswith(" [k]")]
leaf = sum(e["dur"] for e in ons if user(e)[:1] == ["wc_spin_leaf"] and
           "wc_spin_leaf" in e["name"])
p = longest("spinner", "on-cpu")
if 2 * leaf < sum(e["dur"] for e in ons) or "wc_spinner" not in user(p):
    bad.append(p)
for e in bad:
    print("# unexpected:", json.dumps(e)[:300])
sys.exit(1 if bad else 0)' all.trace "$wk"

# -o writes the same; a bad input is one sentence and no output file.
run o.out o.err "$WALLPROF" report -i F --format trace -o o.trace
check "-o: exit 0, the same timeline" cmp -s o.trace all.trace
run bad.out bad.err "$WALLPROF" report -i nothing.data --format trace -o bad.trace
check_num "a missing input: exit 1" "$rc" -eq 1
check "a missing input: one line on stderr, no output file" \
	test "$(nlines bad.err)" -eq 1 -a ! -e bad.trace
printf 'not a recording' >junk.data
run bad.out bad.err "$WALLPROF" report -i junk.data --format trace
check "not a recording: exit 1, one line on stderr, nothing on stdout" \
	test "$rc" -eq 1 -a "$(nlines bad.err)" -eq 1 -a ! -s bad.out

finish
