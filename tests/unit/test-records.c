/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-records.c: the typed decoders of MMAP2, FORK/EXIT, COMM and LOST records. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "layout.h"
#include "tap.h"

static uint8_t buf[512];

/* A record of type with body at buf, size rounded up to 8. */
static const struct perf_event_header *rec(uint32_t type, uint16_t misc, const void *body,
					   size_t len)
{
	struct perf_event_header *h = (void *)buf;

	memset(buf, 0, sizeof(buf));
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)(sizeof(*h) + ((len + 7) & ~(size_t)7));
	memcpy(h + 1, body, len);
	return h;
}

static void test_mmap2(void)
{
	struct wp_mmap2 in = {
		.pid = 10, .tid = 11, .addr = 0x400000, .len = 0x2000, .pgoff = 0x1000,
		.maj = 8, .min = 1, .ino = 1234, .ino_generation = 5,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .filename = "/usr/bin/x",
	}, out;
	uint8_t body[128];
	size_t n = wp_mmap2_body(&in, body, sizeof(body));

	is_int((int)n, 80, "mmap2 body: 64 fixed bytes and the name, padded to 8");
	is_int(wp_mmap2_body(&in, body, 70), 0, "mmap2 body: too small a buffer");
	is_int(wp_mmap2_parse(rec(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, n), &out), 0,
	       "mmap2: decoded");
	ok(out.pid == 10 && out.tid == 11 && out.addr == 0x400000 && out.len == 0x2000 &&
	   out.pgoff == 0x1000, "mmap2: pid, tid, range and offset");
	ok(!out.has_build_id && out.maj == 8 && out.min == 1 && out.ino == 1234 &&
	   out.ino_generation == 5, "mmap2: device and inode");
	ok(out.prot == (PROT_READ | PROT_EXEC) && out.flags == MAP_PRIVATE, "mmap2: prot and flags");
	ok(!strcmp(out.filename, "/usr/bin/x"), "mmap2: the file name");
	/* The build-id form shares the bytes of the device and inode. */
	body[32] = 20;
	for (int i = 0; i < 20; i++)
		body[36 + i] = (uint8_t)(0xa0 + i);
	is_int(wp_mmap2_parse(rec(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, n), &out),
	       0, "mmap2 with a build id: decoded");
	ok(out.has_build_id && out.build_id_size == 20 && out.build_id[0] == 0xa0 &&
	   out.build_id[19] == 0xb3 && out.ino == 0, "mmap2: the build id instead of the inode");
	body[32] = 200;
	wp_mmap2_parse(rec(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, body, n), &out);
	is_int(out.build_id_size, 20, "mmap2: a build id size over 20 is cut to 20");
	/* Damaged: too short, or a name without its NUL. */
	is_int(wp_mmap2_parse(rec(PERF_RECORD_MMAP2, 0, body, 56), &out), -EBADMSG,
	       "mmap2: shorter than its fixed part");
	memset(body + 64, 'a', 16);
	is_int(wp_mmap2_parse(rec(PERF_RECORD_MMAP2, 0, body, 80), &out), -EBADMSG,
	       "mmap2: a name that runs off the record");
	is_int(wp_mmap2_parse(rec(PERF_RECORD_COMM, 0, body, n), &out), -EBADMSG,
	       "mmap2: not an MMAP2 record");
}

static void test_task_comm_lost(void)
{
	uint32_t task[6] = { 100, 1, 101, 100, 0, 0 };
	uint64_t t = 123456789, id, lost;
	struct wp_task_event te;
	struct wp_comm c;
	uint8_t body[32] = { 0 };

	memcpy(task + 4, &t, 8);
	is_int(wp_task_event_parse(rec(PERF_RECORD_FORK, 0, task, sizeof(task)), &te), 0, "fork: decoded");
	ok(te.pid == 100 && te.ppid == 1 && te.tid == 101 && te.ptid == 100 && te.time == t,
	   "fork: pid, ppid, tid, ptid, time");
	is_int(wp_task_event_parse(rec(PERF_RECORD_EXIT, 0, task, 16), &te), -EBADMSG,
	       "exit: too short");
	memcpy(body, task, 8);
	memcpy(body + 8, "worker", 7);
	is_int(wp_comm_parse(rec(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 16), &c), 0,
	       "comm: decoded");
	ok(c.pid == 100 && c.tid == 1 && c.len == 6 && !strcmp(c.comm, "worker") && c.exec,
	   "comm: ids, name and the exec flag");
	memset(body + 8, 'x', 24);
	is_int(wp_comm_parse(rec(PERF_RECORD_COMM, 0, body, 32), &c), -EBADMSG,
	       "comm: a name that runs off the record");
	memcpy(body, &t, 8);
	memcpy(body + 8, &t, 8);
	is_int(wp_lost_parse(rec(PERF_RECORD_LOST, 0, body, 16), &id, &lost), 0, "lost: decoded");
	ok(id == t && lost == t, "lost: id and count");
	is_int(wp_lost_parse(rec(PERF_RECORD_LOST_SAMPLES, 0, body, 8), &id, &lost), 0,
	       "lost samples: decoded");
	ok(id == 0 && lost == t, "lost samples: count, no id");
}

int main(void)
{
	test_mmap2();
	test_task_comm_lost();
	return done_testing();
}
