/* SPDX-License-Identifier: GPL-2.0-or-later */
/* coverage.c: one set of events per thread (see coverage.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "u64map.h"

#define NONE UINT64_MAX

struct wp_coverage {
	struct wp_sample_format fmt;
	struct wp_u64map owner;		/* event id -> the attached tid it was opened for */
	struct wp_u64map done;		/* attached tid -> all its events set up */
	struct wp_u64map heir;		/* tid -> attached ancestor whose events count */
	uint64_t dropped;
	bool any;			/* an ATTACH record was seen */
};

int wp_coverage_new(const struct wp_sample_format *fmt, struct wp_coverage **out)
{
	struct wp_coverage *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->fmt = *fmt;
	return 0;
}

static void note_attach(struct wp_coverage *c, const struct perf_event_header *rec)
{
	struct wp_attach a;

	if (wp_attach_parse(rec, &a))
		return;
	for (uint32_t i = 0; i < a.nr_ids; i++)
		wp_u64map_put(&c->owner, wp_attach_id(&a, i), a.tid);
	wp_u64map_put(&c->done, a.tid, a.done);
	c->any = true;
}

/* The attached thread whose events count for tid at time, or NONE. */
static uint64_t counting(const struct wp_coverage *c, uint32_t tid, uint64_t time)
{
	uint64_t v;

	if (wp_u64map_get(&c->done, tid, &v) && time >= v)
		return tid;
	return wp_u64map_get(&c->heir, tid, &v) ? v : NONE;
}

bool wp_coverage_keep(struct wp_coverage *c, const struct perf_event_header *rec,
		      const struct wp_sample *s, uint64_t time)
{
	struct wp_task_event te;
	uint64_t id, owner, counts;
	uint32_t tid;

	if (rec->type == WP_RECORD_ATTACH) {
		note_attach(c, rec);
		return true;
	}
	if (!c->any || wp_record_is_own(rec->type))
		return true;
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (!s)
			return true;
		id = s->id;
		tid = s->tid;
	} else {
		struct wp_sample_id sid;

		if (wp_sample_id_parse(&c->fmt, rec, &sid))
			return true;
		id = sid.id;
		tid = sid.tid;
	}
	counts = counting(c, tid, time);
	/* Events of nobody attached (a launched command's), or no rule yet. */
	if (counts != NONE && wp_u64map_get(&c->owner, id, &owner) && owner != counts) {
		c->dropped++;
		return false;
	}
	/*
	 * A new thread carries copies of its creator's events: of the events
	 * that count for its creator now.  (FORK records come from the
	 * creator's events, in the creator's context.)
	 */
	if (rec->type == PERF_RECORD_FORK && counts != NONE && !wp_task_event_parse(rec, &te))
		wp_u64map_put(&c->heir, te.tid, counts);
	return true;
}

uint64_t wp_coverage_dropped(const struct wp_coverage *c)
{
	return c->dropped;
}

void wp_coverage_free(struct wp_coverage *c)
{
	if (!c)
		return;
	wp_u64map_release(&c->owner);
	wp_u64map_release(&c->done);
	wp_u64map_release(&c->heir);
	free(c);
}
