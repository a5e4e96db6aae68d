/* SPDX-License-Identifier: GPL-2.0-or-later */
/* timeline.c: every CPU's occupant and every thread's state, as typed segments. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "layout.h"
#include "timeline.h"
#include "u64map.h"
#include "util.h"

enum run_state {
	STATE_UNKNOWN,		/* no switch record yet: decided later */
	STATE_ON,
	STATE_BLOCKED,
	STATE_RUNNABLE,		/* woken, waiting for a CPU */
	STATE_PREEMPTED,
};

/*
 * A wake-up can come before the switch-out record of the sleep it ends:
 * the kernel writes that record (after the switch-out's stack) some
 * microseconds after the thread left its run queue, and a waker on another
 * CPU may be quicker.  One this close to a voluntary switch-out is taken
 * for the sleep's, unless a later one comes.
 */
#define EARLY_WAKE_NS 1000000ULL
/*
 * How long before a switch record the sched_switch of the same switch may
 * come: microseconds as a rule (the switch-out's stack, the switch), more
 * when the machine is loaded.  An older one is some other switch's, and a
 * switch-out sample older than this is no part of the switch-out.
 */
#define SCHED_SWITCH_LAG_NS 2000000ULL
/* Longer, a record's lag is another thread's doing (preempted meanwhile). */
#define LAG_SAMPLE_MAX_NS 100000ULL
/*
 * A switch record's lag counts up to this many times the mean so far,
 * once there are enough to have one: the drain taking the CPU holds up a
 * few records a hundredfold.
 */
#define LAG_CAP 8
#define LAG_CAP_AFTER 20
/* Untimed switches are moved back by the mean lag once this many were timed. */
#define LAG_MIN_TIMED 16
#define MAX_SINKS 4

struct thread {
	struct wp_tl_thread pub;
	uint64_t since;			/* start of the current state */
	uint64_t off_start;		/* start of the current off-CPU interval */
	uint32_t pending_stack;		/* from the switch-out sample */
	uint64_t pending_time;		/* its time */
	uint32_t off_stack;		/* stack of the current off-CPU interval */
	uint32_t waker;			/* of the blocked interval ending now */
	uint32_t early_waker;		/* a wake-up seen while it still ran */
	uint64_t early_time;		/* and when */
	uint64_t waking_at;		/* blocked: its sched_waking, no sched_wakeup yet; or 0 */
	uint64_t woke_at;		/* the recorded wake-up of the current interval, or 0 */
	uint64_t sched_switch_time;	/* of its last sched_switch not yet used, or 0 */
	uint64_t exit_time;		/* of its EXIT record, while exiting */
	uint64_t counted_at;		/* the kernel's last count of it: wp_timeline_counted */
	uint32_t cpu;			/* where it runs or last ran; WP_NO_CPU: unknown */
	uint16_t seg_flags;		/* of the open segment */
	uint8_t state;			/* enum run_state */
	uint8_t initial_off;		/* what an off-CPU start counts as */
	bool woken_early;		/* waker is the early one: see thread_switch_out */
	bool sched_switch_in;		/* that sched_switch switched it in */
	bool forgotten;			/* a free slot (wp_timeline_forget): closed, unfound */
	bool start_stack_due;		/* off-CPU at a rotated file's start: its stack may follow */
	bool exiting;			/* after its EXIT, before its last switch-out */
	/* Records were lost in its current wait: it may have run unseen there. */
	bool loss_in_wait;
	/*
	 * A rotated file's THREAD record says records were lost before the
	 * file began, since its last switch: its state until its first
	 * record here is not known (start_known).
	 */
	bool start_uncertain;
	uint64_t last_sampled;		/* its last on-CPU sample: it ran then */
};

/*
 * A CPU: who the model has on it, and what its switch records said.  With
 * -a (cpu_wide), every task's switches are recorded, the idle task's too.
 */
enum cpu_state { CPU_UNKNOWN, CPU_IDLE, CPU_BUSY };

/*
 * A window of a CPU's ring where records were lost: from the last record
 * the ring delivered before the loss to the LOST record that counted it
 * (written once the ring had room again).  Every switch of a thread on
 * that CPU whose record is missing happened in such a window, so that is
 * where a lost switch is placed, and its length bounds the error.  The
 * last few of each CPU, for switches that are learned of late.
 */
#define LOSS_HISTORY 4
struct loss_window {
	uint64_t from, to;
};

struct cpu {
	uint32_t occupant;	/* the thread running there (serial + 1), or 0 */
	/*
	 * When the last switch-out on it was counted, until a switch-in uses
	 * it: the CPU's time from one to the next (the switch itself) is the
	 * incoming task's, as the scheduler counts it, so none goes missing.
	 */
	uint64_t last_out;
	/* The last time anything recorded left it: no thread started there before. */
	uint64_t free_since;
	uint32_t last_next;	/* the task that switch-out named as next */
	uint64_t switch_time;	/* of its last sched_switch not yet used, or 0 */
	uint32_t switch_prev, switch_next;	/* the tids it named */
	uint64_t idle_since;	/* of the current idle stretch (-a) */
	uint8_t state;		/* enum cpu_state (-a) */
	bool idle_sampled;	/* a sample of the idle task came from it */
	/*
	 * Not -a: a thread past its EXIT running there (serial + 1), or 0,
	 * which its last switch-out (its tid gone, perhaps) or the next
	 * recorded thread's switch-in there ends.
	 */
	uint32_t exiting;
	uint64_t seen;		/* time of the last record its ring delivered */
	struct loss_window lost[LOSS_HISTORY];	/* a ring: oldest overwritten */
	uint8_t next_lost;
};

struct wp_timeline {
	struct wp_sample_format fmt;
	struct wp_timeline_opts opts;
	struct wp_timeline_sink sinks[MAX_SINKS];
	unsigned int nr_sinks;
	uint64_t start_ns;
	bool no_switches;		/* --no-off-cpu: only samples tell */
	bool cpu_wide;			/* -a: every task's switches */
	/*
	 * Switch records per CPU (-a, or a launched command's cgroup): they
	 * go on after a task's EXIT, while it tears its memory down.
	 */
	bool switches_after_exit;
	bool wakeups, enqueues, wakeups_gated;
	struct thread *threads;
	size_t nr, cap;
	/* Slots of forgotten threads, for new ones (wp_timeline_forget). */
	uint32_t *free_slots;
	size_t nr_free, cap_free;
	struct wp_u64map thread_index;	/* tid -> its latest thread */
	struct cpu *cpus;
	uint32_t nr_cpus;
	struct wp_waker *wakers;
	size_t nr_wakers, cap_wakers;
	struct wp_u64map waker_index;	/* kind, tid and stack -> index */
	bool saw_sched_switch;
	/*
	 * The last switch-out without its sched_switch that followed another
	 * without: the tracepoints were closed then (the kernel takes
	 * sched_switch in the switching thread's context, so only a gate or
	 * a loss can miss one).
	 */
	uint64_t last_untimed_out;
	bool prev_out_untimed;
	/* How late the timed switch records came, out [0] and in [1]. */
	uint64_t lag_sum[2], lag_n[2];
	uint64_t window_start, window_end;
	struct wp_switch_timing timing;
	uint64_t lost;
	/* The end of the windows of lost records counted so far (their union). */
	uint64_t lost_until;
	bool finished;
	int err;
};

static bool in_window(const struct wp_timeline *tl, uint64_t time)
{
	return (!tl->window_start || time >= tl->window_start) &&
	       (!tl->window_end || time < tl->window_end);
}

static struct thread *thread_of(struct wp_timeline *tl, uint32_t serial)
{
	return &tl->threads[serial];
}

/*
 * The latest thread with this tid, or NULL.  It may have exited (closed):
 * the kernel still delivers a switch-out and samples of a task after its
 * EXIT record, and those belong to it, not to a new thread.
 */
static struct thread *thread_find(struct wp_timeline *tl, uint32_t tid)
{
	uint64_t i;

	return wp_u64map_get(&tl->thread_index, tid, &i) ? &tl->threads[i] : NULL;
}

static struct thread *thread_live(struct wp_timeline *tl, uint32_t tid)
{
	struct thread *t = thread_find(tl, tid);

	return t && !t->pub.closed ? t : NULL;
}

/*
 * A new thread.  Threads live in one array that grows: pointers to them
 * are good only until the next thread_add (callers hold serials across it).
 */
static struct thread *thread_add(struct wp_timeline *tl, uint32_t pid, uint32_t tid,
				 uint64_t start, enum run_state initial)
{
	struct thread *t;
	size_t slot = tl->nr;

	/* A forgotten thread's slot first: the array stays as large as the most alive. */
	if (tl->nr_free) {
		slot = tl->free_slots[--tl->nr_free];
	} else {
		if (tl->nr >= UINT32_MAX - 1)
			return NULL;	/* serials are 32 bits */
		if (WP_GROW(tl->threads, tl->cap, tl->nr + 1))
			return NULL;
	}
	if (tl->no_switches)
		initial = STATE_UNKNOWN;
	t = &tl->threads[slot];
	memset(t, 0, sizeof(*t));
	t->pub.serial = (uint32_t)slot;
	t->pub.pid = pid;
	t->pub.tid = tid;
	t->pub.start_ns = start;
	t->pub.approximate = tl->lost != 0;
	t->state = initial;
	t->initial_off = STATE_BLOCKED;
	t->since = t->off_start = start;
	t->waker = t->early_waker = WP_NO_WAKER;
	t->cpu = WP_NO_CPU;
	t->pending_stack = WP_NO_STACK;
	t->off_stack = tl->opts.unknown_stack;
	/* A reused tid now means this thread. */
	if (wp_u64map_put(&tl->thread_index, tid, slot)) {
		/* Not made: its slot stays free. */
		if (slot < tl->nr) {
			t->forgotten = t->pub.closed = true;
			tl->nr_free++;
		}
		return NULL;
	}
	if (slot == tl->nr)
		tl->nr++;
	return t;
}

/*
 * The thread a record of tid belongs to; first seen, it existed when
 * recording began.  May return an exited thread: callers ignore records
 * that come after its exit.
 */
static struct thread *thread_get(struct wp_timeline *tl, uint32_t pid, uint32_t tid)
{
	struct thread *t = thread_find(tl, tid);

	if (!t)
		t = thread_add(tl, pid, tid, tl->start_ns, STATE_UNKNOWN);
	return t;
}

static void emit(struct wp_timeline *tl, const struct wp_segment *s)
{
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].segment)
			tl->sinks[i].segment(tl->sinks[i].arg, s);
}

static const uint8_t seg_kind_of[] = {
	[STATE_UNKNOWN] = WP_SEG_UNKNOWN,
	[STATE_ON] = WP_SEG_RUNNING,
	[STATE_BLOCKED] = WP_SEG_BLOCKED,
	[STATE_RUNNABLE] = WP_SEG_RUNNABLE,
	[STATE_PREEMPTED] = WP_SEG_PREEMPTED,
};

/*
 * End the thread's current state at now, handing the sinks its segment.
 * off_end: the off-CPU interval ends too.  An unknown state (no switch
 * yet) is decided later, and emits nothing, unless the recording has no
 * switches at all.
 */
static void state_end(struct wp_timeline *tl, struct thread *t, uint64_t now, bool off_end)
{
	struct wp_segment s;

	if (now < t->since)
		now = t->since;	/* tiny clock disorder between CPUs */
	if (t->state == STATE_UNKNOWN && !tl->no_switches)
		return;
	s = (struct wp_segment){
		.thread = t->pub.serial, .kind = seg_kind_of[t->state], .flags = t->seg_flags,
		.cpu = t->cpu, .start_ns = t->since, .end_ns = now,
		.off_start_ns = t->off_start, .stack = WP_NO_STACK, .waker = WP_NO_WAKER,
	};
	if (t->state != STATE_ON && t->state != STATE_UNKNOWN) {
		s.stack = t->off_stack;
		if (off_end)
			s.flags |= WP_SEG_OFF_END;
	}
	if (t->state == STATE_BLOCKED)
		s.waker = t->waker;
	if (t->state == STATE_RUNNABLE && (t->seg_flags & WP_SEG_WOKEN))
		s.woken_ns = t->since;
	if (t->pub.approximate)
		s.flags |= WP_SEG_APPROXIMATE;
	emit(tl, &s);
	t->since = now;
	t->seg_flags = 0;
}

/*
 * Whether t's current wait may have had its wake-up where the tracepoints
 * were off: some CPU's were, since it began.  (A wait without a wake-up
 * where they were all on is what it was without a gate: blocked.)
 */
static bool gated_wait(const struct wp_timeline *tl, const struct thread *t)
{
	return tl->wakeups_gated && t->state == STATE_BLOCKED &&
	       tl->last_untimed_out >= t->off_start;
}

/* The blocked interval ends at time, ended by t->waker: runnable from there. */
static void wakee_runnable(struct wp_timeline *tl, struct thread *t, uint64_t time)
{
	bool was_blocked = t->state == STATE_BLOCKED;

	/* Gated: a wake-up on a CPU whose tracepoints were off names no waker. */
	if (gated_wait(tl, t) && t->waker == WP_NO_WAKER)
		t->seg_flags |= WP_SEG_WAKER_UNRECORDED;
	state_end(tl, t, time, false);
	t->woke_at = was_blocked && tl->wakeups ? (time ? time : 1) : 0;
	t->waker = WP_NO_WAKER;
	t->woken_early = false;
	t->waking_at = 0;
	t->state = STATE_RUNNABLE;
	t->seg_flags = WP_SEG_WOKEN;
}

/*
 * The time of a switch of t (in or out) whose record came at time: that of
 * its sched_switch when there is one, else the record's (or, gated, the
 * record's less the mean lag of the timed ones).  *late: it is the
 * record's, after the switch.
 */
static uint64_t switch_time(struct wp_timeline *tl, struct thread *t, uint64_t time, bool in,
			    bool *late)
{
	uint64_t at = t->sched_switch_time;
	bool timed;

	t->sched_switch_time = 0;
	timed = at && t->sched_switch_in == in && at <= time && time - at <= SCHED_SWITCH_LAG_NS &&
		at >= t->since;
	*late = !timed;
	/*
	 * Closed, the tracepoints miss every switch-out, on every CPU: two
	 * in a row without sched_switch say so, where a lone one is a record
	 * lost or late.
	 */
	if (!in && tl->saw_sched_switch) {
		if (!timed && tl->prev_out_untimed)
			tl->last_untimed_out = time;
		tl->prev_out_untimed = !timed;
	}
	if (timed && time - at <= LAG_SAMPLE_MAX_NS) {
		uint64_t lag = time - at;

		if (tl->lag_n[in] >= LAG_CAP_AFTER && lag > LAG_CAP * (tl->lag_sum[in] / tl->lag_n[in]))
			lag = LAG_CAP * (tl->lag_sum[in] / tl->lag_n[in]);
		tl->lag_sum[in] += lag;
		tl->lag_n[in]++;
	}
	if (in && tl->saw_sched_switch && in_window(tl, time)) {
		tl->timing.switch_ins++;
		tl->timing.untimed += !timed;
	}
	/*
	 * Gated, a switch whose CPU's tracepoints were off is as late as the
	 * others were on average.  Both ends of a slice move, so its length,
	 * the thread's on-CPU time, loses the difference of the two lags
	 * (the switch-in's record comes after the whole switch), which in a
	 * storm the records alone put 20-40% short.
	 */
	if (!timed && tl->wakeups_gated && tl->lag_n[in] >= LAG_MIN_TIMED) {
		uint64_t lag = tl->lag_sum[in] / tl->lag_n[in];

		if (in && in_window(tl, time))
			tl->timing.lag_corrected++;
		return time - t->since > lag ? time - lag : t->since;
	}
	return timed ? at : time;
}

/* The CPU of a record, or NULL when the recording has no such CPU. */
static struct cpu *cpu_of(struct wp_timeline *tl, uint32_t cpu)
{
	return cpu < tl->nr_cpus ? &tl->cpus[cpu] : NULL;
}

static void thread_switch_out(struct wp_timeline *tl, struct thread *t, uint64_t now,
			      bool preempted);

/* [from, to), or its part in t's window, t may have spent otherwise than its records say. */
static void add_uncertain(struct thread *t, uint64_t from, uint64_t to)
{
	if (from < t->pub.start_ns)
		from = t->pub.start_ns;
	if (to > from)
		t->pub.uncertain_ns += to - from;
}

/*
 * When, in (after, before), thread t's switch on CPU cpu took place, its
 * record lost: in that CPU's windows of lost records inside the span.  A
 * window may hide many switches of t, and only the first switch-out after
 * after, or the last switch-in before before, is known to have been:
 * out, t leaves at the start of the first window; in, it comes at the
 * end of the last.  Either way it is counted off-CPU through the windows,
 * short by what it ran in them, which anchoring to the kernel's figures
 * gives back (account.c); the windows count already in t's uncertainty
 * (note_loss), and what lies between several of them is added.  With no
 * window there, the records contradicted each other where no loss was
 * counted: the switch is placed at before (the evidence), and the whole
 * span is uncertain.
 */
static uint64_t lost_switch_at(struct wp_timeline *tl, struct thread *t, uint32_t cpu,
			       uint64_t after, uint64_t before, bool in, bool contradiction)
{
	const struct cpu *c = cpu_of(tl, cpu);
	const struct loss_window *first = NULL, *last = NULL;

	if (before <= after)
		return before;
	for (unsigned int i = 0; c && i < LOSS_HISTORY; i++) {
		const struct loss_window *w = &c->lost[i];

		if (w->to <= after || w->from >= before || w->to <= w->from)
			continue;
		if (!first || w->from < first->from)
			first = w;
		if (!last || w->from > last->from)
			last = w;
	}
	if (!first) {
		if (contradiction)
			add_uncertain(t, after, before);
		return before;
	}
	if (last != first)
		add_uncertain(t, first->to, last->from);
	if (in)
		return last->to < before ? last->to : before;
	return first->from > after ? first->from : after;
}

/*
 * The first record of t in a file whose start left its state unknown
 * (WP_THREAD_UNCERTAIN): whatever is made of the time before, none of it
 * is certain.
 */
static void start_known(struct thread *t, uint64_t now)
{
	if (!t->start_uncertain)
		return;
	t->start_uncertain = false;
	add_uncertain(t, t->pub.start_ns, now);
}

/* When thread t, running on its CPU, was last known to run there. */
static uint64_t last_ran(const struct thread *t)
{
	return t->last_sampled > t->since ? t->last_sampled : t->since;
}

/*
 * Thread t leaves CPU c at now, its switch-out not recorded (lost): the
 * next occupant, or a sample of another thread, says it did.  It is off
 * since, the reason unknown: counted preempted, and approximate.
 */
static void occupant_lost(struct wp_timeline *tl, struct thread *t, uint64_t now)
{
	t->pub.approximate = true;
	t->pending_stack = WP_NO_STACK;
	thread_switch_out(tl, t, now, true);
}

/*
 * CPU c gets a new occupant at now: whoever the model had there left it
 * without a recorded switch-out.  (Not self, and not one that left.)
 */
static void cpu_take(struct wp_timeline *tl, struct cpu *c, uint32_t self, uint64_t now)
{
	struct thread *o;

	if (!c->occupant || c->occupant == self + 1)
		return;
	o = thread_of(tl, c->occupant - 1);
	c->occupant = 0;
	if (o->pub.closed || o->state != STATE_ON || o->cpu != (uint32_t)(c - tl->cpus))
		return;
	if (now > o->since)
		now = lost_switch_at(tl, o, o->cpu, last_ran(o), now, false, true);
	occupant_lost(tl, o, now > o->since ? now : o->since);
}

/*
 * t, in no known state yet, turns out to have been running until now on
 * CPU c: not before the last thread recorded there left it (one CPU runs
 * one task at a time).  Before that it waited for the CPU, as far as can
 * be told: preempted, a guess, so marked approximate.
 */
/* t, in no known state since its window began, waited for a CPU until until: a guess. */
static void guessed_waiting(struct wp_timeline *tl, struct thread *t, uint64_t until)
{
	t->state = STATE_PREEMPTED;
	t->off_start = t->since;
	t->off_stack = tl->opts.unknown_stack;
	t->seg_flags = WP_SEG_APPROXIMATE;
	state_end(tl, t, until, true);
}

static void waited_for_cpu(struct wp_timeline *tl, struct thread *t, const struct cpu *c,
			   uint64_t now)
{
	if (!c || c->free_since <= t->since || c->free_since > now)
		return;
	guessed_waiting(tl, t, c->free_since);
}

/*
 * Running thread t turns up on another CPU at now (a sample, or its
 * switch-out, from there): its switch-out on the first and its switch-in
 * on this one were lost.  It ran on the first until this one was free of
 * the others the model had on it (one CPU, one thread), then here.
 */
static void moved_cpu(struct wp_timeline *tl, struct thread *t, uint32_t cpu, uint64_t now)
{
	struct cpu *c = cpu_of(tl, cpu), *d = cpu_of(tl, t->cpu);
	uint32_t serial = t->pub.serial;
	uint64_t x = t->since;

	if (c && c->free_since > x)
		x = c->free_since;
	if (x > now)
		x = now;
	t->pub.approximate = true;
	/* Where it left the first and came to this one is not known. */
	add_uncertain(t, last_ran(t), now);
	state_end(tl, t, x, false);
	if (d && d->occupant == serial + 1) {
		d->occupant = 0;
		if (x > d->free_since)
			d->free_since = x;
	}
	t = thread_of(tl, serial);
	t->cpu = cpu;
	if (c) {
		cpu_take(tl, c, serial, x);
		c->occupant = serial + 1;
	}
}

static void thread_switch_out(struct wp_timeline *tl, struct thread *t, uint64_t now,
			      bool preempted)
{
	struct cpu *c = cpu_of(tl, t->cpu);

	start_known(t, now);
	t->start_stack_due = false;
	if (t->state == STATE_UNKNOWN) {
		/*
		 * It was running since its window's start, or since the last
		 * thread left its CPU, whichever is later: one CPU runs one
		 * task at a time.  Or, where records were lost on its CPU
		 * since, from the end of that window (its switch-in lost).
		 */
		uint64_t in = lost_switch_at(tl, t, t->cpu, t->since, now, true, false);

		waited_for_cpu(tl, t, c, now);
		t = thread_of(tl, t->pub.serial);
		if (in < now && in > t->since) {
			if (t->state == STATE_UNKNOWN)
				guessed_waiting(tl, t, in);
			else
				state_end(tl, t, in, true);
			t = thread_of(tl, t->pub.serial);
			t->state = STATE_ON;
			t->seg_flags = WP_SEG_START_LATE;
		}
		t->state = STATE_ON;
	} else if (t->state != STATE_ON) {
		/* Its switch-in here was lost: it ran from then. */
		uint64_t in = lost_switch_at(tl, t, t->cpu, t->since, now, true, true);

		t->pub.approximate = true;
		if (in < now) {
			state_end(tl, t, in, true);
			t = thread_of(tl, t->pub.serial);
			t->state = STATE_ON;
			/* It may have run earlier in the window: anchoring may move time there. */
			t->seg_flags = WP_SEG_START_LATE;
			if (c) {
				cpu_take(tl, c, t->pub.serial, in);
				t = thread_of(tl, t->pub.serial);
			}
		}
	}
	state_end(tl, t, now, false);
	if (c) {
		if (c->occupant == t->pub.serial + 1)
			c->occupant = 0;
		if (now > c->free_since)
			c->free_since = now;
	}
	t->waker = WP_NO_WAKER;	/* a wake-up of the interval before, if any */
	t->woken_early = false;
	/* (With sched_switch, now may be before the switch-out record's wake-up.) */
	if (!preempted && t->early_waker != WP_NO_WAKER &&
	    (t->early_time >= now || now - t->early_time <= EARLY_WAKE_NS)) {
		t->waker = t->early_waker;
		t->woken_early = true;
	}
	t->early_waker = WP_NO_WAKER;
	t->woke_at = 0;
	t->waking_at = 0;
	t->state = preempted ? STATE_PREEMPTED : STATE_BLOCKED;
	t->off_start = now;
	t->seg_flags = WP_SEG_SWITCH_OUT;
	/*
	 * A stack sampled long before is no part of this switch (lost
	 * records).  now may be the sched_switch's, a little before it.
	 */
	if (t->pending_stack != WP_NO_STACK &&
	    (t->pending_time <= now ? now - t->pending_time : t->pending_time - now) <=
	    SCHED_SWITCH_LAG_NS)
		t->off_stack = t->pending_stack;
	else if (tl->opts.switch_stacks_sampled)
		t->off_stack = tl->opts.unsampled_switch_stack;
	else
		t->off_stack = tl->opts.unknown_stack;
	t->pending_stack = WP_NO_STACK;
}

/*
 * t switches in at now, on cpu (WP_NO_CPU: unknown); late: now is its
 * switch record's time, after the switch; from_idle: the record names
 * the idle task as the one before it.
 */
static void thread_switch_in(struct wp_timeline *tl, struct thread *t, uint64_t now,
			     uint32_t cpu, bool late, bool from_idle)
{
	struct cpu *c = cpu_of(tl, cpu);
	uint16_t flags = 0;

	/*
	 * Records were lost while it waited: it may have run then unseen,
	 * so the wait's end is no better than a late switch-in's, and
	 * anchoring may move time into it.
	 */
	if (t->loss_in_wait)
		late = true;
	t->loss_in_wait = false;
	start_known(t, now);
	t->start_stack_due = false;
	if (t->state == STATE_UNKNOWN) {
		t->state = t->initial_off;	/* off-CPU since the start */
		t->seg_flags = 0;
	} else if (t->state == STATE_ON) {
		/* Its switch-out was lost: it left its CPU then, the reason unknown. */
		uint64_t out = lost_switch_at(tl, t, t->cpu, last_ran(t), now, false, true);

		t->pub.approximate = true;
		if (out < now && out > t->since)
			occupant_lost(tl, t, out);
		/* It may have run again in the window: anchoring may move time there. */
		late = true;
	}
	/* No wake-up since the switch-out: the early one ended the sleep at once. */
	if (t->state == STATE_BLOCKED && t->woken_early)
		wakee_runnable(tl, t, t->since);
	/*
	 * Its sched_waking came but no sched_wakeup: runnable from the
	 * waking, microseconds before the enqueue.  (This VM's kernel drops
	 * a few of the tracepoints' hits, for perf as for wallprof.)
	 */
	else if (t->state == STATE_BLOCKED && t->waking_at)
		wakee_runnable(tl, t, t->waking_at);
	/* Gated: a wait whose wake-up fell where the tracepoints were off. */
	if (gated_wait(tl, t))
		t->seg_flags |= WP_SEG_WAKEUP_UNRECORDED |
				(t->waker == WP_NO_WAKER ? WP_SEG_WAKER_UNRECORDED : 0);
	/*
	 * A sleep that began at a switch-out and ends at a switch-in, no
	 * wake-up recorded while the tracepoints were on: the kernel reported
	 * none (dropped, as above).  Its runnable part is unknown: estimated
	 * as the gate's are (account.c, estimate_wakeups), and counted.  Not
	 * one switched in from the idle task: the wake-up found the CPU idle,
	 * so the thread waited for the switch alone, and this VM's kernel
	 * reports no tracepoint hit of an idle second CPU (wallprof-report(1)),
	 * so every such wait would be counted.
	 */
	else if (tl->wakeups && t->state == STATE_BLOCKED && (t->seg_flags & WP_SEG_SWITCH_OUT) &&
		 !from_idle)
		t->seg_flags |= WP_SEG_WAKEUP_UNRECORDED | WP_SEG_WAKEUP_DROPPED |
				(t->waker == WP_NO_WAKER ? WP_SEG_WAKER_UNRECORDED : 0);
	/*
	 * A wait whose wake-up was recorded, with the tracepoints on all
	 * along: the others are split by such.  One that began before they
	 * were opened again is no fair sample (opening them held it up).
	 */
	if (t->state == STATE_RUNNABLE && t->woke_at && t->woke_at >= t->off_start &&
	    now >= t->woke_at && tl->last_untimed_out < t->off_start)
		t->seg_flags |= WP_SEG_FAIR_SAMPLE;
	t->woke_at = 0;
	if (t->state != STATE_ON)
		state_end(tl, t, now, true);
	else
		state_end(tl, t, now, false);
	t->waker = WP_NO_WAKER;
	t->woken_early = false;
	t->early_waker = WP_NO_WAKER;
	t->state = STATE_ON;
	if (late)
		flags |= WP_SEG_START_LATE;
	t->seg_flags = flags;
	if (c) {
		cpu_take(tl, c, t->pub.serial, now);
		c->occupant = t->pub.serial + 1;
	}
	if (cpu != WP_NO_CPU)
		t->cpu = cpu;
}

/*
 * A rotated file's THREAD record says the thread was off-CPU when the
 * file began, since a switch-out in an earlier file: it is blocked (or
 * preempted) from its start, not of a kind decided later, and the
 * switch-out sample that may follow, dated then, is the wait's stack.
 */
static void thread_off_at_start(struct wp_timeline *tl, struct thread *t, bool preempted)
{
	if (t->state != STATE_UNKNOWN || t->pub.closed || tl->no_switches)
		return;
	t->state = t->initial_off = preempted ? STATE_PREEMPTED : STATE_BLOCKED;
	t->off_start = t->since;
	t->off_stack = tl->opts.start_stack ? tl->opts.start_stack : tl->opts.unknown_stack;
	t->start_stack_due = true;
	t->seg_flags = WP_SEG_AT_FILE_START;
}

static void thread_close(struct wp_timeline *tl, struct thread *t, uint64_t end)
{
	struct cpu *c = cpu_of(tl, t->cpu);

	if (t->pub.closed)
		return;
	if (end < t->pub.start_ns)
		end = t->pub.start_ns;
	start_known(t, end);
	if (end < t->since)
		end = t->since;		/* an exit dated before its last switch-in */
	if (t->state == STATE_UNKNOWN && !tl->no_switches) {
		/* No switch at all: running throughout if it was ever sampled. */
		if (t->pub.sampled)
			waited_for_cpu(tl, t, c, end);
		t->state = t->pub.sampled ? STATE_ON : t->initial_off;
	}
	state_end(tl, t, end, true);
	if (c && c->occupant == t->pub.serial + 1) {
		c->occupant = 0;
		if (end > c->free_since)
			c->free_since = end;
	}
	t->pub.end_ns = end;
	t->pub.closed = true;
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].closed)
			tl->sinks[i].closed(tl->sinks[i].arg, t->pub.serial);
}

int wp_timeline_new(const struct wp_meta *meta, const struct wp_timeline_opts *opts,
		    struct wp_timeline **out)
{
	struct wp_timeline *tl = calloc(1, sizeof(*tl));

	*out = NULL;
	if (!tl)
		return -ENOMEM;
	wp_sample_format_init(&tl->fmt, meta->sample_type, meta->regs_mask);
	tl->start_ns = meta->start_clock_ns;
	tl->no_switches = !(meta->flags & WP_META_SWITCHES);
	tl->cpu_wide = (meta->flags & WP_META_CPU_WIDE) && !tl->no_switches;
	tl->wakeups = meta->flags & WP_META_WAKEUPS;
	tl->wakeups_gated = tl->wakeups && (meta->flags & WP_META_WAKEUPS_GATED);
	for (uint32_t e = 0; tl->wakeups && e < meta->nr_events; e++)
		tl->enqueues |= meta->events[e].role == WP_EVENT_ENQUEUED;
	if (opts)
		tl->opts = *opts;
	if (meta->nr_cpus && meta->nr_cpus <= 65536 && !tl->no_switches) {
		tl->cpus = calloc(meta->nr_cpus, sizeof(*tl->cpus));
		if (!tl->cpus) {
			free(tl);
			return -ENOMEM;
		}
		tl->nr_cpus = meta->nr_cpus;
	}
	*out = tl;
	return 0;
}

int wp_timeline_add_sink(struct wp_timeline *tl, const struct wp_timeline_sink *sink)
{
	if (tl->nr_sinks == MAX_SINKS)
		return -ENOSPC;
	tl->sinks[tl->nr_sinks++] = *sink;
	return 0;
}

void wp_timeline_set_window(struct wp_timeline *tl, uint64_t start, uint64_t end)
{
	tl->window_start = start;
	tl->window_end = end;
}

int wp_timeline_sample(struct wp_timeline *tl, uint32_t pid, uint32_t tid, uint32_t cpu,
		       uint64_t time, bool switch_out, uint32_t stack)
{
	struct cpu *c = cpu_of(tl, cpu);
	struct thread *t;

	if (tl->err)
		return tl->err;
	if (c && time > c->seen)
		c->seen = time;
	/* The idle task: its CPU is idle, whoever the model had there left it. */
	if (!tid) {
		if (c && !switch_out) {
			c->idle_sampled = true;
			if (tl->cpu_wide)
				cpu_take(tl, c, UINT32_MAX - 1, time);
		}
		return tl->err;
	}
	/* A task already unhashed at exit (pid -1). */
	if (tid == UINT32_MAX)
		return 0;
	t = thread_get(tl, pid, tid);
	if (!t)
		return tl->err = -ENOMEM;
	if (t->pub.closed)
		return 0;	/* its exit path, after the EXIT record */
	t->pub.sampled = true;
	if (!switch_out)
		start_known(t, time);
	if (switch_out) {
		/* The stack of a wait that began before the file (thread_off_at_start). */
		if (t->start_stack_due && time == t->off_start) {
			t->start_stack_due = false;
			t->off_stack = stack;
			return 0;
		}
		t->pending_stack = stack;
		t->pending_time = time;
		for (unsigned int i = 0; i < tl->nr_sinks; i++)
			if (tl->sinks[i].switch_sample)
				tl->sinks[i].switch_sample(tl->sinks[i].arg, t->pub.serial, time);
		return 0;
	}
	if (!tl->no_switches) {
		uint32_t serial = t->pub.serial;

		/* Sampled on a CPU while we thought it off: a lost switch-in. */
		if (t->state == STATE_BLOCKED || t->state == STATE_RUNNABLE ||
		    t->state == STATE_PREEMPTED) {
			t->pub.approximate = true;
			thread_switch_in(tl, t, lost_switch_at(tl, t, cpu, t->since, time, true, true), cpu,
					 true, false);
		} else if (c && t->state == STATE_ON && t->cpu != WP_NO_CPU && t->cpu != cpu) {
			moved_cpu(tl, t, cpu, time);
		} else if (c && c->occupant != serial + 1 && (tl->cpu_wide || t->state == STATE_ON)) {
			/* Another thread was the CPU's: it left unrecorded. */
			cpu_take(tl, c, serial, time);
			if (t->state == STATE_ON) {
				c->occupant = serial + 1;
				t->cpu = cpu;
			}
		}
		t = thread_of(tl, serial);
		if (t->state == STATE_UNKNOWN && t->cpu == WP_NO_CPU)
			t->cpu = cpu;	/* where it ran all along, until it switches */
		if (t->state == STATE_ON && t->cpu == cpu)
			t->last_sampled = time;
	}
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].sample)
			tl->sinks[i].sample(tl->sinks[i].arg, t->pub.serial, time, stack, cpu);
	return tl->err;
}

/* The index of waker w, added on first use; WP_NO_WAKER when out of memory. */
static uint32_t waker_index(struct wp_timeline *tl, const struct wp_waker *w)
{
	uint64_t key = ((uint64_t)w->kind << 62) ^ ((uint64_t)w->tid << 30) ^ w->stack;
	struct wp_waker *nw;
	struct thread *t;
	uint64_t i;

	if (wp_u64map_get(&tl->waker_index, key, &i) && tl->wakers[i].tid == w->tid &&
	    tl->wakers[i].stack == w->stack && tl->wakers[i].kind == w->kind)
		return (uint32_t)i;
	nw = wp_grow(tl->wakers, &tl->cap_wakers, tl->nr_wakers + 1, sizeof(*tl->wakers));
	if (!nw || tl->nr_wakers >= WP_NO_WAKER)
		return WP_NO_WAKER;
	tl->wakers = nw;
	nw = &tl->wakers[tl->nr_wakers];
	*nw = *w;
	memset(nw->comm, 0, sizeof(nw->comm));
	/* Its name as it is now: a thread of the recording. */
	t = w->kind == WP_WAKER_THREAD ? thread_find(tl, w->tid) : NULL;
	if (t)
		memcpy(nw->comm, t->pub.comm, sizeof(nw->comm));
	if (wp_u64map_put(&tl->waker_index, key, tl->nr_wakers))
		return WP_NO_WAKER;
	return (uint32_t)tl->nr_wakers++;
}

/* The thread of the recording that a wake-up concerns, or NULL. */
static struct thread *wakee_find(struct wp_timeline *tl, uint32_t wakee)
{
	struct thread *t = thread_live(tl, wakee);

	if (!t)
		return NULL;	/* not one of the recording's threads */
	/* Woken before its first switch record: blocked since the start. */
	if (t->state == STATE_UNKNOWN && !t->pub.sampled && !tl->no_switches) {
		t->state = STATE_BLOCKED;
		t->off_start = t->since;
		t->seg_flags = 0;
	}
	return t;
}

int wp_timeline_wakeup(struct wp_timeline *tl, uint32_t wakee, uint64_t time,
		       const struct wp_waker *waker)
{
	struct thread *t;
	uint32_t w;

	if (tl->err)
		return tl->err;
	t = wakee_find(tl, wakee);
	if (!t || (t->state != STATE_BLOCKED && t->state != STATE_ON))
		return 0;	/* woken already, or preempted: not a sleep */
	w = waker_index(tl, waker);
	if (w == WP_NO_WAKER)
		return tl->err = -ENOMEM;
	if (t->state == STATE_ON) {
		t->early_waker = w;	/* its switch-out record may still come */
		t->early_time = time;
		return 0;
	}
	t->waker = w;
	t->woken_early = false;
	t->waking_at = time ? time : 1;
	/* With sched_wakeup recorded, its time ends the blocked interval. */
	if (!tl->enqueues)
		wakee_runnable(tl, t, time);
	return 0;
}

int wp_timeline_counted(struct wp_timeline *tl, uint32_t tid, uint64_t time)
{
	struct thread *t;

	if (tl->err)
		return tl->err;
	t = tid ? thread_live(tl, tid) : NULL;
	if (t && t->state == STATE_ON && time >= t->since && time > t->counted_at)
		t->counted_at = time;
	return 0;
}

int wp_timeline_enqueued(struct wp_timeline *tl, uint32_t wakee, uint64_t time)
{
	struct thread *t;

	if (tl->err)
		return tl->err;
	t = wakee_find(tl, wakee);
	/* After an early wake-up too: its enqueue may follow the switch-out. */
	if (t && t->state == STATE_BLOCKED)
		wakee_runnable(tl, t, time);
	return 0;
}

int wp_timeline_sched_switch(struct wp_timeline *tl, uint32_t prev, uint32_t next,
			     uint64_t time, uint32_t cpu)
{
	struct cpu *c = cpu_of(tl, cpu);
	struct thread *t;

	if (tl->err)
		return tl->err;
	if (c && time > c->seen)
		c->seen = time;
	tl->saw_sched_switch = true;
	t = prev ? thread_live(tl, prev) : NULL;
	if (t) {
		t->sched_switch_time = time;
		t->sched_switch_in = false;
	}
	t = next ? thread_live(tl, next) : NULL;
	if (t) {
		t->sched_switch_time = time;
		t->sched_switch_in = true;
	}
	/* The switch records of the idle task, and of exited tasks, take it likewise. */
	if (c) {
		c->switch_time = time;
		c->switch_prev = prev;
		c->switch_next = next;
	}
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

static void cpu_span(struct wp_timeline *tl, uint32_t cpu, enum wp_cpu_span_kind kind,
		     uint64_t start, uint64_t end)
{
	if (end <= start)
		return;
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].cpu_span)
			tl->sinks[i].cpu_span(tl->sinks[i].arg, cpu, kind, start, end);
}

/*
 * The last switch-out of an exiting thread t on cpu (NULL: the one on
 * cpu, its tid already gone): it ran its exit path until now.
 */
static void exit_switch_out(struct wp_timeline *tl, uint32_t cpu, struct thread *t,
			    uint32_t next, uint64_t time)
{
	struct cpu *c = cpu_of(tl, cpu);

	if (!t && c && c->occupant)
		t = thread_of(tl, c->occupant - 1);
	if (!t || !t->exiting || t->pub.closed)
		return;
	if (c)
		time = cpu_sched_switch_time(c, UINT32_MAX, next, time);
	/* It ran to its EXIT at least (that sched_switch may be an older one). */
	if (time < t->exit_time)
		time = t->exit_time;
	thread_close(tl, t, time);
	if (c) {
		c->last_out = t->pub.end_ns;
		c->occupant = 0;
	}
}

/*
 * -a: a switch-in on cpu at time (sw, of task self) starts where the
 * switch-out before it ended.  When both name as the other a task that
 * wrote no switch record of its own (the idle task now and then, and some
 * others), that task ran in between: its time is counted as theirs say.
 * When they name different ones, several ran unseen, in shares no record
 * tells: that time is the CPU's unseen time.
 */
static uint64_t cpu_switch_in_time(struct wp_timeline *tl, uint32_t cpu, const struct wp_switch *sw,
				   uint32_t self, uint64_t time)
{
	struct cpu *c = &tl->cpus[cpu];
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
	if (c->last_next == self || c->last_next != other || other == UINT32_MAX) {
		cpu_span(tl, cpu, WP_CPU_UNSEEN, out, time);	/* records lost, or unseen tasks */
		return time;
	}
	if (!other) {
		cpu_span(tl, cpu, WP_CPU_IDLE, out, time);
		return time;
	}
	t = thread_get(tl, sw->next_prev_pid, other);
	if (!t) {
		tl->err = -ENOMEM;
	} else if (!t->pub.closed && t->state != STATE_ON && t->since <= out) {
		uint32_t serial = t->pub.serial;

		thread_switch_in(tl, t, out, cpu, false, false);
		thread_switch_out(tl, thread_of(tl, serial), time, false);
	} else {
		cpu_span(tl, cpu, WP_CPU_UNSEEN, out, time);
	}
	return time;
}

/* -a: the idle task of cpu switched out (the CPU got busy) or in, at time. */
static void cpu_idle_switch(struct wp_timeline *tl, uint32_t cpu, const struct wp_switch *sw,
			    uint64_t time)
{
	struct cpu *c = &tl->cpus[cpu];
	bool out = sw->out;

	time = cpu_sched_switch_time(c, out ? 0 : UINT32_MAX, out ? UINT32_MAX : 0, time);
	if (!out) {
		time = cpu_switch_in_time(tl, cpu, sw, 0, time);
		cpu_take(tl, c, UINT32_MAX - 1, time);
		c->state = CPU_IDLE;
		c->idle_since = time;
		return;
	}
	c->last_out = time;
	if (time > c->free_since)
		c->free_since = time;
	if (c->state == CPU_UNKNOWN)
		c->idle_since = tl->start_ns;		/* idle since the start */
	if (c->state != CPU_BUSY)
		cpu_span(tl, cpu, WP_CPU_IDLE, c->idle_since, time);
	c->state = CPU_BUSY;
}

/* A switch record of a thread (not the idle task). */
static int switch_record(struct wp_timeline *tl, const struct wp_switch *sw,
			 const struct wp_sample_id *id, uint64_t time)
{
	struct cpu *c = cpu_of(tl, id->cpu);
	struct thread *t;
	uint32_t serial;
	bool late;

	if (c && time > c->seen)
		c->seen = time;
	if (sw->cpu_wide)
		tl->switches_after_exit = true;
	if (tl->cpu_wide && c) {
		if (sw->out)
			c->last_next = sw->next_prev_tid;
		if (!id->tid) {
			cpu_idle_switch(tl, id->cpu, sw, time);
			return tl->err;
		}
		if (c->state == CPU_UNKNOWN) {
			/* Idle since the start, says a switch-in from the idle task. */
			if (!sw->out && sw->cpu_wide && !sw->next_prev_tid)
				cpu_span(tl, id->cpu, WP_CPU_IDLE, tl->start_ns, time);
			c->state = CPU_BUSY;	/* not idle so far */
		}
		if (id->tid == UINT32_MAX && sw->out) {
			exit_switch_out(tl, id->cpu, NULL, UINT32_MAX, time);
			return tl->err;
		}
	}
	if (!tl->cpu_wide && c && c->exiting) {
		struct thread *x = thread_of(tl, c->exiting - 1);

		/* Its last switch-out, its tid gone; or another's switch-in there. */
		if (x->exiting && !x->pub.closed && x->state == STATE_ON && x->cpu == id->cpu &&
		    id->tid == UINT32_MAX && sw->out)
			exit_switch_out(tl, id->cpu, x, UINT32_MAX, time);
		else if (x->exiting && !x->pub.closed && x->state == STATE_ON &&
			 x->cpu == id->cpu && !sw->out && id->tid && id->tid != x->pub.tid)
			exit_switch_out(tl, id->cpu, x, id->tid, time);	/* the switch to it */
		if (!x->exiting || x->pub.closed)
			c->exiting = 0;
	}
	if (!id->tid || id->tid == UINT32_MAX)
		return 0;
	t = thread_get(tl, id->pid, id->tid);
	if (!t)
		return -ENOMEM;
	if (t->exiting && !sw->out && c && !tl->cpu_wide)
		c->exiting = t->pub.serial + 1;	/* preempted on its way out, back here */
	if (t->pub.closed)
		return 0;	/* the last switch-out, after its EXIT */
	/* Preempted on its exit path (freeing a large memory, say), it runs again. */
	if (t->exiting && sw->out && !sw->preempted) {
		exit_switch_out(tl, id->cpu, t, UINT32_MAX, time);
		return tl->err;
	}
	serial = t->pub.serial;
	time = switch_time(tl, t, time, !sw->out, &late);
	if (!tl->cpu_wide || !c) {
		/*
		 * Only the recording's threads' switches are known: a
		 * switch-in on a CPU still starts no earlier than the last
		 * switch-out recorded there (a switch timed by the mean lag
		 * may be put before it).
		 */
		if (c && sw->out) {
			c->last_out = time > t->since ? time : t->since;
			c->last_next = sw->cpu_wide ? sw->next_prev_tid : UINT32_MAX;
		} else if (c && c->last_out > time && c->last_out >= t->since) {
			time = c->last_out;
			late = false;
		} else if (c && late && sw->cpu_wide && c->last_next == id->tid &&
			   c->last_out >= t->since && time - c->last_out <= SCHED_SWITCH_LAG_NS) {
			/*
			 * The switch-out before it on its CPU named it as next
			 * (a cgroup's switch records): that record is the
			 * switch itself, where this one came after the
			 * kernel switched the events in.
			 */
			time = c->last_out;
			late = false;
		}
	} else if (sw->out) {
		c->last_out = time > t->since ? time : t->since;
	} else {
		uint64_t in = cpu_switch_in_time(tl, id->cpu, sw, id->tid, time);

		t = thread_of(tl, serial);
		if (in >= t->since) {
			if (in < time)
				late = false;	/* at the switch-out before it: the switch itself */
			time = in;
		}
	}
	t = thread_of(tl, serial);
	if (sw->out) {
		if (c && t->state == STATE_ON && t->cpu != WP_NO_CPU && t->cpu != id->cpu)
			moved_cpu(tl, t, id->cpu, time);
		else if (c)
			t->cpu = id->cpu;
		thread_switch_out(tl, thread_of(tl, serial), time, sw->preempted);
	} else {
		thread_switch_in(tl, t, time, c ? id->cpu : WP_NO_CPU, late,
				 sw->cpu_wide && !sw->next_prev_tid);
	}
	return tl->err;
}

/*
 * A new thread is ready to run, not yet running: waiting for a CPU since
 * it was made, which is what waiting after a wake-up means too.
 */
static enum run_state new_thread_state(const struct wp_timeline *tl)
{
	return tl->wakeups ? STATE_RUNNABLE : STATE_PREEMPTED;
}

static void renamed(struct wp_timeline *tl, const struct thread *t, uint64_t time, bool exec)
{
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].renamed)
			tl->sinks[i].renamed(tl->sinks[i].arg, t->pub.serial, time, t->pub.comm,
					     exec);
}

static int timeline_fork(struct wp_timeline *tl, const struct perf_event_header *rec,
			 uint64_t time)
{
	struct thread *t, *parent;
	struct wp_task_event te;
	char comm[16] = "";

	if (wp_task_event_parse(rec, &te))
		return 0;
	t = thread_live(tl, te.tid);
	if (t && t->state == STATE_UNKNOWN && !t->pub.sampled && t->pub.start_ns == tl->start_ns) {
		/*
		 * Only named so far, by the /proc snapshot taken as recording
		 * began: in fact it was created since.  It starts here.
		 */
		t->pub.start_ns = time;
		t->pub.born = true;
		t->since = t->off_start = time;
		t->state = t->initial_off = new_thread_state(tl);
		t->pub.forked_process = te.pid != te.ppid;
		return 0;
	}
	if (t)
		thread_close(tl, t, t->exiting ? t->exit_time : time);	/* its EXIT lost */
	parent = thread_find(tl, te.ptid);
	if (parent)
		memcpy(comm, parent->pub.comm, sizeof(comm));
	t = thread_add(tl, te.pid, te.tid, time, new_thread_state(tl));
	if (!t)
		return -ENOMEM;
	t->initial_off = new_thread_state(tl);
	t->pub.forked_process = te.pid != te.ppid;
	t->pub.born = true;
	memcpy(t->pub.comm, comm, sizeof(comm));
	if (comm[0])
		renamed(tl, t, time, false);
	return 0;
}

static int timeline_comm(struct wp_timeline *tl, const struct perf_event_header *rec,
			 uint64_t time)
{
	struct wp_sample_id id;
	char comm[16] = "";
	struct thread *t;
	struct wp_comm c;
	size_t n;

	if (wp_comm_parse(rec, &c))
		return 0;
	t = thread_find(tl, c.tid);
	if (t && t->pub.closed) {
		/* The tid of an exited thread, reused by a task whose FORK we missed. */
		t = thread_add(tl, c.pid, c.tid, time, STATE_UNKNOWN);
	} else if (!t && c.exec &&
		   !wp_sample_id_parse(&tl->fmt, rec, &id) && id.id != WP_SYNTHESIZED_ID) {
		/* The launched command: it runs from its exec on. */
		t = thread_add(tl, c.pid, c.tid, time > tl->start_ns ? time : tl->start_ns,
			       STATE_ON);
		if (t)
			t->pub.born = true;
	}
	if (!t)
		t = thread_get(tl, c.pid, c.tid);
	if (!t)
		return -ENOMEM;
	t->pub.pid = c.pid;
	n = c.len < sizeof(comm) ? c.len : sizeof(comm) - 1;
	memcpy(comm, c.comm, n);
	comm[n] = '\0';
	memcpy(t->pub.comm, comm, sizeof(comm));
	renamed(tl, t, time, c.exec && c.pid == c.tid);
	return tl->err;
}

/*
 * n records of CPU cpu's ring were lost before time (WP_NO_CPU: of a ring
 * not known): since the last record that ring delivered (of any ring not
 * known, the earliest).  Any live thread may have run, or not, in that
 * window unseen: the window adds to each one's uncertainty.
 */
static void note_loss(struct wp_timeline *tl, uint64_t n, uint64_t time, uint32_t cpu)
{
	struct cpu *c = cpu_of(tl, cpu);
	uint64_t from = c && c->seen < time ? c->seen : time;

	tl->lost += n;
	for (uint32_t i = 0; !c && i < tl->nr_cpus; i++)
		if (tl->cpus[i].seen < from)
			from = tl->cpus[i].seen;
	if (from < tl->start_ns)
		from = tl->start_ns;
	if (c) {
		c->lost[c->next_lost] = (struct loss_window){ .from = from, .to = time };
		c->next_lost = (uint8_t)((c->next_lost + 1) % LOSS_HISTORY);
		c->seen = time;
	}
	/*
	 * Counted once where windows of several CPUs overlap: a thread is in
	 * one place at a time, so its uncertainty is their union over time.
	 */
	if (from < tl->lost_until)
		from = tl->lost_until;
	if (time > tl->lost_until)
		tl->lost_until = time;
	/* Any live thread may have lost records. */
	for (size_t i = 0; i < tl->nr; i++)
		if (!tl->threads[i].pub.closed) {
			tl->threads[i].pub.approximate = true;
			add_uncertain(&tl->threads[i], from, time);
			tl->threads[i].loss_in_wait = tl->threads[i].state != STATE_ON;
		}
	for (unsigned int i = 0; i < tl->nr_sinks; i++)
		if (tl->sinks[i].lost)
			tl->sinks[i].lost(tl->sinks[i].arg, n, time);
}

int wp_timeline_record(struct wp_timeline *tl, const struct perf_event_header *rec,
		       uint64_t time)
{
	struct wp_record_thread th;
	struct wp_task_event te;
	struct wp_sample_id id;
	struct wp_switch sw;
	struct thread *t;
	uint64_t lost_id, v;

	if (tl->err)
		return tl->err;
	switch (rec->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (wp_switch_parse(rec, &sw) || wp_sample_id_parse(&tl->fmt, rec, &id))
			return 0;
		return switch_record(tl, &sw, &id, time);
	case PERF_RECORD_FORK:
		return timeline_fork(tl, rec, time);
	case PERF_RECORD_COMM:
		return timeline_comm(tl, rec, time);
	case PERF_RECORD_EXIT:
		if (wp_task_event_parse(rec, &te))
			return 0;
		t = thread_live(tl, te.tid);
		if (t && !t->exiting) {
			/* The exiting task runs its exit path until the end. */
			if (t->state == STATE_UNKNOWN && !tl->no_switches) {
				t->state = STATE_ON;
				t->seg_flags = 0;
			}
			t->pub.exited = true;
			for (unsigned int i = 0; i < tl->nr_sinks; i++)
				if (tl->sinks[i].exited)
					tl->sinks[i].exited(tl->sinks[i].arg, t->pub.serial, time,
							    t->state == STATE_ON ? t->since : 0,
							    t->state != STATE_ON ? 0 :
							    t->counted_at > t->since ? t->counted_at :
							    t->since);
			/*
			 * Switch records per CPU: until its last switch-out,
			 * which the CPU's ledger counts as its time (with -a
			 * its tid may be gone by then).  An exit that frees
			 * much memory runs tens of ms past its EXIT (and past
			 * the kernel's exit figure, taken before): 80 ms of
			 * 2.86 s for a process that touched 512 MiB.
			 */
			if ((tl->cpu_wide || tl->switches_after_exit) && t->state == STATE_ON) {
				struct cpu *c = cpu_of(tl, t->cpu);

				t->exiting = true;
				t->exit_time = time;
				if (c && !tl->cpu_wide)
					c->exiting = t->pub.serial + 1;
				return 0;
			}
			thread_close(tl, t, time);
		}
		return tl->err;
	case WP_RECORD_THREAD:
		if (wp_thread_parse(rec, &th))
			return 0;
		t = thread_get(tl, th.pid, th.tid);
		if (!t)
			return -ENOMEM;
		if (th.header.misc & WP_THREAD_UNCERTAIN) {
			t->pub.approximate = true;
			t->start_uncertain = t->state == STATE_UNKNOWN && !t->pub.closed;
		} else if (th.header.misc & WP_THREAD_OFF_CPU) {
			thread_off_at_start(tl, t, !!(th.header.misc & WP_THREAD_PREEMPTED));
		}
		return 0;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!wp_lost_parse(rec, &lost_id, &v))
			note_loss(tl, v, time,
				  wp_sample_id_parse(&tl->fmt, rec, &id) ? WP_NO_CPU : id.cpu);
		return 0;
	}
	return 0;
}

int wp_timeline_finish(struct wp_timeline *tl, uint64_t end_ns)
{
	if (tl->finished)
		return tl->err;
	tl->finished = true;
	for (size_t i = 0; i < tl->nr; i++)
		thread_close(tl, &tl->threads[i],
			     tl->threads[i].exiting ? tl->threads[i].exit_time : end_ns);
	for (uint32_t i = 0; tl->cpu_wide && i < tl->nr_cpus; i++) {
		struct cpu *c = &tl->cpus[i];

		if (c->state == CPU_UNKNOWN && c->idle_sampled) {
			c->state = CPU_IDLE;		/* idle throughout */
			c->idle_since = tl->start_ns;
		}
		if (c->state == CPU_IDLE)
			cpu_span(tl, i, WP_CPU_IDLE, c->idle_since, end_ns);
		else if (c->last_out && !c->last_next)
			/* Switched to the idle task, whose records did not come. */
			cpu_span(tl, i, WP_CPU_IDLE, c->last_out, end_ns);
	}
	return tl->err;
}

const struct wp_tl_thread *wp_timeline_thread(const struct wp_timeline *tl, uint32_t serial)
{
	return serial < tl->nr ? &tl->threads[serial].pub : NULL;
}

size_t wp_timeline_nr_threads(const struct wp_timeline *tl)
{
	return tl->nr;
}

const struct wp_tl_thread *wp_timeline_find(const struct wp_timeline *tl, uint32_t tid)
{
	uint64_t i;

	if (!wp_u64map_get(&tl->thread_index, tid, &i) || tl->threads[i].pub.closed)
		return NULL;
	return &tl->threads[i].pub;
}

const struct wp_tl_thread *wp_timeline_latest(const struct wp_timeline *tl, uint32_t tid)
{
	uint64_t i;

	return wp_u64map_get(&tl->thread_index, tid, &i) ? &tl->threads[i].pub : NULL;
}

bool wp_timeline_running_since(const struct wp_timeline *tl, uint32_t serial, uint64_t *since)
{
	const struct thread *t;

	if (serial >= tl->nr)
		return false;
	t = &tl->threads[serial];
	*since = t->since;
	/* A thread not switched yet that execs is running: since its start. */
	return !t->pub.closed && (t->state == STATE_ON ||
				  (t->state == STATE_UNKNOWN && !tl->no_switches));
}

bool wp_timeline_undecided(const struct wp_timeline *tl, uint32_t serial)
{
	return serial < tl->nr && tl->threads[serial].state == STATE_UNKNOWN &&
	       !tl->threads[serial].pub.closed;
}

bool wp_timeline_queued_since(const struct wp_timeline *tl, uint32_t serial, uint64_t *since)
{
	const struct thread *t;

	if (serial >= tl->nr)
		return false;
	t = &tl->threads[serial];
	*since = t->since;
	return !t->pub.closed && (t->state == STATE_RUNNABLE || t->state == STATE_PREEMPTED);
}

int wp_timeline_each_live(const struct wp_timeline *tl,
			  int (*fn)(void *arg, const struct wp_tl_thread *t,
				    const struct wp_tl_state *st),
			  void *arg)
{
	for (size_t i = 0; i < tl->nr; i++) {
		const struct thread *t = &tl->threads[i];
		struct wp_tl_state st = { .serial = t->pub.serial, .stack = WP_NO_STACK,
					  .since = t->since };
		int ret;

		if (t->pub.closed || t->exiting)
			continue;
		if (t->state == STATE_BLOCKED || t->state == STATE_PREEMPTED ||
		    t->state == STATE_RUNNABLE) {
			st.uncertain = tl->lost_until > t->off_start;
			st.off = true;
			st.preempted = t->state != STATE_BLOCKED;
			st.off_since = t->off_start;
			if (t->off_stack != tl->opts.unknown_stack &&
			    (!tl->opts.start_stack || t->off_stack != tl->opts.start_stack) &&
			    t->off_stack != tl->opts.unsampled_switch_stack)
				st.stack = t->off_stack;
		} else {
			st.uncertain = tl->lost_until > t->since;
		}
		st.uncertain |= t->start_uncertain;
		ret = fn(arg, &t->pub, &st);
		if (ret)
			return ret;
	}
	return 0;
}

uint8_t wp_wake_context_of_flags(uint32_t flags)
{
	uint8_t context = (flags & WP_STACK_SAMPLE_HARDIRQ ? WP_WAKE_HARDIRQ : 0) |
			  (flags & WP_STACK_SAMPLE_SOFTIRQ ? WP_WAKE_SOFTIRQ : 0) |
			  (flags & WP_STACK_SAMPLE_NMI ? WP_WAKE_NMI : 0);

	if (!context && (flags & WP_STACK_SAMPLE_IRQ))
		context = WP_WAKE_HARDIRQ | WP_WAKE_SOFTIRQ;
	return context;
}

uint32_t wp_wake_flags_of_context(uint8_t context)
{
	return (context ? WP_STACK_SAMPLE_IRQ : 0) |
	       (context & WP_WAKE_HARDIRQ ? WP_STACK_SAMPLE_HARDIRQ : 0) |
	       (context & WP_WAKE_SOFTIRQ ? WP_STACK_SAMPLE_SOFTIRQ : 0) |
	       (context & WP_WAKE_NMI ? WP_STACK_SAMPLE_NMI : 0);
}

/* A timer's expiry, in its interrupt or softirq. */
static bool timer_name(const char *name)
{
	static const char *const timers[] = {
		"hrtimer_wakeup", "process_timeout", "call_timer_fn", "__hrtimer_run_queues",
	};

	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
		if (!strcmp(name, timers[i]))
			return true;
	return false;
}

/*
 * The softirq whose handler a kernel frame is (its "action"), or
 * WP_SOFTIRQ_NONE: the names of Linux 5.x and 6.x.
 */
static enum wp_softirq softirq_name(const char *name)
{
	static const struct {
		const char *name;
		enum wp_softirq vec;
	} actions[] = {
		{ "net_rx_action", WP_SOFTIRQ_NET_RX },
		{ "net_tx_action", WP_SOFTIRQ_NET_TX },
		{ "blk_done_softirq", WP_SOFTIRQ_BLOCK },
		{ "run_timer_softirq", WP_SOFTIRQ_TIMER },
		{ "hrtimer_run_softirq", WP_SOFTIRQ_HRTIMER },
		{ "tasklet_action", WP_SOFTIRQ_TASKLET },
		{ "tasklet_hi_action", WP_SOFTIRQ_HI },
		{ "irq_poll_softirq", WP_SOFTIRQ_IRQ_POLL },
		{ "run_rebalance_domains", WP_SOFTIRQ_SCHED },
		{ "sched_balance_softirq", WP_SOFTIRQ_SCHED },
		{ "rcu_core_si", WP_SOFTIRQ_RCU },
		{ "rcu_core", WP_SOFTIRQ_RCU },
	};

	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(name, actions[i].name))
			return actions[i].vec;
	return WP_SOFTIRQ_NONE;
}

/* Whether name begins with the architecture's prefix (none known: no). */
static bool has_prefix(const char *name, const char *prefix)
{
	return prefix && !strncmp(name, prefix, strlen(prefix));
}

void wp_waker_classify(const struct wp_arch *arch, uint8_t context, uint32_t tid, unsigned int n,
		       wp_waker_frame_fn frame, void *arg, struct wp_waker_class *out)
{
	const char *irq_entry = arch ? arch->kernel_irq_entry_prefix : NULL;
	const char *syscall_entry = arch ? arch->kernel_syscall_entry_prefix : NULL;
	bool sent = false, syscall = false, entry = false;

	*out = (struct wp_waker_class){ .kind = tid ? WP_WAKER_THREAD : WP_WAKER_IDLE,
					.nr_frames = n };
	if (!context)
		return;
	out->kind = WP_WAKER_INTERRUPT;
	for (unsigned int i = 0; i < n; i++) {
		bool kernel = false;
		const char *name = frame(i, &kernel, arg);

		if (!kernel || !name)
			continue;
		if (timer_name(name))
			out->kind = WP_WAKER_TIMER;
		if (!out->softirq)
			out->softirq = (uint8_t)softirq_name(name);
		/* Below the interrupt's entry is only what it interrupted. */
		if (has_prefix(name, irq_entry)) {
			out->nr_frames = i + 1;
			entry = true;
			break;
		}
		if (out->softirq && !strcmp(name, "__dev_queue_xmit"))
			sent = true;
		if (has_prefix(name, syscall_entry))
			syscall = true;
	}
	/* A hard interrupt's handler ran no softirq: what it interrupted did. */
	if ((context & (WP_WAKE_HARDIRQ | WP_WAKE_NMI)) && !(context & WP_WAKE_SOFTIRQ))
		out->softirq = WP_SOFTIRQ_NONE;
	/* The thread's own send, delivered in its own system call. */
	if (context == WP_WAKE_SOFTIRQ && out->softirq == WP_SOFTIRQ_NET_RX && sent && syscall &&
	    !entry && out->kind == WP_WAKER_INTERRUPT && tid)
		out->kind = WP_WAKER_THREAD;
}

const char *wp_waker_kind_name(enum wp_waker_kind kind)
{
	switch (kind) {
	case WP_WAKER_INTERRUPT:
		return "[interrupt]";
	case WP_WAKER_TIMER:
		return "[timer]";
	case WP_WAKER_IDLE:
		return "swapper";	/* the idle task's name, as the kernel gives it */
	case WP_WAKER_THREAD:
		break;
	}
	return NULL;
}

const struct wp_waker *wp_timeline_wakers(const struct wp_timeline *tl, size_t *n)
{
	*n = tl->nr_wakers;
	return tl->wakers;
}

bool wp_timeline_has_wakeups(const struct wp_timeline *tl)
{
	return tl->wakeups;
}

void wp_timeline_switch_timing(const struct wp_timeline *tl, struct wp_switch_timing *st)
{
	*st = tl->timing;
	for (int i = 0; i < 2; i++)
		st->mean_lag_ns[i] = tl->lag_n[i] ? tl->lag_sum[i] / tl->lag_n[i] : 0;
}

uint64_t wp_timeline_last_untimed_out(const struct wp_timeline *tl)
{
	return tl->last_untimed_out;
}

uint64_t wp_timeline_lost(const struct wp_timeline *tl)
{
	return tl->lost;
}

/*
 * Keep only the wakers that a thread not forgotten still refers to (of a
 * wait not ended yet, or a wake-up seen while it still ran), renumbered.
 */
static int forget_wakers(struct wp_timeline *tl)
{
	uint32_t *to = tl->nr_wakers ? calloc(tl->nr_wakers, sizeof(*to)) : NULL;
	size_t kept = 0, old = tl->nr_wakers;

	if (tl->nr_wakers && !to)
		return -ENOMEM;
	/* to[i]: the new index + 1 of waker i, 0 when nothing refers to it. */
	for (size_t i = 0; i < tl->nr; i++) {
		const struct thread *t = &tl->threads[i];

		if (t->forgotten)
			continue;
		if (t->waker < tl->nr_wakers)
			to[t->waker] = 1;
		if (t->early_waker < tl->nr_wakers)
			to[t->early_waker] = 1;
	}
	wp_u64map_release(&tl->waker_index);
	for (size_t i = 0; i < tl->nr_wakers; i++) {
		const struct wp_waker *w = &tl->wakers[i];
		uint64_t key = ((uint64_t)w->kind << 62) ^ ((uint64_t)w->tid << 30) ^ w->stack;

		if (!to[i])
			continue;
		tl->wakers[kept] = *w;
		to[i] = (uint32_t)++kept;
		/* Out of memory, it is only not found: a new entry is made at its next wake-up. */
		wp_u64map_put(&tl->waker_index, key, kept - 1);
	}
	tl->nr_wakers = kept;
	for (size_t i = 0; i < tl->nr; i++) {
		struct thread *t = &tl->threads[i];

		if (t->forgotten)
			continue;
		t->waker = t->waker < old ? to[t->waker] - 1 : WP_NO_WAKER;
		t->early_waker = t->early_waker < old ? to[t->early_waker] - 1 : WP_NO_WAKER;
	}
	free(to);
	return 0;
}

int wp_timeline_forget(struct wp_timeline *tl, uint64_t before, size_t *forgotten)
{
	size_t n = 0;
	uint64_t at;

	if (forgotten)
		*forgotten = 0;
	if (tl->err)
		return tl->err;
	for (size_t i = 0; i < tl->nr; i++) {
		struct thread *t = &tl->threads[i];

		if (t->forgotten || !t->pub.closed || t->pub.end_ns >= before)
			continue;
		if (WP_GROW(tl->free_slots, tl->cap_free, tl->nr_free + 1))
			return -ENOMEM;
		/* Found no more by its tid: a record of it now would make a new thread. */
		if (wp_u64map_get(&tl->thread_index, t->pub.tid, &at) && at == i)
			wp_u64map_del(&tl->thread_index, t->pub.tid);
		for (uint32_t c = 0; c < tl->nr_cpus; c++)
			if (tl->cpus[c].occupant == i + 1)
				tl->cpus[c].occupant = 0;
		t->forgotten = true;
		tl->free_slots[tl->nr_free++] = (uint32_t)i;
		n++;
	}
	if (forgotten)
		*forgotten = n;
	return forget_wakers(tl);
}

void wp_timeline_free(struct wp_timeline *tl)
{
	if (!tl)
		return;
	free(tl->threads);
	free(tl->free_slots);
	wp_u64map_release(&tl->thread_index);
	free(tl->cpus);
	free(tl->wakers);
	wp_u64map_release(&tl->waker_index);
	free(tl);
}
