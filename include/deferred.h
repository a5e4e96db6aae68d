/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deferred.h: deliveries to the ledger held back, in their order.
 *
 * A report names a stack's frames as it accounts the sample, and naming a
 * frame of libc waits for libc's debug file to be decompressed, which is
 * most of a small report's time.  Unwinding needs none of it, so while
 * debug files are being decompressed the pipeline goes on unwinding and
 * holds each delivery here instead: what it would have told the ledger,
 * with the sample's stack as places, not yet as names.  Once the files
 * are ready, the deliveries are taken out in the same order and accounted
 * as they would have been.
 *
 * The queue copies everything it is given (places, a record's bytes) and
 * owns its memory; it grows without bound, so the caller bounds it by
 * wp_deferred_bytes().
 */
#ifndef WALLPROF_DEFERRED_H
#define WALLPROF_DEFERRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "samplestack.h"

enum wp_deferred_kind {
	WP_DEFER_STACK,		/* an on-CPU or switch-out sample with its stack */
	WP_DEFER_WAKEUP,	/* a wake-up, with its waker's stack */
	WP_DEFER_ENQUEUED,	/* other went on a run queue */
	WP_DEFER_SCHED_SWITCH,	/* tid left its CPU to other */
	WP_DEFER_CPU,		/* an on-CPU sample of the idle task */
	WP_DEFER_RECORD,	/* a record other than a sample, for the ledger */
};

/* One delivery; which fields matter depends on kind. */
struct wp_deferred_item {
	uint32_t kind;		/* enum wp_deferred_kind */
	uint32_t role;		/* STACK: enum wp_event_role */
	uint32_t pid, tid;
	uint32_t other;		/* the woken, enqueued or next thread */
	uint32_t cpu;
	uint8_t context;	/* WAKEUP: timeline.h's WP_WAKE_* bits (an interrupt's) */
	bool here;		/* ENQUEUED: onto the run queue of the CPU it ran on */
	uint64_t time;
};

struct wp_deferred;

int wp_deferred_new(struct wp_deferred **out);
void wp_deferred_free(struct wp_deferred *d);

/*
 * Hold a delivery: for STACK and WAKEUP with its stack ss, for RECORD
 * with a copy of rec (else both NULL).  0 or -ENOMEM (nothing held).
 */
int wp_deferred_push(struct wp_deferred *d, const struct wp_deferred_item *it,
		     const struct wp_sample_stack *ss, const struct perf_event_header *rec);

/*
 * Take the oldest delivery: true with *it filled, and *ss (STACK,
 * WAKEUP) or *rec (RECORD: valid until the next push or pop) set; false
 * when none is held.
 */
bool wp_deferred_pop(struct wp_deferred *d, struct wp_deferred_item *it,
		     struct wp_sample_stack *ss, const struct perf_event_header **rec);

bool wp_deferred_empty(const struct wp_deferred *d);

/* Bytes held. */
size_t wp_deferred_bytes(const struct wp_deferred *d);

#endif
