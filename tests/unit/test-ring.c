/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring.c: the perf mmap ring reader (src/ring.c) on a fake ring in
 * memory.  The test plays the kernel: it writes records at
 * (head & (size - 1)), wrapping byte by byte around the end of the data
 * area, then publishes meta->data_head; it never overwrites bytes the
 * reader has not released through meta->data_tail.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "tap.h"

#define RING_SIZE 4096U
#define BIG_RING_SIZE 131072U
#define MAX_RECORD 65528U	/* largest multiple of 8 in a u16 */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The kernel side and the reader of one fake ring. */
struct fake_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;
	uint64_t whead;		/* kernel write position, published or not */
	struct wp_ring r;
};

static void fatal(const char *what)
{
	fprintf(stderr, "test-ring: %s\n", what);
	printf("Bail out! %s\n", what);
	exit(1);
}

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p)
		fatal("out of memory");
	return p;
}

/*
 * Set up a ring of size bytes whose counters start at start.  The kernel's
 * positions are always multiples of 8 (record sizes are), so a header is
 * never split by the end of the data area; start keeps that invariant.
 */
static void fake_init(struct fake_ring *f, uint64_t size, uint64_t start)
{
	if (start & 7)
		fatal("test bug: ring positions must be multiples of 8");
	memset(f, 0, sizeof(*f));
	f->meta = xcalloc(sizeof(*f->meta));
	f->data = xcalloc(size);	/* malloc alignment: records 8-aligned */
	f->size = size;
	f->meta->data_offset = 4096;	/* as the kernel says; unused here */
	f->meta->data_size = size;
	f->meta->data_head = start;
	f->meta->data_tail = start;
	f->whead = start;
	if (wp_ring_init_mem(&f->r, f->meta, f->data, size))
		fatal("wp_ring_init_mem failed");
}

static void fake_free(struct fake_ring *f)
{
	wp_ring_release(&f->r);
	free(f->meta);
	free(f->data);
}

/* Kernel: copy a record into the ring, byte by byte, without publishing. */
static void kernel_write(struct fake_ring *f, const void *rec, size_t len)
{
	const uint8_t *p = rec;

	if (f->whead + len - f->meta->data_tail > f->size)
		fatal("test bug: kernel_write would overwrite unread data");
	for (size_t i = 0; i < len; i++)
		f->data[(f->whead + i) & (f->size - 1)] = p[i];
	f->whead += len;
}

/* Kernel: make everything written so far visible. */
static void kernel_publish(struct fake_ring *f)
{
	__atomic_store_n(&f->meta->data_head, f->whead, __ATOMIC_RELEASE);
}

/* Kernel: publish only up to pos (a record still being written). */
static void kernel_publish_upto(struct fake_ring *f, uint64_t pos)
{
	__atomic_store_n(&f->meta->data_head, pos, __ATOMIC_RELEASE);
}

/* Bytes of the body of a synthetic record, a function of (seed, index). */
static uint8_t pattern_byte(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761U + (uint32_t)i * 40503U;

	return (uint8_t)(x >> 13 ^ x >> 5 ^ i);
}

/* Fill buf with a record of size bytes (multiple of 8, >= 8). */
static void make_record(void *buf, uint32_t type, uint16_t size, uint32_t seed)
{
	struct perf_event_header h = {
		.type = type,
		.misc = (uint16_t)seed,
		.size = size,
	};
	uint8_t *p = buf;

	memcpy(p, &h, sizeof(h));
	for (size_t i = sizeof(h); i < size; i++)
		p[i] = pattern_byte(seed, i);
}

/* Write a synthetic record into the ring; returns its size. */
static uint16_t kernel_write_record(struct fake_ring *f, uint32_t type,
				    uint16_t size, uint32_t seed)
{
	uint8_t *buf = xcalloc(size);

	make_record(buf, type, size, seed);
	kernel_write(f, buf, size);
	free(buf);
	return size;
}

/* Is rec exactly the record make_record(type, size, seed) builds? */
static bool record_matches(const struct perf_event_header *rec, uint32_t type,
			   uint16_t size, uint32_t seed)
{
	uint8_t *want;
	bool same;

	if (!rec || rec->size != size)
		return false;
	want = xcalloc(size);
	make_record(want, type, size, seed);
	same = memcmp(rec, want, size) == 0;
	free(want);
	return same;
}

/* A varied record size: 8 .. 8 * 128 bytes, multiple of 8. */
static uint16_t varied_size(uint32_t i)
{
	return (uint16_t)(8 * (1 + (i * 37 + i / 3) % 128));
}

/* (a) records come back in order with their bytes intact. */
static void test_records_in_order(void)
{
	static const uint16_t sizes[] = { 8, 16, 24, 64, 200, 512, 8 };
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	uint64_t total = 0;
	bool all_match = true;
	int n, got = 0;

	fake_init(&f, RING_SIZE, 0);
	for (uint32_t i = 0; i < ARRAY_LEN(sizes); i++)
		total += kernel_write_record(&f, PERF_RECORD_SAMPLE + i, sizes[i], 100 + i);
	kernel_publish(&f);

	is_u64(wp_ring_begin(&f.r), total, "in order: begin reports all %zu bytes",
	       (size_t)total);
	while ((n = wp_ring_read_next(&f.r, &rec)) > 0) {
		if (got >= (int)ARRAY_LEN(sizes) ||
		    !record_matches(rec, PERF_RECORD_SAMPLE + (uint32_t)got,
				    sizes[got], 100 + (uint32_t)got))
			all_match = false;
		got++;
	}
	is_int(got, (int)ARRAY_LEN(sizes), "in order: every record returned");
	ok(all_match, "in order: types, sizes and bytes match, in write order");
	is_int(n, 0, "in order: read_next returns 0 when the ring is drained");
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, total, "in order: data_tail released to head");
	fake_free(&f);
}

/*
 * (b) many records of varied sizes through a small ring: the counters run
 * far past the data size, records wrap around its end and must come back
 * contiguous and intact.
 */
static void run_wrap_stress(uint64_t start, const char *label)
{
	struct fake_ring f;
	const struct perf_event_header *rec;
	uint32_t written = 0, read = 0, wrapped = 0, bad = 0, exact_end = 0;
	bool protocol_ok = true;

	fake_init(&f, RING_SIZE, start);
	while (read < 1000) {
		/* Write a burst of 1..5 records, as long as they fit. */
		uint32_t burst = 1 + written % 5;

		for (uint32_t k = 0; k < burst && written < 1000; k++) {
			uint16_t size = varied_size(written);
			uint64_t off = f.whead & (f.size - 1);

			if (f.whead + size - f.meta->data_tail > f.size)
				break;
			if (off + size > f.size)
				wrapped++;
			else if (off + size == f.size)
				exact_end++;
			kernel_write_record(&f, (written % 3) ? PERF_RECORD_SAMPLE
							      : PERF_RECORD_MMAP2,
					    size, written);
			written++;
		}
		kernel_publish(&f);

		if (wp_ring_begin(&f.r) != f.whead - f.meta->data_tail)
			protocol_ok = false;
		while (wp_ring_read_next(&f.r, &rec) > 0) {
			uint32_t type = (read % 3) ? PERF_RECORD_SAMPLE : PERF_RECORD_MMAP2;

			if (!record_matches(rec, type, varied_size(read), read))
				bad++;
			read++;
		}
		wp_ring_end(&f.r);
		if (f.meta->data_tail != f.whead)
			protocol_ok = false;
		if (read != written)
			protocol_ok = false;
		if (!protocol_ok)
			break;
	}
	is_int(read, 1000, "%s: 1000 records read", label);
	is_int(bad, 0, "%s: every record intact byte by byte", label);
	ok(protocol_ok, "%s: begin/end track head and tail each round", label);
	ok(wrapped >= 20, "%s: %u records wrapped around the end of the data",
	   label, wrapped);
	ok(f.meta->data_tail - start > 100 * (uint64_t)RING_SIZE,
	   "%s: counters ran %llu bytes, far past the %u-byte data area", label,
	   (unsigned long long)(f.meta->data_tail - start), RING_SIZE);
	if (exact_end == 0)
		diag("%s: no record ended exactly at the end of the data area", label);
	fake_free(&f);
}

static void test_wrapping_records(void)
{
	run_wrap_stress(0, "wrap");
	/* u64 counters that overflow: head - tail arithmetic stays modular. */
	run_wrap_stress((uint64_t)0 - 20 * (uint64_t)RING_SIZE + 1000, "wrap near 2^64");
}

/* (b) one record ending exactly at the end and the next one at offset 0. */
static void test_record_ending_at_data_end(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;

	fake_init(&f, RING_SIZE, 3 * RING_SIZE - 64);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 64, 1);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 32, 2);
	kernel_publish(&f);
	wp_ring_begin(&f.r);
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 64, 1),
	   "data end: a record ending exactly at the end is intact");
	ok(rec == (const void *)(f.data + RING_SIZE - 64),
	   "data end: it is returned in place, without a copy");
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 32, 2),
	   "data end: the next record, at offset 0, is intact");
	ok(rec == (const void *)f.data, "data end: and returned in place");
	wp_ring_end(&f.r);
	fake_free(&f);
}

/* (b) the largest possible record wrapping in a large ring (scratch bound). */
static void test_largest_record_wraps(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	uint64_t start = BIG_RING_SIZE - 1000;	/* 1000 bytes before the end */

	fake_init(&f, BIG_RING_SIZE, start);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, MAX_RECORD, 7);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 16, 8);
	kernel_publish(&f);
	is_u64(wp_ring_begin(&f.r), MAX_RECORD + 16, "largest: begin counts both records");
	is_int(wp_ring_read_next(&f.r, &rec), 1, "largest: 65528-byte wrapped record returned");
	ok(record_matches(rec, PERF_RECORD_SAMPLE, MAX_RECORD, 7),
	   "largest: its 65528 bytes are contiguous and intact");
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 16, 8),
	   "largest: the record after it is intact");
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, start + MAX_RECORD + 16, "largest: all released");
	fake_free(&f);
}

/* (c) a record the kernel has only partly published is left for later. */
static void test_partial_record(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	uint64_t start = 2 * RING_SIZE - 48;	/* the record wraps */

	fake_init(&f, RING_SIZE, start);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 120, 42);

	kernel_publish_upto(&f, start + 4);
	is_u64(wp_ring_begin(&f.r), 4, "partial: begin reports 4 bytes (half a header)");
	is_int(wp_ring_read_next(&f.r, &rec), 0, "partial: half a header is not read");

	kernel_publish_upto(&f, start + 8);
	wp_ring_begin(&f.r);
	is_int(wp_ring_read_next(&f.r, &rec), 0, "partial: a bare header is not read");

	kernel_publish_upto(&f, start + 112);
	wp_ring_begin(&f.r);
	is_int(wp_ring_read_next(&f.r, &rec), 0,
	       "partial: a record missing its last 8 bytes is not read");
	is_int(wp_ring_read_next(&f.r, &rec), 0, "partial: asking again does not read it");

	kernel_publish(&f);
	is_u64(wp_ring_begin(&f.r), 120, "partial: once covered, begin reports it all");
	is_int(wp_ring_read_next(&f.r, &rec), 1, "partial: once covered, it is returned");
	ok(record_matches(rec, PERF_RECORD_SAMPLE, 120, 42), "partial: and it is intact");
	is_int(wp_ring_read_next(&f.r, &rec), 0, "partial: nothing after it");
	wp_ring_end(&f.r);
	fake_free(&f);
}

/* (d) wp_ring_end releases exactly what was consumed. */
static void test_end_releases_consumed_only(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	uint64_t start = 5 * RING_SIZE + 4000;
	uint64_t rec_b_end;

	fake_init(&f, RING_SIZE, start);
	kernel_write_record(&f, PERF_RECORD_COMM, 32, 1);	/* A */
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 80, 2);	/* B */
	rec_b_end = f.whead;
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 200, 3);	/* C, partly published */
	kernel_publish_upto(&f, rec_b_end + 64);

	wp_ring_begin(&f.r);
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, start, "end: nothing read, nothing released");

	wp_ring_begin(&f.r);
	wp_ring_read_next(&f.r, &rec);		/* A only */
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, start + 32, "end: one record read, only it is released");

	is_u64(wp_ring_begin(&f.r), 80 + 64, "end: begin counts B and C's published part");
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 80, 2),
	   "end: reading resumes at the next record");
	is_int(wp_ring_read_next(&f.r, &rec), 0, "end: partial C is not returned");
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, rec_b_end,
	       "end: data_tail stops before the partial record");

	kernel_publish(&f);
	wp_ring_begin(&f.r);
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 200, 3),
	   "end: the partial record is intact once complete");
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, f.whead, "end: data_tail reaches head");
	fake_free(&f);
}

/* (e) malformed headers are reported, and skip_all + end recovers. */
static void check_malformed(uint16_t bad_size, const char *what)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = bad_size };
	uint8_t junk[40];
	uint64_t start = 7 * RING_SIZE + 512;

	memset(junk, 0xa5, sizeof(junk));
	fake_init(&f, RING_SIZE, start);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 24, 1);
	kernel_write(&f, &bad, sizeof(bad));
	kernel_write(&f, junk, sizeof(junk));
	kernel_publish(&f);

	wp_ring_begin(&f.r);
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 24, 1),
	   "malformed %s: the record before it is read", what);
	is_int(wp_ring_read_next(&f.r, &rec), -EBADMSG, "malformed %s: -EBADMSG", what);
	is_int(wp_ring_read_next(&f.r, &rec), -EBADMSG,
	       "malformed %s: -EBADMSG again, the reader does not step past it", what);
	wp_ring_skip_all(&f.r);
	is_int(wp_ring_read_next(&f.r, &rec), 0, "malformed %s: nothing after skip_all", what);
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, f.whead, "malformed %s: skip_all + end release everything",
	       what);

	kernel_write_record(&f, PERF_RECORD_SAMPLE, 48, 2);
	kernel_publish(&f);
	is_u64(wp_ring_begin(&f.r), 48, "malformed %s: the ring is usable again", what);
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, PERF_RECORD_SAMPLE, 48, 2),
	   "malformed %s: the next record is read intact", what);
	wp_ring_end(&f.r);
	fake_free(&f);
}

/*
 * (e) a header larger than the whole data area can never become complete:
 * the kernel drops records that do not fit the buffer.  Left "incomplete",
 * it would pin data_tail forever and the kernel would lose every later
 * record of the ring, so it must count as malformed.
 */
static void test_header_larger_than_ring(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 2 * RING_SIZE };
	uint8_t *fill = xcalloc(RING_SIZE);
	int n;

	fake_init(&f, RING_SIZE, 9 * RING_SIZE);
	memcpy(fill, &bad, sizeof(bad));
	kernel_write(&f, fill, RING_SIZE);	/* the ring is full */
	kernel_publish(&f);
	is_u64(wp_ring_begin(&f.r), RING_SIZE, "oversized: the ring is full");
	n = wp_ring_read_next(&f.r, &rec);
	if (!is_int(n, -EBADMSG, "oversized: a %u-byte header in a %u-byte ring gives -EBADMSG",
		    2 * RING_SIZE, RING_SIZE) && n == 0)
		diag("read_next reports it as incomplete: data_tail can never move again");
	wp_ring_skip_all(&f.r);
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, f.whead, "oversized: skip_all + end release the ring");
	free(fill);
	fake_free(&f);
}

static void test_malformed_headers(void)
{
	check_malformed(0, "size 0");
	check_malformed(4, "size 4");
	check_malformed(20, "size 20");
	check_malformed(65535, "size 65535");
}

/* (f) the reader does not care about types: LOST records pass through. */
static void test_lost_records_pass_through(void)
{
	struct lost {
		struct perf_event_header header;
		uint64_t id, lost;
	} lost = {
		.header = { .type = PERF_RECORD_LOST, .misc = 0, .size = sizeof(lost) },
		.id = 0x1122334455667788ULL,
		.lost = 12345,
	};
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;

	fake_init(&f, RING_SIZE, RING_SIZE - 16);	/* the LOST record wraps */
	kernel_write(&f, &lost, sizeof(lost));
	kernel_write_record(&f, 100, 16, 9);	/* a wallprof type, ROUND */
	kernel_publish(&f);
	wp_ring_begin(&f.r);
	is_int(wp_ring_read_next(&f.r, &rec), 1, "lost: a wrapped LOST record is returned");
	ok(rec && rec->size == sizeof(lost) && memcmp(rec, &lost, sizeof(lost)) == 0,
	   "lost: type, id and lost count intact");
	ok(wp_ring_read_next(&f.r, &rec) == 1 && record_matches(rec, 100, 16, 9),
	   "lost: a record of a non-kernel type passes too");
	wp_ring_end(&f.r);
	fake_free(&f);
}

/* (g) empty ring, begin's return value, init arguments. */
static void test_empty_ring_and_init(void)
{
	struct fake_ring f;
	const struct perf_event_header *rec = NULL;
	struct perf_event_mmap_page *meta = xcalloc(sizeof(*meta));
	uint8_t data[64];
	struct wp_ring r, zero;

	fake_init(&f, RING_SIZE, 123456);
	is_u64(wp_ring_begin(&f.r), 0, "empty: begin returns 0");
	is_int(wp_ring_read_next(&f.r, &rec), 0, "empty: read_next returns 0");
	wp_ring_end(&f.r);
	is_u64(f.meta->data_tail, 123456, "empty: end leaves data_tail alone");

	kernel_write_record(&f, PERF_RECORD_SAMPLE, 40, 1);
	kernel_write_record(&f, PERF_RECORD_SAMPLE, 56, 2);
	kernel_publish(&f);
	is_u64(wp_ring_begin(&f.r), 96, "begin returns the number of unread bytes");
	wp_ring_read_next(&f.r, &rec);
	is_u64(wp_ring_begin(&f.r), 56, "begin again counts from the read position");
	wp_ring_end(&f.r);
	fake_free(&f);

	is_int(wp_ring_init_mem(&r, meta, data, 48), -EINVAL,
	       "init: a size that is not a power of two is refused");
	is_int(wp_ring_init_mem(&r, meta, data, 0), -EINVAL, "init: size 0 is refused");
	memset(&zero, 0, sizeof(zero));
	wp_ring_release(&zero);
	ok(!zero.meta && !zero.scratch && !zero.map_base, "release: a zeroed ring stays empty");
	/*
	 * A ring on caller memory: release frees its scratch buffer (the
	 * sanitizer build sees a leak or a double free), leaves the caller's
	 * memory alone, and may be called again.
	 */
	is_int(wp_ring_init_mem(&r, meta, data, 64), 0, "init: on caller memory");
	ok(r.scratch != NULL, "init: a scratch buffer for wrapped records");
	wp_ring_release(&r);
	ok(!r.scratch && !r.meta && !r.map_base, "release: the scratch buffer and the memory let go");
	wp_ring_release(&r);
	ok(!r.scratch && !r.meta, "release: twice is harmless");
	free(meta);
}

int main(void)
{
	test_records_in_order();
	test_wrapping_records();
	test_record_ending_at_data_end();
	test_largest_record_wraps();
	test_partial_record();
	test_end_releases_consumed_only();
	test_malformed_headers();
	test_header_larger_than_ring();
	test_lost_records_pass_through();
	test_empty_ring_and_init();
	return done_testing();
}
