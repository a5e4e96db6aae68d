/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * samplekind.h: what a sample of a recording is.
 *
 * Owns the table from event id to the event's role (datafile.h's enum
 * wp_event_role) and configuration, and the formats of the recording's
 * tracepoints (its TRACE_FORMAT records), so that the fields of a
 * tracepoint sample's raw data can be read by name.  Report's analysis and
 * the live unwinder each keep one.
 */
#ifndef WALLPROF_SAMPLEKIND_H
#define WALLPROF_SAMPLEKIND_H

#include <stdbool.h>
#include <stdint.h>

#include "datafile.h"
#include "layout.h"
#include "timeline.h"
#include "tracefs.h"
#include "u64map.h"

struct wp_sample_kinds {
	struct wp_u64map roles;		/* event id -> enum wp_event_role */
	struct wp_u64map configs;	/* event id -> its attr.config */
	struct wp_trace_format formats[8];	/* of the recording's tracepoints */
	unsigned int nr_formats;
};

/* From the recording's events: 0 or -ENOMEM. */
int wp_sample_kinds_init(struct wp_sample_kinds *k, const struct wp_meta *m);

/* Note a TRACE_FORMAT record: 0 or -ENOMEM (a bad one is ignored). */
int wp_sample_kinds_format(struct wp_sample_kinds *k, const struct perf_event_header *rec);

/* The role of a sample's event (on-CPU when the event is not known). */
enum wp_event_role wp_sample_kinds_role(const struct wp_sample_kinds *k, uint64_t id);

/* Whether id is one of the recording's events (the meta lists its ids). */
bool wp_sample_kinds_known(const struct wp_sample_kinds *k, uint64_t id);

/* The format of the tracepoint event id's samples come from, or NULL. */
const struct wp_trace_format *wp_sample_kinds_trace(const struct wp_sample_kinds *k,
						    uint64_t id);

/*
 * A sched_waking sample: the woken thread, and the kernel's context then
 * (timeline.h's WP_WAKE_* bits; not 0: an interrupt's, so whoever ran was
 * not the waker).  false when the sample does not name a woken thread.
 */
bool wp_sample_kinds_waking(const struct wp_sample_kinds *k, const struct wp_sample *s,
			    uint32_t *wakee, uint8_t *context);

/*
 * The thread a sched_wakeup sample names (woken, on a run queue: its
 * "pid", above 0), or a sched_switch sample (the next to run: its
 * "next_pid", 0 for the idle task): false when it names none.
 */
bool wp_sample_kinds_woken(const struct wp_sample_kinds *k, const struct wp_sample *s,
			   uint32_t *tid);
bool wp_sample_kinds_next(const struct wp_sample_kinds *k, const struct wp_sample *s,
			  uint32_t *tid);

/*
 * Whether a sched_wakeup(_new) sample put its thread on the run queue of
 * the CPU it was taken on (its "target_cpu"): the kernel then brought the
 * running thread's figures up to date (update_curr, as it enqueues).
 */
bool wp_sample_kinds_enqueued_here(const struct wp_sample_kinds *k, const struct wp_sample *s);

void wp_sample_kinds_release(struct wp_sample_kinds *k);

#endif
