#!/bin/sh
# examples.sh: every example command in the documentation works.
#
# The examples are read from the files at test time, so a new example is
# tested without touching this script:
#   man/wallprof.1, man/wallprof-record.1, man/wallprof-report.1: the
#	.EX/.EE and .nf/.fi blocks of the EXAMPLES section;
#   README.md: the indented and fenced code lines of the "Quick start" and
#	"Examples" sections.
# roff is unescaped (\- \e \(aq \(dq \(ga \& \% \fB \fI \fR \fP ...; an
# escape not known here makes the example fail).  A command continues on
# the next line as it would in the shell: after a trailing backslash, a
# trailing | (or && ||), or inside an open quote.  Shell comments are
# dropped.  In a block with "$ " prompt lines only the prompt lines (and
# their continuations, less a "> " prompt) are commands, the other lines
# are sample output; a block without prompts whose first line starts with
# '#' or a digit is sample output (a recording's dump) and is named in a
# "#" line.  Any other line is a command.
#
# The commands are made runnable by these substitutions, and by nothing
# else; an example that they cannot map (an unknown program, a compound
# command, an unknown program in a pipe, ...) FAILS with a message naming
# it:
#   "$ " (prompt), "sudo "	removed (the test runs as root, else it is skipped)
#   wallprof		"$WP": $WALLPROF, or the setcap'd copy (below)
#   record: ./NAME [ARGS]	$WORKLOADS/wallclock 0.5 (./server 8080, ./app,
#			./build.sh, ./server --port 8080, ...)
#   tests/workloads/NAME	$WORKLOADS/NAME (arguments kept)
#   record -p/--pid N	the pid of a sleeper workload started in the
#			background for the purpose; -t/--tid N: its second
#			thread's tid
#   record -d/--duration N	-d 1, to keep the test short
#   record --user NAME	--user nobody, and the command becomes a copy of
#			wallclock that nobody can run (the build may be in a
#			directory others cannot enter); when nobody cannot run
#			even that, the example is skipped with the reason
#   report --pid N, --tid N	the pid of the recorded wallclock workload, the
#			tid of its "locker" thread (the ids in the recording)
#   report --time A,B	--time 0.1,0.4 (inside the 0.5 s recording)
#   report --critical-path N[@A-B]	the locker thread's tid, [@0.1-0.4]
#   report --diff FILE	--diff "$STD", the recording that reports read
#   report --comm 'worker.*'	worker -> locker (wallclock's locker and locker2
#			threads play the workers)
#   report --waker-comm 'producer.*'	producer -> locker (the lockers wake
#			each other)
#   an absolute path given to -o/-i or a redirection (/tmp/m.data)
#			$ABS/BASENAME, under the test's temporary directory
#   | less, | more		| head
#   | flamegraph.pl ... [> F.svg]	a strict check of the folded format with
#			folded-parse.awk (FlameGraph is not packaged in
#			Debian): --mode, --wakers and --no-thread-root of
#			the report are passed on
#   | jq ...		run as written when jq is installed; else the JSON is
#			validated with python3 and a skip ("jq is missing")
#			is counted (EXAMPLES_NO_JQ=1 forces this path)
#   | awk, head, tail, grep, sed, sort, uniq, wc, cut, cat, tr: run as written
#   setcap ... "$(command -v wallprof)"	applied to a copy of $WALLPROF in
#			$tmp; the block's later commands run that copy
#   go tool pprof ARGS	run as written (an absolute file name under $ABS, as
#			for -o) when go is installed, with its cache in $tmp
#			and no network; else a skip ("go is missing") is counted
#   wallprof export ..., report --from ...	not run (they need a ClickHouse
#			server, which export-clickhouse.sh starts): the
#			subcommand's --help must name --clickhouse or --from
#   tools/NAME		only checked to exist and be executable: tools/setup
#			installs packages and tools/check runs this test suite,
#			so running them here is not wanted
# Each example is independent of the others and runs in a new directory
# of its own (only the setcap'd copy of wallprof, for the rest of its
# block, and the files under $ABS are shared).  A report whose data file
# (wallprof.data without -i, or the -i file) does not exist there yet
# gets a copy of one recording, made first with
#   $WALLPROF record -q -o wallprof.data -- $WORKLOADS/wallclock 0.5
# Each command must exit 0 (with a pipe: the wallprof command and the
# filter, which reads the command's whole output from a file); a record
# must also write its data file, a report -o its output file.
#
# This VM's kernel emits no tracepoint sample in CPU 1's idle context
# (perf -a sees none there either), so that a thread on CPU 1 is never
# seen woken by a timer: the documented examples run on CPU 0.
if [ -z "${WP_EXAMPLES_CPU0:-}" ] && taskset -c 0 true 2>/dev/null; then
	WP_EXAMPLES_CPU0=1 exec taskset -c 0 sh "$0" "$@"
fi
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"
tracing_alone

[ "$(id -u)" -eq 0 ] || skip "the examples use sudo and -a; run as root"
top=$TESTS_SRCDIR/..
docs="man/wallprof.1 man/wallprof-record.1 man/wallprof-report.1 README.md"
for d in $docs; do
	[ -f "$top/$d" ] || { echo "ERROR: no $top/$d"; exit 99; }
done
[ -x "$WORKLOADS/wallclock" ] || { echo "ERROR: no $WORKLOADS/wallclock"; exit 99; }

# printf, not echo: the commands hold backslashes.
say() { printf '%s\n' "$*"; }
ex_ok() { printf 'ok - example: %s\n' "$1"; }
ex_notok() { printf 'not ok - example: %s\n' "$1"; failures=$((failures + 1)); }
first_line() { sed -n '/./{p;q;}' "$1" 2>/dev/null | cut -c1-300; }
show() { [ -s "$1" ] && sed -n '1,20s/^/#   /p' "$1"; }

ex=$tmp/ex
ABS=$tmp/abs
WPCOPY=$tmp/wallprof
mkdir -p "$ex" "$ABS" || exit 99

# --- Extraction and mapping: one plan per example -------------------------
# For example N: $ex/N.left (the command, a sh script), $ex/N.right (the
# filter after the first |, if any) and a line of $ex/list:
#   N BLOCK FILE:LINE KIND CHECK INPUT OUTPUT JQ NOTE DISPLAY
# (tab-separated, "-" when empty).  KIND: record, report, run (another
# wallprof command), setcap, exists (CHECK is the tool), go (go tool
# pprof), bad (NOTE says why).  CHECK: the data file a record writes; INPUT: the data file a
# report reads; OUTPUT: a report's -o file.  $ex/counts: the examples of
# each section read.
cat >"$tmp/examples.awk" <<'EOF'
BEGIN {
	roots = "wallclock|spinner|sleeper|locker|locker2|reader"
	checker = "awk -v roots='" roots "' -v thread_root=%d -v mode=%s -v wakers=%d" \
		" -f \"$TESTS_SRCDIR/integration/folded-parse.awk\""
	nex = 0
	nblock = 0
}

# --- roff -----------------------------------------------------------------
function unroff(s,    out, i, n, c, e, nm) {
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c != "\\") {
			out = out c
			continue
		}
		e = substr(s, ++i, 1)
		if (e == "-" || e == ".")
			out = out e
		else if (e == "e" || e == "\\")
			out = out "\\"
		else if (e == "&" || e == "%" || e == ")")
			;
		else if (e == " " || e == "~" || e == "0")
			out = out " "
		else if (e == "(") {
			nm = substr(s, i + 1, 2)
			i += 2
			if (nm == "aq") out = out "'"
			else if (nm == "dq") out = out "\""
			else if (nm == "ga") out = out "`"
			else if (nm == "ti") out = out "~"
			else if (nm == "ha") out = out "^"
			else if (nm == "rs") out = out "\\"
			else BADESC = BADESC " \\(" nm
		} else if (e == "f") {
			e = substr(s, ++i, 1)
			if (e == "(")
				i += 2
			else if (e == "[") {
				while (i < n && substr(s, i, 1) != "]")
					i++
			}
		} else
			BADESC = BADESC " \\" e
	}
	return out
}

# --- shell tokens -----------------------------------------------------------
# tokenize(s): T[1..NT] the tokens of s, TY[i] "w" (word) or "o"
# (operator), TS[i] 1 when blanks precede token i.  QOPEN: an open quote
# at the end; BSEND: s ends with a backslash.  Comments are dropped.
function endword() {
	if (INW) {
		T[++NT] = W0
		TY[NT] = "w"
		TS[NT] = SP
		SP = 0
	}
	W0 = ""
	INW = 0
}
function tokenize(s,    i, n, c, q, nx, op) {
	split("", T); split("", TY); split("", TS)
	NT = 0; W0 = ""; INW = 0; SP = 0; q = ""; BSEND = 0
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (q == "'") {
			W0 = W0 c
			if (c == "'")
				q = ""
			continue
		}
		if (q == "\"") {
			W0 = W0 c
			if (c == "\\" && i < n)
				W0 = W0 substr(s, ++i, 1)
			else if (c == "\"")
				q = ""
			continue
		}
		if (c == "\\") {
			if (i == n) {
				BSEND = 1
				break
			}
			if (substr(s, i + 1, 1) == "\n") {
				i++
				endword()
				SP = 1
				continue
			}
			W0 = W0 c substr(s, ++i, 1)
			INW = 1
			continue
		}
		if (c == " " || c == "\t" || c == "\n") {
			endword()
			SP = 1
			continue
		}
		if (c == "#" && !INW) {
			while (i < n && substr(s, i + 1, 1) != "\n")
				i++
			continue
		}
		if (index("|&;<>()", c)) {
			endword()
			op = c
			nx = substr(s, i + 1, 1)
			if ((c nx) ~ /^(\|\||&&|;;|>>|>\||<<|>&|<&|<>)$/) {
				op = c nx
				i++
			}
			T[++NT] = op
			TY[NT] = "o"
			TS[NT] = SP
			SP = 0
			continue
		}
		if (c == "'" || c == "\"")
			q = c
		W0 = W0 c
		INW = 1
	}
	endword()
	QOPEN = q
}
function continues(s) {
	tokenize(s)
	return QOPEN != "" || BSEND || (NT && TY[NT] == "o" && T[NT] ~ /^(\||\|\||&&)$/)
}
function join(a, b,    i, out, gap) {
	out = ""
	gap = 0
	for (i = a; i <= b; i++) {
		if (DEL[i]) {
			gap = 1
			continue
		}
		if (out != "" && (TS[i] || gap))
			out = out " "
		out = out T[i]
		gap = 0
	}
	return out
}
function unq(s) {
	gsub(/["'\\]/, "", s)
	return s
}
function isredir(op) {
	return op ~ /^(<|>|>>|>\||<<|>&|<&|<>)$/
}

# --- mapping ----------------------------------------------------------------
function bad(why) {
	if (BAD == "")
		BAD = why
}
# mappath(I): token I is a file name; an absolute one moves under $ABS.
# Returns the name to check: relative to the block's directory, or
# ABS/BASE.
function mappath(i,    v, b) {
	v = unq(T[i])
	if (v ~ /[$`*?]/) {
		bad("file name " T[i])
		return v
	}
	if (v ~ /^\// && v !~ /^\/dev\//) {
		b = v
		sub(/.*\//, "", b)
		T[i] = "\"$ABS\"/" b
		return "ABS/" b
	}
	return v
}
# stage(S): the words of stage S in SW[1..NSW] (token indexes), without
# redirections, whose targets are mapped.
function stage(s,    j) {
	NSW = 0
	for (j = SA[s]; j <= SE[s]; j++) {
		if (TY[j] == "o") {
			if (j < SE[s] && TY[j + 1] == "w") {
				j++
				if (unq(T[j]) ~ /^\//)
					mappath(j)
			}
			continue
		}
		SW[++NSW] = j
	}
}
function takes_arg(cmd, o) {
	if (cmd == "record")
		return o ~ /^(-F|--freq|-e|--event|-g|--call-graph|-p|--pid|-t|--tid|--user|-d|--duration|-o|--output|-m|--mmap-pages)$/
	return o ~ /^(-i|--input|-o|--output|--format|--mode|--sort|--top|--threads|--by|--stacks|--unit|--pid|--tid|--comm|--waker-comm|--time|--min-block|--grep|--title|--diff|--critical-path|--wait-threshold|--wait-groups)$/
}
# setv(TEXT): replace the value of the option just parsed (OPT, VI, PRE).
function setv(text) {
	if (VI)
		T[VI] = PRE text
}
function getv() {
	return VI ? unq(substr(T[VI], length(PRE) + 1)) : ""
}
# options(CMD, K): the options of `wallprof CMD` from word K on; returns
# the index in SW of the first word that is not an option (the command
# a record runs) or 0.
function options(cmd, k,    j, w, v, p) {
	for (j = k; j <= NSW; j++) {
		w = unq(T[SW[j]])
		if (w == "--")
			return j < NSW ? j + 1 : 0
		if (w !~ /^-./)
			return j
		VI = 0
		PRE = ""
		if (w ~ /^--[A-Za-z0-9-]+=/) {
			OPT = substr(w, 1, index(w, "=") - 1)
			PRE = substr(T[SW[j]], 1, index(T[SW[j]], "="))
			VI = SW[j]
		} else if (w ~ /^-[dpto]./ && takes_arg(cmd, substr(w, 1, 2))) {
			OPT = substr(w, 1, 2)
			PRE = OPT
			VI = SW[j]
		} else {
			OPT = w
			if (takes_arg(cmd, OPT) && j < NSW)
				VI = SW[++j]
		}
		if (cmd == "record") {
			if (OPT == "-d" || OPT == "--duration")
				setv("1")
			else if (OPT == "-p" || OPT == "--pid")
				setv("\"$BGPID\"")
			else if (OPT == "-t" || OPT == "--tid")
				setv("\"$BGTID\"")
			else if (OPT == "--user") {
				setv("nobody")
				AS_USER = 1
			}
			else if ((OPT == "-o" || OPT == "--output") && VI)
				CHECK = mappath(VI)
		} else {
			if ((OPT == "-i" || OPT == "--input") && VI)
				INPUT = mappath(VI)
			else if ((OPT == "-o" || OPT == "--output") && VI)
				OUTPUT = mappath(VI)
			else if (OPT == "--pid")
				setv("\"$RPID\"")
			else if (OPT == "--tid")
				setv("\"$RTID\"")
			else if (OPT == "--time")
				setv("0.1,0.4")
			else if (OPT == "--critical-path")
				setv(getv() ~ /@/ ? "\"$RTID\"@0.1-0.4" : "\"$RTID\"")
			else if (OPT == "--diff")
				setv("\"$STD\"")
			else if (OPT == "--comm" && VI)
				gsub(/worker/, "locker", T[VI])
			else if (OPT == "--waker-comm" && VI)
				gsub(/producer/, "locker", T[VI])
			else if (OPT == "--mode")
				MODE = getv()
			else if (OPT == "--no-thread-root")
				TROOT = 0
			else if (OPT == "--wakers")
				WAKERS = 1
		}
	}
	return 0
}
function map_left(    k, w, sub1, p, j, last) {
	stage(1)
	if (!NSW) {
		bad("no command")
		return
	}
	k = 1
	if (unq(T[SW[1]]) == "sudo") {
		if (NSW < 2 || T[SW[2]] ~ /^-/) {
			bad("sudo with options")
			return
		}
		DEL[SW[1]] = 1
		k = 2
	}
	w = unq(T[SW[k]])
	if (w == "wallprof") {
		T[SW[k]] = "\"$WP\""
		sub1 = k < NSW ? unq(T[SW[k + 1]]) : ""
		if (sub1 == "record") {
			KIND = "record"
			CHECK = "wallprof.data"
			AS_USER = 0
			p = options("record", k + 2)
			if (p) {
				w = unq(T[SW[p]])
				if (w ~ /^\.\/[^\/]+$/) {
					# Run as nobody: a copy nobody may run.
					T[SW[p]] = (AS_USER ? "\"$WORKLOADS_ANYONE\"" : "\"$WORKLOADS\"") \
						   "/wallclock 0.5"
					for (j = p + 1; j <= NSW; j++)
						DEL[SW[j]] = 1
				} else if (w ~ /^(\.\/)?tests\/workloads\/[A-Za-z0-9_.-]+$/) {
					sub(/^(\.\/)?tests\/workloads\//, "", w)
					T[SW[p]] = "\"$WORKLOADS\"/" w
				}
			}
		} else if (sub1 == "export" || (sub1 == "report" && has_word("--from", k + 2))) {
			KIND = "server"
			CHECK = sub1
		} else if (sub1 == "report") {
			KIND = "report"
			INPUT = "wallprof.data"
			if (options("report", k + 2))
				bad("an argument that is not an option")
		} else
			KIND = "run"
	} else if (w == "setcap") {
		last = T[SW[NSW]]
		if (last != "\"$(command -v wallprof)\"" && last != "$(command -v wallprof)" &&
		    unq(last) !~ /^\/.*\/wallprof$/) {
			bad("setcap on something else than wallprof")
			return
		}
		T[SW[NSW]] = "\"$WPCOPY\""
		KIND = "setcap"
	} else if (w == "go" && NSW >= k + 2 && unq(T[SW[k + 1]]) == "tool" &&
		   unq(T[SW[k + 2]]) == "pprof") {
		KIND = "go"
		for (j = k + 3; j <= NSW; j++)
			if (unq(T[SW[j]]) !~ /^-/)
				mappath(SW[j])
	} else if (w ~ /^(\.\/)?tools\/[A-Za-z0-9_.-]+$/) {
		sub(/^\.\//, "", w)
		KIND = "exists"
		CHECK = w
	} else
		bad("no mapping for the command '" w "'")
}
function has_word(x, from,    j) {
	for (j = from; j <= NSW; j++)
		if (unq(T[SW[j]]) == x)
			return 1
	return 0
}
function map_right(s,    w, j) {
	stage(s)
	if (!NSW) {
		bad("an empty pipe stage")
		return
	}
	if (unq(T[SW[1]]) == "sudo")
		DEL[SW[1]] = 1
	w = unq(T[SW[DEL[SW[1]] ? 2 : 1]])
	if (w == "less" || w == "more") {
		for (j = SA[s]; j <= SE[s]; j++)
			DEL[j] = 1
		DEL[SA[s]] = 0
		T[SA[s]] = "head"
	} else if (w == "flamegraph.pl") {
		if (s != NS)
			bad("flamegraph.pl's SVG piped on")
		for (j = SA[s]; j <= SE[s]; j++)
			DEL[j] = 1
		DEL[SA[s]] = 0
		T[SA[s]] = sprintf(checker, TROOT, MODE, WAKERS)
	} else if (w == "jq")
		JQ = 1
	else if (w !~ /^(awk|head|tail|grep|sed|sort|uniq|wc|cut|cat|tr)$/)
		bad("no mapping for '" w "' in a pipe")
}
function emit(text, file, line,    s, i, disp, left, right, f) {
	nex++
	BAD = ""
	KIND = "bad"
	CHECK = INPUT = OUTPUT = ""
	JQ = 0
	MODE = "wall"
	TROOT = 1
	WAKERS = 0
	split("", DEL)
	if (BADESC != "")
		bad("unknown roff escapes" BADESC)
	tokenize(text)
	disp = join(1, NT)
	gsub(/[ \t]*\n[ \t]*/, " ", disp)
	gsub(/\t/, " ", disp)
	if (QOPEN != "" || BSEND)
		bad("unterminated command")
	NS = 1
	SA[1] = 1
	for (i = 1; i <= NT; i++) {
		if (TY[i] != "o" || isredir(T[i]))
			continue
		if (T[i] == "|") {
			SE[NS] = i - 1
			SA[++NS] = i + 1
		} else
			bad("a compound command ('" T[i] "')")
	}
	SE[NS] = NT
	map_left()
	for (s = 2; s <= NS; s++)
		map_right(s)
	if (BAD != "")
		KIND = "bad"
	left = join(SA[1], SE[1])
	right = NS > 1 ? join(SA[2], SE[NS]) : ""
	f = sprintf("%s/%03d", D, nex)
	printf "%s\n", left > (f ".left")
	close(f ".left")
	if (right != "") {
		printf "%s\n", right > (f ".right")
		close(f ".right")
	}
	gsub(/\t/, " ", BAD)
	printf "%03d\t%d\t%s:%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", nex, nblock, file, line,
		KIND, CHECK == "" ? "-" : CHECK, INPUT == "" ? "-" : INPUT,
		OUTPUT == "" ? "-" : OUTPUT, JQ, BAD == "" ? "-" : BAD, disp > (D "/list")
	COUNT[SECTION]++
}

# --- blocks -----------------------------------------------------------------
function startblock() {
	INBLOCK = 1
	NBL = 0
}
function addline(s) {
	BL[++NBL] = s
	BLN[NBL] = FNR
	BLE[NBL] = BADESC
	BADESC = ""
}
# endblock(): split the block's lines into commands.
function endblock(    i, prompt, cur, curline, cure, first) {
	if (!INBLOCK)
		return
	INBLOCK = 0
	nblock++
	prompt = 0
	first = 0
	for (i = 1; i <= NBL; i++) {
		if (BL[i] ~ /^\$ /)
			prompt = 1
		if (!first && BL[i] !~ /^[ \t]*$/)
			first = i
	}
	if (!first)
		return
	if (!prompt && BL[first] ~ /^[ \t]*[#0-9]/) {
		printf "# %s:%d: sample output, not commands: %s\n", FILENAME, BLN[first],
			BL[first] > (D "/notes")
		return
	}
	cur = ""
	for (i = 1; i <= NBL; i++) {
		if (cur != "") {
			if (prompt)
				sub(/^> /, "", BL[i])	# PS2
			cur = cur "\n" BL[i]
			cure = cure BLE[i]
		} else if (prompt) {
			if (BL[i] !~ /^\$ /)
				continue
			cur = substr(BL[i], 3)
			curline = BLN[i]
			cure = BLE[i]
		} else {
			if (BL[i] ~ /^[ \t]*(#.*)?$/)
				continue
			cur = BL[i]
			curline = BLN[i]
			cure = BLE[i]
		}
		if (!continues(cur)) {
			BADESC = cure
			emit(cur, FILENAME, curline)
			BADESC = ""
			cur = ""
		}
	}
	if (cur != "") {
		BADESC = cure
		emit(cur, FILENAME, curline)
		BADESC = ""
	}
}

FNR == 1 {
	endblock()
	INSEC = 0
	INFENCE = 0
	PREVBLANK = 1
	MD = FILENAME ~ /\.md$/
}

# man pages
!MD && /^\.SH/ {
	endblock()
	INSEC = $0 ~ /^\.SH[ \t]+"?EXAMPLES?"?[ \t]*$/
	if (INSEC) {
		SECTION = FILENAME
		COUNT[SECTION] += 0
	}
	next
}
!MD && INSEC && !INBLOCK && /^\.(EX|nf)([ \t]|$)/ {
	startblock()
	next
}
!MD && INBLOCK && /^\.(EE|fi)([ \t]|$)/ {
	endblock()
	next
}
!MD && INBLOCK && /^[.']/ {
	next
}
!MD && INBLOCK {
	addline(unroff($0))
	next
}

# README.md
MD && /^[ \t]*(```|~~~)/ {
	if (INFENCE) {
		endblock()
		INFENCE = 0
	} else {
		endblock()
		INFENCE = 1
		if (INSEC)
			startblock()
	}
	PREVBLANK = 0
	next
}
MD && INFENCE {
	if (INBLOCK)
		addline($0)
	next
}
MD && /^#+[ \t]/ {
	endblock()
	h = $0
	sub(/^#+[ \t]+/, "", h)
	INSEC = tolower(h) ~ /^(quick start|examples)/
	if (INSEC) {
		SECTION = FILENAME ": " h
		COUNT[SECTION] += 0
	}
	PREVBLANK = 1
	next
}
MD && INSEC && /^(    |\t)/ && (INBLOCK || PREVBLANK) {
	if (!INBLOCK)
		startblock()
	l = $0
	sub(/^(    |\t)/, "", l)
	addline(l)
	next
}
MD {
	endblock()
	PREVBLANK = $0 ~ /^[ \t]*$/
}

END {
	endblock()
	for (s in COUNT)
		printf "%s\t%d\n", s, COUNT[s] > (D "/counts")
}
EOF

# shellcheck disable=SC2086 # $docs is a list of names without blanks
(cd "$top" && awk -v D="$ex" -f "$tmp/examples.awk" $docs) ||
	{ fail "the examples could be read from the documentation"; finish; }
touch "$ex/list" "$ex/counts" "$ex/notes"

# Every page and section read holds examples.
for d in $docs; do
	check_num "$d has examples" "$(grep -c "	[0-9]*	$d:" "$ex/list")" -ge 1
done
while IFS='	' read -r sec n; do
	check_num "examples in $sec" "$n" -ge 1
done <"$ex/counts"
[ "$(grep -c 'README.md: ' "$ex/counts")" -ge 2 ] ||
	fail "README.md has a 'Quick start' and an 'Examples' section"
cat "$ex/notes"

# --- What the examples run against ------------------------------------------
# The recording that reports read when their data file is not there yet;
# its workload's pid and locker thread stand in for 4321 and 1234.
mkdir std
(cd std && exec "$WALLPROF" record -q -o wallprof.data -- "$WORKLOADS/wallclock" 0.5) \
	<"/dev/null" >std/wl.out 2>std/err
rc=$?
if [ "$rc" -ne 0 ] || [ ! -s std/wallprof.data ]; then
	fail "the recording for the report examples (exit $rc): $(first_line std/err)"
	finish
fi
RPID=$(wl_field std/wl.out main pid)
RTID=$(wl_field std/wl.out locker tid)
if [ -z "$RPID" ] || [ -z "$RTID" ]; then
	fail "wallclock reported its pid and its locker thread's tid"
	finish
fi

# The process that record -p and -t attach to: it sleeps until the test
# ends (a busy machine took more than the minute it once slept).
"$WORKLOADS/sleeper" 1000000 10 >/dev/null 2>&1 </dev/null &
BGPID=$!
bg_pids="$bg_pids $BGPID"
# second_task: the tid of a thread of $BGPID other than the main thread.
second_task() {
	for t in /proc/"$BGPID"/task/*; do
		[ "${t##*/}" != "$BGPID" ] && [ -e "$t" ] && { echo "${t##*/}"; return 0; }
	done
	return 1
}
wait_until 50 second_task >/dev/null || { fail "the background sleeper started its thread"; finish; }
BGTID=$(second_task)

have_jq=0
command -v jq >/dev/null 2>&1 && have_jq=1
[ "${EXAMPLES_NO_JQ:-0}" = 1 ] && have_jq=0

# A copy of wallclock that user nobody can run, for --user examples: the
# build may live in a directory other users cannot enter.
WORKLOADS_ANYONE=$tmp/anyone
anyone_skip=''
mkdir "$WORKLOADS_ANYONE" && cp "$WORKLOADS/wallclock" "$WORKLOADS_ANYONE/" &&
	chmod 711 "$tmp" && chmod 755 "$WORKLOADS_ANYONE" "$WORKLOADS_ANYONE/wallclock" || exit 99
if ! id nobody >/dev/null 2>&1; then
	anyone_skip="there is no user nobody"
elif ! setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	"$WORKLOADS_ANYONE/wallclock" 0 >/dev/null 2>&1; then
	anyone_skip="user nobody cannot run $WORKLOADS_ANYONE/wallclock"
fi

# go tool pprof: no network, its cache under $tmp.
have_go=0
command -v go >/dev/null 2>&1 && have_go=1
GOCACHE=$tmp/gocache GOTOOLCHAIN=local GOPROXY=off
export GOCACHE GOTOOLCHAIN GOPROXY

WP=$WALLPROF
STD=$tmp/std/wallprof.data
export WP WPCOPY WORKLOADS WORKLOADS_ANYONE ABS BGPID BGTID RPID RTID TESTS_SRCDIR STD

# path NAME DIR: a CHECK/INPUT/OUTPUT name of the list as a path.
path() {
	case $1 in
	ABS/*) printf '%s\n' "$ABS/${1#ABS/}" ;;
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$2/$1" ;;
	esac
}

# --- Run them ---------------------------------------------------------------
cur_block=''
while IFS='	' read -r n block src kind chk inp outp jq note display; do
	if [ "$block" != "$cur_block" ]; then
		cur_block=$block
		WP=$WALLPROF
	fi
	f=$ex/$n
	dir=$tmp/run$n
	mkdir "$dir" || exit 99
	if [ "$kind" = bad ]; then
		say "# $src: cannot be made runnable: $note"
		ex_notok "$display (not mapped to anything runnable: $note)"
		continue
	fi
	if [ "$kind" = exists ]; then
		# Not run: tools/setup installs packages, tools/check runs the
		# whole suite, this test included.
		say "# $src: $chk exists and is executable (not run)"
		if [ -f "$top/$chk" ] && [ -x "$top/$chk" ]; then ex_ok "$display"
		else ex_notok "$display (no executable $chk)"; fi
		continue
	fi
	if [ "$kind" = server ]; then
		# Not run: it needs a ClickHouse server, which export-clickhouse.sh
		# starts to run export and report --from against.
		say "# $src: needs a ClickHouse server (export-clickhouse.sh runs it); wallprof $chk knows its options"
		if "$WALLPROF" "$chk" --help 2>&1 | grep -Eq -- '--(clickhouse|from)'; then ex_ok "$display"
		else ex_notok "$display (wallprof $chk --help names neither --clickhouse nor --from)"; fi
		continue
	fi
	if [ -n "$anyone_skip" ] && grep -q 'WORKLOADS_ANYONE' "$f.left"; then
		skip_check "example: $display" "$anyone_skip"
		continue
	fi
	if [ "$kind" = go ] && [ "$have_go" = 0 ]; then
		skip_check "example: $display" "go is missing"
		continue
	fi
	if [ "$jq" = 1 ] && [ "$have_jq" = 0 ]; then
		say "python3 -c 'import json,sys; json.load(sys.stdin)'" >"$f.right"
	fi
	if [ -f "$f.right" ]; then
		say "# $src: runs: $(tr '\n' ' ' <"$f.left")| $(tr '\n' ' ' <"$f.right")"
	else
		say "# $src: runs: $(tr '\n' ' ' <"$f.left")"
	fi
	if [ "$jq" = 1 ] && [ "$have_jq" = 0 ]; then
		skip_check "example: $display: read by jq" "jq is missing: the JSON is only validated"
	fi
	if [ "$kind" = report ]; then
		input=$(path "$inp" "$dir")
		if [ ! -e "$input" ]; then
			mkdir -p "$(dirname "$input")"
			cp std/wallprof.data "$input"
		fi
	fi
	[ "$kind" = setcap ] && { rm -f "$WPCOPY"; cp "$WALLPROF" "$WPCOPY"; }
	touch "$tmp/stamp"
	(cd "$dir" && exec timeout -k 5 20 sh "$f.left") <"/dev/null" >"$f.out" 2>"$f.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 124 ] && say "# timed out after 20 s"
		ex_notok "$display (exit $rc): $(first_line "$f.err")"
		show "$f.err"
		continue
	fi
	why=''
	if [ -f "$f.right" ]; then
		(cd "$dir" && exec timeout -k 5 20 sh "$f.right") <"$f.out" >"$f.rout" 2>"$f.rerr"
		rrc=$?
		if [ "$rrc" -ne 0 ]; then
			why="the filter '$(tr '\n' ' ' <"$f.right")' exits $rrc"
			msg=$(first_line "$f.rerr")
			[ -n "$msg" ] || msg=$(first_line "$f.rout")
			why="$why: $msg"
			show "$f.rout"
			show "$f.rerr"
		fi
	fi
	case $kind in
	record)
		data=$(path "$chk" "$dir")
		if [ ! -s "$data" ]; then why="${why:+$why; }no data file $chk afterwards"
		elif [ -z "$(find "$data" -newer "$tmp/stamp")" ]; then why="${why:+$why; }$chk was not rewritten"
		fi ;;
	report)
		if [ "$outp" != - ] && [ ! -s "$(path "$outp" "$dir")" ]; then
			why="${why:+$why; }no report in $outp"
		fi ;;
	setcap)
		if command -v getcap >/dev/null 2>&1 && [ -z "$(getcap "$WPCOPY")" ]; then
			why="${why:+$why; }the copy has no capabilities"
		fi
		WP=$WPCOPY ;;
	esac
	if [ -n "$why" ]; then ex_notok "$display (exit 0): $why"
	else ex_ok "$display"; fi
done <"$ex/list"

{ kill -KILL "$BGPID"; wait "$BGPID"; } 2>/dev/null
finish
