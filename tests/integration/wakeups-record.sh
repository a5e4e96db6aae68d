# wakeups-record.sh: record's wake-up tracepoints.  As root: the
# sched:sched_waking, sched_wakeup_new and sched_wakeup events on every
# CPU (only sched_waking's samples with stacks, and those only of the
# recording's wakers: another program's waker with its kernel frames,
# from a second sched_waking), their format files in the recording,
# tracefs mounted when it is not (and said so in one line),
# --wakeups=off, nostacks and all-stacks; as an ordinary user: one line
# saying wake-ups are not recorded and why, and the recording as before.
# The samples are counted in --dump's raw SAMPLE lines: those recordings
# keep raw stacks (--unwind=report).
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
core_test wake-ups
tracing_alone

[ "$(id -u)" -eq 0 ] || skip "the wake-up tracepoints need root (or CAP_PERFMON) here"
[ -d /sys/kernel/tracing ] || skip "this kernel has no tracefs"

# tracefs not mounted: root mounts it, and says so.  In a mount namespace
# of its own, with neither tracefs nor debugfs, whatever the system has.
if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	run wl.out err unshare -m sh -c '
		for m in /sys/kernel/tracing /sys/kernel/debug; do
			! mountpoint -q $m || umount -l $m || exit 99
		done
		"$0" record -o u.data -- "$1" 0.3 || exit
		mountpoint -q /sys/kernel/tracing && echo "tracefs mounted now" >mounted' \
		"$WALLPROF" "$WORKLOADS/wallclock"
	check_num "unmounted tracefs: record exits 0" "$rc" -eq 0
	check "unmounted tracefs: one line says it was mounted" \
		grep -q '^wallprof: mounted tracefs at /sys/kernel/tracing' err
	check "unmounted tracefs: it is mounted now" [ -s mounted ]
	check "unmounted tracefs: the recording has wake-ups" \
		grep -Eq '^# flags:.* wakeups( |$)' "$(dump u.data du; echo du)"
else
	skip_check "unmounted tracefs is mounted" "no mount namespace to unmount tracefs in"
fi

run wl.out err "$WALLPROF" record -o w.data --unwind=report -- "$WORKLOADS/wallclock" 0.5
check_num "record exits 0" "$rc" -eq 0
check "its summary counts wake-ups" grep -Eq 'switches, [0-9]+ wake-ups;' err
dump w.data d
check "the header flags wake-ups" grep -Eq '^# flags:.* wakeups( |$)' d
check_num "three TRACE_FORMAT records, first in the file" \
	"$(awk '/^#/ { next } { n++ } /^TRACE_FORMAT name: sched_wak/ && n <= 3 { t++ } END { print t + 0 }' d)" -eq 3
check "sched:sched_waking is event 2, on every CPU" \
	grep -Eq "^# event 2: sched:sched_waking, wake-ups, type 2 config [0-9]+, period 1, $(nproc) ids" d
check "sched:sched_waking again for other wakers is event 3, on every CPU" \
	grep -Eq "^# event 3: sched:sched_waking, wake-ups by other threads, kernel frames, type 2 config [0-9]+, period 1, $(nproc) ids" d
check "sched:sched_wakeup is event 5, on every CPU" \
	grep -Eq "^# event 5: sched:sched_wakeup, woken threads on a run queue, type 2 config [0-9]+, period 1, $(nproc) ids" d
# (The dump names events of one tracepoint by their number too.)
waking=$(($(samples 'sched:sched_waking#2' d) + $(samples 'sched:sched_waking#3' d)))
check_num "sched:sched_wakeup samples: about one per sched_waking one" \
	"$(samples sched:sched_wakeup d)" -ge $((waking / 2))
check "sched:sched_wakeup samples carry no stacks" \
	no_match ' SAMPLE .* sched:sched_wakeup ip .*(callchain [1-9]|stack [1-9])' d
check "the other wakers' sched_waking samples copy no stack" \
	no_match ' SAMPLE .* sched:sched_waking#3 ip .*stack [1-9]' d
new=$(samples sched:sched_wakeup_new d)
# The reader alone is woken every 20 ms, the sleeper every 10 ms.
check_num "sched:sched_waking samples" "$waking" -ge 40
check_num "sched:sched_wakeup_new samples: the five threads made" "$new" -ge 5
check "the wakers' stacks are recorded" \
	grep -Eq ' SAMPLE .* sched:sched_waking#2 ip 0x[0-9a-f]+ period 1 callchain [1-9][0-9]* regs abi64 stack [1-9]' d
# Timers wake the sleeper in an interrupt, on whatever thread ran: when
# none of the recording's, the second event has the kernel's frames.
# Whether one did depends on where the interrupts landed (the FIFO's
# writer below is an outside waker for certain): each that did has them.
others=$(samples 'sched:sched_waking#3' d)
echo "# wake-ups by threads outside the recording: $others"
check_num "other wakers' samples all carry the kernel's frames" \
	"$(grep -Ec ' SAMPLE .* sched:sched_waking#3 ip 0x[0-9a-f]+ period 1 callchain [1-9]' d)" \
	-eq "$others"

# A program outside the recording wakes the recorded reader of a FIFO:
# its wake-ups come without its stack memory, with its kernel frames,
# naming it.  It names itself with a terminal title sequence and a raw C1
# byte, which no output may carry raw.  Started before the recording, the
# kernel's filter leaves its stack out from the start; started after it,
# the filter takes it for one of the recording's threads to come until
# the filters are renewed, and record zeroes what the kernel copied of
# its registers and stack meanwhile.  It writes once the recorder has its
# events open; the recording stops when it is done: a loaded machine only
# makes it slower.
# foreign_waker WHEN: WHEN is before or after (the recording starts).
foreign_waker() {
	rm -f fifo go f.data && mkfifo fifo || exit 99
	cat fifo >/dev/null &
	reader=$!
	bg_pids="$bg_pids $reader"
	if [ "$1" = before ]; then
		start_writer
	fi
	"$WALLPROF" record -o f.data --unwind=report -p "$reader" >wl.out 2>err &
	recorder=$!
	bg_pids="$bg_pids $recorder"
	i=0
	until ls -l "/proc/$recorder/fd" 2>/dev/null | grep -q 'perf_event'; do
		i=$((i + 1))
		[ $i -lt 600 ] || { fail "$1: the recorder opened no event in 60 s"; break; }
		sleep 0.1
	done
	sleep 0.2
	if [ "$1" = after ]; then
		start_writer
	fi
	: >go
	wait "$writer"
	sleep 0.2
	kill -INT "$recorder"
	wait "$recorder"
	check_num "$1: another program's waker: record exits 0" "$?" -eq 0
	dump f.data d
	check_num "$1: another program's waker: its wake-ups, without its stack (of 100 writes)" \
		"$(awk -v w="$writer" '$2 == "SAMPLE" && $3 ~ ("/" w "$") && $6 ~ /^sched:sched_waking#[23]$/ &&
			/ callchain [1-9]/ && / stack 0\// { n++ } END { print n + 0 }' d)" -ge 50
	check "$1: another program's waker: none of its stack memory" \
		no_match " SAMPLE [0-9]+/$writer .* stack [1-9]" d
	echo "# $1: $(grep -c " SAMPLE [0-9]*/$writer .* sched:sched_waking#2 " d) of its wake-ups came with the stack asked for, zeroed"
	if [ "$1" = before ]; then
		check "$1: another program's waker: its stack never asked for" \
			no_match " SAMPLE [0-9]+/$writer .* sched:sched_waking#2 " d
	fi
	run rep err "$WALLPROF" report -i f.data
	check "$1: another program's waker: named as the reader's waker, by its kernel frames" \
		grep -Eq "woken by .*ev.*il \($writer/$writer\)" rep
	"$WALLPROF" report -i f.data --format folded --wakers >rep.folded 2>rep.err
	"$WALLPROF" report -i f.data --format json >rep.json 2>>rep.err
	check "$1: another program's waker: its name reaches no output raw" python3 -c '
import sys
for p in sys.argv[1:]:
    t = open(p, "rb").read().decode("utf-8")
    bad = [c for c in t if (ord(c) < 0x20 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f]
    if bad:
        sys.exit("%s: %r" % (p, bad[:3]))' rep rep.folded rep.json rep.err d
	check "$1: another program's waker: named in folded output" grep -q 'ev.*il' rep.folded
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
}
start_writer() {
	python3 -c '
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(15, b"\x1b]0;t\x07ev\x9bil", 0, 0, 0)
while not os.path.exists("go"):
    time.sleep(0.05)
with open(sys.argv[1], "w") as f:
    for i in range(100):
        f.write("x\n"); f.flush(); time.sleep(0.005)' fifo &
	writer=$!
	bg_pids="$bg_pids $writer"
}
foreign_waker before
foreign_waker after

# (This kernel may deliver no sched_waking at all for a short run whose
# wake-ups all come from an idle CPU's timer, see wakeups-report.sh: a
# recording without any is made again, and only then is the check left
# out, saying so.)
for try in 1 2 3; do
	rm -f n.data
	run wl.out err "$WALLPROF" record -o n.data --unwind=report --wakeups=nostacks -- "$WORKLOADS/wallclock" 0.3
	dump n.data d
	grep -q ' SAMPLE .* sched:sched_waking ' d && break
	echo "# --wakeups=nostacks, try $try: the kernel delivered no sched_waking sample"
done
check_num "--wakeups=nostacks: exits 0" "$rc" -eq 0
if grep -q ' SAMPLE .* sched:sched_waking ' d; then
	check "--wakeups=nostacks: wake-ups without stacks" \
		grep -Eq ' SAMPLE .* sched:sched_waking .* callchain 0 .*stack 0' d
else
	skip_check "--wakeups=nostacks: wake-ups without stacks" \
		"the kernel delivered no sched_waking sample in three recordings"
fi
check "--wakeups=nostacks: no wake-up with a stack" \
	no_match ' SAMPLE .* sched:sched_waking .*stack [1-9]' d

run wl.out err "$WALLPROF" record -o o.data --wakeups=off -- "$WORKLOADS/wallclock" 0.3
check_num "--wakeups=off: exits 0" "$rc" -eq 0
dump o.data d
check "--wakeups=off: no wake-up events" no_match 'sched:sched_wak' d
check "--wakeups=off: no wakeups flag" no_match '^# flags:.* wakeups' d

run wl.out err "$WALLPROF" record -o a.data --unwind=report --wakeups=all-stacks -- "$WORKLOADS/wallclock" 0.3
check_num "--wakeups=all-stacks: exits 0" "$rc" -eq 0
dump a.data d
check "--wakeups=all-stacks: one sched_waking event, with stacks" \
	grep -Eq "^# event 2: sched:sched_waking, wake-ups, .* $(nproc) ids" d
check "--wakeups=all-stacks: no second one" no_match '^# event 3: sched:sched_waking' d

run out err "$WALLPROF" record -o b.data --wakeups=maybe -- true
check_num "--wakeups=maybe: usage error" "$rc" -eq 2

# An ordinary user: one line, and the recording as before.
if id nobody >/dev/null 2>&1 && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	chmod 1777 "$tmp"
	mkdir -m 755 bin && cp "$WALLPROF" "$WORKLOADS/sleeper" bin/ || exit 99
	run out err setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		bin/wallprof record -o "$tmp/p.data" -- bin/sleeper 5 10
	check_num "as nobody: record exits 0" "$rc" -eq 0
	check_num "as nobody: one line says wake-ups are not recorded, and why" \
		"$(grep -c '^wallprof: wake-ups are not recorded: they need CAP_PERFMON' err)" -eq 1
	check "as nobody: and what that changes" grep -q 'after a wake-up then counts as blocked' err
	dump p.data d
	check "as nobody: no wake-up events" no_match 'sched:sched_wak' d
	run rep err "$WALLPROF" report -i p.data
	check_num "as nobody: report exits 0" "$rc" -eq 0
	check "as nobody: the report has no RUNNABLE column" no_match 'RUNNABLE' rep
	check "as nobody: its footer says wake-ups were not recorded" \
		grep -q '^# wake-ups were not recorded: blocked time includes the wait for a CPU' rep
	run out err setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		bin/wallprof record -o "$tmp/q.data" --wakeups=stacks -- bin/sleeper 5 10
	check_num "as nobody, --wakeups=stacks: an error" "$rc" -eq 1
	check_num "as nobody, --wakeups=stacks: one line" "$(nlines err)" -eq 1
fi
finish
