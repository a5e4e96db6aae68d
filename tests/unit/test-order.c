/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-order.c: records from several rings, each in time order,
 * interleaved pass by pass with ROUND records between passes, come out in
 * time order, ties in the order they were pushed, none late, none lost;
 * with a bound too small for a pass, still all of them; the room a burst
 * took is given back; and a source that knows none older will come lets
 * out every record before a time at once.
 */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "order.h"
#include "tap.h"

#define RINGS 4
#define PER_PASS 200
#define PASSES 100

static struct wp_sample_format fmt;

static struct {
	uint64_t n, last_time;
	uint32_t last_seq;
	bool ordered;
} got;

static int on_record(const struct perf_event_header *rec, const struct wp_sample *s,
		     uint64_t time, void *arg)
{
	struct wp_sample_id id;

	(void)s, (void)arg;
	if (wp_sample_id_parse(&fmt, rec, &id))
		return -1;
	/* Later, or as late and pushed after (the push's number is in the tid). */
	if (got.n && (time < got.last_time || (time == got.last_time && id.tid < got.last_seq)))
		got.ordered = false;
	got.last_time = time;
	got.last_seq = id.tid;
	got.n++;
	return 0;
}

static int push_switch(struct wp_order *o, uint64_t time, uint32_t seq)
{
	uint8_t buf[128];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = 1, .tid = seq, .time = time, .id = 7 };

	h->type = PERF_RECORD_SWITCH;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, h + 1);
	return wp_order_push(o, h, NULL, 0);
}

static void run(size_t bound, const char *what)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	struct wp_order *o;
	uint32_t seq = 0;
	int err = 0;

	memset(&got, 0, sizeof(got));
	got.ordered = true;
	srand(7);
	if (wp_order_new(&fmt, on_record, NULL, NULL, &o)) {
		ok(0, "%s: a queue", what);
		return;
	}
	if (bound)
		wp_order_set_bound(o, bound);
	for (int p = 0; p < PASSES && !err; p++) {
		/*
		 * A pass reads each ring in turn, what it holds of the pass's
		 * millisecond: each ring in time order, with ties within it and
		 * across rings.
		 */
		for (int r = 0; r < RINGS && !err; r++) {
			uint64_t t = 1000000000ULL + (uint64_t)p * 1000000;

			for (int i = 0; i < PER_PASS && !err; i++) {
				t += (uint64_t)(rand() % 3) * 2000;
				err = push_switch(o, t, seq++);
			}
		}
		if (!err)
			err = wp_order_push(o, &round, NULL, 0);
	}
	if (!err)
		err = wp_order_flush(o);
	ok(!err, "%s: every push and the flush succeed", what);
	is_u64(got.n, (uint64_t)seq, "%s: every record delivered", what);
	if (!bound) {
		ok(got.ordered, "%s: in time order, ties as pushed", what);
		is_u64(wp_order_late(o), 0, "%s: none late", what);
	}
	wp_order_free(o);
}

/*
 * A burst (one pass of many records) grows the heap's room; the small
 * passes after it give it back, and every record still comes in order.
 */
static void burst(void)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	const size_t keep = (size_t)65536 * 40;	/* order.c's HEAP_KEEP entries */
	uint64_t t = 1000000000ULL;
	struct wp_order *o;
	uint32_t seq = 0;
	size_t grown = 0;
	int err = 0;

	memset(&got, 0, sizeof(got));
	got.ordered = true;
	if (wp_order_new(&fmt, on_record, NULL, NULL, &o)) {
		ok(0, "burst: a queue");
		return;
	}
	for (int i = 0; i < 300000 && !err; i++)
		err = push_switch(o, t += 1000, seq++);
	if (!err)
		err = wp_order_push(o, &round, NULL, 0);
	grown = wp_order_room(o);
	for (int p = 0; p < 200 && !err; p++) {
		for (int i = 0; i < 10 && !err; i++)
			err = push_switch(o, t += 1000, seq++);
		if (!err)
			err = wp_order_push(o, &round, NULL, 0);
	}
	if (!err)
		err = wp_order_flush(o);
	ok(!err, "burst: every push and the flush succeed");
	is_u64(got.n, (uint64_t)seq, "burst: every record delivered");
	ok(got.ordered, "burst: in time order");
	ok(grown > keep, "burst: the burst grew the room (%zu bytes)", grown);
	ok(wp_order_room(o) <= keep, "burst: the passes after it gave it back (%zu bytes left)",
	   wp_order_room(o));
	wp_order_free(o);
}

/*
 * The rounds hold the last pass's records until the next ROUND;
 * wp_order_flush_before lets out those before its time, and only those.
 */
static void flush_before(void)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	struct wp_order *o;
	uint32_t seq = 0;
	int err = 0;

	memset(&got, 0, sizeof(got));
	got.ordered = true;
	if (wp_order_new(&fmt, on_record, NULL, NULL, &o)) {
		ok(0, "flush before: a queue");
		return;
	}
	for (uint64_t t = 1000; t <= 5000 && !err; t += 1000)
		err = push_switch(o, t, seq++);
	if (!err)
		err = wp_order_push(o, &round, NULL, 0);
	ok(!err && got.n == 0, "flush before: a pass's records wait for the next ROUND (%" PRIu64
	   " out)", got.n);
	if (!err)
		err = wp_order_flush_before(o, 4000);
	ok(!err, "flush before: succeeds");
	is_u64(got.n, 3, "flush before 4000: the records at 1000, 2000 and 3000 are out");
	is_u64(got.last_time, 3000, "flush before 4000: the last one out is at 3000");
	if (!err)
		err = wp_order_flush_before(o, 0);
	is_u64(got.n, 3, "flush before 0: nothing more");
	if (!err)
		err = wp_order_flush(o);
	is_u64(got.n, 5, "flush: the rest");
	ok(got.ordered, "flush before: in time order");
	is_u64(wp_order_late(o), 0, "flush before: none late");
	wp_order_free(o);
}

int main(void)
{
	wp_sample_format_init(&fmt, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0);
	run(0, "rounds");
	run(16384, "a small bound");
	burst();
	flush_before();
	return done_testing();
}
