/* SPDX-License-Identifier: GPL-2.0-or-later */
/* critpath.c: a thread's critical path, from wake-up to waker. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "log.h"
#include "util.h"
#include "view.h"

/*
 * A wake-up ends a wait at its enqueueing (sched_wakeup), some
 * microseconds after the waker's sched_waking; the waker may have left
 * its CPU in between.  Its last slice is taken to run on to the wake-up
 * when it ended at most this long before; a longer gap means records
 * were lost, and stays blocked.
 */
#define WAKE_LAG_MAX_NS 2000000ULL

struct walker {
	const struct wp_waits *w;
	struct wp_critpath *cp;
	uint32_t chain[WP_CP_MAX_DEPTH + 1];	/* the threads being walked, outermost first */
	int err;
};

const char *wp_cp_kind_name(enum wp_cp_kind k)
{
	static const char *const names[] = {
		[WP_CP_RUNNING] = "on-CPU", [WP_CP_RUNNABLE] = "runnable",
		[WP_CP_PREEMPTED] = "preempted", [WP_CP_BLOCKED] = "blocked",
		[WP_CP_DEVICE] = "device", [WP_CP_OUTSIDE] = "outside",
		[WP_CP_UNRECORDED] = "not recorded",
	};

	return (unsigned int)k < WP_NR_CP_KINDS ? names[k] : "?";
}

void wp_cp_holder(const struct wp_waits *w, const struct wp_cp_segment *s, char *buf, size_t size)
{
	const struct wp_waits_thread *t = wp_waits_thread(w, s->serial);
	char name[32];

	if (s->kind == WP_CP_DEVICE) {
		snprintf(buf, size, "[%s]", wp_cause_name((enum wp_cause)s->cause));
	} else if (s->kind == WP_CP_OUTSIDE && s->waker < w->nr_wakers) {
		snprintf(buf, size, "%s (%" PRIu32 ", not recorded)",
			 wp_waker_name(w->an, &w->wakers[s->waker], name, sizeof(name)),
			 w->wakers[s->waker].tid);
	} else if (t) {
		snprintf(buf, size, "%s (%" PRIu32 ")", t->t->comm, t->t->tid);
	} else {
		snprintf(buf, size, "?");
	}
}

static bool same(const struct wp_cp_segment *a, const struct wp_cp_segment *b)
{
	return a->serial == b->serial && a->kind == b->kind && a->stack == b->stack &&
	       a->waker == b->waker && a->cpu == b->cpu && a->cause == b->cause &&
	       a->depth == b->depth && a->flags == b->flags;
}

/* One more piece of the path, joined to the last when it goes on from it. */
static void emit(struct walker *k, const struct wp_cp_segment *s)
{
	struct wp_critpath *cp = k->cp;
	struct wp_cp_segment *last = cp->nr_segs ? &cp->segs[cp->nr_segs - 1] : NULL;

	if (k->err || s->end_ns <= s->start_ns)
		return;
	if (last && last->end_ns == s->start_ns && same(last, s)) {
		last->end_ns = s->end_ns;
		return;
	}
	if (WP_GROW(cp->segs, cp->cap_segs, cp->nr_segs + 1)) {
		k->err = -ENOMEM;
		return;
	}
	cp->segs[cp->nr_segs++] = *s;
}

static struct wp_cp_segment seg(uint64_t from, uint64_t to, uint32_t serial, enum wp_cp_kind kind,
				unsigned int depth)
{
	return (struct wp_cp_segment){ .start_ns = from, .end_ns = to, .serial = serial,
				       .stack = UINT32_MAX, .waker = UINT32_MAX,
				       .cpu = UINT32_MAX, .kind = (uint8_t)kind,
				       .depth = (uint8_t)depth };
}

/* The first of serial's samples at or after time. */
static size_t first_sample(const struct wp_waits *w, const struct wp_waits_thread *t,
			   uint64_t time)
{
	size_t lo = 0, hi = t->nr_samples;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->samples[t->first_sample + mid].time < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether thread t blocked between its period p and time (either way). */
static bool blocked_between(const struct wp_waits *w, const struct wp_waits_thread *t,
			    const struct wp_kept_event *p, uint64_t time)
{
	const struct wp_kept_event *first = &w->periods[t->first], *last = first + t->n;

	if (time < p->start_ns) {
		for (const struct wp_kept_event *q = p; q-- > first && q->end_ns > time;)
			if (q->kind == WP_PERIOD_BLOCKED)
				return true;
	} else {
		for (const struct wp_kept_event *q = p + 1; q < last && q->start_ns < time; q++)
			if (q->kind == WP_PERIOD_BLOCKED)
				return true;
	}
	return false;
}

/*
 * A slice with no sample since the thread last blocked, nor before it
 * next blocks (a server's short slices between waits): the thread's
 * sample nearest in time, which stands for what its slices do then, as
 * the ledger spreads unsampled time over the samples it has; i is the
 * first sample after the slice.
 */
static void nearest_sample(const struct wp_waits *w, const struct wp_waits_thread *t, size_t i,
			   const struct wp_kept_event *p, struct wp_cp_segment *s)
{
	const struct wp_waits_sample *before = i ? &w->samples[t->first_sample + i - 1] : NULL;
	const struct wp_waits_sample *after = i < t->nr_samples ?
					      &w->samples[t->first_sample + i] : NULL;

	if (before && (!after || p->start_ns - before->time <= after->time - p->end_ns))
		s->stack = before->stack;
	else if (after)
		s->stack = after->stack;
	else
		return;
	s->flags |= WP_CP_NEAREST_SAMPLE;
}

/*
 * [from, to) of the running period p of thread serial, by the stacks of
 * its samples: each stands for the time since the one before (or since
 * the slice began), and the last for the rest of the slice too.  A slice
 * too short for a sample goes on with the thread's sample before it (or
 * after), as the ledger spreads such time over the samples it has, but
 * only one taken since the thread last blocked (or before it next
 * blocks): a thread that was only preempted goes on where it was.
 */
static void running(struct walker *k, uint32_t serial, const struct wp_kept_event *p,
		    uint64_t from, uint64_t to, unsigned int depth)
{
	const struct wp_waits *w = k->w;
	const struct wp_waits_thread *t = &w->threads[serial];
	struct wp_cp_segment s = seg(from, to, serial, WP_CP_RUNNING, depth);
	size_t i = first_sample(w, t, p->start_ns);

	s.cpu = p->cpu;
	if (i == t->nr_samples || w->samples[t->first_sample + i].time > p->end_ns) {
		if (i && !blocked_between(w, t, p, w->samples[t->first_sample + i - 1].time))
			s.stack = w->samples[t->first_sample + i - 1].stack;
		else if (i < t->nr_samples &&
			 !blocked_between(w, t, p, w->samples[t->first_sample + i].time))
			s.stack = w->samples[t->first_sample + i].stack;
		else
			nearest_sample(w, t, i, p, &s);
		emit(k, &s);
		return;
	}
	for (; i < t->nr_samples && from < to; i++) {
		const struct wp_waits_sample *x = &w->samples[t->first_sample + i];
		uint64_t until = x->time;

		if (x->time > p->end_ns)
			break;
		/* The slice's last sample also stands for its end. */
		if (i + 1 == t->nr_samples || w->samples[t->first_sample + i + 1].time > p->end_ns)
			until = p->end_ns;
		if (until > from) {
			s.start_ns = from;
			s.end_ns = until < to ? until : to;
			s.stack = x->stack;
			emit(k, &s);
			from = s.end_ns;
		}
	}
}

static void walk(struct walker *k, uint32_t serial, uint64_t a, uint64_t b, unsigned int depth);

/* Whether serial is one of the chain's threads (chain[0..depth]). */
static bool on_chain(const struct walker *k, uint32_t serial, unsigned int depth)
{
	for (unsigned int i = 0; i <= depth; i++)
		if (k->chain[i] == serial)
			return true;
	return false;
}

/*
 * The last moment up to time that thread serial ran: time itself when it
 * was running then (or began to, at that very time); 0 when it did not
 * run since from.
 */
static uint64_t last_ran(const struct wp_waits *w, uint32_t serial, uint64_t from, uint64_t time)
{
	const struct wp_waits_thread *t = &w->threads[serial];
	size_t i = wp_waits_first_after(w, serial, time ? time - 1 : 0);

	for (size_t k = i; k < t->n && k <= i + 1; k++)
		if (w->periods[t->first + k].start_ns <= time &&
		    w->periods[t->first + k].kind == WP_PERIOD_ON)
			return time;
	while (i-- > 0) {
		const struct wp_kept_event *p = &w->periods[t->first + i];

		if (p->end_ns <= from)
			break;
		if (p->kind == WP_PERIOD_ON)
			return p->end_ns < time ? p->end_ns : time;
	}
	return 0;
}

/*
 * [from, to) of the blocked period p of thread serial: what ended it
 * over that time.
 */
static void blocked(struct walker *k, uint32_t serial, const struct wp_kept_event *p,
		    uint64_t from, uint64_t to, unsigned int depth)
{
	const struct wp_waits *w = k->w;
	struct wp_cp_segment s = seg(from, to, serial, WP_CP_BLOCKED, depth);
	uint32_t waker;
	enum wp_cause c = wp_waits_cause(w, p, &waker);
	uint64_t ran;

	s.stack = p->stack;
	switch (c) {
	case WP_CAUSE_NONE:
		emit(k, &s);
		return;
	case WP_CAUSE_GATED:
		s.flags = WP_CP_GATED;
		emit(k, &s);
		return;
	case WP_CAUSE_OUTSIDE:
		s.kind = WP_CP_OUTSIDE;
		s.waker = p->waker;
		emit(k, &s);
		return;
	case WP_CAUSE_THREAD:
		break;
	default:
		s.kind = WP_CP_DEVICE;
		s.cause = (uint8_t)c;
		s.waker = p->waker;
		emit(k, &s);
		return;
	}
	if (on_chain(k, waker, depth)) {
		s.flags = WP_CP_CYCLE;
		k->cp->cycles += to - from;
		emit(k, &s);
		return;
	}
	if (depth + 1 > WP_CP_MAX_DEPTH) {
		s.flags = WP_CP_TOO_DEEP;
		emit(k, &s);
		return;
	}
	k->cp->wakeups_followed++;
	k->chain[depth + 1] = waker;
	/* (A period cut at the end of --time was woken after it.) */
	if (to < p->end_ns || (w->an->window_end && p->end_ns >= w->an->window_end)) {
		/* The wake-up comes later: all the waker did until then leads to it. */
		walk(k, waker, from, to, depth + 1);
		return;
	}
	/* After the waker's wake-up, its own doings are no part of this wait. */
	ran = last_ran(w, waker, from, to);
	if (ran && to - ran <= WAKE_LAG_MAX_NS) {
		struct wp_cp_segment lag = seg(ran > from ? ran : from, to, waker, WP_CP_RUNNING,
					       depth + 1);

		walk(k, waker, from, lag.start_ns, depth + 1);
		emit(k, &lag);
		return;
	}
	if (ran > from)
		walk(k, waker, from, ran, depth + 1);
	s.start_ns = ran > from ? ran : from;
	emit(k, &s);
}

/*
 * [a, b) of thread serial's timeline; before the thread existed, that of
 * the thread that made it.
 */
static void walk(struct walker *k, uint32_t serial, uint64_t a, uint64_t b, unsigned int depth)
{
	const struct wp_waits *w = k->w;
	const struct wp_waits_thread *t = wp_waits_thread(w, serial);
	uint64_t cur = a;

	if (!t) {
		struct wp_cp_segment s = seg(a, b, serial, WP_CP_UNRECORDED, depth);

		emit(k, &s);
		return;
	}
	for (size_t i = wp_waits_first_after(w, serial, a); i < t->n && cur < b && !k->err; i++) {
		const struct wp_kept_event *p = &w->periods[t->first + i];
		uint64_t from, to;

		if (p->start_ns >= b)
			break;
		if (p->start_ns > cur) {
			/* Not yet made: its maker's doings lead to it. */
			if (!i && t->parent != WP_WAITS_NONE && depth + 1 <= WP_CP_MAX_DEPTH &&
			    !on_chain(k, t->parent, depth)) {
				k->chain[depth + 1] = t->parent;
				walk(k, t->parent, cur, p->start_ns, depth + 1);
			} else {
				struct wp_cp_segment s = seg(cur, p->start_ns, serial,
							     WP_CP_UNRECORDED, depth);

				emit(k, &s);
			}
			cur = p->start_ns;
		}
		from = cur;
		to = p->end_ns < b ? p->end_ns : b;
		switch (p->kind) {
		case WP_PERIOD_ON:
			running(k, serial, p, from, to, depth);
			break;
		case WP_PERIOD_BLOCKED:
			blocked(k, serial, p, from, to, depth);
			break;
		default: {
			struct wp_cp_segment s = seg(from, to, serial,
						     p->kind == WP_PERIOD_RUNNABLE ? WP_CP_RUNNABLE :
						     WP_CP_PREEMPTED, depth);

			s.stack = p->stack;
			emit(k, &s);
			break;
		}
		}
		cur = to;
	}
	if (cur < b) {
		struct wp_cp_segment s = seg(cur, b, serial, WP_CP_UNRECORDED, depth);

		emit(k, &s);
	}
}

int wp_critpath_compute(const struct wp_waits *w, uint32_t serial, uint64_t start,
			uint64_t end, struct wp_critpath *cp)
{
	const struct wp_waits_thread *t = wp_waits_thread(w, serial);
	struct walker k = { .w = w, .cp = cp };
	uint64_t total = 0;

	memset(cp, 0, sizeof(*cp));
	cp->serial = serial;
	if (!t)
		return -ESRCH;
	/* The thread's time that the analysis kept: its window within --time. */
	if (start < t->t->start_ns)
		start = t->t->start_ns;
	if (start < w->an->window_start)
		start = w->an->window_start;
	if (end > t->t->end_ns)
		end = t->t->end_ns;
	if (w->an->window_end && end > w->an->window_end)
		end = w->an->window_end;
	if (start >= end)
		return -ESRCH;
	cp->start_ns = start;
	cp->end_ns = end;
	k.chain[0] = serial;
	walk(&k, serial, start, end, 0);
	if (k.err) {
		wp_error("out of memory following the critical path");
		wp_critpath_release(cp);
		return k.err;
	}
	for (size_t i = 0; i < cp->nr_segs; i++)
		total += cp->segs[i].end_ns - cp->segs[i].start_ns;
	if (total != end - start)
		wp_warn("the critical path adds up to %" PRIu64 " ns of a %" PRIu64 " ns window",
			total, end - start);
	return 0;
}

void wp_critpath_release(struct wp_critpath *cp)
{
	free(cp->segs);
	memset(cp, 0, sizeof(*cp));
}
