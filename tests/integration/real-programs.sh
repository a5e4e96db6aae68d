#!/bin/sh
# Programs nobody here wrote, as a user would profile them: sort and xz
# with threads, python3, make running the compiler, node; launched, attached
# to (-p) and system-wide (-a).  Every recording must hold the ledger's
# invariants (tests/integration/ledger.py): wall = on + off exactly, every
# thread inside the recording, on-CPU within CPUs x duration, stacks that
# reach where their threads began; and a launched command's on-CPU time
# must match the CPU time the kernel counted for it (getrusage).
. "$TESTS_SRCDIR/integration/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
ledger="$PY $TESTS_SRCDIR/integration/ledger.py"
cputime="$PY $TESTS_SRCDIR/integration/cputime.py"

# report_json NAME DATA: NAME.wall.json and NAME.on.json from DATA.
report_json() {
	"$WALLPROF" report -i "$2" --format json --no-cache >"$1.wall.json" 2>"$1.report.err" &&
		"$WALLPROF" report -i "$2" --format json --mode on --no-cache >"$1.on.json" 2>>"$1.report.err"
}

# launched NAME LEDGER-ARGS -- CMD...: record CMD under cputime.py, check
# the exit status, the ledger and the CPU time.
launched() {
	name=$1; shift
	largs=''
	while [ "$1" != -- ]; do largs="$largs $1"; shift; done
	shift
	"$WALLPROF" record -q -o "$name.data" ${REC_ARGS:-} -- $cputime "$name.cpu" "$@" >"$name.out" 2>"$name.err"
	rc=$?
	check_num "$name: record exits with the command's status" "$rc" -eq 0
	if ! report_json "$name" "$name.data"; then
		notok "$name: report: $(head -3 "$name.report.err")"
		return
	fi
	read -r wrapper cpu < "$name.cpu"
	$ledger "$name" "$name.wall.json" "$name.on.json" --cpu-ns "$cpu" \
		--exclude-pid "$wrapper" $largs || failures=$((failures + 1))
}

# Input: 400,000 pseudo-random lines, the same every run.
$PY -c '
import random
r = random.Random(7)
with open("lines.txt", "w") as f:
    for i in range(400000):
        f.write("%016x %d\n" % (r.getrandbits(64), i))
' || exit 99

command -v sort >/dev/null 2>&1 &&
	launched sort --comm sort -- sort --parallel=2 -S 64M -o sorted.txt lines.txt
head -c 2000000 lines.txt > some.txt
command -v xz >/dev/null 2>&1 &&
	launched xz --comm xz -- xz -T2 -6 -k -f some.txt

cat > busy.py <<'EOF'
import threading, time
def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
def worker():
    for _ in range(3):
        work(200000)
        time.sleep(0.05)
ts = [threading.Thread(target=worker, name="pyworker") for _ in range(2)]
for t in ts: t.start()
work(300000)
for t in ts: t.join()
EOF
launched python3 --comm python3 -- $PY busy.py

# A process that frees much memory runs its exit on for tens of ms after
# its EXIT record and after the kernel's exit figure (taken before the
# memory goes): that time is its own, and getrusage counts it.  Launched
# (the cgroup's switch records go on to its last switch-out), its on-CPU
# time is the kernel's to 1% (10 ms at least); before, 80 ms of 2.86 s
# went missing.
cat > touchexit.py <<'EOF'
import mmap, os
m = mmap.mmap(-1, 256 << 20)
for i in range(0, 256 << 20, 4096):
    m[i] = 1
os._exit(0)
EOF
"$WALLPROF" record -q -o touch.data -- $cputime touch.cpu $PY touchexit.py >touch.out 2>touch.err
check_num "exit tail: record exits 0" $? -eq 0
read -r wrapper cpu < touch.cpu
on=$("$WALLPROF" report -i touch.data --format json --no-cache 2>/dev/null |
	$PY -c 'import json, sys
d = json.load(sys.stdin)
print(sum(t["on_cpu_ns"] for t in d["threads"] if t["pid"] != int(sys.argv[1])))' "$wrapper")
echo "# exit tail: on-CPU ${on:-?} ns, getrusage $cpu ns"
d=$((${on:-0} - ${cpu:-0}))
[ $d -lt 0 ] && d=$((-d))
tol=$((cpu / 100))
[ $tol -lt 10000000 ] && tol=10000000
check_num "exit tail: on-CPU within 1% (10 ms at least) of getrusage's" "$d" -le "$tol"
if [ "$d" -gt "$tol" ]; then
	# What the next look needs: the recording's quality and anchors, each thread's sources.
	"$WALLPROF" report -i touch.data --no-cache 2>&1 | grep -E '^# (quality|on-CPU)' | sed 's/^/# /'
	"$WALLPROF" report -i touch.data --format json --no-cache 2>/dev/null | $PY -c 'import json, sys
for t in json.load(sys.stdin)["threads"]:
    print("# thread %(tid)s %(comm)s: on %(on_cpu_ns)s, kernel %(kernel_on_cpu_ns)s, moved %(on_cpu_moved_ns)s, from %(on_cpu_source)s" % t)'
	"$WALLPROF" report -i touch.data --dump 2>/dev/null | grep -E ' (EXIT|THREAD_CLOCK) |^# lost' | sed 's/^/# /'
fi

# make: a parallel build, many short processes (make, cc, cc1, as, ld).
if command -v make >/dev/null 2>&1 && command -v cc >/dev/null 2>&1; then
	mkdir -p proj
	for i in 1 2 3 4; do
		cat > "proj/u$i.c" <<EOF
#include <stdio.h>
static double f$i(int n) { double s = 0; for (int k = 1; k < n; k++) s += 1.0 / k; return s; }
double g$i(int n) { return f$i(n) * $i; }
EOF
	done
	echo 'double g1(int); int main(void) { return g1(10) > 100; }' > proj/main.c
	printf 'OBJS = main.o u1.o u2.o u3.o u4.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -g -c -o $@ $<\n' \
		> proj/Makefile
	# gcc's driver keeps more than the default 8 KiB copy of stack below
	# its deepest frames (realpath's buffers): the report says so and
	# names the size that would do, and that size does.
	# (Under load a few of the compiler's short processes were caught
	# before all their code was mapped: 78% reached once, 100% usually.)
	launched make --comm make --comm cc1 --max-truncated 0.6 --min-reach 0.7 -- make -s -j2 -C proj
	check "make: the program was built" [ -x proj/prog ]
	"$WALLPROF" report -i make.data --no-cache 2>/dev/null |
		sed -n 's/.*they needed at least -g dwarf,\([0-9]*\).*/\1/p' > need.txt
	need=$(cat need.txt)
	if [ -n "$need" ]; then
		rm -f proj/*.o proj/prog
		size=$(( (need + 4096 + 7) / 8 * 8 ))
		[ "$size" -le 65528 ] || size=65528
		# The suggestion is a lower bound (how far the unwinder reached
		# before the copy ended), and cc1 is on-CPU some 130 ms: a few
		# deeper samples still fall short.
		REC_ARGS="-g dwarf,$size" launched make-big --comm cc1 --min-reach 0.7 \
			--max-truncated 0.25 -- make -s -j2 -C proj
	else
		# Then no stack was cut short, or the report says it cannot tell
		# how much more would do, or that some needed more than the
		# kernel copies (gcc's deepest stacks, now and then).
		check "make: no size to suggest: none cut short, a larger size or -g fp advised" \
			sh -c '"$1" report -i make.data --no-cache 2>/dev/null | grep "^# stacks:" |
				grep -Eq " 0\.0% cut short|try a larger -g dwarf|more than the kernel copies"' - "$WALLPROF"
	fi
fi

if command -v node >/dev/null 2>&1; then
	# V8's generated code has no unwind tables: its frames are walked by
	# their frame pointers, named from the map node writes.
	launched node --comm node -- node --perf-basic-prof -e '
let s = 0;
function busy(n) { for (let i = 0; i < n; i++) s += Math.sqrt(i); }
const end = Date.now() + 600;
function tick() { busy(200000); if (Date.now() < end) setTimeout(tick, 5); }
tick();'
	nodepid=$($PY -c 'import json; d = json.load(open("node.wall.json"))
print(" ".join(sorted({str(t["pid"]) for t in d["threads"] if t["comm"] == "node"})))')
	for p in $nodepid; do rm -f "/tmp/perf-$p.map"; done
	check "node: its JavaScript function is named" \
		$PY -c 'import json, sys; d = json.load(open("node.on.json"))
sys.exit(not any("busy" in f["name"] for s in d["stacks"] for f in s["frames"]))'
fi

# -p: attach to a running python3 for one second, once it is in its loop
# (its start, deep in the import machinery, can take a busy machine more
# than a second, and its stacks need more than the default copy).
$PY -c '
import time
print("looping", flush=True)
end = time.time() + 60
while time.time() < end:
    sum(range(20000)); time.sleep(0.001)
' >py.out &
py=$!
bg_pids="$bg_pids $py"
wait_until 300 grep -q looping py.out
"$WALLPROF" record -q -o attach.data -p "$py" -d 1 2>attach.err
check_num "attach: record exits 0" $? -eq 0
if report_json attach attach.data; then
	$ledger attach attach.wall.json attach.on.json --comm python3 ||
		failures=$((failures + 1))
	# The thread lived all along: its wall is the recording's span, which
	# -d 1 makes a second (a busy machine may stop it a little late).
	set -- $($PY -c 'import json,sys; d=json.load(open("attach.wall.json"))
print(max(t["wall_ns"] for t in d["threads"]), d["header"]["duration_ns"])')
	check_num "attach: the thread's wall ($1) is the recording's span ($2)" "$1" -eq "$2"
	check_range "attach: which -d 1 made a second, ms" "$(($2 / 1000000))" 1000 1999
else
	notok "attach: report: $(head -3 attach.report.err)"
fi
kill "$py" 2>/dev/null

# -a: every CPU while xz works: on a stream it compresses until killed,
# so that however slowly a loaded machine starts the recording, xz works
# all through it.
if command -v xz >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
	(while cat some.txt; do :; done) 2>/dev/null | xz -T2 -6 -c >/dev/null &
	xzp=$!
	bg_pids="$bg_pids $xzp"
	"$WALLPROF" record -q -o all.data -a -d 1 2>all.err
	check_num "-a: record exits 0" $? -eq 0
	kill "$xzp" 2>/dev/null
	wait "$xzp" 2>/dev/null
	if report_json all all.data; then
		# (-a also sees whatever else runs, gcc's driver of another test
		# among them, whose stacks need more than the default copy, and
		# programs rebuilt under their processes: the stacks checked
		# are xz's.)
		$ledger all all.wall.json all.on.json --comm xz --max-truncated 0.5 --stacks-of xz ||
			failures=$((failures + 1))
	else
		notok "-a: report: $(head -3 all.report.err)"
	fi
fi
finish
