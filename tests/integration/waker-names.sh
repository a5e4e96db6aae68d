#!/bin/sh
# A waker outside the recorded processes has a name: attached to a
# PostgreSQL server (-p), the queries of a psql client, which the
# recording does not follow, wake the server's backend; the report names
# that waker psql, with the client's process ID, where it showed only
# ":TID".  The name is read from /proc while recording (a TASK_NAME
# record in the file), so it holds after the client is gone.
set -u
. "$TESTS_SRCDIR/integration/lib.sh"
pg_nobody
psql=$(command -v psql || echo "$bin/psql")
[ -x "$psql" ] || skip "no psql (Debian package postgresql-client-15)"

i=1
while [ $i -le 300 ]; do echo "select $i;"; i=$((i + 1)); done > queries.sql
"$WALLPROF" record -q -o W.data -p "$pm" -d 4 > rec.out 2> rec.err &
rec=$!
bg_pids="$bg_pids $rec"
sleep 1
# Not through a function: $! is then setpriv's pid, which execs psql.
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	"$psql" -h "$tmp/sock" -q -f queries.sql postgres > psql.out 2> psql.err &
client=$!
wait "$client"
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
echo "# wake-ups by the client: $named named psql, $unnamed by tid alone"
check_num "the client's wake-ups of the backend are named psql" "${named:-0}" -ge 100
check_num "none is named by its tid alone" "${unnamed:-1}" -eq 0
"$WALLPROF" report -i W.data --mode wall > W.text 2> text.err
check "who woke whom names it psql ($client/$client psql)" grep -Eq "^[0-9]+/[0-9]+ postgres +$client/$client psql " W.text
finish
