/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * coverage.h: which events count for which thread, so that no thread is
 * recorded twice.
 *
 * When attaching, wallprof opens events for threads that may already
 * carry events inherited from the thread that created them (it cannot
 * tell for sure: a thread created while its creator's events were being
 * set up inherits only some of them).  Every record names, by its event
 * id, the events that wrote it: the ones opened for some thread, or
 * inherited from them.  The rule: a thread counts the records of the
 * events of the latest attached thread it descends from (itself
 * included), from the moment that thread's events were all set up; a
 * thread with no such ancestor counts everything.  Owns its tables; a
 * long-running reader lets the exited threads' entries go
 * (wp_coverage_forget).
 */
#ifndef WALLPROF_COVERAGE_H
#define WALLPROF_COVERAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "layout.h"

struct wp_coverage;

int wp_coverage_new(const struct wp_sample_format *fmt, struct wp_coverage **out);

/*
 * Feed every record in time order (ATTACH records first), a sample with
 * its parsed form s (NULL for other records, or a malformed sample: kept);
 * returns false for a duplicate that no later stage should see.
 */
bool wp_coverage_keep(struct wp_coverage *c, const struct perf_event_header *rec,
		      const struct wp_sample *s, uint64_t time);

/*
 * Let go of what is held for the threads that exited before time before
 * (their EXIT records fed), for a reader of records in time order that
 * runs for hours: nothing of theirs should come after.  A thread that
 * reused the tid since keeps its own.  Returns the entries let go.
 */
size_t wp_coverage_forget(struct wp_coverage *c, uint64_t before);

/* Threads held (attached ones and descendants): to see it bounded. */
size_t wp_coverage_threads(const struct wp_coverage *c);

/* Records dropped as duplicates so far. */
uint64_t wp_coverage_dropped(const struct wp_coverage *c);

void wp_coverage_free(struct wp_coverage *c);

#endif
