# report-memory.sh: what `wallprof report` keeps for each recorded thread
# and process stays small: a few hundred bytes for a short thread (its
# counters and the histogram buckets it filled), and no unwinder state for
# every process that was ever sampled.  Measured as the difference in
# report's peak memory between a short and a longer recording of the same
# workload, over the difference in threads or processes, so that what
# every report needs (libraries, debug information, caches) cancels out.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to measure memory"
# AddressSanitizer's redzones and quarantine of freed memory say nothing
# about the program's own memory.
ldd "$WALLPROF" 2>/dev/null | grep -q libasan && skip "an AddressSanitizer build"

# peak DATA: report's peak resident memory on DATA, in KiB: the least of
# two runs, as what is in flight at the peak varies from run to run.
peak() {
	python3 - "$WALLPROF" report -q -i "$1" -o /dev/null <<'EOF'
import os, subprocess, sys
least = None
for _ in range(2):
    p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        sys.exit(1)
    least = ru.ru_maxrss if least is None else min(least, ru.ru_maxrss)
print(least)
EOF
}

# count DATA: "threads processes" in the report of DATA.
count() {
	"$WALLPROF" report -q -i "$1" --format json | python3 -c '
import json, sys
t = json.load(sys.stdin)["threads"]
print(len(t), len({x["pid"] for x in t}))'
}

# slope NAME SHORT LONG WHAT: prints the bytes that one more of WHAT
# (1: thread, 2: process) costs between the recordings SHORT and LONG.
slope() {
	read -r t1 p1 <<EOF
$(count "$2")
EOF
	read -r t2 p2 <<EOF
$(count "$3")
EOF
	k1=$(peak "$2") k2=$(peak "$3")
	if [ "$4" = 1 ]; then n1=$t1 n2=$t2; else n1=$p1 n2=$p2; fi
	echo "# $1: $t1 threads in $p1 processes: $k1 KiB; $t2 in $p2: $k2 KiB" >&2
	# Too few to tell: fail, saying so.
	[ "$n2" -gt $((n1 + 100)) ] || { echo "# $1: too few more in the long run" >&2; echo 999999999; return; }
	echo $(((k2 - k1) * 1024 / (n2 - n1)))
}

# Threads of one process, each spinning 1 us: most get no sample.  The
# memory in flight at the peak varies by some MiB from run to run, so the
# slope needs thousands of threads between the two: on a loaded machine,
# where threads come slowly, the long run is made longer.
for s in 0.3 3 12; do
	run sp$s.out sp$s.err "$WALLPROF" record -q -o sp$s.data -- \
		"$WORKLOADS/spawner" join $s 1 0
	check_num "spawner for $s s: recorded" "$rc" -eq 0
	[ "$s" = 0.3 ] && continue
	long=$s
	[ "$(($(count sp$s.data | cut -d' ' -f1) - $(count sp0.3.data | cut -d' ' -f1)))" -ge 8000 ] &&
		break
done
per=$(slope "threads of one process" sp0.3.data sp$long.data 1)
# Some 500 bytes; a few more MiB in flight at the peak count too (10 KiB
# before, with three histograms of 64 buckets each).
# (An upper bound: what is in flight at the peak may make a slope < 0.)
check_num "a short thread costs some hundred bytes ($per)" "$per" -le 4095

# A process every fourth thread, each spinning 1 ms: most processes are
# sampled, and so unwound.
# (As above, a longer run on a loaded machine, where processes come slowly.)
for s in 1 5 15 40; do
	run ch$s.out ch$s.err "$WALLPROF" record -q -o ch$s.data -- "$WORKLOADS/churn" $s 1000
	check_num "churn for $s s: recorded" "$rc" -eq 0
	[ "$s" = 1 ] && continue
	clong=$s
	[ "$(($(count ch$s.data | cut -d' ' -f2) - $(count ch1.data | cut -d' ' -f2)))" -ge 400 ] &&
		break
done
per=$(slope "a process every fourth thread" ch1.data ch$clong.data 2)
# Some kilobytes, and the unwinders of the last 64 processes sampled (300
# KiB each before, one for every process).
check_num "a short process costs some kilobytes, not hundreds ($per)" "$per" -le 131071

finish
