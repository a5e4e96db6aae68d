/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * livestage.h: record's unwinder thread (--unwind=live).
 *
 * Sits between the records drained from the kernel and the data file:
 * takes blocks of records in file order (what record writes before the
 * drain starts, then the drain's blocks), queues a copy in blocks of a
 * MiB at most, and on a thread of its own puts the records in time order
 * where they are (order.h, by their ROUND records) and through
 * liveunwind.h, writing what comes out to the file a MiB at a time.
 * Taking a block never waits for the unwinding: when more than
 * WP_LIVE_BEHIND bytes wait, the samples of the blocks taken meanwhile
 * are written raw (still followed for the process model), and counted;
 * only past WP_LIVE_QUEUE_MAX bytes does taking wait, as the drain's own
 * writer would for a slow disk.  It is a sink (sink.h) in front of
 * another, which it owns: the plain file or rotation, and adds the NAMES
 * block to that sink's closing blocks (closing.h).  Owns its thread,
 * queue and unwinder.
 */
#ifndef WALLPROF_LIVESTAGE_H
#define WALLPROF_LIVESTAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "liveunwind.h"
#include "sink.h"

#define WP_LIVE_BEHIND (8U << 20)
#define WP_LIVE_QUEUE_MAX (256U << 20)

struct wp_livestage;
struct wp_seen;

/*
 * Start the thread for a recording with meta m (borrowed until
 * wp_livestage_free()), writing to the sink inner in time order, a
 * batch at a time closed by a ROUND (round_ns: the start of a drain pass
 * all of whose records, and all before, are in this batch or earlier
 * ones, 0 when not known).  Signals should be blocked in the calling
 * thread.  Returns 0 or -errno; then inner is still the caller's.
 */
int wp_livestage_start(const struct wp_meta *m, struct wp_sink *inner,
		       struct wp_livestage **out);

/*
 * What the drain saw (seen.h, borrowed until wp_livestage_free()): files
 * mapped in a chroot are read through it.  Any time after the start.
 */
void wp_livestage_set_seen(struct wp_livestage *ls, struct wp_seen *seen);

/*
 * The stage as a sink, which owns it from then on (and inner with it):
 * its records are taken as wp_livestage_write takes them, its finish is
 * wp_livestage_finish's (what the unwinder fell behind on, said and
 * counted), the rest is inner's.
 */
struct wp_sink *wp_livestage_sink(struct wp_livestage *ls);

/*
 * Take len bytes of whole records (copied), drained in passes the last of
 * which began at round_ns (0: not known).  Returns 0, or the stage's
 * first error (-errno): a write error of the output, or no memory.
 */
int wp_livestage_write(struct wp_livestage *ls, const void *buf, size_t len, uint64_t round_ns);

/*
 * Unwind and write everything taken, and stop the thread.  Returns the
 * stage's first error, or 0.
 */
int wp_livestage_finish(struct wp_livestage *ls);

/*
 * Write to w the NAMES block of the places the stack table has used so
 * far (named now, while the files are certainly there; each place once,
 * the block holds them all).  Called as each of inner's files closes
 * (from inner's records while the stage runs, or after
 * wp_livestage_finish()).  0 or -errno.
 */
int wp_livestage_names(struct wp_livestage *ls, struct wp_writer *w);

/* The unwinder's counts: after wp_livestage_finish(). */
const struct wp_liveunwind_stats *wp_livestage_stats(const struct wp_livestage *ls);

/* Finish (when not done) and free, with inner.  NULL is fine. */
void wp_livestage_free(struct wp_livestage *ls);

#endif
