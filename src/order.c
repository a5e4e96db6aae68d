/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * order.c: a min-heap of queued records released round by round, or
 * oldest first when they take more memory than the bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

#define CHUNK_SIZE (4U << 20)
#define MAX_SPARES 2		/* empty chunks kept for reuse */
/*
 * The heap's room, in entries, that is kept whatever came: a burst (a
 * backlog drained at once) grows it to the most records a pair of
 * passes held, which a live recording kept to its end.  Every
 * SHRINK_ROUNDS rounds, room far beyond the most they needed goes back.
 */
#define HEAP_KEEP 65536		/* 2.5 MiB */
#define SHRINK_ROUNDS 64

/*
 * Where queued records live: copied into a chunk (large, not one
 * allocation per record), or left in memory the caller holds (one store
 * per run of records pushed with the same hold).  A store stands for its
 * bytes in the queue's memory while any record in it is queued.
 */
struct store {
	struct store *next;	/* in the list of spare chunks */
	size_t bytes;		/* memory it keeps alive */
	size_t used;		/* bytes of data[] taken (chunks) */
	size_t live;		/* records queued in it */
	const void *hold;	/* the borrowed memory; NULL for a chunk */
	uint8_t data[];		/* CHUNK_SIZE bytes for a chunk, none borrowed */
};

struct queued {
	uint64_t time;
	uint64_t seq;		/* file order breaks ties */
	struct perf_event_header *rec;
	struct store *store;
	void *hold;		/* when borrowed: released after delivery */
};

struct wp_order {
	struct wp_sample_format fmt;
	wp_order_fn fn;
	void *arg;
	wp_order_release_fn release;
	struct queued *heap;
	size_t len, cap;
	size_t peak;		/* the most entries since the heap's room was looked at */
	unsigned int rounds;	/* rounds since */
	uint64_t seq;
	uint64_t round_max;	/* newest time pushed in this round */
	uint64_t prev_round_max;	/* newest time of the round before */
	uint64_t last_delivered;
	uint64_t late;
	uint64_t first, last;	/* the recording's span */
	uint64_t impossible;	/* records dated well outside it */
	size_t bound;		/* memory the queue may hold */
	size_t mem;		/* bytes of the stores that hold queued records */
	uint64_t early;		/* records released early for the bound */
	struct store *cur;	/* the chunk records are copied into */
	struct store *run;	/* the borrowed store of the last push */
	struct store *spare;	/* empty chunks */
	unsigned int nr_spare;
};

/* A store's first record was queued: it now counts. */
static void store_use(struct wp_order *o, struct store *s)
{
	if (!s->live++)
		o->mem += s->bytes;
}

/* One of its records was delivered; an empty store is kept or freed. */
static void store_release(struct wp_order *o, struct store *s)
{
	if (--s->live)
		return;
	o->mem -= s->bytes;
	if (s == o->cur || s == o->run)
		return;		/* still taking records */
	if (s->hold || o->nr_spare >= MAX_SPARES) {
		free(s);
		return;
	}
	s->next = o->spare;
	o->spare = s;
	o->nr_spare++;
}

/* Room for a record of size bytes, in the current chunk or a new one. */
static void *chunk_alloc(struct wp_order *o, size_t size, struct store **owner)
{
	struct store *c = o->cur;

	if (c && !c->live)
		c->used = 0;	/* everything in it was delivered: reuse */
	if (!c || CHUNK_SIZE - c->used < size) {
		c = o->spare;
		if (c) {
			o->spare = c->next;
			o->nr_spare--;
		} else {
			c = malloc(sizeof(*c) + CHUNK_SIZE);
			if (!c)
				return NULL;
			c->bytes = CHUNK_SIZE;
			c->hold = NULL;
		}
		c->used = 0;
		c->live = 0;
		/* The chunk it replaces is freed by its last delivery, or now. */
		if (o->cur && !o->cur->live)
			free(o->cur);
		o->cur = c;
	}
	store_use(o, c);
	*owner = c;
	c->used += size;
	return c->data + c->used - size;
}

/* The store of a record left in hold's memory: the last push's, or a new one. */
static struct store *borrowed_store(struct wp_order *o, const void *hold, size_t bytes)
{
	struct store *s = o->run;

	if (s && s->hold == hold && s->live)
		goto out;
	if (s && !s->live)
		free(s);
	o->run = NULL;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	s->bytes = bytes;
	s->used = 0;
	s->live = 0;
	s->hold = hold;
	o->run = s;
out:
	store_use(o, s);
	return s;
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
	o->bound = WP_ORDER_BOUND;
	*out = o;
	return 0;
}

void wp_order_set_bound(struct wp_order *o, size_t bytes)
{
	o->bound = bytes;
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

/* Sift o->heap[i] up: moved into a hole, not swapped (a queued entry is 40 bytes). */
static void heap_up(struct wp_order *o, size_t i)
{
	struct queued q = o->heap[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!before(&q, &o->heap[parent]))
			break;
		o->heap[i] = o->heap[parent];
		i = parent;
	}
	o->heap[i] = q;
}

/*
 * Take the root out: the hole goes down to a leaf by the smaller child,
 * one comparison a level, and the last entry goes in from there, up.
 * Records come in time order per ring, so the last entry is one of the
 * newest and seldom rises: about half the comparisons of sifting it
 * down from the root, the most of a live recording's ordering.
 */
static void heap_pop(struct wp_order *o)
{
	size_t i = 0, c;

	if (!--o->len)
		return;
	while ((c = 2 * i + 1) < o->len) {
		if (c + 1 < o->len && before(&o->heap[c + 1], &o->heap[c]))
			c++;
		o->heap[i] = o->heap[c];
		i = c;
	}
	o->heap[i] = o->heap[o->len];
	heap_up(o, i);
}

/* Deliver the oldest queued record. */
static int deliver_one(struct wp_order *o)
{
	struct queued q = o->heap[0];
	struct wp_sample sample;
	bool parsed;
	int ret;

	heap_pop(o);
	/* Timeless records (build ids) are no breach of order. */
	if (q.time && q.time < o->last_delivered)
		o->late++;
	else if (q.time)
		o->last_delivered = q.time;
	parsed = q.rec->type == PERF_RECORD_SAMPLE && !wp_sample_parse(&o->fmt, q.rec, &sample);
	ret = o->fn(q.rec, parsed ? &sample : NULL, q.time, o->arg);
	if (q.hold)
		o->release(q.hold);
	store_release(o, q.store);
	return ret;
}

/* Deliver queued records with time <= limit, oldest first. */
static int deliver_until(struct wp_order *o, uint64_t limit)
{
	int ret = 0;

	while (!ret && o->len && o->heap[0].time <= limit)
		ret = deliver_one(o);
	return ret;
}

static size_t queue_bytes(const struct wp_order *o)
{
	return o->mem + o->len * sizeof(struct queued);
}

/*
 * Over the bound (rounds too far apart, or none at all): release the
 * oldest records until half of it is left, whatever the rounds say.  A
 * record that then comes older than one released counts as late.
 */
static int deliver_early(struct wp_order *o)
{
	int ret = 0;

	while (!ret && o->len && queue_bytes(o) > o->bound / 2) {
		o->early++;
		ret = deliver_one(o);
	}
	return ret;
}

/* Give back room that the last rounds did not need (HEAP_KEEP). */
static void heap_shrink(struct wp_order *o)
{
	size_t n = o->peak * 2 > HEAP_KEEP ? o->peak * 2 : HEAP_KEEP;
	struct queued *heap;

	o->rounds = 0;
	o->peak = o->len;
	if (o->cap <= n * 2)
		return;
	heap = realloc(o->heap, n * sizeof(*heap));
	if (!heap)
		return;		/* it stays as large as it was */
	o->heap = heap;
	o->cap = n;
}

int wp_order_push(struct wp_order *o, const struct perf_event_header *rec, void *hold,
		  size_t hold_bytes)
{
	struct queued q;
	int ret;

	if (rec->type == WP_RECORD_ROUND) {
		if (hold && o->release)
			o->release(hold);	/* not queued */
		ret = deliver_until(o, o->prev_round_max);
		if (o->round_max > o->prev_round_max)
			o->prev_round_max = o->round_max;
		if (++o->rounds >= SHRINK_ROUNDS)
			heap_shrink(o);
		return ret;
	}
	q.hold = hold && o->release ? hold : NULL;
	if (WP_GROW(o->heap, o->cap, o->len + 1))
		goto out_nomem;
	q.time = clamp_time(o, wp_record_time(&o->fmt, rec));
	q.seq = o->seq++;
	if (q.hold) {
		q.rec = (struct perf_event_header *)rec;
		q.store = borrowed_store(o, hold, hold_bytes);
		if (!q.store)
			goto out_nomem;
	} else {
		q.rec = chunk_alloc(o, rec->size, &q.store);
		if (!q.rec)
			goto out_nomem;
		memcpy(q.rec, rec, rec->size);
	}
	if (q.time > o->round_max)
		o->round_max = q.time;
	o->heap[o->len] = q;
	heap_up(o, o->len++);
	if (o->len > o->peak)
		o->peak = o->len;
	return queue_bytes(o) > o->bound ? deliver_early(o) : 0;

out_nomem:
	if (q.hold)
		o->release(q.hold);
	return -ENOMEM;
}

int wp_order_flush(struct wp_order *o)
{
	return deliver_until(o, UINT64_MAX);
}

int wp_order_flush_before(struct wp_order *o, uint64_t time)
{
	return time ? deliver_until(o, time - 1) : 0;
}

uint64_t wp_order_impossible(const struct wp_order *o)
{
	return o->impossible;
}

uint64_t wp_order_late(const struct wp_order *o)
{
	return o->late;
}

uint64_t wp_order_early(const struct wp_order *o)
{
	return o->early;
}

size_t wp_order_bytes(const struct wp_order *o)
{
	return queue_bytes(o);
}

size_t wp_order_room(const struct wp_order *o)
{
	return o->cap * sizeof(*o->heap);
}

void wp_order_free(struct wp_order *o)
{
	struct store *c, *next;

	if (!o)
		return;
	for (size_t i = 0; i < o->len; i++) {
		if (o->heap[i].hold)
			o->release(o->heap[i].hold);
		store_release(o, o->heap[i].store);
	}
	for (c = o->spare; c; c = next) {
		next = c->next;
		free(c);
	}
	free(o->cur);
	free(o->run);
	free(o->heap);
	free(o);
}
