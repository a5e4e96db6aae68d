/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tasknames.c: names of threads read while recording, by thread ID. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tasknames.h"
#include "u64map.h"
#include "util.h"

struct name {
	uint32_t pid;
	char comm[16];		/* NUL-terminated */
};

struct wp_tasknames {
	struct wp_u64map by_tid;	/* tid -> index into names */
	struct name *names;
	size_t n, cap;
};

int wp_tasknames_new(struct wp_tasknames **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int wp_tasknames_record(struct wp_tasknames *t, const struct perf_event_header *rec)
{
	struct wp_record_task_name tn;
	struct name *nm;
	uint64_t at;

	if (wp_task_name_parse(rec, &tn))
		return 0;
	if (wp_u64map_get(&t->by_tid, tn.tid, &at)) {
		nm = &t->names[at];
	} else {
		if (WP_GROW(t->names, t->cap, t->n + 1) ||
		    wp_u64map_put(&t->by_tid, tn.tid, t->n))
			return -ENOMEM;
		nm = &t->names[t->n++];
	}
	nm->pid = tn.pid;
	memcpy(nm->comm, tn.comm, sizeof(tn.comm));
	nm->comm[sizeof(nm->comm) - 1] = 0;	/* the kernel's names are 15 bytes at most */
	return 0;
}

const char *wp_tasknames_find(const struct wp_tasknames *t, uint32_t pid, uint32_t tid)
{
	uint64_t at;

	if (!t || !wp_u64map_get(&t->by_tid, tid, &at) || t->names[at].pid != pid ||
	    !t->names[at].comm[0])
		return NULL;
	return t->names[at].comm;
}

void wp_tasknames_free(struct wp_tasknames *t)
{
	if (!t)
		return;
	wp_u64map_release(&t->by_tid);
	free(t->names);
	free(t);
}
