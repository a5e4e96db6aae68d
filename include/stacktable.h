/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stacktable.h: a recording's stack table, as report reads it.
 *
 * Files of format version 2 may hold stacks already unwound (see
 * liveunwind.h): DSO, PLACE and STACK records, each before the first
 * record that uses it, and STACK_SAMPLE records that name a stack.  The
 * table makes the file's dsos into the reader's own (procmap.h) and its
 * places into the reader's resolver's (samplestack.h), so that a stack
 * from the table comes out as the same sample just resolved would.  Ids
 * are the file's to choose: they are looked up, never used as indexes.
 * With the file's saved names (placenames.h), it tells which of the
 * reader's places have names, and which files they are in.  Owns its
 * translations and the stacks.
 */
#ifndef WALLPROF_STACKTABLE_H
#define WALLPROF_STACKTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "placenames.h"
#include "procmap.h"
#include "samplestack.h"

struct wp_stacktable;

/* pm and r are borrowed: they must outlive the table. */
int wp_stacktable_new(struct wp_procmap *pm, struct wp_resolver *r, struct wp_stacktable **out);

/*
 * The names saved in the file (borrowed: they must outlive the table),
 * before the first definition.
 */
void wp_stacktable_use_names(struct wp_stacktable *t, const struct wp_placenames *pn);

/*
 * The saved frames of a place (the reader's resolver's id): true with *n
 * of them in out, false when the file has none for it.
 */
bool wp_stacktable_names(const struct wp_stacktable *t, uint32_t place,
			 struct wp_placename_frame *out, unsigned int max, unsigned int *n);

/* Whether a file (procmap's dso index) has places with saved names. */
bool wp_stacktable_named_file(const struct wp_stacktable *t, uint32_t dso);

/* Whether a record is one of the table's definitions (DSO, PLACE, STACK). */
bool wp_stacktable_is_def(const struct perf_event_header *rec);

/*
 * Take a definition: 0, -EBADMSG for a malformed one (ignored: stacks
 * that use it miss its frames), -ENOMEM.
 */
int wp_stacktable_define(struct wp_stacktable *t, const struct perf_event_header *rec);

/* The stack of a file's stack id: false when the file defined none. */
bool wp_stacktable_get(const struct wp_stacktable *t, uint32_t id, struct wp_sample_stack *out);

/* Stacks defined so far. */
uint64_t wp_stacktable_count(const struct wp_stacktable *t);

/* NULL is fine. */
void wp_stacktable_free(struct wp_stacktable *t);

#endif
