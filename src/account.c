/* SPDX-License-Identifier: GPL-2.0-or-later */
/* account.c: the ledger: the timeline's segments added up by thread, stack, waker and CPU. */
#include <math.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "layout.h"
#include "log.h"
#include "u64map.h"
#include "util.h"
#include "wakeest.h"

#define NO_STACK UINT32_MAX

/* x + part, both bounded by 2^62 so that a hostile file's times overflow nothing. */
static int64_t name_share(uint64_t x, double part)
{
	int64_t base = x < (1ULL << 62) ? (int64_t)x : INT64_C(1) << 62;
	int64_t p = part <= -0x1p62 ? -(INT64_C(1) << 62) : part >= 0x1p62 ? INT64_C(1) << 62
										  : (int64_t)part;

	return base + p;
}

/* x - y as a signed figure, saturated: a hostile file's times may be anything. */
static int64_t signed_diff(uint64_t x, uint64_t y)
{
	if (x >= y)
		return x - y <= INT64_MAX ? (int64_t)(x - y) : INT64_MAX;
	return y - x <= INT64_MAX ? -(int64_t)(y - x) : -INT64_MAX;
}

/* One name of a process (wp_process_name) while it is being accounted. */
struct name_span {
	struct wp_process_name pub;
	uint32_t serial;	/* of its main thread */
	uint32_t next;		/* the thread's next name + 1, or 0 */
	uint32_t cmdline;	/* index + 1 in cmdlines, or 0 */
	uint64_t on_at_start;	/* the thread's on-CPU time when it took the name */
	uint32_t late_at_start;	/* and its late switch-ins (late_starts) */
};

/*
 * A thread's figures, by its timeline serial.  Kept small (some 100
 * bytes): recordings of servers hold hundreds of thousands of short
 * threads, most of which fill a handful of histogram buckets and no stack.
 */
struct thread {
	struct wp_thread_times t;
	struct wp_thread_hists *hists;	/* owned; in t.hists after finish */
	struct wake_tally *tally;	/* owned; gated wake-ups only, else NULL */
	struct anchor *anchor;		/* owned; NULL until a THREAD_CLOCK of its */
	uint64_t on_all_ns;		/* on-CPU, the window aside: what anchors compare */
	uint64_t queued_all_ns;		/* runnable + preempted, likewise */
	uint32_t late_starts;		/* running segments that began late */
	uint32_t late_in_window;	/* of them, inside the window */
	uint32_t late_after[3];		/* by the kind of wait they ended (est_part) */
	uint8_t last_off;		/* est_part of the last wait a switch-in ended */
	uint32_t name;			/* its current name (struct name_span) + 1, or 0 */
	bool forked_process;		/* a FORK made it a new process's main thread */
	struct thread_strata *strata;	/* owned; NULL until its first unsampled switch-out */
};

/*
 * Per thread with switch-outs without a sampled stack: their off-CPU time
 * by kind and log2 bucket of the length of the wait it was part of (see
 * strata_note), and the wait under way, whose length its end tells.
 */
struct thread_strata {
	uint64_t unsampled[3 * 64];	/* EST_PARTS x EST_BUCKETS */
	uint64_t wait_start;		/* off_start_ns of the wait under way */
	uint64_t wait_ns[2];		/* its blocked and runnable time so far */
	uint32_t wait_stack;
	bool wait_open;
};

/*
 * Per thread, with wake-ups gated with the stacks (WP_META_WAKEUPS_GATED):
 * the recorded waits its unrecorded ones are split by, and the blocked
 * time of those, and how many (estimate_wakeups).  Apart from struct
 * thread, which most recordings have hundreds of thousands of.
 */
struct wake_tally {
	struct wp_wake_seen seen;
	uint64_t unsplit_ns, unsplit_count;
	/* What estimate_wakeups moved, and of it and unsplit_ns, what no stack has yet. */
	uint64_t moved_ns, moved_left_ns, unsplit_left_ns;
	/* Of the unrecorded waits, those where the budget had the tracepoints off. */
	uint64_t gated_count;
};

/*
 * A thread's anchors: the kernel's figure of its on-CPU time and the
 * records' (and its late switch-ins so far) at a THREAD_CLOCK at or
 * after its start (base), and at the last one after (end).
 */
struct anchor_point {
	uint64_t kernel_ns, records_ns;	/* on-CPU */
	uint64_t kernel_rq_ns, records_rq_ns;	/* on a run queue: runnable + preempted */
	uint64_t time;
	uint32_t late;
	bool set;
	/*
	 * records_ns (and records_rq_ns) hold the segments ended when it was
	 * taken: what the segments that end later give it before time is
	 * added as they come (anchor_settle).  A segment open then may end
	 * before time after all, when a lost switch is placed in the window
	 * of lost records before (timeline.c, lost_switch_at).
	 */
	bool settle;
	/*
	 * Taken before the thread's first switch: what the records give it
	 * by then is told by its first segment (running since the start, or
	 * not), when it comes.
	 */
	bool undecided;
	/*
	 * An exit figure of a thread whose EXIT record was lost: whatever the
	 * records gave it after is no time of its, so it is compared with
	 * all of theirs.
	 */
	bool exit_unseen;
	bool exit;		/* an exit figure: the thread's life ended there */
};
struct anchor {
	struct anchor_point base, end;
	/*
	 * With a --time window, at its start [0] and end [1]: the last figure
	 * at or before it and the first at or after it (read every second,
	 * so that a window at whole seconds has one at each), and the
	 * records' own cut there (no kernel figure: what they gave by then).
	 */
	struct anchor_point near[2][2], cut[2];
	/* At its EXIT record: its on-CPU time but for the slice it ran in then, and that slice. */
	uint64_t exit_records_ns, exit_slice_ns;
	uint32_t exit_late;
	bool exit_seen;
};

/* Per weight, what a gated recording missed of its blocked time. */
struct wake_gap {
	size_t weight;				/* its index in weights */
	uint64_t unsplit_ns, unsplit_count;	/* wake-up unrecorded */
	uint64_t unwoken_ns, unwoken_count;	/* waker unrecorded */
};

/* Kinds of off-CPU time, as estimated: blocked, runnable, preempted. */
#define EST_PARTS 3
#define EST_BUCKETS 64
_Static_assert(sizeof(((struct thread_strata *)0)->unsampled) ==
	       EST_PARTS * EST_BUCKETS * sizeof(uint64_t), "thread_strata's room");

/*
 * Histogram buckets of every kind, keyed kind * 64 + bucket: a few of them
 * listed (sparse), or, once a thread fills more than SPARSE_MAX, all of
 * them indexed by key (dense).
 */
#define HIST_KEYS (WP_HIST_KINDS * WP_HIST_BUCKETS)
_Static_assert(HIST_KEYS <= 256, "sparse histogram keys are bytes");
#define SPARSE_MAX 16

struct hist_bin {
	uint64_t count, total_ns;
};

struct wp_thread_hists {
	uint16_t nr;			/* bins in use, when sparse */
	uint16_t cap;			/* bins allocated; HIST_KEYS when dense */
	uint8_t key[SPARSE_MAX];	/* the key of each bin, when sparse */
	struct hist_bin bin[];
};

/*
 * One stack's sampled intervals in one stratum of its thread (strata_note):
 * their time, how many, and the sum of their squared lengths, from which
 * estimate_switch_stacks gives each estimate its standard error.
 */
struct stratum_cell {
	uint64_t ns;
	uint64_t n;
	double sq;
};

struct wp_account {
	struct wp_account_opts opts;
	bool cut_taken[2];		/* a --time window's start and end: cuts taken */
	struct wp_timeline *tl;		/* owned: the model the segments come from */
	uint64_t start_ns;
	uint64_t sample_period_ns;
	struct thread *threads;		/* by serial, until finish */
	size_t nr, cap;
	struct wp_stack_weight *weights;	/* .thread holds the serial until finish */
	size_t nr_weights, cap_weights;
	struct wp_u64map weight_index;	/* thread serial << 32 | stack -> index in weights */
	struct wp_u64map strata;	/* stratum_key() -> index + 1 in cells (strata_note) */
	struct stratum_cell *cells;	/* until estimate_switch_stacks */
	size_t nr_cells, cap_cells;
	uint64_t lost, lost_first, lost_last;
	uint64_t unsampled_ns, unsampled_threads;	/* on-CPU, never sampled */
	bool wakeups;			/* WP_META_WAKEUPS */
	bool wakeups_gated;		/* WP_META_WAKEUPS_GATED */
	struct wp_wake_seen seen;	/* every thread's recorded waits */
	struct wake_gap *gaps;		/* until finish */
	size_t nr_gaps, cap_gaps;
	struct wp_u64map gap_index;	/* weight index -> its gap */
	struct wp_wakeup_estimate wake_est;
	struct wp_wake_weight *wakes;
	size_t nr_wakes, cap_wakes;
	int err;			/* -ENOMEM once memory ran out */
	struct wp_thread_times *result;	/* built by wp_account_finish */
	struct name_span *names;	/* processes' names, in the order taken */
	size_t nr_names, cap_names;
	struct wp_process_name *result_names;	/* by thread, then time, after finish */
	struct wp_process_cmdline *cmdlines;	/* args owned */
	size_t nr_cmdlines, cap_cmdlines;
	struct wp_cpu_time *cpu_times;	/* system-wide recordings with switches; else NULL */
	uint32_t nr_cpus;
	bool cpu_wide;			/* -a */
	struct wp_anchor_summary anchors;
	bool exit_clocks;		/* WP_META_EXIT_CLOCKS: exits are worth remembering */
	uint64_t end_ns;		/* of the recording, after finish */
};

/* Who a thread is, as the timeline has it now (a snapshot's may turn out forked). */
static void identify(struct thread *t, const struct wp_tl_thread *lt)
{
	t->t.pid = lt->pid;
	t->t.tid = lt->tid;
	t->t.start_ns = lt->start_ns;
	t->forked_process = lt->forked_process;
}

/*
 * The ledger's thread of a timeline serial, made on first use (serials
 * come in order); NULL when out of memory.  Good until the next call.
 */
static struct thread *thread_at(struct wp_account *a, uint32_t serial)
{
	const struct wp_tl_thread *lt;
	struct thread *t;

	if (a->result)
		return NULL;
	while (a->nr <= serial) {
		if (WP_GROW(a->threads, a->cap, a->nr + 1)) {
			a->err = -ENOMEM;
			return NULL;
		}
		t = &a->threads[a->nr];
		memset(t, 0, sizeof(*t));
		t->t.serial = (uint32_t)a->nr;
		lt = wp_timeline_thread(a->tl, (uint32_t)a->nr++);
		if (lt)
			identify(t, lt);
	}
	return &a->threads[serial];
}

/* The weight entry of (thread serial, stack), created on first use. */
static struct wp_stack_weight *weight_get(struct wp_account *a, uint32_t serial,
					  uint32_t stack)
{
	uint64_t key = (uint64_t)serial << 32 | stack, i;
	struct wp_stack_weight *w;

	if (wp_u64map_get(&a->weight_index, key, &i))
		return &a->weights[i];
	if (WP_GROW(a->weights, a->cap_weights, a->nr_weights + 1) ||
	    wp_u64map_put(&a->weight_index, key, a->nr_weights))
		return NULL;
	w = &a->weights[a->nr_weights++];
	memset(w, 0, sizeof(*w));
	w->thread = serial;
	w->stack = stack;
	return w;
}

/* The bin of key in h, or NULL when a sparse h has none. */
static struct hist_bin *hist_find(struct wp_thread_hists *h, unsigned int key)
{
	if (h->cap == HIST_KEYS)
		return &h->bin[key];
	for (unsigned int i = 0; i < h->nr; i++)
		if (h->key[i] == key)
			return &h->bin[i];
	return NULL;
}

/* Room for one more bin: a larger sparse set, or past SPARSE_MAX the dense one. */
static struct wp_thread_hists *hist_grow(struct wp_thread_hists *h)
{
	unsigned int cap = h ? h->cap * 2U : 2;
	struct wp_thread_hists *n;

	if (cap > SPARSE_MAX) {
		n = calloc(1, sizeof(*n) + HIST_KEYS * sizeof(n->bin[0]));
		if (!n)
			return NULL;
		for (unsigned int i = 0; i < h->nr; i++)
			n->bin[h->key[i]] = h->bin[i];
		n->cap = HIST_KEYS;
		free(h);
		return n;
	}
	n = realloc(h, sizeof(*n) + cap * sizeof(n->bin[0]));
	if (!n)
		return NULL;
	if (!h)
		n->nr = 0;
	n->cap = (uint16_t)cap;
	return n;
}

static void hist_add(struct wp_account *a, struct thread *t, enum wp_hist_kind kind,
		     uint64_t ns)
{
	unsigned int b = ns ? 63 - (unsigned int)__builtin_clzll(ns) : 0;
	unsigned int key = kind * WP_HIST_BUCKETS + b;
	struct wp_thread_hists *h = t->hists;
	struct hist_bin *bin = h ? hist_find(h, key) : NULL;

	if (!bin) {
		if (!h || h->nr == h->cap) {
			h = hist_grow(h);
			if (!h) {
				a->err = -ENOMEM;
				return;
			}
			t->hists = h;
		}
		bin = hist_find(h, key);	/* a dense set has them all */
		if (!bin) {
			h->key[h->nr] = (uint8_t)key;
			bin = &h->bin[h->nr++];
			bin->count = bin->total_ns = 0;
		}
	}
	bin->count++;
	bin->total_ns += ns;
}

void wp_thread_hist_add(const struct wp_thread_times *t, enum wp_hist_kind kind,
			struct wp_hist *h)
{
	const struct wp_thread_hists *th = t->hists;
	unsigned int first = kind * WP_HIST_BUCKETS;

	if (!th)
		return;
	for (unsigned int i = 0; i < (th->cap == HIST_KEYS ? HIST_KEYS : th->nr); i++) {
		unsigned int key = th->cap == HIST_KEYS ? i : th->key[i];

		if (key < first || key >= first + WP_HIST_BUCKETS)
			continue;
		h->count[key - first] += th->bin[i].count;
		h->total_ns[key - first] += th->bin[i].total_ns;
	}
}

/* The part of [from, to) inside the report window. */
static uint64_t in_window(const struct wp_account *a, uint64_t from, uint64_t to)
{
	if (a->opts.window_start && from < a->opts.window_start)
		from = a->opts.window_start;
	if (a->opts.window_end && to > a->opts.window_end)
		to = a->opts.window_end;
	return to > from ? to - from : 0;
}

/* Blocked time of weight w that waker ended, in count intervals. */
static void add_wakes(struct wp_account *a, struct wp_stack_weight *w, uint32_t waker,
		      uint64_t ns, uint64_t count)
{
	struct wp_wake_weight *k;
	uint32_t i;

	for (i = w->wakes; i; i = a->wakes[i - 1].next)
		if (a->wakes[i - 1].waker == waker)
			break;
	if (!i) {
		k = wp_grow(a->wakes, &a->cap_wakes, a->nr_wakes + 1, sizeof(*a->wakes));
		if (!k || a->nr_wakes >= UINT32_MAX - 1) {
			a->err = -ENOMEM;
			return;
		}
		a->wakes = k;
		k = &a->wakes[a->nr_wakes++];
		k->waker = waker;
		k->next = w->wakes;
		k->blocked_ns = k->count = 0;
		i = w->wakes = (uint32_t)a->nr_wakes;
	}
	a->wakes[i - 1].blocked_ns += ns;
	a->wakes[i - 1].count += count;
}

static int est_part(uint8_t kind)
{
	return kind == WP_SEG_BLOCKED ? 0 : kind == WP_SEG_RUNNABLE ? 1 : 2;
}

/* The stratum of one stack's sampled time in one thread: its strata key. */
static uint64_t stratum_key(uint32_t serial, int part, unsigned int bucket, uint32_t stack)
{
	return (uint64_t)serial << 40 | (uint64_t)(part * EST_BUCKETS + bucket) << 32 | stack;
}

/* Threads past this many share the plain ratio estimate (the key's room). */
#define STRATA_MAX_SERIAL (1U << 24)

/* The log2 bucket of a length. */
static unsigned int length_bucket(uint64_t ns)
{
	return ns ? 63 - (unsigned int)__builtin_clzll(ns) : 0;
}

/*
 * The stratum a kind's unsampled time is shared in: a voluntary wait's
 * blocked and runnable time together (a wait whose stack went unsampled
 * had its wake-up gated too in a hard storm, so its runnable time is
 * still in its blocked part: only the whole wait compares), preemptions
 * apart.
 */
static int stratum_part(int p)
{
	return p == 2 ? 2 : 0;
}

/* One sampled interval of d ns of one stack in stratum (p, b). */
static void stratum_add(struct wp_account *a, struct thread *t, int p, unsigned int b,
			uint32_t stack, uint64_t d)
{
	uint64_t key = stratum_key(t->t.serial, p, b, stack), had = 0;

	if (!d)
		return;
	if (!wp_u64map_get(&a->strata, key, &had) || !had) {
		if (WP_GROW(a->cells, a->cap_cells, a->nr_cells + 1) ||
		    wp_u64map_put(&a->strata, key, a->nr_cells + 1)) {
			a->err = -ENOMEM;
			return;
		}
		a->cells[a->nr_cells] = (struct stratum_cell){ 0 };
		had = ++a->nr_cells;
	}
	a->cells[had - 1].ns += d;
	a->cells[had - 1].n++;
	a->cells[had - 1].sq += (double)d * (double)d;
}

/* The wait under way is over (or the recording is), whole ns long. */
static void strata_wait_end(struct wp_account *a, struct thread *t, uint64_t whole)
{
	struct thread_strata *st = t->strata;
	unsigned int b = length_bucket(whole);

	if (!st->wait_open)
		return;
	st->wait_open = false;
	if (st->wait_stack == a->opts.unsampled_switch_stack) {
		st->unsampled[0 * EST_BUCKETS + b] += st->wait_ns[0];
		st->unsampled[1 * EST_BUCKETS + b] += st->wait_ns[1];
	} else {
		stratum_add(a, t, 0, b, st->wait_stack, st->wait_ns[0] + st->wait_ns[1]);
	}
}

/*
 * Above the --switch-stacks budget the kernel samples switch-outs by
 * count, blind to where the thread waits, so the sampled intervals of a
 * thread stand for the unsampled ones.  Each is counted by kind and by
 * log2 bucket of its wait's length (a stratum): unsampled time is later
 * shared out in each stratum in proportion to the stacks' sampled time
 * there (estimate_switch_stacks).  Matching lengths keeps a program whose
 * waits alternate in step with the sampling period (two sites, one long,
 * one short) from lending one site's stack to the other's time.  A
 * thread's strata start with its first unsampled switch-out.
 */
static void strata_note(struct wp_account *a, struct thread *t, const struct wp_segment *s,
			uint64_t full, uint64_t d)
{
	bool unsampled = s->stack == a->opts.unsampled_switch_stack;
	struct thread_strata *st;

	if (!a->opts.switch_stacks_sampled || t->t.serial >= STRATA_MAX_SERIAL)
		return;
	if (!t->strata) {
		if (!unsampled)
			return;
		t->strata = calloc(1, sizeof(*t->strata));
		if (!t->strata)
			return;	/* the plain ratio estimate then */
	}
	st = t->strata;
	if (!unsampled && (s->stack == a->opts.unknown_stack ||
			   (a->opts.start_stack && s->stack == a->opts.start_stack)))
		return;
	if (s->kind == WP_SEG_PREEMPTED) {
		if (unsampled)
			st->unsampled[2 * EST_BUCKETS + length_bucket(full)] += d;
		else
			stratum_add(a, t, 2, length_bucket(full), s->stack, d);
		return;
	}
	if (st->wait_open && (st->wait_start != s->off_start_ns || st->wait_stack != s->stack))
		strata_wait_end(a, t, st->wait_ns[0] + st->wait_ns[1]);
	if (!st->wait_open) {
		st->wait_open = true;
		st->wait_start = s->off_start_ns;
		st->wait_stack = s->stack;
		st->wait_ns[0] = st->wait_ns[1] = 0;
	}
	st->wait_ns[s->kind == WP_SEG_BLOCKED ? 0 : 1] += d;
	if (s->flags & WP_SEG_OFF_END)
		strata_wait_end(a, t, s->end_ns - s->off_start_ns);
}

/* A recorded wait of off ns, run of them runnable (wakeest.h): y NULL, the recording's only. */
static void tally_seen(struct wp_account *a, struct wake_tally *y, uint64_t off, uint64_t run)
{
	wp_wake_seen_add(y ? &y->seen : NULL, &a->seen, off, run);
}

/* t's wake tally, made on first use; NULL when out of memory. */
static struct wake_tally *tally_of(struct wp_account *a, struct thread *t)
{
	if (!t->tally) {
		t->tally = calloc(1, sizeof(*t->tally));
		if (!t->tally)
			a->err = -ENOMEM;
	}
	return t->tally;
}

/* The gap of weight w, added on first use; NULL when out of memory. */
static struct wake_gap *gap_get(struct wp_account *a, const struct wp_stack_weight *w)
{
	uint64_t key = (uint64_t)(w - a->weights), i;
	struct wake_gap *g;

	if (wp_u64map_get(&a->gap_index, key, &i))
		return &a->gaps[i];
	if (WP_GROW(a->gaps, a->cap_gaps, a->nr_gaps + 1) ||
	    wp_u64map_put(&a->gap_index, key, a->nr_gaps))
		return NULL;
	g = &a->gaps[a->nr_gaps++];
	memset(g, 0, sizeof(*g));
	g->weight = (size_t)key;
	return g;
}

/* A blocked part of weight w, d long, whose wake-up or waker was not recorded. */
static void gap_note(struct wp_account *a, const struct wp_segment *s,
		     const struct wp_stack_weight *w, uint64_t d)
{
	struct wake_gap *g = gap_get(a, w);

	if (!g) {
		a->err = -ENOMEM;
		return;
	}
	if (s->flags & WP_SEG_WAKEUP_UNRECORDED) {
		g->unsplit_ns += d;
		g->unsplit_count++;
	}
	if (s->flags & WP_SEG_WAKER_UNRECORDED) {
		g->unwoken_ns += d;
		g->unwoken_count++;
	}
}

/* Add d of the current off-CPU part to weight w: its time and one interval. */
static void weight_add_part(struct wp_account *a, const struct wp_segment *s,
			    struct wp_stack_weight *w, uint64_t d)
{
	if (s->kind == WP_SEG_BLOCKED) {
		w->blocked_ns += d;
		w->blocked_count++;
		if (s->waker != WP_NO_WAKER)
			add_wakes(a, w, s->waker, d, 1);
		if (s->flags & (WP_SEG_WAKEUP_UNRECORDED | WP_SEG_WAKER_UNRECORDED))
			gap_note(a, s, w, d);
	} else if (s->kind == WP_SEG_RUNNABLE) {
		w->runnable_ns += d;
		w->runnable_count++;
	} else {
		w->preempted_ns += d;
		w->preempted_count++;
	}
}


/* Hand the observer the part inside the window of segment s. */
static void observe_period(struct wp_account *a, const struct thread *t,
			   const struct wp_segment *s)
{
	static const enum wp_period_kind kinds[] = {
		[WP_SEG_RUNNING] = WP_PERIOD_ON,
		[WP_SEG_BLOCKED] = WP_PERIOD_BLOCKED,
		[WP_SEG_RUNNABLE] = WP_PERIOD_RUNNABLE,
		[WP_SEG_PREEMPTED] = WP_PERIOD_PREEMPTED,
	};
	const struct wp_account_observer *o = a->opts.observer;
	struct wp_period p = { .thread = &t->t, .kind = kinds[s->kind], .stack = NO_STACK,
			       .waker_index = UINT32_MAX, .cpu = s->cpu };
	uint64_t from = s->start_ns, to = s->end_ns;
	size_t nwk;
	const struct wp_waker *wk = wp_timeline_wakers(a->tl, &nwk);

	if (a->opts.window_start && from < a->opts.window_start)
		from = a->opts.window_start;
	if (a->opts.window_end && to > a->opts.window_end)
		to = a->opts.window_end;
	p.start_ns = from;
	p.end_ns = to;
	if (s->kind != WP_SEG_RUNNING) {
		p.stack = s->stack;
		p.short_off = s->end_ns - s->start_ns < a->opts.min_block_ns;
	}
	if (s->kind == WP_SEG_BLOCKED && s->waker < nwk) {
		p.waker = &wk[s->waker];
		p.waker_index = s->waker;
	}
	p.wakeup_unrecorded = s->kind == WP_SEG_BLOCKED && (s->flags & WP_SEG_WAKEUP_UNRECORDED);
	p.waker_unrecorded = s->kind == WP_SEG_BLOCKED && (s->flags & WP_SEG_WAKER_UNRECORDED);
	p.wakeup_dropped = s->kind == WP_SEG_BLOCKED && (s->flags & WP_SEG_WAKEUP_DROPPED);
	o->period(o->arg, &p);
}

/* An off-CPU segment of t, d of it inside the window: counts and totals. */
static void off_segment(struct wp_account *a, struct thread *t, const struct wp_segment *s,
			uint64_t d)
{
	bool starts_inside = in_window(a, s->start_ns, s->start_ns + 1) != 0;
	struct wp_stack_weight *w;
	uint64_t full = s->end_ns - s->start_ns;

	if ((s->flags & WP_SEG_SWITCH_OUT) && starts_inside) {
		if (s->kind == WP_SEG_PREEMPTED)
			t->t.involuntary_switches++;
		else
			t->t.voluntary_switches++;
		if (a->opts.switch_stacks_sampled && s->stack == a->opts.unsampled_switch_stack)
			t->t.switch_outs_unsampled++;
	}
	if (s->kind == WP_SEG_RUNNABLE && (s->flags & WP_SEG_WOKEN) && starts_inside)
		t->t.wakeups++;
	if (s->kind != WP_SEG_BLOCKED)
		t->queued_all_ns += full;
	if (s->kind == WP_SEG_BLOCKED) {
		t->t.blocked_ns += d;
		if ((s->flags & WP_SEG_WAKEUP_DROPPED) && d)
			a->wake_est.dropped++;
		if ((s->flags & WP_SEG_WAKEUP_UNRECORDED) && d && tally_of(a, t)) {
			if (!(s->flags & WP_SEG_WAKEUP_DROPPED))
				t->tally->gated_count++;
			t->tally->unsplit_ns += d;
			t->tally->unsplit_count++;
		}
	} else if (s->kind == WP_SEG_RUNNABLE) {
		t->t.runnable_ns += d;
	} else {
		t->t.preempted_ns += d;
	}
	/*
	 * A wait whose wake-up was recorded, with the tracepoints open all
	 * along: the unrecorded ones are split by such.  Ungated, where they
	 * are the kernel's few drops, a thread keeps figures of its own only
	 * once it has one (most threads never do).
	 */
	if (s->flags & WP_SEG_FAIR_SAMPLE) {
		tally_seen(a, a->wakeups_gated || t->tally ? tally_of(a, t) : NULL,
			   s->end_ns - s->off_start_ns, s->end_ns - s->woken_ns);
		a->wake_est.seen++;
	}
	if (s->flags & WP_SEG_OFF_END) {
		uint64_t whole = in_window(a, s->off_start_ns, s->end_ns);

		t->last_off = (uint8_t)est_part(s->kind);
		if (whole)
			hist_add(a, t, WP_HIST_OFF_INTERVALS, whole);
	}
	/* A sleep woken before it began still names its waker. */
	if (!d && !(s->kind == WP_SEG_BLOCKED && s->waker != WP_NO_WAKER &&
		    in_window(a, s->end_ns, s->end_ns + 1)))
		return;
	if (s->kind == WP_SEG_PREEMPTED && d)
		hist_add(a, t, WP_HIST_PREEMPT_WAITS, d);
	else if (s->kind == WP_SEG_RUNNABLE && d)
		hist_add(a, t, WP_HIST_WAKEUP_WAITS, d);
	if (full < a->opts.min_block_ns)
		return;
	strata_note(a, t, s, full, d);
	w = weight_get(a, t->t.serial, s->stack);
	if (!w) {
		a->err = -ENOMEM;
		return;
	}
	weight_add_part(a, s, w, d);
}

/*
 * How many of a thread's anchor points are in use (anchor_decided and
 * anchor_settle walk them at every segment): base and end, and with a
 * --time window its ends' figures and cuts too.
 */
static int anchor_points(const struct wp_account *a)
{
	return a->opts.window_start || a->opts.window_end ? 8 : 2;
}

/*
 * The first segment of a thread whose anchor was taken before it
 * switched: running since its start, or not, through the anchor's time.
 */
static void anchor_decided(const struct wp_account *a, struct thread *t,
			   const struct wp_segment *s)
{
	struct anchor *an = t->anchor;
	struct anchor_point *p[8] = { &an->base, &an->end, &an->near[0][0], &an->near[0][1],
				      &an->near[1][0], &an->near[1][1], &an->cut[0], &an->cut[1] };

	for (int i = 0; i < anchor_points(a); i++) {
		if (!p[i]->set || !p[i]->undecided)
			continue;
		p[i]->undecided = false;
		if (s->kind == WP_SEG_RUNNING && p[i]->time > s->start_ns)
			p[i]->records_ns = p[i]->time - s->start_ns;
		else if ((s->kind == WP_SEG_RUNNABLE || s->kind == WP_SEG_PREEMPTED) &&
			 p[i]->time > s->start_ns)
			p[i]->records_rq_ns = p[i]->time - s->start_ns;
	}
}

/*
 * Segment s, ended after the thread's figures were taken: its part before
 * them.  A segment that the recording's end closed goes on, as far as the
 * records tell, until a figure read after that end (the last figures are
 * read once the recording has stopped).
 */
static void anchor_settle(const struct wp_account *a, struct thread *t,
			  const struct wp_segment *s)
{
	struct anchor *an = t->anchor;
	struct anchor_point *p[8] = { &an->base, &an->end, &an->near[0][0], &an->near[0][1],
				      &an->near[1][0], &an->near[1][1], &an->cut[0], &an->cut[1] };

	for (int i = 0; i < anchor_points(a); i++) {
		uint64_t end;

		if (!p[i]->set || !p[i]->settle || s->start_ns >= p[i]->time)
			continue;
		end = s->end_ns < p[i]->time ? s->end_ns : p[i]->time;
		if (a->end_ns && s->end_ns == a->end_ns)
			end = p[i]->time;
		if (s->kind == WP_SEG_RUNNING)
			p[i]->records_ns += end - s->start_ns;
		else if (s->kind == WP_SEG_RUNNABLE || s->kind == WP_SEG_PREEMPTED)
			p[i]->records_rq_ns += end - s->start_ns;
	}
}

/* The timeline's sink: one segment of a thread's time. */
static void on_segment(void *arg, const struct wp_segment *s)
{
	struct wp_account *a = arg;
	struct thread *t = thread_at(a, s->thread);
	uint64_t d = in_window(a, s->start_ns, s->end_ns);

	if (!t)
		return;
	if (t->anchor) {
		anchor_decided(a, t, s);
		anchor_settle(a, t, s);
	}
	if (d && s->kind != WP_SEG_UNKNOWN && a->opts.observer && a->opts.observer->period)
		observe_period(a, t, s);
	switch (s->kind) {
	case WP_SEG_UNKNOWN: {
		/*
		 * Without switch records only the samples tell: on-CPU is
		 * their count times the period, the rest is off-CPU.
		 */
		uint64_t on = t->t.samples * a->sample_period_ns;

		t->t.on_cpu_ns += on < d ? on : d;
		t->t.blocked_ns += d - (on < d ? on : d);
		return;
	}
	case WP_SEG_RUNNING:
		t->t.on_cpu_ns += d;
		t->on_all_ns += s->end_ns - s->start_ns;
		if (s->flags & WP_SEG_START_LATE) {
			t->late_starts++;
			t->late_in_window += in_window(a, s->start_ns, s->start_ns + 1) != 0;
			t->late_after[t->last_off]++;
		}
		if (d)
			hist_add(a, t, WP_HIST_ON_SLICES, d);
		if (a->cpu_times && s->cpu < a->nr_cpus)
			a->cpu_times[s->cpu].busy_ns += d;
		return;
	default:
		off_segment(a, t, s, d);
	}
}

/* The timeline's sink: an on-CPU sample it counts. */
static void on_sample(void *arg, uint32_t serial, uint64_t time, uint32_t stack, uint32_t cpu)
{
	struct wp_account *a = arg;
	struct wp_stack_weight *w;
	struct thread *t;

	(void)cpu;
	if ((a->opts.window_start && time < a->opts.window_start) ||
	    (a->opts.window_end && time > a->opts.window_end))
		return;
	t = thread_at(a, serial);
	if (!t)
		return;
	t->t.samples++;
	w = weight_get(a, serial, stack);
	if (!w) {
		a->err = -ENOMEM;
		return;
	}
	w->samples++;
	if (a->opts.observer && a->opts.observer->sample)
		a->opts.observer->sample(a->opts.observer->arg, &t->t, time, stack);
}

static void on_switch_sample(void *arg, uint32_t serial, uint64_t time)
{
	struct wp_account *a = arg;
	struct thread *t;

	if (!in_window(a, time, time + 1))
		return;
	t = thread_at(a, serial);
	if (t)
		t->t.switch_samples++;
}

static void on_cpu_span(void *arg, uint32_t cpu, enum wp_cpu_span_kind kind, uint64_t start,
			uint64_t end)
{
	struct wp_account *a = arg;

	if (!a->cpu_times || cpu >= a->nr_cpus)
		return;
	if (kind == WP_CPU_IDLE)
		a->cpu_times[cpu].idle_ns += in_window(a, start, end);
	else
		a->cpu_times[cpu].unseen_ns += in_window(a, start, end);
}

static void on_lost(void *arg, uint64_t n, uint64_t time)
{
	struct wp_account *a = arg;

	a->lost += n;
	if (!a->lost_first)
		a->lost_first = time;
	a->lost_last = time;
}

/* The thread's on-CPU time up to now, as the accounting will count it. */
static uint64_t on_so_far(const struct wp_account *a, const struct thread *t, uint64_t now)
{
	uint64_t on = t->t.on_cpu_ns, since;

	if (wp_timeline_running_since(a->tl, t->t.serial, &since))
		on += in_window(a, since, now > since ? now : since);
	return on;
}

/*
 * The process of main thread t takes the name comm at time (its exec);
 * a name it had for no time at all is replaced.
 */
static void name_open(struct wp_account *a, struct thread *t, uint64_t time,
		      const char comm[16], bool inherited)
{
	struct name_span *n;

	if (t->name && a->names[t->name - 1].pub.start_ns >= time) {
		n = &a->names[t->name - 1];
		n->cmdline = 0;		/* the replaced image's */
	} else {
		if (a->nr_names >= UINT32_MAX - 1 ||
		    WP_GROW(a->names, a->cap_names, a->nr_names + 1)) {
			a->err = -ENOMEM;
			return;
		}
		n = &a->names[a->nr_names++];
		memset(n, 0, sizeof(*n));
		n->serial = t->t.serial;
		n->pub.start_ns = time;
		n->on_at_start = on_so_far(a, t, time);
		n->late_at_start = t->late_starts;
		if (t->name)
			a->names[t->name - 1].next = (uint32_t)a->nr_names;
		t->name = (uint32_t)a->nr_names;
	}
	memcpy(n->pub.comm, comm, sizeof(n->pub.comm));
	n->pub.comm[sizeof(n->pub.comm) - 1] = '\0';
	n->pub.inherited = inherited;
}

/* Start keeping t's names: the one it has had since its start. */
static void names_begin(struct wp_account *a, struct thread *t)
{
	if (!t->name)
		name_open(a, t, t->t.start_ns, t->t.comm, t->forked_process);
}

/* A process's command line (WP_RECORD_CMDLINE): its current name's. */
static int account_cmdline(struct wp_account *a, const struct perf_event_header *rec)
{
	const struct wp_tl_thread *lt;
	struct wp_process_cmdline *pc;
	struct wp_cmdline c;
	struct thread *t;
	char *args;

	if (wp_cmdline_parse(rec, &c))
		return 0;
	lt = wp_timeline_find(a->tl, c.pid);
	if (!lt || lt->pid != c.pid)
		return 0;	/* gone by now, or none of the recording's */
	t = thread_at(a, lt->serial);
	if (!t)
		return a->err = -ENOMEM;
	identify(t, lt);
	args = malloc(c.len ? c.len : 1);
	pc = wp_grow(a->cmdlines, &a->cap_cmdlines, a->nr_cmdlines + 1, sizeof(*a->cmdlines));
	if (!args || !pc || a->nr_cmdlines >= UINT32_MAX - 1) {
		free(args);
		return a->err = -ENOMEM;
	}
	a->cmdlines = pc;
	if (c.len)
		memcpy(args, c.args, c.len);
	a->cmdlines[a->nr_cmdlines++] = (struct wp_process_cmdline){
		.time = c.time, .source = c.source, .len = c.len, .args = args,
		.truncated = c.flags & WP_CMDLINE_TRUNCATED,
	};
	names_begin(a, t);
	if (t->name)
		a->names[t->name - 1].cmdline = (uint32_t)a->nr_cmdlines;
	return a->err;
}

/*
 * Each name's times, once every thread is closed (threads still by serial).
 * Its on-CPU time is the records' while it had the name, plus its part of
 * what anchoring moved the thread's total by (anchor_times; pre_on[serial]
 * is the total before): shared by the late switch-ins each name saw,
 * which are what anchoring makes up for, or by on-CPU time when none was
 * late.  The last name takes the rounding, so that the names add up to
 * the thread.
 */
static int names_close(struct wp_account *a, const uint64_t *pre_on)
{
	struct name_sums {
		uint64_t raw, given;
		uint32_t late;
		bool seen;
	} *sum = calloc(a->nr ? a->nr : 1, sizeof(*sum));

	if (!sum)
		return -ENOMEM;
	/* Each name's own records, and their sums by thread. */
	for (size_t i = 0; i < a->nr_names; i++) {
		struct name_span *n = &a->names[i];
		const struct thread *t = &a->threads[n->serial];
		const struct name_span *next = n->next ? &a->names[n->next - 1] : NULL;
		uint64_t from = n->pub.start_ns, to = next ? next->pub.start_ns : t->t.end_ns;
		uint64_t on_end = next ? next->on_at_start : pre_on[n->serial];
		uint32_t late_end = next ? next->late_at_start : t->late_starts;
		struct name_sums *ns = &sum[n->serial];

		if (from < t->t.start_ns)
			from = t->t.start_ns;
		if (to > t->t.end_ns)
			to = t->t.end_ns;
		n->pub.start_ns = from;
		n->pub.wall_ns = to > from ? to - from : 0;
		if (!ns->seen) {
			/*
			 * (The names are in the order taken: this is the
			 * thread's first.)  It starts with the thread, and so
			 * does its on-CPU time: what ran before it took the
			 * name (a launched command before its exec) is no
			 * other name's, and the names add up to the thread.
			 */
			ns->seen = true;
			n->on_at_start = 0;
			n->late_at_start = 0;
		}
		n->pub.on_cpu_ns = on_end > n->on_at_start ? on_end - n->on_at_start : 0;
		n->late_at_start = late_end > n->late_at_start ? late_end - n->late_at_start : 0;
		ns->raw += n->pub.on_cpu_ns;
		ns->late += n->late_at_start;
	}
	/* Then what anchoring moved, in the order the names were taken. */
	for (size_t i = 0; i < a->nr_names; i++) {
		struct name_span *n = &a->names[i];
		const struct thread *t = &a->threads[n->serial];
		struct name_sums *ns = &sum[n->serial];
		int64_t moved = signed_diff(t->t.on_cpu_ns, pre_on[n->serial]), on;
		double weight = ns->late ? (double)n->late_at_start / ns->late :
				ns->raw ? (double)n->pub.on_cpu_ns / (double)ns->raw : 0;

		if (!n->next)	/* the last: the thread's total less the names before it */
			on = signed_diff(t->t.on_cpu_ns, ns->given);
		else
			on = name_share(n->pub.on_cpu_ns, (double)moved * weight);
		/*
		 * Never more than the total leaves: a thread that the CPUs'
		 * capacity cut (-a on a busy machine) may have lost more than
		 * its later names had, and the names add up to the thread.
		 */
		if (on > signed_diff(t->t.on_cpu_ns, ns->given))
			on = signed_diff(t->t.on_cpu_ns, ns->given);
		n->pub.on_cpu_ns = on > 0 ? (uint64_t)on : 0;
		ns->given += n->pub.on_cpu_ns;
	}
	free(sum);
	return 0;
}

/*
 * The names as the result has them: by thread, in time order, each
 * thread's in one run its names point to.  A name of no time inside the
 * window is left out, unless it is the last.
 */
static int names_result(struct wp_account *a)
{
	uint32_t *first = calloc(a->nr + 1, sizeof(*first));
	size_t kept = 0;

	if (!first)
		return -ENOMEM;
	for (size_t i = a->nr_names; i-- > 0;)
		first[a->names[i].serial] = (uint32_t)i + 1;
	a->result_names = calloc(a->nr_names + 1, sizeof(*a->result_names));
	if (!a->result_names) {
		free(first);
		return -ENOMEM;
	}
	for (size_t i = 0; i < a->nr; i++) {
		struct wp_thread_times *t = &a->result[i];

		t->names = &a->result_names[kept];
		for (uint32_t k = first[t->serial]; k; k = a->names[k - 1].next) {
			const struct name_span *n = &a->names[k - 1];

			if (!n->pub.wall_ns && n->next)
				continue;
			a->result_names[kept] = n->pub;
			if (n->cmdline)
				a->result_names[kept].cmdline = &a->cmdlines[n->cmdline - 1];
			kept++;
			t->nr_names++;
		}
		if (!t->nr_names)
			t->names = NULL;
	}
	free(first);
	return 0;
}


/* The timeline's sink: thread serial is named comm from time (exec: a new program). */
static void on_renamed(void *arg, uint32_t serial, uint64_t time, const char comm[16], bool exec)
{
	struct wp_account *a = arg;
	struct thread *t = thread_at(a, serial);
	const struct wp_tl_thread *lt = wp_timeline_thread(a->tl, serial);

	if (!t)
		return;
	if (lt)
		identify(t, lt);
	/* A process's main thread keeps every name it exec'd under. */
	if (exec) {
		/*
		 * Seen before its exec under no name at all (the launched
		 * command, from its fork on the command's cgroup): the name
		 * it execs under is its name from the start.
		 */
		if (!t->name && !t->t.comm[0]) {
			name_open(a, t, t->t.start_ns, comm, false);
		} else {
			names_begin(a, t);
			name_open(a, t, time, comm, false);
		}
	} else if (t->name) {
		memcpy(a->names[t->name - 1].pub.comm, comm, 16);	/* renamed itself */
	}
	memcpy(t->t.comm, comm, sizeof(t->t.comm));
}

/* The timeline's sink: t's EXIT record; what an exit figure will be compared with. */
static void on_exited(void *arg, uint32_t serial, uint64_t time, uint64_t running_since,
		      uint64_t counted_until)
{
	struct wp_account *a = arg;
	struct thread *t;

	if (!a->exit_clocks)
		return;
	t = thread_at(a, serial);
	if (!t)
		return;
	if (!t->anchor) {
		t->anchor = calloc(1, sizeof(*t->anchor));
		if (!t->anchor) {
			a->err = -ENOMEM;
			return;
		}
	}
	t->anchor->exit_seen = true;
	t->anchor->exit_records_ns = t->on_all_ns;
	/* The part of its last slice its figure surely holds. */
	if (running_since && counted_until > running_since && counted_until <= time)
		t->anchor->exit_records_ns += counted_until - running_since;
	else
		counted_until = running_since;
	t->anchor->exit_late = t->late_starts;
	t->anchor->exit_slice_ns = counted_until && time > counted_until ? time - counted_until : 0;
}

/* The timeline's sink: t's window is final. */
static void on_closed(void *arg, uint32_t serial)
{
	struct wp_account *a = arg;
	const struct wp_tl_thread *lt = wp_timeline_thread(a->tl, serial);
	struct thread *t = thread_at(a, serial);
	uint64_t start, end;

	if (!t || !lt)
		return;
	identify(t, lt);
	start = lt->start_ns;
	end = lt->end_ns;
	if (a->opts.window_start && start < a->opts.window_start)
		start = a->opts.window_start;
	if (a->opts.window_end && end > a->opts.window_end)
		end = a->opts.window_end;
	if (end < start)
		end = start;
	t->t.start_ns = start;
	t->t.end_ns = end;
	t->t.wall_ns = end - start;
	t->t.exited = lt->exited;
	t->t.approximate = lt->approximate;
	t->t.on_cpu_bound_ns = lt->uncertain_ns < t->t.wall_ns ? lt->uncertain_ns : t->t.wall_ns;
	memcpy(t->t.comm, lt->comm, sizeof(t->t.comm));
}

/*
 * The longest last slice of an exiting thread whose exit figure anchors
 * it: the kernel counts a running thread's time at its ticks (every 1 to
 * 10 ms) and switches, so the figure taskstats sends at its exit lacks
 * its last slice but for the ticks in it; one this short had one tick at
 * most, and the anchor is within its length of the truth.  A longer one
 * lacks what ran since its last tick.
 */
#define EXIT_LAST_SLICE_MAX 1000000ULL
/* The tick of the commonest kernels (HZ 250), for longer last slices. */
#define EXIT_TICK_NS 4000000ULL

/*
 * The kernel's figure of a thread's time (WP_RECORD_THREAD_CLOCK): the
 * thread's anchor, with what the records gave it by then.  A start
 * figure is its base (once); an end or exit figure its end (the last).
 */
static int account_clock(struct wp_account *a, const struct perf_event_header *rec)
{
	struct wp_record_thread_clock tc;
	const struct wp_tl_thread *lt;
	struct anchor_point *p, pt;
	struct thread *t;

	if (wp_thread_clock_parse(rec, &tc))
		return 0;
	if (tc.header.misc == WP_CLOCK_EXIT) {
		/*
		 * Its EXIT came first, or was lost: the latest thread of its
		 * tid (a new one takes a tid only after its FORK, which comes
		 * after; and then it is not the one whose figures these are).
		 */
		lt = wp_timeline_latest(a->tl, tc.tid);
		if (lt && lt->born && lt->start_ns > tc.time)
			lt = NULL;
	} else {
		lt = wp_timeline_find(a->tl, tc.tid);
	}
	if (!lt || lt->pid != tc.pid)
		return 0;	/* none of the recording's */
	t = thread_at(a, lt->serial);
	if (!t)
		return a->err = -ENOMEM;
	if (!t->anchor) {
		t->anchor = calloc(1, sizeof(*t->anchor));
		if (!t->anchor)
			return a->err = -ENOMEM;
	}
	pt = (struct anchor_point){ .kernel_ns = tc.on_cpu_ns, .set = true, .time = tc.time,
				    .records_ns = t->on_all_ns, .settle = true,
				    .kernel_rq_ns = tc.runq_ns,
				    .records_rq_ns = t->queued_all_ns,
				    .late = t->late_starts,
				    .undecided = wp_timeline_undecided(a->tl, lt->serial) };
	if (pt.undecided) {
		pt.records_ns = pt.records_rq_ns = 0;
		pt.settle = false;
	}
	/*
	 * At its exit the kernel had not yet counted the thread's last slice
	 * (only a tick would have): its figure is the slices before, which
	 * the records' are compared with.  A last slice long enough to have
	 * had a tick leaves the figure between the two: no anchor then.
	 */
	pt.exit = tc.header.misc == WP_CLOCK_EXIT;
	if (tc.header.misc == WP_CLOCK_EXIT && !t->anchor->exit_seen)
		pt.exit_unseen = true;
	if (tc.header.misc == WP_CLOCK_EXIT && t->anchor->exit_seen) {
		/*
		 * The kernel sends the figures early in the exit, before the
		 * EXIT record: they are its slices before the one it ran in
		 * then, that one until the kernel last counted it (a fork it
		 * made, on_exited), and the ticks since.
		 */
		pt.records_ns = t->anchor->exit_records_ns;
		pt.settle = false;
		pt.late = t->anchor->exit_late;
		/*
		 * A slice long enough to have had ticks: the figure has what
		 * of it ran until the last one, all but the last part of a
		 * tick; half a tick of the commonest rate, within as much.
		 */
		if (t->anchor->exit_slice_ns > EXIT_LAST_SLICE_MAX) {
			uint64_t l = t->anchor->exit_slice_ns;
			uint64_t ticked = l - (l < EXIT_TICK_NS ? l : EXIT_TICK_NS) / 2;

			pt.kernel_ns = pt.kernel_ns > ticked ? pt.kernel_ns - ticked : 0;
		}
	}
	/*
	 * A window's: around each of its ends, the last figure at or before
	 * it and the first at or after (figures come in time order).  Not
	 * one whose EXIT was lost: its records are compared with all of
	 * theirs.
	 */
	for (int k = 0; k < 2 && (a->opts.window_start || a->opts.window_end) && !pt.exit_unseen;
	     k++) {
		uint64_t at = k ? (a->opts.window_end ? a->opts.window_end : UINT64_MAX) :
			      a->opts.window_start;

		if (pt.time <= at)
			t->anchor->near[k][0] = pt;
		if (pt.time >= at && !t->anchor->near[k][1].set)
			t->anchor->near[k][1] = pt;
	}
	/*
	 * The first figure of a thread is its base (a start figure, or one
	 * read while recording), the last its end.
	 */
	if (tc.header.misc == WP_CLOCK_START ||
	    (tc.header.misc == WP_CLOCK_DURING && !t->anchor->base.set && !lt->born))
		p = &t->anchor->base;
	else
		p = &t->anchor->end;
	if (!(p == &t->anchor->base && p->set))
		*p = pt;
	a->anchors.clocks++;
	a->anchors.clocks_during += tc.header.misc == WP_CLOCK_DURING;
	return 0;
}

int wp_account_new(const struct wp_meta *meta, const struct wp_account_opts *opts,
		   struct wp_account **out)
{
	struct wp_account *a = calloc(1, sizeof(*a));
	struct wp_timeline_opts to = { 0 };
	struct wp_timeline_sink sink = {
		.segment = on_segment, .sample = on_sample, .switch_sample = on_switch_sample,
		.renamed = on_renamed, .exited = on_exited, .closed = on_closed,
		.cpu_span = on_cpu_span,
		.lost = on_lost, .arg = a,
	};
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	if (opts)
		a->opts = *opts;
	a->start_ns = meta->start_clock_ns;
	a->sample_period_ns = meta->sample_period_ns;
	a->wakeups = meta->flags & WP_META_WAKEUPS;
	a->wakeups_gated = a->wakeups && (meta->flags & WP_META_WAKEUPS_GATED);
	a->exit_clocks = meta->flags & WP_META_EXIT_CLOCKS;
	to.unknown_stack = a->opts.unknown_stack;
	to.start_stack = a->opts.start_stack;
	to.switch_stacks_sampled = a->opts.switch_stacks_sampled;
	to.unsampled_switch_stack = a->opts.unsampled_switch_stack;
	err = wp_timeline_new(meta, &to, &a->tl);
	if (!err)
		err = wp_timeline_add_sink(a->tl, &sink);
	if (err) {
		wp_account_free(a);
		return err;
	}
	wp_timeline_set_window(a->tl, a->opts.window_start, a->opts.window_end);
	/* Idle time is the idle task's switches, seen only CPU-wide. */
	if ((meta->flags & WP_META_CPU_WIDE) && (meta->flags & WP_META_SWITCHES) &&
	    meta->nr_cpus && meta->nr_cpus <= 65536) {
		a->cpu_times = calloc(meta->nr_cpus, sizeof(*a->cpu_times));
		if (!a->cpu_times) {
			wp_account_free(a);
			return -ENOMEM;
		}
		a->nr_cpus = meta->nr_cpus;
		a->cpu_wide = true;
	}
	*out = a;
	return 0;
}

/*
 * As time passes a --time window's start or end: each thread's records'
 * cut there, what they gave it by then (settled as the segments open
 * then end, anchor_settle), for its window's share of the kernel's time
 * between two figures (window_kernel).
 */
static void take_cuts(struct wp_account *a, uint64_t time)
{
	for (int k = 0; k < 2; k++) {
		uint64_t at = k ? a->opts.window_end : a->opts.window_start;

		if (!at || a->cut_taken[k] || time < at)
			continue;
		a->cut_taken[k] = true;
		for (uint32_t i = 0; i < wp_timeline_nr_threads(a->tl); i++) {
			const struct wp_tl_thread *lt = wp_timeline_thread(a->tl, i);
			struct thread *t;

			if (!lt || lt->closed || !(t = thread_at(a, i)))
				continue;
			if (!t->anchor && !(t->anchor = calloc(1, sizeof(*t->anchor)))) {
				a->err = -ENOMEM;
				return;
			}
			t->anchor->cut[k] = (struct anchor_point){
				.set = true, .time = at, .records_ns = t->on_all_ns,
				.records_rq_ns = t->queued_all_ns, .late = t->late_starts,
				.settle = true, .undecided = wp_timeline_undecided(a->tl, i) };
			if (t->anchor->cut[k].undecided) {
				t->anchor->cut[k].records_ns = t->anchor->cut[k].records_rq_ns = 0;
				t->anchor->cut[k].settle = false;
			}
		}
	}
}

int wp_account_record(struct wp_account *a, const struct perf_event_header *rec,
		      uint64_t time)
{
	int err;

	if (a->err)
		return a->err;
	take_cuts(a, time);
	if (rec->type == WP_RECORD_CMDLINE)
		return account_cmdline(a, rec);
	if (rec->type == WP_RECORD_THREAD_CLOCK)
		return account_clock(a, rec);
	err = wp_timeline_record(a->tl, rec, time);
	return err ? err : a->err;
}

int wp_account_sample(struct wp_account *a, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time, bool switch_out, uint32_t stack)
{
	int err;

	if (a->err)
		return a->err;
	take_cuts(a, time);
	err = wp_timeline_sample(a->tl, pid, tid, cpu, time, switch_out, stack);
	return err ? err : a->err;
}

int wp_account_wakeup(struct wp_account *a, uint32_t wakee, uint64_t time,
		      const struct wp_waker *waker)
{
	int err;

	if (a->err)
		return a->err;
	take_cuts(a, time);
	err = wp_timeline_wakeup(a->tl, wakee, time, waker);
	return err ? err : a->err;
}

int wp_account_sched_switch(struct wp_account *a, uint32_t prev, uint32_t next, uint64_t time,
			    uint32_t cpu)
{
	if (a->err)
		return a->err;
	take_cuts(a, time);
	return wp_timeline_sched_switch(a->tl, prev, next, time, cpu);
}

int wp_account_counted(struct wp_account *a, uint32_t tid, uint64_t time)
{
	if (a->err)
		return a->err;
	take_cuts(a, time);
	return wp_timeline_counted(a->tl, tid, time);
}

int wp_account_enqueued(struct wp_account *a, uint32_t wakee, uint64_t time)
{
	int err;

	if (a->err)
		return a->err;
	take_cuts(a, time);
	err = wp_timeline_enqueued(a->tl, wakee, time);
	return err ? err : a->err;
}

bool wp_account_has_wakeups(const struct wp_account *a)
{
	return wp_timeline_has_wakeups(a->tl);
}

const struct wp_waker *wp_account_wakers(const struct wp_account *a, size_t *n)
{
	return wp_timeline_wakers(a->tl, n);
}

const struct wp_wake_weight *wp_account_wake_weights(const struct wp_account *a, size_t *n)
{
	*n = a->nr_wakes;
	return a->wakes;
}

const struct wp_cpu_time *wp_account_cpus(const struct wp_account *a, size_t *n)
{
	*n = a->result && a->cpu_times ? a->nr_cpus : 0;
	return *n ? a->cpu_times : NULL;
}

const struct wp_timeline *wp_account_timeline(const struct wp_account *a)
{
	return a->tl;
}

/* Results (in serial order) by pid, tid and start; by creation when all are equal. */
static int result_cmp(const void *x, const void *y, void *arg)
{
	const struct wp_thread_times *res = arg;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	const struct wp_thread_times *a = &res[i], *b = &res[j];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

/*
 * Spread a thread's exact on-CPU time over its sampled stacks in
 * proportion to their samples; the rounding remainder goes to the stack
 * with the most samples, so the parts add up exactly.  Threads are in
 * serial order.
 */
static int distribute_on_cpu(struct wp_account *a)
{
	size_t nr_threads = a->nr;
	uint64_t *given = calloc(nr_threads ? nr_threads : 1, sizeof(*given));
	uint32_t *biggest = malloc((nr_threads ? nr_threads : 1) * sizeof(*biggest));

	if (!given || !biggest) {
		free(given);
		free(biggest);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr_threads; i++)
		biggest[i] = UINT32_MAX;
	for (size_t i = 0; i < a->nr_weights; i++) {
		struct wp_stack_weight *w = &a->weights[i];
		const struct wp_thread_times *t = &a->threads[w->thread].t;
		uint32_t s = w->thread;

		if (!w->samples || !t->samples)
			continue;
		w->on_cpu_ns = (uint64_t)((unsigned __int128)t->on_cpu_ns * w->samples /
					  t->samples);
		given[s] += w->on_cpu_ns;
		if (biggest[s] == UINT32_MAX || a->weights[biggest[s]].samples < w->samples)
			biggest[s] = (uint32_t)i;
	}
	for (size_t s = 0; s < nr_threads; s++) {
		uint64_t on = a->threads[s].t.on_cpu_ns;

		if (biggest[s] != UINT32_MAX) {
			a->weights[biggest[s]].on_cpu_ns += on - given[s];
		} else if (on) {
			/* On a CPU, but never sampled there. */
			struct wp_stack_weight *w = weight_get(a, (uint32_t)s,
							       a->opts.unsampled_stack);

			if (w)
				w->on_cpu_ns = on;
			a->unsampled_ns += on;
			a->unsampled_threads++;
		}
	}
	free(given);
	free(biggest);
	return 0;
}


/* x * num / den without overflow (den > 0, num <= den). */
static uint64_t scale(uint64_t x, uint64_t num, uint64_t den)
{
	return (uint64_t)((unsigned __int128)x * num / den);
}

static uint64_t *part_ns(struct wp_stack_weight *w, int p)
{
	return p == 0 ? &w->blocked_ns : p == 1 ? &w->runnable_ns : &w->preempted_ns;
}

static uint64_t *part_count(struct wp_stack_weight *w, int p)
{
	return p == 0 ? &w->blocked_count : p == 1 ? &w->runnable_count : &w->preempted_count;
}

/* Whether w is a stack a switch-out had (not a marker of a missing one). */
static bool sampled_off_stack(const struct wp_account *a, const struct wp_stack_weight *w)
{
	return w->stack != a->opts.unsampled_switch_stack && w->stack != a->opts.unknown_stack &&
	       w->stack != a->opts.unsampled_stack &&
	       (!a->opts.start_stack || w->stack != a->opts.start_stack);
}

/* x in proportion to basis[0..n) (whose sum is total): the parts, the remainder to big. */
static void split(uint64_t x, const uint64_t *basis, size_t n, uint64_t total, size_t big,
		  uint64_t *out)
{
	uint64_t given = 0;

	for (size_t i = 0; i < n; i++) {
		out[i] = scale(x, basis[i], total);
		given += out[i];
	}
	out[big] += x - given;
}

/* The sampled intervals of weight w in stratum (part p, bucket b) of its thread t. */
static struct stratum_cell stratum_of(const struct wp_account *a, const struct thread *t, int p,
				      unsigned int b, size_t w)
{
	uint64_t v = 0;

	if (!wp_u64map_get(&a->strata, stratum_key(t->t.serial, p, b, a->weights[w].stack), &v) ||
	    !v || v > a->nr_cells)
		return (struct stratum_cell){ 0 };
	return a->cells[v - 1];
}

/*
 * The variance of the share p of a stratum's time that one stack is
 * estimated to have, from the stratum's n sampled intervals (sum of
 * squared lengths sq_all, all_ns in all) and the stack's among them
 * (sq_one): the ratio estimator's, taking the sampled intervals as drawn
 * at random from the stratum's.  Under two intervals there is nothing to
 * judge spread by: the variance of a single draw, p (1 - p).
 */
static double share_variance(double p, uint64_t n, double sq_one, double sq_all,
			     uint64_t all_ns)
{
	double resid = sq_one * (1 - 2 * p) + p * p * sq_all;

	if (n < 2 || !all_ns)
		return p * (1 - p);
	if (resid < 0)
		resid = 0;
	return (double)n / (double)(n - 1) * resid / ((double)all_ns * (double)all_ns);
}

/*
 * How one thread's unsampled time of part p is to be shared among its
 * sampled weights idx[0..n): into basis, the estimated share of each (see
 * strata_note); a stratum where nothing was sampled goes in proportion to
 * the weights' whole time of that part.  Returns the sum.
 */
static uint64_t share_basis(struct wp_account *a, const struct thread *t, uint64_t unsampled,
			    int p, const size_t *idx, size_t n, uint64_t *basis, double *var)
{
	uint64_t leftover = unsampled, total = 0, sum = 0;

	memset(basis, 0, n * sizeof(*basis));
	for (size_t i = 0; i < n; i++) {
		total += *part_ns(&a->weights[idx[i]], p);
		var[i] = 0;
	}
	for (unsigned int b = 0; t->strata && b < EST_BUCKETS; b++) {
		uint64_t u = t->strata->unsampled[p * EST_BUCKETS + b], in_b = 0, count = 0;
		double sq = 0;

		if (!u)
			continue;
		for (size_t i = 0; i < n; i++) {
			struct stratum_cell c = stratum_of(a, t, stratum_part(p), b, idx[i]);

			in_b += c.ns;
			count += c.n;
			sq += c.sq;
		}
		if (!in_b)
			continue;
		for (size_t i = 0; i < n; i++) {
			struct stratum_cell c = stratum_of(a, t, stratum_part(p), b, idx[i]);
			double share = (double)c.ns / (double)in_b;

			basis[i] += scale(u, c.ns, in_b);
			var[i] += (double)u * (double)u * share_variance(share, count, c.sq, sq, in_b);
		}
		leftover = leftover > u ? leftover - u : 0;
	}
	/* Strata where nothing was sampled: by the whole time, one draw's spread. */
	for (size_t i = 0; total && i < n; i++) {
		double share = (double)*part_ns(&a->weights[idx[i]], p) / (double)total;

		basis[i] += scale(leftover, *part_ns(&a->weights[idx[i]], p), total);
		var[i] += (double)leftover * (double)leftover * share * (1 - share);
	}
	for (size_t i = 0; i < n; i++)
		sum += basis[i];
	return sum;
}

/*
 * One thread's unsampled weight u shared out among its sampled weights
 * (the indices in idx[0..n)), kind by kind, by the estimated shares; its
 * interval counts and the wakers of its blocked time likewise.  Rounding
 * remainders go to the largest share, so the thread's totals stay exact.
 */
static int spread_unsampled(struct wp_account *a, const struct thread *t, size_t u,
			    const size_t *idx, size_t n)
{
	uint64_t *basis = malloc(2 * (n ? n : 1) * sizeof(*basis)), *out = basis + n;
	double *var = malloc((n ? n : 1) * sizeof(*var));

	if (!basis || !var) {
		free(basis);
		free(var);
		return -ENOMEM;
	}
	for (int p = 0; p < EST_PARTS; p++) {
		uint64_t ns = *part_ns(&a->weights[u], p), cnt = *part_count(&a->weights[u], p);
		uint64_t total;
		size_t big = 0;

		if (!n || (!ns && !cnt))
			continue;
		total = share_basis(a, t, ns, p, idx, n, basis, var);
		if (!total)
			continue;
		for (size_t i = 1; i < n; i++)
			if (basis[i] > basis[big])
				big = i;
		/* Wakers first: add_wakes may move a->wakes. */
		for (uint32_t k = p == 0 ? a->weights[u].wakes : 0; k; k = a->wakes[k - 1].next) {
			struct wp_wake_weight wk = a->wakes[k - 1];
			uint64_t *cnts = malloc(n * sizeof(*cnts));

			if (!cnts) {
				free(basis);
				free(var);
				return -ENOMEM;
			}
			/* Rounded down: a stack's wakers never end more than its time. */
			for (size_t i = 0; i < n; i++) {
				out[i] = scale(wk.blocked_ns, basis[i], total);
				cnts[i] = scale(wk.count, basis[i], total);
			}
			for (size_t i = 0; i < n; i++)
				if (out[i] || cnts[i])
					add_wakes(a, &a->weights[idx[i]], wk.waker, out[i], cnts[i]);
			free(cnts);
		}
		if (p == 0)
			a->weights[u].wakes = 0;
		split(ns, basis, n, total, big, out);
		for (size_t i = 0; i < n; i++) {
			*part_ns(&a->weights[idx[i]], p) += out[i];
			a->weights[idx[i]].estimated_ns[p] += out[i];
			/* (The shares' basis may fall short of ns by rounding only.) */
			a->weights[idx[i]].estimate_var[p] += (float)var[i];
		}
		split(cnt, basis, n, total, big, out);
		for (size_t i = 0; i < n; i++)
			*part_count(&a->weights[idx[i]], p) += out[i];
		*part_ns(&a->weights[u], p) = 0;
		*part_count(&a->weights[u], p) = 0;
	}
	free(basis);
	free(var);
	return 0;
}

static int weight_thread_cmp(const void *x, const void *y, void *arg)
{
	const struct wp_account *a = arg;
	const struct wp_stack_weight *p = &a->weights[*(const size_t *)x];
	const struct wp_stack_weight *q = &a->weights[*(const size_t *)y];
	bool pu = p->stack == a->opts.unsampled_switch_stack;
	bool qu = q->stack == a->opts.unsampled_switch_stack;

	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	if (pu != qu)
		return pu ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* x * num / den, rounded down (den > 0). */
static uint64_t share_of(uint64_t x, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)x * num / den) : 0;
}

/* x times f >= 0, rounded down. */
static uint64_t times(uint64_t x, double f)
{
	double v = (double)x * f;

	return v <= 0 ? 0 : v >= 0x1p63 ? UINT64_MAX / 2 : (uint64_t)v;
}

/* The runnable part of n unrecorded waits of t, ns in all (wakeest.h). */
static uint64_t runnable_part(const struct wp_account *a, const struct thread *t, uint64_t n,
			      uint64_t ns)
{
	return wp_wake_runnable_part(t->tally ? &t->tally->seen : NULL, &a->seen, n, ns);
}

/*
 * With the wake-up tracepoints gated (WP_META_WAKEUPS_GATED), a wait whose
 * wake-up fell where they were off ended blocked at its switch-in: its
 * runnable part is unknown.  So is that of a wait whose wake-up the
 * kernel did not report with them on (thread_switch_in), gated or not.  The gate opens and closes by time, blind to
 * the threads, so the waits whose wake-up was recorded stand for the
 * others: each thread's runnable share of them (the recording's, for a
 * thread with few) moves that share of its unsplit time from blocked to
 * runnable, in its totals and in each stack, up to their mean runnable
 * length a wait (runnable_part).  A share first: the recorded waits,
 * where every wake-up and switch costs a sample, last several times as
 * long as the others.  Only the waits with the
 * tracepoints on from start to end count (see thread_switch_in).  The
 * blocked time whose waker went unrecorded goes to the stack's known
 * wakers, in proportion.  Totals stay exact: only the split and the
 * wakers are estimated.
 */
static void estimate_wakeups(struct wp_account *a)
{
	struct wp_wakeup_estimate *e = &a->wake_est;

	e->gated = a->wakeups_gated;
	for (size_t i = 0; a->wakeups && i < a->nr; i++) {
		struct thread *t = &a->threads[i];
		struct wake_tally *y = t->tally;
		uint64_t moved;

		if (!y)
			continue;
		moved = runnable_part(a, t, y->unsplit_count, y->unsplit_ns);
		y->moved_ns = y->moved_left_ns = moved;
		y->unsplit_left_ns = y->unsplit_ns;
		t->t.blocked_ns -= moved;
		t->t.runnable_ns += moved;
		t->t.wakeups += y->unsplit_count;
		t->t.wakeups_unrecorded = y->unsplit_count;
		e->waits += y->unsplit_count;
		e->waits_ns += y->unsplit_ns;
		e->runnable_ns += moved;
	}
	/*
	 * Each stack's part of its thread's move, in proportion to its
	 * unsplit time, the last one the rest: the stacks add up to the
	 * thread, which a split of their own (runnable_part is no linear
	 * function) would not.
	 */
	for (size_t i = 0; i < a->nr_gaps; i++) {
		const struct wake_gap *g = &a->gaps[i];
		struct wp_stack_weight *w = &a->weights[g->weight];
		struct wake_tally *y = a->threads[w->thread].tally;
		uint64_t known = 0, count = 0, target, moved = 0;

		if (y && y->unsplit_left_ns) {
			uint64_t ns = g->unsplit_ns < y->unsplit_left_ns ? g->unsplit_ns
									 : y->unsplit_left_ns;

			moved = ns == y->unsplit_left_ns ? y->moved_left_ns
							 : share_of(y->moved_left_ns, ns,
								    y->unsplit_left_ns);
			y->moved_left_ns -= moved;
			y->unsplit_left_ns -= ns;
		}
		if (moved > w->blocked_ns)
			moved = w->blocked_ns;
		w->blocked_ns -= moved;
		w->runnable_ns += moved;
		w->runnable_count += g->unsplit_count;
		w->estimated_ns[1] += moved;
		for (uint32_t k = w->wakes; k; k = a->wakes[k - 1].next) {
			known += a->wakes[k - 1].blocked_ns;
			count += a->wakes[k - 1].count;
		}
		if (!known)
			continue;
		/* Woken waits lose their runnable part; unwoken ones' blocked part is shared. */
		target = known + g->unwoken_ns;
		target -= target > moved ? moved : target;
		if (target > w->blocked_ns)
			target = w->blocked_ns;
		for (uint32_t k = w->wakes; k; k = a->wakes[k - 1].next) {
			struct wp_wake_weight *wk = &a->wakes[k - 1];

			wk->blocked_ns = times(wk->blocked_ns, (double)target / (double)known);
			wk->count += times(wk->count, (double)g->unwoken_count / (double)count);
		}
		e->unwoken_ns += g->unwoken_ns;
	}
	free(a->gaps);
	a->gaps = NULL;
	a->nr_gaps = 0;
	wp_u64map_release(&a->gap_index);
}

/*
 * Above the --switch-stacks budget the kernel samples switch-outs: the
 * time of the intervals without a stack (on unsampled_switch_stack) is
 * shared out among the thread's sampled stacks of the same kind, as a
 * ratio estimate by stratum (strata_note).  Totals stay exact; what no
 * sampled stack of its kind can stand for stays where it is.
 */
static int estimate_switch_stacks(struct wp_account *a)
{
	size_t *order, n = 0, kept = 0;
	int err = 0;

	if (!a->opts.switch_stacks_sampled || !a->nr_weights)
		return 0;
	/* Waits the recording's end cut short count as long as they were. */
	for (size_t i = 0; i < a->nr; i++)
		if (a->threads[i].strata)
			strata_wait_end(a, &a->threads[i], a->threads[i].strata->wait_ns[0] +
							   a->threads[i].strata->wait_ns[1]);
	order = malloc(a->nr_weights * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr_weights; i++)
		order[i] = i;
	/* By thread, each thread's unsampled weight (if any) first. */
	qsort_r(order, a->nr_weights, sizeof(*order), weight_thread_cmp, a);
	for (size_t i = 0; !err && i < a->nr_weights; i = n) {
		uint32_t serial = a->weights[order[i]].thread;
		size_t first = i;

		for (n = i; n < a->nr_weights && a->weights[order[n]].thread == serial; n++)
			;
		if (a->weights[order[first]].stack != a->opts.unsampled_switch_stack)
			continue;
		/* The sampled ones, moved to the front of the rest of the group. */
		kept = 0;
		for (size_t j = first + 1; j < n; j++)
			if (sampled_off_stack(a, &a->weights[order[j]]))
				order[first + 1 + kept++] = order[j];
		err = spread_unsampled(a, &a->threads[serial], order[first], order + first + 1,
				       kept);
	}
	free(order);
	free(a->cells);
	a->cells = NULL;
	a->nr_cells = a->cap_cells = 0;
	for (size_t i = 0; i < a->nr; i++) {
		free(a->threads[i].strata);
		a->threads[i].strata = NULL;
	}
	wp_u64map_release(&a->strata);
	/* Drop what was wholly shared out. */
	kept = 0;
	for (size_t i = 0; i < a->nr_weights; i++) {
		const struct wp_stack_weight *w = &a->weights[i];

		if (w->stack == a->opts.unsampled_switch_stack && !w->blocked_ns &&
		    !w->runnable_ns && !w->preempted_ns && !w->blocked_count &&
		    !w->runnable_count && !w->preempted_count && !w->samples)
			continue;
		a->weights[kept++] = *w;
	}
	a->nr_weights = kept;
	return err;
}

/*
 * Turn the threads, in place, into the result: the public part of each,
 * sorted, in an array of its own size.  No copy of them all is made, so
 * the peak is the threads and two numbers for each.
 */
static int make_result(struct wp_account *a)
{
	struct wp_thread_times *res = (struct wp_thread_times *)a->threads;
	uint32_t *sorted = malloc((a->nr + 1) * sizeof(*sorted));
	uint32_t *sorted_of = malloc((a->nr + 1) * sizeof(*sorted_of));

	if (!sorted || !sorted_of) {
		free(sorted);
		free(sorted_of);
		return -ENOMEM;
	}
	/* Each result is smaller than its thread, and goes no later. */
	for (size_t i = 0; i < a->nr; i++) {
		struct wp_thread_times t = a->threads[i].t;

		t.hists = a->threads[i].hists;
		free(a->threads[i].anchor);
		res[i] = t;
	}
	a->threads = NULL;
	a->cap = 0;
	a->result = realloc(res, (a->nr + 1) * sizeof(*res));
	if (!a->result)
		a->result = res;	/* smaller: it cannot fail, but keep it */
	res = a->result;
	for (size_t i = 0; i < a->nr; i++)
		sorted[i] = (uint32_t)i;
	if (a->nr)	/* qsort wants a valid pointer even for 0 elements */
		qsort_r(sorted, a->nr, sizeof(*sorted), result_cmp, res);
	for (size_t i = 0; i < a->nr; i++)
		sorted_of[sorted[i]] = (uint32_t)i;
	/* Put res[sorted[i]] at i, cycle by cycle; a place done points to itself. */
	for (size_t i = 0; i < a->nr; i++) {
		struct wp_thread_times first;
		size_t j = i;

		if (sorted[i] == i)
			continue;
		first = res[i];
		while (sorted[j] != i) {
			size_t k = sorted[j];

			res[j] = res[k];
			sorted[j] = (uint32_t)j;
			j = k;
		}
		res[j] = first;
		sorted[j] = (uint32_t)j;
	}
	/* Weights now refer to threads by their place in the result. */
	for (size_t i = 0; i < a->nr_weights; i++)
		a->weights[i].thread = sorted_of[a->weights[i].thread];
	free(sorted);
	free(sorted_of);
	return 0;
}

/*
 * The fewest late switch-ins of anchored threads, in all, from which the
 * mean lag stands for threads without anchors.
 */
#define ANCHOR_MEAN_MIN_LATE 100
/* The least on-CPU time between a thread's figures that stands for the rest of its window. */
#define ANCHOR_SPAN_MIN_NS 1000000ULL
/* Threads on a CPU this long at least say how far off the records are, in shares. */
#define ANCHOR_SHARE_MIN_NS 10000000ULL

/* Whether t was born during the recording: its kernel figures began at 0 then. */
static bool born_inside(const struct wp_account *a, const struct thread *t)
{
	const struct wp_tl_thread *lt = wp_timeline_thread(a->tl, t->t.serial);

	return lt && lt->born;
}

/*
 * What anchoring moved in one thread's totals, kind by kind, for its
 * stacks to follow: into on-CPU from blocked, runnable and preempted
 * time; out of on-CPU into preempted; from blocked into runnable, and
 * from runnable and preempted into blocked (the run queue anchor).
 */
struct moves {
	uint64_t into_on[3];
	uint64_t out_of_on;
	uint64_t to_runnable;
	uint64_t to_blocked[3];		/* [1] from runnable, [2] from preempted */
	uint64_t before[3];		/* the totals before */
	bool any;
	bool anchored;			/* to its own figures */
};

static uint64_t *thread_part(struct thread *t, int k)
{
	return k == 0 ? &t->t.blocked_ns : k == 1 ? &t->t.runnable_ns : &t->t.preempted_ns;
}

/*
 * Move moved ns of t's time into (moved > 0) or out of (< 0) on-CPU
 * time.  In: from the waits its late switch-ins ended, in proportion to
 * how many of each kind they ended (the time a switch record comes late
 * was the thread's, not the wait's), as far as each kind has; out: into
 * preempted time (it did not run then, why is not told).  Returns what
 * was moved.
 */
static int64_t move_into_on_cpu(struct thread *t, int64_t moved, struct moves *m)
{
	uint64_t late = t->late_after[0] + t->late_after[1] + t->late_after[2];
	uint64_t want, taken = 0, take[3] = { 0 };

	m->any = m->any || moved;
	if (moved < 0) {
		uint64_t out = (uint64_t)-moved < t->t.on_cpu_ns ? (uint64_t)-moved : t->t.on_cpu_ns;

		t->t.on_cpu_ns -= out;
		t->t.preempted_ns += out;
		m->out_of_on += out;
		return -(int64_t)out;
	}
	want = (uint64_t)moved;
	for (int k = 0; k < 3 && late; k++) {
		take[k] = (uint64_t)((unsigned __int128)want * t->late_after[k] / late);
		if (take[k] > *thread_part(t, k))
			take[k] = *thread_part(t, k);
		taken += take[k];
	}
	/* What the proportions could not take, from whatever wait has it left. */
	for (int k = 2; k >= 0 && taken < want; k--) {
		uint64_t more = *thread_part(t, k) - take[k];

		if (more > want - taken)
			more = want - taken;
		take[k] += more;
		taken += more;
	}
	for (int k = 0; k < 3; k++) {
		*thread_part(t, k) -= take[k];
		m->into_on[k] += take[k];
	}
	t->t.on_cpu_ns += taken;
	return (int64_t)taken;
}

/*
 * Make t's time on a run queue (runnable + preempted) the kernel's
 * figure over the same span, which it counts from each wake-up (or
 * preemption) to the switch-in: diff more (from blocked time) or less
 * (into blocked time, from runnable first).  Only by what the wake-up
 * estimate had to guess (anchor_times).
 */
static void move_into_queued(struct thread *t, int64_t diff, struct moves *m)
{
	uint64_t n;

	m->any = m->any || diff;
	if (diff > 0) {
		n = (uint64_t)diff < t->t.blocked_ns ? (uint64_t)diff : t->t.blocked_ns;
		t->t.blocked_ns -= n;
		t->t.runnable_ns += n;
		m->to_runnable += n;
		return;
	}
	n = (uint64_t)-diff;
	if (n > t->t.runnable_ns + t->t.preempted_ns)
		n = t->t.runnable_ns + t->t.preempted_ns;
	t->t.blocked_ns += n;
	if (n <= t->t.runnable_ns) {
		t->t.runnable_ns -= n;
		m->to_blocked[1] += n;
	} else {
		m->to_blocked[1] += t->t.runnable_ns;
		m->to_blocked[2] += n - t->t.runnable_ns;
		t->t.preempted_ns -= n - t->t.runnable_ns;
		t->t.runnable_ns = 0;
	}
}

/*
 * After follow_moves' shares: the rounding remainders, where a thread's
 * stacks held the whole kind (to its largest stack of the kind, or the
 * one that gave the most); and no stack's wakers end more than its
 * blocked time.
 */
static void remainders(struct wp_account *a, const struct moves *mv, const uint64_t *held,
		       const size_t *big, uint64_t *sums)
{
	size_t n3 = a->nr * 3;

	memset(sums, 0, (n3 ? n3 : 1) * sizeof(*sums));
	for (size_t j = 0; j < a->nr_weights; j++)
		for (int k = 0; k < 3; k++)
			sums[a->weights[j].thread * 3 + (size_t)k] += *part_ns(&a->weights[j], k);
	for (size_t i = 0; i < a->nr; i++) {
		struct thread *t = &a->threads[i];
		const struct moves *m = &mv[i];
		const uint64_t *now = &sums[i * 3];
		size_t giver = SIZE_MAX;

		if (!m->any)
			continue;
		for (int k = 0; k < 3; k++)
			if (big[i * 3 + k] != SIZE_MAX &&
			    (giver == SIZE_MAX || held[i * 3 + k] > held[i * 3 + (size_t)(giver % 3)]))
				giver = big[i * 3 + k] * 3 + (size_t)k;
		for (int k = 0; k < 3; k++) {
			size_t at = i * 3 + (size_t)k;
			size_t w = big[at] != SIZE_MAX ? big[at] :
				   giver != SIZE_MAX ? giver / 3 : SIZE_MAX;
			uint64_t want = *thread_part(t, k);

			if (held[at] != m->before[k] || w == SIZE_MAX || want == now[k])
				continue;
			if (want > now[k])
				*part_ns(&a->weights[w], k) += want - now[k];
			else if (*part_ns(&a->weights[w], k) >= now[k] - want)
				*part_ns(&a->weights[w], k) -= now[k] - want;
		}
	}
	for (size_t i = 0; i < a->nr_weights; i++) {
		struct wp_stack_weight *w = &a->weights[i];
		uint64_t wakes = 0;
		uint32_t top = 0;

		if (!mv[w->thread].any || !w->wakes)
			continue;
		for (uint32_t j = w->wakes; j; j = a->wakes[j - 1].next) {
			wakes += a->wakes[j - 1].blocked_ns;
			if (!top || a->wakes[j - 1].blocked_ns > a->wakes[top - 1].blocked_ns)
				top = j;
		}
		if (wakes > w->blocked_ns) {
			uint64_t over = wakes - w->blocked_ns;

			a->wakes[top - 1].blocked_ns -= over < a->wakes[top - 1].blocked_ns ? over :
							a->wakes[top - 1].blocked_ns;
		}
	}
}

/*
 * Each stack's waits follow what anchoring moved in its thread's
 * (moves[serial]): a stack gives on-CPU time, or time from one kind of
 * wait to another, in proportion to what it held of the kind; the moved
 * time stays with the stack, but what went into on-CPU time (which its
 * samples share out).  Where a thread's stacks held the whole of a kind
 * before, they hold the whole of it after: the rounding remainder goes to
 * its largest stack of the kind, or to the stack that gave the most.
 * Wakers' shares of blocked time scale alike (rounded down: never more
 * than the stack's).
 */
static void follow_moves(struct wp_account *a, const struct moves *mv)
{
	size_t n3 = a->nr * 3;
	uint64_t *held = calloc(n3 ? n3 : 1, sizeof(*held));
	uint64_t *sums = malloc((n3 ? n3 : 1) * sizeof(*sums));
	size_t *big = malloc((n3 ? n3 : 1) * sizeof(*big));

	if (!held || !sums || !big) {
		a->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n3; i++)
		big[i] = SIZE_MAX;
	for (size_t i = 0; i < a->nr_weights; i++) {
		struct wp_stack_weight *w = &a->weights[i];

		for (int k = 0; k < 3; k++) {
			size_t at = w->thread * 3 + (size_t)k;

			held[at] += *part_ns(w, k);
			if (*part_ns(w, k) && (big[at] == SIZE_MAX ||
					       *part_ns(&a->weights[big[at]], k) < *part_ns(w, k)))
				big[at] = i;
		}
	}
	for (size_t i = 0; i < a->nr_weights; i++) {
		struct wp_stack_weight *w = &a->weights[i];
		const struct moves *m = &mv[w->thread];
		uint64_t had[3], b0, cut;

		if (!m->any)
			continue;
		for (int k = 0; k < 3; k++)
			had[k] = *part_ns(w, k);
		b0 = w->blocked_ns;
		/* Into on-CPU: each kind in proportion to what the stack held of it. */
		for (int k = 0; k < 3; k++) {
			cut = share_of(had[k], m->into_on[k], m->before[k]);
			*part_ns(w, k) -= cut < *part_ns(w, k) ? cut : *part_ns(w, k);
		}
		/* The run queue anchor: blocked to runnable, or back. */
		if (m->to_runnable) {
			uint64_t b = m->before[0] - m->into_on[0];

			cut = share_of(w->blocked_ns, m->to_runnable, b);
			cut = cut < w->blocked_ns ? cut : w->blocked_ns;
			w->blocked_ns -= cut;
			w->runnable_ns += cut;
		}
		for (int k = 1; k < 3; k++) {
			uint64_t p = m->before[k] - m->into_on[k];

			if (!m->to_blocked[k])
				continue;
			cut = share_of(*part_ns(w, k), m->to_blocked[k], p);
			cut = cut < *part_ns(w, k) ? cut : *part_ns(w, k);
			*part_ns(w, k) -= cut;
			w->blocked_ns += cut;
		}
		for (int k = 0; k < 3; k++)
			if (w->estimated_ns[k] > *part_ns(w, k))
				w->estimated_ns[k] = *part_ns(w, k);
		if (b0 && w->blocked_ns < b0)
			for (uint32_t j = w->wakes; j; j = a->wakes[j - 1].next)
				a->wakes[j - 1].blocked_ns =
					share_of(a->wakes[j - 1].blocked_ns, w->blocked_ns, b0);
	}
	/* The remainders, where the stacks held the whole kind. */
	remainders(a, mv, held, big, sums);
out:
	free(held);
	free(sums);
	free(big);
}

/*
 * -a: one CPU runs one thread at a time, so the threads' on-CPU time and
 * the CPUs' idle time never add up to more than the CPUs' time.  The
 * timeline keeps that, but anchoring adds what the kernel counted to
 * threads whose records were lost, and threads without figures (exited
 * with theirs lost, or wallprof's own) keep what their records say, which
 * lost switch-outs lengthen: what is over goes from those first, then
 * from every thread, in proportion to their on-CPU time, to preempted
 * time (they did not run then).  Then each CPU's busy time takes its
 * share of the threads' total, and the time no record tells (unseen,
 * then idle) gives or takes the difference.
 */
/*
 * A trim takes time from a thread without knowing it was the one whose
 * figure was long: its figure is off by up to what was taken.
 */
static void widen_bound(struct thread *t, uint64_t ns)
{
	t->t.on_cpu_bound_ns += ns;
	if (t->t.on_cpu_bound_ns > t->t.wall_ns)
		t->t.on_cpu_bound_ns = t->t.wall_ns;
}

static void fit_cpus(struct wp_account *a, struct moves *mv)
{
	uint64_t from = a->opts.window_start > a->start_ns ? a->opts.window_start : a->start_ns;
	uint64_t to = a->opts.window_end && a->opts.window_end < a->end_ns ? a->opts.window_end :
		      a->end_ns;
	uint64_t span = to > from ? to - from : 0, cap = span * a->nr_cpus;
	uint64_t on = 0, idle = 0, busy = 0, loose = 0, over;

	for (size_t i = 0; i < a->nr; i++) {
		on += a->threads[i].t.on_cpu_ns;
		if (a->threads[i].t.on_cpu_source != WP_ON_CPU_KERNEL)
			loose += a->threads[i].t.on_cpu_ns;
	}
	for (uint32_t c = 0; c < a->nr_cpus; c++) {
		idle += a->cpu_times[c].idle_ns;
		busy += a->cpu_times[c].busy_ns;
	}
	if (on + idle > cap) {
		over = on + idle - cap;
		for (int pass = 0; pass < 2 && over; pass++) {
			uint64_t pool = pass ? on : loose, want = over < pool ? over : pool, given = 0;

			for (size_t i = 0; i < a->nr && want; i++) {
				struct thread *t = &a->threads[i];
				uint64_t cut;

				if (!pass && t->t.on_cpu_source == WP_ON_CPU_KERNEL)
					continue;
				cut = share_of(t->t.on_cpu_ns, want, pool);
				if (cut) {
					uint64_t moved = (uint64_t)-move_into_on_cpu(t, -(int64_t)cut,
										     &mv[i]);

					given += moved;
					t->t.on_cpu_moved_ns -= (int64_t)cut;
					widen_bound(t, moved);
				}
			}
			over -= given < over ? given : over;
			on -= given;
			if (!pass)
				loose -= given < loose ? given : loose;
			a->anchors.cpus_trimmed_ns += given;
		}
		/* Rounding's few nanoseconds, from the busiest thread. */
		if (over) {
			size_t big = 0;

			for (size_t i = 1; i < a->nr; i++)
				if (a->threads[i].t.on_cpu_ns > a->threads[big].t.on_cpu_ns)
					big = i;
			if (a->nr) {
				uint64_t given = (uint64_t)-move_into_on_cpu(&a->threads[big],
									  -(int64_t)over, &mv[big]);

				a->threads[big].t.on_cpu_moved_ns -= (int64_t)given;
				widen_bound(&a->threads[big], given);
				on -= given;
				a->anchors.cpus_trimmed_ns += given;
			}
		}
	}
	a->anchors.cpus_moved_ns = signed_diff(on, busy);
	/*
	 * Each CPU's busy time its share of the threads' total, at most its
	 * span; what does not fit goes to the CPUs with room.  The rest of a
	 * CPU's span is unseen, then idle.
	 */
	if (busy) {
		uint64_t placed = 0;

		for (uint32_t c = 0; c < a->nr_cpus; c++) {
			struct wp_cpu_time *ct = &a->cpu_times[c];
			uint64_t now = share_of(ct->busy_ns, on, busy);

			ct->busy_ns = now < span ? now : span;
			placed += ct->busy_ns;
		}
		for (uint32_t c = 0; c < a->nr_cpus && placed < on; c++) {
			struct wp_cpu_time *ct = &a->cpu_times[c];
			uint64_t more = span - ct->busy_ns < on - placed ? span - ct->busy_ns :
									  on - placed;

			ct->busy_ns += more;
			placed += more;
		}
	}
	for (uint32_t c = 0; c < a->nr_cpus; c++) {
		struct wp_cpu_time *ct = &a->cpu_times[c];

		if (ct->busy_ns + ct->idle_ns > span)
			ct->idle_ns = span - ct->busy_ns;
		ct->unseen_ns = span - ct->busy_ns - ct->idle_ns;
	}
}

/*
 * A window's ends this close to the figures (a share of its length) are
 * theirs: its run queue time is anchored too.
 */
#define WINDOW_COVER_SHARE 100	/* 1 / 100: 1% */

/* A point's kernel figure and records of on-CPU time, or of run-queue time (rq). */
static uint64_t kernel_of(const struct anchor_point *p, bool rq)
{
	return rq ? p->kernel_rq_ns : p->kernel_ns;
}

static uint64_t records_of(const struct anchor_point *p, bool rq)
{
	return rq ? p->records_rq_ns : p->records_ns;
}

/*
 * The kernel's on-CPU (or, rq, run-queue) time of a thread by instant x
 * of a --time window's end, from its figures around it: between the one
 * before (b) and the one after (e), and no more than x - b.time above
 * b's nor e.time - x below e's (a thread runs on one CPU at a time, and
 * waits on one run queue).  Estimated as far between the two as the
 * records' cut at x (c) is between theirs.  *lo and *hi bound it.
 * false: no figure on either side.
 */
static bool kernel_at(uint64_t x, const struct anchor_point *b, const struct anchor_point *e,
		      const struct anchor_point *c, bool rq, uint64_t *est, uint64_t *lo,
		      uint64_t *hi)
{
	bool have_b = b->set && b->time <= x, have_e = e->set && e->time >= x;
	bool have_c = c->set && !c->undecided;
	uint64_t kb = have_b ? kernel_of(b, rq) : 0, ke = have_e ? kernel_of(e, rq) : 0;
	uint64_t rb = have_b ? records_of(b, rq) : 0, re = have_e ? records_of(e, rq) : 0;
	uint64_t rc = have_c ? records_of(c, rq) : 0;

	if (!have_b && !have_e)
		return false;
	if (have_b && have_e && ke < kb)
		have_e = false;	/* out of order: a hostile file */
	*lo = kb;
	*hi = have_e ? ke : UINT64_MAX;
	if (have_e && ke > e->time - x && ke - (e->time - x) > *lo)
		*lo = ke - (e->time - x);
	if (have_b && kb + (x - b->time) < *hi)
		*hi = kb + (x - b->time);
	if (*hi < *lo)
		*hi = *lo;
	if (have_b && have_e) {
		uint64_t rec = re > rb ? re - rb : 0, span = e->time - b->time;
		double share = rec && have_c ? (double)(rc > rb ? rc - rb : 0) / (double)rec :
			       span ? (double)(x - b->time) / (double)span : 0;

		*est = kb + (uint64_t)((double)(ke - kb) * (share < 1 ? share : 1));
	} else if (have_b) {
		*est = kb + (have_c && rc > rb ? rc - rb : 0);
	} else {
		uint64_t after = have_c && re > rc ? re - rc : 0;

		*est = ke - (after < ke ? after : ke);
	}
	if (*est < *lo)
		*est = *lo;
	if (*est > *hi)
		*est = *hi;
	return true;
}

/*
 * A thread's on-CPU (or, rq, run-queue) time in a --time window (from
 * its start to its end, within its life), the kernel's as the figures
 * around each end give it (kernel_at): a born thread's start is 0
 * exactly.  *est, and the bound of its error; *covered: both ends within
 * WINDOW_COVER_SHARE of the window's length from a figure (or its birth).
 * false: an end with no figure either side.
 */
static bool window_kernel(const struct thread *t, bool born, bool rq, uint64_t *est,
			  uint64_t *bound, bool *covered)
{
	const struct anchor *an = t->anchor;
	uint64_t x[2] = { t->t.start_ns, t->t.end_ns }, e[2], lo[2], hi[2], gap[2];
	uint64_t len, least, most, guess;

	if (x[1] < x[0])
		return false;
	len = x[1] - x[0];
	for (int k = 0; k < 2; k++) {
		const struct anchor_point *b = &an->near[k][0], *n = &an->near[k][1];

		if (k == 0 && born) {
			e[0] = lo[0] = hi[0] = gap[0] = 0;
			continue;
		}
		if (!kernel_at(x[k], b, n, &an->cut[k], rq, &e[k], &lo[k], &hi[k]))
			return false;
		gap[k] = UINT64_MAX;
		if (b->set && b->time <= x[k])
			gap[k] = x[k] - b->time;
		if (n->set && n->time >= x[k] && n->time - x[k] < gap[k])
			gap[k] = n->time - x[k];
	}
	least = lo[1] > hi[0] ? lo[1] - hi[0] : 0;
	most = hi[1] == UINT64_MAX ? len : hi[1] > lo[0] ? hi[1] - lo[0] : 0;
	guess = e[1] > e[0] ? e[1] - e[0] : 0;
	if (most > len)
		most = len;
	if (least > most)
		least = most;
	if (guess < least)
		guess = least;
	if (guess > most)
		guess = most;
	*est = guess;
	*bound = guess - least > most - guess ? guess - least : most - guess;
	*covered = (gap[0] + gap[1]) * WINDOW_COVER_SHARE <= len;
	return true;
}

/*
 * Anchor each thread's on-CPU time to the kernel's own figure.  A switch
 * record comes after the switch, once the kernel has switched the events
 * in, so a running segment that began at one (timeline.h, late) began
 * late: in storms of short slices that is tens of percent of a thread's
 * time.  Over the span between a thread's two THREAD_CLOCK figures (its
 * start, or its birth, and its end or exit) the kernel's total is exact:
 * the difference goes into on-CPU time from the waits its late switch-ins
 * ended.  Its time on a run queue (runnable and preempted) moves to the
 * kernel's figure only by what the wake-up estimate guessed: within the
 * waits whose wake-up went unrecorded, when some of them fell where the
 * budget had the tracepoints off (estimate_wakeups).  Those estimates are
 * rough in a storm (the recorded waits, slowed by the recording, stand
 * for the others: 5-18% off schedstat on a quiet machine, 60% on a busy
 * one), where the kernel's figure is good; the recorded waits are the
 * tracepoints' own times, which the kernel's figure does not always
 * match: some 8% above them on 6.18 for threads that sleep 1 ms beside
 * more runnable threads than CPUs (300 us a wake-up; perf's records
 * agree with wallprof's there).
 * Threads without figures (an ordinary user's exits, or one lost) are
 * moved by the anchored threads' mean per late switch-in, marked as an
 * estimate within what it moved.  With a --time window, the kernel's
 * time at each of its ends from the figures around it (window_kernel):
 * exact at a figure, and the run queue anchored when both ends are;
 * else an estimate within a bound.  Each stack follows its thread
 * (follow_moves), and with -a each CPU's busy time (fit_cpus): its
 * switch-ins start at the switch-out before them, not late, so that only
 * records lost move much there.
 */
static void anchor_times(struct wp_account *a)
{
	struct moves *mv = calloc(a->nr ? a->nr : 1, sizeof(*mv));
	bool windowed = a->opts.window_start || a->opts.window_end;
	bool queues = wp_timeline_has_wakeups(a->tl);
	int64_t sum_moved = 0;
	uint64_t sum_late = 0;
	struct wp_anchor_summary *sum = &a->anchors;

	if (!mv) {
		a->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < a->nr; i++) {
		struct thread *t = &a->threads[i];
		const struct anchor *an = t->anchor;
		struct anchor_point base = { .set = born_inside(a, t), .time = t->t.start_ns };
		bool have_rq = false, partial = false;
		uint64_t rq_ns = 0;		/* the kernel's run-queue time over the same span */
		int64_t diff, moved;
		uint64_t kernel, bound;
		uint32_t late;

		for (int k = 0; k < 3; k++)
			mv[i].before[k] = *thread_part(t, k);
		sum->late_starts += t->late_in_window;
		/* Born in the recording, its figures began at 0: no read is earlier. */
		if (an && an->base.set && !base.set)
			base = an->base;
		if (an && an->end.set && an->end.exit_unseen) {
			t->anchor->end.records_ns = t->on_all_ns;
			t->anchor->end.late = t->late_starts;
		}
		if (!an || !an->end.set || !base.set || an->end.kernel_ns < base.kernel_ns ||
		    an->end.records_ns < base.records_ns)
			continue;
		kernel = an->end.kernel_ns - base.kernel_ns;
		diff = signed_diff(kernel, an->end.records_ns - base.records_ns);
		late = an->end.late - base.late;
		if (kernel >= ANCHOR_SHARE_MIN_NS && (uint64_t)(diff < 0 ? -diff : diff) * 10 > kernel)
			wp_debug("thread %u/%u: the kernel says %" PRIu64 " ns on a CPU, its records %"
				 PRIu64 " (from %" PRIu64 " to %" PRIu64 "), %u switch-ins late",
				 t->t.pid, t->t.tid, kernel, an->end.records_ns - base.records_ns,
				 base.records_ns, an->end.records_ns, late);
		sum->anchored++;
		if (an->end.exit && !an->end.exit_unseen && t->on_all_ns > an->end.records_ns) {
			sum->exit_tails++;
			sum->exit_tails_ns += t->on_all_ns - an->end.records_ns;
		}
		if (kernel >= ANCHOR_SHARE_MIN_NS &&
		    (double)(diff < 0 ? -diff : diff) / (double)kernel > sum->worst_share)
			sum->worst_share = (double)(diff < 0 ? -diff : diff) / (double)kernel;
		sum_moved += diff;
		sum_late += late;
		t->t.kernel_on_cpu_ns = kernel;
		if (!windowed && queues && an->end.kernel_rq_ns >= base.kernel_rq_ns &&
		    an->end.records_rq_ns >= base.records_rq_ns) {
			have_rq = true;
			rq_ns = an->end.kernel_rq_ns - base.kernel_rq_ns;
		}
		if (windowed) {
			/*
			 * The kernel's time at the window's ends, from the
			 * figures around each (a born thread's birth when it
			 * was born inside): exact where a figure is at an end,
			 * else within what the time between allows.
			 */
			const struct wp_tl_thread *lt = wp_timeline_thread(a->tl, t->t.serial);
			/* (base is the first figure unless born in the recording.) */
			bool born = lt && lt->born && lt->start_ns >= t->t.start_ns;
			bool covered = false;
			uint64_t on = 0, rq_bound;

			if (window_kernel(t, born, false, &on, &bound, &covered)) {
				diff = signed_diff(on, t->t.on_cpu_ns);
				t->t.kernel_on_cpu_ns = on;
			} else {
				diff = 0;
				bound = t->t.on_cpu_bound_ns;
			}
			have_rq = window_kernel(t, born, true, &rq_ns, &rq_bound, &covered);
			partial = !covered;
			if (!covered) {
				sum->window_partial++;
				if (bound > sum->window_partial_max_ns)
					sum->window_partial_max_ns = bound;
			}
		} else {
			/*
			 * The span between the figures may not be the whole
			 * window (the first read after the file began, the last
			 * before it ended): outside it the records tell what
			 * the thread did (a server idle when the recording
			 * began ran nothing there, whatever its rate inside),
			 * short by the same share as inside.  Not
			 * from a sliver: a span of half the window at least.
			 */
			uint64_t from = base.time > t->t.start_ns ? base.time : t->t.start_ns;
			uint64_t to = an->end.time < t->t.end_ns ? an->end.time : t->t.end_ns;
			/* After its exit figure, a thread whose EXIT was lost ran no more. */
			uint64_t wall = (an->end.exit ? to : t->t.end_ns) - t->t.start_ns;
			uint64_t rec_in = an->end.records_ns - base.records_ns;
			uint64_t rec_out = t->on_all_ns > rec_in ? t->on_all_ns - rec_in : 0;
			/*
			 * Exact over the span; outside it, the records' error
			 * (at most what they leave uncertain, and at most the
			 * time outside), and what the share below guesses.
			 */
			uint64_t outside = to > from && to - from < wall ? wall - (to - from) :
					   to > from ? 0 : wall;

			/* Its exit path after the exit figure: records only. */
			if (an->end.exit && t->t.end_ns > to)
				outside += t->t.end_ns - to;

			bound = t->t.on_cpu_bound_ns < outside ? t->t.on_cpu_bound_ns : outside;

			/*
			 * (By the records' share outside: a count of late
			 * switch-ins, a few inside, would multiply the move.)
			 */
			if (rec_in && rec_out && to > from && to - from < wall &&
			    (to - from) * 2 >= wall) {
				double out = (double)diff * (double)rec_out / (double)rec_in;

				if (out > (double)rec_out)
					out = (double)rec_out;
				if (out < -(double)rec_out)
					out = -(double)rec_out;
				diff += (int64_t)out;
				bound += (uint64_t)(out < 0 ? -out : out);
			}
			if (bound > outside)
				bound = outside;
		}
		moved = move_into_on_cpu(t, diff, &mv[i]);
		/* What could not be moved (no wait to take it from) stays wrong. */
		bound += (uint64_t)(diff > moved ? diff - moved : moved - diff);
		t->t.on_cpu_bound_ns = bound < t->t.wall_ns ? bound : t->t.wall_ns;
		/* A window's ends between figures: the share is a guess, within the bound. */
		t->t.on_cpu_source = partial ? WP_ON_CPU_ESTIMATED : WP_ON_CPU_KERNEL;
		mv[i].anchored = true;
		t->t.on_cpu_moved_ns = moved;
		sum->anchored_moved_ns += moved;
		sum->anchored_moved_abs_ns += (uint64_t)(moved < 0 ? -moved : moved);
		if (have_rq && queues && t->tally && t->tally->gated_count) {
			const struct wake_tally *y = t->tally;
			int64_t rq = (int64_t)rq_ns;
			int64_t want = rq - (int64_t)(t->t.runnable_ns + t->t.preempted_ns);

			/* Within the unrecorded waits: runnable from none to all of them. */
			if (want < -(int64_t)y->moved_ns)
				want = -(int64_t)y->moved_ns;
			if (want > (int64_t)(y->unsplit_ns - y->moved_ns))
				want = (int64_t)(y->unsplit_ns - y->moved_ns);
			move_into_queued(t, want, &mv[i]);
		}
	}
	/* Threads without figures: the anchored ones' mean per late switch-in. */
	if (sum_late >= ANCHOR_MEAN_MIN_LATE && sum_moved > 0) {
		double per_late = (double)sum_moved / (double)sum_late;

		for (size_t i = 0; i < a->nr; i++) {
			struct thread *t = &a->threads[i];
			int64_t moved;

			if (mv[i].anchored || !t->late_in_window)
				continue;
			moved = move_into_on_cpu(t, (int64_t)(per_late * t->late_in_window), &mv[i]);
			if (!moved)
				continue;
			t->t.on_cpu_source = WP_ON_CPU_ESTIMATED;
			t->t.on_cpu_moved_ns = moved;
			widen_bound(t, (uint64_t)(moved < 0 ? -moved : moved));
			sum->estimated++;
			sum->estimated_moved_abs_ns += (uint64_t)moved;
		}
	}
	if (a->cpu_times)
		fit_cpus(a, mv);
	for (size_t i = 0; i < a->nr; i++)
		for (int k = 0; k < 3; k++)
			a->threads[i].t.wait_moved_ns[k] = (int64_t)*thread_part(&a->threads[i], k) -
							   (int64_t)mv[i].before[k];
	follow_moves(a, mv);
	free(mv);
	for (size_t i = 0; i < a->nr; i++)
		sum->on_cpu_ns += a->threads[i].t.on_cpu_ns;
}

void wp_account_anchor_summary(const struct wp_account *a, struct wp_anchor_summary *s)
{
	*s = a->anchors;
}

void wp_account_finish(struct wp_account *a, uint64_t end_ns)
{
	uint64_t *pre_on;
	size_t n;

	if (a->result)
		return;		/* finished already */
	a->end_ns = end_ns;
	if (wp_timeline_finish(a->tl, end_ns))
		a->err = -ENOMEM;
	/* Every thread the timeline knows has a row, segments or none. */
	n = wp_timeline_nr_threads(a->tl);
	if (n && !thread_at(a, (uint32_t)(n - 1)))
		a->err = -ENOMEM;
	estimate_wakeups(a);
	pre_on = malloc((a->nr ? a->nr : 1) * sizeof(*pre_on));
	for (size_t i = 0; pre_on && i < a->nr; i++)
		pre_on[i] = a->threads[i].t.on_cpu_ns;
	anchor_times(a);
	for (size_t i = 0; i < a->nr; i++) {
		free(a->threads[i].tally);
		a->threads[i].tally = NULL;
	}
	if (!pre_on || names_close(a, pre_on))
		a->err = -ENOMEM;
	free(pre_on);
	distribute_on_cpu(a);
	if (estimate_switch_stacks(a))
		a->err = -ENOMEM;
	if (!a->nr && !a->threads)
		a->threads = calloc(1, sizeof(*a->threads));	/* a result even of none */
	if (a->threads && make_result(a))
		a->err = -ENOMEM;	/* no threads to show; the hists stay theirs */
	if (a->result && names_result(a))
		a->err = -ENOMEM;
	wp_u64map_release(&a->weight_index);
}

const struct wp_thread_times *wp_account_threads(const struct wp_account *a, size_t *n)
{
	*n = a->result ? a->nr : 0;
	return a->result;
}

const struct wp_stack_weight *wp_account_stacks(const struct wp_account *a, size_t *n)
{
	*n = a->result ? a->nr_weights : 0;
	return a->weights;
}

void wp_account_untimed_switch_ins(const struct wp_account *a, uint64_t *untimed,
				   uint64_t *all)
{
	struct wp_switch_timing st;

	wp_timeline_switch_timing(a->tl, &st);
	*untimed = st.untimed;
	*all = st.switch_ins;
}

void wp_account_unsampled(const struct wp_account *a, uint64_t *ns, uint64_t *threads)
{
	*ns = a->unsampled_ns;
	*threads = a->unsampled_threads;
}

uint64_t wp_stack_weight_error_ns(const struct wp_stack_weight *w, int k)
{
	double two_se;

	if (k < 0 || k > 2 || !w->estimated_ns[k] || !(w->estimate_var[k] > 0))
		return 0;
	two_se = 2 * sqrt((double)w->estimate_var[k]);
	return two_se >= (double)w->estimated_ns[k] ? w->estimated_ns[k] : (uint64_t)two_se;
}

void wp_account_switch_estimate(const struct wp_account *a, struct wp_switch_estimate *e)
{
	size_t n = a->result ? a->nr : 0;

	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		const struct wp_thread_times *t = &a->result[i];

		e->switch_outs += t->voluntary_switches + t->involuntary_switches;
		e->unsampled += t->switch_outs_unsampled;
		if (t->switch_outs_unsampled)
			e->threads++;
	}
	for (size_t i = 0; a->result && i < a->nr_weights; i++) {
		const struct wp_stack_weight *w = &a->weights[i];

		if (a->opts.switch_stacks_sampled && w->stack == a->opts.unsampled_switch_stack)
			e->unattributed_ns += w->blocked_ns + w->runnable_ns + w->preempted_ns;
		e->estimated_ns += w->estimated_ns[0] + w->estimated_ns[1] + w->estimated_ns[2];
		for (int k = 0; k < 3; k++)
			if (wp_stack_weight_error_ns(w, k) > e->max_error_ns) {
				e->max_error_ns = wp_stack_weight_error_ns(w, k);
				e->max_error_of_ns = *part_ns((struct wp_stack_weight *)w, k);
			}
	}
	/* Of that, the runnable time the wake-up estimate moved (estimate_wakeups). */
	e->estimated_ns -= e->estimated_ns > a->wake_est.runnable_ns ? a->wake_est.runnable_ns :
			   e->estimated_ns;
}

void wp_account_wakeup_estimate(const struct wp_account *a, struct wp_wakeup_estimate *e)
{
	*e = a->wake_est;
}

uint64_t wp_account_lost(const struct wp_account *a)
{
	return a->lost;
}

void wp_account_loss_span(const struct wp_account *a, uint64_t *first, uint64_t *last)
{
	*first = a->lost_first;
	*last = a->lost_last;
}

void wp_account_free(struct wp_account *a)
{
	if (!a)
		return;
	/* The histograms are the threads' until the result takes them. */
	for (size_t i = 0; a->result && i < a->nr; i++)
		free((void *)a->result[i].hists);
	for (size_t i = 0; a->threads && i < a->nr; i++) {
		free(a->threads[i].hists);
		free(a->threads[i].strata);
		free(a->threads[i].tally);
		free(a->threads[i].anchor);
	}
	free(a->threads);
	free(a->result);
	free(a->weights);
	wp_u64map_release(&a->weight_index);
	wp_u64map_release(&a->strata);
	free(a->cells);
	wp_u64map_release(&a->gap_index);
	free(a->gaps);
	free(a->wakes);
	free(a->names);
	free(a->result_names);
	for (size_t i = 0; i < a->nr_cmdlines; i++)
		free((void *)a->cmdlines[i].args);
	free(a->cmdlines);
	free(a->cpu_times);
	wp_timeline_free(a->tl);
	free(a);
}
