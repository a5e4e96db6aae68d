/* SPDX-License-Identifier: GPL-2.0-or-later */
/* monitor.c: every thread's time, interval by interval, from the timeline's segments. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "layout.h"
#include "log.h"
#include "monitor.h"
#include "procmap.h"
#include "quote.h"
#include "rotate.h"
#include "samplekind.h"
#include "samplestack.h"
#include "stacktable.h"
#include "strpool.h"
#include "symbols.h"
#include "tasknames.h"
#include "timeline.h"
#include "u64map.h"
#include "util.h"

#define MAX_TOKENS 128
/*
 * How long an interval is held for the threads' figures read at its end
 * (wp_monitor_expect_clocks), at most: a read of thousands of threads
 * takes some 10 ms, but on a machine with twenty runnable threads a CPU
 * the reader (at a higher priority only with CAP_SYS_NICE) may start a
 * few hundred ms late.
 */
#define MAX_HOLD_NS (500ULL * 1000 * 1000)
/* Rows of one interval at most: past it, threads are left out and counted. */
#define MAX_ROWS 65536

struct wp_monitor {
	uint64_t interval_ns;
	wp_mon_interval_fn fn;
	void *fn_arg;
	const struct wp_meta *meta;
	const struct wp_arch *arch;	/* the recorded machine's, or NULL */
	/* Names the recorder read of wakers it does not follow (TASK_NAME), as report has them. */
	struct wp_tasknames *names;
	struct wp_sample_format fmt;
	struct wp_sample_kinds kinds;
	bool have_kinds;
	struct wp_timeline *tl;
	struct wp_procmap *pm;
	struct wp_resolver *resolver;
	struct wp_stacktable *table;
	struct wp_strpool *pool;
	struct wp_symbols *symbols;
	pthread_mutex_t lock;		/* the names (symbols, table): the UI asks too */
	struct wp_sample_stack ss;
	uint32_t tokens[MAX_TOKENS];
	struct wp_u64map kind_of;	/* stack -> enum wp_block_kind + 1 */
	struct wp_u64map class_of;	/* waker stack << 8 | context -> kind | softirq << 8 */
	/*
	 * Live thread (serial) -> the stack of its last wait whose
	 * switch-out stack was taken.  Removed at the thread's exit.
	 */
	struct wp_u64map last_wait;
	/* the interval being counted */
	uint64_t start_ns, end_ns, index;
	struct wp_mon_row *rows;
	size_t nr_rows, cap_rows;
	struct wp_u64map row_of;	/* serial -> index + 1 */
	uint64_t lost;
	/*
	 * The interval closed last, held for hold_ns after its end when the
	 * recording reads the threads' own figures at each interval's end
	 * (wp_monitor_expect_clocks): those figures, dated just after the
	 * end, anchor its rows before they are shown.
	 */
	struct wp_mon_row *held;
	size_t nr_held, cap_held;
	uint64_t held_start, held_end, held_lost;
	bool holding;
	uint64_t hold_ns;		/* 0: shown at once */
	struct mon_clock *clocks;	/* by thread serial */
	size_t cap_clocks;
	struct wp_wake_seen seen;	/* every thread's recorded waits, since the start */
	uint64_t forgotten;		/* exited threads the timeline let go */
	size_t processes_forgotten;	/* exited processes the process model let go */
	bool stopped;
};

/*
 * A thread's last THREAD_CLOCK (the kernel's schedstat figures), and what
 * the span from it to the next one gave the interval held then.
 */
struct mon_clock {
	uint32_t tid;			/* whose: serials go to new threads */
	uint64_t start_ns;		/* its start, likewise */
	uint64_t time, on_ns, queued_ns;	/* the last figures, and when */
	bool set;
	/* For the held interval whose end is `to`: */
	uint64_t from, to;		/* the span between its figures */
	bool from_birth;		/* from its birth in the interval */
	uint64_t span_on_ns, span_queued_ns;	/* what the kernel counted in it */
};

static const char *const block_names[WP_BLOCK_KINDS] = {
	"lock", "io", "sleep", "net", "other",
};

const char *wp_block_kind_name(enum wp_block_kind k)
{
	return (unsigned int)k < WP_BLOCK_KINDS ? block_names[k] : "?";
}

/* Frames the scheduler and the tracers add on top of every switch-out. */
static bool sched_frame(const char *name)
{
	static const char *const prefixes[] = {
		"__schedule", "schedule", "preempt_schedule", "__cond_resched", "_cond_resched",
		"__traceiter", "perf_", "__perf", "context_switch", "finish_task_switch",
		"io_schedule", "__bpf_trace", "trace_",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return wp_symbols_tracing_name(name);
}

/* The frames of a stack id as tokens; under m->lock. */
static unsigned int stack_tokens(struct wp_monitor *m, uint32_t stack, uint32_t *out,
				 unsigned int max)
{
	unsigned int n = 0;

	if (stack == WP_NO_STACK || !m->table || !wp_stacktable_get(m->table, stack, &m->ss))
		return 0;
	for (unsigned int i = 0; i < m->ss.nr_chain && n < max; i++) {
		struct wp_place pl;

		if (wp_resolver_place(m->resolver, m->ss.chain[i], &pl))
			n += wp_symbols_place(m->symbols, &pl, out + n, max - n);
	}
	if (m->ss.flags & WP_SSTACK_UNWOUND) {
		for (unsigned int i = 0; i < m->ss.nr_user && n < max; i++) {
			struct wp_place pl;

			if (wp_resolver_place(m->resolver, m->ss.user[i], &pl))
				n += wp_symbols_place(m->symbols, &pl, out + n, max - n);
		}
	}
	return n;
}

static const char *tok_name(const struct wp_monitor *m, uint32_t tok)
{
	const char *s = wp_strpool_get(m->pool, WP_FRAME_NAME(tok));

	return s ? s : "?";
}

unsigned int wp_monitor_frames(struct wp_monitor *m, uint32_t stack, const char **names,
			       bool *kernel, unsigned int max)
{
	uint32_t toks[MAX_TOKENS];
	unsigned int n, k = 0;

	pthread_mutex_lock(&m->lock);
	n = stack_tokens(m, stack, toks, MAX_TOKENS);
	for (unsigned int i = 0; i < n && k < max; i++) {
		const char *name = tok_name(m, toks[i]);
		bool kern = toks[i] & WP_FRAME_KERNEL;

		/* Only the scheduler's frames on top: below them is the wait. */
		if (kern && !k && sched_frame(name))
			continue;
		names[k] = name;
		kernel[k++] = kern;
	}
	pthread_mutex_unlock(&m->lock);
	return k;
}

const char *wp_monitor_wait_frame(struct wp_monitor *m, uint32_t stack, char *buf, size_t size)
{
	const char *names[MAX_TOKENS];
	bool kernel[MAX_TOKENS];
	const char *kern = NULL, *user = NULL;
	unsigned int n = wp_monitor_frames(m, stack, names, kernel, MAX_TOKENS);

	for (unsigned int i = 0; i < n; i++) {
		if (kernel[i] && !kern)
			kern = names[i];
		/* The innermost named user frame, past the C library's wrappers. */
		if (!kernel[i] && !user && names[i][0] != '[' && strncmp(names[i], "__", 2))
			user = names[i];
	}
	if (kern && user)
		snprintf(buf, size, "%s < %s", kern, user);
	else if (kern || user)
		snprintf(buf, size, "%s", kern ? kern : user);
	else
		snprintf(buf, size, "%s", stack == WP_NO_STACK ? "[no stack]" : "[unnamed]");
	return buf;
}

/*
 * What a wait is, from the kernel frames it was switched out in: the
 * first frame that tells wins, innermost first.
 */
static enum wp_block_kind classify_name(const char *f)
{
	static const struct {
		const char *part;
		enum wp_block_kind kind;
	} words[] = {
		{ "nanosleep", WP_BLOCK_SLEEP }, { "hrtimer_sleep", WP_BLOCK_SLEEP },
		{ "msleep", WP_BLOCK_SLEEP }, { "alarm_", WP_BLOCK_SLEEP },
		{ "futex", WP_BLOCK_LOCK }, { "mutex_lock", WP_BLOCK_LOCK },
		{ "rwsem", WP_BLOCK_LOCK }, { "down_read", WP_BLOCK_LOCK },
		{ "down_write", WP_BLOCK_LOCK }, { "flock", WP_BLOCK_LOCK },
		{ "locks_lock", WP_BLOCK_LOCK }, { "sem_", WP_BLOCK_LOCK },
		{ "sock_", WP_BLOCK_NET }, { "tcp_", WP_BLOCK_NET }, { "udp_", WP_BLOCK_NET },
		{ "inet_", WP_BLOCK_NET }, { "unix_", WP_BLOCK_NET }, { "sk_wait", WP_BLOCK_NET },
		{ "skb_recv", WP_BLOCK_NET }, { "netlink", WP_BLOCK_NET },
		{ "pipe_", WP_BLOCK_IO }, { "pipe_read", WP_BLOCK_IO },
		{ "io_schedule", WP_BLOCK_IO }, { "folio_wait", WP_BLOCK_IO },
		{ "wait_on_page", WP_BLOCK_IO }, { "blk_", WP_BLOCK_IO }, { "bio_", WP_BLOCK_IO },
		{ "filemap", WP_BLOCK_IO }, { "n_tty", WP_BLOCK_IO }, { "tty_", WP_BLOCK_IO },
		{ "ep_poll", WP_BLOCK_IO }, { "epoll_wait", WP_BLOCK_IO },
		{ "epoll_pwait", WP_BLOCK_IO }, { "do_sys_poll", WP_BLOCK_IO },
		{ "poll_schedule_timeout", WP_BLOCK_IO }, { "core_sys_select", WP_BLOCK_IO },
		{ "do_select", WP_BLOCK_IO }, { "io_uring", WP_BLOCK_IO },
		{ "aio_", WP_BLOCK_IO }, { "jbd2", WP_BLOCK_IO }, { "ext4_", WP_BLOCK_IO },
		{ "xfs_", WP_BLOCK_IO }, { "nfs", WP_BLOCK_IO }, { "fuse_", WP_BLOCK_IO },
		{ "inotify", WP_BLOCK_IO }, { "eventfd", WP_BLOCK_IO },
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strstr(f, words[i].part))
			return words[i].kind;
	return WP_BLOCK_KINDS;
}

/* A switch-out stack's kind of wait, kept per stack. */
static enum wp_block_kind stack_kind(struct wp_monitor *m, uint32_t stack)
{
	enum wp_block_kind k = WP_BLOCK_KINDS;
	unsigned int n;
	uint64_t v;

	if (stack == WP_NO_STACK)
		return WP_BLOCK_KINDS;
	if (wp_u64map_get(&m->kind_of, stack, &v))
		return (enum wp_block_kind)(v - 1);
	pthread_mutex_lock(&m->lock);
	n = stack_tokens(m, stack, m->tokens, MAX_TOKENS);
	for (unsigned int i = 0; i < n && k == WP_BLOCK_KINDS; i++)
		if (m->tokens[i] & WP_FRAME_KERNEL)
			k = classify_name(tok_name(m, m->tokens[i]));
	/*
	 * No kernel frames (a wait that began before the recording, read
	 * from /proc, or -g fp without them): the C library's wrapper of
	 * the system call, the innermost user frames, tells instead.
	 */
	if (k == WP_BLOCK_KINDS && !(n && (m->tokens[0] & WP_FRAME_KERNEL)))
		for (unsigned int i = 0; i < n && i < 3 && k == WP_BLOCK_KINDS; i++)
			k = classify_name(tok_name(m, m->tokens[i]));
	pthread_mutex_unlock(&m->lock);
	/* Without memory it is only classified again next time. */
	wp_u64map_put(&m->kind_of, stack, (uint64_t)k + 1);
	return k;
}

/* Frame i of the stack in m->tokens, for wp_waker_classify (m->lock held). */
static const char *token_frame(unsigned int i, bool *kernel, void *arg)
{
	const struct wp_monitor *m = arg;

	*kernel = m->tokens[i] & WP_FRAME_KERNEL;
	return tok_name(m, m->tokens[i]);
}

/*
 * What an interrupt's wake-up stack (context: WP_WAKE_* bits) says of its
 * waker, as report's ledger reads it (wp_waker_classify), for a thread
 * that ran then (a thread's own send comes back THREAD).  Kept by stack
 * and context.
 */
static void waker_class(struct wp_monitor *m, uint32_t stack, uint8_t context,
			struct wp_waker_class *c)
{
	uint64_t key = (uint64_t)stack << 8 | context, v;
	unsigned int n;

	*c = (struct wp_waker_class){ .kind = WP_WAKER_INTERRUPT };
	if (stack == WP_NO_STACK)
		return;
	if (wp_u64map_get(&m->class_of, key, &v)) {
		c->kind = (enum wp_waker_kind)(v & 0xff);
		c->softirq = (uint8_t)(v >> 8);
		return;
	}
	pthread_mutex_lock(&m->lock);
	n = stack_tokens(m, stack, m->tokens, MAX_TOKENS);
	wp_waker_classify(m->arch, context, 1, n, token_frame, m, c);
	pthread_mutex_unlock(&m->lock);
	/* Without memory it is only classified again next time. */
	wp_u64map_put(&m->class_of, key, (uint64_t)c->kind | (uint64_t)c->softirq << 8);
}

/* Whether an interrupt's wake-up stack is a timer's expiry. */
static bool timer_stack(struct wp_monitor *m, uint32_t stack)
{
	struct wp_waker_class c;

	waker_class(m, stack, WP_WAKE_HARDIRQ, &c);
	return c.kind == WP_WAKER_TIMER;
}

/* The row of a thread in this interval (made if new), or NULL. */
static struct wp_mon_row *row_for(struct wp_monitor *m, uint32_t serial)
{
	const struct wp_tl_thread *t;
	struct wp_mon_row *r;
	uint64_t at;

	if (wp_u64map_get(&m->row_of, serial, &at))
		return &m->rows[at - 1];
	t = wp_timeline_thread(m->tl, serial);
	if (!t || m->nr_rows >= MAX_ROWS || WP_GROW(m->rows, m->cap_rows, m->nr_rows + 1))
		return NULL;
	if (wp_u64map_put(&m->row_of, serial, m->nr_rows + 1))
		return NULL;
	r = &m->rows[m->nr_rows++];
	memset(r, 0, sizeof(*r));
	r->pid = t->pid;
	r->tid = t->tid;
	r->serial = serial;
	r->wait_stack = -1;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	return r;
}

/*
 * Add ns to a row's stack of a state (and kind): a few are kept; a new
 * one takes the place of the smallest, with its count, as the
 * space-saving count does, so that the heaviest stay.
 */
static struct wp_mon_stack *add_stack(struct wp_mon_row *r, uint32_t stack, enum wp_mon_state st,
				      uint8_t kind, uint64_t ns)
{
	bool on = st == WP_MON_ON;
	struct wp_mon_stack *s = r->stacks + (on ? 0 : WP_MON_STACKS), *min = NULL;

	for (unsigned int i = 0; i < WP_MON_STACKS; i++) {
		if (s[i].count && s[i].stack == stack && s[i].state == st) {
			s[i].ns += ns;
			s[i].count++;
			return &s[i];
		}
		if (!min || s[i].count == 0 || (min->count && s[i].ns < min->ns))
			if (!min || min->count)
				min = &s[i];
	}
	if (min->count == 0) {
		*min = (struct wp_mon_stack){ .stack = stack, .state = (uint8_t)st, .kind = kind,
					      .ns = ns, .count = 1, .waker = -1 };
	} else {
		min->stack = stack;
		min->state = (uint8_t)st;
		min->kind = kind;
		min->ns += ns;
		min->count++;
		min->waker = -1;
	}
	return min;
}

static void add_waker(struct wp_monitor *m, struct wp_mon_row *r, uint32_t waker, uint64_t ns)
{
	size_t nw;
	const struct wp_waker *all = wp_timeline_wakers(m->tl, &nw), *w;
	struct wp_mon_waker *min = NULL;

	if (waker >= nw)
		return;
	w = &all[waker];
	for (unsigned int i = 0; i < r->nr_wakers; i++) {
		struct wp_mon_waker *x = &r->wakers[i];

		if (x->kind == w->kind && x->tid == w->tid) {
			x->ns += ns;
			x->count++;
			return;
		}
		if (!min || x->ns < min->ns)
			min = x;
	}
	if (r->nr_wakers < WP_MON_WAKERS)
		min = &r->wakers[r->nr_wakers++];
	else
		ns += min->ns;
	*min = (struct wp_mon_waker){ .pid = w->pid, .tid = w->tid, .kind = w->kind, .ns = ns,
				      .count = 1 };
	memcpy(min->comm, w->comm, sizeof(min->comm));
}

/* The part of [start, end) in this interval. */
static uint64_t overlap(const struct wp_monitor *m, uint64_t start, uint64_t end)
{
	if (start < m->start_ns)
		start = m->start_ns;
	if (end > m->end_ns)
		end = m->end_ns;
	return end > start ? end - start : 0;
}

/* Count a stretch of a thread's state; stack and waker only for off-CPU time. */
static void count_state(struct wp_monitor *m, uint32_t serial, enum wp_mon_state st,
			uint64_t ns, uint32_t stack, uint32_t waker, uint32_t waker_stack)
{
	struct wp_mon_row *r = row_for(m, serial);
	enum wp_block_kind kind = WP_BLOCK_OTHER;

	if (!r)
		return;
	switch (st) {
	case WP_MON_ON:
		r->on_ns += ns;
		return;
	case WP_MON_RUNNABLE:
		r->runnable_ns += ns;
		break;
	case WP_MON_PREEMPTED:
		r->preempted_ns += ns;
		break;
	case WP_MON_BLOCKED: {
		uint64_t last;
		size_t nw;
		const struct wp_waker *w = wp_timeline_wakers(m->tl, &nw);

		if (stack != WP_NO_STACK) {
			wp_u64map_put(&m->last_wait, serial, stack);
		} else if (wp_u64map_get(&m->last_wait, serial, &last)) {
			/*
			 * Not sampled (a storm elsewhere took the budget of
			 * stacks): the thread's last sampled wait, likely the
			 * same one again, rather than "other".
			 */
			stack = (uint32_t)last;
		}
		kind = stack_kind(m, stack);
		/* A timer ended it: a sleep, whatever the frames did not tell. */
		if (kind == WP_BLOCK_KINDS && waker < nw &&
		    (w[waker].kind == WP_WAKER_TIMER ||
		     (w[waker].kind == WP_WAKER_INTERRUPT && timer_stack(m, waker_stack))))
			kind = WP_BLOCK_SLEEP;
		if (kind == WP_BLOCK_KINDS && stack == WP_NO_STACK) {
			/* Its kind is that of the waits whose stacks were taken (finish_row). */
			r->blocked_unsampled_ns += ns;
			kind = WP_BLOCK_OTHER;
		} else if (kind == WP_BLOCK_KINDS) {
			kind = WP_BLOCK_OTHER;
			r->blocked_ns[kind] += ns;
		} else {
			r->blocked_ns[kind] += ns;
		}
		if (waker != WP_NO_WAKER)
			add_waker(m, r, waker, ns);
		break;
	}
	}
	add_stack(r, stack, st, (uint8_t)kind, ns);
}

static void on_segment(void *arg, const struct wp_segment *seg)
{
	struct wp_monitor *m = arg;
	uint64_t ns = overlap(m, seg->start_ns, seg->end_ns);
	static const enum wp_mon_state states[] = {
		[WP_SEG_RUNNING] = WP_MON_ON, [WP_SEG_BLOCKED] = WP_MON_BLOCKED,
		[WP_SEG_RUNNABLE] = WP_MON_RUNNABLE, [WP_SEG_PREEMPTED] = WP_MON_PREEMPTED,
	};
	uint32_t waker_stack = WP_NO_STACK;
	struct wp_mon_row *r;

	if (seg->kind == WP_SEG_UNKNOWN)
		return;
	/* A switch-out in this interval: the off-CPU stretch it began. */
	if (seg->kind != WP_SEG_RUNNING && (seg->flags & WP_SEG_SWITCH_OUT) &&
	    seg->start_ns == seg->off_start_ns && seg->start_ns >= m->start_ns &&
	    seg->start_ns < m->end_ns && (r = row_for(m, seg->thread))) {
		r->switches++;
		if (seg->kind == WP_SEG_PREEMPTED)
			r->involuntary++;
		else
			r->voluntary++;
	}
	if ((seg->flags & WP_SEG_APPROXIMATE) && (r = row_for(m, seg->thread)))
		r->approximate = true;
	/*
	 * Waits that ended in this interval, for the estimate of the runnable
	 * part of those whose wake-up was not recorded (finish_row).
	 */
	if (seg->end_ns > m->start_ns && seg->end_ns <= m->end_ns) {
		if ((seg->flags & WP_SEG_FAIR_SAMPLE) && (r = row_for(m, seg->thread)))
			wp_wake_seen_add(&r->seen, &m->seen, seg->end_ns - seg->off_start_ns,
					 seg->end_ns - seg->woken_ns);
		if (seg->kind == WP_SEG_BLOCKED && (seg->flags & WP_SEG_WAKEUP_UNRECORDED) &&
		    (r = row_for(m, seg->thread))) {
			r->unsplit_ns += seg->end_ns - (seg->start_ns > m->start_ns ? seg->start_ns
										    : m->start_ns);
			r->unsplit_count++;
		}
	}
	if (!ns)
		return;
	if (seg->kind == WP_SEG_BLOCKED && seg->waker != WP_NO_WAKER) {
		size_t nw;
		const struct wp_waker *w = wp_timeline_wakers(m->tl, &nw);

		if (seg->waker < nw)
			waker_stack = w[seg->waker].stack;
	}
	count_state(m, seg->thread, states[seg->kind], ns,
		    seg->kind == WP_SEG_RUNNING ? WP_NO_STACK : seg->stack, seg->waker, waker_stack);
}

static void on_sample(void *arg, uint32_t thread, uint64_t time, uint32_t stack, uint32_t cpu)
{
	struct wp_monitor *m = arg;
	struct wp_mon_row *r;

	(void)cpu;
	if (time < m->start_ns || time >= m->end_ns || !(r = row_for(m, thread)))
		return;
	r->samples++;
	add_stack(r, stack, WP_MON_ON, 0, 0);
}

static void on_exited(void *arg, uint32_t thread, uint64_t time, uint64_t running_since,
		      uint64_t counted_until)
{
	struct wp_monitor *m = arg;
	struct wp_mon_row *r;

	(void)running_since;
	(void)counted_until;
	if (time >= m->start_ns && (r = row_for(m, thread)))
		r->exited = true;
	wp_u64map_del(&m->last_wait, thread);
}

static void on_lost(void *arg, uint64_t n, uint64_t time)
{
	struct wp_monitor *m = arg;

	(void)time;
	m->lost += n;
}

/* Each live thread's state at the close counts up to it. */
static int count_open(void *arg, const struct wp_tl_thread *t, const struct wp_tl_state *st)
{
	struct wp_monitor *m = arg;
	uint64_t since;

	if (wp_timeline_undecided(m->tl, t->serial)) {
		struct wp_mon_row *r;
		uint64_t at;

		/*
		 * Not switched since the attach: a thread on a CPU all along
		 * has on-CPU samples in the interval; one without any has been
		 * off it since before the recording (a blocked main thread),
		 * which it is not known why.
		 */
		wp_timeline_running_since(m->tl, t->serial, &since);
		r = wp_u64map_get(&m->row_of, t->serial, &at) ? &m->rows[at - 1] : NULL;
		count_state(m, t->serial, r && r->samples ? WP_MON_ON : WP_MON_BLOCKED,
			    overlap(m, since, m->end_ns), WP_NO_STACK, WP_NO_WAKER, WP_NO_STACK);
	} else if (wp_timeline_running_since(m->tl, t->serial, &since)) {
		count_state(m, t->serial, WP_MON_ON, overlap(m, since, m->end_ns), WP_NO_STACK,
			    WP_NO_WAKER, WP_NO_STACK);
	} else if (wp_timeline_queued_since(m->tl, t->serial, &since)) {
		count_state(m, t->serial, st->off && st->preempted ? WP_MON_PREEMPTED :
			    WP_MON_RUNNABLE, overlap(m, since, m->end_ns),
			    st->off ? st->stack : WP_NO_STACK, WP_NO_WAKER, WP_NO_STACK);
	} else if (st->off) {
		count_state(m, t->serial, WP_MON_BLOCKED, overlap(m, st->off_since, m->end_ns),
			    st->stack, WP_NO_WAKER, WP_NO_STACK);
	}
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct wp_mon_stack *x = a, *y = b;

	if (!x->count != !y->count)
		return x->count ? -1 : 1;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static int cmp_waker(const void *a, const void *b)
{
	const struct wp_mon_waker *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/*
 * The runnable part of r's waits whose wake-up was not recorded, moved
 * from blocked: the thread's recorded waits of this interval stand for
 * them, else everyone's since the start (wakeest.h).  Each kind of wait,
 * and each blocked stack, gives its share.
 */
static void estimate_runnable(const struct wp_monitor *m, struct wp_mon_row *r)
{
	struct wp_mon_stack *off = r->stacks + WP_MON_STACKS;
	uint64_t blocked = wp_mon_row_blocked(r), moved, given = 0;

	if (!r->unsplit_count || !blocked)
		return;
	r->runnable_unknown_ns = r->unsplit_ns < blocked ? r->unsplit_ns : blocked;
	moved = wp_wake_runnable_part(&r->seen, &m->seen, r->unsplit_count, r->unsplit_ns);
	if (moved > r->unsplit_ns)
		moved = r->unsplit_ns;
	if (moved > blocked)
		moved = blocked;
	if (!moved)
		return;
	for (int k = 0; k < WP_BLOCK_KINDS; k++) {
		uint64_t part = (uint64_t)((double)moved * (double)r->blocked_ns[k] / (double)blocked);

		if (part > r->blocked_ns[k])
			part = r->blocked_ns[k];
		r->blocked_ns[k] -= part;
		given += part;
	}
	for (int k = 0; given < moved && k < WP_BLOCK_KINDS; k++) {
		uint64_t part = moved - given < r->blocked_ns[k] ? moved - given : r->blocked_ns[k];

		r->blocked_ns[k] -= part;
		given += part;
	}
	for (unsigned int i = 0; i < WP_MON_STACKS; i++)
		if (off[i].count && off[i].state == WP_MON_BLOCKED)
			off[i].ns -= (uint64_t)((double)off[i].ns * (double)given / (double)blocked);
	r->runnable_ns += given;
	r->runnable_estimated_ns = given;
}

/* The clock slot of a thread (made, or taken over from a forgotten one), or NULL. */
static struct mon_clock *clock_slot(struct wp_monitor *m, const struct wp_tl_thread *t)
{
	struct mon_clock *c;

	if (t->serial >= m->cap_clocks) {
		size_t cap = m->cap_clocks, want = (size_t)t->serial + 1;

		if (WP_GROW(m->clocks, m->cap_clocks, want))
			return NULL;
		memset(m->clocks + cap, 0, (m->cap_clocks - cap) * sizeof(*m->clocks));
	}
	c = &m->clocks[t->serial];
	if (c->tid != t->tid || c->start_ns != t->start_ns) {
		*c = (struct mon_clock){ .tid = t->tid, .start_ns = t->start_ns };
		/* Made in the recording: its figures began at 0 then. */
		if (t->born)
			c->set = true, c->time = t->start_ns;
	}
	return c;
}

/*
 * A thread's figures read now (a THREAD_CLOCK): with those read at the
 * held interval's start (or its birth in it), what the kernel counted
 * over the span between is the interval's, when the two reads are within
 * the hold of its ends.
 */
static int thread_clock(struct wp_monitor *m, const struct perf_event_header *rec)
{
	struct wp_record_thread_clock tc;
	const struct wp_tl_thread *t;
	struct mon_clock *c;
	bool from_start, from_birth;

	if (wp_thread_clock_parse(rec, &tc) || tc.header.misc == WP_CLOCK_EXIT)
		return 0;
	t = wp_timeline_find(m->tl, tc.tid);
	if (!t || t->pid != tc.pid || !(c = clock_slot(m, t)))
		return 0;
	from_start = c->time + m->hold_ns >= m->held_start &&
		     c->time <= m->held_start + m->hold_ns;
	from_birth = t->born && c->time == t->start_ns && c->time >= m->held_start &&
		     c->time < m->held_end;
	if (c->set && m->holding && tc.time >= m->held_end && tc.time - m->held_end <= m->hold_ns &&
	    (from_start || from_birth) && tc.time > c->time && tc.on_cpu_ns >= c->on_ns &&
	    tc.runq_ns >= c->queued_ns) {
		c->from = c->time;
		c->from_birth = from_birth && !from_start;
		c->to = tc.time;
		c->span_on_ns = tc.on_cpu_ns - c->on_ns;
		c->span_queued_ns = tc.runq_ns - c->queued_ns;
	}
	c->time = tc.time;
	c->on_ns = tc.on_cpu_ns;
	c->queued_ns = tc.runq_ns;
	c->set = true;
	return 0;
}

/* ns scaled by num/den, in 128 bits. */
static uint64_t scaled(uint64_t ns, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)ns * num / den) : 0;
}

/*
 * Anchor a held row to the kernel's figures over its interval (the
 * thread's schedstat read at both ends, thread_clock): switch records
 * come after the switch, so a storm of short slices reads on-CPU time
 * short and the waits long; and the wake-ups the budget left unrecorded
 * leave the waits for a CPU after them counted blocked.  The kernel's
 * on-CPU and run-queue times replace the records', scaled from the span
 * between the reads to the interval; the run-queue time is shared
 * between runnable and preempted as the records have them (the excess
 * over the records' is the unrecorded wake-ups', runnable); blocked is
 * the rest, each kind and stack keeping its share.  Off by at most what
 * the thread ran or queued between each read and the interval's end
 * nearest it (kernel_offset_ns).  false: no figures for it.
 */
static bool anchor_row(const struct wp_monitor *m, struct wp_mon_row *r)
{
	const struct mon_clock *c = r->serial < m->cap_clocks ? &m->clocks[r->serial] : NULL;
	struct wp_mon_stack *off = r->stacks + WP_MON_STACKS;
	uint64_t from = m->held_start, alive, on, queued, blocked, rec_queued, rec_blocked;
	uint64_t runnable, preempted, given = 0;
	int top = WP_BLOCK_OTHER;

	if (!c || r->exited || c->tid != r->tid || c->to < m->held_end ||
	    c->to - m->held_end > m->hold_ns || c->to <= c->from)
		return false;
	if (c->from_birth)
		from = c->from;
	rec_blocked = wp_mon_row_blocked(r);
	rec_queued = r->runnable_ns + r->preempted_ns;
	alive = r->on_ns + rec_queued + rec_blocked;
	on = scaled(c->span_on_ns, m->held_end - from, c->to - c->from);
	queued = scaled(c->span_queued_ns, m->held_end - from, c->to - c->from);
	if (on > alive)
		on = alive;
	if (queued > alive - on)
		queued = alive - on;
	blocked = alive - on - queued;
	if (rec_queued >= queued) {
		preempted = scaled(r->preempted_ns, queued, rec_queued);
		runnable = queued - preempted;
	} else {
		preempted = r->preempted_ns;
		runnable = queued - preempted;
	}
	for (unsigned int i = 0; i < WP_MON_STACKS; i++) {
		if (!off[i].count)
			continue;
		if (off[i].state == WP_MON_BLOCKED)
			off[i].ns = scaled(off[i].ns, blocked, rec_blocked);
		else if (off[i].state == WP_MON_RUNNABLE)
			off[i].ns = scaled(off[i].ns, runnable, r->runnable_ns);
		else if (off[i].state == WP_MON_PREEMPTED)
			off[i].ns = scaled(off[i].ns, preempted, r->preempted_ns);
	}
	/* The rounding's remainder to the heaviest kind. */
	for (int k = 0; k < WP_BLOCK_KINDS; k++)
		if (r->blocked_ns[k] > r->blocked_ns[top])
			top = k;
	for (int k = 0; k < WP_BLOCK_KINDS; k++) {
		r->blocked_ns[k] = scaled(r->blocked_ns[k], blocked, rec_blocked);
		given += r->blocked_ns[k];
	}
	r->blocked_ns[top] += blocked - given;
	r->on_records_ns = r->on_ns;
	r->on_ns = on;
	r->runnable_ns = runnable;
	r->preempted_ns = preempted;
	r->anchored = true;
	r->kernel_offset_ns = (c->from > from ? c->from - from : from - c->from) +
			      (c->to - m->held_end);
	return true;
}

/*
 * A row made ready to show: on-CPU samples share out the on-CPU time,
 * the runnable part of unrecorded wake-ups estimated, stacks and wakers
 * sorted, the heaviest blocked stack found.
 */
static void finish_row(const struct wp_monitor *m, struct wp_mon_row *r)
{
	struct wp_mon_stack *on = r->stacks, *off = r->stacks + WP_MON_STACKS;
	uint64_t samples = 0, best = 0;

	qsort(r->wakers, r->nr_wakers, sizeof(*r->wakers), cmp_waker);
	r->nr_stacks = 2 * WP_MON_STACKS;
	/* Unsampled waits: shared as the sampled ones are, else "other". */
	if (r->blocked_unsampled_ns) {
		uint64_t known = 0, given = 0;

		for (int k = 0; k < WP_BLOCK_KINDS; k++)
			known += r->blocked_ns[k];
		for (int k = 0; known && k < WP_BLOCK_KINDS; k++) {
			uint64_t part = (uint64_t)((double)r->blocked_unsampled_ns *
						   (double)r->blocked_ns[k] / (double)known);

			r->blocked_ns[k] += part;
			given += part;
		}
		r->blocked_ns[WP_BLOCK_OTHER] += r->blocked_unsampled_ns - given;
	}
	if (!anchor_row(m, r))
		estimate_runnable(m, r);
	for (unsigned int i = 0; i < WP_MON_STACKS; i++)
		samples += on[i].count;
	for (unsigned int i = 0; i < WP_MON_STACKS; i++)
		on[i].ns = samples ? r->on_ns * on[i].count / samples : 0;
	qsort(on, WP_MON_STACKS, sizeof(*on), cmp_stack);
	qsort(off, WP_MON_STACKS, sizeof(*off), cmp_stack);
	for (unsigned int i = 0; i < WP_MON_STACKS; i++)
		if (off[i].count && off[i].state == WP_MON_BLOCKED && off[i].stack != WP_NO_STACK &&
		    off[i].ns > best) {
			best = off[i].ns;
			r->wait_stack = (int32_t)(WP_MON_STACKS + i);
		}
}

/*
 * The CPUs hold no more than their time: anchored rows whose figures
 * together exceed it (each thread's reads a few milliseconds apart, the
 * kernel's figures and the switch records counting a switch's own time
 * on either side) give back the excess, each by its share of what the
 * anchoring added, to the waits for a CPU it took that from; that is
 * within their bound.
 */
static void fit_cpus(struct wp_monitor *m)
{
	uint64_t cap, sum = 0, added = 0, excess;

	if (!m->meta || !m->meta->nr_cpus)
		return;
	cap = (uint64_t)m->meta->nr_cpus * (m->held_end - m->held_start);
	for (size_t i = 0; i < m->nr_held; i++) {
		const struct wp_mon_row *r = &m->held[i];

		sum += r->on_ns;
		if (r->anchored && r->on_ns > r->on_records_ns)
			added += r->on_ns - r->on_records_ns;
	}
	if (sum <= cap || !added)
		return;
	excess = sum - cap < added ? sum - cap : added;
	for (size_t i = 0; i < m->nr_held; i++) {
		struct wp_mon_row *r = &m->held[i];
		uint64_t back, q;

		if (!r->anchored || r->on_ns <= r->on_records_ns)
			continue;
		back = scaled(r->on_ns - r->on_records_ns, excess, added);
		q = r->runnable_ns + r->preempted_ns;
		for (unsigned int k = 0; k < WP_MON_STACKS; k++)
			r->stacks[k].ns = scaled(r->stacks[k].ns, r->on_ns - back, r->on_ns);
		r->on_ns -= back;
		if (q) {
			uint64_t pre = scaled(back, r->preempted_ns, q);

			r->preempted_ns += pre;
			r->runnable_ns += back - pre;
		} else {
			r->blocked_ns[WP_BLOCK_OTHER] += back;
		}
		r->kernel_offset_ns += back;
	}
}

/*
 * The held interval's rows, made ready and handed over.  0, or the
 * interval function's return (the monitor then stops).
 */
static int show_held(struct wp_monitor *m)
{
	struct wp_mon_snapshot snap;
	int ret;

	if (!m->holding)
		return 0;
	m->holding = false;
	for (size_t i = 0; i < m->nr_held; i++)
		finish_row(m, &m->held[i]);
	fit_cpus(m);
	snap = (struct wp_mon_snapshot){
		.start_ns = m->held_start, .end_ns = m->held_end, .index = ++m->index,
		.rows = m->held, .nr_rows = m->nr_held, .lost = m->held_lost,
		.wakeups = wp_timeline_has_wakeups(m->tl),
	};
	ret = m->fn(m->fn_arg, &snap);
	m->nr_held = 0;
	if (ret)
		m->stopped = true;
	return ret;
}

static int close_interval(struct wp_monitor *m)
{
	struct wp_mon_row *rows;
	size_t cap, forgotten;
	int ret, err;

	/* Held longer than an interval (none came to show it): shown now. */
	ret = show_held(m);
	if (ret)
		return ret;
	wp_timeline_each_live(m->tl, count_open, m);
	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct wp_tl_thread *t = wp_timeline_thread(m->tl, m->rows[i].serial);

		if (t)
			memcpy(m->rows[i].comm, t->comm, sizeof(m->rows[i].comm));
		/* A waker outside the recording: the name the recorder read, by now. */
		for (unsigned int k = 0; k < m->rows[i].nr_wakers; k++) {
			struct wp_mon_waker *w = &m->rows[i].wakers[k];
			const char *name;

			if (!w->comm[0] && w->kind == WP_WAKER_THREAD &&
			    (name = wp_tasknames_find(m->names, w->pid, w->tid)))
				snprintf(w->comm, sizeof(w->comm), "%s", name);
		}
	}
	/* Its rows are held (the buffers swap), the next interval's begin empty. */
	rows = m->rows;
	cap = m->cap_rows;
	m->rows = m->held;
	m->cap_rows = m->cap_held;
	m->held = rows;
	m->cap_held = cap;
	m->nr_held = m->nr_rows;
	m->held_start = m->start_ns;
	m->held_end = m->end_ns;
	m->held_lost = m->lost;
	m->holding = true;
	m->nr_rows = 0;
	wp_u64map_release(&m->row_of);
	m->lost = 0;
	/*
	 * Threads that exited before this interval began were shown exiting
	 * in the one before, and no row holds their serials now: the
	 * timeline forgets them, so that hours of threads coming and going
	 * keep what their number at once takes.  An interval's margin: the
	 * records the kernel writes of a task after its exit are in by now.
	 */
	err = wp_timeline_forget(m->tl, m->start_ns, &forgotten);
	if (err)
		ret = err;
	m->forgotten += forgotten;
	/*
	 * And the processes that exited then, with their copies of the
	 * mappings: what names the stacks already defined is the files'
	 * (dsos stay), only a JIT's anonymous code needs its process.
	 */
	pthread_mutex_lock(&m->lock);
	err = wp_procmap_forget(m->pm, m->start_ns, &m->processes_forgotten);
	pthread_mutex_unlock(&m->lock);
	if (err && !ret)
		ret = err;
	wp_debug("top: interval %" PRIu64 ": %zu rows, %" PRIu64 " stacks defined, %" PRIu64
		 " exited threads forgotten", m->index + 1, m->nr_held,
		 wp_stacktable_count(m->table), m->forgotten);
	m->start_ns = m->end_ns;
	m->end_ns += m->interval_ns;
	if (!ret && !m->hold_ns)
		ret = show_held(m);
	if (ret)
		m->stopped = true;
	return ret;
}

int wp_monitor_new(uint64_t interval_ns, wp_mon_interval_fn fn, void *arg,
		   struct wp_monitor **out)
{
	struct wp_monitor *m;

	*out = NULL;
	if (!interval_ns || !fn)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->interval_ns = interval_ns;
	m->fn = fn;
	m->fn_arg = arg;
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

void wp_monitor_expect_clocks(struct wp_monitor *m)
{
	m->hold_ns = m->interval_ns / 2 < MAX_HOLD_NS ? m->interval_ns / 2 : MAX_HOLD_NS;
}

int wp_monitor_start(struct wp_monitor *m, const struct wp_meta *meta)
{
	struct wp_timeline_opts to = { .unknown_stack = WP_NO_STACK,
				       .unsampled_switch_stack = WP_NO_STACK };
	struct wp_timeline_sink sink = { .segment = on_segment, .sample = on_sample,
					 .exited = on_exited, .lost = on_lost, .arg = m };
	int err;

	m->meta = meta;
	m->arch = wp_arch_find(meta->machine);
	wp_sample_format_init(&m->fmt, meta->sample_type, meta->regs_mask);
	to.switch_stacks_sampled = wp_meta_switch_stack_rate(meta) != 0;
	err = wp_sample_kinds_init(&m->kinds, meta);
	if (err)
		return err;
	m->have_kinds = true;
	err = wp_timeline_new(meta, &to, &m->tl);
	if (!err)
		err = wp_timeline_add_sink(m->tl, &sink);
	if (!err)
		err = wp_procmap_new(true, &m->pm);
	if (!err)
		err = wp_resolver_new(m->pm, meta, &m->resolver);
	if (!err)
		err = wp_stacktable_new(m->pm, m->resolver, &m->table);
	if (!err)
		err = wp_strpool_new(&m->pool);
	if (!err)
		err = wp_symbols_new(m->pm, m->pool, false, true, NULL, &m->symbols);
	m->start_ns = meta->start_clock_ns;
	m->end_ns = m->start_ns + m->interval_ns;
	return err;
}

/* A sample of the stack table: to the timeline, as report's analysis hands it over. */
static int stack_sample(struct wp_monitor *m, const struct perf_event_header *rec, uint64_t time)
{
	struct wp_stack_sample ss;
	enum wp_event_role role;

	if (wp_stack_sample_parse(rec, &ss) || !wp_sample_kinds_known(&m->kinds, ss.id))
		return 0;
	role = wp_sample_kinds_role(&m->kinds, ss.id);
	switch (role) {
	case WP_EVENT_ENQUEUED:
	case WP_EVENT_WAKEUP_NEW:
		if (ss.flags & WP_STACK_SAMPLE_HERE)
			wp_timeline_counted(m->tl, ss.tid, time);
		return ss.thread ? wp_timeline_enqueued(m->tl, ss.thread, time) : 0;
	case WP_EVENT_SCHED_SWITCH:
		return wp_timeline_sched_switch(m->tl, ss.tid, ss.thread, time, ss.cpu);
	case WP_EVENT_WAKEUP: {
		struct wp_waker w = { .pid = ss.pid, .tid = ss.tid, .stack = ss.stack,
				      .kind = WP_WAKER_THREAD };
		const struct wp_tl_thread *t;

		if (ss.flags & WP_STACK_SAMPLE_IRQ) {
			struct wp_waker_class c;

			w.context = wp_wake_context_of_flags(ss.flags);
			waker_class(m, ss.stack, w.context, &c);
			w.kind = c.kind == WP_WAKER_THREAD && !ss.tid ? WP_WAKER_INTERRUPT : c.kind;
			w.softirq = c.softirq;
			if (w.kind != WP_WAKER_THREAD)
				w.pid = w.tid = 0;
			else if ((t = wp_timeline_find(m->tl, ss.tid)))
				memcpy(w.comm, t->comm, sizeof(w.comm));
		} else if (!ss.tid) {
			w.kind = WP_WAKER_IDLE;
		} else if ((t = wp_timeline_find(m->tl, ss.tid))) {
			memcpy(w.comm, t->comm, sizeof(w.comm));
		}
		return wp_timeline_wakeup(m->tl, ss.thread, time, &w);
	}
	case WP_EVENT_ONCPU:
		if (!ss.tid)
			return wp_timeline_sample(m->tl, 0, 0, ss.cpu, time, false, WP_NO_STACK);
		return wp_timeline_sample(m->tl, ss.pid, ss.tid, ss.cpu, time, false, ss.stack);
	case WP_EVENT_SWITCH_OUT:
		return wp_timeline_sample(m->tl, ss.pid, ss.tid, ss.cpu, time, true, ss.stack);
	default:
		return 0;
	}
}

/*
 * A raw sample (the unwinder fell behind and passed it on): what the
 * timeline needs of it, without its stack.
 */
static int raw_sample(struct wp_monitor *m, const struct perf_event_header *rec, uint64_t time)
{
	struct wp_sample s;
	enum wp_event_role role;
	uint32_t tid;
	uint8_t context;	/* WP_WAKE_* bits: not 0, an interrupt's wake-up */

	if (wp_sample_parse(&m->fmt, rec, &s) || !wp_sample_kinds_known(&m->kinds, s.id))
		return 0;
	role = wp_sample_kinds_role(&m->kinds, s.id);
	switch (role) {
	case WP_EVENT_WAKEUP: {
		struct wp_waker w = { .pid = s.pid, .tid = s.tid, .stack = WP_NO_STACK };

		if (!wp_sample_kinds_waking(&m->kinds, &s, &tid, &context))
			return 0;
		/* No stack: what the context alone says (wp_waker_classify). */
		{
			struct wp_waker_class c;

			wp_waker_classify(m->arch, context, s.tid, 0, NULL, NULL, &c);
			w.kind = c.kind;
		}
		w.context = context;
		if (w.kind != WP_WAKER_THREAD)
			w.pid = w.tid = 0;
		return wp_timeline_wakeup(m->tl, tid, time, &w);
	}
	case WP_EVENT_ENQUEUED:
	case WP_EVENT_WAKEUP_NEW:
		if (!wp_sample_kinds_woken(&m->kinds, &s, &tid))
			return 0;
		if (wp_sample_kinds_enqueued_here(&m->kinds, &s))
			wp_timeline_counted(m->tl, s.tid, time);
		return wp_timeline_enqueued(m->tl, tid, time);
	case WP_EVENT_SCHED_SWITCH:
		if (!wp_sample_kinds_next(&m->kinds, &s, &tid))
			return 0;
		return wp_timeline_sched_switch(m->tl, s.tid, tid, time, s.cpu);
	case WP_EVENT_SWITCH_OUT:
		return wp_timeline_sample(m->tl, s.pid, s.tid, s.cpu, time, true, WP_NO_STACK);
	default:
		return wp_timeline_sample(m->tl, s.pid, s.tid, s.cpu, time, false, WP_NO_STACK);
	}
}

static int one_record(struct wp_monitor *m, const struct perf_event_header *rec)
{
	uint64_t time;
	int err;

	if (rec->type == WP_RECORD_ROUND)
		return 0;
	if (wp_stacktable_is_def(rec)) {
		pthread_mutex_lock(&m->lock);
		err = wp_stacktable_define(m->table, rec);
		pthread_mutex_unlock(&m->lock);
		return err == -EBADMSG ? 0 : err;
	}
	if (rec->type == WP_RECORD_TRACE_FORMAT)
		return wp_sample_kinds_format(&m->kinds, rec);
	time = wp_record_time(&m->fmt, rec);
	/* The held interval's figures are in: it is shown. */
	if (m->holding && time >= m->held_end + m->hold_ns) {
		err = show_held(m);
		if (err)
			return err;
	}
	/* In time order: every record of the interval is in, it closes. */
	while (!m->stopped && time >= m->end_ns) {
		err = close_interval(m);
		if (err)
			return err;
	}
	switch (rec->type) {
	case WP_RECORD_STACK_SAMPLE:
		return stack_sample(m, rec, time);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* Most records, in a storm: straight to the timeline, no lock. */
		return wp_timeline_record(m->tl, rec, time);
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case WP_RECORD_BUILD_ID:
		/* The process model names the stacks: mappings, forks, execs, exits. */
		pthread_mutex_lock(&m->lock);
		err = wp_procmap_record(m->pm, rec);
		pthread_mutex_unlock(&m->lock);
		if (err)
			return err;
		break;
	case PERF_RECORD_SAMPLE:
		return raw_sample(m, rec, time);
	case WP_RECORD_THREAD_CLOCK:
		return thread_clock(m, rec);
	case WP_RECORD_TASK_NAME:
		if (!m->names && wp_tasknames_new(&m->names))
			return -ENOMEM;
		return wp_tasknames_record(m->names, rec);
	}
	return wp_timeline_record(m->tl, rec, time);
}

int wp_monitor_records(struct wp_monitor *m, const void *buf, size_t len, uint64_t round_ns)
{
	const uint8_t *p = buf, *end = p + len;
	int err = 0;

	if (m->stopped)
		return 0;
	while (!err && (size_t)(end - p) >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h = (const void *)p;

		if (h->size < sizeof(*h) || h->size > (size_t)(end - p))
			break;
		err = one_record(m, h);
		p += h->size;
		if (m->stopped)
			return err;
	}
	/* A drain pass begun after an interval's end: all of it is in. */
	while (!err && !m->stopped && round_ns && round_ns >= m->end_ns + WP_ROTATE_SLACK_NS)
		err = close_interval(m);
	if (!err && !m->stopped && m->holding && round_ns &&
	    round_ns >= m->held_end + m->hold_ns + WP_ROTATE_SLACK_NS)
		err = show_held(m);
	return err;
}

void wp_monitor_free(struct wp_monitor *m)
{
	if (!m)
		return;
	if (m->forgotten)
		wp_debug("top: %" PRIu64 " exited threads and %zu processes forgotten", m->forgotten,
			 m->processes_forgotten);
	wp_timeline_free(m->tl);
	wp_tasknames_free(m->names);
	wp_symbols_free(m->symbols);
	wp_stacktable_free(m->table);
	wp_resolver_free(m->resolver);
	wp_procmap_free(m->pm);
	wp_strpool_free(m->pool);
	if (m->have_kinds)
		wp_sample_kinds_release(&m->kinds);
	wp_u64map_release(&m->kind_of);
	wp_u64map_release(&m->class_of);
	wp_u64map_release(&m->last_wait);
	wp_u64map_release(&m->row_of);
	free(m->rows);
	free(m->held);
	free(m->clocks);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

const char *wp_mon_runnable_pct(const struct wp_mon_row *r, uint64_t len, char *buf, size_t size)
{
	double v = len ? 100.0 * (double)r->runnable_ns / (double)len : 0;

	snprintf(buf, size, r->runnable_estimated_ns ? "~%.1f" : "%.1f", v);
	return buf;
}

uint64_t wp_mon_row_blocked(const struct wp_mon_row *r)
{
	uint64_t b = 0;

	for (int k = 0; k < WP_BLOCK_KINDS; k++)
		b += r->blocked_ns[k];
	return b;
}

const char *wp_mon_waker_name(const struct wp_mon_waker *w, char *buf, size_t size)
{
	const char *kind = wp_waker_kind_name(w->kind);
	char q[WP_QUOTE_SIZE(16)];

	if (kind)
		return kind;
	snprintf(buf, size, "%s/%" PRIu32,
		 wp_quote(q, sizeof(q), w->comm[0] ? w->comm : "?", WP_QUOTE_TEXT), w->tid);
	return buf;
}

int wp_mon_row_cmp(const void *a, const void *b)
{
	const struct wp_mon_row *x = a, *y = b;
	uint64_t kx = x->on_ns, ky = y->on_ns;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	kx = x->runnable_ns + x->preempted_ns;
	ky = y->runnable_ns + y->preempted_ns;
	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}
