#!/bin/sh
# A waker outside the recorded processes has a name: attached to a
# PostgreSQL server (-p), the queries of a psql client, which the
# recording does not follow, wake the server's backend; the report names
# that waker psql, with the client's process ID, where it showed only
# ":TID".  The name is read from /proc while recording (a TASK_NAME
# record in the file), so it holds after the client is gone.  It is read
# once the recorder has read the first wake-up from the rings, some 50
# ms later, and longer on a busy machine: 300 queries may take psql less
# than that, so it ends with a two-second pause (a client gone before the read
# is named by its tid, as the man page says).
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
pg_nobody
psql=$(command -v psql || echo "$bin/psql")
[ -x "$psql" ] || skip "no psql (Debian package postgresql-client-15)"

i=1
# (Each query sleeps a millisecond: 300 bare queries come in some 50 ms,
# over 8000 switch-outs a second, where record turns the wake-ups off
# and on (twice the stack budget, wallprof-record(1) --switch-stacks) and
# keeps a handful; naming them is what this test is about.)
while [ $i -le 300 ]; do echo "select $i, pg_sleep(0.001);"; i=$((i + 1)); done > queries.sql
echo "select pg_sleep(2);" >> queries.sql
"$WALLPROF" record -q -o W.data -p "$pm" -d 6 > rec.out 2> rec.err &
rec=$!
bg_pids="$bg_pids $rec"
sleep 1
# Not through a function: $! is then setpriv's pid, which execs psql.
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	"$psql" -h "$tmp/sock" -q -f queries.sql postgres > psql.out 2> psql.err &
client=$!
t0=$(date +%s%N)
wait "$client"
echo "# psql ran for $((($(date +%s%N) - t0) / 1000000)) ms"
check_num "psql ran its 300 queries" "$(grep -c . psql.out)" -ge 300
wait "$rec"
check_num "record -p the server exits 0" "$?" -eq 0
dump W.data d
check "the file names the client: TASK_NAME $client/$client psql" grep -q " TASK_NAME $client/$client psql\$" d
"$WALLPROF" report -i W.data --format json > W.json 2> json.err
python3 - "$client" W.json > wakers.out <<'PY'
import json, sys
client = int(sys.argv[1])
named = unnamed = 0
def walk(o):
    global named, unnamed
    if isinstance(o, dict):
        for w in o.get("wakers", []) if isinstance(o.get("wakers"), list) else []:
            if w.get("pid") == client:
                if w.get("comm") == "psql":
                    named += w.get("count", 0)
                elif w.get("comm", "").startswith(":"):
                    unnamed += w.get("count", 0)
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(json.load(open(sys.argv[2])))
print(named, unnamed)
PY
read -r named unnamed < wakers.out
# The wake-ups the file holds: the stack budget leaves some out when the
# queries come fast (report estimates those, and names no waker for them).
# (A raw sample names its event in field 6; one unwound live after its
# id, in parentheses.)
recorded=$(awk -v c="$client/$client" '($2 == "SAMPLE" && $6 ~ /^sched:sched_waking/ ||
	$2 == "STACK_SAMPLE" && / id [0-9]+ \(sched:sched_waking/) && $3 == c { n++ }
	END { print n + 0 }' d)
echo "# wake-ups by the client: $named named psql, $unnamed by tid alone; $recorded in the file"
# (A wake-up of a backend that was not blocked ends no wait: 90%.)
check_num "the client's wake-ups of the backend are named psql ($named of $recorded in the file)" \
	"$((${named:-0} * 10))" -ge "$((recorded * 9))"
check_num "it woke the backend for its queries" "$recorded" -ge 10
check_num "none is named by its tid alone" "${unnamed:-1}" -eq 0
"$WALLPROF" report -i W.data --mode wall > W.text 2> text.err
check "who woke whom names it psql ($client/$client psql)" grep -Eq "^[0-9]+/[0-9]+ postgres +$client/$client psql " W.text
finish
