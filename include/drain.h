/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drain.h: moving records from the kernel rings into the data file.
 *
 * Two threads: the drain thread empties every ring (epoll on the ring fds,
 * plus a timeout so quiet rings are still read), trims user stack copies to
 * the bytes the kernel filled, counts what it sees and fills blocks; the
 * writer thread compresses and writes full blocks.  The drain thread never
 * touches the file, so slow storage or compression cannot make the kernel
 * drop records, up to WP_DRAIN_QUEUE_MAX bytes of queued blocks.  A
 * third reads the command line of each process that execs (cmdline.h).
 */
#ifndef WALLPROF_DRAIN_H
#define WALLPROF_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "event.h"
#include "seen.h"
#include "sink.h"

#define WP_DRAIN_QUEUE_MAX (1ULL << 30)

struct wp_drain;

/*
 * Start both threads over ev's rings, writing to sink (sink.h: the plain
 * file, rotation, the live unwinder).  Neither ev nor sink may be freed
 * before wp_drain_stop().  Signals should be blocked in the calling
 * thread first so the new threads inherit the mask.  The rings are
 * drained at once, but the writer thread gives the sink nothing until
 * wp_drain_release_writer() (or wp_drain_stop()): until then the caller
 * may give it records that must come first (the state of what already
 * ran) itself.  The writer thread gives the sink each block of whole
 * records with round_ns, the start of the last drain pass whose ROUND
 * record the block holds (0 for none); a sink's error stops the writing
 * as the file's own would.
 */
int wp_drain_start(struct wp_evlist *ev, struct wp_sink *sink, struct wp_drain **out);

/* Let the writer thread write what was drained, and from now on. */
void wp_drain_release_writer(struct wp_drain *d);

/* Hand the records drained so far to the writer at the next pass. */
void wp_drain_flush(struct wp_drain *d);

/*
 * What the drain saw of the code that ran (seen.h): the files mapped,
 * the anonymous code, the program starts, the kernel addresses in the
 * stacks; it notes them while it runs.  Valid until wp_drain_free.
 */
struct wp_seen *wp_drain_seen(struct wp_drain *d);

/*
 * Keep the wake-ups of these threads (the recording's at its start), and
 * of the threads born from then on (FORK and EXIT records say which), of
 * all the kernel's filter lets through (wp_evlist_filter_wakees); with
 * the on-CPU event per CPU (wp_evlist_oncpu_per_cpu), their on-CPU
 * samples of all it sees.  newer_than: the last thread id handed out
 * before the threads were listed (a thread above it may be a new one of
 * the recording's), or 0 to leave it as it is.
 */
int wp_drain_track_wakees(struct wp_drain *d, const uint32_t *tids, size_t n,
			  uint32_t newer_than);

/*
 * The launch stub (target.h), which shares the command's cgroup
 * (cgroup.h): its records are left out.  Call before the drain reads any
 * record.
 */
void wp_drain_skip_stub(struct wp_drain *d, uint32_t pid);

/* Counters so far (for a live status line).  Thread safe. */
void wp_drain_progress(struct wp_drain *d, struct wp_summary *s, uint64_t *bytes_written);

/*
 * The first error of the writer thread (-errno), and when it happened
 * (CLOCK_MONOTONIC), or 0.  After it, the writer writes no more blocks
 * (it drops them, so that draining never stalls) and the file holds
 * every block written before.  Thread safe.
 */
int wp_drain_write_error(struct wp_drain *d, uint64_t *when);

/*
 * Read the rings one last time, write every queued block, stop the
 * threads.  Fills the counters of s (after a write error, those of the
 * blocks written before it) and returns the first write error.
 */
int wp_drain_stop(struct wp_drain *d, struct wp_summary *s);

/*
 * Records made by another thread (the kernel's figures of threads' time,
 * say), whole, dated when made: take appends those made since its last
 * call to out (0, or -ENOMEM: they stay for the next), and the drain puts
 * them in the file at its next pass.  At most WP_DRAIN_MAX_SOURCES; one
 * thread adds them.  0 or -ENOSPC.
 */
#define WP_DRAIN_MAX_SOURCES 4
typedef int (*wp_drain_source_fn)(void *arg, struct wp_buf *out);
int wp_drain_add_source(struct wp_drain *d, wp_drain_source_fn take, void *arg);

/*
 * The launched command's argv, for the recording: a WP_RECORD_CMDLINE of
 * pid written with the command lines read after execs.  0 or -ENOMEM.
 */
int wp_drain_known_cmdline(struct wp_drain *d, uint32_t pid, char *const argv[]);

/*
 * Command lines not recorded after an exec: requests dropped (too many
 * execs at once), and processes gone (or without one) when read.
 */
void wp_drain_cmdline_counts(struct wp_drain *d, uint64_t *dropped, uint64_t *gone);

/*
 * Switch-outs read so far from the ring of CPU index cpu (the recording's
 * threads', or with -a every task's): at least those written before
 * *as_of_ns (CLOCK_MONOTONIC; 0 before the first pass).  Thread safe.
 */
uint64_t wp_drain_switch_outs(const struct wp_drain *d, unsigned int cpu, uint64_t *as_of_ns);

/*
 * The scheduler records of other programs' threads the drain has left out
 * so far (the kernel's filter let them through: wp_evlist_filter_wakees),
 * counted as of *as_of_ns as above.  Thread safe.
 */
uint64_t wp_drain_foreign(const struct wp_drain *d, uint64_t *as_of_ns);

/*
 * Attached through the targets' own cgroup: the records of other
 * processes in it (neither the targets nor started by them since: ones
 * that joined it, or that they had started before) left out.  Thread safe.
 */
uint64_t wp_drain_outsiders(const struct wp_drain *d);

/*
 * The recording's threads as the drain knows them now (those given to
 * wp_drain_track_wakees and those born since, less those gone), as
 * uint32_t tids into out; -ENOENT when it does not follow them (-a).
 * A thread born before a pass that began at *as_of_ns of
 * wp_drain_foreign, or earlier, is among them.  Thread safe.
 */
int wp_drain_wakees(struct wp_drain *d, struct wp_buf *out);

/* Ask the drain thread for a pass now rather than at its timeout. */
void wp_drain_kick(struct wp_drain *d);

void wp_drain_free(struct wp_drain *d);

#endif
