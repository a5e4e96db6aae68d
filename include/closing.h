/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * closing.h: the blocks that close every data file of a recording.
 *
 * Owns what record writes after a file's records, before its summary: a
 * BUILD_ID record for each executable file mapped so far, the kernel
 * symbols the recorded stacks use, the names of JIT code (the perf maps
 * of the processes that ran anonymous code), and what a stage in front
 * of the files adds (the live unwinder's NAMES block: wp_closing_add).
 * The sinks that write files (sink.h: the plain file, rotation) call it
 * as each file closes, on whichever thread closes it, one at a time.  It
 * reads what the recording saw (seen.h) by copying it under its lock and
 * doing its file reads after, so that the drain never waits on a disk;
 * it keeps /proc/kallsyms and the build ids read from one file to the
 * next, and says its warnings at the first file only.
 */
#ifndef WALLPROF_CLOSING_H
#define WALLPROF_CLOSING_H

#include "datafile.h"

struct wp_buf;
struct wp_seen;
struct wp_closing;

/* The most stages that add blocks of their own (wp_closing_add). */
#define WP_CLOSING_MAX_STAGES 4

/* For a recording of meta (borrowed until wp_closing_free()): 0 or -ENOMEM. */
int wp_closing_new(const struct wp_meta *meta, struct wp_closing **out);

/* What the recording saw: the mapped files, kernel addresses and anonymous code named. */
void wp_closing_set_seen(struct wp_closing *c, struct wp_seen *s);

/*
 * The anonymous code of the processes that existed at the start, among
 * the records synthesized for them (the drain sees only the rings').
 */
void wp_closing_note_existing(struct wp_closing *c, const struct wp_buf *buf);

/* A stage's own closing blocks, written after the others: 0 or -errno. */
typedef int (*wp_closing_fn)(void *arg, struct wp_writer *w);
int wp_closing_add(struct wp_closing *c, wp_closing_fn fn, void *arg);
/* Take back what wp_closing_add added (a stage that failed to start). */
void wp_closing_remove(struct wp_closing *c, wp_closing_fn fn, void *arg);

/*
 * Mark w as closing (wp_writer_closing) and write the closing blocks to
 * it: 0 or the first error.
 */
int wp_closing_write(struct wp_closing *c, struct wp_writer *w);

void wp_closing_free(struct wp_closing *c);

#endif
