# pprof-kinds.sh: one pprof function per kind of off-CPU time, with
# "estimated" a label, and the recorded program as the main binary.
# Estimated time had a marker of its own, "[off-cpu:preempted
# (estimated)]", which pprof shortens as it does C++ parameter lists, to
# "[off-cpu:preempted ]": -top showed two or three preempted rows.  And
# the profile's first mapping, which pprof takes for the main binary
# ("File:" of -top), was whichever file came first, [kernel.kallsyms].
# Read back by go tool pprof (Debian's golang-go), on a recording with
# a switch-out stack budget low enough that some of each kind's time is
# estimated and some is not.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
command -v go >/dev/null 2>&1 ||
	skip "go is missing (Debian package golang-go): no pprof to read the profile with"
# No network, no writes outside the test's directory.
HOME=$tmp GOCACHE=$tmp/gocache GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
export HOME GOCACHE GOTOOLCHAIN GOPROXY GOFLAGS

run wl.out rec.err "$WALLPROF" record -q --switch-stacks=30 -o E -- "$WORKLOADS/wakeups" overload 1
check_num "record exits 0" "$rc" -eq 0
run J jerr "$WALLPROF" report -i E --format json --top 1000000
check_num "report --format json exits 0" "$rc" -eq 0
run out err "$WALLPROF" report -i E --format pprof -o P
check_num "report --format pprof exits 0" "$rc" -eq 0

# estimated JSON: "kind<TAB>estimated ns<TAB>plain ns" of each off-CPU kind,
# the stacks split by the rule of the markers (1% estimated or more).
python3 -c '
import json, sys
t = {}
for s in json.load(open(sys.argv[1]))["stacks"]:
    if s["kind"] == "on-cpu":
        continue
    e = s["estimated_ns"] and s["estimated_ns"] >= s["ns"] // 100
    k = t.setdefault(s["kind"], [0, 0])
    k[0 if e else 1] += s["ns"]
for kind, (e, p) in sorted(t.items()):
    print("%s\t%d\t%d" % (kind, e, p))' J >split
cat split | sed 's/^/# JSON: /'
check_num "the case: a kind with time both estimated and not" \
	"$(awk -F '\t' '$2 > 0 && $3 > 0 { n++ } END { print n + 0 }' split)" -gt 0

go tool pprof -raw P >R 2>raw.err
check_num "go tool pprof -raw reads the profile" $? -eq 0
# The functions of the locations: "N: 0xADDR [M=N] NAME FILE:LINE s=0".
awk '/^Locations/ { l = 1; next } /^[A-Z][a-z]+/ { l = 0 }
	l && /^ +[0-9]+: / { sub(/^ +[0-9]+: 0x[0-9a-f]+ (M=[0-9]+ )?/, ""); sub(/ [^ ]*:[0-9]+ s=.*$/, "");
		print }' R | sort -u >functions
for kind in blocked preempted runnable; do
	check_num "$kind: at most one function is its marker" \
		"$(grep -c "^\[off-cpu:$kind" functions)" -le 1
done
check "no function says estimated, shortened or not" \
	no_match 'estimated|^\[off-cpu:[a-z]+ \]' functions
go tool pprof -top -nodecount=100000 -sample_index=wall P >TOP 2>top.err
check_num "go tool pprof -top exits 0" $? -eq 0
for kind in blocked preempted runnable; do
	check_num "$kind: at most one -top row" "$(grep -c "\[off-cpu:$kind" TOP)" -le 1
done
check "no -top row of a shortened marker" no_match '\[off-cpu:[a-z]+ \]' TOP

# wall RAW: the wall values (the second column) of the samples, summed.
wall() {
	awk '/^Samples:/ { s = 1; getline; next } /^[A-Z][a-z]+:?$/ { s = 0 }
	     s && /^ *[0-9]+( +[0-9]+)+:/ { t += $2 } END { printf "%.0f\n", t }' "$1"
}
est=$(awk -F '\t' '{ s += $2 } END { printf "%.0f\n", s }' split)
go tool pprof -raw -tagfocus=estimated=true P >RE 2>/dev/null
check "the estimated label holds the JSON's estimated stacks' $est ns" \
	[ "$(wall RE)" = "$est" ]
go tool pprof -raw -tagignore=estimated=true P >RP 2>/dev/null
check "the others hold the rest of the profile's time" \
	[ "$(($(wall RP) + $(wall RE)))" = "$(wall R)" ]
check_num "no on-CPU sample is estimated" \
	"$(grep -c 'estimated:\[true\] state:\[on-cpu\]' R)" -eq 0

# The main binary: the launched program's file, named in -top's header.
first=$(awk '/^Mappings/ { getline; print $3; exit }' R)
check "the first mapping is the program's file" [ "$first" -ef "$WORKLOADS/wakeups" ]
check "-top names the program" grep -qx 'File: wakeups' TOP
finish
