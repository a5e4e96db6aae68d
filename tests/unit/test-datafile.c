/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-datafile.c: wallprof.data writer and reader (src/datafile.c).
 *
 * Round trips of a filled wp_meta, synthetic records and a summary through
 * files in a temporary directory, with and without zstd; the temporary-name
 * protocol of the writer; and the reader on damaged files: truncated at
 * every kind of place, random bytes, a newer version, a flipped byte in a
 * compressed block, an empty file.  The reader must refuse or stop with an
 * error, never crash or hand out bytes that were not written.
 *
 * The test walks the file with its own knowledge of the layout:
 *	header	char magic[8]; u32 version; u32 byte_order; u64 meta_size
 *	meta	meta_size bytes
 *	blocks	u32 type; u32 flags; u64 size; u64 raw_size; payload padded to 8
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "datafile.h"
#include "jitmap.h"
#include "placenames.h"
#include "layout.h"
#include "util.h"
#include "log.h"
#include "tap.h"

#define FILE_HEADER_SIZE 24
#define BLOCK_HEADER_SIZE 24
#define BLOCK_RECORDS 1
#define BLOCK_SUMMARY 2
#define BLOCK_ZSTD 1
#define MAX_RECORD 65528U

#define NR_RECORDS 64
/*
 * The sanitizers make each read of a file some fifty times slower: under
 * them the sweeps below try every SWEEP_STRIDE-th of their places (the
 * boundaries are tried one by one all the same); the plain builds try
 * them all.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SWEEP_STRIDE 31
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWEEP_STRIDE 31
#endif
#endif
#ifndef SWEEP_STRIDE
#define SWEEP_STRIDE 1
#endif
/* Records [block_end[k-1], block_end[k]) go into block k. */
static const unsigned int block_end[] = { 1, 5, 6, 7, 30, NR_RECORDS };
#define NR_BLOCKS (sizeof(block_end) / sizeof(block_end[0]))

static char tmpdir[64];
static unsigned int log_lines;

static void fatal(const char *what)
{
	fprintf(stderr, "test-datafile: %s\n", what);
	printf("Bail out! %s\n", what);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory");
	return p;
}

/* Library errors are expected here; count them instead of printing them. */
static void quiet_sink(enum wp_log_level level, const char *msg)
{
	log_lines++;
	if (getenv("TEST_VERBOSE"))
		printf("# log(%d): %s\n", (int)level, msg);
}

/* ---- files and directories ---- */

static void path_in_tmp(char *buf, size_t size, const char *name)
{
	if ((size_t)snprintf(buf, size, "%s/%s", tmpdir, name) >= size)
		fatal("path too long");
}

/* Number of entries in the temporary directory, . and .. aside. */
static unsigned int tmpdir_entries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	unsigned int n = 0;

	if (!d)
		fatal("cannot open the temporary directory");
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Remove every file in the temporary directory. */
static void tmpdir_clear(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[512];

	if (!d)
		fatal("cannot open the temporary directory");
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path_in_tmp(path, sizeof(path), e->d_name);
		unlink(path);
	}
	closedir(d);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Read a whole file; *len set.  Fatal on error. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st))
		fatal("cannot read a test file");
	buf = xmalloc((size_t)st.st_size);
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		fatal("short read of a test file");
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

static void spew(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f))
		fatal("cannot write a test file");
}

/* ---- what goes into the files ---- */

static uint16_t record_size(unsigned int i)
{
	if (i == 5)
		return MAX_RECORD;	/* alone in block 2 */
	if (i == 6)
		return 8;		/* a bare header, alone in block 3 */
	return (uint16_t)(8 * (1 + (i * 29) % 100));
}

static uint32_t record_type(unsigned int i)
{
	static const uint32_t types[] = {
		PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
		PERF_RECORD_SWITCH, PERF_RECORD_LOST, 100 /* ROUND */,
	};

	return types[i % (sizeof(types) / sizeof(types[0]))];
}

/* Record i: compressible words that still identify the record and position. */
static void make_record(unsigned int i, uint8_t *p)
{
	struct perf_event_header h = {
		.type = record_type(i),
		.misc = (uint16_t)(i * 3),
		.size = record_size(i),
	};

	memcpy(p, &h, sizeof(h));
	for (size_t w = 1; w < h.size / 8; w++) {
		uint64_t v = (w & 1) ? 0x0706050403020100ULL : ((uint64_t)i << 40) | w;

		memcpy(p + 8 * w, &v, 8);
	}
}

/* All records back to back, and the offset where each starts. */
struct stream {
	uint8_t *buf;
	size_t len;
	size_t off[NR_RECORDS + 1];
};

static void stream_build(struct stream *s)
{
	s->len = 0;
	for (unsigned int i = 0; i < NR_RECORDS; i++)
		s->len += record_size(i);
	s->buf = xmalloc(s->len);
	s->off[0] = 0;
	for (unsigned int i = 0; i < NR_RECORDS; i++) {
		make_record(i, s->buf + s->off[i]);
		s->off[i + 1] = s->off[i] + record_size(i);
	}
}

static uint64_t ids0[] = { 11, 12, 13, 14 };
static uint64_t ids1[] = { 0xfedcba9876543210ULL, 22 };
static char *test_argv[] = { "wallprof", "record", "--call-graph=dwarf" };

static void meta_fill(struct wp_meta *m, struct wp_event_desc ev[2])
{
	memset(m, 0, sizeof(*m));
	memset(ev, 0, 2 * sizeof(*ev));
	m->clockid = 1;		/* CLOCK_MONOTONIC */
	m->start_clock_ns = 1234567890123ULL;
	m->start_realtime_ns = 1700000000123456789ULL;
	strcpy(m->hostname, "test-host.example");
	strcpy(m->os_release, "6.8.0-test");
	strcpy(m->machine, "x86_64");
	m->argv = test_argv;
	m->argc = 3;
	m->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			 PERF_SAMPLE_STACK_USER;
	m->regs_mask = 0xff01ff;
	m->stack_size = 8192;
	m->callgraph = WP_CALLGRAPH_DWARF;
	m->nr_cpus = 12;
	m->page_size = 4096;
	m->target_mode = WP_TARGET_PID;
	m->flags = WP_META_SWITCHES | WP_META_OFFCPU_STACKS | WP_META_CLOCK_FALLBACK;
	m->sample_period_ns = 10101010;
	m->switch_stack_budget = 3000;

	strcpy(ev[0].name, "cpu-clock");
	ev[0].role = WP_EVENT_ONCPU;
	ev[0].attr.size = sizeof(ev[0].attr);
	ev[0].attr.type = PERF_TYPE_SOFTWARE;
	ev[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
	ev[0].attr.sample_period = 10101010;
	ev[0].attr.sample_type = m->sample_type;
	ev[0].attr.sample_regs_user = m->regs_mask;
	ev[0].attr.sample_stack_user = m->stack_size;
	ev[0].attr.use_clockid = 1;
	ev[0].attr.clockid = 1;
	ev[0].attr.sample_id_all = 1;
	ev[0].ids = ids0;
	ev[0].nr_ids = 4;

	strcpy(ev[1].name, "context-switches");
	ev[1].role = WP_EVENT_SWITCH_OUT;
	ev[1].attr.size = sizeof(ev[1].attr);
	ev[1].attr.type = PERF_TYPE_SOFTWARE;
	ev[1].attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	ev[1].attr.sample_period = 1;
	ev[1].attr.context_switch = 1;
	ev[1].attr.exclude_kernel = 1;
	ev[1].ids = ids1;
	ev[1].nr_ids = 2;

	m->events = ev;
	m->nr_events = 2;
}

static void summary_fill(struct wp_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->end_clock_ns = 2234567890123ULL;
	s->end_realtime_ns = 1700000001123456789ULL;
	s->records = NR_RECORDS;
	s->samples = 40;
	s->switch_samples = 9;
	s->switches = 18;
	s->lost_records = 3;
	s->lost_samples = 4;
	s->throttles = 5;
	s->ring_bytes = 123456;
	s->stack_bytes_trimmed = 654321;
	s->corrupt_bytes = 8;
	s->synthesized = 7;
	s->exit_status = 256;
	s->stop_reason = WP_STOP_SIGNAL;
}

/* Write a complete file; 0 or the first error. */
static int write_file(const char *path, bool force, int level, const struct wp_meta *m,
		      const struct stream *s, const struct wp_summary *sum)
{
	struct wp_writer *w;
	int err = wp_writer_open(path, force, level, &w);
	unsigned int first = 0;

	if (err)
		return err;
	err = wp_writer_write_meta(w, m);
	for (unsigned int k = 0; !err && k < NR_BLOCKS; k++) {
		err = wp_writer_write_records(w, s->buf + s->off[first],
					      s->off[block_end[k]] - s->off[first]);
		first = block_end[k];
	}
	if (!err)
		err = wp_writer_write_summary(w, sum);
	if (err) {
		wp_writer_abort(w);
		return err;
	}
	return wp_writer_commit(w);
}

/* ---- reading back ---- */

static bool event_equal(const struct wp_event_desc *a, const struct wp_event_desc *b)
{
	return !strcmp(a->name, b->name) && a->role == b->role &&
	       !memcmp(&a->attr, &b->attr, sizeof(a->attr)) && a->nr_ids == b->nr_ids &&
	       a->ids && !memcmp(a->ids, b->ids, (size_t)a->nr_ids * 8);
}

static void check_meta(const struct wp_meta *got, const struct wp_meta *want,
		       const char *label)
{
	bool argv_ok = got->argc == want->argc && got->argv;

	is_int(got->clockid, want->clockid, "%s: meta clockid", label);
	is_u64(got->start_clock_ns, want->start_clock_ns, "%s: meta start_clock_ns", label);
	is_u64(got->start_realtime_ns, want->start_realtime_ns, "%s: meta start_realtime_ns",
	       label);
	is_str(got->hostname, want->hostname, "%s: meta hostname", label);
	is_str(got->os_release, want->os_release, "%s: meta os_release", label);
	is_str(got->machine, want->machine, "%s: meta machine", label);
	for (uint32_t i = 0; argv_ok && i < want->argc; i++)
		argv_ok = got->argv[i] && !strcmp(got->argv[i], want->argv[i]);
	ok(argv_ok, "%s: meta argc %u and argv strings", label, got->argc);
	is_u64(got->sample_type, want->sample_type, "%s: meta sample_type", label);
	is_u64(got->regs_mask, want->regs_mask, "%s: meta regs_mask", label);
	is_u64(got->stack_size, want->stack_size, "%s: meta stack_size", label);
	is_u64(got->callgraph, want->callgraph, "%s: meta callgraph", label);
	is_u64(got->nr_cpus, want->nr_cpus, "%s: meta nr_cpus", label);
	is_u64(got->page_size, want->page_size, "%s: meta page_size", label);
	is_u64(got->target_mode, want->target_mode, "%s: meta target_mode", label);
	is_u64(got->flags, want->flags, "%s: meta flags", label);
	is_u64(got->switch_stack_budget, want->switch_stack_budget,
	       "%s: meta switch_stack_budget", label);
	is_u64(got->sample_period_ns, want->sample_period_ns, "%s: meta sample_period_ns",
	       label);
	if (is_u64(got->nr_events, want->nr_events, "%s: meta nr_events", label)) {
		for (uint32_t i = 0; i < want->nr_events; i++)
			ok(event_equal(&got->events[i], &want->events[i]),
			   "%s: meta event %u (%s): name, role, attr, %u ids", label, i,
			   want->events[i].name, want->events[i].nr_ids);
	}
}

static void check_summary(const struct wp_summary *got, const struct wp_summary *want,
			  const char *label)
{
	ok(got != NULL, "%s: the summary is there", label);
	if (got)
		is_mem(got, want, sizeof(*want), "%s: every summary field", label);
}

/*
 * Read records until the end or an error; compare them with the stream.
 * Returns the last wp_reader_next value; *nr_ok counts records that matched
 * in order, *nr_bad those that did not.
 */
static int read_records(struct wp_reader *r, const struct stream *s, unsigned int *nr_ok,
			unsigned int *nr_bad)
{
	const struct perf_event_header *rec;
	int ret;

	*nr_ok = *nr_bad = 0;
	while ((ret = wp_reader_next(r, &rec)) > 0) {
		unsigned int i = *nr_ok + *nr_bad;

		if (i < NR_RECORDS && rec->size == record_size(i) &&
		    !memcmp(rec, s->buf + s->off[i], rec->size))
			(*nr_ok)++;
		else
			(*nr_bad)++;
		if (i > 10 * NR_RECORDS)
			break;
	}
	return ret;
}

/* Open path and check every meta field, record and the summary. */
static void check_file(const char *path, const struct wp_meta *m, const struct stream *s,
		       const struct wp_summary *sum, const char *label)
{
	struct wp_reader *r;
	const struct perf_event_header *rec;
	unsigned int nr_ok, nr_bad;
	int ret;

	ret = wp_reader_open(path, &r);
	if (!is_int(ret, 0, "%s: the reader opens the file", label))
		return;
	check_meta(wp_reader_meta(r), m, label);
	ok(wp_reader_summary(r) == NULL, "%s: no summary before the records are read", label);
	ret = read_records(r, s, &nr_ok, &nr_bad);
	is_int(ret, 0, "%s: wp_reader_next returns 0 at the end", label);
	is_int(nr_ok, NR_RECORDS, "%s: all %d records, byte for byte, in order", label,
	       NR_RECORDS);
	is_int(nr_bad, 0, "%s: no record differs", label);
	check_summary(wp_reader_summary(r), sum, label);
	is_int(wp_reader_next(r, &rec), 0, "%s: wp_reader_next stays at 0", label);
	wp_reader_close(r);
}

/* ---- the layout as this test knows it ---- */

struct block_pos {
	size_t offset;		/* of the block header */
	uint32_t type, flags;
	uint64_t size, raw_size;
};

/* Find the blocks of a file image; returns how many (at most max). */
static unsigned int find_blocks(const uint8_t *buf, size_t len, struct block_pos *b,
				unsigned int max)
{
	uint64_t meta_size;
	size_t off;
	unsigned int n = 0;

	memcpy(&meta_size, buf + 16, 8);
	off = FILE_HEADER_SIZE + (size_t)meta_size;
	while (n < max && off + BLOCK_HEADER_SIZE <= len) {
		b[n].offset = off;
		memcpy(&b[n].type, buf + off, 4);
		memcpy(&b[n].flags, buf + off + 4, 4);
		memcpy(&b[n].size, buf + off + 8, 8);
		memcpy(&b[n].raw_size, buf + off + 16, 8);
		off += BLOCK_HEADER_SIZE + ((b[n].size + 7) & ~7ULL);
		n++;
	}
	return n;
}

/* ---- reading damaged files ---- */

/* The content of every test file. */
static struct wp_meta meta;
static struct wp_event_desc events[2];
static struct stream stream;
static struct wp_summary summary;

/* What reading a damaged file gave. */
struct outcome {
	/*
	 * 'o' open failed with -EBADMSG
	 * 'e' records (all correct) then -EBADMSG from wp_reader_next
	 * 'z' records (all correct) then 0, without summary
	 * 'S' records (all correct) then 0 with a summary (the whole file)
	 * '?' anything else: another error, wrong or extra records
	 */
	char kind;
	unsigned int nr_ok, nr_bad;	/* records matching the stream, in order */
	int ret;			/* of wp_reader_open, else last wp_reader_next */
};

/* Write a file image of len bytes to path and read it all. */
static struct outcome read_image(const uint8_t *img, size_t len, const char *path)
{
	struct outcome o = { .kind = '?' };
	struct wp_reader *r;

	spew(path, img, len);
	o.ret = wp_reader_open(path, &r);
	if (o.ret) {
		o.kind = o.ret == -EBADMSG ? 'o' : '?';
		return o;
	}
	o.ret = read_records(r, &stream, &o.nr_ok, &o.nr_bad);
	if (o.nr_bad)
		o.kind = '?';
	else if (o.ret < 0)
		o.kind = o.ret == -EBADMSG ? 'e' : '?';
	else
		o.kind = wp_reader_summary(r) ? 'S' : 'z';
	wp_reader_close(r);
	return o;
}

static void diag_outcome(const char *label, const char *what, size_t at, struct outcome o)
{
	diag("%s: %s %zu: outcome '%c', %u good records, %u wrong, return %d", label, what,
	     at, o.kind, o.nr_ok, o.nr_bad, o.ret);
}

/* Records in the blocks before block k. */
static unsigned int records_before_block(unsigned int k)
{
	return k ? block_end[k - 1] : 0;
}

/* ---- tests ---- */

static void test_round_trip(int level, const char *label, size_t *file_size)
{
	char path[512];
	struct block_pos b[16];
	uint8_t *img;
	size_t len;
	unsigned int n, zstd_blocks = 0;

	path_in_tmp(path, sizeof(path), "rt.data");
	is_int(write_file(path, false, level, &meta, &stream, &summary), 0,
	       "%s: the writer writes meta, %zu blocks and a summary", label, NR_BLOCKS);
	check_file(path, &meta, &stream, &summary, label);

	img = slurp(path, &len);
	n = find_blocks(img, len, b, 16);
	is_int(n, NR_BLOCKS + 1, "%s: %zu record blocks and a summary block", label, NR_BLOCKS);
	ok(n && b[n - 1].type == BLOCK_SUMMARY && b[n - 1].flags == 0 &&
	   b[n - 1].raw_size == sizeof(struct wp_summary),
	   "%s: the summary block comes last", label);
	/* Bit k set: block k is a zstd RECORDS block. */
	for (unsigned int k = 0; k + 1 < n; k++)
		if (b[k].type == BLOCK_RECORDS && (b[k].flags & BLOCK_ZSTD))
			zstd_blocks |= 1U << k;
	/* Blocks 0 and 3 hold one 8-byte record: compressing does not pay. */
	if (level)
		is_int(zstd_blocks, 0x36, "%s: blocks 0 and 3 stored raw, the others zstd",
		       label);
	else
		is_int(zstd_blocks, 0, "%s: no block compressed", label);
	*file_size = len;
	free(img);
	unlink(path);
}

static void test_round_trips(void)
{
	size_t raw_size, zstd_size;

	test_round_trip(0, "level 0", &raw_size);
	test_round_trip(3, "zstd 3", &zstd_size);
	ok(zstd_size < raw_size / 2, "zstd 3: file of %zu bytes, less than half of %zu",
	   zstd_size, raw_size);
}

/* An empty meta (no events, no argv, empty strings) round-trips too. */
static void test_minimal_meta(void)
{
	struct wp_meta m = { .clockid = 4 };
	struct wp_writer *w;
	struct wp_reader *r;
	const struct perf_event_header *rec;
	char path[512];

	path_in_tmp(path, sizeof(path), "minimal.data");
	ok(wp_writer_open(path, false, 0, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_commit(w) == 0,
	   "minimal: meta without events or argv, no blocks, written");
	if (is_int(wp_reader_open(path, &r), 0, "minimal: it opens")) {
		const struct wp_meta *g = wp_reader_meta(r);

		ok(g->clockid == 4 && g->argc == 0 && g->nr_events == 0 && !g->hostname[0],
		   "minimal: clockid 4, no argv, no events, empty hostname");
		is_int(wp_reader_next(r, &rec), 0, "minimal: no records");
		ok(wp_reader_summary(r) == NULL, "minimal: no summary");
		wp_reader_close(r);
	}
	unlink(path);
}

/*
 * A RECORDS block given already compressed (the flight recorder's) reads
 * back as the records; a writer that stores blocks raw refuses it.
 */
static void test_precompressed_records(void)
{
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	struct rec {
		struct perf_event_header h;
		uint64_t v;
	} recs[3];
	const struct perf_event_header *got;
	struct wp_writer *w;
	struct wp_reader *r;
	char path[512], z[256];
	size_t n;
	int seen = 0, bad = 0;

	for (int i = 0; i < 3; i++)
		recs[i] = (struct rec){ { WP_RECORD_ROUND + 50, 0, sizeof(recs[0]) },
					0x1111 * (uint64_t)(i + 1) };
	n = ZSTD_compress(z, sizeof(z), recs, sizeof(recs), 1);
	ok(!ZSTD_isError(n), "precompressed: a zstd frame of 3 records");
	path_in_tmp(path, sizeof(path), "precompressed.data");
	ok(wp_writer_open(path, false, 1, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_write_records_zstd(w, z, n, sizeof(recs)) == 0 && wp_writer_commit(w) == 0,
	   "precompressed: written as a block");
	if (is_int(wp_reader_open(path, &r), 0, "precompressed: it opens")) {
		while (wp_reader_next(r, &got) > 0) {
			bad += got->size != sizeof(recs[0]) ||
			       memcmp(got, &recs[seen % 3], sizeof(recs[0]));
			seen++;
		}
		is_int(seen, 3, "precompressed: 3 records read back");
		is_int(bad, 0, "precompressed: as they were");
		wp_reader_close(r);
	}
	unlink(path);
	ok(wp_writer_open(path, false, 0, &w) == 0, "precompressed: a raw writer opens");
	is_int(wp_writer_write_records_zstd(w, z, n, sizeof(recs)), -EINVAL,
	       "precompressed: a writer storing blocks raw refuses it");
	wp_writer_abort(w);
}

/* What wp_reader_ahead() showed: the records' values, in order. */
struct ahead_seen {
	uint64_t v[8];
	int n;
};

static void ahead_note(const struct perf_event_header *rec, void *arg)
{
	struct ahead_seen *a = arg;

	if (a->n < 8)
		memcpy(&a->v[a->n], rec + 1, sizeof(a->v[0]));
	a->n++;
}

/*
 * A look ahead shows the rest of the current block, no more, takes
 * nothing, and stops short of a malformed record, which reading then
 * reports.
 */
static void test_reader_ahead(int level)
{
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	struct rec {
		struct perf_event_header h;
		uint64_t v;
	} a[3], b[2], c[3];
	const struct perf_event_header *got;
	struct ahead_seen seen = { 0 };
	struct wp_writer *w;
	struct wp_reader *r;
	char path[512];

	for (int i = 0; i < 3; i++) {
		a[i] = (struct rec){ { WP_RECORD_ROUND + 50, 0, sizeof(a[0]) }, 10 + (uint64_t)i };
		c[i] = (struct rec){ { WP_RECORD_ROUND + 50, 0, sizeof(c[0]) }, 30 + (uint64_t)i };
	}
	for (int i = 0; i < 2; i++)
		b[i] = (struct rec){ { WP_RECORD_ROUND + 50, 0, sizeof(b[0]) }, 20 + (uint64_t)i };
	c[1].h.size = 12;	/* not a multiple of 8: malformed */
	path_in_tmp(path, sizeof(path), "ahead.data");
	ok(wp_writer_open(path, false, level, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_write_records(w, a, sizeof(a)) == 0 &&
	   wp_writer_write_records(w, b, sizeof(b)) == 0 &&
	   wp_writer_write_records(w, c, sizeof(c)) == 0 && wp_writer_commit(w) == 0,
	   "ahead (level %d): three blocks written", level);
	if (!is_int(wp_reader_open(path, &r), 0, "ahead: it opens")) {
		unlink(path);
		return;
	}
	is_int(wp_reader_next(r, &got), 1, "ahead: the first record");
	wp_reader_ahead(r, ahead_note, &seen);
	ok(seen.n == 2 && seen.v[0] == 11 && seen.v[1] == 12,
	   "ahead: after the first, the two left in its block (%d seen)", seen.n);
	seen.n = 0;
	is_int(wp_reader_next(r, &got), 1, "ahead: nothing was taken");
	ok(((const struct rec *)got)->v == 11, "ahead: reading goes on with the second");
	wp_reader_next(r, &got);
	wp_reader_ahead(r, ahead_note, &seen);
	is_int(seen.n, 0, "ahead: at a block's end, nothing (not the next block)");
	wp_reader_next(r, &got);
	wp_reader_ahead(r, ahead_note, &seen);
	ok(seen.n == 1 && seen.v[0] == 21, "ahead: in the second block, its last");
	seen.n = 0;
	wp_reader_next(r, &got);
	is_int(wp_reader_next(r, &got), 1, "ahead: the third block's first record");
	wp_reader_ahead(r, ahead_note, &seen);
	is_int(seen.n, 0, "ahead: stops short of a malformed record");
	is_int(wp_reader_next(r, &got), -EBADMSG, "ahead: which reading reports");
	wp_reader_close(r);
	unlink(path);
}

/* The KSYMS block: found at open, whatever follows it, skipped by record reading. */
static void test_ksyms_block(int level)
{
	static const char text[] = "ffffffff81000000 _stext\nffffffff81001000 schedule\n";
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	uint64_t rec[2] = { 0 };
	const struct perf_event_header *got;
	struct perf_event_header *h = (void *)rec;
	struct wp_writer *w;
	struct wp_reader *r;
	char path[512], *ks = NULL;
	size_t len = 0;
	int n = 0;

	h->type = PERF_RECORD_COMM;
	h->size = sizeof(rec);
	path_in_tmp(path, sizeof(path), "ksyms.data");
	ok(wp_writer_open(path, false, level, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_write_records(w, rec, sizeof(rec)) == 0 &&
	   wp_writer_write_ksyms(w, text, strlen(text)) == 0 &&
	   wp_writer_write_summary(w, &summary) == 0 && wp_writer_commit(w) == 0,
	   "ksyms (level %d): records, KSYMS and summary written", level);
	if (!is_int(wp_reader_open(path, &r), 0, "ksyms (level %d): it opens", level))
		return;
	ok(wp_reader_ksyms(r, &ks, &len) == 0 && ks && len == strlen(text) && !strcmp(ks, text),
	   "ksyms (level %d): the text is found before reading any record", level);
	free(ks);
	while (wp_reader_next(r, &got) > 0)
		n++;
	is_int(n, 1, "ksyms (level %d): reading records skips the block", level);
	ok(wp_reader_summary(r) != NULL, "ksyms (level %d): the summary follows it", level);
	wp_reader_close(r);
	unlink(path);
	/* A file without the block: no text, no error. */
	path_in_tmp(path, sizeof(path), "noksyms.data");
	if (!wp_writer_open(path, false, level, &w) && !wp_writer_write_meta(w, &m) &&
	    !wp_writer_commit(w) && !wp_reader_open(path, &r)) {
		ks = (char *)1;
		ok(wp_reader_ksyms(r, &ks, &len) == 0 && ks == NULL && len == 0,
		   "ksyms (level %d): a file without the block has none", level);
		wp_reader_close(r);
	}
	unlink(path);
}

/* Frames a and b: the same text (or both none) and numbers. */
static bool same_frame(const struct wp_placename_frame *a, const struct wp_placename_frame *b)
{
	bool where = a->where && b->where ? !strcmp(a->where, b->where) : a->where == b->where;
	bool src = a->src && b->src ? !strcmp(a->src, b->src) : a->src == b->src;

	return !strcmp(a->name, b->name) && where && src && a->flags == b->flags &&
	       a->line == b->line && a->entry == b->entry;
}

/*
 * The NAMES block: a table of places' frames encodes, is written and
 * found at open (records reading skips it), and parses back the same;
 * strings are stored once; every malformed payload is refused whole.
 */
static void test_names_block(int level)
{
	static const struct wp_placename_frame inl[] = {
		{ .name = "inner", .where = "a.c:10", .flags = WP_PLACENAME_INLINED,
		  .line = 3, .entry = 0x1100, .src = "/src/a.h" },
		{ .name = "std::vector<int>::push_back(int)", .where = "a.c:40", .line = 30,
		  .entry = 0x1000, .src = "/src/a.c" },
	};
	static const struct wp_placename_frame plain[] = {
		{ .name = "inner", .entry = 0x2000 },
	};
	static const struct wp_placename_frame unnamed[] = {
		{ .name = "libx.so+0x4f2", .flags = WP_PLACENAME_UNNAMED, .entry = 0x4f2 },
	};
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	struct wp_placename_frame got[WP_PLACENAMES_MAX_FRAMES];
	struct wp_placenames *pn, *back = NULL;
	struct wp_buf enc = { 0 };
	uint64_t rec[2] = { 0 };
	struct perf_event_header *h = (void *)rec;
	const struct perf_event_header *r_rec;
	struct wp_writer *w;
	struct wp_reader *r;
	char path[512], *buf = NULL;
	unsigned int n = 0;
	size_t len = 0;
	int recs = 0;

	if (wp_placenames_new(&pn))
		fatal("no memory for a names table");
	ok(!wp_placenames_add(pn, 7, inl, 2) && !wp_placenames_add(pn, 3, plain, 1) &&
	   !wp_placenames_add(pn, 9, unnamed, 1), "names (level %d): three places added", level);
	is_int(wp_placenames_add(pn, 7, plain, 1), -EINVAL,
	       "names (level %d): a place added twice is refused", level);
	is_int(wp_placenames_add(pn, 8, plain, 0), -EINVAL,
	       "names (level %d): a place without frames is refused", level);
	is_int((int)wp_placenames_strings(pn), 7, "names (level %d): \"inner\" is stored once", level);
	ok(!wp_placenames_encode(pn, &enc) && enc.len % 8 == 0,
	   "names (level %d): encoded, 8-byte aligned", level);
	wp_placenames_free(pn);
	h->type = PERF_RECORD_COMM;
	h->size = sizeof(rec);
	path_in_tmp(path, sizeof(path), "names.data");
	ok(wp_writer_open(path, false, level, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_write_records(w, rec, sizeof(rec)) == 0 &&
	   wp_writer_write_names(w, enc.data, enc.len) == 0 &&
	   wp_writer_write_summary(w, &summary) == 0 && wp_writer_commit(w) == 0,
	   "names (level %d): records, NAMES and summary written", level);
	if (!is_int(wp_reader_open(path, &r), 0, "names (level %d): it opens", level))
		return;
	ok(wp_reader_names(r, &buf, &len) == 0 && buf && len == enc.len &&
	   !memcmp(buf, enc.data, len), "names (level %d): the payload is found at open", level);
	while (wp_reader_next(r, &r_rec) > 0)
		recs++;
	is_int(recs, 1, "names (level %d): reading records skips the block", level);
	wp_reader_close(r);
	unlink(path);
	ok(buf && wp_placenames_parse(buf, len, &back) == 0 && back,
	   "names (level %d): the payload parses", level);
	free(buf);
	if (!back)
		goto out;
	is_int((int)wp_placenames_places(back), 3, "names (level %d): three places", level);
	ok(wp_placenames_get(back, 7, got, WP_PLACENAMES_MAX_FRAMES, &n) && n == 2 &&
	   same_frame(&got[0], &inl[0]) && same_frame(&got[1], &inl[1]),
	   "names (level %d): an inlined call and its function come back", level);
	ok(wp_placenames_get(back, 3, got, WP_PLACENAMES_MAX_FRAMES, &n) && n == 1 &&
	   same_frame(&got[0], &plain[0]), "names (level %d): a frame without where", level);
	ok(wp_placenames_get(back, 9, got, WP_PLACENAMES_MAX_FRAMES, &n) && n == 1 &&
	   same_frame(&got[0], &unnamed[0]), "names (level %d): an unnamed frame", level);
	ok(!wp_placenames_get(back, 4, got, WP_PLACENAMES_MAX_FRAMES, &n),
	   "names (level %d): a place not listed has none", level);
	ok(!wp_placenames_get(back, 7, got, 1, &n),
	   "names (level %d): more frames than room: none", level);
	wp_placenames_free(back);
	/* A file without the block: none, no error. */
	path_in_tmp(path, sizeof(path), "nonames.data");
	if (!wp_writer_open(path, false, level, &w) && !wp_writer_write_meta(w, &m) &&
	    !wp_writer_commit(w) && !wp_reader_open(path, &r)) {
		buf = (char *)1;
		ok(wp_reader_names(r, &buf, &len) == 0 && buf == NULL,
		   "names (level %d): a file without the block has none", level);
		wp_reader_close(r);
	}
	unlink(path);
out:
	wp_buf_release(&enc);
}

/* Damaged NAMES payloads: each is refused whole, none read out of bounds. */
static void test_names_damaged(void)
{
	static const struct wp_placename_frame two[] = {
		{ .name = "f", .where = "a.c:1" }, { .name = "g", .src = "a.c", .line = 2 },
	};
	struct wp_placenames *pn, *back;
	struct wp_buf enc = { 0 };
	uint32_t *w;
	uint8_t *copy;
	int refused = 0, cut = 0;

	if (wp_placenames_new(&pn) || wp_placenames_add(pn, 1, two, 2) ||
	    wp_placenames_add(pn, 2, two + 1, 1) || wp_placenames_encode(pn, &enc))
		fatal("cannot encode names");
	wp_placenames_free(pn);
	copy = malloc(enc.len);
	if (!copy)
		fatal("no memory");
	/* Every payload cut before the end of its strings (at 150) is refused. */
	for (size_t l = 0; l < 150; l++) {
		back = NULL;
		if (wp_placenames_parse(enc.data, l, &back) == -EBADMSG && !back)
			cut++;
		wp_placenames_free(back);
	}
	/* Header 24 bytes, places at 24 (2 x 8), frames at 40 (3 x 32), strings at 136. */
	for (int k = 0; k < 9; k++) {
		memcpy(copy, enc.data, enc.len);
		w = (uint32_t *)(void *)copy;
		switch (k) {
		case 0: w[0] = 1000; break;		/* more places than bytes */
		case 1: w[1] = 0xffffffff; break;	/* frames */
		case 2: w[2] = 100; break;		/* more strings than there are */
		case 3: w[4] = 1; break;		/* strings_size too small */
		case 4: w[7] = 1; break;		/* the first place's first frame not 0 */
		case 5: w[8] = 1; w[9] = 1; break;	/* a place listed twice */
		case 6: w[10 + 1] = 50; break;		/* a name out of range */
		case 7: w[10] = 8; break;		/* an unknown flag */
		case 8: copy[136 + 1] = 'x'; break;	/* "f" without its NUL */
		}
		back = NULL;
		if (wp_placenames_parse(copy, enc.len, &back) == -EBADMSG && !back)
			refused++;
		else
			diag("damage %d accepted", k);
		wp_placenames_free(back);
	}
	is_int(cut, 150, "names damaged: every cut payload is refused");
	is_int(refused, 9, "names damaged: counts, ids, strings and flags are checked");
	free(copy);
	wp_buf_release(&enc);
}

/* A file of one record, a JITMAP block of text and the summary, at level. */
static void write_jitmap_file(const char *path, int level, const char *text, size_t len)
{
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	uint64_t rec[2] = { 0 };
	struct perf_event_header *h = (void *)rec;
	struct wp_writer *w;

	h->type = PERF_RECORD_COMM;
	h->size = sizeof(rec);
	if (wp_writer_open(path, true, level, &w) || wp_writer_write_meta(w, &m) ||
	    wp_writer_write_records(w, rec, sizeof(rec)) ||
	    wp_writer_write_jitmap(w, text, len) ||
	    wp_writer_write_summary(w, &summary) || wp_writer_commit(w))
		fatal("cannot write a file with a JITMAP block");
}

/*
 * The JITMAP block: its text comes back as written, and parses into the
 * names report looks frames up in; records reading skips it.
 */
static void test_jitmap_block(int level)
{
	static const char text[] =
		"4242 7f0000001000 40 JS:*hotLoop /tmp/busy.js:2:17\n"
		"4242 7f0000001040 20 jit_spin_loop\n"
		"4242 7f0000001040 10 recompiled\n"
		"77 7f0000001000 1000 py::leaf_work\n";
	struct wp_jitmap jm = { 0 };
	const struct perf_event_header *got;
	struct wp_reader *r;
	char path[512], *jt = NULL, *out = NULL;
	const char *name;
	uint64_t start = 0;
	size_t len = 0;
	int n = 0;

	path_in_tmp(path, sizeof(path), "jitmap.data");
	write_jitmap_file(path, level, text, strlen(text));
	if (!is_int(wp_reader_open(path, &r), 0, "jitmap (level %d): it opens", level))
		return;
	ok(wp_reader_jitmap(r, &jt, &len) == 0 && jt && len == strlen(text) && !strcmp(jt, text),
	   "jitmap (level %d): the text is found before reading any record", level);
	while (wp_reader_next(r, &got) > 0)
		n++;
	is_int(n, 1, "jitmap (level %d): reading records skips the block", level);
	wp_reader_close(r);
	unlink(path);
	if (!jt)
		return;
	is_int(wp_jitmap_parse(&jm, jt, len), 0, "jitmap (level %d): the text parses", level);
	name = wp_jitmap_find(&jm, 4242, 0x7f0000001010, &start);
	ok(name && !strcmp(name, "JS:*hotLoop /tmp/busy.js:2:17") && start == 0x7f0000001000,
	   "jitmap (level %d): a name with blanks, as written", level);
	name = wp_jitmap_find(&jm, 4242, 0x7f0000001048, &start);
	ok(name && !strcmp(name, "recompiled"),
	   "jitmap (level %d): the later entry for a start wins", level);
	ok(!wp_jitmap_find(&jm, 4242, 0x7f0000001058, &start),
	   "jitmap (level %d): past an entry's size, no name", level);
	name = wp_jitmap_find(&jm, 77, 0x7f0000001048, &start);
	ok(name && !strcmp(name, "py::leaf_work"), "jitmap (level %d): names are per process",
	   level);
	ok(wp_jitmap_has_pid(&jm, 77) && !wp_jitmap_has_pid(&jm, 78),
	   "jitmap (level %d): which processes have names", level);
	ok(wp_jitmap_format(&jm, &out, &len) == 0 && out &&
	   !strcmp(out, "77 7f0000001000 1000 py::leaf_work\n"
			"4242 7f0000001000 40 JS:*hotLoop /tmp/busy.js:2:17\n"
			"4242 7f0000001040 10 recompiled\n"),
	   "jitmap (level %d): formatted back sorted, one entry per start", level);
	free(out);
	free(jt);
	wp_jitmap_release(&jm);
}

/*
 * Damaged JITMAP blocks: a flipped byte in the compressed payload, a file
 * cut inside the block, and text that is not "pid start size name" lines
 * all give -EBADMSG and nothing else; a file without the block has none.
 */
static void test_jitmap_damaged(void)
{
	static const char text[] = "4242 7f0000001000 40 JS:*hotLoop /tmp/busy.js:2:17\n"
				   "4242 7f0000001040 20 jit_spin_loop\n";
	static const char *const bad[] = {
		"4242 7f0000001000 40\n",		/* no name */
		"4242 7f00000010zz 40 f\n",		/* not hexadecimal */
		"pid 7f0000001000 40 f\n",		/* no pid */
		"4242 7f0000001000 0 f\n",		/* empty */
		"4242 ffffffffffffffff 40 f\n",		/* wraps around */
		"4242 17f00000010000000 40 f\n",	/* 17 digits */
		"99999999999 1000 40 f\n",		/* pid too large */
	};
	struct block_pos b[4];
	struct wp_jitmap jm = { 0 };
	struct wp_reader *r;
	char path[512], *jt;
	uint8_t *img;
	size_t len, nb;
	int i, found = -1;

	path_in_tmp(path, sizeof(path), "jitmap-bad.data");
	write_jitmap_file(path, 3, text, strlen(text));
	img = slurp(path, &len);
	nb = find_blocks(img, len, b, 4);
	for (i = 0; i < (int)nb; i++)
		if (b[i].type == 4)
			found = i;
	if (!ok(found >= 0 && b[found].flags == 1, "jitmap damaged: the block is compressed")) {
		free(img);
		return;
	}
	/* A byte of the zstd frame flipped: its checksum tells. */
	img[b[found].offset + 24 + b[found].size / 2] ^= 0x55;
	spew(path, img, len);
	if (!wp_reader_open(path, &r)) {
		jt = (char *)1;
		ok(wp_reader_jitmap(r, &jt, &len) == -EBADMSG && !jt,
		   "jitmap damaged: a flipped byte gives -EBADMSG and no text");
		wp_reader_close(r);
	}
	img[b[found].offset + 24 + b[found].size / 2] ^= 0x55;
	/* Cut in the middle of the block. */
	spew(path, img, b[found].offset + 24 + b[found].size / 2);
	if (!wp_reader_open(path, &r)) {
		jt = (char *)1;
		ok(wp_reader_jitmap(r, &jt, &len) == -EBADMSG && !jt,
		   "jitmap damaged: a block cut short gives -EBADMSG and no text");
		wp_reader_close(r);
	} else {
		ok(0, "jitmap damaged: a file cut in its JITMAP block still opens");
	}
	free(img);
	unlink(path);
	/* Text that is not entries: nothing is kept, and earlier entries stay. */
	is_int(wp_jitmap_parse(&jm, text, strlen(text)), 0, "jitmap damaged: good text parses");
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char buf[128];
		uint64_t start;

		snprintf(buf, sizeof(buf), "77 1000 10 fine\n%s", bad[k]);
		ok(wp_jitmap_parse(&jm, buf, strlen(buf)) == -EBADMSG &&
		   !wp_jitmap_has_pid(&jm, 77) && wp_jitmap_find(&jm, 4242, 0x7f0000001044, &start),
		   "jitmap damaged: bad line %zu refused as a whole", k);
	}
	{
		static const char nul[] = "77 1000 10 na\0me\n";

		ok(wp_jitmap_parse(&jm, nul, sizeof(nul) - 1) == -EBADMSG,
		   "jitmap damaged: a NUL in a name is refused");
	}
	wp_jitmap_release(&jm);
}

/* Perf maps as JITs write them: blanks, junk lines, a half-written end, ranges. */
static void test_perf_map_text(void)
{
	static const char map[] =
		"7f0000001000 40 JS:*hotLoop /tmp/busy.js:2:17\n"
		"0x7f0000002000 0x20 LazyCompile:~main\r\n"
		"not a line\n"
		"7f0000009000 10 outside\n"
		"7f0000003000 8 half";
	static const struct wp_jit_range ranges[] = { { 0x7f0000000000, 0x7f0000008000 } };
	struct wp_jitmap jm = { 0 };
	struct wp_jit_read st;
	const char *name;
	uint64_t start;

	is_int(wp_jitmap_add_perf_map(&jm, 9, map, strlen(map), ranges, 1, &st), 0,
	       "perf map: it is read");
	ok(st.kept == 3 && st.outside == 1 && st.malformed == 1 && !st.over_limit,
	   "perf map: 3 kept, 1 outside the ranges, 1 malformed (got %zu %zu %zu)",
	   st.kept, st.outside, st.malformed);
	name = wp_jitmap_find(&jm, 9, 0x7f0000002004, &start);
	ok(name && !strcmp(name, "LazyCompile:~main"), "perf map: 0x and a CR are taken");
	ok(!wp_jitmap_find(&jm, 9, 0x7f0000009004, &start), "perf map: outside, not kept");
	wp_jitmap_release(&jm);
}

/*
 * The KSYMS block's header read again by wp_reader_ksyms() is checked
 * again: the file may have been changed since it was opened.
 */
static void test_ksyms_changed_after_open(void)
{
	static const char text[] = "ffffffff81000000 _stext\n";
	static const struct {
		size_t field;		/* 0 type (u32), 8 size, 16 raw_size */
		uint64_t value;
		const char *what;
	} patches[] = {
		{ 16, 1ULL << 40, "raw_size 2^40" },
		{ 16, 0xffffffffULL, "raw_size 2^32 - 1 (0 after adding 1 in 32 bits)" },
		{ 8, 0x100000000ULL + 24, "size 2^32 + 24" },
		{ 0, BLOCK_RECORDS, "type RECORDS" },
	};
	struct wp_meta m = { .clockid = 1, .sample_type = PERF_SAMPLE_TIME };
	struct block_pos b[4];
	struct wp_writer *w;
	struct wp_reader *r;
	char path[512], *ks;
	uint8_t *img;
	size_t img_len, len;

	path_in_tmp(path, sizeof(path), "ksyms-changed.data");
	if (wp_writer_open(path, false, 0, &w) || wp_writer_write_meta(w, &m) ||
	    wp_writer_write_ksyms(w, text, strlen(text)) || wp_writer_commit(w))
		fatal("cannot write a file with a KSYMS block");
	img = slurp(path, &img_len);
	if (find_blocks(img, img_len, b, 4) != 1 || b[0].type != 3)
		fatal("unexpected KSYMS file layout");
	for (size_t i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
		uint32_t u32 = (uint32_t)patches[i].value;
		const void *v = patches[i].field ? (const void *)&patches[i].value : &u32;
		size_t vlen = patches[i].field ? 8 : 4;
		int fd;

		spew(path, img, img_len);
		if (wp_reader_open(path, &r))
			fatal("cannot open the KSYMS file");
		fd = open(path, O_WRONLY);
		if (fd < 0 || pwrite(fd, v, vlen, (off_t)(b[0].offset + patches[i].field)) !=
			      (ssize_t)vlen)
			fatal("cannot patch the KSYMS file");
		close(fd);
		ks = NULL;
		len = 1;
		ok(wp_reader_ksyms(r, &ks, &len) == -EBADMSG && !ks && !len,
		   "ksyms changed after open: %s gives -EBADMSG and no text",
		   patches[i].what);
		free(ks);
		wp_reader_close(r);
	}
	free(img);
	unlink(path);
}

/*
 * Lengths and counts in the meta that wrap a 32-bit size_t.  On such a
 * host, 48 (the event field header) + an attr_size of 0xffffffd0 is 0, and
 * 0xfffffff9 rounded up to 8 is 0: the checks are made in 64 bits.
 */
static void test_huge_meta_lengths(void)
{
	static const struct {
		size_t field;		/* in the first EVENT payload; 0: the TLV size */
		uint32_t value;
		const char *what;
	} patches[] = {
		{ 36, 0xfffffff9, "event attr_size 0xfffffff9" },
		{ 36, 0xffffffd0, "event attr_size 0xffffffd0 (plus 48 is 2^32)" },
		{ 36, 0xfffffff8, "event attr_size 0xfffffff8" },
		{ 40, (1U << 24) + 1, "event nr_ids 2^24 + 1" },
		{ 40, 0xffffffff, "event nr_ids 2^32 - 1" },
		{ 0, 0xfffffff9, "event field of 0xfffffff9 bytes" },
	};
	char good[512], path[512];
	uint8_t *img;
	size_t len, off, event = 0;
	struct wp_reader *r;

	path_in_tmp(good, sizeof(good), "good.data");
	path_in_tmp(path, sizeof(path), "huge-meta.data");
	write_file(good, false, 0, &meta, &stream, &summary);
	img = slurp(good, &len);
	/* Find the first EVENT field (tag 9): u32 tag, u32 size, payload padded to 8. */
	for (off = FILE_HEADER_SIZE; off + 8 <= len; ) {
		uint32_t tag, size;

		memcpy(&tag, img + off, 4);
		memcpy(&size, img + off + 4, 4);
		if (tag == 9) {
			event = off;
			break;
		}
		off += 8 + ((size + 7) & ~7U);
	}
	if (!event)
		fatal("no EVENT field in the meta");
	for (size_t i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
		size_t at = patches[i].field ? event + 8 + patches[i].field : event + 4;
		uint32_t orig;

		memcpy(&orig, img + at, 4);
		memcpy(img + at, &patches[i].value, 4);
		spew(path, img, len);
		memcpy(img + at, &orig, 4);
		r = NULL;
		is_int(wp_reader_open(path, &r), -EBADMSG, "huge meta: %s gives -EBADMSG",
		       patches[i].what);
		wp_reader_close(r);
	}
	/* 48 + 0xf7ffffd0 + 2^24 ids * 8 is 2^32. */
	{
		uint32_t attr = 0xf7ffffd0, nr = 1U << 24;

		memcpy(img + event + 8 + 36, &attr, 4);
		memcpy(img + event + 8 + 40, &nr, 4);
		spew(path, img, len);
		r = NULL;
		is_int(wp_reader_open(path, &r), -EBADMSG,
		       "huge meta: attr_size 0xf7ffffd0 and 2^24 ids (2^32 bytes in all) "
		       "give -EBADMSG");
		wp_reader_close(r);
	}
	free(img);
	tmpdir_clear();
}

/* (a) the file appears under its name only at commit. */
static void test_temporary_name(void)
{
	char path[512];
	struct wp_writer *w;
	uint64_t bytes;

	path_in_tmp(path, sizeof(path), "tmpname.data");
	is_int(wp_writer_open(path, false, 3, &w), 0, "temp name: writer opens");
	is_str(wp_writer_path(w), path, "temp name: wp_writer_path is the final path");
	wp_writer_write_meta(w, &meta);
	wp_writer_write_records(w, stream.buf, stream.len);
	wp_writer_write_summary(w, &summary);
	ok(!file_exists(path), "temp name: before commit the final path does not exist");
	is_int(tmpdir_entries(), 1, "temp name: one temporary file in the directory");
	bytes = wp_writer_bytes(w);
	is_int(wp_writer_commit(w), 0, "temp name: commit succeeds");
	ok(file_exists(path), "temp name: after commit the final path exists");
	is_int(tmpdir_entries(), 1, "temp name: and no temporary file remains");
	{
		struct stat st;

		ok(stat(path, &st) == 0 && (uint64_t)st.st_size == bytes,
		   "temp name: wp_writer_bytes (%llu) is the file size",
		   (unsigned long long)bytes);
	}
	tmpdir_clear();
}

/* (b) an existing file is kept unless force. */
static void test_existing_file(void)
{
	char path[512];
	struct wp_writer *w = (struct wp_writer *)&w;	/* not NULL */
	struct wp_meta other = meta;
	struct wp_reader *r;
	static const char old[] = "precious data\n";
	uint8_t *img;
	size_t len;

	path_in_tmp(path, sizeof(path), "exists.data");
	spew(path, old, sizeof(old));
	is_int(wp_writer_open(path, false, 0, &w), -EEXIST,
	       "existing: open without force fails with -EEXIST");
	ok(w == NULL, "existing: and gives no writer");
	is_int(tmpdir_entries(), 1, "existing: no temporary file is left behind");
	img = slurp(path, &len);
	ok(len == sizeof(old) && !memcmp(img, old, len), "existing: the file is untouched");
	free(img);

	strcpy(other.hostname, "replacement");
	is_int(write_file(path, true, 0, &other, &stream, &summary), 0,
	       "existing: with force the file is written");
	if (is_int(wp_reader_open(path, &r), 0, "existing: the replaced file opens")) {
		is_str(wp_reader_meta(r)->hostname, "replacement",
		       "existing: it is the new file");
		wp_reader_close(r);
	}
	is_int(tmpdir_entries(), 1, "existing: one file in the directory after force");
	tmpdir_clear();
}

/*
 * (b) a file created under the name while recording is not overwritten,
 * and the recording is kept under a visible name.
 */
static void test_file_appears_meanwhile(void)
{
	char path[512], kept_want[512], *where = NULL;
	struct wp_writer *w;
	struct wp_reader *r;
	static const char other[] = "someone else's file\n";
	uint8_t *img;
	size_t len;

	path_in_tmp(path, sizeof(path), "race.data");
	is_int(wp_writer_open(path, false, 0, &w), 0, "race: writer opens");
	wp_writer_write_meta(w, &meta);
	wp_writer_write_records(w, stream.buf, stream.len);
	wp_writer_write_summary(w, &summary);
	spew(path, other, sizeof(other));
	is_int(wp_writer_commit_where(w, &where), -EEXIST,
	       "race: commit without force fails with -EEXIST");
	img = slurp(path, &len);
	ok(len == sizeof(other) && !memcmp(img, other, len),
	   "race: the other file is untouched");
	free(img);
	is_int(tmpdir_entries(), 2, "race: and the recording is kept next to it");
	path_in_tmp(kept_want, sizeof(kept_want), "race.data.wallprof-");
	ok(where && !strncmp(where, kept_want, strlen(kept_want)) &&
	   strlen(where) == strlen(kept_want) + 6,
	   "race: under the temporary name without its dot (%s)", where ? where : "none");
	if (where && is_int(wp_reader_open(where, &r), 0, "race: the kept file opens")) {
		unsigned int nr_ok, nr_bad;

		is_int(read_records(r, &stream, &nr_ok, &nr_bad), 0, "race: it reads to its end");
		ok(nr_ok == NR_RECORDS && wp_reader_summary(r), "race: every record and the summary");
		wp_reader_close(r);
	}
	free(where);
	tmpdir_clear();
}

/* (b) only a regular file is ever replaced: nothing else, not even with force. */
static void test_target_not_regular(void)
{
	static const char *const kinds[] = { "FIFO", "directory", "symbolic link" };
	char path[512];

	for (unsigned int k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct wp_writer *w = (struct wp_writer *)&w;
		struct stat st;
		bool same;

		path_in_tmp(path, sizeof(path), "special");
		if ((k == 0 && mkfifo(path, 0600)) || (k == 1 && mkdir(path, 0700)) ||
		    (k == 2 && symlink("target", path)))
			fatal("cannot make a special file");
		is_int(wp_writer_open(path, false, 0, &w), -EINVAL,
		       "special: a %s is refused (-EINVAL)", kinds[k]);
		is_int(wp_writer_open(path, true, 0, &w), -EINVAL,
		       "special: a %s is refused even with force", kinds[k]);
		ok(w == NULL && tmpdir_entries() == 1, "special: %s: nothing is created", kinds[k]);
		same = !lstat(path, &st) && (k == 0 ? S_ISFIFO(st.st_mode) :
					     k == 1 ? S_ISDIR(st.st_mode) : S_ISLNK(st.st_mode));
		ok(same, "special: the %s is still there", kinds[k]);
		if (k == 1)
			rmdir(path);
		tmpdir_clear();
	}
}

/*
 * (b) a write that fails (here past a file size limit) leaves the file
 * whole up to its last complete block, and the summary still goes in,
 * after dropping blocks when it does not fit.  The limit applies to every
 * file of the process, so nothing is reported until it is lifted.
 */
static void test_write_error(unsigned int room, unsigned int want_records, const char *label)
{
	char path[512], *where = NULL;
	struct block_pos b[16];
	struct rlimit old, lim;
	struct wp_writer *w;
	struct wp_reader *r;
	int err[NR_BLOCKS], werr, serr, cerr, lerr;
	unsigned int nr_ok = 0, nr_bad = 0, first = 0;
	uint64_t bytes;
	uint8_t *img;
	size_t len;

	/* Where the blocks of a complete file begin. */
	path_in_tmp(path, sizeof(path), "limit.data");
	write_file(path, false, 0, &meta, &stream, &summary);
	img = slurp(path, &len);
	find_blocks(img, len, b, 16);
	free(img);
	tmpdir_clear();

	/* Block 4 (records 7..29) does not fit, nor anything after it. */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = b[4].offset + room;
	if (wp_writer_open(path, false, 0, &w))
		fatal("cannot open a writer");
	lerr = setrlimit(RLIMIT_FSIZE, &lim);
	wp_writer_write_meta(w, &meta);
	for (unsigned int k = 0; k < NR_BLOCKS; k++) {
		err[k] = wp_writer_write_records(w, stream.buf + stream.off[first],
						 stream.off[block_end[k]] - stream.off[first]);
		first = block_end[k];
	}
	werr = wp_writer_error(w);
	serr = wp_writer_write_summary(w, &summary);
	bytes = wp_writer_bytes(w);
	setrlimit(RLIMIT_FSIZE, &old);
	cerr = wp_writer_commit_where(w, &where);

	if (!is_int(lerr, 0, "%s: the limit is set", label))
		return;
	ok(!err[0] && !err[1] && !err[2] && !err[3], "%s: blocks 0 to 3 are written", label);
	ok(err[4] == -EFBIG && err[5] == -EFBIG, "%s: blocks 4 and 5 fail with -EFBIG", label);
	is_int(werr, -EFBIG, "%s: wp_writer_error gives the first error", label);
	is_int(serr, 0, "%s: the summary is written", label);
	is_int(cerr, 0, "%s: the file is committed", label);
	if (!is_int(wp_reader_open(path, &r), 0, "%s: it opens", label))
		goto out;
	is_int(read_records(r, &stream, &nr_ok, &nr_bad), 0,
	       "%s: it reads to its end without an error", label);
	ok(nr_ok == want_records && !nr_bad, "%s: %u records in order (want %u)", label,
	   nr_ok, want_records);
	ok(wp_reader_summary(r) != NULL, "%s: then the summary", label);
	wp_reader_close(r);
	img = slurp(path, &len);
	ok(len == bytes, "%s: wp_writer_bytes (%llu) is the file size (%zu)", label,
	   (unsigned long long)bytes, len);
	free(img);
out:
	free(where);
	tmpdir_clear();
}

/* A killed recorder's temporary file, and one a writer still writes. */
static void test_find_unfinished(void)
{
	char path[512], left[512], *found = NULL;
	struct wp_writer *w, *w2;
	bool running = true;

	path_in_tmp(path, sizeof(path), "x.data");
	is_int(wp_writer_find_unfinished(path, &found, &running), -ENOENT,
	       "unfinished: none in an empty directory");
	path_in_tmp(left, sizeof(left), ".x.data.wallprof-Ab12Cd");
	spew(left, "x", 1);
	is_int(wp_writer_find_unfinished(path, &found, &running), 0, "unfinished: found");
	ok(found && !strcmp(found, left) && !running, "unfinished: it is %s, not running",
	   found ? found : "none");
	free(found);
	found = NULL;
	unlink(left);

	if (!is_int(wp_writer_open(path, false, 0, &w), 0, "unfinished: a writer opens"))
		return;
	is_int(wp_writer_find_unfinished(path, &found, &running), 0,
	       "unfinished: its temporary file is found");
	ok(running, "unfinished: as one a running wallprof writes");
	free(found);
	is_int(wp_writer_open(path, false, 0, &w2), -EBUSY,
	       "unfinished: a second writer to the same path is refused (-EBUSY)");
	is_int(wp_writer_open(path, true, 0, &w2), 0, "unfinished: unless forced");
	wp_writer_abort(w2);
	wp_writer_abort(w);
	is_int(tmpdir_entries(), 0, "unfinished: nothing left");
}

/* (c) abort leaves nothing. */
static void test_abort(void)
{
	char path[512];
	struct wp_writer *w;

	path_in_tmp(path, sizeof(path), "aborted.data");
	is_int(wp_writer_open(path, false, 3, &w), 0, "abort: writer opens");
	wp_writer_write_meta(w, &meta);
	wp_writer_write_records(w, stream.buf, stream.len);
	wp_writer_abort(w);
	is_int(tmpdir_entries(), 0, "abort: after meta and records, no file at all remains");
	is_int(wp_writer_open(path, false, 0, &w), 0, "abort: right after open");
	wp_writer_abort(w);
	is_int(tmpdir_entries(), 0, "abort: still no file");
	wp_writer_abort(NULL);		/* (a crash would end the test) */
	is_int(tmpdir_entries(), 0, "abort: of NULL, touches nothing");
}

/* Read img cut to len bytes; check the outcome is kind after nr_ok records. */
static void check_cut(const uint8_t *img, size_t len, const char *path, char kind,
		      unsigned int nr_ok, const char *label, const char *what)
{
	struct outcome o = read_image(img, len, path);

	if (!ok(o.kind == kind && o.nr_ok == nr_ok, "%s: %s (at %zu): %s", label, what, len,
		kind == 'o' ? "open fails with -EBADMSG" :
		kind == 'e' ? "good records, then -EBADMSG" :
		kind == 'z' ? "good records, then 0 and no summary" :
			      "every record and the summary"))
		diag_outcome(label, "cut at", len, o);
}

/* (d) truncated copies of a file, at the interesting places and everywhere. */
static void check_truncations(int level, const char *label)
{
	char path[512], cut_path[512];
	struct block_pos b[16];
	uint8_t *img;
	size_t len, meta_end;
	unsigned int n, bad = 0, tried = 0;

	path_in_tmp(path, sizeof(path), "whole.data");
	path_in_tmp(cut_path, sizeof(cut_path), "cut.data");
	write_file(path, false, level, &meta, &stream, &summary);
	img = slurp(path, &len);
	n = find_blocks(img, len, b, 16);
	if (n != NR_BLOCKS + 1)
		fatal("unexpected block layout");
	meta_end = b[0].offset;

	check_cut(img, 0, cut_path, 'o', 0, label, "empty file");
	check_cut(img, 12, cut_path, 'o', 0, label, "cut inside the file header");
	check_cut(img, FILE_HEADER_SIZE, cut_path, 'o', 0, label, "cut after the file header");
	check_cut(img, meta_end / 2, cut_path, 'o', 0, label, "cut inside the meta");
	check_cut(img, meta_end - 8, cut_path, 'o', 0, label, "cut in the last meta word");
	check_cut(img, meta_end, cut_path, 'z', 0, label, "cut right after the meta");
	check_cut(img, b[2].offset + 10, cut_path, 'e', records_before_block(2), label,
		  "cut inside block 2's header");
	check_cut(img, b[2].offset + BLOCK_HEADER_SIZE + 100, cut_path, 'e',
		  records_before_block(2), label,
		  "cut inside block 2's payload (the 65528-byte record)");
	check_cut(img, b[4].offset + BLOCK_HEADER_SIZE + (size_t)b[4].size - 1, cut_path, 'e',
		  records_before_block(4), label, "cut before block 4's last payload byte");
	check_cut(img, b[3].offset, cut_path, 'z', records_before_block(3), label,
		  "cut between two record blocks");
	check_cut(img, b[NR_BLOCKS].offset, cut_path, 'z', NR_RECORDS, label,
		  "cut exactly before the summary block");
	check_cut(img, len - 8, cut_path, 'e', NR_RECORDS, label, "cut inside the summary");
	check_cut(img, len, cut_path, 'S', NR_RECORDS, label, "the whole file");

	/*
	 * Every cut (every 61st byte when the file is large, fewer under the
	 * sanitizers: SWEEP_STRIDE): no crash, no
	 * wrong record; an open error inside the header and meta, 0 exactly at
	 * a block boundary, else -EBADMSG.
	 */
	for (size_t cut = 0; cut < len; cut += (level ? 1 : 61) * SWEEP_STRIDE) {
		bool at_block_start = false;
		struct outcome o;
		char want;

		for (unsigned int k = 0; k < n; k++)
			at_block_start |= cut == b[k].offset;
		want = cut < meta_end ? 'o' : at_block_start ? 'z' : 'e';
		o = read_image(img, cut, cut_path);
		tried++;
		if (o.kind != want && bad++ < 5)
			diag_outcome(label, "cut at", cut, o);
	}
	is_int(bad, 0, "%s: all %u cuts tried behave", label, tried);
	free(img);
	tmpdir_clear();
}

static void test_truncated_files(void)
{
	check_truncations(0, "truncated level 0");
	check_truncations(3, "truncated zstd 3");
}

/* (e) (g) files that are not wallprof files, or are from the future. */
static void test_bad_headers(void)
{
	char path[512], good[512];
	struct wp_reader *r = (struct wp_reader *)&r;
	uint8_t junk[4096], *img;
	size_t len;
	uint32_t u32;

	path_in_tmp(path, sizeof(path), "bad.data");
	path_in_tmp(good, sizeof(good), "good.data");

	is_int(wp_reader_open(path, &r), -ENOENT, "bad: a missing file gives -ENOENT");
	ok(r == NULL, "bad: and no reader");

	spew(path, "", 0);
	is_int(wp_reader_open(path, &r), -EBADMSG, "bad: an empty file gives -EBADMSG");

	srand(12345);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rand();
	spew(path, junk, sizeof(junk));
	is_int(wp_reader_open(path, &r), -EBADMSG, "bad: random bytes give -EBADMSG");

	write_file(good, false, 0, &meta, &stream, &summary);
	img = slurp(good, &len);

	u32 = WP_FILE_VERSION + 1;
	memcpy(img + 8, &u32, 4);
	spew(path, img, len);
	is_int(wp_reader_open(path, &r), -EPROTO, "bad: a newer version gives -EPROTO");
	u32 = 0;
	memcpy(img + 8, &u32, 4);
	spew(path, img, len);
	is_int(wp_reader_open(path, &r), -EPROTO, "bad: version 0 gives -EPROTO");
	u32 = WP_FILE_VERSION;
	memcpy(img + 8, &u32, 4);

	u32 = __builtin_bswap32(WP_FILE_BYTE_ORDER);
	memcpy(img + 12, &u32, 4);
	spew(path, img, len);
	is_int(wp_reader_open(path, &r), -EBADMSG,
	       "bad: the other byte order gives -EBADMSG");
	u32 = WP_FILE_BYTE_ORDER;
	memcpy(img + 12, &u32, 4);

	img[0] = 'w';
	spew(path, img, len);
	is_int(wp_reader_open(path, &r), -EBADMSG, "bad: a wrong magic gives -EBADMSG");
	img[0] = 'W';

	{
		uint64_t huge = (uint64_t)len, orig;

		memcpy(&orig, img + 16, 8);
		memcpy(img + 16, &huge, 8);
		spew(path, img, len);
		is_int(wp_reader_open(path, &r), -EBADMSG,
		       "bad: a meta size past the end gives -EBADMSG");
		huge = orig - 8;	/* the last TLV runs past the meta */
		memcpy(img + 16, &huge, 8);
		spew(path, img, len);
		is_int(wp_reader_open(path, &r), -EBADMSG,
		       "bad: a meta size cutting a field gives -EBADMSG");
		memcpy(img + 16, &orig, 8);
	}
	{
		/* The first TLV (the clock) claims more bytes than the meta has. */
		uint32_t big = 0x7ffffff0;

		memcpy(img + FILE_HEADER_SIZE + 4, &big, 4);
		spew(path, img, len);
		is_int(wp_reader_open(path, &r), -EBADMSG,
		       "bad: a meta field longer than the meta gives -EBADMSG");
	}
	free(img);

	is_int(wp_reader_open(tmpdir, &r), -EINVAL, "bad: a directory gives -EINVAL");
	tmpdir_clear();
}

/*
 * (f) flipped bytes inside a zstd block.  The reader must notice: a frame
 * that decodes to other bytes of the right length is still corrupt, so
 * this needs the frame checksum.
 */
static void test_flipped_zstd_byte(void)
{
	char path[512], bad_path[512];
	struct block_pos b[16];
	struct outcome o;
	uint8_t *img;
	size_t len, payload, mid;
	unsigned int n, errors = 0, wrong = 0, harmless = 0, k = 4;

	path_in_tmp(path, sizeof(path), "zstd.data");
	path_in_tmp(bad_path, sizeof(bad_path), "flipped.data");
	write_file(path, false, 3, &meta, &stream, &summary);
	img = slurp(path, &len);
	n = find_blocks(img, len, b, 16);
	if (n != NR_BLOCKS + 1 || !(b[k].flags & BLOCK_ZSTD))
		fatal("block 4 is not compressed");
	payload = b[k].offset + BLOCK_HEADER_SIZE;

	/* One byte in the middle of the frame. */
	mid = payload + (size_t)b[k].size / 2;
	img[mid] ^= 0x5a;
	o = read_image(img, len, bad_path);
	img[mid] ^= 0x5a;
	if (!ok(o.kind == 'e' && o.nr_ok == records_before_block(k),
		"flipped: a byte in the middle of zstd block %u: the %u records before it, "
		"then -EBADMSG", k, records_before_block(k)))
		diag_outcome("flipped", "byte at", mid, o);

	/* Every byte of the frame, one at a time (SWEEP_STRIDE). */
	for (size_t i = payload; i < payload + b[k].size; i += SWEEP_STRIDE) {
		img[i] ^= 0x5a;
		o = read_image(img, len, bad_path);
		img[i] ^= 0x5a;
		if (o.kind == 'e' && o.nr_ok == records_before_block(k)) {
			errors++;
		} else if (o.kind == 'S' && o.nr_ok == NR_RECORDS) {
			harmless++;	/* decoded to the same bytes */
		} else if (wrong++ < 3) {
			diag_outcome("flipped", "byte at", i, o);
		}
	}
	diag("flipped: %zu flips: %u errors, %u harmless, %u wrong records or outcome",
	     ((size_t)b[k].size + SWEEP_STRIDE - 1) / SWEEP_STRIDE, errors, harmless, wrong);
	is_int(wrong, 0, "flipped: no flip in the frame yields wrong records or a clean end");
	free(img);
	tmpdir_clear();
}

/* Patch a field of block k's header in a copy of a file and read it. */
static struct outcome read_patched_block(const char *good, size_t field, const void *v,
					 size_t vlen, unsigned int k)
{
	char path[512];
	struct block_pos b[16];
	struct outcome o;
	uint8_t *img;
	size_t len;

	path_in_tmp(path, sizeof(path), "patched.data");
	img = slurp(good, &len);
	if (find_blocks(img, len, b, 16) <= k)
		fatal("no such block");
	memcpy(img + b[k].offset + field, v, vlen);
	o = read_image(img, len, path);
	free(img);
	return o;
}

/* Block headers that are wrong, or from a newer writer. */
static void test_bad_block_headers(void)
{
	char good[512];
	struct wp_reader *r;
	struct outcome o;
	uint32_t u32;
	uint64_t u64;
	unsigned int nr_ok, nr_bad, block1 = block_end[1] - block_end[0];

	path_in_tmp(good, sizeof(good), "good.data");
	write_file(good, false, 0, &meta, &stream, &summary);

	/* An unknown block type is skipped with its records; the rest reads. */
	u32 = 77;
	read_patched_block(good, 0, &u32, 4, 1);
	{
		char path[512];

		path_in_tmp(path, sizeof(path), "patched.data");
		if (wp_reader_open(path, &r) == 0) {
			const struct perf_event_header *rec;
			unsigned int i = 0, match = 0;
			int ret;

			/* records of block 0, then those after block 1 */
			while ((ret = wp_reader_next(r, &rec)) > 0) {
				unsigned int want = i < block_end[0] ? i : i + block1;

				match += want < NR_RECORDS && rec->size == record_size(want) &&
					 !memcmp(rec, stream.buf + stream.off[want], rec->size);
				i++;
			}
			ok(ret == 0 && i == NR_RECORDS - block1 && match == i &&
			   wp_reader_summary(r) != NULL,
			   "block type 77 (unknown): skipped; the other %u records and the "
			   "summary are read", i);
			wp_reader_close(r);
		} else {
			ok(0, "block type 77: the file opens");
		}
	}

	u32 = 2;
	o = read_patched_block(good, 4, &u32, 4, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0],
	   "block flags 2 (unknown): -EBADMSG after the records before it");
	u64 = (uint64_t)WP_BLOCK_MAX_SIZE + 8;
	o = read_patched_block(good, 8, &u64, 8, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0], "block size > 256 MiB: -EBADMSG");
	u64 = (uint64_t)1 << 40;
	o = read_patched_block(good, 16, &u64, 8, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0], "block raw_size 2^40: -EBADMSG");
	/* 8 and 0 when cut to 32 bits: sizes are checked before any narrowing. */
	u64 = 0x100000008ULL;
	o = read_patched_block(good, 8, &u64, 8, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0], "block size 2^32 + 8: -EBADMSG");
	u64 = 0x100000000ULL;
	o = read_patched_block(good, 16, &u64, 8, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0], "block raw_size 2^32: -EBADMSG");
	u64 = 1 << 20;
	o = read_patched_block(good, 8, &u64, 8, 1);
	ok(o.kind == 'e' && o.nr_ok == block_end[0],
	   "block size past the end of the file: -EBADMSG");

	/* The file is good again: check the helper left it alone. */
	ok(wp_reader_open(good, &r) == 0 &&
	   read_records(r, &stream, &nr_ok, &nr_bad) == 0 && nr_ok == NR_RECORDS,
	   "the unpatched file still reads whole");
	wp_reader_close(r);
	tmpdir_clear();
}

/* Records inside a block that do not fit it: the writer stores blocks as given. */
static void check_bad_record_in_block(uint16_t bad_size, size_t block_len, int level,
				      const char *what)
{
	char path[512];
	uint64_t buf[8] = { 0 };
	struct perf_event_header good = { .type = PERF_RECORD_SAMPLE, .size = 16 };
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = bad_size };
	const struct perf_event_header *rec;
	struct wp_writer *w;
	struct wp_reader *r;

	path_in_tmp(path, sizeof(path), "badrec.data");
	memcpy(&buf[0], &good, 8);
	memcpy(&buf[2], &bad, 8);
	if (wp_writer_open(path, false, level, &w) || wp_writer_write_meta(w, &meta) ||
	    wp_writer_write_records(w, buf, block_len) || wp_writer_commit(w))
		fatal("cannot write a file with a bad record");
	if (!is_int(wp_reader_open(path, &r), 0, "%s: the file opens", what))
		return;
	ok(wp_reader_next(r, &rec) == 1 && rec->size == 16,
	   "%s: the good record before it is read", what);
	is_int(wp_reader_next(r, &rec), -EBADMSG, "%s: then -EBADMSG", what);
	wp_reader_close(r);
	unlink(path);
}

static void test_bad_records_in_block(void)
{
	check_bad_record_in_block(0, 64, 0, "record size 0 in a block");
	check_bad_record_in_block(12, 64, 0, "record size 12 in a block");
	check_bad_record_in_block(56, 64, 0, "record running past its block");
	check_bad_record_in_block(56, 64, 3, "record running past its zstd block");
	check_bad_record_in_block(8, 20, 0, "block ending in half a header");
}

/* The writer's errors leave nothing behind. */
static void test_writer_open_errors(void)
{
	char path[512];
	struct wp_writer *w = (struct wp_writer *)&w;

	path_in_tmp(path, sizeof(path), "no-such-dir/out.data");
	is_int(wp_writer_open(path, false, 0, &w), -ENOENT,
	       "writer: a missing directory gives -ENOENT");
	ok(w == NULL && tmpdir_entries() == 0, "writer: and leaves nothing");
}

/* After an error, the reader keeps failing and logs once. */
static void test_error_is_sticky(void)
{
	char path[512];
	struct block_pos b[16];
	struct wp_reader *r;
	const struct perf_event_header *rec;
	uint8_t *img;
	size_t len;
	unsigned int lines, nr_ok, nr_bad;
	uint64_t raw;

	path_in_tmp(path, sizeof(path), "sticky.data");
	write_file(path, false, 0, &meta, &stream, &summary);
	img = slurp(path, &len);
	find_blocks(img, len, b, 16);
	raw = b[1].raw_size + 8;	/* raw block with inconsistent sizes */
	memcpy(img + b[1].offset + 16, &raw, 8);
	spew(path, img, len);
	free(img);

	if (!is_int(wp_reader_open(path, &r), 0, "sticky: the file opens"))
		return;
	lines = log_lines;
	is_int(read_records(r, &stream, &nr_ok, &nr_bad), -EBADMSG,
	       "sticky: a raw block whose sizes differ gives -EBADMSG");
	ok(nr_ok == records_before_block(1) && nr_bad == 0,
	   "sticky: after the %u good records of block 0", nr_ok);
	is_int(wp_reader_next(r, &rec), -EBADMSG, "sticky: the next call fails too");
	is_int(log_lines - lines, 1, "sticky: one error line logged");
	ok(wp_reader_block_offset(r) == b[1].offset,
	   "sticky: wp_reader_block_offset points at the bad block");
	wp_reader_close(r);
	tmpdir_clear();
}

/*
 * WP_RECORD_CMDLINE: written into a RECORDS block and read back whole,
 * hostile bytes and all; one too long is cut and flagged; a corrupt one
 * is refused by its decoder (the report then ignores it).
 */
static void test_cmdline_records(int level)
{
	static const char hostile[] = "sh\0-c\0echo \033[2J\n\xff'$x'\0";
	struct wp_cmdline c = { .pid = 4242, .source = WP_CMDLINE_EXEC, .time = 5000,
				.exec_time = 4000, .len = sizeof(hostile) - 1, .args = hostile };
	const struct perf_event_header *rec;
	struct wp_buf b = { 0 };
	struct wp_cmdline got[2];
	struct wp_writer *w;
	struct wp_reader *r;
	unsigned int n = 0, bad = 0;
	char path[512], *big = xmalloc(WP_CMDLINE_MAX + 100);
	int ret;

	memset(big, 'a', WP_CMDLINE_MAX + 100);
	path_in_tmp(path, sizeof(path), "cmdline.data");
	ok(!wp_cmdline_append(&b, &c), "cmdline %d: a hostile command line encoded", level);
	c = (struct wp_cmdline){ .pid = 7, .source = WP_CMDLINE_LAUNCH, .time = 6000,
				 .len = WP_CMDLINE_MAX + 100, .args = big };
	ok(!wp_cmdline_append(&b, &c), "cmdline %d: one too long encoded", level);
	ok(wp_writer_open(path, false, level, &w) == 0 && wp_writer_write_meta(w, &meta) == 0 &&
	   wp_writer_write_records(w, b.data, b.len) == 0 && wp_writer_commit(w) == 0,
	   "cmdline %d: written in a RECORDS block", level);
	if (!is_int(wp_reader_open(path, &r), 0, "cmdline %d: the file opens", level))
		goto out;
	while ((ret = wp_reader_next(r, &rec)) > 0) {
		if (n < 2 && !wp_cmdline_parse(rec, &got[n]))
			n++;
		else
			bad++;
	}
	ok(ret == 0 && n == 2 && !bad, "cmdline %d: two CMDLINE records read back", level);
	if (n == 2) {
		ok(got[0].pid == 4242 && got[0].source == WP_CMDLINE_EXEC && got[0].time == 5000 &&
		   got[0].exec_time == 4000 && got[0].flags == 0 &&
		   got[0].len == sizeof(hostile) - 1 && !memcmp(got[0].args, hostile, got[0].len),
		   "cmdline %d: the hostile one, byte for byte", level);
		ok(got[1].pid == 7 && got[1].source == WP_CMDLINE_LAUNCH &&
		   (got[1].flags & WP_CMDLINE_TRUNCATED) && got[1].len == WP_CMDLINE_MAX + 1 &&
		   !got[1].args[WP_CMDLINE_MAX] && got[1].args[WP_CMDLINE_MAX - 1] == 'a',
		   "cmdline %d: the long one cut at %d bytes, NUL-ended, flagged", level,
		   WP_CMDLINE_MAX);
	}
	wp_reader_close(r);
out:
	unlink(path);
	wp_buf_release(&b);
	free(big);
}

/* Corrupt CMDLINE records, in synthetic bytes: each one refused. */
static void test_cmdline_corrupt(void)
{
	uint64_t buf[64] = { 0 };
	struct wp_record_cmdline *r = (void *)buf;
	struct wp_cmdline c;

	r->header.type = WP_RECORD_CMDLINE;
	r->header.size = sizeof(*r) + 8;
	r->len = 3;
	memcpy(r->args, "ab", 3);
	is_int(wp_cmdline_parse(&r->header, &c), 0, "cmdline corrupt: the sound one parses");
	ok(c.len == 3 && !strcmp(c.args, "ab"), "cmdline corrupt: and reads \"ab\"");
	r->len = 9;
	is_int(wp_cmdline_parse(&r->header, &c), -EBADMSG,
	       "cmdline corrupt: arguments past the record's end");
	r->len = UINT32_MAX;
	is_int(wp_cmdline_parse(&r->header, &c), -EBADMSG,
	       "cmdline corrupt: a length of 2^32 - 1");
	r->len = 2;
	is_int(wp_cmdline_parse(&r->header, &c), -EBADMSG,
	       "cmdline corrupt: the last argument without its NUL");
	r->len = 0;
	is_int(wp_cmdline_parse(&r->header, &c), 0, "cmdline corrupt: none at all is fine");
	r->header.size = sizeof(*r) - 8;
	is_int(wp_cmdline_parse(&r->header, &c), -EBADMSG,
	       "cmdline corrupt: a record shorter than its fixed part");
	r->header.size = sizeof(*r) + 8;
	r->header.type = WP_RECORD_THREAD;
	is_int(wp_cmdline_parse(&r->header, &c), -EBADMSG, "cmdline corrupt: another type");
}

/*
 * A file with a stack table is version 2 and reads back with its flag and
 * records; one without stays version 1, which older readers take.
 */
static void test_stack_table_version(void)
{
	struct wp_stack_sample ss = { .time = 77, .id = 11, .pid = 1, .tid = 2, .stack = 0 };
	const struct perf_event_header *rec;
	struct wp_meta m = meta;
	struct wp_buf b = { 0 };
	struct wp_reader *r;
	struct wp_writer *w;
	char path[512];
	uint32_t version = 0;
	uint8_t *img;
	size_t len;
	int ret, n = 0;

	path_in_tmp(path, sizeof(path), "table.data");
	m.flags |= WP_META_STACK_TABLE;
	ok(!wp_stack_sample_append(&b, &ss), "table: a STACK_SAMPLE encoded");
	ok(wp_writer_open(path, false, 3, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_write_records(w, b.data, b.len) == 0 && wp_writer_commit(w) == 0,
	   "table: written");
	img = slurp(path, &len);
	if (len >= 12)
		memcpy(&version, img + 8, 4);
	is_int(version, 2, "table: the file is version 2");
	free(img);
	if (is_int(wp_reader_open(path, &r), 0, "table: version 2 opens")) {
		ok(wp_reader_meta(r)->flags & WP_META_STACK_TABLE, "table: its flag reads back");
		while ((ret = wp_reader_next(r, &rec)) > 0)
			n += rec->type == WP_RECORD_STACK_SAMPLE;
		ok(ret == 0 && n == 1, "table: the STACK_SAMPLE reads back");
		wp_reader_close(r);
	}
	unlink(path);
	m.flags &= ~WP_META_STACK_TABLE;
	ok(wp_writer_open(path, false, 0, &w) == 0 && wp_writer_write_meta(w, &m) == 0 &&
	   wp_writer_commit(w) == 0, "table: a file without one written");
	img = slurp(path, &len);
	version = 0;
	if (len >= 12)
		memcpy(&version, img + 8, 4);
	is_int(version, 1, "table: without a stack table, version 1");
	free(img);
	unlink(path);
	wp_buf_release(&b);
}

int main(void)
{
	int status;

	wp_log_set_sink(quiet_sink);
	strcpy(tmpdir, "/tmp/wallprof-test-datafile-XXXXXX");
	if (!mkdtemp(tmpdir))
		fatal("mkdtemp failed");
	meta_fill(&meta, events);
	summary_fill(&summary);
	stream_build(&stream);

	test_round_trips();
	test_minimal_meta();
	test_stack_table_version();
	test_precompressed_records();
	test_reader_ahead(0);
	test_reader_ahead(1);
	test_ksyms_block(0);
	test_ksyms_block(3);
	test_ksyms_changed_after_open();
	test_jitmap_block(0);
	test_jitmap_block(3);
	test_jitmap_damaged();
	test_names_block(0);
	test_names_block(3);
	test_names_damaged();
	test_perf_map_text();
	test_huge_meta_lengths();
	test_temporary_name();
	test_existing_file();
	test_file_appears_meanwhile();
	test_target_not_regular();
	/*
	 * The summary takes 152 bytes and block 3 32: with 100 bytes of room
	 * after block 3, dropping it is not enough, block 2 goes too.
	 */
	test_write_error(200, block_end[3], "write error, room for the summary");
	test_write_error(100, block_end[1], "write error, no room for the summary");
	test_find_unfinished();
	test_abort();
	test_truncated_files();
	test_bad_headers();
	test_bad_block_headers();
	test_bad_records_in_block();
	test_writer_open_errors();
	test_flipped_zstd_byte();
	test_error_is_sticky();
	test_cmdline_records(0);
	test_cmdline_records(3);
	test_cmdline_corrupt();

	status = done_testing();
	tmpdir_clear();
	rmdir(tmpdir);
	free(stream.buf);
	return status;
}
