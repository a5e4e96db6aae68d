# jit-map.sh: code in anonymous memory is named from the perf map its
# program writes (/tmp/perf-PID.map), saved in the recording so that the
# names outlive the map; the stack goes on below the JIT frame (by frame
# pointer) to the program's own functions.  First a small program that
# runs generated x86_64 code, then node --perf-basic-prof.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

maps=''		# perf maps this test made or had made: removed at the end
trap 'rm -f $maps; cleanup' EXIT

# weight FOLDED ERE: the summed weight (us) of the folded lines whose
# frames (";"-separated, the leaf last, the weight taken off) match ERE.
weight() {
	awk -v re="$2" '{ w = $NF; sub(/ [0-9]+$/, ""); if ($0 ~ re) s += w }
		END { print s + 0 }' "$1"
}

# named_share FOLDED: of the time under jit_caller, the percentage in
# jit_spin_loop called from it (then maybe the kernel: an interrupt, a
# preemption), under main.  The machine's load changes the time, not this.
named_share() {
	_all=$(weight "$1" ';jit_caller(;|$)')
	_named=$(weight "$1" ';main;jit_caller;jit_spin_loop(;|$)')
	echo "# $1: $_named of $_all us under jit_caller named jit_spin_loop" >&2
	[ "$_named" -ge 100000 ] || { echo 0; return; }
	echo $((100 * _named / _all))
}

if [ "$(uname -m)" = x86_64 ]; then
	run rec.out rec.err "$WALLPROF" record -o jit.data -- "$WORKLOADS/jit" 1
	check_num "record the generated-code program exits 0" "$rc" -eq 0
	pid=$(wl_field rec.out main pid)
	maps="$maps /tmp/perf-$pid.map"
	check "record says nothing of '//anon'" no_match '//anon' rec.err
	run f.out f.err "$WALLPROF" report -i jit.data --format folded
	check_num "report --format folded exits 0" "$rc" -eq 0
	check_num "jit_spin_loop is the leaf under jit_caller and main, percent" \
		"$(named_share f.out)" -ge 80
	check "no 'cannot open' warning for anonymous memory" no_match "cannot open|//anon" f.err
	check "the JIT names were saved" sh -c '"$WALLPROF" report --dump -i jit.data |
		grep -q "^# JIT names saved: 1$"'
	rm -f "/tmp/perf-$pid.map"
	run t.out t.err "$WALLPROF" report -i jit.data --format folded
	check_num "with the map deleted, still named from the recording, percent" \
		"$(named_share t.out)" -ge 80
	run t.out t.err "$WALLPROF" report -i jit.data
	check "the text report's footer counts no missing binary" no_match 'missing' t.out
	check "and warns of nothing" no_match '.' t.err

	# A recording without names (the map was gone at its end) falls back
	# to the map if there is one again, and says so.
	run rec2.out rec2.err "$WALLPROF" record -o nomap.data -- "$WORKLOADS/jit" 0.5 unlink
	pid=$(wl_field rec2.out main pid)
	code=$(wl_field rec2.out main code)
	size=$(wl_field rec2.out main size)
	maps="$maps /tmp/perf-$pid.map"
	run t.out t.err "$WALLPROF" report -i nomap.data --format folded
	check_num "without a map anywhere, the code is not named" \
		"$(weight t.out ';jit_caller;jit_spin_loop')" -eq 0
	echo "$code $size jit_spin_loop" >"/tmp/perf-$pid.map"
	run t.out t.err "$WALLPROF" report -i nomap.data --format folded
	check_num "with the map back, named from it, percent" "$(named_share t.out)" -ge 80
	run t.out t.err "$WALLPROF" report -i nomap.data
	check "the footer says the names came from the live map" \
		grep -q '^# frames:.*JIT code of 1 processes named from /tmp/perf-PID.map now' t.out

	# A process in a container (its own pid and mount namespaces) writes
	# its map in its own /tmp, under its own pid: read through its root
	# while it lives (here: attached to, it outlives the recording, by
	# seconds even on a loaded machine).
	if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
		command -v pgrep >/dev/null 2>&1; then
		# Its /tmp: a tmpfs of its own.  The program is run through a
		# descriptor opened before the mount, since the build may itself
		# be under /tmp, which the mount hides.
		unshare -m -p -f --propagation private sh -c \
			"exec 3<'$WORKLOADS/jit' && mount -t tmpfs none /tmp &&
			 exec /proc/self/fd/3 5" >ns.out 2>ns.err &
		bg_pids="$bg_pids $!"
		host=''
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			sleep 0.2
			host=$(pgrep -f '^/proc/self/fd/3 5$' | head -1)
			[ -n "$host" ] && break
		done
		if [ -n "$host" ]; then
			sleep 0.3
			run rec3.out rec3.err "$WALLPROF" record -o ns.data -p "$host" -d 1
			check_num "container: record -p exits 0" "$rc" -eq 0
			nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$host/status" 2>/dev/null)
			check "container: the map is not in the host's /tmp" \
				test ! -e "/tmp/perf-${nspid:-1}.map" -o "${nspid:-1}" = "$host"
			wait
			run t.out t.err "$WALLPROF" report -i ns.data --format folded
			check_num "container: its JIT code named from its own /tmp, percent" \
				"$(named_share t.out)" -ge 80
		else
			notok "container: the namespaced program did not start: $(cat ns.err)"
		fi
	fi
else
	echo "# not x86_64: no generated-code program"
fi

if command -v node >/dev/null 2>&1; then
	# It loops until the process has had 1.5 s of CPU time (at most 60 s):
	# a busy machine gives it less of a CPU, and then more time, not less
	# CPU time in hotLoop.
	cat >busy.js <<'JS'
function hotLoop(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i & 7);
  return s;
}
console.log("pid " + process.pid);
const end = Date.now() + 60000;
let t = 0;
while (process.cpuUsage().user < 1500000 && Date.now() < end) t += hotLoop(100000);
JS
	run rec.out rec.err "$WALLPROF" record -o node.data -- node --perf-basic-prof busy.js
	check_num "record node --perf-basic-prof exits 0" "$rc" -eq 0
	pid=$(sed -n 's/^pid //p' rec.out)
	maps="$maps /tmp/perf-$pid.map"
	check "node wrote its perf map" test -s "/tmp/perf-$pid.map"
	rm -f "/tmp/perf-$pid.map"
	run f.out f.err "$WALLPROF" report -i node.data --format folded
	check_num "report of node exits 0" "$rc" -eq 0
	# Its one busy function, named whatever else the machine runs.
	w=$(weight f.out 'hotLoop[^;]*$')
	check_num "hotLoop is named, after its map is gone, us" "$w" -ge 200000
	w=$(weight f.out ';node::Start[^;]*;.*hotLoop[^;]*$')
	check_num "its stacks go on down to node::Start, us" "$w" -ge 100000
	check "no 'cannot open' warning for node's JIT code" no_match "cannot open|//anon" f.err
	run t.out t.err "$WALLPROF" report -i node.data --mode on --top 3
	check "the text report names hotLoop too" grep -q 'hotLoop' t.out
else
	skip_check "node's JIT code named" "no node (nodejs is in tools/deps.sh)"
fi
finish
