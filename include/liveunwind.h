/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liveunwind.h: samples made into references to a table of distinct stacks.
 *
 * Takes a recording's records in time order and gives back those of a
 * file with a stack table (format version 2, WP_META_STACK_TABLE): each
 * on-CPU, switch-out and sched_waking sample becomes a STACK_SAMPLE record
 * (time, thread, CPU, event, and a stack id), and each stack, each place
 * and each file it uses is defined by a STACK, PLACE and DSO record just
 * before its first use.  Every other record passes unchanged, so the
 * process model, the switch records and all the accounting reads stay
 * exact.  Stacks are resolved by samplestack.h over the process model of
 * procmap.h, fed these same records as they come (exec, mmap, fork and
 * exit followed as they happen): the one way report resolves samples, so
 * reporting the output gives what reporting the input gives.  Places are
 * defined unnamed (file and offset, kernel address, JIT address); at the
 * end, while the files are there, the places in files are named with
 * report's symbolizer (symbols.h) for the file's NAMES block
 * (placenames.h), so that report needs no file; kernel and JIT places are
 * named from the KSYMS and JITMAP blocks.  Records that another set of
 * events already gave (coverage.h) are dropped.  Owns its process model,
 * resolver and tables.
 */
#ifndef WALLPROF_LIVEUNWIND_H
#define WALLPROF_LIVEUNWIND_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "datafile.h"
#include "layout.h"
#include "procmap.h"
#include "util.h"

struct wp_liveunwind;

struct wp_liveunwind_stats {
	uint64_t samples;	/* made into STACK_SAMPLE records */
	uint64_t raw_samples;	/* passed raw (wp_liveunwind_pass) */
	uint64_t stacks, places, dsos;	/* definitions written */
	uint64_t dropped;	/* duplicates (coverage.h) */
	uint64_t named;		/* places named (wp_liveunwind_names) */
	/* Exited ones let go, a second after their exit (records in time order). */
	uint64_t processes_forgotten, threads_forgotten;
};

/* For the records of a recording with meta m (borrowed).  0 or -errno. */
int wp_liveunwind_new(const struct wp_meta *m, struct wp_liveunwind **out);

/*
 * Take one record (time: as the time ordering delivered it) and append
 * what it becomes to out.  Returns 0, -EPROTO for the records of a stack
 * table (the input was unwound already), -ENOMEM.
 */
int wp_liveunwind_record(struct wp_liveunwind *lu, const struct perf_event_header *rec,
			 uint64_t time, struct wp_buf *out);

/*
 * Take one record as wp_liveunwind_record() does, following the processes
 * all the same, but append it unchanged, a sample too (when there is no
 * time to unwind it: report unwinds it).
 */
int wp_liveunwind_pass(struct wp_liveunwind *lu, const struct perf_event_header *rec,
		       uint64_t time, struct wp_buf *out);

/*
 * Name the places in files that the table defined since the last call,
 * as report would, and append the NAMES block's payload for all those
 * named so far to out (nothing when none could be named: report names
 * them itself).  0 or -ENOMEM.
 */
int wp_liveunwind_names(struct wp_liveunwind *lu, struct wp_buf *out);

/*
 * What its output holds so far, counted as the drain counted what it came
 * from (wp_summary_count): a STACK_SAMPLE as the sample it was, the
 * table's definitions not at all.  Counted as each record goes out.
 */
const struct wp_summary *wp_liveunwind_counts(const struct wp_liveunwind *lu);

/*
 * The same count of some of its output (len bytes at buf, whole records)
 * into c: the part of a block that a write error let into a file.
 */
void wp_liveunwind_count(const struct wp_liveunwind *lu, const void *buf, size_t len,
			 struct wp_summary *c);

const struct wp_liveunwind_stats *wp_liveunwind_stats(const struct wp_liveunwind *lu);

/* NULL is fine. */
/* Its process model's way to files mapped in a chroot (procmap.h). */
void wp_liveunwind_set_opener(struct wp_liveunwind *lu, wp_procmap_opener_fn fn, void *arg);

void wp_liveunwind_free(struct wp_liveunwind *lu);

#endif
