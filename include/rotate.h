/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rotate.h: one recording as a series of complete data files, cut by time.
 *
 * Owns the data files' writers when record runs with --rotate (a new file
 * every interval) or --flight-recorder (only the last seconds kept in
 * memory, written to a file on request and at the end), and what each
 * file's start must restate, built from the records that came before it:
 * the threads alive and their state (the timeline's, timeline.h, fed
 * those records in time order), and what the timeline does not keep
 * (command lines, executable mappings, a live recording's stack table,
 * the switch-out stack of each thread off-CPU).  It is a sink (sink.h:
 * wp_rotate_sink), behind the drain's writer thread or behind the live
 * unwinder (livestage.h).
 *
 * Every file is complete on its own: the meta with the file's own start,
 * the records every file repeats (trace formats, ATTACH), the state of
 * each thread and process alive at the start (THREAD, COMM, CMDLINE and
 * MMAP2 records dated at it, and the switch-out sample of each thread
 * off-CPU then), the records dated within its span, the
 * blocks the session adds at the end of any file, and a SUMMARY whose end
 * is the file's end.  A record goes to the file whose span holds its
 * time, so the per-thread ledgers of consecutive files add up to the
 * whole recording's.  Files are written under a temporary name and
 * renamed once complete (datafile.h).
 */
#ifndef WALLPROF_ROTATE_H
#define WALLPROF_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "sink.h"

/*
 * A file is complete once a drain pass that began this long after its end
 * is in: a record becomes visible in its ring a little after its time.
 */
#define WP_ROTATE_SLACK_NS (10ULL * 1000 * 1000)

/*
 * The flight recorder's bound on the records it keeps, in bytes: beyond
 * it, the oldest blocks go before their time is up.
 */
#define WP_FLIGHT_MEMORY_MAX ((size_t)256 << 20)

struct wp_rotate_opts {
	const char *output;		/* -o: the files are named after it */
	bool force;
	int compress_level;
	uint64_t rotate_ns;		/* --rotate, or 0 */
	uint64_t window_ns;		/* --flight-recorder, or 0 */
	size_t memory_max;		/* flight recorder; 0: WP_FLIGHT_MEMORY_MAX */
	/* flight recorder: write no file at the end, only on request */
	bool no_final_dump;
	/*
	 * Numbers taken by files already there are passed over, not refused
	 * (a flight recorder run again in the same directory): each file
	 * gets the next free one.
	 */
	bool skip_existing;
	/*
	 * The blocks that close every file, before its SUMMARY (closing.h),
	 * or NULL: written on the thread that gives the records during the
	 * recording, on the caller's in wp_rotate_end().
	 */
	struct wp_closing *closing;
};

struct wp_rotate;

/*
 * Check that the first file can be made (as wp_writer_open checks a file)
 * and, with --rotate, start it.  Returns 0 or -errno (logged).
 */
int wp_rotate_open(const struct wp_rotate_opts *opts, struct wp_rotate **out);

/* The recording's meta, kept (not copied) until wp_rotate_free(). */
int wp_rotate_start(struct wp_rotate *r, const struct wp_meta *meta);

/* Records that begin every file (trace formats, ATTACH), before any other. */
int wp_rotate_prelude(struct wp_rotate *r, const void *buf, size_t len);

/*
 * Whole records in drain order, with the start of the last drain pass
 * they include (0: not known), as wp_sink_records takes them.  *bytes
 * gets the bytes of all the files so far.  0 or the first write error.
 */
int wp_rotate_records(void *r, const void *buf, size_t len, uint64_t round_ns,
		      uint64_t *bytes);

/*
 * Flight recorder: write the records kept, up to now (CLOCK_MONOTONIC),
 * once every record dated before now has come.  Thread safe.
 */
void wp_rotate_request_dump(struct wp_rotate *r, uint64_t now);

/*
 * The end of the recording (every record given): the last file, or the
 * flight recorder's final one, ends at whole->end_clock_ns with the
 * whole recording's stop reason, exit status and end counts.  Returns
 * 0 or the first error of any file.
 */
int wp_rotate_end(struct wp_rotate *r, const struct wp_summary *whole);

/* Files written so far, and the first and last names (NULL for none). */
unsigned int wp_rotate_nr_files(const struct wp_rotate *r, const char **first,
				const char **last);

/* Flight recorder: records evicted by age (or by the memory bound) so far. */
uint64_t wp_rotate_evicted(const struct wp_rotate *r);

/*
 * The processes the model holds for the next file's start: those alive,
 * and those gone for less than a few seconds.
 */
size_t wp_rotate_nr_processes(const struct wp_rotate *r);

/* Bytes of all the files. */
uint64_t wp_rotate_bytes(const struct wp_rotate *r);

/*
 * The name of file number n (from 1): the number goes before the
 * extension of path's last component ("out.data" -> "out.0001.data"),
 * or after a name that has none ("out" -> "out.0001").  Malloc'ed.
 */
char *wp_rotate_name(const char *path, unsigned int n);

void wp_rotate_free(struct wp_rotate *r);

/*
 * r as a sink (sink.h), which owns it from then on: wp_sink_free() frees
 * it; its end (wp_rotate_end) says a write error that cut the last file
 * short, and what the flight recorder let go.
 */
struct wp_sink *wp_rotate_sink(struct wp_rotate *r);

#endif
