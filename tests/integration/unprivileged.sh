# unprivileged.sh: an ordinary user (nobody) profiles their own command
# with kernel.perf_event_paranoid = 2: exact off-CPU records (SWITCH_*),
# no off-CPU stacks (they need kernel-mode sampling), one warning saying so.
# Also what such a user may not do, and --user as root.
# shellcheck source=tests/integration/lib.sh
. "$TESTS_SRCDIR/integration/lib.sh"

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null) ||
	skip "cannot read /proc/sys/kernel/perf_event_paranoid"
[ "$paranoid" -le 2 ] ||
	skip "kernel.perf_event_paranoid is $paranoid: users may not profile at all (needs <= 2)"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to user nobody (running as uid $(id -u))"
command -v setpriv >/dev/null 2>&1 || skip "setpriv not found (util-linux)"
id nobody >/dev/null 2>&1 || skip "no user 'nobody'"
grp=$(id -gn nobody)

as_nobody() { setpriv --reuid=nobody --regid="$grp" --clear-groups "$@"; }
chmod 1777 "$tmp"
# A build in a directory other users cannot enter: nobody runs copies.
if ! as_nobody test -x "$WALLPROF" -a -x "$WORKLOADS/sleeper"; then
	mkdir -m 755 bin && cp "$WALLPROF" "$WORKLOADS/sleeper" bin/ || exit 99
	WALLPROF=$tmp/bin/wallprof WORKLOADS=$tmp/bin
fi
as_nobody test -x "$WALLPROF" -a -x "$WORKLOADS/sleeper" -a -w "$tmp" ||
	skip "user nobody cannot run $WALLPROF or $WORKLOADS/sleeper or write $tmp"

# paranoid 2: the user's own command, user-space only.
run wl.out rec.err as_nobody "$WALLPROF" record -o F -- "$WORKLOADS/sleeper" 10 10
check_num "as nobody: record exits 0" "$rc" -eq 0
check_num "as nobody: one warning" "$(grep -c '^wallprof: warning: ' rec.err)" -eq 1
check "as nobody: it says off-CPU stacks need CAP_PERFMON or paranoid <= 1" \
	grep -q '^wallprof: warning: off-CPU stacks need CAP_PERFMON or kernel.perf_event_paranoid <= 1' rec.err
check_num "as nobody: no error" "$(grep -c '^wallprof: error' rec.err)" -eq 0
tid=$(wl_field wl.out sleeper tid)
[ -n "$tid" ] || { fail "as nobody: the workload reported its sleeper thread"; cat wl.out rec.err; finish; }
check "as nobody: the data file belongs to nobody" [ "$(stat -c %U F)" = nobody ]
as_nobody "$WALLPROF" report --dump -i F >d 2>d.err
check_num "as nobody: report --dump exits 0" $? -eq 0
check "as nobody: the header flags off-cpu-stacks-denied" \
	grep -Eq '^# flags:.* off-cpu-stacks-denied( |$)' d
check "as nobody: no kernel-samples flag" no_match '^# flags:.* kernel-' d
# Its 10 sleeps, and a few more blocks at start and exit as in sleeper.sh.
check_range "as nobody: SWITCH_OUT records of the sleeper thread" "$(count SWITCH_OUT d "$tid")" 10 15
check_num "as nobody: SWITCH_IN records of the sleeper thread" "$(count SWITCH_IN d "$tid")" -ge 10
check_num "as nobody: no switch-out stack samples" "$(switch_samples d)" -eq 0
check "as nobody: no switch-out stacks event" no_match '^# event .*, switch-out stacks, ' d
check "as nobody: nothing was lost" grep -q '^# lost: 0 records, 0 samples' d

# What nobody may not do: someone else's process, every CPU.
sleep 30 &
other=$!
bg_pids="$bg_pids $other"
for what in "-p $other" "-t $other" "-a -d 1"; do
	# shellcheck disable=SC2086
	run out err as_nobody "$WALLPROF" record $what -o G
	check_num "as nobody, $what: exit status 1" "$rc" -eq 1
	check_num "as nobody, $what: one error line" "$(grep -c '^wallprof: error: ' err)" -eq 1
	check_num "as nobody, $what: and nothing else" "$(nlines err)" -eq 1
	check "as nobody, $what: it says what is missing" grep -Eq 'CAP_PERFMON|CAP_SYS_PTRACE' err
	check "as nobody, $what: no data file" [ ! -e G ]
done
kill "$other"
# An error comes alone: no warning about what the recording would have lacked.
for what in "--user root -- true" "-m 64M -- true"; do
	# shellcheck disable=SC2086
	run out err as_nobody "$WALLPROF" record $what -o G
	check_num "as nobody, $what: exit status 1" "$rc" -eq 1
	check_num "as nobody, $what: one line, an error" "$(grep -c '^wallprof: error: ' err)" -eq 1
	check_num "as nobody, $what: and nothing else" "$(nlines err)" -eq 1
	sed 's/^/# /' err
	check "as nobody, $what: no data file" [ ! -e G ]
done

# --user (as root): the command runs as that user, without capabilities.
run out err "$WALLPROF" record --user nobody -o U -- sh -c 'id -un; grep ^CapEff: /proc/self/status'
check_num "--user nobody: record exits 0" "$rc" -eq 0
check "--user nobody: the command runs as nobody" grep -qx nobody out
check "--user nobody: the command has no capabilities" grep -Eq '^CapEff:[[:space:]]+0+$' out

finish
