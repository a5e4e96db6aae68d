# live-convert.sh: `wallprof convert` unwinds a raw recording into a stack
# table and short sample records, and every report of the converted file
# is the report of the raw one: folded stacks, the per-thread JSON ledger,
# a --time window, filters, --no-kernel/--no-user, histograms, the
# timeline, flame graph and pprof; for the mixed wallclock workload (with
# wake-ups, futexes and pipes), a recursion deeper than the frame limit
# and than the stack copy (truncated stacks), and frame-pointer
# callchains.  The converted file of a CPU-bound workload is less than a
# quarter of the raw one.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

size() { wc -c < "$1" | tr -d ' '; }
nocache() {
	sed -e 's/"unwind_cache_hits": [0-9]*/"unwind_cache_hits": N/' \
	    -e 's/"out_of_order": [0-9]*/"out_of_order": N/' -e 's/, [0-9]* out of order//'
}

# same NAME ARGS...: `report ARGS` of raw.data and of live.data give the
# same output, with nothing on stderr; but JSON's count of stacks found
# already unwound by report, which has none to unwind in live.data, and
# the count of records that came later than promised, which converting
# puts in order (a loaded machine's raw file can have one).
same() {
	_name=$1; shift
	"$WALLPROF" report -q -i raw.data "$@" 2> a.err | nocache > a.out
	_ra=$?
	"$WALLPROF" report -q -i live.data "$@" 2> b.err | nocache > b.out
	_rb=$?
	if [ "$_ra" -eq 0 ] && [ "$_rb" -eq 0 ] && [ -s a.out ] && cmp -s a.out b.out &&
	   [ ! -s b.err ]; then
		ok "$_name: the same for the raw and the converted file"
	else
		fail "$_name: the same for the raw and the converted file (exit $_ra/$_rb)"
		diff a.out b.out | head -n 6
		head -n 3 b.err
	fi
}

# convert: raw.data -> live.data, exit 0, a version 2 file with stack samples.
convert() {
	run conv.out conv.err "$WALLPROF" convert -f -i raw.data -o live.data
	check_num "$1: convert exits 0" "$rc" -eq 0
	check "$1: convert prints its sizes and stacks" grep -Eq "distinct stacks" conv.err
	cat conv.err
	dump live.data d.out
	check "$1: the converted file is format version 2" grep -q '^# wallprof data, format version 2' d.out
	check "$1: its samples name stacks of its table" grep -Eq ' STACK_SAMPLE .* stack [0-9]+' d.out
	check "$1: no DWARF stack copy is left in it" no_match ' SAMPLE .* stack [1-9][0-9]*/' d.out
}

# The mixed workload, with everything the ledger reads.
run wl.out rec.err "$WALLPROF" record -q --unwind=report -o raw.data -- "$WORKLOADS/wallclock" 1
check_num "wallclock: record exits 0" "$rc" -eq 0
convert wallclock
spinner=$(wl_field wl.out spinner tid)
locker=$(wl_field wl.out locker tid)
same "folded" --format folded
same "folded --wakers, in ns" --format folded --wakers --unit ns
"$WALLPROF" report -q -i raw.data --format json > a.json
"$WALLPROF" report -q -i live.data --format json > b.json
python3 "$J" threads a.json > a.threads
python3 "$J" threads b.json > b.threads
check_num "json: the ledger has the workload's threads" "$(nlines a.threads)" -ge 6
check "json: the per-thread ledger is the same" cmp -s a.threads b.threads
python3 "$J" stacks a.json > a.stacks
python3 "$J" stacks b.json > b.stacks
check "json: the stacks are the same" cmp -s a.stacks b.stacks
python3 "$J" wakers a.json > a.wakers
python3 "$J" wakers b.json > b.wakers
check "json: the wakers are the same" cmp -s a.wakers b.wakers
# All of the JSON but the unwinder's cache hits: none when converted.
nocache < a.json > a.jsonc
nocache < b.json > b.jsonc
check "json: the whole document is the same (but cache hits)" cmp -s a.jsonc b.jsonc
same "text" --format text
same "text --time 0.2,0.6" --time 0.2,0.6
same "json ledger --time 0.3,0.7" --format json --time 0.3,0.7
same "folded --time 0.3,0.7 --mode off" --format folded --time 0.3,0.7 --mode off
same "folded --tid spinner,locker --mode on" --format folded --tid "$spinner,$locker" --mode on
same "folded --no-kernel" --format folded --no-kernel
same "folded --no-user --mode blocked" --format folded --no-user --mode blocked
same "folded --grep wc_lock" --format folded --grep wc_lock
same "hist --per-thread" --format hist --per-thread
same "trace" --format trace
same "flamegraph" --format flamegraph
same "pprof" --format pprof
same "text --lines" --lines
same "text --by thread --sort on" --by thread --sort on

# Recursions deeper than the frame limit, and than a 1 KiB stack copy:
# the unwinder's marks (frame limit, truncated) survive conversion.
for g in dwarf dwarf,1024; do
	run wl.out rec.err "$WALLPROF" record -q -f --unwind=report -g "$g" -o raw.data -- "$WORKLOADS/recurse" 2000 0.4
	check_num "recurse -g $g: record exits 0" "$rc" -eq 0
	convert "recurse -g $g"
	same "recurse -g $g: folded" --format folded
	same "recurse -g $g: text" --format text --mode on
done

# Frame-pointer callchains: user frames from the kernel's callchain.
run wl.out rec.err "$WALLPROF" record -q -f --unwind=report -g fp -o raw.data -- "$WORKLOADS/wallclock" 0.5
check_num "-g fp: record exits 0" "$rc" -eq 0
convert "-g fp"
same "-g fp: folded" --format folded
same "-g fp: json" --format json --top 1000

# A CPU-bound workload, 50 frames deep: the file keeps one copy of each
# distinct stack, and a short record per sample.
run wl.out rec.err "$WALLPROF" record -q -f --unwind=report -o raw.data -- "$WORKLOADS/recurse" 50 2
check_num "cpu-bound: record exits 0" "$rc" -eq 0
convert cpu-bound
same "cpu-bound: folded" --format folded
raw=$(size raw.data)
live=$(size live.data)
echo "# recurse 50, 2 s: raw $raw bytes, converted $live bytes," \
	"ratio 1/$((raw / (live ? live : 1)))"
check_num "cpu-bound: the converted file is less than a quarter of the raw one" \
	$((live * 4)) -lt "$raw"
start=$(date +%s%N)
"$WALLPROF" report -q -i raw.data --format folded > /dev/null
mid=$(date +%s%N)
"$WALLPROF" report -q -i live.data --format folded > /dev/null
end=$(date +%s%N)
echo "# recurse 50: report --format folded takes $(((mid - start) / 1000000)) ms raw," \
	"$(((end - mid) / 1000000)) ms converted"

# Bad use: one clear sentence, a non-zero exit, no output left behind.
run c.out c.err "$WALLPROF" convert -i live.data -o again.data
check_num "converting a converted file fails" "$rc" -eq 1
check "converting a converted file says why" grep -q 'needs no conversion' c.err
check "converting a converted file leaves no output" [ ! -e again.data ]
run c.out c.err "$WALLPROF" convert -i raw.data -o live.data
check_num "an existing output is not replaced without -f" "$rc" -eq 1
run c.out c.err "$WALLPROF" convert -i missing.data -o out.data
check_num "a missing input fails" "$rc" -eq 1
check "a missing input says so in one line" [ "$(nlines c.err)" -eq 1 ]
run c.out c.err "$WALLPROF" convert -i raw.data -o raw.data
check_num "the input as output is a usage error" "$rc" -eq 2
cp raw.data cpu.data
run c.out c.err "$WALLPROF" convert -q -i cpu.data
check_num "the default output name: convert -q exits 0" "$rc" -eq 0
check "the default output is NAME.unwound.data" [ -s cpu.unwound.data ]
check "-q prints nothing" [ ! -s c.err ]
finish
