/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * waits.h: the timeline that the analysis kept (analysis.h's kept events,
 * keep_timeline), indexed for the analyses that follow wake-ups from
 * thread to thread: every thread's periods and on-CPU samples in time
 * order, what ended each blocked period (a thread of the recording, one
 * outside it, a timer, the network, a disk, another interrupt), which
 * thread a waker was at a given time, and who created each thread.  The
 * wait-for graph (waitgraph.h) and the critical path (critpath.h) read it.
 * Owns its copies and tables; borrows the analysis.
 */
#ifndef WALLPROF_WAITS_H
#define WALLPROF_WAITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "quote.h"
#include "u64map.h"

#define WP_WAITS_NONE UINT32_MAX

/*
 * What ended a blocked period.  The devices are told by the wake-up's
 * context and stack: a timer's expiry (hrtimer, timer wheel, their
 * softirqs), the network's receive or send softirq, a block device's
 * completion (its softirq, or a driver's hard interrupt ending a request);
 * any other interrupt, or the idle task, is INTERRUPT.
 */
enum wp_cause {
	WP_CAUSE_NONE,		/* no wake-up: blocked to the end, or its wake-up not recorded */
	WP_CAUSE_THREAD,	/* a thread of the recording */
	WP_CAUSE_OUTSIDE,	/* a thread outside the recording */
	WP_CAUSE_TIMER,
	WP_CAUSE_NETWORK,
	WP_CAUSE_DISK,
	WP_CAUSE_INTERRUPT,
	/*
	 * Its wake-up or waker fell where record's budget had the wake-up
	 * tracepoints closed (wallprof-record(1), --switch-stacks): not known.
	 */
	WP_CAUSE_GATED,
	WP_NR_CAUSES,
};

/* A thread, by its serial (wp_thread_times.serial). */
struct wp_waits_thread {
	const struct wp_thread_times *t;	/* NULL: no such serial */
	uint32_t index;			/* in wp_account_threads() */
	size_t first, n;		/* its periods in wp_waits.periods */
	size_t first_sample, nr_samples;	/* its samples in wp_waits.samples */
	uint32_t parent;		/* serial of the thread that made it, or WP_WAITS_NONE */
	uint64_t born_ns;		/* when (its FORK), or 0 */
};

struct wp_waits_sample {
	uint64_t time;
	uint32_t stack;
};

struct wp_waits {
	const struct wp_analysis *an;
	struct wp_waits_thread *threads;	/* by serial */
	size_t nr_threads;
	/* The periods (no samples), by thread serial, each thread's in time order. */
	struct wp_kept_event *periods;
	size_t nr_periods;
	struct wp_waits_sample *samples;	/* likewise */
	size_t nr_samples;
	const struct wp_waker *wakers;
	uint8_t *causes;		/* per waker: enum wp_cause (THREAD: maybe OUTSIDE) */
	size_t nr_wakers;
	struct wp_u64map by_tid;	/* tid -> its first entry in tid_serials + 1 */
	uint32_t *tid_serials;		/* serials grouped by tid, each group by start */
	size_t nr_tid_serials;
	bool has_wakeups;		/* the recording has wake-ups */
	bool waker_stacks;		/* ...with the wakers' kernel stacks */
};

/* Index an analysis run with keep_timeline: 0, or -ENOMEM (logged). */
int wp_waits_init(struct wp_waits *w, const struct wp_analysis *an);
void wp_waits_release(struct wp_waits *w);

/* The thread of a serial, or NULL. */
const struct wp_waits_thread *wp_waits_thread(const struct wp_waits *w, uint32_t serial);

/*
 * The serial of thread tid at time: the one whose window holds it (or
 * ended at most a moment before: an exiting thread's last wake-up), else
 * WP_WAITS_NONE.
 */
uint32_t wp_waits_serial_at(const struct wp_waits *w, uint32_t tid, uint64_t time);

/*
 * What ended a blocked period p, and for a thread of the recording its
 * serial (*serial, else WP_WAITS_NONE).
 */
enum wp_cause wp_waits_cause(const struct wp_waits *w, const struct wp_kept_event *p,
			     uint32_t *serial);

/* The cause of a waker alone (a thread's: THREAD, whether recorded or not). */
enum wp_cause wp_waits_waker_cause(const struct wp_waits *w, uint32_t waker);

/* The index of serial's first period that ends after time (its n when none). */
size_t wp_waits_first_after(const struct wp_waits *w, uint32_t serial, uint64_t time);

/*
 * A stack in one line for people: its frames innermost first, joined by
 * " < ", from the first below the scheduler's and the wake-up's own (they
 * say that a thread slept or was woken, not why); of a stack that goes on
 * into user space, only that first kernel frame, the others folded into
 * one "[kernel]"; at most max frames ("... N more" after); quoted for
 * mode.  "[none]" for no stack.
 */
void wp_waits_put_stack(FILE *out, const struct wp_analysis *an, uint32_t stack,
			unsigned int max, enum wp_quote_mode mode);

/* "timer", "network", "disk", "interrupt", ... */
const char *wp_cause_name(enum wp_cause c);

/* "NET_RX", "TIMER", ... for a waker's softirq (timeline.h), or NULL. */
const char *wp_softirq_name(unsigned int softirq);

/* "task", "hardirq", "softirq", "nmi": a waker's innermost context. */
const char *wp_wake_context_name(unsigned int context);

/*
 * Where a waker woke, as reports add it to its name: " (softirq NET_RX)",
 * " (hardirq)", or "" when in a task's own context.  In buf.
 */
const char *wp_waker_where(const struct wp_waker *w, char *buf, size_t size);

#endif
