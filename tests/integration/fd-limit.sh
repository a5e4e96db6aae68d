#!/bin/sh
# fd-limit.sh: a low limit on open files costs no names.  Thirty
# processes of thirty different files (copies of spin) are recorded; the
# report under 'ulimit -n 64' (soft and hard) names exactly what an
# unlimited one names, and so does a live recording made under it (the
# caches give descriptors back; before, 21% of the frames were unnamed
# instead of 14%, blamed on missing files, and the live recording saved
# 38% unnamed, blaming libc's symbols).  With far too few descriptors
# (12), the names lost are said to be lost for that, in the footer, the
# JSON and a warning, never blamed on symbols or missing files.  A limit
# raised to the hard one (soft 64) is not passed on to the command.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 not found (reads the JSON report)"
for i in $(seq -w 1 30); do cp "$WORKLOADS/spin" "s$i" || exit 99; done
# (A file that names the copies, so the command's own names are few.)
cat >run.sh <<'EOS'
for i in $(seq -w 1 30); do ./s$i 0.3 >/dev/null & done
wait
EOS

# unnamed FILE: the footer's share of unnamed frames ("13.7").
unnamed() { sed -n 's/^# frames: \([0-9.]*\)% unnamed.*/\1/p' "$1"; }
# blamed FILE: the files the footer says have no symbols there.
blamed() { sed -n 's/^#  *[0-9.]*% in \(.*\): no symbols there .*/\1/p' "$1" | sort; }
# no_new_blame FILE: it blames no file on symbols that the unlimited report does not.
no_new_blame() { ! blamed "$1" | comm -23 - free.blamed | grep -q .; }

# (The stack copies kept, --unwind=report: report unwinds and names them
# under each limit.)
run out rec.err "$WALLPROF" record -q --unwind=report -o many.data -- sh run.sh
check_num "record exits 0" "$rc" -eq 0
run free.txt free.err "$WALLPROF" report -i many.data --no-cache
check_num "report, no limit: exits 0" "$rc" -eq 0
blamed free.txt >free.blamed
echo "# no limit: $(unnamed free.txt)% unnamed; no symbols in: $(cat free.blamed | tr '\n' ' ')"

# ulimit -n 64, soft and hard: the same names.
run low.txt low.err sh -c 'ulimit -n 64 && exec "$@"' - "$WALLPROF" report -i many.data --no-cache
check_num "report, ulimit -n 64: exits 0" "$rc" -eq 0
check "report, ulimit -n 64: as many frames named as without a limit ($(unnamed low.txt)% unnamed)" \
	[ "$(unnamed low.txt)" = "$(unnamed free.txt)" ]
check "report, ulimit -n 64: nothing said of descriptors or files" [ ! -s low.err ]
sed 's/^/# /' low.err | head -n 3
check "report, ulimit -n 64: no more files blamed on symbols" no_new_blame low.txt
check "report, ulimit -n 64: no file missing" no_match 'missing' low.txt

# Soft limit 64 only: raised to the hard one, and the same names.
run soft.txt soft.err sh -c 'ulimit -Sn 64 && exec "$@"' - "$WALLPROF" report -i many.data --no-cache
check "report, ulimit -Sn 64: as many frames named" [ "$(unnamed soft.txt)" = "$(unnamed free.txt)" ]
run cmd.out cmd.err sh -c 'ulimit -Sn 64 && exec "$@"' - "$WALLPROF" record -q -o lim.data -- \
	sh -c 'ulimit -Sn'
check "record, ulimit -Sn 64: the command's limit is its own" grep -qx 64 cmd.out

# ulimit -n 12: names are lost, and said to be lost for that.
run few.txt few.err sh -c 'ulimit -n 12 && exec "$@"' - "$WALLPROF" report -i many.data --no-cache
check_num "report, ulimit -n 12: exits 0" "$rc" -eq 0
check "report, ulimit -n 12: a warning says names were lost for lack of descriptors" \
	grep -q "^wallprof: warning: some frames were left unnamed for lack of file descriptors (the limit is 12)" few.err
check "report, ulimit -n 12: the footer says so" \
	grep -q '^# frames: .*names lost for lack of file descriptors (the limit is 12' few.txt
check "report, ulimit -n 12: the files it lacked are named as such" \
	grep -q '% in .*: wallprof lacked file descriptors to read it' few.txt
check "report, ulimit -n 12: no file blamed on symbols that has them" no_new_blame few.txt
check "report, ulimit -n 12: no file said to be missing" no_match 'missing|cannot open' few.txt
check "report, ulimit -n 12: nor on stderr" no_match 'cannot open|Too many open files' few.err
sh -c 'ulimit -n 12 && exec "$@"' - "$WALLPROF" report -i many.data --no-cache --format json \
	>few.json 2>/dev/null
check "report, ulimit -n 12: JSON gives the reason no-descriptors" \
	python3 -c 'import json, sys
q = json.load(open(sys.argv[1]))["quality"]
sys.exit(0 if any(f["reason"] == "no-descriptors" for f in q["unnamed_files"]) else 1)' few.json

# A live recording under ulimit -n 64 saves the names it would save without.
run out live.err sh -c 'ulimit -n 64 && exec "$@"' - "$WALLPROF" record -q --unwind=live \
	-o live.data -- sh run.sh
check_num "record --unwind=live, ulimit -n 64: exits 0" "$rc" -eq 0
# (Under load the unwinder may fall behind, and says so: that is no file's fault.)
check "record --unwind=live, ulimit -n 64: nothing said of descriptors or files" \
	no_match 'descriptor|open files|cannot open|ulimit' live.err
sed 's/^/# /' live.err
run lr.txt lr.err "$WALLPROF" report -i live.data
echo "# live under ulimit -n 64: $(unnamed lr.txt)% unnamed"
check "record --unwind=live, ulimit -n 64: no more files blamed on symbols" no_new_blame lr.txt
# Another recording of the same work: its shares differ a little.
check "record --unwind=live, ulimit -n 64: about as many frames named ($(unnamed lr.txt)% vs $(unnamed free.txt)%)" \
	awk -v a="$(unnamed lr.txt)" -v b="$(unnamed free.txt)" 'BEGIN { exit !(a + 0 <= b + 5) }'
finish
