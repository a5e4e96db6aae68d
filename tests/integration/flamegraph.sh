# flamegraph.sh: `wallprof report --format flamegraph`: the SVG of a
# recording of the wallclock workload is well-formed XML with nothing
# outside it, its frames are the workload's threads and functions, and
# their widths are the accounting's times (the JSON report's, to the
# nanosecond); --mode, --inverted and --title change what they should;
# headless Chromium runs its script's self-test (it loaded without an
# error, the root frame spans the width, a click on a frame zooms it to
# the full width, a search finds it, reset zooms out) and takes a
# screenshot; a profile of many thousands of distinct stacks stays small.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the SVG back"
command -v xmllint >/dev/null 2>&1 || skip "no xmllint (Debian's libxml2-utils, which tools/deps.sh installs)"
FG="$TESTS_SRCDIR/integration/flamegraph.py"
SHOT="$TESTS_SRCDIR/../tools/flamegraph-shot"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] ||
	skip_check "the SVGs open in a browser" "no chromium (tools/deps.sh installs it)"

# report OUT ARGS...: `wallprof report -i F ARGS... -o OUT`: exit 0, nothing on stderr.
report() {
	_o=$1; shift
	run out.txt "$_o.err" "$WALLPROF" report -i F "$@" -o "$_o"
	if [ "$rc" -eq 0 ] && [ -s "$_o" ] && [ ! -s "$_o.err" ]; then
		ok "report $*: exit 0, an SVG, nothing on stderr"
	else
		fail "report $*: exit 0 (got $rc), an SVG, nothing on stderr"
		head -n 3 "$_o.err"
	fi
}
# frame SVG DEPTH NAME: the ns of the frame of that name at that depth (sum).
frame_ns() {
	python3 "$FG" frames "$1" | awk -F '\t' -v d="$2" -v n="$3" \
		'$1 == d && $7 == n { s += $3 } END { printf "%.0f\n", s }'
}
# selftest SVG: the line the SVG's script writes when opened with #selftest.
selftest() {
	timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --dump-dom \
		--virtual-time-budget=5000 "file://$tmp/$1#selftest" 2>/dev/null |
		sed -n 's/.*<text id="selftest"[^>]*>\(selftest: [^<]*\)<.*/\1/p'
}
# matches TEXT ERE: TEXT matches (for check).
matches() { printf '%s\n' "$1" | grep -Eq -e "$2"; }
# self_contained SVG: no reference to anything outside the file.
self_contained() {
	! grep -v 'xmlns="http://www.w3.org/2000/svg"' "$1" | grep -Eq 'href=|src=|url\(|@import|https?://'
}

record_wallclock 0.7
run j.json j.err "$WALLPROF" report -i F --format json
check_num "json report exits 0" "$rc" -eq 0

# --- Wall mode: every thread's whole time, a root frame per thread name ----
# (The default leaves out idle threads' waits: see the explain section below.)
report fg.svg --format flamegraph --mode wall
check "xmllint --noout accepts it" xmllint --noout fg.svg
check "no external reference: the script and style are inside" self_contained fg.svg
check "it has its script and its style" grep -q 'function fg_zoom' fg.svg
check "the frames nest and their widths are their times" python3 "$FG" check fg.svg
python3 "$FG" check fg.svg | sed 's/^/# /' | head -n 5
python3 "$FG" frames fg.svg >frames.txt
for f in wc_spin_leaf wc_spinner wc_sleep_once wc_lock_round wc_pipe_wait \
	'[off-cpu:blocked]'; do
	check "a frame named $f" awk -F '\t' -v n="$f" '$7 == n { f = 1 } END { exit !f }' frames.txt
done
check "the legend has on-CPU and blocked" grep -q '>blocked</text>' fg.svg
check "the title says wall-clock" grep -q '>Wall-clock flame graph<' fg.svg
host=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["header"]["hostname"])' j.json)
check "the subtitle names the command" grep -Fq "wallclock 0.7 " fg.svg
check "the subtitle names the host" grep -Fq " on $host<" fg.svg
wall=$(python3 "$FG" json-sum j.json wall_ns)
check_num "the root frame is every thread's wall time (json)" "$(frame_ns fg.svg 0 all)" -eq "$wall"
for t in spinner sleeper locker locker2 reader wallclock; do
	check_num "the root frame of $t is its wall time" "$(frame_ns fg.svg 1 "$t")" -eq \
		"$(python3 "$FG" json-sum j.json wall_ns "$t")"
done

# --- --mode: one kind alone --------------------------------------------------
report on.svg --format flamegraph --mode on
check_num "--mode on: the root frame is the on-CPU time" "$(frame_ns on.svg 0 all)" -eq \
	"$(python3 "$FG" json-sum j.json on_cpu_ns)"
check "--mode on: no off-CPU frame" no_match 'off-cpu:' on.svg
check "--mode on: no blocked swatch" no_match '>blocked</text>' on.svg
check "--mode on: the title says on-CPU" grep -q '>On-CPU flame graph<' on.svg
report blocked.svg --format flamegraph --mode blocked --no-thread-root
check_num "--mode blocked: the root frame is the blocked time" "$(frame_ns blocked.svg 0 all)" -eq \
	"$(python3 "$FG" json-sum j.json blocked_ns)"
check "--no-thread-root: no thread frame" \
	no_match '<title>(spinner|sleeper|locker|reader)&#10;' blocked.svg
report spinner.svg --format flamegraph --comm spinner
check_num "--comm: only that thread's time" "$(frame_ns spinner.svg 0 all)" -eq \
	"$(python3 "$FG" json-sum j.json wall_ns spinner)"
check "--comm: the subtitle says so" grep -q 'only --comm spinner' spinner.svg

# --- --inverted: an icicle from the leaves -----------------------------------
report inv.svg --format flamegraph --inverted --mode wall
check "--inverted: well-formed" xmllint --noout inv.svg
check "--inverted: the frames nest" python3 "$FG" check inv.svg
python3 "$FG" frames inv.svg >inv.txt
check "--inverted: the root is the top row" awk -F '\t' '$1 == 0 { r = $5 } $1 > 0 && $5 <= r { bad = 1 }
	END { exit bad || r == "" }' inv.txt
check "--inverted: leaves and markers are the first row" \
	awk -F '\t' '$1 == 1 && ($7 == "wc_spin_leaf" || $7 == "[off-cpu:blocked]") { n++ } END { exit n < 2 }' inv.txt
check "--inverted: thread names are outermost" \
	awk -F '\t' '$1 > 1 && $7 == "spinner" { f = 1 } END { exit !f }' inv.txt
check_num "--inverted: the same total" "$(frame_ns inv.svg 0 all)" -eq "$wall"
check "--inverted: the title says icicle" grep -q 'icicle graph' inv.svg

# --- --title: the user's text, quoted ----------------------------------------
report title.svg --format flamegraph --title 'Before <the> "fix" & after'
check "--title: still well-formed XML" xmllint --noout title.svg
check "--title: the text, exactly" test "$(python3 "$FG" title title.svg)" = 'Before <the> "fix" & after'

# --- In a browser --------------------------------------------------------------
if [ -n "$browser" ]; then
	st=$(selftest fg.svg)
	echo "# $st"
	check "chromium: the script's self-test passes" matches "$st" '^selftest: ok '
	check "chromium: it zoomed to a thread frame" \
		matches "$st" ' picked=(spinner|sleeper|locker|locker2|reader|wallclock) '
	st=$(selftest inv.svg)
	echo "# inverted: $st"
	check "chromium: the inverted graph's self-test passes" matches "$st" '^selftest: ok '
	run shot.out shot.err sh "$SHOT" fg.svg fg.png
	check_num "tools/flamegraph-shot exits 0" "$rc" -eq 0
	head -n 3 shot.err
	check "the screenshot is a PNG" sh -c 'head -c 8 fg.png | od -An -c | grep -q "P   N   G"'
	check_num "the screenshot has some size" "$(wc -c <fg.png)" -ge 20000
fi

# --- A big profile: thousands of distinct stacks ---------------------------------
# Samples of a path of 17 calls out of 2^17, at a high rate, over 2 s of
# the workload's CPU time (however long a busy machine takes to give it):
# some 40,000 samples, nearly all of them distinct stacks.
run big.out big.err "$WALLPROF" record -q -F 20000 -g fp -o B -- "$WORKLOADS/branches" 17 2
check_num "record of the branches workload exits 0" "$rc" -eq 0
run big.folded big.ferr "$WALLPROF" report -i B --format folded --unit ns
distinct=$(nlines big.folded)
echo "# distinct stacks: $distinct"
check_num "the big profile has many distinct stacks" "$distinct" -ge 3000
# Every prefix of a stack is a frame of the whole tree.
nodes=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); k = ""
	for (i = 1; i <= n; i++) { k = k ";" f[i]; if (!(k in s)) { s[k] = 1; c++ } } }
	END { print c + 1 }' big.folded)
# (Its CPU time: a busy machine stretches the wall time, not that.)
run out.txt big.err python3 "$TESTS_SRCDIR/integration/cputime.py" big.cpu \
	"$WALLPROF" report -i B --format flamegraph -o big.svg
check_num "report --format flamegraph of it exits 0" "$rc" -eq 0
check_num "it takes at most 10 s of CPU, ms" "$(($(cut -d ' ' -f 2 big.cpu) / 1000000))" -le 10000
check "the big SVG is well-formed" xmllint --noout big.svg
check "the big SVG's frames nest" python3 "$FG" check big.svg
nframes=$(python3 "$FG" frames big.svg | wc -l)
echo "# frames drawn: $nframes of $nodes in $distinct stacks, $(wc -c <big.svg) bytes"
check_num "narrow frames are merged: fewer drawn than the tree has" "$nframes" -lt "$nodes"
check_num "at most 16000 frames drawn" "$nframes" -le 16000
check_num "the big SVG stays under 5 MB" "$(wc -c <big.svg)" -le 5000000
check_num "merging keeps the total: root = folded total" "$(frame_ns big.svg 0 all)" -eq \
	"$(awk '{ s += $NF } END { printf "%.0f\n", s }' big.folded)"
if [ -n "$browser" ]; then
	st=$(selftest big.svg)
	echo "# big: $st"
	check "chromium: the big graph's self-test passes" matches "$st" '^selftest: ok '
fi

# --- --diff: the function that got hot is what grew most -----------------------
run a.out a.err "$WALLPROF" record -q -o A -- "$WORKLOADS/hotswap" alpha 1
check_num "record hotswap alpha exits 0" "$rc" -eq 0
run b.out b.err "$WALLPROF" record -q -o B2 -- "$WORKLOADS/hotswap" beta 1
check_num "record hotswap beta exits 0" "$rc" -eq 0
run diff.txt diff.err "$WALLPROF" report -i B2 --diff A
check_num "report --diff exits 0" "$rc" -eq 0
sed 's/^/# /' diff.txt | head -n 12
check "text: hs_beta grew most" test "$(awk '/^Grew most:/ { getline; getline; print $NF; exit }' diff.txt)" = hs_beta
check "text: hs_alpha shrank most" test "$(awk '/^Shrank most:/ { getline; getline; print $NF; exit }' diff.txt)" = hs_alpha
run out.txt dsvg.err "$WALLPROF" report -i B2 --diff A --format flamegraph -o diff.svg
check_num "report --diff --format flamegraph exits 0" "$rc" -eq 0
check "the differential SVG is well-formed" xmllint --noout diff.svg
check "the differential SVG's frames nest" python3 "$FG" check diff.svg
# The frame of largest growth is hs_beta (or hs_spin, called only from it).
top=$(sed -n 's/.*data-delta="\([-0-9]*\)"><title>\([^&]*\)&#10;.*/\1 \2/p' diff.svg | sort -n | tail -n 1)
echo "# largest growth: $top"
check "flamegraph: hs_beta holds the largest growth" \
	test "$(sed -n 's/.*data-delta="\([-0-9]*\)"><title>hs_beta&#10;.*/\1/p' diff.svg)" = "${top%% *}"
check_num "flamegraph: by over 30 points of the total" "${top%% *}" -ge 300000
run out.txt dj.err "$WALLPROF" report -i B2 --diff A --format json
check_num "--diff with json: a usage error" "$rc" -eq 2
check "--diff with json: says which formats compare" grep -q 'text and flamegraph' dj.err
run out.txt dm.err "$WALLPROF" report -i B2 --diff missing.data
check_num "--diff with a missing base: exit 1" "$rc" -eq 1
check "--diff with a missing base: one line naming it" grep -q "cannot open 'missing.data'" dm.err
rm -f dm.svg
run out.txt dm.err "$WALLPROF" report -i B2 --diff missing.data --format flamegraph -o dm.svg
check "--diff with a missing base: no empty -o file left" [ ! -e dm.svg ]
if [ -n "$browser" ]; then
	st=$(selftest diff.svg)
	echo "# diff: $st"
	check "chromium: the differential graph's self-test passes" matches "$st" '^selftest: ok '
fi

finish
