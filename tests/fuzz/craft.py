#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the crafted inputs of the fuzz corpora (tests/fuzz/corpus-*/crafted-*).

    python3 tests/fuzz/craft.py      # rewrites them in place

Small data files, each built here field by field from wallprof-data(5):
the shapes a recording can take (stored and zstd blocks, a KSYMS block,
unknown tags, blocks and records), and the edges of the header.  They
seed the fuzzers and are replayed by every build's unit tests
(test-fuzz-reader, test-fuzz-report).  Recordings of real programs are
made at fuzzing time instead (tests/fuzz/run.sh): they name files of the
machine they were made on.
"""
import ctypes
import ctypes.util
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# Meta tags and block types (src/datafile.c, wallprof-data(5)).
TAG_CLOCK, TAG_HOSTNAME, TAG_OS_RELEASE, TAG_MACHINE, TAG_CMDLINE = 1, 2, 3, 4, 5
TAG_SAMPLE_FORMAT, TAG_SYSTEM, TAG_TARGET, TAG_EVENT, TAG_BOOT_ID = 6, 7, 8, 9, 10
BLOCK_RECORDS, BLOCK_SUMMARY, BLOCK_KSYMS, BLOCK_NAMES = 1, 2, 3, 5
BLOCK_ZSTD = 1

# perf_event.h
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_CALLCHAIN = 0x1, 0x2, 0x4, 0x20
SAMPLE_CPU, SAMPLE_PERIOD, SAMPLE_IDENTIFIER = 0x80, 0x100, 0x10000
SAMPLE_TYPE = (SAMPLE_IDENTIFIER | SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME |
               SAMPLE_CALLCHAIN | SAMPLE_CPU | SAMPLE_PERIOD)
RECORD_MMAP2, RECORD_COMM, RECORD_EXIT, RECORD_FORK = 10, 3, 4, 7
RECORD_SAMPLE, RECORD_LOST, RECORD_SWITCH = 9, 2, 14
RECORD_ROUND, RECORD_THREAD = 100, 102
RECORD_DSO, RECORD_PLACE, RECORD_STACK, RECORD_STACK_SAMPLE = 106, 107, 108, 109
MISC_USER, MISC_KERNEL = 2, 1
MISC_COMM_EXEC = MISC_SWITCH_OUT = 0x2000
MISC_SWITCH_OUT_PREEMPT = 0x4000
CONTEXT_KERNEL, CONTEXT_USER = 2**64 - 128, 2**64 - 512

# wp_meta.flags
META_KERNEL_SAMPLES, META_KERNEL_STACKS, META_SWITCHES = 1, 2, 4
META_OFFCPU_STACKS = 8
META_STACK_TABLE = 0x100

START = 1000 * 10**9          # record start on the event clock
ONCPU_ID, SWITCH_ID = 11, 12  # event ids
PID = 4242


def pad8(b):
    return b + bytes(-len(b) % 8)


def tlv(tag, payload):
    return struct.pack("<II", tag, len(payload)) + pad8(payload)


def event(name, role, typ, config, period, ids):
    attr = bytearray(64)      # PERF_ATTR_SIZE_VER0
    struct.pack_into("<IIQQQ", attr, 0, typ, 64, config, period, SAMPLE_TYPE)
    return tlv(TAG_EVENT, struct.pack("<32sIIII", name.encode(), role, 64, len(ids), 0) +
               bytes(attr) + b"".join(struct.pack("<Q", i) for i in ids))


def meta(host="crafted", extra=b"", flags=0):
    return b"".join([
        tlv(TAG_CLOCK, struct.pack("<iIQQ", 1, 0, START, 1700000000 * 10**9)),
        tlv(TAG_HOSTNAME, host.encode() + b"\0"),
        tlv(TAG_OS_RELEASE, b"0.0.0-crafted\0"),
        tlv(TAG_MACHINE, b"x86_64\0"),
        tlv(TAG_BOOT_ID, b"00000000-0000-0000-0000-000000000000\0"),
        tlv(TAG_CMDLINE, b"wallprof\0record\0--\0craft\0"),
        tlv(TAG_SAMPLE_FORMAT, struct.pack("<QQIIQ", SAMPLE_TYPE, 0, 0, 1, 5000000)),
        tlv(TAG_SYSTEM, struct.pack("<II", 2, 4096)),
        tlv(TAG_TARGET, struct.pack("<IIQ", 0, 0, META_KERNEL_SAMPLES | META_KERNEL_STACKS |
                                    META_SWITCHES | META_OFFCPU_STACKS | flags)),
        event("cpu-clock", 0, 1, 0, 5000000, [ONCPU_ID]),
        event("context-switches", 1, 1, 3, 1, [SWITCH_ID]),
        extra,
    ])


def header(meta_bytes, version=1, magic=b"WALLPROF", order=0x01020304):
    return magic + struct.pack("<IIQ", version, order, len(meta_bytes)) + meta_bytes


def block(typ, payload, flags=0, stored=None, raw_size=None):
    stored = payload if stored is None else stored
    raw_size = len(payload) if raw_size is None else raw_size
    return struct.pack("<IIQQ", typ, flags, len(stored), raw_size) + pad8(stored)


def zstd_raw(payload):
    """A zstd frame holding payload in raw (stored) blocks: no compressor needed."""
    out = struct.pack("<I", 0xFD2FB528)
    out += bytes([0xA0]) + struct.pack("<I", len(payload))  # single segment, 4-byte size
    chunks = [payload[i:i + 65536] for i in range(0, len(payload), 65536)] or [b""]
    for n, c in enumerate(chunks):
        last = n == len(chunks) - 1
        out += struct.pack("<I", (len(c) << 3) | last)[:3] + c
    return out


def zstd(payload, level=19):
    """payload as one zstd frame, made by the system's libzstd (a build dependency)."""
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_compress.restype = ctypes.c_size_t
    lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                  ctypes.c_size_t, ctypes.c_int]
    cap = lib.ZSTD_compressBound(len(payload))
    out = ctypes.create_string_buffer(cap)
    n = lib.ZSTD_compress(out, cap, payload, len(payload), level)
    assert n <= cap
    return out.raw[:n]


def sample_id(tid, time, ident, cpu=0):
    return struct.pack("<IIQIIQ", PID, tid, time, cpu, 0, ident)


def rec(typ, misc, body):
    return struct.pack("<IHH", typ, misc, 8 + len(body)) + body


def trailed(typ, misc, body, tid, time, ident=0):
    return rec(typ, misc, pad8(body) + sample_id(tid, time, ident))


def sample(tid, time, ident, ips, misc=MISC_USER):
    chain = struct.pack("<Q", len(ips)) + b"".join(struct.pack("<Q", i) for i in ips)
    return rec(RECORD_SAMPLE, misc, struct.pack("<QQIIQIIQ", ident, ips[-1], PID, tid, time,
                                                0, 0, 5000000) + chain)


def records():
    """A process: exec, one more thread, on-CPU samples, a block, a preemption, exits."""
    t = START
    ms = 10**6
    r = [
        trailed(RECORD_COMM, MISC_COMM_EXEC, struct.pack("<II", PID, PID) + b"craft\0", PID, t + ms, 0),
        trailed(RECORD_MMAP2, 0, struct.pack("<IIQQQIIQQII", PID, PID, 0x400000, 0x1000, 0, 0, 0, 0,
                                             0, 5, 2) + b"/nonexistent/craft\0", PID, t + ms, 0),
        trailed(RECORD_FORK, 0, struct.pack("<IIIIQ", PID, PID, PID + 1, PID, t + 2 * ms),
                PID + 1, t + 2 * ms, ONCPU_ID),
        sample(PID, t + 3 * ms, ONCPU_ID, [CONTEXT_USER, 0x400100, 0x400200]),
        rec(RECORD_ROUND, 0, b""),
        sample(PID, t + 4 * ms, SWITCH_ID, [CONTEXT_KERNEL, 0xffffffff81000100,
                                              CONTEXT_USER, 0x400300], MISC_KERNEL),
        trailed(RECORD_SWITCH, MISC_SWITCH_OUT, b"", PID, t + 4 * ms, SWITCH_ID),
        trailed(RECORD_SWITCH, 0, b"", PID + 1, t + 4 * ms + 1000, SWITCH_ID),
        sample(PID + 1, t + 5 * ms, ONCPU_ID, [CONTEXT_USER, 0x400400]),
        trailed(RECORD_SWITCH, MISC_SWITCH_OUT | MISC_SWITCH_OUT_PREEMPT, b"", PID + 1,
                t + 6 * ms, SWITCH_ID),
        trailed(RECORD_SWITCH, 0, b"", PID, t + 7 * ms, SWITCH_ID),
        rec(RECORD_ROUND, 0, b""),
        trailed(RECORD_LOST, 0, struct.pack("<QQ", ONCPU_ID, 3), PID, t + 8 * ms, ONCPU_ID),
        rec(RECORD_THREAD, 0, struct.pack("<IIQQ", PID, PID + 2, t, t - ms)),
        trailed(RECORD_EXIT, 0, struct.pack("<IIIIQ", PID, PID, PID + 1, PID, t + 9 * ms),
                PID + 1, t + 9 * ms, ONCPU_ID),
        rec(RECORD_ROUND, 0, b""),
    ]
    return r


def names(places, nr_strings=None):
    """A NAMES block's payload: places as (id, [(flags, name, where, src, line, entry)])."""
    strings, index = [], {}

    def sid(text):
        if text is None:
            return 0xffffffff
        if text not in index:
            index[text] = len(strings)
            strings.append(text)
        return index[text]

    heads, frames = b"", b""
    nframes = 0
    for ident, chain in places:
        heads += struct.pack("<II", ident, nframes)
        for flags, name, where, src, line, entry in chain:
            frames += struct.pack("<IIIIIIQ", flags, sid(name), sid(where), sid(src), line, 0,
                                  entry)
            nframes += 1
    text = b"".join(x.encode() + b"\0" for x in strings)
    head = struct.pack("<IIIIQ", len(places), nframes,
                       len(strings) if nr_strings is None else nr_strings, 0, len(text))
    return pad8(head + heads + frames + text)


NAMES = names([(0, [(1, "craft_inner", "craft.c:3", "craft.h", 2, 0x100),
                    (0, "craft_outer", "craft.c:9", "craft.c", 8, 0x80)]),
               (5, [(2, "craft+0x200", None, None, 0, 0x200)]),  # its DSO never defined
               (1, [(0, "not_for_the_kernel", None, None, 0, 0)]),  # a kernel place: unused
               (4000, [(0, "no_such_place", None, None, 0, 0)])])


def stack_table():
    """Version 2: a stack table, with definitions sound and not, and samples of both kinds."""
    t, ms = START, 10**6
    r = records()

    def place(ident, kind, where, addr, pgoff=0, flags=0):
        return rec(RECORD_PLACE, 0, struct.pack("<IBBHIIQQ", ident, kind, flags, 0, where, 0,
                                                addr, pgoff))

    def stack(ident, flags, ip, chain, user, needed=0):
        ids = b"".join(struct.pack("<I", i) for i in chain + user)
        return rec(RECORD_STACK, 0, pad8(struct.pack("<IIIHHQ", ident, flags, ip, len(chain),
                                                     len(user), needed) + ids))

    def stack_sample(tid, time, ident, stk, thread=0, flags=0):
        return rec(RECORD_STACK_SAMPLE, MISC_USER, struct.pack("<QQIIIIII", time, ident, PID,
                                                               tid, 0, stk, thread, flags))

    table = [
        rec(RECORD_DSO, 0, pad8(struct.pack("<IIIB3xQ24s", 5, 8, 1, 4, 77, b"\xde\xad\xbe\xef") +
                                b"/nonexistent/craft\0")),
        place(0, 1, 5, 0x100, 0),             # in the DSO above
        place(1, 0, 0, 0xffffffff81000100),    # kernel
        place(2, 2, PID, 0x7f0000001000, 0, 1),  # anonymous, an activation
        place(3, 3, 0, 0x1234),                # no mapping
        place(4, 9, 0, 0x1),                   # a kind of the future
        place(5, 1, 99, 0x200, 0),             # a DSO never defined
        stack(0, 1 | 4, 3, [1], [0, 2, 4, 5], 70000),
        stack(1, 2, 0xffffffff, [1, 4000], []),  # an undefined place
        stack(2, 8, 0, [], [0] * 3),
        rec(RECORD_STACK, 0, struct.pack("<IIIHHQ", 3, 0, 0, 65535, 65535, 0)),  # too short
        rec(RECORD_DSO, 0, struct.pack("<IIIB3xQ24s", 6, 0, 0, 0, 0, b"") + b"noend123"),
        stack_sample(PID, t + 3 * ms + 10, ONCPU_ID, 0),
        stack_sample(PID + 1, t + 5 * ms + 10, ONCPU_ID, 77),   # no such stack
        stack_sample(0, t + 5 * ms + 20, ONCPU_ID, 0xffffffff),  # idle
        stack_sample(PID, t + 4 * ms, SWITCH_ID, 2),
        stack_sample(PID, t + 4 * ms + 5, 999, 1, PID + 1, 1),  # an unknown event
    ]
    return b"".join(r[:3] + table + r[3:])


def impossible_time():
    """A switch-in dated 2^64 - 2^60 ns: an off-CPU interval of more than 2^63 ns."""
    t, ms = START, 10**6
    return b"".join([
        trailed(RECORD_COMM, MISC_COMM_EXEC, struct.pack("<II", PID, PID) + b"craft\0", PID, t + ms, 0),
        trailed(RECORD_SWITCH, MISC_SWITCH_OUT, b"", PID, t + 2 * ms, SWITCH_ID),
        trailed(RECORD_SWITCH, 0, b"", PID, 2**64 - 2**60, SWITCH_ID),
        rec(RECORD_ROUND, 0, b""),
    ])


def bomb(blocks, raw_mib):
    """zstd RECORDS blocks of 8-byte records of a type no kernel writes, no ROUND, no summary."""
    z = zstd(struct.pack("<IHH", 63, 0, 8) * (raw_mib << 17))
    return block(BLOCK_RECORDS, b"", BLOCK_ZSTD, z, raw_mib << 20) * blocks


def summary(end=START + 10 * 10**6):
    return block(BLOCK_SUMMARY, struct.pack("<13QiIQII", end, 1700000000 * 10**9 + end - START,
                                            14, 3, 1, 4, 3, 0, 0, 4096, 0, 0, 2, 0, 0, 0, 0, 0))


BOMB_BLOCKS, BOMB_MIB = 2, 128
KSYMS = b"ffffffff81000000 craft_kernel_entry\nffffffff81000100 craft_schedule\n"
# Four million blank lines before the symbols (in 200 bytes of zstd).
BLANK_KSYMS = b"\n" * (1 << 22) + KSYMS


def files():
    recs = records()
    flat = b"".join(recs)
    m = meta()
    small = header(m) + block(BLOCK_RECORDS, b"".join(recs[:5])) + \
        block(BLOCK_RECORDS, b"".join(recs[5:])) + summary()
    return {
        "corpus-reader": {
            "crafted-empty": b"",
            "crafted-magic-only": b"WALLPROF",
            "crafted-newer-version": header(m, version=3),
            "crafted-other-byte-order": header(m, order=0x04030201),
            "crafted-meta-only": header(m),
            "crafted-meta-unknown-tag": header(meta(extra=tlv(999, b"future"))),
            "crafted-truncated-block": small[:len(header(m)) + 40],
            "crafted-unknown-block": header(m) + block(77, b"future block") +
            block(BLOCK_RECORDS, flat) + summary(),
        },
        "corpus-report": {
            "crafted-small": small,
            "crafted-zstd": header(m) + block(BLOCK_RECORDS, flat, BLOCK_ZSTD, zstd_raw(flat)) +
            block(BLOCK_KSYMS, KSYMS, BLOCK_ZSTD, zstd_raw(KSYMS)) + summary(),
            "crafted-ksyms": header(m) + block(BLOCK_RECORDS, flat) + block(BLOCK_KSYMS, KSYMS) +
            summary(),
            "crafted-no-summary": header(m) + block(BLOCK_RECORDS, flat),
            "crafted-unknown-record": header(m) + block(BLOCK_RECORDS, rec(99, 0, bytes(16)) +
                                                        flat + rec(200, 0, b"")) + summary(),
            # Inputs of bugs, fixed since: each must keep passing.
            "bug-time-past-2pow63": header(m) + block(BLOCK_RECORDS, impossible_time()) + summary(),
            "bug-zstd-bomb": header(m) + bomb(BOMB_BLOCKS, BOMB_MIB),
            "bug-ksyms-blank-lines": header(m) + block(BLOCK_RECORDS, flat) +
            block(BLOCK_KSYMS, BLANK_KSYMS, BLOCK_ZSTD, zstd(BLANK_KSYMS)) + summary(),
            "crafted-stack-table": header(meta(flags=META_STACK_TABLE), version=2) +
            block(BLOCK_RECORDS, stack_table()) + block(BLOCK_KSYMS, KSYMS) + summary(),
            "crafted-stack-table-names": header(meta(flags=META_STACK_TABLE), version=2) +
            block(BLOCK_RECORDS, stack_table()) + block(BLOCK_NAMES, NAMES) + summary(),
            "crafted-stack-table-names-damaged": header(meta(flags=META_STACK_TABLE), version=2) +
            block(BLOCK_RECORDS, stack_table()) +
            block(BLOCK_NAMES, names([(0, [(0, "f", None, None, 0, 0)])], nr_strings=7)) +
            summary(),
            # Stack table records in a file that does not say it has them.
            "crafted-stack-table-unflagged": header(m) + block(BLOCK_RECORDS, stack_table()) +
            summary(),
        },
    }


def main():
    for d, content in files().items():
        os.makedirs(os.path.join(HERE, d), exist_ok=True)
        for name, data in content.items():
            with open(os.path.join(HERE, d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
