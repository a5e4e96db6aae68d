#!/bin/sh
# report-pprof.sh: `wallprof report --format pprof` on a recording of the
# wallclock workload, read back by a decoder written by others (`go tool
# pprof`, from the Debian package golang-go): the file is gzip; per sample
# type, its totals equal the JSON report's, to the nanosecond, in wall
# mode and in --mode on; -tagfocus on the thread label keeps that thread
# alone, with its JSON wall time; the workload's functions are there, and
# the inlined wc_spin_middle is a line of the location of wc_spin_outer;
# functions have their source file and first line, mappings the build id.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
J="$TESTS_SRCDIR/integration/report-json.py"

# same NAME WANT GOT: the two strings are equal.
same() {
	if [ "$2" = "$3" ]; then ok "$1"
	else notok "$1 (want '$2', got '$3')"; fi
}

record_wallclock 0.7
locker=$(wl_field wl.out locker tid)

# The profile, to a file and through a redirection: the same bytes' worth.
run out err "$WALLPROF" report -i F --format pprof -o P
check_num "report --format pprof -o P exits 0" "$rc" -eq 0
same "nothing on stderr" "" "$(cat err)"
if gzip -t P 2>/dev/null; then ok "P is gzip"; else fail "P is gzip"; fi
run P2 err "$WALLPROF" report -i F --format pprof
check_num "report --format pprof >P2 exits 0" "$rc" -eq 0
same "P2 unpacks to what P does" "$(gzip -dc P | cksum)" "$(gzip -dc P2 2>&1 | cksum)"
run out err "$WALLPROF" report -i F --format json -o J
check_num "report --format json exits 0" "$rc" -eq 0

if ! command -v go >/dev/null 2>&1; then
	[ "$failures" -eq 0 ] || finish
	skip "go is missing (Debian package golang-go): the profile was not decoded by go tool pprof"
fi
# No network, no writes outside the test's directory.
HOME=$tmp GOCACHE=$tmp/gocache GOTOOLCHAIN=local GOPROXY=off GOFLAGS=
export HOME GOCACHE GOTOOLCHAIN GOPROXY GOFLAGS

# raw ARGS... PROFILE >OUT: go tool pprof -raw.
raw() { go tool pprof -raw "$@" 2>raw.err; }
# sums RAW: the totals of the sample values, in the order of sample_type.
sums() {
	awk '/^Samples:/ { s = 1; next } /^[A-Z][a-z]+:?$/ { s = 0 }
	     s && /^ *[0-9]+( +[0-9]+)+:/ {
		sub(/:.*/, ""); for (i = 1; i <= NF; i++) t[i] += $i; if (NF > n) n = NF }
	     END { for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? " " : ""), t[i]; print "" }' "$1"
}
# types RAW: the sample types, as "type/unit" words.
types() { awk '/^Samples:/ { getline; sub(/\[dflt\]/, ""); print; exit }' "$1"; }
# jtotals JSON: wall on blocked preempted runnable of the threads, summed.
jtotals() {
	python3 "$J" threads "$1" | awk -F '\t' '{ w += $4; on += $5; b += $7; p += $8; r += $15 }
		END { printf "%.0f %.0f %.0f %.0f %.0f\n", w, on, b, p, r }'
}

if raw P >R; then ok "go tool pprof -raw reads P"; else fail "go tool pprof -raw reads P: $(head -n 3 raw.err)"; fi
same "sample types" "samples/count wall/nanoseconds on-cpu/nanoseconds blocked/nanoseconds preempted/nanoseconds runnable/nanoseconds" \
	"$(types R | tr -s ' ' | sed 's/^ //; s/ $//')"
# Drop the count column: the JSON has no total of it.
got=$(sums R | cut -d' ' -f2-)
want=$(jtotals J)
same "pprof totals (wall on blocked preempted runnable) = JSON's" "$want" "$got"
case $want in "0 "*) fail "the recording has wall time" ;; esac
check_num "a count in the samples column" "$(sums R | cut -d' ' -f1)" -gt 0

# One thread by its label: its samples only, its wall time.
raw -tagfocus='thread=^locker$' P >RL || fail "-tagfocus: $(head -n 3 raw.err)"
same "-tagfocus thread=locker keeps one thread" "thread:[locker]" \
	"$(grep -o 'thread:\[[^]]*\]' RL | sort -u | tr '\n' ' ' | sed 's/ $//')"
same "-tagfocus keeps the locker tid" "tid:[$locker]" \
	"$(grep -o 'tid:\[[^]]*\]' RL | sort -u | tr '\n' ' ' | sed 's/ $//')"
same "locker's pprof wall = its JSON wall_ns" \
	"$(python3 "$J" threads J | awk -F '\t' -v t="$locker" '$2 == t { print $4 }')" \
	"$(sums RL | cut -d' ' -f2)"
same "every state is labelled" "state:[blocked] state:[on-cpu] state:[preempted]" \
	"$(grep -o 'state:\[[^]]*\]' R | sort -u | grep -v runnable | tr '\n' ' ' | sed 's/ $//')"

# The workload's functions; an inlined function is a line of its caller's location.
for f in wc_spin_leaf wc_spin_outer wc_sleep_once wc_lock_hold wc_lock_round wc_pipe_wait \
	'\[off-cpu:blocked\]'; do
	if grep -q " $f " R; then ok "function $f"; else fail "function $f"; fi
done
# Locations: "ID: 0xADDR M=N func file:line s=N", then one line per caller it was inlined into.
same "wc_spin_middle is inlined into wc_spin_outer, in one location" "wc_spin_outer" \
	"$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l && prev ~ /^ *[0-9]+: .* wc_spin_middle / && $0 !~ /^ *[0-9]+:/ { print $1; exit }
		{ prev = $0 }' R)"

# Functions carry their source file and first line; mappings their file and build id.
same "wc_spin_leaf's file and first line" "wallclock.c yes" \
	"$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l && $4 == "wc_spin_leaf" { f = $5; sub(/:[0-9]+$/, "", f); sub(/.*\//, "", f)
			s = $6; sub(/^s=/, "", s); print f, (s > 0 ? "yes" : "no"); exit }' R)"
same "the outer function of an inlined run has its file too" "wallclock.c" \
	"$(awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 }
		l && $1 == "wc_spin_outer" { f = $2; sub(/:[0-9]+$/, "", f); sub(/.*\//, "", f); print f; exit }' R)"
wl_map=$(awk -v p="$WORKLOADS/wallclock" '/^Mappings/ { m = 1; next } m && $3 == p' R)
[ -n "$wl_map" ] && ok "a mapping for the workload's file" || fail "a mapping for $WORKLOADS/wallclock"
if command -v readelf >/dev/null 2>&1; then
	same "its build id is the file's" \
		"$(readelf -n "$WORKLOADS/wallclock" | awk '/Build ID:/ { print $3 }')" \
		"$(echo "$wl_map" | awk '{ print $4 }')"
fi
same "wc_spin_leaf's location is in that mapping" "$(echo "$wl_map" | cut -d: -f1)" \
	"$(awk '/^Locations/ { l = 1; next } l && $4 == "wc_spin_leaf" { sub(/^M=/, "", $3); print $3; exit }' R)"

# --mode on: on-CPU time alone, the JSON's.
run out err "$WALLPROF" report -i F --format pprof --mode on -o PON
check_num "--mode on exits 0" "$rc" -eq 0
raw PON >RON || fail "-raw of --mode on: $(head -n 3 raw.err)"
same "--mode on: wall = on-CPU total, nothing else" \
	"$(jtotals J | awk '{ print $2, $2, 0, 0, 0 }')" "$(sums RON | cut -d' ' -f2-)"

# -top reads it as well, with the wall column first.
go tool pprof -top -sample_index=wall P >TOP 2>top.err
check_num "go tool pprof -top exits 0" "$?" -eq 0
grep -q 'Type: wall' TOP || fail "-top -sample_index=wall shows wall time"

finish
