# folded-unsampled.sh: folded stacks of off-CPU time without a stack keep
# the format's grammar.  Above the switch-out stack budget, a thread whose
# switch-outs all went unsampled has its off-CPU time on the pseudo-stack
# [off-cpu: not sampled]; folded output wrote it as a frame before the
# marker of its kind ("wakeups;[off-cpu: not sampled];[off-cpu:runnable]"),
# a second marker where only the last frame may be one.  With a budget of
# one stack a second, and every CPU busy switching (the overload
# workload), the stacks are off from the first milliseconds on: a pipe's
# reader and writer started later switch out hundreds of times, nearly
# all without a stack, and their wake-ups, which follow the budget, are
# mostly unrecorded.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
PARSE="$TESTS_SRCDIR/integration/folded-parse.awk"
"$WALLPROF" record -q --wakeups=stacks -o probe.data -- true 2>probe.err ||
	skip "wake-ups cannot be recorded here: $(head -n 1 probe.err)"
tracing_alone

# pseudo JSON: "comm<TAB>kind<TAB>ns" of the stacks [off-cpu: not sampled].
pseudo() {
	python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["stacks"]:
    if [f["name"] for f in s["frames"]] == ["[off-cpu: not sampled]"]:
        print("%s\t%s\t%d" % (s["comm"], s["kind"], s["ns"]))' "$1"
}

# folded_sum FILE KIND: the weights of the [not sampled] lines of KIND.
folded_sum() {
	awk -v k="$2" '/;\[not sampled\];\[off-cpu:/ {
		m = $0; sub(/^.*;\[not sampled\];\[off-cpu:/, "", m); sub(/[] (].*$/, "", m)
		if (m == k) s += $NF } END { printf "%.0f\n", s }' "$1"
}

run rec.out rec.err "$WALLPROF" record -q --switch-stacks=1 -o u.data -- sh -c \
	"'$WORKLOADS/wakeups' overload 1.2 >overload.out & sleep 0.4; exec '$WORKLOADS/wakeups' pipe 0.5"
check_num "record exits 0" "$rc" -eq 0
run u.json u.jerr "$WALLPROF" report -i u.data --format json --top 1000 --mode wall
check_num "report exits 0" "$rc" -eq 0
pseudo u.json >u.pseudo
# (Which threads: those none of whose waits of a kind got a stack; on a
# loaded machine the budget's slots may catch one of the reader's.)
sed 's/^/# pseudo-stack: /' u.pseudo
check_num "off-CPU time without a sampled stack (the case)" \
	"$(awk -F '\t' '{ s += $3 } END { printf "%.0f\n", s }' u.pseudo)" -gt 0
for m in wall off blocked runnable preempted; do
	run u.$m.f u.$m.ferr "$WALLPROF" report -i u.data --format folded --unit ns --mode $m
	check_num "--mode $m: report exits 0" "$rc" -eq 0
	check "--mode $m: strict parse" awk -v mode=$m -v allow_empty=1 -f "$PARSE" u.$m.f
done
for kind in blocked runnable preempted; do
	want=$(awk -F '\t' -v k=$kind '$2 == k { s += $3 } END { printf "%.0f\n", s }' u.pseudo)
	check_num "[not sampled] $kind lines carry the pseudo-stack's $want ns" \
		"$(folded_sum u.wall.f $kind)" -eq "$want"
done
run u.w.f u.w.ferr "$WALLPROF" report -i u.data --format folded --unit ns --wakers
check_num "--wakers: report exits 0" "$rc" -eq 0
check "--wakers: strict parse" awk -v wakers=1 -f "$PARSE" u.w.f
check "--wakers: the same time as without" \
	[ "$(awk '{ s += $NF } END { printf "%.0f", s }' u.w.f)" = \
	  "$(awk '{ s += $NF } END { printf "%.0f", s }' u.wall.f)" ]
check "no frame but the marker starts with [off-cpu" \
	awk '{ sub(/;--;.*/, ""); if ($0 ~ /\[off-cpu[^;]*;/) n++ } END { exit n > 0 }' u.w.f
finish
