/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * monitor.h: every thread's time, interval by interval, as it happens
 * (wallprof top).
 *
 * Fed a live recording's records in time order (the live unwinder's
 * output: stack-table samples, switch records, wake-ups), it hands them to
 * a timeline (timeline.h), the one model of every CPU and thread, and
 * adds the timeline's segments up per thread over fixed intervals of the
 * recording's clock: on-CPU, runnable after a wake-up, preempted, and
 * blocked split by kind (from the switch-out stack's kernel frames and
 * the waker), switches, who ended the waits, and the stacks the time went
 * to.  An interval closes once a record dated after its end has come (the
 * records come in time order) or a drain pass begun after it is in; the
 * state a thread is in at the close counts up to it, so an interval holds
 * every thread's time in it, waits still going on included.  With the
 * threads' own figures read at each interval's end (THREAD_CLOCK), the
 * interval is held until they are in, and its rows anchored to them
 * (wp_monitor_expect_clocks).  Stacks are
 * named (symbols.h) only for what is shown.  Runs on the thread that
 * feeds it; a snapshot is handed to the caller at each close.  Memory: the
 * rows of the last interval, a few stacks each, and the timeline's and
 * names' tables; the timeline forgets the threads that exited before the
 * interval last shown began (wp_timeline_forget), so that it holds the
 * threads alive and no more however long it runs.  Owns its timeline,
 * process model and names.
 */
#ifndef WALLPROF_MONITOR_H
#define WALLPROF_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "wakeest.h"

/* How blocked time is split. */
enum wp_block_kind {
	WP_BLOCK_LOCK,		/* futexes, kernel mutexes and semaphores */
	WP_BLOCK_IO,		/* pipes, files, terminals, polls */
	WP_BLOCK_SLEEP,		/* sleeps and timeouts: a timer woke it */
	WP_BLOCK_NET,		/* sockets */
	WP_BLOCK_OTHER,
	WP_BLOCK_KINDS,
};

const char *wp_block_kind_name(enum wp_block_kind k);

/* The states a stack's time is counted in. */
enum wp_mon_state {
	WP_MON_ON,
	WP_MON_BLOCKED,
	WP_MON_RUNNABLE,
	WP_MON_PREEMPTED,
};

#define WP_MON_STACKS 6

struct wp_mon_stack {
	uint32_t stack;		/* the stack table's id, WP_NO_STACK: none */
	uint8_t state;		/* enum wp_mon_state */
	uint8_t kind;		/* blocked: enum wp_block_kind */
	uint64_t ns;		/* on-CPU: samples' share of the on-CPU time */
	uint64_t count;		/* samples, or waits */
	int32_t waker;		/* blocked: its top waker's index in the row, or -1 */
};

#define WP_MON_WAKERS 4

struct wp_mon_waker {
	uint32_t pid, tid;	/* 0 for interrupts, timers, the idle task */
	uint32_t kind;		/* enum wp_waker_kind */
	char comm[16];
	uint64_t ns, count;	/* blocked time it ended, waits */
};

struct wp_mon_row {
	uint32_t pid, tid, serial;
	char comm[16];
	bool exited;		/* in this interval */
	bool approximate;	/* records lost around its time */
	uint64_t on_ns, runnable_ns, preempted_ns;
	/*
	 * Of runnable_ns, what waits whose wake-up was not recorded (the
	 * wake-up tracepoints gated off) are estimated to have waited for a
	 * CPU after being woken (wakeest.h), from the waits whose wake-up
	 * was, in this interval: taken from blocked_ns.
	 */
	uint64_t runnable_estimated_ns;
	/*
	 * The blocked time of those waits, before the move: what their
	 * runnable part may be, from none of it to all of it (the estimate's
	 * bound).
	 */
	uint64_t runnable_unknown_ns;
	uint64_t blocked_ns[WP_BLOCK_KINDS];
	/*
	 * Of blocked_ns, the waits whose switch-out had no stack (the budget
	 * of stacks), shared out among the kinds of the thread's other waits.
	 */
	uint64_t blocked_unsampled_ns;
	/*
	 * The kernel's figures (schedstat, read at the interval's ends)
	 * replaced the records' on-CPU and run-queue times: on-CPU as the
	 * switch records had it, and how far the reads were from the
	 * interval's ends (the figures' bound: what the thread did between
	 * a read and the end nearest it is counted in the wrong interval).
	 */
	bool anchored;
	uint64_t on_records_ns, kernel_offset_ns;
	uint64_t switches, voluntary, involuntary;
	uint64_t samples;
	struct wp_mon_waker wakers[WP_MON_WAKERS];	/* by ns, most first */
	unsigned int nr_wakers;
	struct wp_mon_stack stacks[WP_MON_STACKS * 2];	/* on-CPU, then off, by ns */
	unsigned int nr_stacks;
	/* The off-CPU stack with the most blocked time: its frame names. */
	int32_t wait_stack;	/* index in stacks, or -1 */
	/* The monitor's own: its recorded waits, and the unrecorded ones ended in it. */
	struct wp_wake_seen seen;
	uint64_t unsplit_ns, unsplit_count;
};

/*
 * A row's runnable time as a percentage of len ns, in buf ("12.3"),
 * marked "~12.3" when part of it is estimated (runnable_estimated_ns).
 */
const char *wp_mon_runnable_pct(const struct wp_mon_row *r, uint64_t len, char *buf, size_t size);

/* A row's blocked time, every kind. */
uint64_t wp_mon_row_blocked(const struct wp_mon_row *r);

/* The rows' default order (qsort): on-CPU time, then waiting for a CPU, most first. */
int wp_mon_row_cmp(const void *a, const void *b);

/* A waker as shown: "comm/tid" (quoted, in buf), or what woke it (wp_waker_kind_name). */
const char *wp_mon_waker_name(const struct wp_mon_waker *w, char *buf, size_t size);

struct wp_mon_snapshot {
	uint64_t start_ns, end_ns;	/* the interval, CLOCK_MONOTONIC */
	uint64_t index;			/* from 1 */
	const struct wp_mon_row *rows;
	size_t nr_rows;
	uint64_t lost;			/* records the kernel lost in it */
	bool wakeups;			/* runnable time and wakers are known */
};

/* Called at each close, on the feeding thread; 0, or non-zero to stop feeding. */
typedef int (*wp_mon_interval_fn)(void *arg, const struct wp_mon_snapshot *snap);

struct wp_monitor;

/* interval_ns > 0.  0 or -errno. */
int wp_monitor_new(uint64_t interval_ns, wp_mon_interval_fn fn, void *arg,
		   struct wp_monitor **out);

/*
 * The recording reads its threads' own figures (THREAD_CLOCK records) at
 * each interval's end, on its clock from its start: each interval is then
 * held a little past its end (half of it, at most 500 ms) for them,
 * and its rows anchored to them (wp_mon_row.anchored).  Before start.
 */
void wp_monitor_expect_clocks(struct wp_monitor *m);

/* The recording's meta (borrowed until free), before any record.  0 or -errno. */
int wp_monitor_start(struct wp_monitor *m, const struct wp_meta *meta);

/*
 * Whole records in time order, the last drain pass in them begun at
 * round_ns (0: not known).  0, -errno, or the interval function's return.
 */
int wp_monitor_records(struct wp_monitor *m, const void *buf, size_t len, uint64_t round_ns);

/*
 * The frames of a stack, innermost first, kernel frames first, the
 * tracing machinery's and the scheduler's left out (names borrowed until
 * the next call): how many, at most max.  Each *kernel[i] says a kernel
 * frame.  Thread safe against the feeding thread.
 */
unsigned int wp_monitor_frames(struct wp_monitor *m, uint32_t stack, const char **names,
			       bool *kernel, unsigned int max);

/*
 * The frame to show for where a stack waits: its innermost user frame
 * with a name, "kernel frame < user frame", written to buf (quoted as
 * reports quote names: the caller quotes it).  Thread safe.
 */
const char *wp_monitor_wait_frame(struct wp_monitor *m, uint32_t stack, char *buf, size_t size);

void wp_monitor_free(struct wp_monitor *m);

#endif
