/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-records.c: the typed decoders of the kernel's non-sample records
 * (MMAP2, FORK/EXIT, COMM, LOST, SWITCH, THROTTLE) and of wallprof's own,
 * and the encoders of synthesized bodies.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "layout.h"
#include "util.h"
#include "tap.h"

static uint64_t buf_words[64];
static uint8_t *const buf = (uint8_t *)buf_words;

/* A record of type with body at buf, size rounded up to 8. */
static const struct perf_event_header *rec(uint32_t type, uint16_t misc, const void *body,
					   size_t len)
{
	struct perf_event_header *h = (void *)buf;

	memset(buf_words, 0, sizeof(buf_words));
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

static void test_comm_body(void)
{
	struct wp_comm in = { .pid = 7, .tid = 8, .comm = "worker", .len = 6 }, out;
	uint8_t body[32];
	size_t n = wp_comm_body(&in, body, sizeof(body));

	is_int((int)n, 16, "comm body: ids and the name, padded to 8");
	is_int((int)wp_comm_body(&in, body, 15), 0, "comm body: too small a buffer");
	is_int(wp_comm_parse(rec(PERF_RECORD_COMM, 0, body, n), &out), 0, "comm body: decoded");
	ok(out.pid == 7 && out.tid == 8 && out.len == 6 && !strcmp(out.comm, "worker") &&
	   !out.exec, "comm body: what was encoded");
}

static void test_switch_throttle(void)
{
	uint32_t next[2] = { 300, 301 };
	uint64_t th_body[3] = { 555, 42, 43 };
	struct wp_throttle th;
	struct wp_switch sw;

	is_int(wp_switch_parse(rec(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
				   PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, next, 0), &sw), 0,
	       "switch: decoded");
	ok(sw.out && sw.preempted && !sw.cpu_wide, "switch: out, preempted, no other task");
	is_int(wp_switch_parse(rec(PERF_RECORD_SWITCH, 0, next, 0), &sw), 0, "switch in: decoded");
	ok(!sw.out && !sw.preempted, "switch in: neither out nor preempted");
	is_int(wp_switch_parse(rec(PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, next,
				   sizeof(next)), &sw), 0, "cpu-wide switch: decoded");
	ok(sw.out && !sw.preempted && sw.cpu_wide && sw.next_prev_pid == 300 &&
	   sw.next_prev_tid == 301, "cpu-wide switch: the next task");
	is_int(wp_switch_parse(rec(PERF_RECORD_SWITCH_CPU_WIDE, 0, next, 0), &sw), -EBADMSG,
	       "cpu-wide switch: too short for the other task");
	is_int(wp_switch_parse(rec(PERF_RECORD_FORK, 0, next, sizeof(next)), &sw), -EBADMSG,
	       "switch: not a switch record");
	is_int(wp_throttle_parse(rec(PERF_RECORD_UNTHROTTLE, 0, th_body, sizeof(th_body)), &th), 0,
	       "throttle: decoded");
	ok(th.time == 555 && th.id == 42 && th.stream_id == 43, "throttle: time, id, stream id");
	is_int(wp_throttle_parse(rec(PERF_RECORD_THROTTLE, 0, th_body, 16), &th), -EBADMSG,
	       "throttle: too short");
}

static void test_sample_event_id(void)
{
	struct wp_sample_format fmt, no_identifier;
	uint64_t body[4] = { 99, 0x1234, 0, 0 }, id = 0;
	const struct perf_event_header *h;

	wp_sample_format_init(&fmt, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP, 0);
	h = rec(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, 16);
	ok(!wp_sample_event_id(&fmt, h, &id) && id == 99, "sample event id: the identifier");
	is_int(wp_sample_event_id(&fmt, rec(PERF_RECORD_SAMPLE, 0, body, 0), &id), -EBADMSG,
	       "sample event id: an empty sample");
	/* Without PERF_SAMPLE_IDENTIFIER the id sits after other fields. */
	wp_sample_format_init(&no_identifier, PERF_SAMPLE_IP | PERF_SAMPLE_ID, 0);
	h = rec(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, 16);
	ok(!wp_sample_event_id(&no_identifier, h, &id) && id == 0x1234,
	   "sample event id: PERF_SAMPLE_ID after the ip");
	is_int(wp_sample_event_id(&no_identifier, rec(PERF_RECORD_SAMPLE, 0, body, 8), &id),
	       -EBADMSG, "sample event id: a sample cut before its id");
}

static void test_sample_time(void)
{
	struct wp_sample_format fmt, no_time;
	uint64_t body[4] = { 7, 0x401000, 0x0000006500000064ULL, 123456789 }, t = 0;
	struct wp_sample parsed;
	const struct perf_event_header *h;

	wp_sample_format_init(&fmt, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME, 0);
	h = rec(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body, 32);
	ok(!wp_sample_time(&fmt, h, &t) && t == 123456789, "sample time: after id, ip and tid");
	ok(!wp_sample_parse(&fmt, h, &parsed) && parsed.time == t,
	   "sample time: the same as the whole parse");
	is_int(wp_sample_time(&fmt, rec(PERF_RECORD_SAMPLE, 0, body, 24), &t), -EBADMSG,
	       "sample time: a sample cut before its time");
	wp_sample_format_init(&no_time, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0);
	is_int(wp_sample_time(&no_time, h, &t), -EBADMSG, "sample time: none recorded");
}

/*
 * A wallprof record of type: its fixed part (a struct that starts with
 * the header), then tail, the size rounded up to 8.
 */
static const struct perf_event_header *wp_rec(uint32_t type, const void *fixed, size_t len,
					      const void *tail, size_t tail_len)
{
	struct perf_event_header *h = (void *)buf;

	memset(buf_words, 0, sizeof(buf_words));
	memcpy(buf, fixed, len);
	if (tail_len)
		memcpy(buf + len, tail, tail_len);
	h->type = type;
	h->misc = 0;
	h->size = (uint16_t)((len + tail_len + 7) & ~(size_t)7);
	return h;
}

static void test_wallprof_records(void)
{
	struct wp_record_thread th = { .pid = 5, .tid = 6, .time = 77, .start_time = 70 }, tho;
	struct wp_record_attach at = { .tid = 9, .nr_ids = 2, .done = 1000 };
	struct wp_record_build_id bid = { .pid = 4, .size = 20, .maj = 8, .min = 2, .ino = 99 };
	const uint64_t ids[2] = { 11, 12 };
	char name[16] = "/bin/x", text[16] = "name: x\nID: 1";
	struct wp_record_text tr = { .header = { 0 } };
	struct wp_build_id b;
	struct wp_attach a;
	const char *t;
	size_t len;

	is_int(wp_thread_parse(wp_rec(WP_RECORD_THREAD, &th, sizeof(th), NULL, 0), &tho), 0,
	       "thread: decoded");
	ok(tho.pid == 5 && tho.tid == 6 && tho.time == 77 && tho.start_time == 70,
	   "thread: pid, tid, time and start");
	is_int(wp_thread_parse(wp_rec(WP_RECORD_THREAD, &th, 16, NULL, 0), &tho), -EBADMSG,
	       "thread: too short");

	is_int(wp_attach_parse(wp_rec(WP_RECORD_ATTACH, &at, sizeof(at), ids, sizeof(ids)), &a), 0,
	       "attach: decoded");
	ok(a.tid == 9 && a.nr_ids == 2 && a.done == 1000 && wp_attach_id(&a, 0) == 11 &&
	   wp_attach_id(&a, 1) == 12, "attach: tid, done and the ids");
	at.nr_ids = 3;
	is_int(wp_attach_parse(wp_rec(WP_RECORD_ATTACH, &at, sizeof(at), ids, sizeof(ids)), &a),
	       -EBADMSG, "attach: more ids than the record holds");

	for (int i = 0; i < 24; i++)
		bid.build_id[i] = (uint8_t)i;
	is_int(wp_build_id_parse(wp_rec(WP_RECORD_BUILD_ID, &bid, sizeof(bid), name, sizeof(name)),
				 &b), 0, "build id: decoded");
	ok(b.pid == 4 && b.size == 20 && b.build_id[19] == 19 && b.maj == 8 && b.min == 2 &&
	   b.ino == 99 && !strcmp(b.filename, "/bin/x"), "build id: its fields and the file");
	bid.size = 200;
	wp_build_id_parse(wp_rec(WP_RECORD_BUILD_ID, &bid, sizeof(bid), name, sizeof(name)), &b);
	is_int(b.size, 24, "build id: a size over the array is cut to it");
	memset(name, 'a', sizeof(name));
	is_int(wp_build_id_parse(wp_rec(WP_RECORD_BUILD_ID, &bid, sizeof(bid), name, sizeof(name)),
				 &b), -EBADMSG, "build id: a file name that runs off the record");

	is_int(wp_text_parse(wp_rec(WP_RECORD_TRACE_FORMAT, &tr, sizeof(tr), text, sizeof(text)),
			     &t, &len), 0, "text: decoded");
	ok(len == 13 && !strncmp(t, "name: x", 7), "text: the text and its length");
	memset(text, 'x', sizeof(text));
	is_int(wp_text_parse(wp_rec(WP_RECORD_TRACE_FORMAT, &tr, sizeof(tr), text, sizeof(text)),
			     &t, &len), -EBADMSG, "text: no NUL in the record");
	is_int(wp_text_parse(wp_rec(WP_RECORD_TRACE_FORMAT, &tr, sizeof(tr), NULL, 0), &t, &len),
	       -EBADMSG, "text: a header only");
	is_int(wp_text_parse(wp_rec(WP_RECORD_THREAD, &th, sizeof(th), NULL, 0), &t, &len),
	       -EBADMSG, "text: not a text record");
}

/* Task names; command lines rewritten in place lose their trailing empty arguments. */
static void test_task_name_and_cmdline(void)
{
	static const char padded[] = "postgres: checkpointer \0\0\0\0\0";
	struct wp_record_cmdline rc = { .pid = 7, .len = sizeof(padded) };
	struct wp_record_task_name tn;
	struct wp_buf b = { 0 };
	struct wp_cmdline c = { .pid = 7, .args = padded, .len = sizeof(padded) };
	struct wp_cmdline got;

	is_int(wp_task_name_append(&b, 10, 11, 99, "a-very-long-thread-name"), 0, "task name: appended");
	is_int((int)b.len, (int)sizeof(tn), "task name: 40 bytes");
	is_int(wp_task_name_parse((const struct perf_event_header *)b.data, &tn), 0,
	       "task name: decoded");
	ok(tn.pid == 10 && tn.tid == 11 && tn.time == 99 && !memcmp(tn.comm, "a-very-long-thre", 16),
	   "task name: pid, tid, time and 16 bytes of the name");
	is_int(wp_task_name_parse(wp_rec(WP_RECORD_TASK_NAME, &tn, 16, NULL, 0), &tn), -EBADMSG,
	       "task name: too short");

	/* An older writer's record keeps them: the reader drops them. */
	is_int(wp_cmdline_parse(wp_rec(WP_RECORD_CMDLINE, &rc, sizeof(rc), padded, sizeof(padded)),
				&got), 0, "cmdline: decoded");
	is_int((int)got.len, (int)strlen(padded) + 1, "cmdline: read without its empty arguments");
	b.len = 0;
	is_int(wp_cmdline_append(&b, &c), 0, "cmdline: appended");
	is_int(wp_cmdline_parse((const struct perf_event_header *)b.data, &got), 0,
	       "cmdline: written and read back");
	is_int((int)got.len, (int)strlen(padded) + 1, "cmdline: written without them");
	c.args = "\0\0";
	c.len = 3;
	b.len = 0;
	wp_cmdline_append(&b, &c);
	wp_cmdline_parse((const struct perf_event_header *)b.data, &got);
	is_int((int)got.len, 1, "cmdline: of empty arguments, the first stays");
	wp_buf_release(&b);
}

int main(void)
{
	test_mmap2();
	test_task_comm_lost();
	test_comm_body();
	test_switch_throttle();
	test_sample_event_id();
	test_sample_time();
	test_wallprof_records();
	test_task_name_and_cmdline();
	return done_testing();
}
