#!/bin/sh
# report-cache.sh: the symbol cache.  A report is the same with it (warm),
# without it (--no-cache, WALLPROF_NO_CACHE) and as the first one (cold),
# in the formats whose names it keeps (plain, --lines, pprof's frame
# details); a damaged cache file (cut, bits flipped, garbage) is passed
# over and replaced, reports running at once all get the same report and
# leave whole files; a cache that cannot be made costs nothing but time,
# silently; a symbolic link in the cache is never written through.  The
# recordings keep the stack copies (--unwind=report): report names their
# frames, and keeps the names; a file unwound live names them itself.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
unset WALLPROF_NO_CACHE
cache=$XDG_CACHE_HOME/wallprof

run rec.out rec.err "$WALLPROF" record -q --unwind=report -o S -- "$WORKLOADS/spin" 0.5
check_num "record" "$rc" -eq 0

# report NAME ARGS...: the report of S into NAME.out (stderr NAME.err).
report() {
	_n=$1; shift
	run "$_n.out" "$_n.err" "$WALLPROF" report -q -i S "$@"
}

# --- cold and warm --------------------------------------------------------
WALLPROF_NO_CACHE=1 report cold --format folded
check_num "a report without the cache" "$rc" -eq 0
check "WALLPROF_NO_CACHE=1: no cache directory is made" test ! -e "$cache"
report nocache --format folded --no-cache
check "--no-cache: the same report" cmp -s cold.out nocache.out
check "--no-cache: no cache directory is made" test ! -e "$cache"
report first --format folded
check "the first report with a cache is the same" cmp -s cold.out first.out
check "it keeps the names of the files it named (build-id.kind.sym)" \
	sh -c "ls '$cache' | grep -Eq '^[0-9a-f]+\.0\.sym$'"
check "the cache directory is private (0700)" sh -c "stat -c %a '$cache' | grep -qx 700"
check "and its files (0600)" sh -c "! find '$cache' -type f ! -perm 600 | grep -q ."
report warm --format folded
check "a report from the cache is the same" cmp -s cold.out warm.out
check "and says nothing" test ! -s warm.err

# A first report starts decompressing libc's debug file as soon as it
# reads libc's mapping; one whose names are in the cache does not.
dump S d
id=$(awk '$2 == "MMAP2" && /\/libc\.so/ { for (i = 1; i < NF; i++)
	if ($i == "build-id") { print $(i + 1); exit } }' d)
debug=/usr/lib/debug/.build-id/$(printf '%s' "$id" | cut -c 1-2)/$(printf '%s' "$id" | cut -c 3-).debug
if [ -n "$id" ] && [ -f "$debug" ]; then
	XDG_CACHE_HOME=$tmp/cache2 run ahead1.out ahead1.err "$WALLPROF" report -v -i S --format folded
	check "first report: libc's debug file decompressed ahead" \
		grep -qF "decompressing '$debug' ahead" ahead1.err
	check "first report: the same report" cmp -s cold.out ahead1.out
	XDG_CACHE_HOME=$tmp/cache2 run ahead2.out ahead2.err "$WALLPROF" report -v -i S --format folded
	check "second report: not, its names are in the cache" \
		no_match "decompressing '$debug' ahead" ahead2.err
	check "first report: deliveries held while it decompresses" \
		grep -Eq 'deliveries were held while debug files decompressed' ahead1.err
	# An attached spinner never runs ld.so: ld.so's debug file, decompressed
	# ahead all the same, gets an empty cache file, and the next report
	# decompresses nothing.
	"$WORKLOADS/spin" 3 >/dev/null &
	sp=$!
	bg_pids="$bg_pids $sp"
	sleep 0.3
	run arec.out arec.err "$WALLPROF" record -q --unwind=report -o A -p "$sp" -d 0.5
	check_num "record an attached spinner" "$rc" -eq 0
	kill "$sp" 2>/dev/null
	XDG_CACHE_HOME=$tmp/cache5 run un1.out un1.err "$WALLPROF" report -v -i A --format folded
	check "attached: the first report decompresses debug files ahead" \
		grep -q 'ahead' un1.err
	check "attached: ld.so is not named" no_match 'ld-linux|_dl_' un1.out
	XDG_CACHE_HOME=$tmp/cache5 run un2.out un2.err "$WALLPROF" report -v -i A --format folded
	check "attached: the second decompresses none, not even ld.so's" no_match 'ahead' un2.err
	check "attached: the same report" cmp -s un1.out un2.out
	# A storm's wake-ups, run-queue entries and switches are held too, in
	# their order: the same in every format as a report from the cache,
	# which holds none unless a file it maps was never named.
	run prec.out prec.err "$WALLPROF" record -q --unwind=report -o P -- "$WORKLOADS/pingpong" 0.3
	check_num "record a storm" "$rc" -eq 0
	# (Deliveries are held only while a debug file is still being
	# decompressed: a first report that finds them done holds none.)
	held=''
	for f in text json trace; do
		XDG_CACHE_HOME=$tmp/cache-$f run "held.$f" "held-$f.err" \
			"$WALLPROF" report -v -i P --format "$f"
		grep -q 'deliveries were held' "held-$f.err" && held="$held $f"
		XDG_CACHE_HOME=$tmp/cache-$f run "direct.$f" "direct-$f.err" \
			"$WALLPROF" report -v -i P --format "$f"
		check "storm, $f: first report and from the cache, the same" \
			cmp -s "held.$f" "direct.$f"
	done
	if [ -n "$held" ]; then
		ok "storm: first reports held deliveries ($held) and gave the same as from the cache"
	else
		skip_check "storm: first reports held deliveries" \
			"the debug files were decompressed before any delivery, in all three"
	fi
else
	skip_check "storm: held deliveries and the cache give the same reports" \
		"no libc debug file by build id ($id) (Debian: libc6-dbg)"
fi
for kind in "--lines" "--lines --wakers"; do
	# shellcheck disable=SC2086 # the options are words
	WALLPROF_NO_CACHE=1 report kcold $kind --format folded
	# shellcheck disable=SC2086
	report kfirst $kind --format folded
	# shellcheck disable=SC2086
	report kwarm $kind --format folded
	check "$kind: the same report cold, first and from the cache" \
		sh -c "cmp -s kcold.out kfirst.out && cmp -s kcold.out kwarm.out"
done
WALLPROF_NO_CACHE=1 run pcold.out pcold.err "$WALLPROF" report -q -i S --format pprof -o pcold.pb
run pwarm.out pwarm.err "$WALLPROF" report -q -i S --format pprof -o pwarm.pb
check "pprof (frames' files, entries and source lines): the same profile from the cache" \
	cmp -s pcold.pb pwarm.pb
check "a kind of report of its own for pprof" sh -c "ls '$cache' | grep -Eq '\.2\.sym$'"

# --- damaged files ----------------------------------------------------------
mkdir good
cp "$cache"/*.0.sym good/
for how in cut flip garbage empty; do
	for f in good/*.0.sym; do
		c=$cache/${f#good/}
		size=$(stat -c %s "$f")
		case $how in
		cut) head -c $((size / 2)) "$f" > "$c" ;;
		flip)
			cp "$f" "$c"
			# One byte in the middle of the entries turned over.
			printf '\377' | dd of="$c" bs=1 seek=$((size - size / 3)) conv=notrunc 2>/dev/null ;;
		garbage) head -c "$size" /dev/urandom > "$c" ;;
		empty) : > "$c" ;;
		esac
	done
	report dmg --format folded
	check_num "$how cache files: the report runs" "$rc" -eq 0
	check "$how cache files: the same report" cmp -s cold.out dmg.out
	check "$how cache files: nothing said" test ! -s dmg.err
	same=0
	for f in good/*.0.sym; do cmp -s "$f" "$cache/${f#good/}" && same=$((same + 1)); done
	check_num "$how cache files: replaced by whole ones" "$same" -eq "$(ls good | wc -l)"
done

# --- reports at the same time -------------------------------------------------
rm -rf "$cache"
pids=''
for i in 1 2 3 4 5 6; do
	"$WALLPROF" report -q -i S --format folded > "par$i.out" 2> "par$i.err" < /dev/null &
	pids="$pids $!"
done
bad=0
for p in $pids; do wait "$p" || bad=$((bad + 1)); done
check_num "six reports at once, with one cache: all succeed" "$bad" -eq 0
same=0
for i in 1 2 3 4 5 6; do cmp -s cold.out "par$i.out" && same=$((same + 1)); done
check_num "and all give the same report" "$same" -eq 6
check "no temporary file is left in the cache" no_file '\.tmp$' "$cache"
report after --format folded
check "the cache they left is sound" cmp -s cold.out after.out

# --- no cache to be had ---------------------------------------------------------
: > afile
XDG_CACHE_HOME=$tmp/afile/cache report nodir --format folded
check_num "a cache directory that cannot be made: the report runs" "$rc" -eq 0
check "the same report" cmp -s cold.out nodir.out
check "silently" test ! -s nodir.err
run nohome.out nohome.err env -u XDG_CACHE_HOME -u HOME "$WALLPROF" report -q -i S --format folded
check "no home and no XDG_CACHE_HOME: the same report, silently" \
	sh -c "[ $rc -eq 0 ] && cmp -s cold.out nohome.out && [ ! -s nohome.err ]"

# --- symbolic links ---------------------------------------------------------------
rm -rf "$cache"
report fill --format folded
victim=$tmp/victim
echo "not the cache's" > "$victim"
for c in "$cache"/*.0.sym; do
	rm "$c"
	ln -s "$victim" "$c"
done
report link --format folded
check "cache files that are symbolic links: the same report" cmp -s cold.out link.out
check "the files they point to are left alone" grep -qx "not the cache's" "$victim"
check "the links are replaced by files" sh -c "! find '$cache' -type l | grep -q ."
rm -rf "$cache"
ln -s "$tmp/good" "$cache"
report dirlink --format folded
check "a symbolic link as the cache directory: the same report" cmp -s cold.out dirlink.out
check "nothing is written where it points" sh -c "! ls '$tmp/good' | grep -qv '\.0\.sym$'"
finish
