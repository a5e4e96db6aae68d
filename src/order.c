/* SPDX-License-Identifier: GPL-2.0-or-later */
/* order.c: a min-heap of record copies released round by round. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define CHUNK_SIZE (4U << 20)

/*
 * Queued records are copied into large chunks, not one allocation each;
 * a chunk is recycled once every record in it has been delivered.
 */
struct chunk {
	struct chunk *next;	/* in the free list */
	struct chunk *all;	/* every chunk, for freeing */
	size_t used;
	size_t live;		/* records not yet delivered */
	uint8_t data[];
};

struct queued {
	uint64_t time;
	uint64_t seq;		/* file order breaks ties */
	struct perf_event_header *rec;
	struct chunk *chunk;	/* when copied */
	void *hold;		/* when borrowed */
};

struct wp_order {
	struct wp_sample_format fmt;
	wp_order_fn fn;
	void *arg;
	wp_order_release_fn release;
	struct queued *heap;
	size_t len, cap;
	uint64_t seq;
	uint64_t round_max;	/* newest time pushed in this round */
	uint64_t prev_round_max;	/* newest time of the round before */
	uint64_t last_delivered;
	uint64_t late;
	uint64_t first, last;	/* the recording's span */
	uint64_t impossible;	/* records dated well outside it */
	struct chunk *cur, *spare, *all;
};

static void chunk_release(struct wp_order *o, struct chunk *c)
{
	if (--c->live || c == o->cur)
		return;
	c->next = o->spare;
	o->spare = c;
}

/* Room for a record of size bytes, in the current chunk or a new one. */
static struct perf_event_header *chunk_alloc(struct wp_order *o, size_t size,
					     struct chunk **owner)
{
	struct chunk *c = o->cur;

	if (!c || CHUNK_SIZE - c->used < size) {
		if (c && !c->live) {
			c->used = 0;	/* everything in it was delivered: reuse */
		} else {
			c = o->spare;
			if (c)
				o->spare = c->next;
			else if ((c = malloc(sizeof(*c) + CHUNK_SIZE))) {
				c->all = o->all;
				o->all = c;
			}
			if (!c)
				return NULL;
			c->used = 0;
			c->live = 0;
			if (o->cur && !o->cur->live) {
				o->cur->next = o->spare;
				o->spare = o->cur;
			}
			o->cur = c;
		}
	}
	c->live++;
	*owner = c;
	c->used += size;
	return (struct perf_event_header *)(c->data + c->used - size);
}

uint64_t wp_record_time(const struct wp_sample_format *fmt,
			const struct perf_event_header *rec)
{
	if (rec->type == PERF_RECORD_SAMPLE) {
		struct wp_sample s;

		return wp_sample_parse(fmt, rec, &s) ? 0 : s.time;
	}
	if (rec->type == WP_RECORD_THREAD) {
		struct wp_record_thread t;

		if (rec->size < sizeof(t))
			return 0;
		memcpy(&t, rec, sizeof(t));
		return t.time;
	}
	if (rec->type >= WP_RECORD_ROUND)
		return 0;
	{
		struct wp_sample_id id;

		return wp_sample_id_parse(fmt, rec, &id) ? 0 : id.time;
	}
}

int wp_order_new(const struct wp_sample_format *fmt, wp_order_fn fn, void *arg,
		 wp_order_release_fn release, struct wp_order **out)
{
	struct wp_order *o = calloc(1, sizeof(*o));

	*out = NULL;
	if (!o)
		return -ENOMEM;
	o->fmt = *fmt;
	o->fn = fn;
	o->arg = arg;
	o->release = release;
	o->last = INT64_MAX;
	*out = o;
	return 0;
}

void wp_order_set_span(struct wp_order *o, uint64_t first, uint64_t last)
{
	o->first = first;
	o->last = last > first ? last : first;
}

/* One second: far beyond any disorder of the clocks. */
#define SPAN_SLACK_NS 1000000000ULL

/* Bring a time into the recording's span, counting the impossible ones. */
static uint64_t clamp_time(struct wp_order *o, uint64_t time)
{
	if (!time)
		return 0;	/* no time at all */
	if (time < o->first) {
		if (o->first - time > SPAN_SLACK_NS)
			o->impossible++;
		return o->first;
	}
	if (time > o->last) {
		if (time - o->last > SPAN_SLACK_NS)
			o->impossible++;
		return o->last;
	}
	return time;
}

static bool before(const struct queued *a, const struct queued *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_up(struct wp_order *o, size_t i)
{
	while (i) {
		size_t parent = (i - 1) / 2;
		struct queued tmp;

		if (!before(&o->heap[i], &o->heap[parent]))
			break;
		tmp = o->heap[i];
		o->heap[i] = o->heap[parent];
		o->heap[parent] = tmp;
		i = parent;
	}
}

static void heap_down(struct wp_order *o, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct queued tmp;

		if (l < o->len && before(&o->heap[l], &o->heap[m]))
			m = l;
		if (r < o->len && before(&o->heap[r], &o->heap[m]))
			m = r;
		if (m == i)
			break;
		tmp = o->heap[i];
		o->heap[i] = o->heap[m];
		o->heap[m] = tmp;
		i = m;
	}
}

/* Deliver queued records with time <= limit, oldest first. */
static int deliver_until(struct wp_order *o, uint64_t limit)
{
	while (o->len && o->heap[0].time <= limit) {
		struct queued q = o->heap[0];
		int ret;

		o->heap[0] = o->heap[--o->len];
		heap_down(o, 0);
		/* Timeless records (build ids) are no breach of order. */
		if (q.time && q.time < o->last_delivered)
			o->late++;
		else if (q.time)
			o->last_delivered = q.time;
		ret = o->fn(q.rec, q.time, o->arg);
		if (q.hold)
			o->release(q.hold);
		else
			chunk_release(o, q.chunk);
		if (ret)
			return ret;
	}
	return 0;
}

int wp_order_push(struct wp_order *o, const struct perf_event_header *rec, void *hold)
{
	struct queued q;
	int ret;

	if (rec->type == WP_RECORD_ROUND) {
		ret = deliver_until(o, o->prev_round_max);
		if (o->round_max > o->prev_round_max)
			o->prev_round_max = o->round_max;
		return ret;
	}
	if (o->len == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct queued *nh = realloc(o->heap, cap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		o->heap = nh;
		o->cap = cap;
	}
	q.time = clamp_time(o, wp_record_time(&o->fmt, rec));
	q.seq = o->seq++;
	q.hold = hold && o->release ? hold : NULL;
	q.chunk = NULL;
	if (q.hold) {
		q.rec = (struct perf_event_header *)rec;
	} else {
		q.rec = chunk_alloc(o, rec->size, &q.chunk);
		if (!q.rec)
			return -ENOMEM;
		memcpy(q.rec, rec, rec->size);
	}
	if (q.time > o->round_max)
		o->round_max = q.time;
	o->heap[o->len] = q;
	heap_up(o, o->len++);
	return 0;
}

int wp_order_flush(struct wp_order *o)
{
	return deliver_until(o, UINT64_MAX);
}

uint64_t wp_order_impossible(const struct wp_order *o)
{
	return o->impossible;
}

uint64_t wp_order_late(const struct wp_order *o)
{
	return o->late;
}

void wp_order_free(struct wp_order *o)
{
	if (!o)
		return;
	struct chunk *c, *next;

	for (size_t i = 0; i < o->len; i++)
		if (o->heap[i].hold)
			o->release(o->heap[i].hold);
	for (c = o->all; c; c = next) {
		next = c->all;
		free(c);
	}
	free(o->heap);
	free(o);
}
