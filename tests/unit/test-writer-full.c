/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-writer-full.c: a full file system (here a file size limit) costs a
 * recording only what did not fit (src/datafile.c).
 *
 * A megabyte of records written at once past a limit of some 300 KiB: the
 * writer splits the block that does not fit and keeps every whole record
 * that does, says how many bytes it kept, and the file reads back with
 * exactly those records, in order, raw and compressed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datafile.h"
#include "layout.h"
#include "log.h"
#include "tap.h"

#define REC 248			/* bytes a record */
#define NR (4096 + 7)		/* records: about a megabyte */
#define ROOM (300U << 10)	/* bytes past the file's start */

static void quiet(enum wp_log_level level, const char *msg)
{
	(void)level;
	if (getenv("TEST_VERBOSE"))
		printf("# %s\n", msg);
}

/* Record i: its number in every word, some of them random (barely compressible). */
static void make(uint8_t *buf)
{
	uint64_t x = 88172645463325252ULL;

	for (unsigned int i = 0; i < NR; i++) {
		struct perf_event_header h = { .type = 63, .misc = 0, .size = REC };
		uint8_t *p = buf + (size_t)i * REC;

		memcpy(p, &h, sizeof(h));
		for (size_t w = 1; w < REC / 8; w++) {
			uint64_t v = i;

			if (w & 1) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				v = x;
			}
			memcpy(p + 8 * w, &v, 8);
		}
	}
}

static void run(int level, const char *label)
{
	char dir[] = "/tmp/wallprof-full-XXXXXX", path[64];
	struct wp_meta meta = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	struct rlimit old, lim;
	struct wp_writer *w;
	struct wp_reader *r;
	const struct perf_event_header *h;
	uint8_t *buf = malloc((size_t)NR * REC);
	size_t kept = 0;
	unsigned int n = 0, in_order = 1;
	int err, ret, lerr;
	struct stat st;

	if (!buf || !mkdtemp(dir))
		exit(99);
	make(buf);
	snprintf(path, sizeof(path), "%s/full.data", dir);
	if (wp_writer_open(path, false, level, &w) || wp_writer_write_meta(w, &meta))
		exit(99);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = wp_writer_bytes(w) + ROOM;
	lerr = setrlimit(RLIMIT_FSIZE, &lim);
	err = wp_writer_write_records(w, buf, (size_t)NR * REC);
	kept = wp_writer_kept(w);
	setrlimit(RLIMIT_FSIZE, &old);
	is_int(lerr, 0, "%s: the limit is set", label);
	is_int(err, -EFBIG, "%s: the records do not all fit (-EFBIG)", label);
	ok(kept % REC == 0, "%s: whole records are kept (%zu bytes)", label, kept);
	ok(kept < (size_t)NR * REC, "%s: not all of them", label);
	ok(wp_writer_bytes(w) <= lim.rlim_cur, "%s: the file stays within the limit", label);
	/* At most a record and the headers of the blocks short of the room. */
	ok(wp_writer_bytes(w) * 10 >= lim.rlim_cur * 9,
	   "%s: the file fills at least 90%% of the room (%llu of %llu bytes)", label,
	   (unsigned long long)wp_writer_bytes(w), (unsigned long long)lim.rlim_cur);
	if (level == 0)
		ok(kept * 10 >= (size_t)ROOM * 9, "%s: at least 90%% of the room is records",
		   label);
	is_int(wp_writer_commit(w), 0, "%s: the file is committed", label);
	if (!is_int(wp_reader_open(path, &r), 0, "%s: it opens", label))
		goto out;
	while ((ret = wp_reader_next(r, &h)) > 0) {
		uint64_t v;

		memcpy(&v, (const uint8_t *)h + 16, 8);
		if (h->size != REC || v != n)
			in_order = 0;
		n++;
	}
	is_int(ret, 0, "%s: it reads to its end", label);
	is_int((int)n, (int)(kept / REC), "%s: it holds exactly the records kept", label);
	ok(in_order, "%s: the first of them, in order", label);
	wp_reader_close(r);
out:
	if (!stat(path, &st))
		unlink(path);
	rmdir(dir);
	free(buf);
}

int main(void)
{
	wp_log_set_sink(quiet);
	signal(SIGXFSZ, SIG_IGN);
	run(0, "raw");
	run(1, "zstd");
	return done_testing();
}
