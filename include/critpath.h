/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * critpath.h: the critical path of one thread over a window: what its
 * time waited for, followed from each wake-up to the waker.
 *
 * The thread's window is walked forward: its running time stays its own
 * (by the stacks of its on-CPU samples), as does its wait for a CPU; each
 * blocked interval is replaced by the timeline of whoever ended it over
 * that interval (a thread: recursively, the way its own waits were ended;
 * a device: the timer, the network, a disk, an interrupt), and a thread
 * that did not exist yet by the thread that created it.  A thread already
 * on the chain is not entered again (the cycle guard), and what cannot be
 * explained stays blocked.  The segments follow each other without gaps:
 * they add up to the window exactly.  The design follows the critical
 * path of Trace Compass (Giraldeau and Dagenais) and of Perfetto.
 * Owns its segments; borrows the waits it was made from.
 */
#ifndef WALLPROF_CRITPATH_H
#define WALLPROF_CRITPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waits.h"

enum wp_cp_kind {
	WP_CP_RUNNING,		/* the thread ran (stack: its sample's) */
	WP_CP_RUNNABLE,		/* woken, it waited for a CPU */
	WP_CP_PREEMPTED,	/* preempted, it waited for a CPU */
	WP_CP_BLOCKED,		/* blocked, and nothing on record explains it */
	WP_CP_DEVICE,		/* blocked until a device woke it (cause) */
	WP_CP_OUTSIDE,		/* blocked until a thread outside the recording woke it */
	WP_CP_UNRECORDED,	/* the thread on the path had no timeline then */
	WP_NR_CP_KINDS,
};

/* Why a blocked segment was not followed further. */
enum {
	WP_CP_CYCLE = 1U << 0,		/* its waker was on the chain already */
	WP_CP_TOO_DEEP = 1U << 1,	/* the chain reached its depth bound */
	WP_CP_GATED = 1U << 2,		/* its wake-up was not recorded (record's budget) */
	/* running, no sample in the slice nor by it: the stack is its nearest sample's */
	WP_CP_NEAREST_SAMPLE = 1U << 3,
};

struct wp_cp_segment {
	uint64_t start_ns, end_ns;
	uint32_t serial;	/* the thread on the path (running, waiting or blocked) */
	/*
	 * running: its sample's stack (with WP_CP_NEAREST_SAMPLE, one from
	 * another slice); else its switch-out stack; UINT32_MAX: none
	 */
	uint32_t stack;
	uint32_t waker;		/* DEVICE, OUTSIDE: the waker (index); else UINT32_MAX */
	uint32_t cpu;		/* running: where, or UINT32_MAX */
	uint8_t kind;		/* enum wp_cp_kind */
	uint8_t cause;		/* DEVICE: enum wp_cause */
	uint8_t depth;		/* wake-ups followed from the thread to here */
	uint8_t flags;		/* WP_CP_* */
};

#define WP_CP_MAX_DEPTH 64

struct wp_critpath {
	uint32_t serial;		/* the thread */
	uint64_t start_ns, end_ns;	/* the window (within the thread's) */
	struct wp_cp_segment *segs;	/* in time order, back to back */
	size_t nr_segs, cap_segs;
	uint64_t wakeups_followed;
	uint64_t cycles;		/* blocked time left so by the cycle guard */
};

/*
 * The critical path of thread serial over [start, end] (clipped to its
 * window): 0, -ENOMEM (logged), or -ESRCH when the thread has no time in
 * the window.
 */
int wp_critpath_compute(const struct wp_waits *w, uint32_t serial, uint64_t start,
			uint64_t end, struct wp_critpath *cp);
void wp_critpath_release(struct wp_critpath *cp);

/* "on-CPU", "runnable", "preempted", "blocked", ... */
const char *wp_cp_kind_name(enum wp_cp_kind k);

/* "w2 (102)", "[timer]", ... : who or what holds a segment. */
void wp_cp_holder(const struct wp_waits *w, const struct wp_cp_segment *s, char *buf,
		  size_t size);

#endif
