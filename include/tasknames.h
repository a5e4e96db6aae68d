/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tasknames.h: the names of threads that the recording read while it ran
 * (WP_RECORD_TASK_NAME), for wakers it has no other name for: a client
 * process outside the recorded ones, a kernel thread.
 *
 * Owns a table by thread ID; the last name read for a thread wins.
 */
#ifndef WALLPROF_TASKNAMES_H
#define WALLPROF_TASKNAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "layout.h"

struct wp_tasknames;

int wp_tasknames_new(struct wp_tasknames **out);

/* Take in a WP_RECORD_TASK_NAME record: 0, or -ENOMEM; a malformed one is skipped. */
int wp_tasknames_record(struct wp_tasknames *t, const struct perf_event_header *rec);

/*
 * The name read for thread tid of process pid (NUL-terminated, at most
 * 15 bytes), or NULL.  t may be NULL.
 */
const char *wp_tasknames_find(const struct wp_tasknames *t, uint32_t pid, uint32_t tid);

void wp_tasknames_free(struct wp_tasknames *t);

#endif
