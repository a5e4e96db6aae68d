/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * order.h: records of a data file, delivered in time order.
 *
 * Records from different CPU rings are interleaved in the file; within one
 * ring they are in time order.  The recorder writes a ROUND record after
 * every pass over the rings, so a record read after ROUND k+1 cannot be
 * older than the newest record read before ROUND k (everything older was
 * already in its ring when pass k read the other rings).  The queue
 * therefore releases, at each ROUND, every record no newer than the
 * previous round's newest.  Its memory has a bound all the same (a file
 * may have no ROUND at all): beyond it, the oldest records are released
 * early, and one that comes later but older counts as late.  Owns copies
 * of the queued records.  A sample is parsed once, when it is delivered;
 * queueing reads only its time.
 */
#ifndef WALLPROF_ORDER_H
#define WALLPROF_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "layout.h"

struct wp_order;

/*
 * Called for each record in time order; a non-zero return stops delivery.
 * sample is rec parsed when rec is a well-formed sample, else NULL; both
 * are valid until the call returns.
 */
typedef int (*wp_order_fn)(const struct perf_event_header *rec, const struct wp_sample *sample,
			   uint64_t time, void *arg);

/* Drops a reference that keeps queued records' memory alive. */
typedef void (*wp_order_release_fn)(void *hold);

/*
 * The default bound on the queue's memory: records, their entries, and the
 * memory that holds keep alive.  A drain pass reads at most every ring
 * once, and the queue holds two passes: 16 MiB rings on 8 CPUs fit.
 */
#define WP_ORDER_BOUND ((size_t)256 << 20)

int wp_order_new(const struct wp_sample_format *fmt, wp_order_fn fn, void *arg,
		 wp_order_release_fn release, struct wp_order **out);

/* Set the bound on the queue's memory (default WP_ORDER_BOUND). */
void wp_order_set_bound(struct wp_order *o, size_t bytes);

/*
 * Queue rec (a ROUND releases what is safe, the bound what must go).  With
 * hold, rec stays where it is and hold (a reference on its memory, of
 * hold_bytes in all) becomes the queue's: released after delivery, or at
 * once when rec cannot be queued; without, a copy is queued.  Records
 * pushed one after the other with the same hold share its memory.
 * Returns 0, the callback's non-zero value, or -ENOMEM.
 */
int wp_order_push(struct wp_order *o, const struct perf_event_header *rec, void *hold,
		  size_t hold_bytes);

/* Deliver everything still queued (end of file). */
int wp_order_flush(struct wp_order *o);

/*
 * Deliver every queued record dated before time, oldest first: for a
 * source that knows none older can come any more (the drain's ROUND
 * time, sink.h), where the rounds alone would hold them until the next.
 */
int wp_order_flush_before(struct wp_order *o, uint64_t time);

/*
 * The span of time the recording covers.  A record dated outside it is
 * delivered with the time of the nearer end, so that no interval runs
 * past the recording; one dated more than a second outside it has a
 * damaged time, and is counted (wp_order_impossible).  Until set, the span
 * is every time below 2^63 ns (292 years).  Timeless records (time 0)
 * stay so.
 */
void wp_order_set_span(struct wp_order *o, uint64_t first, uint64_t last);

/* Records whose time was impossible (see wp_order_set_span). */
uint64_t wp_order_impossible(const struct wp_order *o);

/* Records delivered out of time order (a broken ROUND promise). */
uint64_t wp_order_late(const struct wp_order *o);

/* Records released before their round for the bound. */
uint64_t wp_order_early(const struct wp_order *o);

/* The memory the queue holds now, as measured against the bound. */
size_t wp_order_bytes(const struct wp_order *o);

/*
 * The bytes of room for queued entries: what a burst took is given back
 * within some rounds after, down to 2.5 MiB.
 */
size_t wp_order_room(const struct wp_order *o);

void wp_order_free(struct wp_order *o);

#endif
