#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""export-clickhouse.py: the ClickHouse side of export-clickhouse.sh.

  query URL SQL          print the server's answer to SQL
  wait URL SECONDS       exit 0 once the server answers, 1 if it never did
  ledger URL HOSTHEX JSON [FILE_ID]
                         the host's thread rows against the threads of
                         `report --format json`: the same threads, each
                         with the same times to the nanosecond and name
  stacks URL HOSTHEX JSON
                         the host's stack rows (with their frames from
                         wallprof_stacks) against the stacks and wakers of
                         `report --format json --top 1000000`

ledger and stacks print TAP lines ("ok - ..." or "not ok - ...").
Strings are asked as hex() and read as bytes: JSON shows a byte that is
not UTF-8 as U+FFFD, so they are compared as UTF-8 decoded with replacement.
"""
import collections
import json
import sys
import time
import urllib.request


def query(url, sql):
    req = urllib.request.Request(url, data=sql.encode(), method='POST')
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read()


def rows(url, sql):
    out = query(url, sql + ' FORMAT JSONEachRow')
    return [json.loads(line) for line in out.decode().splitlines() if line]


def text(h):
    return bytes.fromhex(h).decode('utf-8', 'replace')


failed = 0


def check(name, ok, detail=''):
    global failed
    if ok:
        print('ok - %s' % name)
    else:
        failed += 1
        print('not ok - %s' % name)
        if detail:
            for line in detail.splitlines()[:8]:
                print('# ' + line)


def diff(a, b):
    """What two multisets do not share, a few of each side."""
    only_a = list((a - b).elements())[:3]
    only_b = list((b - a).elements())[:3]
    return 'only in the JSON report: %r\nonly in ClickHouse: %r' % (only_a, only_b)


def ledger(url, hosthex, path, file_id=None):
    doc = json.load(open(path))
    times = ('start_ns', 'end_ns', 'wall_ns', 'on_cpu_ns', 'runnable_ns', 'preempted_ns',
             'blocked_ns')
    want = {}
    for t in doc['threads']:
        want[(t['pid'], t['tid'], t['start_ns'])] = tuple(t[k] for k in times) + (t['comm'],)
    got = {}
    for r in rows(url, "SELECT pid, tid, %s, hex(comm) AS comm FROM wallprof_threads "
                  "WHERE hex(host) = '%s'%s" % (', '.join(times), hosthex,
                                                 " AND file_id = '%s'" % file_id
                                                 if file_id else '')):
        key = (int(r['pid']), int(r['tid']), int(r['start_ns']))
        check('thread %d/%d is one row' % key[:2], key not in got)
        got[key] = tuple(int(r[k]) for k in times) + (text(r['comm']),)
    check('%d threads in the JSON report, %d in ClickHouse' % (len(want), len(got)),
          len(want) == len(got) and (len(want) > 0 or file_id))
    for key in sorted(want):
        w, g = want[key], got.get(key)
        check('thread %d/%d %s: start, end, wall, on-CPU, runnable, preempted, blocked '
              'and name as the JSON report' % (key[0], key[1], w[-1].encode('unicode_escape')
                                               .decode()),
              g == w, 'JSON:       %r\nClickHouse: %r' % (w, g))


def frames_key(frames):
    return tuple((f['name'], bool(f.get('kernel')), bool(f.get('inlined'))) for f in frames)


def stacks(url, hosthex, path):
    doc = json.load(open(path))
    want = collections.Counter()
    for s in doc['stacks']:
        fk = frames_key(s['frames'])
        want[(s['pid'], s['tid'], s['kind'], s['ns'], s['samples'], fk)] += 1
        for w in s.get('wakers', []):
            want[(s['pid'], s['tid'], 'woken', fk, w['pid'], w['tid'], w['comm'], w['ns'],
                  w['count'], frames_key(w['frames']))] += 1
    frames, unequal = {}, 0
    for r in rows(url, "SELECT hash, arrayMap(x -> hex(x), frames.function) AS names, "
                  "frames.kernel AS kernel, frames.inlined AS inlined FROM wallprof_stacks"):
        f = tuple((text(n), bool(k), bool(i))
                  for n, k, i in zip(r['names'], r['kernel'], r['inlined']))
        h = int(r['hash'])
        unequal += frames.get(h, f) != f
        frames[h] = f
    check('%d stacks: the rows of one hash have the same frames' % len(frames), not unequal)
    got = collections.Counter()
    for r in rows(url, "SELECT pid, tid, kind, stack, waker_stack, waker_pid, waker_tid, "
                  "hex(waker_comm) AS waker_comm, ns, count FROM wallprof_samples "
                  "WHERE hex(host) = '%s'" % hosthex):
        fk = frames.get(int(r['stack']))
        if r['kind'] == 'woken':
            got[(int(r['pid']), int(r['tid']), 'woken', fk, int(r['waker_pid']),
                 int(r['waker_tid']), text(r['waker_comm']), int(r['ns']), int(r['count']),
                 frames.get(int(r['waker_stack'])))] += 1
        else:
            got[(int(r['pid']), int(r['tid']), r['kind'], int(r['ns']), int(r['count']),
                 fk)] += 1
    kinds = collections.Counter(k[2] for k in want.elements())
    check('stack rows: %s, and their frames, as the JSON report\'s stacks and wakers'
          % ', '.join('%d %s' % (n, k) for k, n in sorted(kinds.items())),
          want == got and sum(want.values()) > 0, diff(want, got))


def main():
    cmd = sys.argv[1]
    if cmd == 'query':
        sys.stdout.buffer.write(query(sys.argv[2], sys.argv[3]))
        return 0
    if cmd == 'wait':
        end = time.monotonic() + float(sys.argv[3])
        while time.monotonic() < end:
            try:
                query(sys.argv[2], 'SELECT 1')
                return 0
            except Exception:
                time.sleep(0.2)
        return 1
    if cmd == 'ledger':
        ledger(*sys.argv[2:6])
    elif cmd == 'stacks':
        stacks(*sys.argv[2:5])
    else:
        print('unknown command %s' % cmd, file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
