#!/bin/sh
# hostile-names.sh: the names a profiled program chooses (its thread names,
# the path of the file it runs, its arguments) reach no terminal raw.  A
# workload names one thread with an OSC title sequence and one with raw C1
# bytes, and runs from a path holding ESC, BEL, a newline, ';' and 0x9b,
# with such arguments.  Every output of report (text, folded, hist
# --per-thread, json, flamegraph, trace, --dump, and what go tool pprof
# prints of --format pprof) and every message on stderr must then hold
# only well-formed UTF-8 without control characters (raw or C1), keep the
# names readable as escapes, and --dump must keep one record per line.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "no python3 to check the bytes and parse the JSON"

# safe FILE...: well-formed UTF-8, no control character but tab and newline
# (no C0, no DEL, no C1 whether raw or encoded); says where it is not.
cat >safe.py <<'PY'
import sys
ok = True
for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        print('# %s: not UTF-8 at byte %d: %r' % (path, e.start, data[max(0, e.start - 30):e.start + 10]))
        ok = False
        continue
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch not in '\t\n') or 0x7f <= o <= 0x9f:
            print('# %s: U+%04X at character %d: %r' % (path, o, i, text[max(0, i - 30):i + 10]))
            ok = False
            break
sys.exit(0 if ok else 1)
PY
safe() { python3 safe.py "$@"; }

esc=$(printf '\033') bel=$(printf '\007') csi=$(printf '\233') nel=$(printf '\205')
nl='
'
dir="$tmp/dir$esc[1m"
exe="wl$esc]2;title$bel$nl;x${csi}2J"
mkdir "$dir" && cp "$WORKLOADS/hostile" "$dir/$exe" || exit 99
run rec.out rec.err "$WALLPROF" record -q --unwind=live -o F -- "$dir/$exe" 1 \
	"arg$esc[2J$bel" "c1${csi}31m${nel}x"
check_num "record the workload at a hostile path" "$rc" -eq 0
check "record: stderr is safe" safe rec.err
# R keeps the stack copies (--unwind=report): report opens the file to
# unwind and name them, and names its frames after it once it is gone.
# F is unwound live, its places named in the file.
run rec.out rec-r.err "$WALLPROF" record -q --unwind=report -o R -- "$dir/$exe" 1 \
	"arg$esc[2J$bel" "c1${csi}31m${nel}x"
check_num "record the workload at a hostile path, --unwind=report" "$rc" -eq 0
check "record --unwind=report: stderr is safe" safe rec-r.err

# every_output TAG [DATA]: each format and --dump of DATA (default F) into
# TAG.FORMAT (+ .err), each exiting 0 with safe stdout and stderr.
every_output() {
	_in=${2:-F}
	for fmt in text folded hist json flamegraph trace dump; do
		case $fmt in
		dump) run "$1.$fmt" "$1.$fmt.err" "$WALLPROF" report -i "$_in" --dump ;;
		hist) run "$1.$fmt" "$1.$fmt.err" "$WALLPROF" report -i "$_in" --format hist \
			--per-thread ;;
		*) run "$1.$fmt" "$1.$fmt.err" "$WALLPROF" report -i "$_in" --format "$fmt" ;;
		esac
		check_num "$1, $fmt: exit status 0" "$rc" -eq 0
		check "$1, $fmt: output is safe for a terminal" safe "$1.$fmt"
		check "$1, $fmt: stderr is safe for a terminal" safe "$1.$fmt.err"
	done
	check "$1, json: parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
		"$1.json"
	# Every line of the dump is one header line or one record (the stack
	# table's files, places and stacks, unwound live, are undated).
	check "$1, dump: one line per record" awk '
		/^#/ || /^ROUND$/ || /^(BUILD_ID|UNKNOWN|TRACE_FORMAT) / || /^[A-Z_0-9]+ malformed/ { next }
		/^(DSO|PLACE|STACK) [0-9]+ / { next }
		/^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9] [A-Z_0-9]+( |$)/ { next }
		{ print "# not a record: " substr($0, 1, 80); bad = 1 } END { exit bad }' "$1.dump"
}

# --- the file is there: names of threads, arguments, paths -------------
every_output intact
check "text: the title thread's name, escaped" grep -qF '\033]2;pwn\a' intact.text
check "text: the C1 thread's name, escaped" grep -qF 'c1\2332J\205x' intact.text
check "text: the command line, escaped" \
	grep -qF "wl\\033]2;title\\a\\n;x\\2332J' 1 \$'arg\\033[2J\\a' \$'c1\\23331m\\205x'" intact.text
# The header's command line reads back, in bash, as the very arguments.
if command -v bash >/dev/null 2>&1; then
	sed -n 's/^# command: //p' intact.text >cmdline
	printf '%s\n' "$WALLPROF" record -q --unwind=live -o F -- "$dir/$exe" 1 "arg$esc[2J$bel" \
		"c1${csi}31m${nel}x" >argv.want
	bash -c 'eval "set -- $(cat cmdline)"; printf "%s\n" "$@"' >argv.got 2>argv.err
	check "text: the command line pasted into bash gives the same arguments" \
		cmp -s argv.want argv.got
fi
check "hist: the title thread's name, escaped" grep -qF '(\033]2;pwn\a) of process' intact.hist
check "folded: the title thread's name as the root, ';' escaped" \
	grep -qF '\033]2\073pwn\a;' intact.folded
check "folded: every line ends in a weight" awk '!/ [0-9]+$/ { bad = 1 } END { exit bad }' \
	intact.folded
check "json: the thread names read back exactly" python3 -c '
import json, sys
names = {t["comm"] for t in json.load(open(sys.argv[1]))["threads"]}
sys.exit(0 if "\x1b]2;pwn\x07" in names and "c1\ufffd2J\ufffdx" in names else 1)' intact.json
check "dump: the MMAP2 of the workload, escaped" \
	grep -qF " $tmp/dir\\033[1m/wl\\033]2;title\\a\\n;x\\2332J cpu " intact.dump
check "dump: the COMM of the title thread, escaped" \
	grep -qE ' COMM [0-9]+/[0-9]+ \\033\]2;pwn\\a cpu ' intact.dump
# pprof is binary: what its readers print of it must be safe.
run intact.pprof intact.pprof.err "$WALLPROF" report -i F --format pprof -o intact.pb.gz
check_num "intact, pprof: exit status 0" "$rc" -eq 0
check "intact, pprof: stderr is safe for a terminal" safe intact.pprof.err
if command -v go >/dev/null 2>&1; then
	for view in -raw -tags -comments; do
		HOME=$tmp GOCACHE=$tmp/gocache GOTOOLCHAIN=local GOPROXY=off GOFLAGS= \
			go tool pprof "$view" intact.pb.gz >"pprof$view" 2>&1
		check "pprof: go tool pprof $view prints nothing unsafe" safe "pprof$view"
	done
	check "pprof: the title thread's label, escaped" grep -qF '\033]2;pwn\a' pprof-tags
else
	skip_check "pprof: go tool pprof reads the names safely" "no go to read the pprof output with"
fi
check "trace: parses, the thread names read back exactly" python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["args"]["name"] for e in ev if e["name"] == "thread_name"}
sys.exit(0 if "\x1b]2;pwn\x07" in names and "c1\ufffd2J\ufffdx" in names else 1)' intact.trace

every_output intact-raw R

# --- the file is gone: frames are named after it, a warning names it ----
rm -f "$dir/$exe"
every_output missing R
check "missing: a warning names the file, escaped" \
	grep -qF "warning: cannot open '$tmp/dir\\033[1m/wl\\033]2;title\\a\\n;x\\2332J'" \
	missing.text.err
check "missing, text: frames named after the file, escaped" \
	grep -qE 'wl\\033\]2;title\\a\\n;x\\2332J\+0x[0-9a-f]+' missing.text
check "missing, folded: frames named after the file, ';' escaped" \
	grep -qE 'wl\\033\]2\\073title\\a\\n\\073x\\2332J\+0x[0-9a-f]+' missing.folded
check "missing, folded: every line ends in a weight" \
	awk '!/ [0-9]+$/ { bad = 1 } END { exit bad }' missing.folded

# --- names that the user typed ------------------------------------------
run out err "$WALLPROF" report -i "$dir/no$esc]2;such$bel"
check_num "a missing input with escapes: exit status 1" "$rc" -eq 1
check "a missing input with escapes: the error is safe" safe err
check "a missing input with escapes: the name, escaped" grep -qF 'no\033]2;such\a' err
run out err "$WALLPROF" report -i F --format "x$esc[2J"
check "a bad option value with escapes: the error is safe" safe err
run out err "$WALLPROF" "x$esc[2J"
check "an unknown command with escapes: the error is safe" safe err
finish
