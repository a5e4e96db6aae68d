#!/bin/sh
# attach-cgroup.sh: -p on processes that have a cgroup (v2) to themselves,
# as a service does, attaches through it: events per CPU on the cgroup,
# none in the threads' own.  A program whose threads each live less than
# a sampling period is then sampled at the rate asked for (attached
# thread by thread it had 15% of its samples due), the ledger's
# invariants hold, and a process moved into the cgroup during the
# recording is left out and counted; busy threads' on-CPU time is
# schedstat's within max(2%, 5 ms).  A process that shares its cgroup is
# attached thread by thread, as before.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test attach

[ "$(id -u)" -eq 0 ] || skip "making a cgroup and opening events per CPU need root"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"
mnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)
[ -n "$mnt" ] || skip "no cgroup v2 hierarchy is mounted"
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ -n "$own" ] || skip "this shell is in no cgroup v2"
parent="$mnt${own%/}"
cg="$parent/wallprof-test-$$"
mkdir "$cg" 2>/dev/null || skip "cannot make a cgroup under $parent"

# Whatever is left in the test's cgroup goes back, and the cgroup goes.
cg_remove() {
	for _p in $bg_pids; do running "$_p" && kill -KILL "$_p" 2>/dev/null; done
	for _i in 1 2 3 4 5; do
		while read -r _p; do echo "$_p" >"$parent/cgroup.procs"; done <"$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null && return
		sleep 0.1
	done
}
trap 'cg_remove; cleanup' EXIT

# figures DATA NAME: the JSON report of DATA in NAME.json, its threads in
# NAME.threads, and the invariants of any recording checked.
figures() {
	run "$2.json" "$2.err" "$WALLPROF" report -i "$1" --format json
	check_num "$2: report exits 0" "$rc" -eq 0
	python3 "$J" threads "$2.json" >"$2.threads"
	python3 "$J" invariants "$2.json" >"$2.inv"
	check "$2: the invariants of any recording hold" [ ! -s "$2.inv" ]
	head -n 3 "$2.inv"
}

# --- threads of 300 us each, in a cgroup of their own ----------------------
"$WORKLOADS/churn" 4 300 >wl.out 2>&1 &
wl=$!
bg_pids="$bg_pids $wl"
echo "$wl" >"$cg/cgroup.procs"
sleep 0.3
run rec.out rec.err "$WALLPROF" record -v -o A -p "$wl" -d 1.5
check_num "alone: record exits 0" "$rc" -eq 0
check "alone: it attached through the process's own cgroup" \
	grep -q "attached through the processes' own cgroup" rec.err
grep -i 'cgroup' rec.err | head -n 3 | sed 's/^/# /'
wait "$wl"
figures A a
threads=$(awk -F '\t' -v p="$wl" '$1 == p { n++ } END { print n + 0 }' a.threads)
check_num "alone: its short threads are in the recording" "$threads" -gt 50
on=$(awk -F '\t' -v p="$wl" '$1 == p { s += $5 } END { printf "%.0f\n", s }' a.threads)
samples=$(awk -F '\t' -v p="$wl" '$1 == p { s += $11 } END { printf "%.0f\n", s }' a.threads)
period=$(( 1000000000 / 999 ))
due=$(( on / period ))
echo "# on-CPU $on ns in $threads threads: $samples samples, $due due at -F 999"
# (Attached thread by thread, 0.15 of them; the sampling clock runs per
# CPU here, so only the last partial period of each slice stretch is lost.)
# The clock of events on a cgroup stops while the CPU runs a task outside
# it, and so loses a partial period then: on a loaded machine, at each
# time another program preempted a thread of the cgroup.  The lower bound
# leaves those out.
invol=$(awk -F '\t' -v p="$wl" '$1 == p { s += $10 } END { printf "%.0f\n", s }' a.threads)
lo=$(( due > invol ? (due - invol) * 80 / due : 0 ))
echo "# $invol preemptions of its threads"
check_range "alone: the samples are the ones due, percent" \
	$(( samples * 100 / (due > 0 ? due : 1) )) "$lo" 120

# --- busy threads, attached through the cgroup before they start ------------
# (The client/server workload waits for a line on its standard input.)
mkfifo go
"$WORKLOADS/clients" 2 3 10 wait <go >D.out 2>D.werr &
wl=$!
bg_pids="$bg_pids $wl"
exec 6>go
echo "$wl" >"$cg/cgroup.procs"
record_attached D D.err "$wl" -v
echo g >&6
exec 6>&-
wait "$wl"
wait "$rec"
check_num "busy: record exits 0" "$?" -eq 0
check "busy: it attached through the process's own cgroup" \
	grep -q "attached through the processes' own cgroup" D.err
"$WALLPROF" report -i D --format json >D.json 2>D.rerr
if busy_ok busy D.out D.json >D.check; then ok "busy: every busy thread's on-CPU is schedstat's"; else
	notok "busy: every busy thread's on-CPU is schedstat's"; fi
cat D.check

# --- a process moved into the cgroup while recording -----------------------
"$WORKLOADS/churn" 3 >wl2.out 2>&1 &
wl2=$!
bg_pids="$bg_pids $wl2"
echo "$wl2" >"$cg/cgroup.procs"
"$WORKLOADS/spin" 3 >spin.out 2>&1 &
sp=$!
bg_pids="$bg_pids $sp"
sleep 0.3
"$WALLPROF" record -v -o B -p "$wl2" -d 1.5 >rec2.out 2>rec2.err &
rp=$!
sleep 0.5
echo "$sp" >"$cg/cgroup.procs"
wait "$rp"
check_num "joined: record exits 0" "$?" -eq 0
check "joined: it attached through the process's own cgroup" \
	grep -q "attached through the processes' own cgroup" rec2.err
check "joined: the newcomer's records were left out, and counted" \
	grep -Eq "warning: [0-9]+ records of other processes in the cgroup" rec2.err
figures B b
check_num "joined: no thread of the newcomer" \
	"$(awk -F '\t' -v p="$sp" '$1 == p { n++ } END { print n + 0 }' b.threads)" -eq 0
check_num "joined: the workload's threads are there" \
	"$(awk -F '\t' -v p="$wl2" '$1 == p { n++ } END { print n + 0 }' b.threads)" -gt 10
wait "$wl2" "$sp"

# --- a process that shares its cgroup: thread by thread ----------------------
"$WORKLOADS/churn" 2 >wl3.out 2>&1 &
wl3=$!
bg_pids="$bg_pids $wl3"
"$WORKLOADS/spin" 2 >spin3.out 2>&1 &
sp3=$!
bg_pids="$bg_pids $sp3"
echo "$wl3" >"$cg/cgroup.procs"
echo "$sp3" >"$cg/cgroup.procs"
sleep 0.3
run rec3.out rec3.err "$WALLPROF" record -v -o C -p "$wl3" -d 1
check_num "shared: record exits 0" "$rc" -eq 0
check "shared: attached thread by thread" \
	grep -q "the processes attached to have no cgroup of their own" rec3.err
figures C c
check_num "shared: no thread of the other process" \
	"$(awk -F '\t' -v p="$sp3" '$1 == p { n++ } END { print n + 0 }' c.threads)" -eq 0
wait "$wl3" "$sp3"
finish
