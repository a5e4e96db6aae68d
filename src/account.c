/* SPDX-License-Identifier: GPL-2.0-or-later */
/* account.c: per-thread on-CPU / blocked / preempted time, by stack. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "layout.h"
#include "u64map.h"
#include "util.h"

#define NO_STACK UINT32_MAX

enum run_state {
	STATE_UNKNOWN,		/* no switch record yet: decided later */
	STATE_ON,
	STATE_BLOCKED,
	STATE_RUNNABLE,		/* woken, waiting for a CPU */
	STATE_PREEMPTED,
};

#define NO_WAKER UINT32_MAX
#define NO_CPU UINT32_MAX

/* One name of a process (wp_process_name) while it is being accounted. */
struct name_span {
	struct wp_process_name pub;
	uint32_t serial;	/* of its main thread */
	uint32_t next;		/* the thread's next name + 1, or 0 */
	uint32_t cmdline;	/* index + 1 in cmdlines, or 0 */
	uint64_t on_at_start;	/* the thread's on-CPU time when it took the name */
};

/* A CPU of a system-wide recording, by its idle task's switches. */
enum cpu_state { CPU_UNKNOWN, CPU_IDLE, CPU_BUSY };

struct cpu {
	uint64_t since;		/* of the current idle stretch */
	/*
	 * When the last switch-out on it was counted, until a switch-in uses
	 * it: the CPU's time from one to the next (the switch itself) is the
	 * incoming task's, as the scheduler counts it, so none goes missing.
	 */
	uint64_t last_out;
	uint32_t last_next;	/* the task that switch-out named as next */
	uint64_t switch_time;	/* of its last sched_switch not yet used, or 0 */
	uint32_t switch_prev, switch_next;	/* the tids it named */
	uint32_t current;	/* the thread on it (serial + 1), or 0 */
	uint8_t state;		/* enum cpu_state */
	bool idle_sampled;	/* a sample of the idle task came from it */
};

/*
 * A thread is kept small (some 150 bytes): recordings of servers hold
 * hundreds of thousands of short threads, most of which fill a handful of
 * histogram buckets and no stack.
 */
struct thread {
	struct wp_thread_times t;
	struct wp_thread_hists *hists;	/* owned; in t.hists after finish */
	uint64_t since;			/* start of the current state */
	uint32_t serial;		/* creation order, stable across sorting */
	uint32_t pending_stack;		/* from the switch-out sample */
	uint64_t pending_time;		/* its time */
	uint32_t off_stack;		/* stack of the current off-CPU interval */
	uint32_t waker;			/* of the blocked interval ending now */
	uint32_t early_waker;		/* a wake-up seen while it still ran */
	uint64_t early_time;		/* and when */
	uint64_t sched_switch_time;	/* of its last sched_switch not yet used, or 0 */
	uint64_t off_start;		/* start of the current off-CPU interval */
	uint8_t state;			/* enum run_state */
	uint8_t initial_off;		/* what an off-CPU start counts as */
	uint8_t gap;			/* GAP_* of the part state_end is ending */
	bool woken_early;		/* waker is the early one: see thread_switch_out */
	bool sched_switch_in;		/* that sched_switch switched it in */
	bool closed;
	bool forked_process;		/* a FORK made it a new process's main thread */
	bool start_stack_due;		/* off-CPU at a rotated file's start: its stack may follow */
	bool exiting;			/* -a: after its EXIT, before its last switch-out */
	uint64_t exit_time;		/* of its EXIT record, while exiting */
	struct wake_tally *tally;	/* owned; gated wake-ups only, else NULL */
	uint32_t name;			/* its current name (struct name_span) + 1, or 0 */
	uint32_t cpu;			/* where it runs or last ran; NO_CPU: unknown */
	/*
	 * Off-CPU time of its switch-outs without a sampled stack, by kind
	 * and log2 bucket of the part's length (see strata_note); owned,
	 * NULL until the first one.
	 */
	uint64_t *unsampled_by_bucket;
};

/* What a gated recording missed of the blocked part being ended (thread.gap). */
#define GAP_UNSPLIT 1U	/* its wake-up: the part holds the runnable time too */
#define GAP_UNWOKEN 2U	/* its waker */

/*
 * Per thread, with wake-ups gated with the stacks (WP_META_WAKEUPS_GATED):
 * the recorded waits its unrecorded ones are split by, and the blocked
 * time of those, and how many (estimate_wakeups).  Apart from struct
 * thread, which most recordings have hundreds of thousands of.
 */
struct wake_tally {
	uint64_t woke_at;		/* the wake-up of the current interval, or 0 */
	uint64_t seen_off_ns, seen_runnable_ns, seen_count;
	uint64_t unsplit_ns, unsplit_count;
};

/* Per weight, what a gated recording missed of its blocked time. */
struct wake_gap {
	size_t weight;				/* its index in weights */
	uint64_t unsplit_ns, unsplit_count;	/* GAP_UNSPLIT parts */
	uint64_t unwoken_ns, unwoken_count;	/* GAP_UNWOKEN parts */
};

/* Kinds of off-CPU time, as estimated: blocked, runnable, preempted. */
#define EST_PARTS 3
#define EST_BUCKETS 64
/*
 * A wake-up can come before the switch-out record of the sleep it ends:
 * the kernel writes that record (after the switch-out's stack) some
 * microseconds after the thread left its run queue, and a waker on another
 * CPU may be quicker.  One this close to a voluntary switch-out is taken
 * for the sleep's, unless a later one comes.
 */
#define EARLY_WAKE_NS 1000000ULL
/* Longer, a record's lag is another thread's doing (preempted meanwhile). */
#define LAG_SAMPLE_MAX_NS 100000ULL
/*
 * A recorded wait's runnable part, or a switch record's lag, counts up to
 * this many times the mean so far, once there are enough to have one.
 */
#define SEEN_CAP 8
#define SEEN_CAP_AFTER 20

/*
 * How long before a switch record the sched_switch of the same switch may
 * come: microseconds as a rule (the switch-out's stack, the switch), more
 * when the machine is loaded.  An older one is some other switch's.
 */
#define SCHED_SWITCH_LAG_NS 2000000ULL

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

struct wp_account {
	struct wp_sample_format fmt;
	struct wp_account_opts opts;
	uint64_t start_ns;
	bool no_switches;		/* --no-off-cpu: estimate from samples */
	/* Switch-ins in a recording with sched_switch, and those without one. */
	bool saw_sched_switch;
	uint64_t switch_ins, switch_ins_untimed;
	uint64_t sample_period_ns;
	struct thread *threads;		/* until finish */
	size_t nr, cap;
	struct wp_u64map thread_index;	/* tid -> its latest thread in threads */
	struct wp_stack_weight *weights;	/* .thread holds the serial until finish */
	size_t nr_weights, cap_weights;
	struct wp_u64map weight_index;	/* thread serial << 32 | stack -> index in weights */
	struct wp_u64map strata;	/* stratum_key() -> sampled ns (strata_note) */
	uint64_t lost, lost_first, lost_last;
	uint64_t unsampled_ns, unsampled_threads;	/* on-CPU, never sampled */
	bool wakeups;			/* the recording has wake-ups */
	bool enqueues;			/* and sched_wakeup: when they reach a run queue */
	bool wakeups_gated;		/* WP_META_WAKEUPS_GATED */
	uint64_t seen_off_ns, seen_runnable_ns, seen_count;	/* every thread's */
	/*
	 * The last switch-out without its sched_switch that followed another
	 * without: the tracepoints were closed then (the kernel takes
	 * sched_switch in the switching thread's context, so only a gate or
	 * a loss can miss one).
	 */
	uint64_t last_untimed_out;
	bool prev_out_untimed;		/* the last switch-out had no sched_switch */
	/* How late the timed switch records came, out [0] and in [1]: see switch_time. */
	uint64_t lag_sum[2], lag_n[2];
	struct wake_gap *gaps;		/* until finish */
	size_t nr_gaps, cap_gaps;
	struct wp_u64map gap_index;	/* weight index -> its gap */
	struct wp_wakeup_estimate wake_est;
	struct wp_waker *wakers;
	size_t nr_wakers, cap_wakers;
	struct wp_u64map waker_index;	/* kind, tid and stack -> index */
	struct wp_wake_weight *wakes;
	size_t nr_wakes, cap_wakes;
	int err;			/* -ENOMEM once memory ran out */
	struct wp_thread_times *result;	/* built by wp_account_finish */
	struct name_span *names;	/* processes' names, in the order taken */
	size_t nr_names, cap_names;
	struct wp_process_name *result_names;	/* by thread, then time, after finish */
	struct wp_process_cmdline *cmdlines;	/* args owned */
	size_t nr_cmdlines, cap_cmdlines;
	struct cpu *cpus;		/* system-wide recordings with switches; else NULL */
	struct wp_cpu_time *cpu_times;	/* as many */
	uint32_t nr_cpus;
	/*
	 * Not system-wide: per CPU, the time of the last switch-out recorded
	 * there (see recorded_cpu_switch); NULL when cpus is not.
	 */
	uint64_t *cpu_out;
	uint32_t nr_cpu_out;
	uint64_t end_ns;		/* of the recording, after finish */
};

/*
 * The latest thread with this tid, or NULL.  It may have exited (closed):
 * the kernel still delivers a switch-out and samples of a task after its
 * EXIT record, and those belong to it, not to a new thread.
 */
static struct thread *thread_find(struct wp_account *a, uint32_t tid)
{
	uint64_t i;

	return wp_u64map_get(&a->thread_index, tid, &i) ? &a->threads[i] : NULL;
}

/* The thread with this tid if it is alive, or NULL. */
static struct thread *thread_live(struct wp_account *a, uint32_t tid)
{
	struct thread *t = thread_find(a, tid);

	return t && !t->closed ? t : NULL;
}

static struct thread *thread_add(struct wp_account *a, uint32_t pid, uint32_t tid,
				 uint64_t start, enum run_state initial)
{
	struct thread *t;

	if (a->nr == UINT32_MAX - 1)
		return NULL;	/* serials and the index are 32 bits */
	if (WP_GROW(a->threads, a->cap, a->nr + 1))
		return NULL;
	if (a->no_switches)
		initial = STATE_UNKNOWN;
	t = &a->threads[a->nr++];
	memset(t, 0, sizeof(*t));
	t->serial = (uint32_t)(a->nr - 1);
	t->t.serial = t->serial;
	t->t.pid = pid;
	t->t.tid = tid;
	t->t.start_ns = start;
	t->state = initial;
	t->initial_off = STATE_BLOCKED;
	t->since = start;
	t->off_start = start;
	t->waker = NO_WAKER;
	t->early_waker = NO_WAKER;
	t->cpu = NO_CPU;
	t->pending_stack = NO_STACK;
	t->off_stack = a->opts.unknown_stack;
	if (a->lost)
		t->t.approximate = true;
	/* A reused tid now means this thread. */
	if (wp_u64map_put(&a->thread_index, tid, a->nr - 1)) {
		a->nr--;
		return NULL;
	}
	return t;
}

/*
 * The thread a record of tid belongs to; first seen, it existed when
 * recording began.  May return an exited thread: callers ignore records
 * that come after its exit.
 */
static struct thread *thread_get(struct wp_account *a, uint32_t pid, uint32_t tid)
{
	struct thread *t = thread_find(a, tid);

	if (!t)
		t = thread_add(a, pid, tid, a->start_ns, STATE_UNKNOWN);
	return t;
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


/* Hand the observer the part inside the window of a stretch [from, to) in t's state. */
static void observe_period(struct wp_account *a, const struct thread *t, uint64_t from,
			   uint64_t to, uint64_t full)
{
	static const enum wp_period_kind kinds[] = {
		[STATE_ON] = WP_PERIOD_ON,
		[STATE_BLOCKED] = WP_PERIOD_BLOCKED,
		[STATE_RUNNABLE] = WP_PERIOD_RUNNABLE,
		[STATE_PREEMPTED] = WP_PERIOD_PREEMPTED,
	};
	const struct wp_account_observer *o = a->opts.observer;
	struct wp_period p = { .thread = &t->t, .kind = kinds[t->state], .stack = NO_STACK };

	if (a->opts.window_start && from < a->opts.window_start)
		from = a->opts.window_start;
	if (a->opts.window_end && to > a->opts.window_end)
		to = a->opts.window_end;
	p.start_ns = from;
	p.end_ns = to;
	if (t->state != STATE_ON) {
		p.stack = t->off_stack;
		p.short_off = full < a->opts.min_block_ns;
	}
	if (t->state == STATE_BLOCKED && t->waker != NO_WAKER)
		p.waker = &a->wakers[t->waker];
	p.wakeup_unrecorded = t->state == STATE_BLOCKED && (t->gap & GAP_UNSPLIT);
	o->period(o->arg, &p);
}

static int est_part(enum run_state state)
{
	return state == STATE_BLOCKED ? 0 : state == STATE_RUNNABLE ? 1 : 2;
}

/* The stratum of one stack's sampled time in one thread: its strata key. */
static uint64_t stratum_key(uint32_t serial, int part, unsigned int bucket, uint32_t stack)
{
	return (uint64_t)serial << 40 | (uint64_t)(part * EST_BUCKETS + bucket) << 32 | stack;
}

/* Threads past this many share the plain ratio estimate (the key's room). */
#define STRATA_MAX_SERIAL (1U << 24)

/*
 * Above the --switch-stacks budget the kernel samples switch-outs by
 * count, blind to where the thread waits, so the sampled intervals of a
 * thread stand for the unsampled ones.  Each is counted by kind and by
 * log2 bucket of its length (a stratum): unsampled time is later shared
 * out in each stratum in proportion to the stacks' sampled time there
 * (estimate_switch_stacks).  Matching lengths keeps a program whose waits
 * alternate in step with the sampling period (two sites, one long, one
 * short) from lending one site's stack to the other's time.  A thread's
 * strata start with its first unsampled switch-out.
 * Returns whether the part was an unsampled one (d is then counted).
 */
static bool strata_note(struct wp_account *a, struct thread *t, uint64_t full, uint64_t d)
{
	unsigned int b = full ? 63 - (unsigned int)__builtin_clzll(full) : 0;
	int p = est_part((enum run_state)t->state);
	uint64_t key, had = 0;

	if (!a->opts.switch_stacks_sampled || t->serial >= STRATA_MAX_SERIAL)
		return false;
	if (t->off_stack == a->opts.unsampled_switch_stack) {
		if (!t->unsampled_by_bucket) {
			t->unsampled_by_bucket = calloc(EST_PARTS * EST_BUCKETS, sizeof(uint64_t));
			if (!t->unsampled_by_bucket)
				return false;	/* the plain ratio estimate then */
		}
		t->unsampled_by_bucket[p * EST_BUCKETS + b] += d;
		return true;
	}
	if (!t->unsampled_by_bucket || t->off_stack == a->opts.unknown_stack)
		return false;
	key = stratum_key(t->serial, p, b, t->off_stack);
	wp_u64map_get(&a->strata, key, &had);
	if (wp_u64map_put(&a->strata, key, had + d))
		a->err = -ENOMEM;
	return false;
}

/*
 * A recorded wait of off ns, run of them runnable, into the figures that
 * the others are split by.  Its runnable part counts up to SEEN_CAP times
 * the mean so far (the excess as not waited at all): the drain or
 * the gate itself, taking the CPU, holds up a few waits a hundredfold,
 * which among a few hundred would outweigh the rest.
 */
static void tally_seen(struct wp_account *a, struct wake_tally *y, uint64_t off, uint64_t run)
{
	if (a->seen_count >= SEEN_CAP_AFTER) {
		uint64_t cap = SEEN_CAP * (a->seen_runnable_ns / a->seen_count);

		if (run > cap) {
			off -= run - cap;
			run = cap;
		}
	}
	y->seen_off_ns += off;
	y->seen_runnable_ns += run;
	y->seen_count++;
	a->seen_off_ns += off;
	a->seen_runnable_ns += run;
	a->seen_count++;
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
static void gap_note(struct wp_account *a, const struct thread *t,
		     const struct wp_stack_weight *w, uint64_t d)
{
	struct wake_gap *g = gap_get(a, w);

	if (!g) {
		a->err = -ENOMEM;
		return;
	}
	if (t->gap & GAP_UNSPLIT) {
		g->unsplit_ns += d;
		g->unsplit_count++;
	}
	if (t->gap & GAP_UNWOKEN) {
		g->unwoken_ns += d;
		g->unwoken_count++;
	}
}

/* Add d of the current off-CPU part to weight w: its time and one interval. */
static void weight_add_part(struct wp_account *a, struct thread *t, struct wp_stack_weight *w,
			    uint64_t d)
{
	if (t->state == STATE_BLOCKED) {
		w->blocked_ns += d;
		w->blocked_count++;
		if (t->waker != NO_WAKER)
			add_wakes(a, w, t->waker, d, 1);
		if (t->gap)
			gap_note(a, t, w, d);
	} else if (t->state == STATE_RUNNABLE) {
		w->runnable_ns += d;
		w->runnable_count++;
	} else {
		w->preempted_ns += d;
		w->preempted_count++;
	}
}

/* End the thread's current state at now: totals, histograms, stack weight. */
static void state_end(struct wp_account *a, struct thread *t, uint64_t now)
{
	struct wp_stack_weight *w;
	uint64_t full, d;

	if (now < t->since)
		now = t->since;	/* tiny clock disorder between CPUs */
	full = now - t->since;
	d = in_window(a, t->since, now);
	if (d && t->state != STATE_UNKNOWN && a->opts.observer && a->opts.observer->period)
		observe_period(a, t, t->since, now, full);
	t->since = now;
	if (t->state == STATE_UNKNOWN)
		return;
	if (t->state == STATE_ON) {
		t->t.on_cpu_ns += d;
		if (d)
			hist_add(a, t, WP_HIST_ON_SLICES, d);
		if (a->cpus && t->cpu < a->nr_cpus)
			a->cpu_times[t->cpu].busy_ns += d;
		return;
	}
	if (t->state == STATE_BLOCKED) {
		t->t.blocked_ns += d;
		if ((t->gap & GAP_UNSPLIT) && d && tally_of(a, t)) {
			t->tally->unsplit_ns += d;
			t->tally->unsplit_count++;
		}
	} else if (t->state == STATE_RUNNABLE)
		t->t.runnable_ns += d;
	else
		t->t.preempted_ns += d;
	/* A sleep woken before it began still names its waker. */
	if (!d && !(t->state == STATE_BLOCKED && t->waker != NO_WAKER &&
		    in_window(a, now, now + 1)))
		return;
	if (t->state == STATE_PREEMPTED && d)
		hist_add(a, t, WP_HIST_PREEMPT_WAITS, d);
	else if (t->state == STATE_RUNNABLE && d)
		hist_add(a, t, WP_HIST_WAKEUP_WAITS, d);
	if (full < a->opts.min_block_ns)
		return;
	strata_note(a, t, full, d);
	w = weight_get(a, t->serial, t->off_stack);
	if (!w) {
		a->err = -ENOMEM;
		return;
	}
	weight_add_part(a, t, w, d);
}

/*
 * Whether t's current wait may have had its wake-up where the tracepoints
 * were off: some CPU's were, since it began.  (A wait without a wake-up
 * where they were all on is what it was without a gate: blocked.)
 */
static bool gated_wait(const struct wp_account *a, const struct thread *t)
{
	return a->wakeups_gated && t->state == STATE_BLOCKED &&
	       a->last_untimed_out >= t->off_start;
}

/* The blocked interval ends at time, ended by t->waker: runnable from there. */
static void wakee_runnable(struct wp_account *a, struct thread *t, uint64_t time)
{
	/* Gated: a wake-up on a CPU whose tracepoints were off names no waker. */
	if (gated_wait(a, t) && t->waker == NO_WAKER)
		t->gap = GAP_UNWOKEN;
	state_end(a, t, time);
	t->gap = 0;
	if (a->wakeups_gated && t->state == STATE_BLOCKED && tally_of(a, t))
		t->tally->woke_at = time ? time : 1;
	t->waker = NO_WAKER;
	t->woken_early = false;
	t->state = STATE_RUNNABLE;
	if (in_window(a, time, time + 1))
		t->t.wakeups++;
}

/* The off-CPU interval that ends at now, whole, into the histogram. */
static void off_interval_end(struct wp_account *a, struct thread *t, uint64_t now)
{
	uint64_t d;

	if (t->state == STATE_ON || t->state == STATE_UNKNOWN)
		return;
	d = in_window(a, t->off_start, now);
	if (d)
		hist_add(a, t, WP_HIST_OFF_INTERVALS, d);
}

/*
 * The time of a switch of t (in or out) whose record came at time: that of
 * its sched_switch when there is one, else the record's.
 */
static uint64_t switch_time(struct wp_account *a, struct thread *t, uint64_t time, bool in)
{
	uint64_t at = t->sched_switch_time;
	bool timed;

	t->sched_switch_time = 0;
	timed = at && t->sched_switch_in == in && at <= time && time - at <= SCHED_SWITCH_LAG_NS &&
		at >= t->since;
	/*
	 * Some kernels take no sched_switch in an idle task's context (this
	 * VM's, on CPU 1, for perf too): such a switch-in is timed by its
	 * record, which comes after the kernel switched the thread's events
	 * in, time that schedstat counts on-CPU.  Counted, for the footer.
	 */
	/*
	 * Closed, the tracepoints miss every switch-out, on every CPU: two
	 * in a row without sched_switch say so, where a lone one is a record
	 * lost or late.
	 */
	if (!in && a->saw_sched_switch) {
		if (!timed && a->prev_out_untimed)
			a->last_untimed_out = time;
		a->prev_out_untimed = !timed;
	}
	if (timed && time - at <= LAG_SAMPLE_MAX_NS) {
		uint64_t lag = time - at;

		/* As with the recorded waits (tally_seen): a few held-up ones are capped. */
		if (a->lag_n[in] >= SEEN_CAP_AFTER && lag > SEEN_CAP * (a->lag_sum[in] / a->lag_n[in]))
			lag = SEEN_CAP * (a->lag_sum[in] / a->lag_n[in]);
		a->lag_sum[in] += lag;
		a->lag_n[in]++;
	}
	/*
	 * Gated, a switch whose CPU's tracepoints were off is as late as the
	 * others were on average.  Both ends of a slice move, so its length,
	 * the thread's on-CPU time, loses the difference of the two lags
	 * (the switch-in's record comes after the whole switch), which in a
	 * storm the records alone put 20-40% short.
	 */
	/* Counted for the footer, whichever way it is timed below. */
	if (in && a->saw_sched_switch && in_window(a, time, time + 1)) {
		a->switch_ins++;
		a->switch_ins_untimed += !timed;
	}
	if (!timed && a->wakeups_gated && a->lag_n[in] >= 16) {
		uint64_t lag = a->lag_sum[in] / a->lag_n[in];

		return time - t->since > lag ? time - lag : t->since;
	}
	return timed ? at : time;
}

static void thread_switch_out(struct wp_account *a, struct thread *t, uint64_t now,
			      bool preempted)
{
	t->start_stack_due = false;
	if (t->state == STATE_UNKNOWN)
		t->state = STATE_ON;		/* it was running since the start */
	else if (t->state != STATE_ON)
		t->t.approximate = true;	/* its switch-in was lost */
	state_end(a, t, now);
	t->waker = NO_WAKER;	/* a wake-up of the interval before, if any */
	t->woken_early = false;
	/* (With sched_switch, now may be before the switch-out record's wake-up.) */
	if (!preempted && t->early_waker != NO_WAKER &&
	    (t->early_time >= now || now - t->early_time <= EARLY_WAKE_NS)) {
		t->waker = t->early_waker;
		t->woken_early = true;
	}
	t->early_waker = NO_WAKER;
	if (t->tally)
		t->tally->woke_at = 0;
	t->state = preempted ? STATE_PREEMPTED : STATE_BLOCKED;
	t->off_start = now;
	/*
	 * A stack sampled long before is no part of this switch (lost
	 * records).  now may be the sched_switch's, a little before it.
	 */
	if (t->pending_stack != NO_STACK &&
	    (t->pending_time <= now ? now - t->pending_time : t->pending_time - now) <=
	    SCHED_SWITCH_LAG_NS)
		t->off_stack = t->pending_stack;
	else if (a->opts.switch_stacks_sampled)
		t->off_stack = a->opts.unsampled_switch_stack;
	else
		t->off_stack = a->opts.unknown_stack;
	t->pending_stack = NO_STACK;
	if (!in_window(a, now, now + 1))
		return;
	if (t->off_stack == a->opts.unsampled_switch_stack && a->opts.switch_stacks_sampled)
		t->t.switch_outs_unsampled++;
	if (preempted)
		t->t.involuntary_switches++;
	else
		t->t.voluntary_switches++;
}

static void thread_switch_in(struct wp_account *a, struct thread *t, uint64_t now)
{
	t->start_stack_due = false;
	if (t->state == STATE_UNKNOWN)
		t->state = t->initial_off;	/* off-CPU since the start */
	else if (t->state == STATE_ON)
		t->t.approximate = true;	/* its switch-out was lost */
	/* No wake-up since the switch-out: the early one ended the sleep at once. */
	if (t->state == STATE_BLOCKED && t->woken_early)
		wakee_runnable(a, t, t->since);
	/* Gated: a wait whose wake-up fell where the tracepoints were off. */
	if (gated_wait(a, t))
		t->gap = GAP_UNSPLIT | (t->waker == NO_WAKER ? GAP_UNWOKEN : 0);
	/*
	 * A wait whose wake-up was recorded, with the tracepoints on all
	 * along: the others are split by such.  One that began before they
	 * were opened again is no fair sample (opening them held it up).
	 */
	if (t->tally && t->state == STATE_RUNNABLE && t->tally->woke_at &&
	    t->tally->woke_at >= t->off_start && now >= t->tally->woke_at &&
	    a->last_untimed_out < t->off_start) {
		tally_seen(a, t->tally, now - t->off_start, now - t->tally->woke_at);
		a->wake_est.seen++;
	}
	if (t->tally)
		t->tally->woke_at = 0;
	state_end(a, t, now);	/* blocked: its waker's, when sched_wakeup was missed */
	t->gap = 0;
	off_interval_end(a, t, now);
	t->waker = NO_WAKER;
	t->woken_early = false;
	t->early_waker = NO_WAKER;
	t->state = STATE_ON;
}

/*
 * A rotated file's THREAD record says the thread was off-CPU when the
 * file began, since a switch-out in an earlier file: it is blocked (or
 * preempted) from its start, not of a kind decided later, and the
 * switch-out sample that may follow, dated then, is the wait's stack.
 */
static void thread_off_at_start(struct wp_account *a, struct thread *t, bool preempted)
{
	if (t->state != STATE_UNKNOWN || t->closed || a->no_switches)
		return;
	t->state = t->initial_off = preempted ? STATE_PREEMPTED : STATE_BLOCKED;
	t->off_start = t->since;
	t->off_stack = a->opts.unknown_stack;
	t->start_stack_due = true;
}

static void thread_close(struct wp_account *a, struct thread *t, uint64_t end)
{
	uint64_t start;

	if (t->closed)
		return;
	if (end < t->t.start_ns)
		end = t->t.start_ns;
	if (end < t->since)
		end = t->since;		/* an exit dated before its last switch-in */
	if (t->state == STATE_UNKNOWN && a->no_switches) {
		/*
		 * Without switch records only the samples tell: on-CPU is
		 * their count times the period, the rest is off-CPU.
		 */
		uint64_t d = in_window(a, t->since, end);
		uint64_t on = t->t.samples * a->sample_period_ns;

		t->t.on_cpu_ns = on < d ? on : d;
		t->t.blocked_ns = d - t->t.on_cpu_ns;
		t->since = end;
	} else if (t->state == STATE_UNKNOWN) {
		/* No switch at all: running throughout if it was ever sampled. */
		t->state = t->t.samples || t->t.switch_samples ? STATE_ON : t->initial_off;
	}
	state_end(a, t, end);
	off_interval_end(a, t, end);
	start = t->t.start_ns;
	if (a->opts.window_start && start < a->opts.window_start)
		start = a->opts.window_start;
	if (a->opts.window_end && end > a->opts.window_end)
		end = a->opts.window_end;
	if (end < start)
		end = start;
	t->t.start_ns = start;
	t->t.end_ns = end;
	t->t.wall_ns = end - start;
	t->closed = true;
}

int wp_account_new(const struct wp_meta *meta, const struct wp_account_opts *opts,
		   struct wp_account **out)
{
	struct wp_account *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	wp_sample_format_init(&a->fmt, meta->sample_type, meta->regs_mask);
	a->start_ns = meta->start_clock_ns;
	a->no_switches = !(meta->flags & WP_META_SWITCHES);
	a->sample_period_ns = meta->sample_period_ns;
	a->wakeups = meta->flags & WP_META_WAKEUPS;
	a->wakeups_gated = a->wakeups && (meta->flags & WP_META_WAKEUPS_GATED);
	for (uint32_t e = 0; a->wakeups && e < meta->nr_events; e++)
		a->enqueues |= meta->events[e].role == WP_EVENT_ENQUEUED;
	if (opts)
		a->opts = *opts;
	/* Idle time is the idle task's switches, seen only CPU-wide. */
	if ((meta->flags & WP_META_CPU_WIDE) && !a->no_switches && meta->nr_cpus &&
	    meta->nr_cpus <= 65536) {
		a->cpus = calloc(meta->nr_cpus, sizeof(*a->cpus));
		a->cpu_times = calloc(meta->nr_cpus, sizeof(*a->cpu_times));
		if (!a->cpus || !a->cpu_times) {
			free(a->cpus);
			free(a->cpu_times);
			free(a);
			return -ENOMEM;
		}
		a->nr_cpus = meta->nr_cpus;
	} else if (!a->no_switches && meta->nr_cpus && meta->nr_cpus <= 65536) {
		a->cpu_out = calloc(meta->nr_cpus, sizeof(*a->cpu_out));
		if (!a->cpu_out) {
			free(a);
			return -ENOMEM;
		}
		a->nr_cpu_out = meta->nr_cpus;
	}
	*out = a;
	return 0;
}

int wp_account_sample(struct wp_account *a, uint32_t pid, uint32_t tid, uint64_t time,
		      bool switch_out, uint32_t stack)
{
	struct wp_stack_weight *w;
	struct thread *t;

	if (a->err)
		return a->err;
	/* The idle task, or a task already unhashed at exit (pid -1). */
	if (!tid || tid == UINT32_MAX)
		return 0;
	t = thread_get(a, pid, tid);
	if (!t)
		return -ENOMEM;
	if (t->closed)
		return 0;	/* its exit path, after the EXIT record */
	if (switch_out) {
		/* The stack of a wait that began before the file (thread_off_at_start). */
		if (t->start_stack_due && time == t->off_start) {
			t->start_stack_due = false;
			t->off_stack = stack;
			return 0;
		}
		if (in_window(a, time, time + 1))
			t->t.switch_samples++;
		t->pending_stack = stack;
		t->pending_time = time;
		return 0;
	}
	/* Sampled on a CPU while we thought it off: a lost switch-in. */
	if (!a->no_switches && (t->state == STATE_BLOCKED || t->state == STATE_RUNNABLE ||
				t->state == STATE_PREEMPTED)) {
		t->t.approximate = true;
		thread_switch_in(a, t, time);
	}
	if ((a->opts.window_start && time < a->opts.window_start) ||
	    (a->opts.window_end && time > a->opts.window_end))
		return 0;
	t->t.samples++;
	w = weight_get(a, t->serial, stack);
	if (!w)
		return -ENOMEM;
	w->samples++;
	if (a->opts.observer && a->opts.observer->sample)
		a->opts.observer->sample(a->opts.observer->arg, &t->t, time, stack);
	return 0;
}

static void note_loss(struct wp_account *a, uint64_t n, uint64_t time)
{
	a->lost += n;
	if (!a->lost_first)
		a->lost_first = time;
	a->lost_last = time;
	/* Any live thread may have lost records. */
	for (size_t i = 0; i < a->nr; i++)
		if (!a->threads[i].closed)
			a->threads[i].t.approximate = true;
}

/*
 * A new thread is ready to run, not yet running: waiting for a CPU since
 * it was made, which is what waiting after a wake-up means too.
 */
static enum run_state new_thread_state(const struct wp_account *a)
{
	return a->wakeups ? STATE_RUNNABLE : STATE_PREEMPTED;
}

/* The index of waker w in the table, added on first use; NO_WAKER when out of memory. */
static uint32_t waker_index(struct wp_account *a, const struct wp_waker *w)
{
	uint64_t key = ((uint64_t)w->kind << 62) ^ ((uint64_t)w->tid << 30) ^ w->stack;
	struct wp_waker *nw;
	struct thread *t;
	uint64_t i;

	if (wp_u64map_get(&a->waker_index, key, &i) && a->wakers[i].tid == w->tid &&
	    a->wakers[i].stack == w->stack && a->wakers[i].kind == w->kind)
		return (uint32_t)i;
	nw = wp_grow(a->wakers, &a->cap_wakers, a->nr_wakers + 1, sizeof(*a->wakers));
	if (!nw || a->nr_wakers >= NO_WAKER)
		return NO_WAKER;
	a->wakers = nw;
	nw = &a->wakers[a->nr_wakers];
	*nw = *w;
	memset(nw->comm, 0, sizeof(nw->comm));
	/* Its name as it is now: a thread of the recording, or the idle task. */
	t = w->kind == WP_WAKER_THREAD ? thread_find(a, w->tid) : NULL;
	if (t)
		memcpy(nw->comm, t->t.comm, sizeof(nw->comm));
	if (wp_u64map_put(&a->waker_index, key, a->nr_wakers))
		return NO_WAKER;
	return (uint32_t)a->nr_wakers++;
}

/* The thread of the recording that a wake-up concerns, or NULL. */
static struct thread *wakee_find(struct wp_account *a, uint32_t wakee)
{
	struct thread *t = thread_live(a, wakee);

	if (!t)
		return NULL;	/* not one of the recording's threads */
	/* Woken before its first switch record: blocked since the start. */
	if (t->state == STATE_UNKNOWN && !t->t.samples) {
		t->state = STATE_BLOCKED;
		t->off_start = t->since;
	}
	return t;
}

int wp_account_wakeup(struct wp_account *a, uint32_t wakee, uint64_t time,
		      const struct wp_waker *waker)
{
	struct thread *t;

	uint32_t w;

	if (a->err)
		return a->err;
	t = wakee_find(a, wakee);
	if (!t || (t->state != STATE_BLOCKED && t->state != STATE_ON))
		return 0;	/* woken already, or preempted: not a sleep */
	w = waker_index(a, waker);
	if (w == NO_WAKER)
		return a->err = -ENOMEM;
	if (t->state == STATE_ON) {
		t->early_waker = w;	/* its switch-out record may still come */
		t->early_time = time;
		return 0;
	}
	t->waker = w;
	t->woken_early = false;
	/* With sched_wakeup recorded, its time ends the blocked interval. */
	if (!a->enqueues)
		wakee_runnable(a, t, time);
	return 0;
}

int wp_account_sched_switch(struct wp_account *a, uint32_t prev, uint32_t next, uint64_t time,
			    uint32_t cpu)
{
	struct thread *t;

	if (a->err)
		return a->err;
	a->saw_sched_switch = true;
	t = prev ? thread_live(a, prev) : NULL;
	if (t) {
		t->sched_switch_time = time;
		t->sched_switch_in = false;
	}
	t = next ? thread_live(a, next) : NULL;
	if (t) {
		t->sched_switch_time = time;
		t->sched_switch_in = true;
	}
	/* The switch records of the idle task, and of exited tasks, take it likewise. */
	if (a->cpus && cpu < a->nr_cpus) {
		a->cpus[cpu].switch_time = time;
		a->cpus[cpu].switch_prev = prev;
		a->cpus[cpu].switch_next = next;
	}
	return 0;
}

int wp_account_enqueued(struct wp_account *a, uint32_t wakee, uint64_t time)
{
	struct thread *t;

	if (a->err)
		return a->err;
	t = wakee_find(a, wakee);
	/* After an early wake-up too: its enqueue may follow the switch-out. */
	if (t && t->state == STATE_BLOCKED)
		wakee_runnable(a, t, time);
	return 0;
}

bool wp_account_has_wakeups(const struct wp_account *a)
{
	return a->wakeups;
}

const struct wp_waker *wp_account_wakers(const struct wp_account *a, size_t *n)
{
	*n = a->nr_wakers;
	return a->wakers;
}

const struct wp_wake_weight *wp_account_wake_weights(const struct wp_account *a, size_t *n)
{
	*n = a->nr_wakes;
	return a->wakes;
}

/* The thread's on-CPU time up to now, as the accounting will count it. */
static uint64_t on_so_far(const struct wp_account *a, const struct thread *t, uint64_t now)
{
	uint64_t on = t->t.on_cpu_ns;

	/* A thread not switched yet that execs is running: since its start. */
	if (t->state == STATE_ON || (t->state == STATE_UNKNOWN && !a->no_switches))
		on += in_window(a, t->since, now > t->since ? now : t->since);
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
		n->serial = t->serial;
		n->pub.start_ns = time;
		n->on_at_start = on_so_far(a, t, time);
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
	struct wp_process_cmdline *pc;
	struct wp_cmdline c;
	struct thread *t;
	char *args;

	if (wp_cmdline_parse(rec, &c))
		return 0;
	t = thread_live(a, c.pid);
	if (!t || t->t.pid != c.pid)
		return 0;	/* gone by now, or none of the recording's */
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

/* Each name's times, once every thread is closed (threads still by serial). */
static void names_close(struct wp_account *a)
{
	for (size_t i = 0; i < a->nr_names; i++) {
		struct name_span *n = &a->names[i];
		const struct thread *t = &a->threads[n->serial];
		const struct name_span *next = n->next ? &a->names[n->next - 1] : NULL;
		uint64_t from = n->pub.start_ns, to = next ? next->pub.start_ns : t->t.end_ns;
		uint64_t on_end = next ? next->on_at_start : t->t.on_cpu_ns;

		if (from < t->t.start_ns)
			from = t->t.start_ns;
		if (to > t->t.end_ns)
			to = t->t.end_ns;
		n->pub.start_ns = from;
		n->pub.wall_ns = to > from ? to - from : 0;
		n->pub.on_cpu_ns = on_end > n->on_at_start ? on_end - n->on_at_start : 0;
	}
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

/*
 * The time of a switch record on CPU c that the CPU's last sched_switch
 * (from prev to next; UINT32_MAX: any) stands for, or the record's own.
 */
static uint64_t cpu_sched_switch_time(struct cpu *c, uint32_t prev, uint32_t next,
				      uint64_t time)
{
	uint64_t at = c->switch_time;

	if (!at || (prev != UINT32_MAX && c->switch_prev != prev) ||
	    (next != UINT32_MAX && c->switch_next != next) || at > time ||
	    time - at > SCHED_SWITCH_LAG_NS)
		return time;
	c->switch_time = 0;
	return at;
}

/*
 * The last switch-out of an exiting thread t on cpu (NULL: the one on
 * cpu, its tid already gone): it ran its exit path until now.
 */
static int exit_switch_out(struct wp_account *a, uint32_t cpu, struct thread *t, uint64_t time)
{
	struct cpu *c = cpu < a->nr_cpus ? &a->cpus[cpu] : NULL;

	if (!t && c && c->current)
		t = &a->threads[c->current - 1];
	if (!t || !t->exiting || t->closed)
		return 0;
	if (c)
		time = cpu_sched_switch_time(c, UINT32_MAX, UINT32_MAX, time);
	thread_close(a, t, time);
	if (c) {
		c->last_out = t->t.end_ns;
		c->current = 0;
	}
	return 0;
}

/*
 * A switch-in on cpu at time (sw, of task self) starts where the
 * switch-out before it ended.  When both name as the other a task that
 * wrote no switch record of its own (the idle task now and then, and some
 * others), that task ran in between: its time is counted as theirs say.
 * When they name different ones, several ran unseen, in shares no record
 * tells: that time is the CPU's unseen time.
 */
static uint64_t cpu_switch_in_time(struct wp_account *a, uint32_t cpu, const struct wp_switch *sw,
				   uint32_t self, uint64_t time)
{
	struct cpu *c = &a->cpus[cpu];
	uint64_t out = c->last_out;
	uint32_t other = sw->next_prev_tid;
	struct thread *t;

	c->last_out = 0;
	if (!out)
		return time;
	/*
	 * Never before the CPU's last switch-out: one CPU runs one task at
	 * a time.  (A switch timed by the mean lag, gated, may be put there.)
	 */
	if (out > time)
		return out;
	if (!sw->cpu_wide || (c->last_next == self && time - out <= SCHED_SWITCH_LAG_NS))
		return out;	/* the switch itself */
	if (c->last_next == self) {
		a->cpu_times[cpu].unseen_ns += in_window(a, out, time);	/* records lost */
		return time;
	}
	if (c->last_next != other || other == UINT32_MAX) {
		a->cpu_times[cpu].unseen_ns += in_window(a, out, time);
		return time;
	}
	if (!other) {
		a->cpu_times[cpu].idle_ns += in_window(a, out, time);
		return time;
	}
	t = thread_get(a, sw->next_prev_pid, other);
	if (!t)
		a->err = -ENOMEM;
	else if (!t->closed && t->state != STATE_ON && t->since <= out) {
		t->cpu = cpu;
		thread_switch_in(a, t, out);
		thread_switch_out(a, t, time, false);
	} else {
		a->cpu_times[cpu].unseen_ns += in_window(a, out, time);
	}
	return time;
}

/*
 * Not system-wide, only the recording's threads' switches are known: a
 * switch-in on a CPU still starts no earlier than the last switch-out
 * recorded there, as cpu_switch_in_time's does, since one CPU runs one
 * task at a time (a switch timed by the mean lag may be put before it).
 */
static uint64_t recorded_cpu_switch(struct wp_account *a, uint32_t cpu, const struct thread *t,
				    bool out, uint64_t time)
{
	uint64_t last;

	if (cpu >= a->nr_cpu_out)
		return time;
	if (out) {
		a->cpu_out[cpu] = time > t->since ? time : t->since;
		return time;
	}
	last = a->cpu_out[cpu];
	return last > time && last >= t->since ? last : time;
}

/* The idle task of cpu switched out (the CPU got busy) or in, at time. */
static void cpu_idle_switch(struct wp_account *a, uint32_t cpu, const struct wp_switch *sw,
			    uint64_t time)
{
	struct cpu *c = &a->cpus[cpu];
	bool out = sw->out;

	time = cpu_sched_switch_time(c, out ? 0 : UINT32_MAX, out ? UINT32_MAX : 0, time);
	if (!out) {
		time = cpu_switch_in_time(a, cpu, sw, 0, time);
		c->state = CPU_IDLE;
		c->since = time;
		return;
	}
	c->last_out = time;
	if (c->state == CPU_UNKNOWN)
		c->since = a->start_ns;		/* idle since the start */
	if (c->state != CPU_BUSY)
		a->cpu_times[cpu].idle_ns += in_window(a, c->since,
						       time > c->since ? time : c->since);
	c->state = CPU_BUSY;
}

int wp_account_sample_cpu(struct wp_account *a, uint32_t tid, uint32_t cpu)
{
	struct thread *t;

	if (!a->cpus || cpu >= a->nr_cpus)
		return 0;
	if (!tid) {
		a->cpus[cpu].idle_sampled = true;
		return 0;
	}
	/* A thread that never switched: where it ran all along. */
	t = thread_live(a, tid);
	if (t && (t->state == STATE_UNKNOWN || t->cpu == NO_CPU))
		t->cpu = cpu;
	return 0;
}

const struct wp_cpu_time *wp_account_cpus(const struct wp_account *a, size_t *n)
{
	*n = a->result && a->cpus ? a->nr_cpus : 0;
	return *n ? a->cpu_times : NULL;
}

static int account_fork(struct wp_account *a, const struct perf_event_header *rec,
			uint64_t time)
{
	struct thread *t, *parent;
	struct wp_task_event te;

	if (wp_task_event_parse(rec, &te))
		return 0;
	t = thread_live(a, te.tid);
	if (t && t->state == STATE_UNKNOWN && !t->t.samples && !t->t.switch_samples &&
	    t->t.start_ns == a->start_ns) {
		/*
		 * Only named so far, by the /proc snapshot taken as recording
		 * began: in fact it was created since.  It starts here.
		 */
		t->t.start_ns = time;
		t->since = t->off_start = time;
		t->state = t->initial_off = new_thread_state(a);
		t->forked_process = te.pid != te.ppid;
		return 0;
	}
	if (t)
		thread_close(a, t, t->exiting ? t->exit_time : time);	/* its EXIT lost */
	t = thread_add(a, te.pid, te.tid, time, new_thread_state(a));
	if (!t)
		return -ENOMEM;
	t->initial_off = new_thread_state(a);
	t->forked_process = te.pid != te.ppid;
	parent = thread_find(a, te.ptid);
	if (parent)
		memcpy(t->t.comm, parent->t.comm, sizeof(t->t.comm));
	return 0;
}

static int account_comm(struct wp_account *a, const struct perf_event_header *rec,
			uint64_t time)
{
	struct wp_sample_id id;
	char comm[16] = "";
	struct thread *t;
	struct wp_comm c;
	size_t n;

	if (wp_comm_parse(rec, &c))
		return 0;
	t = thread_find(a, c.tid);
	if (t && t->closed) {
		/* The tid of an exited thread, reused by a task whose FORK we missed. */
		t = thread_add(a, c.pid, c.tid, time, STATE_UNKNOWN);
	} else if (!t && c.exec &&
		   !wp_sample_id_parse(&a->fmt, rec, &id) && id.id != WP_SYNTHESIZED_ID) {
		/* The launched command: it runs from its exec on. */
		t = thread_add(a, c.pid, c.tid, time > a->start_ns ? time : a->start_ns, STATE_ON);
	}
	if (!t)
		t = thread_get(a, c.pid, c.tid);
	if (!t)
		return -ENOMEM;
	t->t.pid = c.pid;
	n = c.len < sizeof(comm) ? c.len : sizeof(comm) - 1;
	memcpy(comm, c.comm, n);
	comm[n] = '\0';
	/* A process's main thread keeps every name it exec'd under. */
	if (c.exec && c.pid == c.tid) {
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
		memcpy(a->names[t->name - 1].pub.comm, comm, sizeof(comm));	/* renamed itself */
	}
	memcpy(t->t.comm, comm, sizeof(comm));
	return a->err;
}

int wp_account_record(struct wp_account *a, const struct perf_event_header *rec,
		      uint64_t time)
{
	struct wp_record_thread th;
	struct wp_task_event te;
	struct wp_sample_id id;
	struct wp_switch sw;
	struct thread *t;
	uint64_t lost_id, v;

	if (a->err)
		return a->err;
	switch (rec->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (wp_switch_parse(rec, &sw) || wp_sample_id_parse(&a->fmt, rec, &id))
			return 0;
		if (a->cpus && id.cpu < a->nr_cpus) {
			if (sw.out)
				a->cpus[id.cpu].last_next = sw.next_prev_tid;
			if (!id.tid) {
				cpu_idle_switch(a, id.cpu, &sw, time);
				return a->err;
			}
			if (a->cpus[id.cpu].state == CPU_UNKNOWN) {
				/* Idle since the start, says a switch-in from the idle task. */
				if (!sw.out && sw.cpu_wide && !sw.next_prev_tid)
					a->cpu_times[id.cpu].idle_ns += in_window(a, a->start_ns, time);
				a->cpus[id.cpu].state = CPU_BUSY;	/* not idle so far */
			}
			if (id.tid == UINT32_MAX && sw.out)
				return exit_switch_out(a, id.cpu, NULL, time);
		}
		if (!id.tid || id.tid == UINT32_MAX)
			return 0;
		t = thread_get(a, id.pid, id.tid);
		if (!t)
			return -ENOMEM;
		if (t->closed)
			return 0;	/* the last switch-out, after its EXIT */
		/* Preempted on its exit path (freeing a large memory, say), it runs again. */
		if (t->exiting && sw.out && !sw.preempted)
			return exit_switch_out(a, id.cpu, t, time);
		time = switch_time(a, t, time, !sw.out);
		if (!a->cpus || id.cpu >= a->nr_cpus) {
			time = recorded_cpu_switch(a, id.cpu, t, sw.out, time);
		} else if (sw.out) {
			a->cpus[id.cpu].last_out = time > t->since ? time : t->since;
		} else {
			uint32_t serial = t->serial;
			uint64_t in = cpu_switch_in_time(a, id.cpu, &sw, id.tid, time);

			/* It may add the thread that left the CPU: the array moves. */
			t = &a->threads[serial];
			if (in >= t->since)
				time = in;
		}
		if (a->cpus && id.cpu < a->nr_cpus) {
			t->cpu = id.cpu;
			a->cpus[id.cpu].current = sw.out ? 0 : t->serial + 1;
		}
		if (sw.out)
			thread_switch_out(a, t, time, sw.preempted);
		else
			thread_switch_in(a, t, time);
		return 0;
	case PERF_RECORD_FORK:
		return account_fork(a, rec, time);
	case PERF_RECORD_COMM:
		return account_comm(a, rec, time);
	case PERF_RECORD_EXIT:
		if (wp_task_event_parse(rec, &te))
			return 0;
		t = thread_live(a, te.tid);
		if (t && !t->exiting) {
			/* The exiting task runs its exit path until the end. */
			if (t->state == STATE_UNKNOWN && !a->no_switches)
				t->state = STATE_ON;
			t->t.exited = true;
			/*
			 * -a: until its last switch-out, which the CPU's
			 * ledger counts as its time (its tid is gone by then).
			 */
			if (a->cpus && t->state == STATE_ON) {
				t->exiting = true;
				t->exit_time = time;
				return 0;
			}
			thread_close(a, t, time);
		}
		return 0;
	case WP_RECORD_THREAD:
		if (wp_thread_parse(rec, &th))
			return 0;
		t = thread_get(a, th.pid, th.tid);
		if (!t)
			return -ENOMEM;
		if (th.header.misc & WP_THREAD_OFF_CPU)
			thread_off_at_start(a, t, !!(th.header.misc & WP_THREAD_PREEMPTED));
		return 0;
	case WP_RECORD_CMDLINE:
		return account_cmdline(a, rec);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!wp_lost_parse(rec, &lost_id, &v))
			note_loss(a, v, time);
		return 0;
	}
	return 0;
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
	       w->stack != a->opts.unsampled_stack;
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

/* The sampled time of weight w in stratum (part p, bucket b) of its thread t. */
static uint64_t stratum_ns(const struct wp_account *a, const struct thread *t, int p,
			   unsigned int b, size_t w)
{
	uint64_t v = 0;

	wp_u64map_get(&a->strata, stratum_key(t->serial, p, b, a->weights[w].stack), &v);
	return v;
}

/*
 * How one thread's unsampled time of part p is to be shared among its
 * sampled weights idx[0..n): into basis, the estimated share of each (see
 * strata_note); a stratum where nothing was sampled goes in proportion to
 * the weights' whole time of that part.  Returns the sum.
 */
static uint64_t share_basis(struct wp_account *a, const struct thread *t, uint64_t unsampled,
			    int p, const size_t *idx, size_t n, uint64_t *basis)
{
	uint64_t leftover = unsampled, total = 0, sum = 0;

	memset(basis, 0, n * sizeof(*basis));
	for (size_t i = 0; i < n; i++)
		total += *part_ns(&a->weights[idx[i]], p);
	for (unsigned int b = 0; t->unsampled_by_bucket && b < EST_BUCKETS; b++) {
		uint64_t u = t->unsampled_by_bucket[p * EST_BUCKETS + b], in_b = 0;

		if (!u)
			continue;
		for (size_t i = 0; i < n; i++)
			in_b += stratum_ns(a, t, p, b, idx[i]);
		if (!in_b)
			continue;
		for (size_t i = 0; i < n; i++)
			basis[i] += scale(u, stratum_ns(a, t, p, b, idx[i]), in_b);
		leftover = leftover > u ? leftover - u : 0;
	}
	for (size_t i = 0; total && i < n; i++)
		basis[i] += scale(leftover, *part_ns(&a->weights[idx[i]], p), total);
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

	if (!basis)
		return -ENOMEM;
	for (int p = 0; p < EST_PARTS; p++) {
		uint64_t ns = *part_ns(&a->weights[u], p), cnt = *part_count(&a->weights[u], p);
		uint64_t total;
		size_t big = 0;

		if (!n || (!ns && !cnt))
			continue;
		total = share_basis(a, t, ns, p, idx, n, basis);
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
		}
		split(cnt, basis, n, total, big, out);
		for (size_t i = 0; i < n; i++)
			*part_count(&a->weights[idx[i]], p) += out[i];
		*part_ns(&a->weights[u], p) = 0;
		*part_count(&a->weights[u], p) = 0;
	}
	free(basis);
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

/* x times f >= 0, rounded down. */
static uint64_t times(uint64_t x, double f)
{
	double v = (double)x * f;

	return v <= 0 ? 0 : v >= 0x1p63 ? UINT64_MAX / 2 : (uint64_t)v;
}

/*
 * The runnable part of n unrecorded waits of t, ns in all: t's runnable
 * share of its recorded waits, but at most their mean runnable length
 * each (the recording's figures, for a thread with few).  The share
 * fits a thread's waits of one kind; the length keeps a thread that
 * sleeps for seconds, split by a storm's share, from waiting
 * hundreds of milliseconds for a CPU after each wake-up.
 */
static uint64_t runnable_part(const struct wp_account *a, const struct thread *t, uint64_t n,
			      uint64_t ns)
{
	const struct wake_tally *y = t->tally;
	bool own = y && y->seen_count && y->seen_off_ns >= a->seen_off_ns / 1000;
	uint64_t off = own ? y->seen_off_ns : a->seen_off_ns;
	uint64_t run = own ? y->seen_runnable_ns : a->seen_runnable_ns;
	uint64_t count = own ? y->seen_count : a->seen_count;
	uint64_t by_share, by_length;

	if (!off || !count)
		return 0;
	by_share = times(ns, (double)run / (double)off);
	by_length = times(n, (double)run / (double)count);
	return by_share < by_length ? by_share : by_length;
}

/*
 * With the wake-up tracepoints gated (WP_META_WAKEUPS_GATED), a wait whose
 * wake-up fell where they were off ended blocked at its switch-in: its
 * runnable part is unknown.  The gate opens and closes by time, blind to
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
	for (size_t i = 0; a->wakeups_gated && i < a->nr; i++) {
		struct thread *t = &a->threads[i];
		const struct wake_tally *y = t->tally;
		uint64_t moved;

		if (!y)
			continue;
		moved = runnable_part(a, t, y->unsplit_count, y->unsplit_ns);

		t->t.blocked_ns -= moved;
		t->t.runnable_ns += moved;
		t->t.wakeups += y->unsplit_count;
		e->waits += y->unsplit_count;
		e->waits_ns += y->unsplit_ns;
		e->runnable_ns += moved;
	}
	for (size_t i = 0; i < a->nr_gaps; i++) {
		const struct wake_gap *g = &a->gaps[i];
		struct wp_stack_weight *w = &a->weights[g->weight];
		uint64_t known = 0, count = 0, target, moved;

		moved = runnable_part(a, &a->threads[w->thread], g->unsplit_count, g->unsplit_ns);
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
	for (size_t i = 0; i < a->nr; i++) {
		free(a->threads[i].tally);
		a->threads[i].tally = NULL;
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
	for (size_t i = 0; i < a->nr; i++) {
		free(a->threads[i].unsampled_by_bucket);
		a->threads[i].unsampled_by_bucket = NULL;
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

void wp_account_finish(struct wp_account *a, uint64_t end_ns)
{
	if (a->result)
		return;		/* finished already */
	for (size_t i = 0; i < a->nr; i++)
		thread_close(a, &a->threads[i],
			     a->threads[i].exiting ? a->threads[i].exit_time : end_ns);
	for (uint32_t c = 0; c < a->nr_cpus; c++) {
		struct cpu *cpu = &a->cpus[c];

		if (cpu->state == CPU_UNKNOWN && cpu->idle_sampled) {
			cpu->state = CPU_IDLE;		/* idle throughout */
			cpu->since = a->start_ns;
		}
		if (cpu->state == CPU_IDLE)
			a->cpu_times[c].idle_ns += in_window(a, cpu->since, end_ns);
		else if (cpu->last_out && !cpu->last_next)
			/* Switched to the idle task, whose records did not come. */
			a->cpu_times[c].idle_ns += in_window(a, cpu->last_out, end_ns);
	}
	names_close(a);
	wp_u64map_release(&a->thread_index);
	distribute_on_cpu(a);
	estimate_wakeups(a);
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
	*untimed = a->switch_ins_untimed;
	*all = a->switch_ins;
}

void wp_account_unsampled(const struct wp_account *a, uint64_t *ns, uint64_t *threads)
{
	*ns = a->unsampled_ns;
	*threads = a->unsampled_threads;
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
		free(a->threads[i].unsampled_by_bucket);
		free(a->threads[i].tally);
	}
	free(a->threads);
	free(a->result);
	wp_u64map_release(&a->thread_index);
	free(a->weights);
	wp_u64map_release(&a->weight_index);
	wp_u64map_release(&a->strata);
	wp_u64map_release(&a->gap_index);
	free(a->gaps);
	free(a->wakers);
	free(a->wakes);
	wp_u64map_release(&a->waker_index);
	free(a->names);
	free(a->result_names);
	for (size_t i = 0; i < a->nr_cmdlines; i++)
		free((void *)a->cmdlines[i].args);
	free(a->cmdlines);
	free(a->cpus);
	free(a->cpu_times);
	free(a->cpu_out);
	free(a);
}
