/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * account.h: every thread's wall time, split exactly into on-CPU and
 * off-CPU (blocked, preempted) time.
 *
 * Fed the records of a recording in time order.  On-CPU time comes from
 * the switch-in/switch-out records, not from counting samples; off-CPU
 * time is blocked after a voluntary switch-out and preempted after an
 * involuntary one (or between a thread's creation and its first run).
 * Each thread is accounted over its window: from the later of record start
 * and its creation (FORK, or the exec of the launched command) to the
 * earlier of record end and its exit.  wall = on + blocked + preempted,
 * to the nanosecond.  Owns its thread table; formatters only read it.
 */
#ifndef WALLPROF_ACCOUNT_H
#define WALLPROF_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "datafile.h"

struct wp_thread_times {
	uint32_t pid, tid;
	char comm[16];
	uint64_t start_ns, end_ns;	/* the accounted window */
	uint64_t wall_ns;		/* end_ns - start_ns */
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;		/* voluntary switch-out until switch-in */
	uint64_t preempted_ns;		/* runnable, waiting for a CPU */
	uint64_t voluntary_switches;
	uint64_t involuntary_switches;
	uint64_t samples;		/* on-CPU samples */
	uint64_t switch_samples;	/* switch-out stacks */
	bool exited;
	bool approximate;		/* records were lost in its window */
};

struct wp_account;

int wp_account_new(const struct wp_meta *meta, struct wp_account **out);

/* One record, in time order (see order.h); time as wp_record_time(). */
int wp_account_record(struct wp_account *a, const struct perf_event_header *rec,
		      uint64_t time);

/*
 * Close every open window at end_ns (the recording's end) and sort the
 * threads by pid, then tid.
 */
void wp_account_finish(struct wp_account *a, uint64_t end_ns);

/* The threads after wp_account_finish (else none), valid until wp_account_free. */
const struct wp_thread_times *wp_account_threads(const struct wp_account *a, size_t *n);

/* Records the kernel reported lost, as seen in LOST/LOST_SAMPLES records. */
uint64_t wp_account_lost(const struct wp_account *a);

void wp_account_free(struct wp_account *a);

#endif
