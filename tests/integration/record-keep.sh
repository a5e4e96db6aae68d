# record-keep.sh: a recording is never thrown away once it has data.
#   - a file size limit (EFBIG, like a full disk) cuts it short, and what
#     was written is kept (exit 3);
#   - a closed standard error (a pipe whose reader is gone, or no stderr
#     at all) costs no data: the file is committed before anything is said;
#   - what would make the final rename fail is refused before the command
#     runs, in one line; when the rename still fails at the end, the data is
#     kept under a name that is printed (exit 3);
#   - a recorder killed with SIGKILL leaves its temporary file, which report
#     finds and reads, and which record's next run names.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

# complete FILE: report --dump reads FILE to its summary, without an error.
complete() { dump "$1" d && grep -q '^# summary' d && no_match '^wallprof: error' d.err; }

# --- a file size limit: the same as a full disk ---------------------------
# wallprof ignores SIGXFSZ itself (its default would kill it); the limit,
# 8192 blocks of 512 or 1024 bytes, is set in a subshell.  (At 20 kHz the
# spinner fills it even with the twentieth of a CPU a busy machine gives:
# with the stack copies kept, --unwind=report; unwound live, the file
# grows with the distinct stacks and never reaches the limit.)
t0=$(date +%s)
(ulimit -f 8192 && exec "$WALLPROF" record --unwind=report -F 20000 --no-compress -o big.data -- "$WORKLOADS/spin" 3) \
	</dev/null >wl.out 2>rec.err
rc=$?
t=$(( $(date +%s) - t0 ))
check_num "file size limit: record exits 3" "$rc" -eq 3
check "file size limit: one error, 'File too large'" \
	grep -q "^wallprof: error: cannot write 'big.data': File too large$" rec.err
check "file size limit: the workload ran to its end" grep -q '^thread spinner ' wl.out
check_num "file size limit: record took as long as the workload" "$t" -ge 3
check "file size limit: the data is kept, complete up to the cut" complete big.data
check "file size limit: its summary says so" \
	grep -q '^# cut short at [0-9.]* s by a write error: File too large$' d
check_num "file size limit: cpu-clock samples were kept" "$(samples cpu-clock d)" -gt 10
check "file size limit: no temporary file" no_file '\.wallprof-'
sed 's/^/# /' rec.err

# --- standard error closed --------------------------------------------------
# The reader of the pipe that stderr (and the command's output) go to exits
# after 3 lines: the command's seq dies of SIGPIPE, wallprof must not.
{
	"$WALLPROF" record -o app.data -- sh -c 'seq 100000; "$0" 1 >/dev/null' \
		"$WORKLOADS/spin" </dev/null
	echo $? >rc.out
} 2>&1 | head -n 3 >head.out
check_num "stderr into a closed pipe: record exits with the command's status, 0" \
	"$(cat rc.out)" -eq 0
check "stderr into a closed pipe: app.data is complete" complete app.data
check "stderr into a closed pipe: no temporary file" no_file '\.wallprof-'
"$WALLPROF" record -o closed.data -- true </dev/null >out 2>&-
check_num "stderr closed: record exits 0" $? -eq 0
check "stderr closed: the file is complete (no message went into it)" complete closed.data

# --- the target, checked before the command runs ----------------------------
mkdir D
run out err "$WALLPROF" record -f -o D -- touch ran
check_num "-f -o DIRECTORY: exit status 1" "$rc" -eq 1
check_num "-f -o DIRECTORY: one line" "$(nlines err)" -eq 1
check "-f -o DIRECTORY: it says it is a directory" \
	grep -q "^wallprof: error: 'D' is a directory; wallprof writes its data only to regular files" err
check "-f -o DIRECTORY: the command did not run" [ ! -e ran ]
check "-f -o DIRECTORY: no temporary file" no_file '\.wallprof-'

# Two recordings at once with the default name: the later one is refused.
mkdir two && cd two || exit 99
"$WALLPROF" record -q -- "$WORKLOADS/spin" 3 >wl.out 2>rec.err &
first=$!
bg_pids="$bg_pids $first"
has_tmp() { ls -A | grep -q '^\.wallprof\.data\.wallprof-'; }
wait_until 100 has_tmp || fail "the first recording created its temporary file"
run out err "$WALLPROF" record -- touch ran
check_num "a second recording to wallprof.data: exit status 1" "$rc" -eq 1
check_num "a second recording to wallprof.data: one line" "$(nlines err)" -eq 1
check "a second recording to wallprof.data: it says another wallprof records to it" \
	grep -q "^wallprof: error: another wallprof is recording to 'wallprof.data' now (into '\.wallprof\.data\.wallprof-......'); choose another name with -o$" err
check "a second recording to wallprof.data: the command did not run" [ ! -e ran ]
wait "$first"
check_num "the first recording exits 0" $? -eq 0
check "the first recording is complete" complete wallprof.data
cd .. || exit 99

# A file that appears under the name during the recording is left alone,
# and the recording is kept under a name that is printed.
run out err "$WALLPROF" record -o F -- sh -c 'sleep 0.5; echo other >F; sleep 0.5'
check_num "F created meanwhile: exit status 3" "$rc" -eq 3
check "F created meanwhile: F is untouched" grep -qx other F
kept=$(sed -n "s/^wallprof: error: 'F' appeared during the recording and is left as it is; the recording is kept as '\(F\.wallprof-......\)'$/\1/p" err)
check "F created meanwhile: the error names where the data is (${kept:-none})" [ -n "$kept" ]
check "F created meanwhile: the data is there, complete" complete "${kept:-none}"
check "F created meanwhile: the last line says where it was written" \
	grep -q "^wallprof: wrote .* MiB to '${kept:-none}'$" err
check "F created meanwhile: no hidden temporary file" no_file '^\.F\.wallprof-'
rm -f "$kept"

# --- a recorder killed with SIGKILL -----------------------------------------
mkdir k && cd k || exit 99
"$WALLPROF" record -- "$WORKLOADS/spin" 30 >wl.out 2>rec.err &
wp=$!
bg_pids="$bg_pids $wp"
spin_child() {
	_c=$(pgrep -P "$wp" -x spin 2>/dev/null || ps -o pid= -o comm= --ppid "$wp" |
		awk '$2 == "spin" { print $1 }')
	[ -n "$_c" ] && child=$_c
}
child=''
wait_until 100 spin_child || fail "the workload started"
bg_pids="$bg_pids $child"
sleep 1.5	# a few blocks written
run out err "$WALLPROF" report
# A block being written as report reads is damage to it (1).
check_range "report while recording: exit status 0 (or 1)" "$rc" 0 1
check "report while recording: it names the file a running wallprof writes" \
	grep -q "^wallprof: warning: 'wallprof.data' does not exist; reading '\.wallprof\.data\.wallprof-......', which a running wallprof is still recording$" err
kill -KILL "$wp"
wait "$wp" 2>/dev/null
kill "$child" 2>/dev/null
tmpname=$(ls -A | grep '^\.wallprof\.data\.wallprof-')
check "SIGKILL: the temporary file is left (${tmpname:-none})" [ -n "$tmpname" ]
run out err "$WALLPROF" report
# A block half written when the recorder died is reported as damage (1).
check_range "SIGKILL: report exits 0 (or 1 if a block was cut)" "$rc" 0 1
check "SIGKILL: report names the file it reads instead of wallprof.data" \
	grep -q "^wallprof: warning: 'wallprof.data' does not exist; reading '$tmpname', an unfinished recording left by a wallprof that was killed$" err
check "SIGKILL: report says the recording did not finish" grep -q 'did not finish' err
check "SIGKILL: the spinner thread is reported" grep -q ' spinner ' out
sed 's/^/# /' err
run out err "$WALLPROF" record -q -- true
check_num "SIGKILL, then record: exit status 0" "$rc" -eq 0
check "SIGKILL, then record: it names the unfinished recording" \
	grep -q "^wallprof: warning: '$tmpname' holds an unfinished recording of 'wallprof.data' (its wallprof was killed); 'wallprof report -i $tmpname' reads it$" err
check "SIGKILL, then record: the new recording is complete" complete wallprof.data
cd .. || exit 99

finish
