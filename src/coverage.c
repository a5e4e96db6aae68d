/* SPDX-License-Identifier: GPL-2.0-or-later */
/* coverage.c: one set of events per thread (see coverage.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "u64map.h"
#include "util.h"

#define NONE UINT64_MAX

/* A thread's exit, its entries let go by wp_coverage_forget. */
struct gone {
	uint64_t time;
	uint32_t tid;
	uint32_t birth;		/* the heir entry it had then (its birth number), or 0 */
};

struct wp_coverage {
	struct wp_sample_format fmt;
	struct wp_u64map owner;		/* event id -> the attached tid it was opened for */
	struct wp_u64map done;		/* attached tid -> all its events set up */
	/*
	 * tid -> attached ancestor whose events count (low 32 bits), and the
	 * thread's birth number (high 32: FORKs seen, never 0), which tells
	 * a thread from a later one that reuses its tid.
	 */
	struct wp_u64map heir;
	uint32_t births;
	/* Exits in time order, from gone_head on: to forget once past. */
	struct gone *gone;
	size_t gone_head, nr_gone, cap_gone;
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
	return wp_u64map_get(&c->heir, tid, &v) ? (uint32_t)v : NONE;
}

/* A thread of the recording exited: its entries go once past (wp_coverage_forget). */
static void note_exit(struct wp_coverage *c, const struct perf_event_header *rec)
{
	struct wp_task_event te;
	uint64_t v = 0;

	if (wp_task_event_parse(rec, &te))
		return;
	if (!wp_u64map_get(&c->heir, te.tid, &v) && !wp_u64map_get(&c->done, te.tid, NULL))
		return;		/* nothing held for it */
	if (c->gone_head && c->gone_head * 2 >= c->nr_gone) {
		/* The forgotten half goes: the queue holds what is pending. */
		memmove(c->gone, c->gone + c->gone_head,
			(c->nr_gone - c->gone_head) * sizeof(*c->gone));
		c->nr_gone -= c->gone_head;
		c->gone_head = 0;
	}
	if (WP_GROW(c->gone, c->cap_gone, c->nr_gone + 1))
		return;		/* kept: only memory, never a wrong answer */
	c->gone[c->nr_gone++] = (struct gone){ .time = te.time, .tid = te.tid,
					       .birth = (uint32_t)(v >> 32) };
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
	if (rec->type == PERF_RECORD_FORK && counts != NONE && !wp_task_event_parse(rec, &te)) {
		if (!++c->births)
			c->births = 1;
		wp_u64map_put(&c->heir, te.tid, counts | (uint64_t)c->births << 32);
	} else if (rec->type == PERF_RECORD_EXIT) {
		note_exit(c, rec);
	}
	return true;
}

size_t wp_coverage_forget(struct wp_coverage *c, uint64_t before)
{
	size_t n = 0;

	while (c->gone_head < c->nr_gone && c->gone[c->gone_head].time < before) {
		const struct gone *g = &c->gone[c->gone_head++];
		uint64_t v;

		/* Not a later thread's, which reused the tid since. */
		if (g->birth && wp_u64map_get(&c->heir, g->tid, &v) && (uint32_t)(v >> 32) == g->birth) {
			wp_u64map_del(&c->heir, g->tid);
			n++;
		}
		if (wp_u64map_get(&c->done, g->tid, &v) && v <= g->time) {
			wp_u64map_del(&c->done, g->tid);
			n++;
		}
	}
	if (c->gone_head == c->nr_gone)
		c->gone_head = c->nr_gone = 0;
	return n;
}

size_t wp_coverage_threads(const struct wp_coverage *c)
{
	return c->heir.len + c->done.len;
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
	free(c->gone);
	free(c);
}
