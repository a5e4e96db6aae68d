/* SPDX-License-Identifier: GPL-2.0-or-later */
/* waits.c: the kept timeline by thread, and what ended each wait. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "symbols.h"
#include "util.h"
#include "waits.h"

/*
 * An exiting thread wakes its joiner as it goes: its window may end a
 * moment before the wake-up is dated (records of two CPUs).
 */
#define EXIT_SLACK_NS 1000000ULL

const char *wp_cause_name(enum wp_cause c)
{
	static const char *const names[] = {
		[WP_CAUSE_NONE] = "unknown", [WP_CAUSE_THREAD] = "thread",
		[WP_CAUSE_OUTSIDE] = "thread outside the recording", [WP_CAUSE_TIMER] = "timer",
		[WP_CAUSE_NETWORK] = "network", [WP_CAUSE_DISK] = "disk",
		[WP_CAUSE_INTERRUPT] = "interrupt", [WP_CAUSE_GATED] = "unrecorded",
	};

	return (unsigned int)c < WP_NR_CAUSES ? names[c] : "unknown";
}

const char *wp_softirq_name(unsigned int softirq)
{
	static const char *const names[] = {
		[WP_SOFTIRQ_HI] = "HI", [WP_SOFTIRQ_TIMER] = "TIMER",
		[WP_SOFTIRQ_NET_TX] = "NET_TX", [WP_SOFTIRQ_NET_RX] = "NET_RX",
		[WP_SOFTIRQ_BLOCK] = "BLOCK", [WP_SOFTIRQ_IRQ_POLL] = "IRQ_POLL",
		[WP_SOFTIRQ_TASKLET] = "TASKLET", [WP_SOFTIRQ_SCHED] = "SCHED",
		[WP_SOFTIRQ_HRTIMER] = "HRTIMER", [WP_SOFTIRQ_RCU] = "RCU",
	};

	return softirq && softirq < WP_NR_SOFTIRQS ? names[softirq] : NULL;
}

const char *wp_wake_context_name(unsigned int context)
{
	if (context & WP_WAKE_NMI)
		return "nmi";
	if (context & WP_WAKE_HARDIRQ)
		return "hardirq";
	if (context & WP_WAKE_SOFTIRQ)
		return "softirq";
	return "task";
}

const char *wp_waker_where(const struct wp_waker *w, char *buf, size_t size)
{
	const char *vec = wp_softirq_name(w->softirq);

	if (!w->context)
		return "";
	snprintf(buf, size, " (%s%s%s)", wp_wake_context_name(w->context), vec ? " " : "",
		 vec ? vec : "");
	return buf;
}

/*
 * A block device's request ended in this frame: a driver's completion in
 * its hard interrupt wakes the waiting thread from there.
 */
static bool disk_frame(const char *name)
{
	static const char *const names[] = {
		"blk_mq_end_request", "blk_update_request", "blk_mq_complete_request",
		"blk_complete_reqs", "bio_endio", "end_buffer_read_sync", "end_bio_bh_io_sync",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* The network stack received here (busy polling, or a driver without NAPI). */
static bool network_frame(const char *name)
{
	static const char *const prefixes[] = {
		"__napi_poll", "napi_", "netif_receive_skb", "__netif_receive_skb", "tcp_v4_rcv",
		"tcp_v6_rcv", "udp_rcv", "udpv6_rcv", "sock_def_readable",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* What an interrupt's wake-up was: by its softirq, else by its handler's frames. */
static enum wp_cause interrupt_cause(const struct wp_analysis *an, const struct wp_waker *wk)
{
	const uint32_t *frames;
	unsigned int n;

	switch (wk->softirq) {
	case WP_SOFTIRQ_TIMER:
	case WP_SOFTIRQ_HRTIMER:
		return WP_CAUSE_TIMER;
	case WP_SOFTIRQ_NET_RX:
	case WP_SOFTIRQ_NET_TX:
		return WP_CAUSE_NETWORK;
	case WP_SOFTIRQ_BLOCK:
		return WP_CAUSE_DISK;
	default:
		break;
	}
	frames = wp_stacks_get(an->stacks, wk->stack, &n);
	for (unsigned int i = 0; frames && i < n; i++) {
		const char *name;

		if (!(frames[i] & WP_FRAME_KERNEL))
			continue;
		name = wp_analysis_frame_name(an, frames[i]);
		if (disk_frame(name))
			return WP_CAUSE_DISK;
		if (network_frame(name))
			return WP_CAUSE_NETWORK;
	}
	return WP_CAUSE_INTERRUPT;
}

static enum wp_cause classify(const struct wp_analysis *an, const struct wp_waker *wk)
{
	switch (wk->kind) {
	case WP_WAKER_THREAD:
		return WP_CAUSE_THREAD;
	case WP_WAKER_TIMER:
		return WP_CAUSE_TIMER;
	case WP_WAKER_INTERRUPT:
		return interrupt_cause(an, wk);
	default:
		/* The idle task in its own context: the kernel's work, no thread's. */
		return WP_CAUSE_INTERRUPT;
	}
}

/* Whether the recording's sched_waking samples carry kernel stacks. */
static bool wakeups_have_stacks(const struct wp_meta *m)
{
	if (!(m->sample_type & PERF_SAMPLE_CALLCHAIN))
		return false;
	for (uint32_t i = 0; i < m->nr_events; i++)
		if (m->events[i].role == WP_EVENT_WAKEUP)
			return !m->events[i].attr.exclude_callchain_kernel;
	return false;
}

static int serial_cmp(const void *a, const void *b, void *arg)
{
	const struct wp_waits *w = arg;
	const struct wp_thread_times *x = w->threads[*(const uint32_t *)a].t;
	const struct wp_thread_times *y = w->threads[*(const uint32_t *)b].t;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The tid -> serials table, and each thread's parent from the forks kept. */
static int index_tids(struct wp_waits *w)
{
	const struct wp_analysis *an = w->an;
	size_t n = 0;

	w->tid_serials = calloc(w->nr_threads + 1, sizeof(*w->tid_serials));
	if (!w->tid_serials)
		return -ENOMEM;
	for (size_t s = 0; s < w->nr_threads; s++)
		if (w->threads[s].t)
			w->tid_serials[n++] = (uint32_t)s;
	qsort_r(w->tid_serials, n, sizeof(*w->tid_serials), serial_cmp, w);
	w->nr_tid_serials = n;
	for (size_t i = n; i-- > 0;)
		if (wp_u64map_put(&w->by_tid, w->threads[w->tid_serials[i]].t->tid, i + 1))
			return -ENOMEM;
	/* A thread's FORK names its maker, who was then alive. */
	for (size_t i = 0; i < an->nr_forks; i++) {
		const struct wp_kept_fork *f = &an->forks[i];
		uint32_t child = wp_waits_serial_at(w, f->child, f->time);
		uint32_t parent = wp_waits_serial_at(w, f->parent, f->time);

		if (child == WP_WAITS_NONE || parent == WP_WAITS_NONE || child == parent)
			continue;
		w->threads[child].parent = parent;
		w->threads[child].born_ns = f->time;
	}
	return 0;
}

int wp_waits_init(struct wp_waits *w, const struct wp_analysis *an)
{
	const struct wp_thread_times *th;
	size_t nth, *pos = NULL, *spos = NULL;
	int err = -ENOMEM;

	memset(w, 0, sizeof(*w));
	w->an = an;
	th = wp_account_threads(an->account, &nth);
	for (size_t i = 0; i < nth; i++)
		if (th[i].serial >= w->nr_threads)
			w->nr_threads = (size_t)th[i].serial + 1;
	w->threads = calloc(w->nr_threads + 1, sizeof(*w->threads));
	pos = calloc(w->nr_threads + 1, sizeof(*pos));
	spos = calloc(w->nr_threads + 1, sizeof(*spos));
	if (!w->threads || !pos || !spos)
		goto out;
	for (size_t s = 0; s < w->nr_threads; s++)
		w->threads[s].parent = WP_WAITS_NONE;
	for (size_t i = 0; i < nth; i++) {
		w->threads[th[i].serial].t = &th[i];
		w->threads[th[i].serial].index = (uint32_t)i;
	}
	/*
	 * Each thread's periods and samples together, in the order kept,
	 * which is each thread's time order: counted, then placed.
	 */
	for (size_t i = 0; i < an->nr_kept; i++) {
		const struct wp_kept_event *e = &an->kept[i];

		if (e->serial >= w->nr_threads)
			continue;
		if (e->kind == WP_KEPT_SAMPLE)
			w->threads[e->serial].nr_samples++;
		else
			w->threads[e->serial].n++;
	}
	for (size_t s = 0; s < w->nr_threads; s++) {
		w->threads[s].first = pos[s] = w->nr_periods;
		w->threads[s].first_sample = spos[s] = w->nr_samples;
		w->nr_periods += w->threads[s].n;
		w->nr_samples += w->threads[s].nr_samples;
	}
	w->periods = calloc(w->nr_periods + 1, sizeof(*w->periods));
	w->samples = calloc(w->nr_samples + 1, sizeof(*w->samples));
	if (!w->periods || !w->samples)
		goto out;
	for (size_t i = 0; i < an->nr_kept; i++) {
		const struct wp_kept_event *e = &an->kept[i];

		if (e->serial >= w->nr_threads)
			continue;
		if (e->kind == WP_KEPT_SAMPLE)
			w->samples[spos[e->serial]++] = (struct wp_waits_sample){
				.time = e->start_ns, .stack = e->stack };
		else
			w->periods[pos[e->serial]++] = *e;
	}
	w->wakers = wp_account_wakers(an->account, &w->nr_wakers);
	w->causes = calloc(w->nr_wakers + 1, 1);
	if (!w->causes)
		goto out;
	for (size_t i = 0; i < w->nr_wakers; i++)
		w->causes[i] = (uint8_t)classify(an, &w->wakers[i]);
	w->has_wakeups = wp_account_has_wakeups(an->account);
	w->waker_stacks = w->has_wakeups && wakeups_have_stacks(an->meta);
	err = index_tids(w);
out:
	free(pos);
	free(spos);
	if (err) {
		wp_error("out of memory indexing the timeline of '%s'", an->path ? an->path : "?");
		wp_waits_release(w);
	}
	return err;
}

void wp_waits_release(struct wp_waits *w)
{
	free(w->threads);
	free(w->periods);
	free(w->samples);
	free(w->causes);
	free(w->tid_serials);
	wp_u64map_release(&w->by_tid);
	memset(w, 0, sizeof(*w));
}

const struct wp_waits_thread *wp_waits_thread(const struct wp_waits *w, uint32_t serial)
{
	return serial < w->nr_threads && w->threads[serial].t ? &w->threads[serial] : NULL;
}

uint32_t wp_waits_serial_at(const struct wp_waits *w, uint32_t tid, uint64_t time)
{
	uint32_t best = WP_WAITS_NONE;
	uint64_t at;

	if (!wp_u64map_get(&w->by_tid, tid, &at) || !at)
		return WP_WAITS_NONE;
	/* Its threads by start: the latest that began by then. */
	for (size_t i = at - 1; i < w->nr_tid_serials; i++) {
		const struct wp_thread_times *t = w->threads[w->tid_serials[i]].t;

		if (!t || t->tid != tid || t->start_ns > time)
			break;
		best = w->tid_serials[i];
	}
	if (best != WP_WAITS_NONE && w->threads[best].t->end_ns + EXIT_SLACK_NS < time)
		return WP_WAITS_NONE;
	return best;
}

enum wp_cause wp_waits_waker_cause(const struct wp_waits *w, uint32_t waker)
{
	return waker < w->nr_wakers ? (enum wp_cause)w->causes[waker] : WP_CAUSE_NONE;
}

enum wp_cause wp_waits_cause(const struct wp_waits *w, const struct wp_kept_event *p,
			     uint32_t *serial)
{
	enum wp_cause c = wp_waits_waker_cause(w, p->waker);

	*serial = WP_WAITS_NONE;
	if (p->kind != WP_PERIOD_BLOCKED)
		return WP_CAUSE_NONE;
	/*
	 * Gated: the gate's open slots are a random sample of time, so the
	 * recorded wakers stand for it; dropped by the kernel with the
	 * tracepoints on, nothing does: unknown.
	 */
	if (c == WP_CAUSE_NONE && !(p->flags & WP_KEPT_WAKEUP_DROPPED) &&
	    (p->flags & (WP_KEPT_WAKEUP_UNRECORDED | WP_KEPT_WAKER_UNRECORDED)))
		return WP_CAUSE_GATED;
	if (c != WP_CAUSE_THREAD)
		return c;
	*serial = wp_waits_serial_at(w, w->wakers[p->waker].tid, p->end_ns);
	return *serial == WP_WAITS_NONE ? WP_CAUSE_OUTSIDE : WP_CAUSE_THREAD;
}

/* A frame that says only that a thread slept or was woken. */
static bool plumbing_frame(const struct wp_analysis *an, uint32_t tok)
{
	static const char *const prefixes[] = {
		"schedule", "preempt_schedule", "io_schedule", "cond_resched", "try_to_wake_up",
		"wake_up", "autoremove_wake", "default_wake", "woken_wake", "pollwake",
		"ep_autoremove_wake", "ttwu", "traceiter_", "perf_trace_", "trace_event_",
	};
	const char *name;

	if (!(tok & WP_FRAME_KERNEL))
		return false;
	name = wp_analysis_frame_name(an, tok);
	name += strspn(name, "_");
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

void wp_waits_put_stack(FILE *out, const struct wp_analysis *an, uint32_t stack,
			unsigned int max, enum wp_quote_mode mode)
{
	const uint32_t *frames = NULL;
	unsigned int n = 0, f = 0, shown = 0;

	if (stack != UINT32_MAX)
		frames = wp_stacks_get(an->stacks, stack, &n);
	if (!frames || !n) {
		fputs("[none]", out);
		return;
	}
	while (f + 1 < n && plumbing_frame(an, frames[f]))
		f++;
	for (; f < n && shown < max; f++, shown++) {
		if (shown)
			wp_quote_puts(out, " < ", mode);
		wp_quote_puts(out, wp_analysis_frame_name(an, frames[f]), mode);
		/* The syscall's way in says less than where the program was. */
		if ((frames[f] & WP_FRAME_KERNEL) && f + 1 < n &&
		    (frames[f + 1] & WP_FRAME_KERNEL) && !(frames[n - 1] & WP_FRAME_KERNEL)) {
			while (f + 1 < n && (frames[f + 1] & WP_FRAME_KERNEL))
				f++;
			wp_quote_puts(out, " < [kernel]", mode);
		}
	}
	if (f < n)
		fprintf(out, " ... %u more", n - f);
}

size_t wp_waits_first_after(const struct wp_waits *w, uint32_t serial, uint64_t time)
{
	const struct wp_waits_thread *t = wp_waits_thread(w, serial);
	size_t lo = 0, hi;

	if (!t)
		return 0;
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->periods[t->first + mid].end_ns <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
