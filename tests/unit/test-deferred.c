/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-deferred.c: deliveries held back (src/deferred.c) come out as they
 * went in, in order: their fields, their stacks' places and flags, and
 * their records' bytes, through growth and through a queue emptied and
 * filled again while one record taken is still being read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deferred.h"
#include "timeline.h"
#include "tap.h"

static struct wp_sample_stack in, out;

/* A stack with nc callchain and nu user places, all from seed. */
static void make_stack(struct wp_sample_stack *ss, unsigned int nc, unsigned int nu,
		       uint32_t seed)
{
	ss->flags = seed & 7;
	ss->ip = seed * 3;
	ss->needed = (uint64_t)seed << 20;
	ss->nr_chain = nc;
	ss->nr_user = nu;
	for (unsigned int i = 0; i < nc; i++)
		ss->chain[i] = seed + i;
	for (unsigned int i = 0; i < nu; i++)
		ss->user[i] = seed * 7 + i;
}

static bool same_stack(const struct wp_sample_stack *a, const struct wp_sample_stack *b)
{
	return a->flags == b->flags && a->ip == b->ip && a->needed == b->needed &&
	       a->nr_chain == b->nr_chain && a->nr_user == b->nr_user &&
	       !memcmp(a->chain, b->chain, a->nr_chain * sizeof(a->chain[0])) &&
	       !memcmp(a->user, b->user, a->nr_user * sizeof(a->user[0]));
}

/* A record of size bytes (a multiple of 8), its payload from seed. */
static struct perf_event_header *make_record(uint16_t size, uint8_t seed)
{
	struct perf_event_header *h = malloc(size);

	if (!h)
		exit(1);
	h->type = PERF_RECORD_COMM;
	h->misc = seed;
	h->size = size;
	for (size_t i = sizeof(*h); i < size; i++)
		((uint8_t *)h)[i] = (uint8_t)(seed + i);
	return h;
}

static void test_empty(void)
{
	struct wp_deferred *d;
	struct wp_deferred_item it;
	const struct perf_event_header *rec;

	if (!ok(wp_deferred_new(&d) == 0, "new"))
		return;
	ok(wp_deferred_empty(d) && wp_deferred_bytes(d) == 0, "new: empty");
	ok(!wp_deferred_pop(d, &it, &out, &rec), "new: nothing to take");
	wp_deferred_free(d);
	wp_deferred_free(NULL);
}

/* Every kind, in order, many times over: past the first allocation. */
static void test_order(void)
{
	struct wp_deferred *d;
	struct wp_deferred_item it, got;
	const struct perf_event_header *rec;
	struct perf_event_header *r = make_record(48, 9);
	unsigned int bad = 0, n = 0, pushed = 0;

	if (wp_deferred_new(&d))
		return;
	for (uint32_t i = 0; i < 3000; i++) {
		uint32_t kind = i % 6;

		it = (struct wp_deferred_item){ .kind = kind, .role = i % 5, .pid = i, .tid = i + 1,
						.other = i + 2, .cpu = i % 4, .context = (uint8_t)(i & 3),
						.time = (uint64_t)i * 1000003 };
		make_stack(&in, i % 40, i % 200, i);
		r->misc = (uint16_t)i;
		pushed += wp_deferred_push(d, &it, kind <= WP_DEFER_WAKEUP ? &in : NULL,
					   kind == WP_DEFER_RECORD ? r : NULL) == 0;
	}
	is_int(pushed, 3000, "order: 3000 deliveries held");
	ok(wp_deferred_bytes(d) > 64 << 10, "order: more than the first allocation (%zu bytes)",
	   wp_deferred_bytes(d));
	while (wp_deferred_pop(d, &got, &out, &rec)) {
		uint32_t i = n++;

		make_stack(&in, i % 40, i % 200, i);
		bad += got.kind != i % 6 || got.role != i % 5 || got.pid != i || got.tid != i + 1 ||
		       got.other != i + 2 || got.cpu != i % 4 || got.context != (i & 3) ||
		       got.time != (uint64_t)i * 1000003;
		if (got.kind <= WP_DEFER_WAKEUP)
			bad += !same_stack(&in, &out) || rec;
		else if (got.kind == WP_DEFER_RECORD)
			bad += !rec || rec->size != 48 || rec->misc != (uint16_t)i ||
			       memcmp(rec + 1, r + 1, 48 - sizeof(*r));
		else
			bad += rec != NULL;
	}
	is_int(n, 3000, "order: 3000 taken");
	is_int(bad, 0, "order: each as it was held, in the order held");
	ok(wp_deferred_empty(d) && wp_deferred_bytes(d) == 0, "order: empty after");
	free(r);
	wp_deferred_free(d);
}

/*
 * Emptied and filled again: a record taken last stays readable until
 * the next push, and what is pushed after comes out whole.
 */
static void test_refill(void)
{
	struct wp_deferred *d;
	struct wp_deferred_item it = { .kind = WP_DEFER_RECORD, .time = 5 }, got;
	const struct perf_event_header *rec = NULL;
	struct perf_event_header *r1 = make_record(64, 1), *r2 = make_record(24, 2);
	struct perf_event_header *copy = malloc(64);

	if (wp_deferred_new(&d) || !copy)
		return;
	wp_deferred_push(d, &it, NULL, r1);
	ok(wp_deferred_pop(d, &got, &out, &rec) && rec && rec->size == 64,
	   "refill: one record taken");
	memcpy(copy, rec, 64);
	ok(wp_deferred_empty(d), "refill: then empty");
	ok(!memcmp(copy, r1, 64), "refill: the record taken is whole");
	it.time = 6;
	make_stack(&in, 3, 2, 77);
	it.kind = WP_DEFER_STACK;
	wp_deferred_push(d, &it, &in, NULL);
	it.kind = WP_DEFER_RECORD;
	wp_deferred_push(d, &it, NULL, r2);
	ok(wp_deferred_pop(d, &got, &out, &rec) && got.kind == WP_DEFER_STACK &&
	   same_stack(&in, &out) && !rec, "refill: a stack held after it");
	ok(wp_deferred_pop(d, &got, &out, &rec) && rec && rec->size == 24 &&
	   !memcmp(rec, r2, 24), "refill: and a record");
	ok(!wp_deferred_pop(d, &got, &out, &rec), "refill: then nothing");
	free(r1);
	free(r2);
	free(copy);
	wp_deferred_free(d);
}

/* The largest stack a sample can have goes through whole. */
static void test_full_stack(void)
{
	struct wp_deferred *d;
	struct wp_deferred_item it = { .kind = WP_DEFER_WAKEUP, .context = WP_WAKE_SOFTIRQ }, got;
	const struct perf_event_header *rec;

	if (wp_deferred_new(&d))
		return;
	make_stack(&in, WP_SSTACK_CHAIN, WP_MAX_FRAMES, 1234);
	ok(wp_deferred_push(d, &it, &in, NULL) == 0, "full stack: held");
	memset(&out, 0, sizeof(out));
	ok(wp_deferred_pop(d, &got, &out, &rec) && got.context == WP_WAKE_SOFTIRQ && same_stack(&in, &out),
	   "full stack: %u + %u places back", WP_SSTACK_CHAIN, WP_MAX_FRAMES);
	wp_deferred_free(d);
}

int main(void)
{
	test_empty();
	test_order();
	test_refill();
	test_full_stack();
	return done_testing();
}
