# live-names.sh: a live recording (and a conversion) names the places of
# its stack table at its end and keeps the names in the file: after the
# recorded binary is deleted and with no symbol cache, every report of
# the file is the report made before, with nothing on stderr, and the
# binary's functions, inlined calls and source lines are there.  A live
# file without the names (as written before they existed) names its
# places from the binaries, the same, and without them shows addresses.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

# Formats and options whose output is compared, one set a line.
cat > views <<'END'
--format folded
--format folded --wakers --no-kernel
--format text --lines
--format json
--format pprof
--format flamegraph
--format trace
--format hist --per-thread
END

# report_all DIR TAG: every view of DIR/rec.data (its name in the
# reports always rec.data) into TAG.N.out, stderr into TAG.N.err.
report_all() {
	_n=0
	while read -r _args; do
		_n=$((_n + 1))
		# shellcheck disable=SC2086
		(cd "$1" && "$WALLPROF" report -i rec.data $_args) > "$2.$_n.out" 2> "$2.$_n.err"
	done < views
}

# same_all TAG1 TAG2 WHAT: every view the same, and TAG2 said nothing.
same_all() {
	_n=0
	while read -r _args; do
		_n=$((_n + 1))
		if [ -s "$1.$_n.out" ] && cmp -s "$1.$_n.out" "$2.$_n.out" && [ ! -s "$2.$_n.err" ]; then
			ok "$3: $_args"
		else
			fail "$3: $_args"
			diff "$1.$_n.out" "$2.$_n.out" | head -n 6
			head -n 3 "$2.$_n.err"
		fi
	done < views
}

mkdir bin cache live conv old oldconv
# The workload as a program of its own, in a directory about to go.
cp "$WORKLOADS/wallclock" bin/wlnames
cp "$WORKLOADS/deep-inline" bin/inlnames
run wl.out rec.err "$WALLPROF" record -q --unwind=live -o live/rec.data -- bin/wlnames 1
check_num "record --unwind=live exits 0" "$rc" -eq 0
run wl.out rec.err "$WALLPROF" record -q --unwind=report -o raw.data -- bin/inlnames 20 0.5
check_num "record (raw) exits 0" "$rc" -eq 0
run c.out conv.err "$WALLPROF" convert -f -i raw.data -o conv/rec.data
check_num "convert exits 0" "$rc" -eq 0
check "convert says how many places it named" grep -Eq '\(([1-9][0-9]*) named\)' conv.err
cat conv.err
WALLPROF_TEST_NO_NAMES=1 "$WALLPROF" record -q --unwind=live -o old/rec.data -- bin/wlnames 0.5 > /dev/null 2>&1
WALLPROF_TEST_NO_NAMES=1 "$WALLPROF" convert -q -f -i raw.data -o oldconv/rec.data
for f in live conv old oldconv; do
	dump $f/rec.data $f.dump
done
check "the live file holds names" grep -Eq '^# place names saved: [1-9][0-9]* places' live.dump
check "the converted file holds names" grep -Eq '^# place names saved: [1-9][0-9]* places' conv.dump
check "an old live file holds none" no_match 'place names saved' old.dump
check "an old converted file holds none" no_match 'place names saved' oldconv.dump

# Before: the binaries there, names from the files or from the file.
export WALLPROF_NO_CACHE=1
report_all live live-before
report_all conv conv-before
report_all oldconv oldconv-before
report_all old old-before
same_all conv-before oldconv-before "names saved or found in the binary, the same"
check "the live report names the workload's functions" grep -q 'wc_spin_outer;wc_spin_middle_\[i\];wc_spin_leaf' live-before.1.out
check "the converted report names inlined calls ([i])" grep -Eq 'dl_[a-z_]*_\[i\]' conv-before.1.out
check "--lines shows source lines" grep -Eq 'wc_spin_leaf \(wallclock\.c:[0-9]+\)' live-before.3.out
check "the old live file names the workload's functions" grep -q 'wc_spin_leaf' old-before.1.out

# After: the binaries gone, an empty symbol cache: the same, without a
# word, and nothing for the cache (no frame was named from a file).
rm -f bin/wlnames bin/inlnames
unset WALLPROF_NO_CACHE
XDG_CACHE_HOME=$PWD/cache
export XDG_CACHE_HOME
report_all live live-after
report_all conv conv-after
same_all live-before live-after "live, binary deleted"
same_all conv-before conv-after "converted, binary deleted"
check "nothing was put in the symbol cache" [ -z "$(find cache -type f)" ]

# A debug file installed after the recording names what the file could
# not: the saved names are a cache, not the last word.  The workload
# stripped, its debug file away while it is recorded, then put beside it
# (where its .gnu_debuglink is looked for).
objcopy --only-keep-debug "$WORKLOADS/wallclock" wlstrip.debug
objcopy --strip-all --add-gnu-debuglink=wlstrip.debug "$WORKLOADS/wallclock" bin/wlstrip
mkdir stripped
run s.out s.err "$WALLPROF" record -q --unwind=live -o stripped/rec.data -- bin/wlstrip 1
check_num "record --unwind=live of a stripped binary exits 0" "$rc" -eq 0
export WALLPROF_NO_CACHE=1
(cd stripped && "$WALLPROF" report -i rec.data --format folded) > strip-before.out 2>&1
check "without its debug file, its frames are addresses" grep -q 'wlstrip+0x' strip-before.out
check "and its functions have no names" no_match 'wc_spin_leaf' strip-before.out
mv wlstrip.debug bin/
(cd stripped && "$WALLPROF" report -i rec.data --format folded) > strip-after.out 2>&1
check "with its debug file installed since, its functions are named" \
	grep -q 'wc_spin_outer;wc_spin_middle_\[i\];wc_spin_leaf' strip-after.out
check "and none of its frames is left an address" no_match 'wlstrip\+0x' strip-after.out
(cd stripped && "$WALLPROF" report -i rec.data --format text --lines) > strip-lines.out 2>&1
check "--lines shows the source lines it gives" grep -Eq 'wc_spin_leaf \(wallclock\.c:[0-9]+\)' strip-lines.out
unset WALLPROF_NO_CACHE

# An old file without its binary: still a report, frames as addresses.
export WALLPROF_NO_CACHE=1
run o.out o.err "$WALLPROF" report -i old/rec.data --format folded
check_num "an old live file without its binary still reports" "$rc" -eq 0
check "it says the binary is missing" grep -q "cannot open '.*wlnames'" o.err
check "its frames in the binary are addresses" grep -q 'wlnames+0x' o.out
finish
