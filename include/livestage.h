/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * livestage.h: record's unwinder thread (--unwind=live).
 *
 * Sits between the records drained from the kernel and the data file:
 * takes blocks of records in file order (what record writes before the
 * drain starts, then the drain's blocks), queues a copy, and on a thread
 * of its own puts them in time order (order.h, by their ROUND records)
 * and through liveunwind.h, writing what comes out to the file a block at
 * a time.  Taking a block never waits for the unwinding: when more than
 * WP_LIVE_BEHIND bytes wait, the samples of the blocks taken meanwhile
 * are written raw (still followed for the process model), and counted;
 * only past WP_LIVE_QUEUE_MAX bytes does taking wait, as the drain's own
 * writer would for a slow disk.  Owns its thread, queue and unwinder.
 */
#ifndef WALLPROF_LIVESTAGE_H
#define WALLPROF_LIVESTAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "liveunwind.h"

#define WP_LIVE_BEHIND (8U << 20)
#define WP_LIVE_QUEUE_MAX (256U << 20)

struct wp_livestage;

/*
 * Start the thread for a recording with meta m (borrowed, as w, until
 * wp_livestage_stop()).  Signals should be blocked in the calling thread.
 * Returns 0 or -errno.
 */
int wp_livestage_start(const struct wp_meta *m, struct wp_writer *w, struct wp_livestage **out);

/*
 * Take len bytes of whole records (copied).  Returns 0, or the stage's
 * first error (-errno): a write error of the file, or no memory.
 */
int wp_livestage_write(struct wp_livestage *ls, const void *buf, size_t len);

/*
 * Unwind and write everything taken, stop the thread, with names (at a
 * recording's end) write the NAMES block of the places the stack table
 * uses, and give its counts (stats may be NULL).  Returns the stage's
 * first error, or 0.  Frees ls.
 */
int wp_livestage_stop(struct wp_livestage *ls, bool names, struct wp_liveunwind_stats *stats);

#endif
