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
 * previous round's newest.  Owns copies of the queued records.
 */
#ifndef WALLPROF_ORDER_H
#define WALLPROF_ORDER_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "layout.h"

struct wp_order;

/* Called for each record in time order; a non-zero return stops delivery. */
typedef int (*wp_order_fn)(const struct perf_event_header *rec, uint64_t time,
			   void *arg);

/* Drops a reference that keeps queued records' memory alive. */
typedef void (*wp_order_release_fn)(void *hold);

int wp_order_new(const struct wp_sample_format *fmt, wp_order_fn fn, void *arg,
		 wp_order_release_fn release, struct wp_order **out);

/*
 * Queue rec (a ROUND releases what is safe).  With hold, rec stays where it
 * is and hold (a reference on its memory) is released after delivery;
 * without, a copy is queued.  Returns 0, the callback's non-zero value, or
 * -ENOMEM.
 */
int wp_order_push(struct wp_order *o, const struct perf_event_header *rec, void *hold);

/* Deliver everything still queued (end of file). */
int wp_order_flush(struct wp_order *o);

/* The time of a record: sample time, sample_id time, or 0 when it has none. */
uint64_t wp_record_time(const struct wp_sample_format *fmt,
			const struct perf_event_header *rec);

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

void wp_order_free(struct wp_order *o);

#endif
