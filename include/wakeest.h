/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wakeest.h: the runnable part of waits whose wake-up was not recorded.
 *
 * With the wake-up tracepoints gated (or a wake-up the kernel did not
 * report), a wait ends blocked at its switch-in: how long of it the thread
 * waited for a CPU after being woken is unknown.  The waits whose wake-up
 * was recorded, with the tracepoints on from their start to their end,
 * stand for the others: the gate opens and closes by time, blind to the
 * threads.  This is that estimate, for report's ledger (account.h) and
 * for top's intervals (monitor.h) alike: sums of recorded waits, a
 * thread's own and everyone's, and the part of unrecorded ones they give.
 * Owns nothing.
 */
#ifndef WALLPROF_WAKEEST_H
#define WALLPROF_WAKEEST_H

#include <stdint.h>

/* Recorded waits, summed. */
struct wp_wake_seen {
	uint64_t off_ns;	/* their whole off-CPU time */
	uint64_t runnable_ns;	/* of it, from the wake-up to the switch-in */
	uint64_t count;
};

/*
 * A recorded wait of off ns, run of them runnable, into a thread's sums
 * (own; NULL: none kept) and everyone's (all).  Its runnable part counts
 * up to 8 times everyone's mean so far, once there are 20 (the excess as
 * not waited at all): the recorder itself, taking the CPU, holds up a
 * few waits a hundredfold, which among a few hundred would outweigh the
 * rest.
 */
void wp_wake_seen_add(struct wp_wake_seen *own, struct wp_wake_seen *all, uint64_t off,
		      uint64_t run);

/*
 * The runnable part of n unrecorded waits, ns of blocked time in all: the
 * thread's runnable share of its recorded waits (everyone's, when it has
 * few: under a thousandth of everyone's time), but at most their mean
 * runnable length for each of the n.  The share fits a thread's waits of
 * one kind; the length keeps a thread that sleeps for seconds, split by a
 * storm's share, from waiting hundreds of milliseconds for a CPU after
 * each wake-up.  0 when nothing was recorded.
 */
uint64_t wp_wake_runnable_part(const struct wp_wake_seen *own, const struct wp_wake_seen *all,
			       uint64_t n, uint64_t ns);

#endif
