# system-wide.sh: record -a while processes and threads exit and their tids
# are reused.  The kernel delivers a task's last switch-out (and samples
# of its exit path) after its EXIT record: those belong to the exited
# thread, never to a new "already existing" one.  Checked against the
# kernel's own CPU time of the workload (getrusage) and the invariants
# that hold for any recording.  (The other processes of the machine, other
# tests among them, are in the recording too: only the invariants are
# checked of them, not their names, which may be anything, even empty.)
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
"$WALLPROF" record -q -o probe.data -a -d 0.1 2>probe.err ||
	skip "-a is not allowed here: $(head -n 1 probe.err)"

# --- a process that exits during the recording ----------------------------
sleep 1 &
sl=$!
bg_pids="$bg_pids $sl"
sleep 0.2
run rec.out rec.err "$WALLPROF" record -q -o a.data -a -d 2
check_num "sleep: record -a exits 0" "$rc" -eq 0
wait "$sl"
run a.json a.err "$WALLPROF" report -i a.data --format json --top 20 --mode on
check_num "sleep: report exits 0" "$rc" -eq 0
python3 "$J" threads a.json >a.threads
check_num "sleep: one thread with the sleep's tid $sl" \
	"$(awk -F '\t' -v t="$sl" '$2 == t { n++ } END { print n + 0 }' a.threads)" -eq 1
wall=$(awk -F "\t" -v t="$sl" '$2 == t { print $4; exit }' a.threads)
on=$(awk -F "\t" -v t="$sl" '$2 == t { print $5; exit }' a.threads)
check_range "sleep: its wall ends with its exit, ms" "$((${wall:-0} / 1000000))" 600 1000
check_num "sleep: its on-CPU time is tiny, ms" "$((${on:-999999999} / 1000000))" -le 50
python3 "$J" invariants a.json >a.inv
check "sleep: the invariants of any recording hold" [ ! -s a.inv ]
head -n 5 a.inv

# --- threads and processes churning -------------------------------------
run wl.out rec.err "$WALLPROF" record -q -o c.data -a -- "$WORKLOADS/churn" 1.5
check_num "churn: record -a exits 0" "$rc" -eq 0
pid=$(wl_field wl.out main pid)
[ -n "$pid" ] || { fail "churn: the workload reported"; cat wl.out rec.err; finish; }
threads=$(wl_field wl.out main threads)
cpu=$(wl_field wl.out main cpu_ns)
kids_cpu=$(wl_field wl.out main children_cpu_ns)
forks=$(wl_field wl.out main forks)
run c.json c.err "$WALLPROF" report -i c.data --format json --top 20 --mode on
check_num "churn: report exits 0" "$rc" -eq 0
python3 "$J" invariants c.json >c.inv
check "churn: the invariants of any recording hold" [ ! -s c.inv ]
head -n 5 c.inv
python3 "$J" threads c.json >c.threads
n=$(awk -F '\t' -v p="$pid" '$1 == p { n++ } END { print n + 0 }' c.threads)
check_num "churn: one thread per thread the workload made, and main" "$n" -eq $((threads + 1))
on=$(awk -F '\t' -v p="$pid" '$1 == p { s += $5 } END { printf "%.0f\n", s }' c.threads)
check_range "churn: its on-CPU time is the kernel's (getrusage), percent" \
	$((on * 100 / cpu)) 90 110
kids=$(awk -F '\t' -v k="ck$pid" '$3 == k { n++ } END { print n + 0 }' c.threads)
check_num "churn: one row per child process" "$kids" -eq "$forks"
kon=$(awk -F '\t' -v k="ck$pid" '$3 == k { s += $5 } END { printf "%.0f\n", s }' c.threads)
# Their exit path after the EXIT record (tens of microseconds of 2 ms) is
# outside their window by design.
check_range "churn: the children's on-CPU time is the kernel's, percent" \
	$((kon * 100 / kids_cpu)) 85 110
python3 "$J" stacks c.json >c.stacks
dead=$(awk -F '\t' '$7 ~ /do_task_dead/ { s += $5 } END { printf "%.0f\n", s }' c.stacks)
check_num "churn: no on-CPU time in stacks of dead tasks, ms" $((dead / 1000000)) -le 5
finish
