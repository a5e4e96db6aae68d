/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rotate.c: rotating recordings and the flight recorder (rotate.h)
 * from synthetic records: the names of the files; each record in the file
 * whose span holds its time, late ones included; each file's span, start
 * state and summary; what the flight recorder keeps and lets go.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datafile.h"
#include "layout.h"
#include "log.h"
#include "rotate.h"
#include "tap.h"

#define START 1000000000000ULL
#define MS 1000000ULL

static struct wp_sample_format fmt;
static struct wp_meta meta;
static char tmpdir[64];

static void name_is(const char *path, unsigned int n, const char *want)
{
	char *got = wp_rotate_name(path, n);

	ok(got && !strcmp(got, want), "'%s' file %u is '%s' (got '%s')", path, n, want,
	   got ? got : "(null)");
	free(got);
}

static void test_names(void)
{
	name_is("out.data", 1, "out.0001.data");
	name_is("out.data", 42, "out.0042.data");
	name_is("out.data", 12345, "out.12345.data");
	name_is("prof", 2, "prof.0002");
	name_is("/var/lib/wp/host.wallprof.data", 3, "/var/lib/wp/host.wallprof.0003.data");
	/* A dot in a directory's name is not the file's extension. */
	name_is("/tmp/x.d/prof", 1, "/tmp/x.d/prof.0001");
	/* Nor is the dot of a hidden file's name. */
	name_is(".prof", 1, ".prof.0001");
	name_is("dir/.prof.data", 1, "dir/.prof.0001.data");
}

static void quiet_sink(enum wp_log_level level, const char *msg)
{
	if (getenv("TEST_VERBOSE"))
		printf("# log(%d): %s\n", (int)level, msg);
}

/* A growing stream of records, fed to the rotation a block at a time. */
static uint8_t stream[4096];
static size_t stream_len;

static void put(const void *h)
{
	size_t n = ((const struct perf_event_header *)h)->size;

	if (stream_len + n <= sizeof(stream)) {
		memcpy(stream + stream_len, h, n);
		stream_len += n;
	}
}

static void put_trailer_of(struct perf_event_header *h, size_t body, uint32_t pid, uint32_t tid,
			   uint64_t t)
{
	struct wp_sample_id id = { .pid = pid, .tid = tid, .time = START + t, .id = 7 };

	h->size = (uint16_t)(sizeof(*h) + body + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + body);
	put(h);
}

static void put_trailer(struct perf_event_header *h, size_t body, uint32_t tid, uint64_t t)
{
	put_trailer_of(h, body, 100, tid, t);
}

/* SWITCH of tid (process 100) at start + t. */
static void put_switch(uint32_t tid, uint64_t t, bool out)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;

	h->type = PERF_RECORD_SWITCH;
	h->misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;
	put_trailer(h, 0, tid, t);
}

/* FORK (new thread tid of process 100, made by 100) or EXIT at start + t. */
static void put_task(uint32_t type, uint32_t tid, uint64_t t)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { 100, 100, tid, 100 };
	uint64_t time = START + t;

	h->type = (uint16_t)type;
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &time, 8);
	put_trailer(h, sizeof(body) + 8, tid, t);
}

static void put_comm(uint32_t tid, const char *name, uint64_t t)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;
	struct wp_comm c = { .pid = 100, .tid = tid, .comm = name, .len = strlen(name) };

	h->type = PERF_RECORD_COMM;
	put_trailer(h, wp_comm_body(&c, h + 1, 64), tid, t);
}

/* An executable mapping of process pid (its main thread's) at start + t. */
static void put_mmap_of(uint32_t pid, uint64_t addr, uint64_t t)
{
	uint64_t buf[32] = { 0 };
	struct perf_event_header *h = (void *)buf;
	struct wp_mmap2 m = { .pid = pid, .tid = pid, .addr = addr, .len = 4096,
			      .prot = 5 /* PROT_READ | PROT_EXEC */, .filename = "/bin/worker" };

	h->type = PERF_RECORD_MMAP2;
	put_trailer_of(h, wp_mmap2_body(&m, h + 1, 128), pid, pid, t);
}

static void put_mmap(uint64_t addr, uint64_t t)
{
	put_mmap_of(100, addr, t);
}

/* FORK (made by process 100) or EXIT of process pid, its one thread, at start + t. */
static void put_process(uint32_t type, uint32_t pid, uint64_t t)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { pid, 100, pid, 100 };
	uint64_t time = START + t;

	h->type = (uint16_t)type;
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &time, 8);
	put_trailer_of(h, sizeof(body) + 8, pid, pid, t);
}

static int feed(struct wp_rotate *r, uint64_t round_t)
{
	uint64_t bytes;
	int err = wp_rotate_records(r, stream, stream_len, round_t ? START + round_t : 0, &bytes);

	stream_len = 0;
	return err;
}

/*
 * One file read back: "TYPE@ms" per record (THREAD:tid, COMM:tid, MMAP2
 * at its time), its start and end (ms after START) and stop reason.
 */
/* A THREAD record's state at a file's start, as read_back() shows it. */
static const char *thread_state(uint16_t misc)
{
	if (misc & WP_THREAD_UNCERTAIN)
		return "/unknown";
	if (misc & WP_THREAD_PREEMPTED)
		return "/preempted";
	return misc & WP_THREAD_OFF_CPU ? "/blocked" : "";
}

static void read_back(const char *path, char *out, size_t size, long *start, long *end,
		      int *reason)
{
	const struct perf_event_header *h;
	const struct wp_summary *sum;
	struct wp_reader *rd;
	size_t len = 0;

	out[0] = '\0';
	*start = *end = *reason = -1;
	if (wp_reader_open(path, &rd))
		return;
	*start = (long)((wp_reader_meta(rd)->start_clock_ns - START) / MS);
	while (wp_reader_next(rd, &h) > 0 && len < size - 64) {
		struct wp_record_thread th;
		struct wp_sample_id id;

		if (h->type == WP_RECORD_THREAD && !wp_thread_parse(h, &th))
			len += (size_t)snprintf(out + len, size - len, "THREAD:%u%s@%llu ", th.tid,
						thread_state(h->misc),
						(unsigned long long)((th.time - START) / MS));
		else if (h->type == PERF_RECORD_SAMPLE && h->size >= 5 * 8)
			len += (size_t)snprintf(out + len, size - len, "SAMPLE:%u@%llu ",
						((const uint32_t *)h)[7],
						(unsigned long long)((((const uint64_t *)h)[4] - START) /
								     MS));
		else if (h->type < WP_RECORD_ROUND && !wp_sample_id_parse(&fmt, h, &id))
			len += (size_t)snprintf(out + len, size - len, "%s:%u@%llu ",
						wp_record_type_name(h->type), id.tid,
						(unsigned long long)((id.time - START) / MS));
	}
	sum = wp_reader_summary(rd);
	if (sum) {
		*end = (long)((sum->end_clock_ns - START) / MS);
		*reason = (int)sum->stop_reason;
	}
	wp_reader_close(rd);
}

static void file_is(const char *name, long start, long end, int reason, const char *records)
{
	char path[128], got[2048];
	long s, e;
	int why;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	read_back(path, got, sizeof(got), &s, &e, &why);
	is_int(s, start, "%s starts at %ld ms", name, start);
	is_int(e, end, "%s ends at %ld ms", name, end);
	is_int(why, reason, "%s: stop reason %d", name, reason);
	ok(!strcmp(got, records), "%s holds: %s", name, records);
	if (strcmp(got, records))
		diag("got: %s", got);
	unlink(path);
}

static void test_rotation(void)
{
	struct wp_rotate_opts o = { .rotate_ns = 1000 * MS };
	struct wp_summary whole = { .end_clock_ns = START + 2700 * MS, .exit_status = 0,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_rotate *r;
	const char *first, *last;
	char out[128];

	snprintf(out, sizeof(out), "%s/r.data", tmpdir);
	o.output = out;
	if (!is_int(wp_rotate_open(&o, &r), 0, "rotation: opens") ||
	    !is_int(wp_rotate_start(r, &meta), 0, "rotation: the first file starts"))
		return;
	/*
	 * The first second: the program starts (its exec's COMM), makes a
	 * thread, which is named and runs; a mapping.
	 */
	put_comm(100, "main", 50 * MS);
	put_task(PERF_RECORD_FORK, 101, 100 * MS);
	put_comm(101, "worker", 110 * MS);
	put_mmap(0x400000, 150 * MS);
	put_switch(101, 200 * MS, false);
	is_int(feed(r, 500 * MS), 0, "rotation: the first block");
	/*
	 * Read after the boundary: a switch-out after it (the next file's),
	 * a thread made before it (read late: still the first file's).
	 */
	put_switch(101, 1200 * MS, true);
	put_task(PERF_RECORD_FORK, 102, 950 * MS);
	is_int(feed(r, 1300 * MS), 0, "rotation: a block across the boundary");
	put_task(PERF_RECORD_EXIT, 101, 2500 * MS);
	is_int(feed(r, 2600 * MS), 0, "rotation: the third second");
	is_int(wp_rotate_end(r, &whole), 0, "rotation: ends");
	is_int(wp_rotate_nr_files(r, &first, &last), 3, "rotation: three files");
	wp_rotate_free(r);

	file_is("r.0001.data", 0, 1000, WP_STOP_ROTATED,
		"COMM:100@50 FORK:101@100 COMM:101@110 MMAP2:100@150 SWITCH:101@200 "
		"FORK:102@950 ");
	/*
	 * Each later file starts with what lives: threads (100 made them;
	 * 102 has its maker's name; made, it waits for a CPU; 101 blocked at
	 * 1200 ms), names, mappings.
	 */
	file_is("r.0002.data", 1000, 2000, WP_STOP_ROTATED,
		"THREAD:100@1000 COMM:100@1000 THREAD:101@1000 COMM:101@1000 "
		"THREAD:102/preempted@1000 "
		"COMM:102@1000 MMAP2:100@1000 SWITCH:101@1200 ");
	file_is("r.0003.data", 2000, 2700, WP_STOP_TARGET_EXITED,
		"THREAD:100@2000 COMM:100@2000 THREAD:101/blocked@2000 COMM:101@2000 "
		"THREAD:102/preempted@2000 "
		"COMM:102@2000 MMAP2:100@2000 EXIT:101@2500 ");
}

/*
 * The flight recorder: blocks older than the window go (into the state
 * written at a file's start); a file on request ends at the request, a
 * record after it waits for the next; the last file at the end.
 */
static void test_flight(void)
{
	struct wp_rotate_opts o = { .window_ns = 1000 * MS, .compress_level = 1 };
	struct wp_summary whole = { .end_clock_ns = START + 3000 * MS, .exit_status = 0,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_rotate *r;
	const char *first, *last;
	char out[128];

	snprintf(out, sizeof(out), "%s/f.data", tmpdir);
	o.output = out;
	if (!is_int(wp_rotate_open(&o, &r), 0, "flight: opens") ||
	    !is_int(wp_rotate_start(r, &meta), 0, "flight: starts"))
		return;
	put_comm(100, "main", 50 * MS);
	put_task(PERF_RECORD_FORK, 101, 100 * MS);
	put_comm(101, "worker", 110 * MS);
	put_mmap(0x400000, 150 * MS);
	put_switch(101, 200 * MS, false);
	is_int(feed(r, 500 * MS), 0, "flight: block A, up to 200 ms");
	put_switch(101, 1500 * MS, true);
	is_int(feed(r, 1600 * MS), 0, "flight: block B at 1500 ms (A goes)");
	put_switch(101, 2400 * MS, false);
	is_int(feed(r, 2500 * MS), 0, "flight: block C at 2400 ms (B stays)");
	ok(wp_rotate_nr_files(r, &first, &last) == 0, "flight: nothing written yet");
	wp_rotate_request_dump(r, START + 2450 * MS);
	put_switch(101, 2460 * MS, true);
	is_int(feed(r, 2470 * MS), 0, "flight: block D, after the request");
	is_u64(wp_rotate_evicted(r), 5, "flight: block A's 5 records evicted");
	is_int(wp_rotate_end(r, &whole), 0, "flight: ends");
	is_int(wp_rotate_nr_files(r, &first, &last), 2, "flight: two files");
	wp_rotate_free(r);

	/* A window (1 s) before the end: nothing came between A and B. */
	file_is("f.0001.data", 1450, 2450, WP_STOP_DUMPED,
		"THREAD:100@1450 COMM:100@1450 THREAD:101@1450 COMM:101@1450 MMAP2:100@1450 "
		"SWITCH:101@1500 SWITCH:101@2400 ");
	file_is("f.0002.data", 2000, 3000, WP_STOP_TARGET_EXITED,
		"THREAD:100@2000 COMM:100@2000 THREAD:101/blocked@2000 COMM:101@2000 "
		"MMAP2:100@2000 "
		"SWITCH:101@2400 SWITCH:101@2460 ");
}

/* A switch-out sample (role WP_EVENT_SWITCH_OUT, event id 9) of tid at start + t. */
static void put_switch_sample(uint32_t tid, uint64_t t)
{
	uint64_t buf[8] = { 0 };
	struct perf_event_header *h = (void *)buf;
	uint32_t pid_tid[2] = { 100, tid };

	buf[1] = 9;			/* IDENTIFIER */
	buf[2] = 0xffffffff81000000ULL;	/* IP */
	memcpy(&buf[3], pid_tid, 8);	/* TID */
	buf[4] = START + t;		/* TIME */
	buf[5] = 0;			/* CPU */
	buf[6] = 1;			/* PERIOD */
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_KERNEL;
	h->size = 7 * 8;
	put(h);
}

/* An involuntary switch-out of tid at start + t. */
static void put_switch_preempted(uint32_t tid, uint64_t t)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;

	h->type = PERF_RECORD_SWITCH;
	h->misc = PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
	put_trailer(h, 0, tid, t);
}

static void put_lost(uint64_t t)
{
	uint64_t buf[16] = { 0 };
	struct perf_event_header *h = (void *)buf;

	h->type = PERF_RECORD_LOST;
	buf[1] = 7;		/* id */
	buf[2] = 50;		/* lost */
	put_trailer(h, 16, 100, t);
}

/*
 * What a file says of each thread at its start, from the timeline: one
 * blocked (with its latest switch-out's stack, dated at the start), one
 * preempted; one whose records were lost after its last switch, and one
 * never switched since, are not known.  The blocked one's records come
 * ring by ring: a switch-in read before older switches.
 */
static void test_state(void)
{
	static uint64_t ids[] = { 9 };
	struct wp_event_desc ev = { .role = WP_EVENT_SWITCH_OUT, .ids = ids, .nr_ids = 1 };
	struct wp_rotate_opts o = { .rotate_ns = 1000 * MS };
	struct wp_summary whole = { .end_clock_ns = START + 1800 * MS,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_rotate *r;
	const char *first, *last;
	char out[128], path[160];
	int err;

	meta.events = &ev;
	meta.nr_events = 1;
	snprintf(out, sizeof(out), "%s/s.data", tmpdir);
	o.output = out;
	err = wp_rotate_open(&o, &r);
	if (!is_int(err, 0, "state: opens") ||
	    !is_int(wp_rotate_start(r, &meta), 0, "state: starts")) {
		if (!err)
			wp_rotate_free(r);
		meta.events = NULL;
		meta.nr_events = 0;
		return;
	}
	put_comm(100, "main", 10 * MS);
	put_task(PERF_RECORD_FORK, 101, 20 * MS);
	put_task(PERF_RECORD_FORK, 102, 30 * MS);
	put_task(PERF_RECORD_FORK, 103, 40 * MS);
	put_switch(102, 110 * MS, false);
	put_switch(103, 120 * MS, false);
	/* 101 runs again at 900 ms: read first, from another CPU's ring. */
	put_switch(101, 900 * MS, false);
	put_switch(101, 100 * MS, false);
	put_switch_sample(101, 300 * MS);
	put_switch(101, 300 * MS, true);
	put_switch(101, 700 * MS, false);
	put_switch_sample(101, 800 * MS);
	put_switch(101, 800 * MS, true);
	put_lost(500 * MS);
	is_int(feed(r, 0), 0, "state: a block, rings one after the other");
	put_switch_sample(101, 950 * MS);
	put_switch(101, 950 * MS, true);
	put_switch_preempted(102, 960 * MS);
	is_int(feed(r, 1500 * MS), 0, "state: the second block, past the boundary");
	is_int(wp_rotate_end(r, &whole), 0, "state: ends");
	is_int(wp_rotate_nr_files(r, &first, &last), 2, "state: two files");
	wp_rotate_free(r);
	meta.events = NULL;
	meta.nr_events = 0;
	file_is("s.0002.data", 1000, 1800, WP_STOP_TARGET_EXITED,
		"THREAD:100/unknown@1000 COMM:100@1000 THREAD:101/blocked@1000 COMM:101@1000 "
		"THREAD:102/preempted@1000 COMM:102@1000 THREAD:103/unknown@1000 COMM:103@1000 "
		"SAMPLE:101@1000 ");
	snprintf(path, sizeof(path), "%s/s.0001.data", tmpdir);
	unlink(path);
}
/*
 * The flight recorder's file is the window before the request even when a
 * kept block spans more (a quiet recording's first drained block, with a
 * record of a second later in it): what the block holds from before the
 * window is the file's start state, not its records, and is not applied
 * to that state twice when the block goes.
 */
static void test_flight_straddle(void)
{
	struct wp_rotate_opts o = { .window_ns = 1000 * MS, .compress_level = 1 };
	struct wp_summary whole = { .end_clock_ns = START + 4000 * MS,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_rotate *r;
	const char *first, *last;
	char out[128];

	snprintf(out, sizeof(out), "%s/q.data", tmpdir);
	o.output = out;
	if (!is_int(wp_rotate_open(&o, &r), 0, "straddle: opens") ||
	    !is_int(wp_rotate_start(r, &meta), 0, "straddle: starts"))
		return;
	put_comm(100, "main", 50 * MS);
	put_task(PERF_RECORD_FORK, 101, 100 * MS);
	put_comm(101, "sleeper", 110 * MS);
	put_switch(101, 200 * MS, false);
	put_switch(101, 300 * MS, true);
	put_switch(100, 2000 * MS, false);
	is_int(feed(r, 2100 * MS), 0, "straddle: one block, 50 ms to 2 s");
	wp_rotate_request_dump(r, START + 2500 * MS);
	is_int(feed(r, 2600 * MS), 0, "straddle: a quiet pass after the request");
	is_int(wp_rotate_end(r, &whole), 0, "straddle: ends");
	is_int(wp_rotate_nr_files(r, &first, &last), 2, "straddle: two files");
	wp_rotate_free(r);
	/* The window, 1.5 to 2.5 s: the sleeper blocked since 300 ms, main's switch-in. */
	file_is("q.0001.data", 1500, 2500, WP_STOP_DUMPED,
		"THREAD:100@1500 COMM:100@1500 THREAD:101/blocked@1500 COMM:101@1500 "
		"SWITCH:100@2000 ");
	/* At the end, 3 to 4 s: the state once, the block gone into it. */
	file_is("q.0002.data", 3000, 4000, WP_STOP_TARGET_EXITED,
		"THREAD:100@3000 COMM:100@3000 THREAD:101/blocked@3000 COMM:101@3000 ");
}

/*
 * The flight recorder beside churn: 1000 processes, each made, mapped and
 * gone within 3 ms, 100 a second, none alive when the model is pruned
 * (once a second).  What the model holds for them goes two seconds after
 * their last record (the records of some 3 seconds are in it at most);
 * the process that lives keeps its mapping in every file's start.
 */
static void test_flight_churn(void)
{
	struct wp_rotate_opts o = { .window_ns = 1000 * MS, .compress_level = 1 };
	struct wp_summary whole = { .end_clock_ns = START + 10500 * MS,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_rotate *r;
	const char *first, *last;
	char out[128], path[160], got[2048];
	size_t most = 0;
	long s, e;
	int why, err = 0;

	snprintf(out, sizeof(out), "%s/c.data", tmpdir);
	o.output = out;
	o.no_final_dump = true;
	if (!is_int(wp_rotate_open(&o, &r), 0, "churn: opens") ||
	    !is_int(wp_rotate_start(r, &meta), 0, "churn: starts"))
		return;
	put_comm(100, "main", 10 * MS);
	put_mmap(0x400000, 20 * MS);
	for (uint32_t i = 0; i < 1000 && !err; i++) {
		uint64_t t = 100 * MS + i * 10 * MS;

		put_process(PERF_RECORD_FORK, 1000 + i, t);
		put_mmap_of(1000 + i, 0x400000, t + 1 * MS);
		put_process(PERF_RECORD_EXIT, 1000 + i, t + 3 * MS);
		if (i % 10 == 9) {
			/* The end of a drain pass: what came before the last one is in order. */
			struct perf_event_header round = { .type = WP_RECORD_ROUND,
							   .size = sizeof(round) };

			put(&round);
			err = feed(r, t + 10 * MS);
			if (wp_rotate_nr_processes(r) > most)
				most = wp_rotate_nr_processes(r);
		}
	}
	is_int(err, 0, "churn: 100 blocks of 10 processes each");
	ok(most <= 350, "churn: at most %zu processes held for 1000, those of the last 3 s", most);
	wp_rotate_request_dump(r, START + 10200 * MS);
	is_int(feed(r, 10300 * MS), 0, "churn: a pass after the request");
	is_int(wp_rotate_end(r, &whole), 0, "churn: ends");
	is_int(wp_rotate_nr_files(r, &first, &last), 1, "churn: one file");
	wp_rotate_free(r);
	/* The process alive, restated at the file's start: its mapping kept. */
	snprintf(path, sizeof(path), "%s/c.0001.data", tmpdir);
	read_back(path, got, sizeof(got), &s, &e, &why);
	ok(strstr(got, "MMAP2:100@9200 ") != NULL, "churn: the live process's mapping restated");
	if (!strstr(got, "MMAP2:100@9200 "))
		diag("got: %s", got);
	unlink(path);
}

int main(void)
{
	wp_log_set_sink(quiet_sink);
	meta.clockid = 1;
	meta.start_clock_ns = START;
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.flags = WP_META_SWITCHES;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
	strcpy(tmpdir, "/tmp/wallprof-test-rotate-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 99;

	test_names();
	test_rotation();
	test_flight();
	test_state();
	test_flight_straddle();
	test_flight_churn();
	rmdir(tmpdir);
	return done_testing();
}
