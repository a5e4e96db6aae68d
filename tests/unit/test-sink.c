/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-sink.c: the sinks (sink.h) given what record gives them: the plain
 * file holds the prelude, then the records, then the closing blocks
 * (closing.h: each stage's once per file) and the summary of the end; a
 * closing block that fails cuts the file short, which its summary says;
 * rotation calls the closing blocks at every file; only the flight
 * recorder writes a file on request.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "closing.h"
#include "datafile.h"
#include "layout.h"
#include "log.h"
#include "rotate.h"
#include "sink.h"
#include "tap.h"
#include "util.h"

#define START 1000000000000ULL
#define MS 1000000ULL

static struct wp_meta meta;
static char tmpdir[64];

static void quiet_log(enum wp_log_level level, const char *msg)
{
	if (getenv("TEST_VERBOSE"))
		printf("# log(%d): %s\n", (int)level, msg);
}

/* A stage's closing block: counted, failing with fail_with when set. */
static int closed, fail_with;

static int count_closing(void *arg, struct wp_writer *w)
{
	(void)arg;
	(void)w;
	closed++;
	return fail_with;
}

/* A THREAD record of tid at START + ms, appended to b. */
static void put_thread(struct wp_buf *b, uint32_t tid, uint64_t ms)
{
	struct wp_record_thread t = {
		.header = { .type = WP_RECORD_THREAD, .size = sizeof(t) },
		.pid = 100, .tid = tid, .time = START + ms * MS,
	};

	wp_buf_append(b, &t, sizeof(t));
}

static void put_round(struct wp_buf *b)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };

	wp_buf_append(b, &round, sizeof(round));
}

/* The types of path's records but ROUNDs, "T T ...", and its summary into *sum. */
static int read_types(const char *path, char *out, size_t size, struct wp_summary *sum)
{
	const struct perf_event_header *h;
	struct wp_reader *r;
	size_t len = 0;
	int ret;

	out[0] = '\0';
	if (wp_reader_open(path, &r))
		return -1;
	while ((ret = wp_reader_next(r, &h)) > 0)
		if (h->type != WP_RECORD_ROUND && len < size)
			len += (size_t)snprintf(out + len, size - len, "%s ",
						wp_record_type_name(h->type));
	if (!ret && wp_reader_summary(r))
		*sum = *wp_reader_summary(r);
	wp_reader_close(r);
	return ret;
}

static void test_file(void)
{
	struct wp_summary whole = { .end_clock_ns = START + 1000 * MS,
				    .stop_reason = WP_STOP_TARGET_EXITED }, got = { 0 };
	const char text[16] = "name: sched";
	struct wp_buf prelude = { 0 }, recs = { 0 };
	struct wp_closing *c;
	struct wp_sink *k;
	const char *first, *last;
	char path[128], types[256];
	int write_err = 0;

	snprintf(path, sizeof(path), "%s/plain.data", tmpdir);
	if (!is_int(wp_closing_new(&meta, &c), 0, "file: closing made") ||
	    !is_int(wp_closing_add(c, count_closing, NULL), 0, "file: a stage's closing added") ||
	    !is_int(wp_file_sink_open(path, false, 1, c, &k), 0, "file: opens"))
		return;
	closed = fail_with = 0;
	{
		struct perf_event_header h = { .type = WP_RECORD_TRACE_FORMAT,
					       .size = sizeof(h) + sizeof(text) };

		wp_buf_append(&prelude, &h, sizeof(h));
		wp_buf_append(&prelude, text, sizeof(text));
	}
	put_thread(&recs, 101, 10);
	put_round(&recs);
	is_int(wp_sink_start(k, &meta), 0, "file: the meta");
	is_int(wp_sink_prelude(k, prelude.data, prelude.len), 0, "file: the prelude");
	is_int(wp_sink_records(k, recs.data, recs.len, START + 20 * MS, NULL), 0, "file: records");
	is_int(wp_sink_request_dump(k, START + 30 * MS), -EOPNOTSUPP,
	       "file: nothing to write on request");
	is_int(wp_sink_finish(k, &whole), 0, "file: finish");
	is_int(closed, 0, "file: no closing block before the end");
	is_int(wp_sink_end(k, &whole, &write_err), 0, "file: ends");
	is_int(write_err, 0, "file: no write error");
	is_int(closed, 1, "file: the stage's closing block, once");
	ok(wp_sink_files(k, &first, &last) == 1 && first && !strcmp(first, path),
	   "file: one file, named as asked");
	ok(wp_sink_bytes(k) > 0, "file: its bytes");
	ok(!k->says_cut, "file: the last line says when it was cut short");
	wp_sink_free(k);
	is_int(read_types(path, types, sizeof(types), &got), 0, "file: reads back");
	is_str(types, "TRACE_FORMAT THREAD ", "file: the prelude, then the records");
	ok(got.end_clock_ns == whole.end_clock_ns && got.stop_reason == WP_STOP_TARGET_EXITED &&
	   got.records == 0, "file: the summary is the end's");
	unlink(path);

	/* A closing block that fails: the file is cut short there, and says so. */
	snprintf(path, sizeof(path), "%s/cut.data", tmpdir);
	if (!is_int(wp_file_sink_open(path, false, 1, c, &k), 0, "cut: opens"))
		goto out;
	fail_with = -EIO;
	write_err = 0;
	whole.stop_reason = WP_STOP_TARGET_EXITED;
	wp_sink_start(k, &meta);
	wp_sink_records(k, recs.data, recs.len, 0, NULL);
	is_int(wp_sink_end(k, &whole, &write_err), 0, "cut: the file is still committed");
	is_int(write_err, -EIO, "cut: the closing block's error is the recording's");
	wp_sink_free(k);
	memset(&got, 0, sizeof(got));
	read_types(path, types, sizeof(types), &got);
	ok(got.stop_reason == WP_STOP_ERROR && got.cut_short_errno == EIO,
	   "cut: its summary says a write error (EIO) stopped it");
	unlink(path);
out:
	wp_closing_free(c);
	wp_buf_release(&prelude);
	wp_buf_release(&recs);
}

/* Rotation: the closing blocks at every file; a file on request only from the flight recorder. */
static void test_rotate(void)
{
	struct wp_rotate_opts o = { .rotate_ns = 1000 * MS };
	struct wp_summary whole = { .end_clock_ns = START + 2700 * MS,
				    .stop_reason = WP_STOP_TARGET_EXITED };
	struct wp_buf b = { 0 };
	struct wp_closing *c;
	struct wp_rotate *r;
	struct wp_sink *k;
	const char *first, *last;
	char out[128];
	int write_err = 0;

	snprintf(out, sizeof(out), "%s/r.data", tmpdir);
	o.output = out;
	if (wp_closing_new(&meta, &c) || wp_closing_add(c, count_closing, NULL))
		return;
	o.closing = c;
	closed = fail_with = 0;
	if (!is_int(wp_rotate_open(&o, &r), 0, "rotate: opens"))
		goto out;
	k = wp_rotate_sink(r);
	is_int(wp_sink_start(k, &meta), 0, "rotate: the first file starts");
	is_int(wp_sink_request_dump(k, START), -EOPNOTSUPP, "rotate: nothing to write on request");
	ok(k->says_cut, "rotate: each file says when it was cut short");
	for (unsigned int s = 0; s < 3; s++) {
		b.len = 0;
		put_thread(&b, 101 + s, s * 1000 + 100);
		put_round(&b);
		is_int(wp_sink_records(k, b.data, b.len, START + (s * 1000 + 300) * MS, NULL), 0,
		       "rotate: second %u's records", s);
	}
	is_int(closed, 2, "rotate: two files closed while recording, a closing block each");
	is_int(wp_sink_end(k, &whole, &write_err), 0, "rotate: ends");
	is_int(closed, 3, "rotate: and the last one's");
	is_int(wp_sink_files(k, &first, &last), 3, "rotate: three files");
	for (unsigned int i = 1; i <= 3; i++) {
		char *name = wp_rotate_name(out, i);

		unlink(name);
		free(name);
	}
	wp_sink_free(k);

	o.rotate_ns = 0;
	o.window_ns = 1000 * MS;
	o.no_final_dump = true;
	if (is_int(wp_rotate_open(&o, &r), 0, "flight: opens")) {
		k = wp_rotate_sink(r);
		wp_sink_start(k, &meta);
		is_int(wp_sink_request_dump(k, START + 10 * MS), 0, "flight: a file on request");
		wp_sink_free(k);
	}
out:
	wp_closing_free(c);
	wp_buf_release(&b);
}

int main(void)
{
	wp_log_set_sink(quiet_log);
	meta.clockid = 1;
	meta.start_clock_ns = START;
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.flags = WP_META_SWITCHES;
	strcpy(tmpdir, "/tmp/wallprof-test-sink-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 99;
	test_file();
	test_rotate();
	rmdir(tmpdir);
	return done_testing();
}
