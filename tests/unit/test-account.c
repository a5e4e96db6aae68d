/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-account.c: the on/off-CPU accounting on synthetic record sequences,
 * and the time ordering of records across rounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "account.h"
#include "layout.h"
#include "order.h"
#include "tap.h"
#include "util.h"

#define MS 1000000ULL
#define START (1000 * MS)	/* record start on the event clock */
#define STACK_A 10
#define STACK_B 11
#define STACK_C 12
#define UNSAMPLED 1
#define UNKNOWN 2

static struct wp_sample_format fmt;
static struct wp_meta meta;

static void setup(void)
{
	memset(&meta, 0, sizeof(meta));
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.start_clock_ns = START;
	meta.flags = WP_META_SWITCHES | WP_META_OFFCPU_STACKS;
	meta.sample_period_ns = MS;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
}

/* A SWITCH record of tid at start + t. */
static const struct perf_event_header *switch_rec(uint32_t tid, uint64_t t, bool out,
						  bool preempt, uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = 100, .tid = tid, .time = START + t, .id = 7 };

	h->type = PERF_RECORD_SWITCH;
	h->misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
		  (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, h + 1);
	return h;
}

/* A system-wide switch-in of tid at start + t, after prev (0: the idle task). */
static const struct perf_event_header *switch_in_after(uint32_t tid, uint32_t prev, uint64_t t,
						       uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[2] = { prev, prev };
	struct wp_sample_id id = { .pid = 100, .tid = tid, .time = START + t, .id = 7 };

	h->type = PERF_RECORD_SWITCH_CPU_WIDE;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(body));
	return h;
}

/* FORK (new thread tid of process 100) or EXIT at start + t. */
static const struct perf_event_header *task_rec(uint32_t type, uint32_t tid, uint64_t t,
						uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { 100, 100, tid, 100 };
	uint64_t time = START + t;
	struct wp_sample_id id = { .pid = 100, .tid = tid, .time = START + t, .id = 7 };

	h->type = (uint16_t)type;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + 8 + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &time, 8);
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(body) + 8);
	return h;
}

static void feed(struct wp_account *a, const struct perf_event_header *h)
{
	wp_account_record(a, h, wp_record_time(&fmt, h));
}

static const struct wp_stack_weight *weight_of(struct wp_account *a, uint32_t stack)
{
	const struct wp_stack_weight *w;
	size_t n;

	w = wp_account_stacks(a, &n);
	for (size_t i = 0; i < n; i++)
		if (w[i].stack == stack)
			return &w[i];
	return NULL;
}

static struct wp_account *new_account(uint64_t ws, uint64_t we, uint64_t min_block)
{
	struct wp_account_opts o = {
		.window_start = ws ? START + ws : 0,
		.window_end = we ? START + we : 0,
		.min_block_ns = min_block,
		.unsampled_stack = UNSAMPLED,
		.unknown_stack = UNKNOWN,
	};
	struct wp_account *a;

	return wp_account_new(&meta, &o, &a) ? NULL : a;
}

/*
 * An account of a recording with flags and one event, sched_wakeup (whose
 * time ends a blocked interval), and thread 101 made at the start.
 */
static struct wp_account *wakeups_account(uint64_t flags, uint8_t *buf)
{
	static struct wp_event_desc ev = { .role = WP_EVENT_ENQUEUED };
	struct wp_account *a;

	meta.flags |= flags;
	meta.events = &ev;
	meta.nr_events = 1;
	a = new_account(0, 0, 0);
	meta.flags &= ~flags;
	meta.events = NULL;
	meta.nr_events = 0;
	if (a)
		feed(a, task_rec(PERF_RECORD_FORK, 101, 0, buf));
	return a;
}

/*
 * A thread running since the start: 5 samples, blocked 10-30 ms with
 * stack B, preempted 40-45 ms with stack C, end at 50 ms.
 */
static void feed_basic(struct wp_account *a)
{
	uint8_t buf[256];

	for (int i = 1; i <= 5; i++)
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + (uint64_t)i * MS, false, STACK_A);
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 10 * MS, true, STACK_B);
	feed(a, switch_rec(101, 10 * MS, true, false, buf));
	feed(a, switch_rec(101, 30 * MS, false, false, buf));
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 40 * MS, true, STACK_C);
	feed(a, switch_rec(101, 40 * MS, true, true, buf));
	feed(a, switch_rec(101, 45 * MS, false, false, buf));
}

static void test_basic_split(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	struct wp_hist h;
	size_t n;

	feed_basic(a);
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "basic: one thread");
	is_u64(t->wall_ns, 50 * MS, "basic: wall is the whole window");
	is_u64(t->on_cpu_ns, 25 * MS, "basic: on-CPU 0-10, 30-40, 45-50 ms");
	is_u64(t->blocked_ns, 20 * MS, "basic: blocked 10-30 ms");
	is_u64(t->preempted_ns, 5 * MS, "basic: preempted 40-45 ms");
	is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->preempted_ns,
	       "basic: wall = on + blocked + preempted");
	is_u64(t->voluntary_switches, 1, "basic: one voluntary switch");
	is_u64(t->involuntary_switches, 1, "basic: one involuntary switch");
	is_u64(t->samples, 5, "basic: five on-CPU samples");
	is_u64(t->switch_samples, 2, "basic: two switch-out stacks");
	ok(!t->approximate, "basic: exact");
	w = weight_of(a, STACK_A);
	ok(w && w->on_cpu_ns == 25 * MS && w->samples == 5, "basic: stack A has all on-CPU time");
	w = weight_of(a, STACK_B);
	ok(w && w->blocked_ns == 20 * MS && w->blocked_count == 1 && !w->on_cpu_ns,
	   "basic: stack B has the blocked interval");
	w = weight_of(a, STACK_C);
	ok(w && w->preempted_ns == 5 * MS && w->preempted_count == 1,
	   "basic: stack C has the preempted interval");
	memset(&h, 0, sizeof(h));
	wp_thread_hist_add(t, WP_HIST_ON_SLICES, &h);
	is_u64(h.count[63 - __builtin_clzll(10 * MS)], 2,
	       "basic: two 10 ms on-CPU slices in their log2 bucket");
	memset(&h, 0, sizeof(h));
	wp_thread_hist_add(t, WP_HIST_PREEMPT_WAITS, &h);
	is_u64(h.total_ns[63 - __builtin_clzll(5 * MS)], 5 * MS,
	       "basic: the preemption wait in its bucket");
	wp_account_free(a);
}

static void test_window(void)
{
	struct wp_account *a = new_account(20 * MS, 40 * MS, 0);
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	size_t n;

	feed_basic(a);
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	is_u64(t->wall_ns, 20 * MS, "window 20-40 ms: wall is the window");
	is_u64(t->blocked_ns, 10 * MS, "window: blocked 20-30 ms");
	is_u64(t->on_cpu_ns, 10 * MS, "window: on-CPU 30-40 ms");
	is_u64(t->preempted_ns, 0, "window: the preemption is outside");
	is_u64(t->samples, 0, "window: the samples are outside");
	w = weight_of(a, UNSAMPLED);
	ok(w && w->on_cpu_ns == 10 * MS, "window: unsampled on-CPU time has its own stack");
	w = weight_of(a, STACK_B);
	ok(w && w->blocked_ns == 10 * MS, "window: stack B gets the part inside");
	wp_account_free(a);
}

static void test_min_block(void)
{
	struct wp_account *a = new_account(0, 0, 10 * MS);
	const struct wp_thread_times *t;
	size_t n;

	feed_basic(a);
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	ok(weight_of(a, STACK_B) && weight_of(a, STACK_B)->blocked_ns == 20 * MS,
	   "min-block 10 ms: the 20 ms interval keeps its stack");
	ok(!weight_of(a, STACK_C), "min-block 10 ms: the 5 ms interval has no stack weight");
	is_u64(t->preempted_ns, 5 * MS, "min-block: thread totals stay exact");
	wp_account_free(a);
}

static void test_new_thread(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	uint8_t buf[256];
	size_t n;

	feed(a, task_rec(PERF_RECORD_FORK, 102, 10 * MS, buf));
	feed(a, switch_rec(102, 12 * MS, false, false, buf));
	feed(a, task_rec(PERF_RECORD_EXIT, 102, 20 * MS, buf));
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "new thread: one thread");
	is_u64(t->start_ns, START + 10 * MS, "new thread: starts at its FORK");
	is_u64(t->end_ns, START + 20 * MS, "new thread: ends at its EXIT");
	is_u64(t->preempted_ns, 2 * MS, "new thread: runnable until it first runs");
	is_u64(t->on_cpu_ns, 8 * MS, "new thread: then on-CPU until exit");
	ok(t->exited, "new thread: exited");
	w = weight_of(a, UNSAMPLED);
	ok(w && w->on_cpu_ns == 8 * MS, "new thread: unsampled time is not lost");
	wp_account_free(a);
}

/*
 * The kernel delivers a task's last switch-out, and samples of its exit
 * path, after its EXIT record: they belong to the exited thread (and are
 * clipped to its exit), until a FORK reuses the tid for a new thread.
 */
static void test_records_after_exit(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_thread_times *t;
	uint8_t buf[256];
	size_t n;

	feed(a, task_rec(PERF_RECORD_FORK, 102, 10 * MS, buf));
	feed(a, switch_rec(102, 12 * MS, false, false, buf));
	feed(a, task_rec(PERF_RECORD_EXIT, 102, 20 * MS, buf));
	wp_account_sample(a, 100, 102, WP_NO_CPU, START + 20 * MS + 1000, false, STACK_A);
	feed(a, switch_rec(102, 21 * MS, true, false, buf));
	/* The tid, reused by a new thread. */
	feed(a, task_rec(PERF_RECORD_FORK, 102, 30 * MS, buf));
	feed(a, switch_rec(102, 31 * MS, false, false, buf));
	feed(a, switch_rec(102, 35 * MS, true, false, buf));
	feed(a, task_rec(PERF_RECORD_EXIT, 102, 40 * MS, buf));
	feed(a, switch_rec(102, 40 * MS + 500, true, false, buf));
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 2, "after exit: two threads, no third one from late records");
	if (n != 2)
		goto out;
	is_u64(t[0].start_ns, START + 10 * MS, "after exit: the first starts at its FORK");
	is_u64(t[0].end_ns, START + 20 * MS, "after exit: and ends at its EXIT");
	is_u64(t[0].on_cpu_ns, 8 * MS, "after exit: its exit path is clipped at EXIT");
	is_u64(t[0].samples, 0, "after exit: the late sample is not counted");
	is_u64(t[0].voluntary_switches, 0, "after exit: nor the late switch-out");
	is_u64(t[1].start_ns, START + 30 * MS, "after exit: the tid's new thread starts at its FORK");
	is_u64(t[1].wall_ns, 10 * MS, "after exit: and ends at its own EXIT");
	is_u64(t[1].on_cpu_ns, 4 * MS, "after exit: on-CPU 31-35 ms");
	is_u64(t[1].blocked_ns, 5 * MS, "after exit: blocked 35-40 ms");
out:
	wp_account_free(a);
}

/*
 * The /proc snapshot of an attach names threads as existing at the start;
 * one that was in fact created during the attach has a FORK record too,
 * and starts there, once.
 */
static void test_snapshot_then_fork(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_thread_times *t;
	struct wp_record_thread th = {
		.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
		.pid = 100, .tid = 103, .time = START,
	};
	uint8_t buf[256];
	size_t n;

	wp_account_record(a, &th.header, START);
	feed(a, task_rec(PERF_RECORD_FORK, 103, 2 * MS, buf));
	feed(a, switch_rec(103, 3 * MS, false, false, buf));
	wp_account_finish(a, START + 10 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "snapshot then fork: one thread");
	is_u64(t->start_ns, START + 2 * MS, "snapshot then fork: it starts at its FORK");
	is_u64(t->preempted_ns, 1 * MS, "snapshot then fork: runnable until it first runs");
	is_u64(t->on_cpu_ns, 7 * MS, "snapshot then fork: then on-CPU");
	wp_account_free(a);
}

/*
 * With wake-ups: blocked from the switch-out to the wake-up, which names
 * its waker; runnable from there to the switch-in; a wake-up of a running
 * thread changes nothing; a new thread waits runnable, not preempted.
 */
static void test_wakeups(void)
{
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	struct wp_waker timer = { .stack = 21, .kind = WP_WAKER_TIMER };
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	const struct wp_wake_weight *k;
	const struct wp_waker *wk;
	struct wp_account *a;
	size_t n, nk, nw;
	uint8_t buf[256];

	meta.flags |= WP_META_WAKEUPS;
	a = new_account(0, 0, 0);
	meta.flags &= ~WP_META_WAKEUPS;
	feed(a, task_rec(PERF_RECORD_FORK, 101, 0, buf));
	feed(a, switch_rec(101, 2 * MS, false, false, buf));
	wp_account_wakeup(a, 101, START + 3 * MS, &writer);		/* running: nothing */
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 5 * MS, true, STACK_B);
	feed(a, switch_rec(101, 5 * MS, true, false, buf));	/* blocks in B */
	wp_account_wakeup(a, 101, START + 15 * MS, &writer);
	feed(a, switch_rec(101, 18 * MS, false, false, buf));
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 20 * MS, true, STACK_B);
	feed(a, switch_rec(101, 20 * MS, true, false, buf));	/* blocks in B again */
	wp_account_wakeup(a, 101, START + 40 * MS, &timer);
	wp_account_wakeup(a, 101, START + 41 * MS, &writer);		/* already woken */
	feed(a, switch_rec(101, 42 * MS, false, false, buf));
	wp_account_wakeup(a, 999, START + 43 * MS, &writer);		/* not a thread of ours */
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "wake-ups: one thread");
	is_u64(t->runnable_ns, 2 * MS + 3 * MS + 2 * MS,
	       "wake-ups: runnable from creation, and after each wake-up");
	is_u64(t->preempted_ns, 0, "wake-ups: nothing preempted");
	is_u64(t->blocked_ns, 10 * MS + 20 * MS, "wake-ups: blocked until each wake-up");
	is_u64(t->on_cpu_ns, 3 * MS + 2 * MS + 8 * MS, "wake-ups: on-CPU 2-5, 18-20, 42-50 ms");
	is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->runnable_ns + t->preempted_ns,
	       "wake-ups: wall = on + blocked + runnable + preempted");
	is_u64(t->wakeups, 2, "wake-ups: two ended a blocked interval");
	w = weight_of(a, STACK_B);
	ok(w && w->blocked_ns == 30 * MS && w->runnable_ns == 5 * MS && w->runnable_count == 2,
	   "wake-ups: stack B's blocked and runnable time");
	k = wp_account_wake_weights(a, &nk);
	wk = wp_account_wakers(a, &nw);
	is_int((long long)nw, 2, "wake-ups: two wakers");
	ok(w && w->wakes && nk == 2, "wake-ups: stack B names both");
	for (uint32_t i = w ? w->wakes : 0; i; i = k[i - 1].next) {
		const struct wp_waker *x = &wk[k[i - 1].waker];

		if (x->kind == WP_WAKER_TIMER)
			ok(k[i - 1].blocked_ns == 20 * MS && x->tid == 0,
			   "wake-ups: the timer ended 20 ms of it");
		else
			ok(k[i - 1].blocked_ns == 10 * MS && x->tid == 102 && x->stack == 20,
			   "wake-ups: the writer, with its stack, ended 10 ms of it");
	}
	wp_account_free(a);
}

/*
 * With sched_wakeup recorded, a wake-up (sched_waking) only names the
 * waker: the blocked interval ends when the thread reaches a run queue,
 * or, when that was not seen, at the sched_waking.
 */
static void test_wakeups_enqueued(void)
{
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	const struct wp_wake_weight *k;
	struct wp_account *a;
	size_t n, nk;
	uint8_t buf[256];

	a = wakeups_account(WP_META_WAKEUPS | WP_META_EXIT_CLOCKS, buf);
	feed(a, switch_rec(101, 2 * MS, false, false, buf));
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 5 * MS, true, STACK_B);
	feed(a, switch_rec(101, 5 * MS, true, false, buf));	/* blocks in B */
	wp_account_wakeup(a, 101, START + 15 * MS, &writer);
	wp_account_enqueued(a, 101, START + 16 * MS);
	feed(a, switch_rec(101, 18 * MS, false, false, buf));
	wp_account_enqueued(a, 101, START + 19 * MS);		/* running: nothing */
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 20 * MS, true, STACK_B);
	feed(a, switch_rec(101, 20 * MS, true, false, buf));	/* blocks in B again */
	wp_account_wakeup(a, 101, START + 30 * MS, &writer);	/* its sched_wakeup is lost */
	feed(a, switch_rec(101, 32 * MS, false, false, buf));
	/* Woken while its switch-out record is still to come: runnable at once. */
	wp_account_wakeup(a, 101, START + 34 * MS, &writer);
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 35 * MS, true, STACK_B);
	feed(a, switch_rec(101, 35 * MS, true, false, buf));
	feed(a, switch_rec(101, 37 * MS, false, false, buf));
	wp_account_finish(a, START + 40 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "enqueued: one thread");
	is_u64(t->blocked_ns, 11 * MS + 10 * MS,
	       "enqueued: blocked until the run queue, or else until the waking");
	is_u64(t->runnable_ns, 2 * MS + 2 * MS + 2 * MS + 2 * MS,
	       "enqueued: runnable from creation, after 16 and 30 ms, and after the early wake-up");
	is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->runnable_ns + t->preempted_ns,
	       "enqueued: wall = on + blocked + runnable + preempted");
	is_u64(t->wakeups, 3,
	       "enqueued: a wake-up reached the run queue, one lost its enqueue, one came early");
	w = weight_of(a, STACK_B);
	k = wp_account_wake_weights(a, &nk);
	ok(w && w->wakes && nk == 1 && k[0].blocked_ns == 21 * MS && k[0].count == 3,
	   "enqueued: the writer ended all three blocked intervals");
	wp_account_free(a);
}

/* Within d of each other. */
static bool near(uint64_t x, uint64_t y, uint64_t d)
{
	return x > y ? x - y <= d : y - x <= d;
}

/*
 * Wake-ups gated with the stacks: 20 waits timed by sched_switch (records
 * 5 us late out, 10 us late in) with their wake-up, 1 ms runnable of each
 * 5 ms; then 10 where the tracepoints were off (no sched_switch, no
 * wake-up); then one wait with no wake-up where they were on.  The 10
 * are timed by the others' lag; from the second on (two switch-outs in a
 * row without sched_switch say the tracepoints were closed) they are
 * split by the 20's runnable share; so are the first (a lone switch-out
 * without one may be a record lost) and the last, as waits whose wake-up
 * the kernel did not report; the writer's share of blocked time covers
 * the 11 too.
 */
/* The records of test_wakeups_gated, up to 320 ms. */
static void feed_gated(struct wp_account *a, uint8_t *buf)
{
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	const uint64_t us = 1000;

	wp_account_sched_switch(a, 0, 101, START + MS - 10 * us, UINT32_MAX);
	feed(a, switch_rec(101, MS, false, false, buf));
	for (uint64_t i = 0; i < 31; i++) {
		uint64_t base = 10 * MS + i * 10 * MS;
		bool on = i < 20 || i == 30;

		if (on)
			wp_account_sched_switch(a, 101, 0, START + base - 5 * us, UINT32_MAX);
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + base - 5 * us, true, STACK_B);
		feed(a, switch_rec(101, base, true, false, buf));
		if (i < 20) {
			wp_account_wakeup(a, 101, START + base + 4 * MS, &writer);
			wp_account_enqueued(a, 101, START + base + 4 * MS);
		}
		if (on)
			wp_account_sched_switch(a, 0, 101, START + base + 5 * MS - 10 * us,
						UINT32_MAX);
		feed(a, switch_rec(101, base + 5 * MS, false, false, buf));
	}
}

static void test_wakeups_gated(void)
{
	const uint64_t us = 1000, off = 5 * MS - 5 * us, run = MS - 10 * us;
	const struct wp_thread_times *t;
	const struct wp_stack_weight *w;
	const struct wp_wake_weight *k;
	struct wp_wakeup_estimate e;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n, nk;

	a = wakeups_account(WP_META_WAKEUPS | WP_META_WAKEUPS_GATED, buf);
	feed_gated(a, buf);
	wp_account_finish(a, START + 320 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "gated: one thread");
	is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->runnable_ns + t->preempted_ns,
	       "gated: wall = on + blocked + runnable + preempted");
	/* Each slice from 10 us before its switch-in record to 5 us before its switch-out's. */
	is_u64(t->on_cpu_ns, (10 * MS - 5 * us) - (MS - 10 * us) + 30 * (5 * MS + 5 * us) +
	       (320 * MS - (315 * MS - 10 * us)), "gated: untimed switches timed by the others' lag");
	ok(near(t->runnable_ns, run + 20 * run + 11 * run, 2),
	   "gated: the 11 waits without a wake-up get the 20's runnable share");
	ok(near(t->blocked_ns, 31 * (off - run), 2), "gated: the rest blocked");
	is_u64(t->wakeups, 31, "gated: every wait of the 31 was woken");
	wp_account_wakeup_estimate(a, &e);
	ok(e.gated && e.waits == 11 && e.dropped == 2 && e.seen == 20 && e.waits_ns == 11 * off &&
	   near(e.runnable_ns, 11 * run, 2), "gated: the estimate says what it did");
	w = weight_of(a, STACK_B);
	ok(w && near(w->runnable_ns, 31 * run, 20) && near(w->estimated_ns[1], 11 * run, 20),
	   "gated: the stack's runnable time, 11 of 31 waits' estimated");
	k = wp_account_wake_weights(a, &nk);
	ok(nk == 1 && near(k[0].blocked_ns, 31 * (off - run), 20) && k[0].count == 31,
	   "gated: the writer ends the 11 waits' blocked time too");
	wp_account_free(a);
}

/*
 * The kernel's run-queue figure moves a thread's runnable time only
 * within the waits the wake-up estimate guessed at, and only when the
 * budget closed the tracepoints during some of them: the records of
 * test_wakeups_gated, with the kernel's figures at the end saying its
 * on-CPU time was the records' and its run-queue time nothing, then a
 * second; runnable time falls to the recorded waits', then rises by all
 * of the 11 unrecorded waits' blocked time, no further.
 */
static const struct perf_event_header *clock_rec(uint32_t tid, uint64_t t, uint16_t when,
						 uint64_t on, uint64_t rq, uint8_t *buf);

static void test_wakeups_gated_anchor(void)
{
	const uint64_t us = 1000, off = 5 * MS - 5 * us, run = MS - 10 * us;
	const uint64_t on = (10 * MS - 5 * us) - (MS - 10 * us) + 30 * (5 * MS + 5 * us) +
			    (320 * MS - (315 * MS - 10 * us));
	const uint64_t rq[2] = { 0, 1000 * MS };
	const struct wp_thread_times *t;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	for (int k = 0; k < 2; k++) {
		a = wakeups_account(WP_META_WAKEUPS | WP_META_WAKEUPS_GATED | WP_META_EXIT_CLOCKS,
				    buf);
		feed_gated(a, buf);
		feed(a, clock_rec(101, 320 * MS, WP_CLOCK_END, on, rq[k], buf));
		wp_account_finish(a, START + 320 * MS);
		t = wp_account_threads(a, &n);
		if (!k)
			ok(t && near(t->runnable_ns, run + 20 * run, 2) && t->on_cpu_ns == on,
			   "gated, anchored: none of the unrecorded waits runnable at the kernel's 0");
		else
			ok(t && near(t->runnable_ns, run + 20 * run + 11 * off, 2) &&
			   t->on_cpu_ns == on,
			   "gated, anchored: all of them at the kernel's 1 s, no more");
		wp_account_free(a);
	}
}

/*
 * Wake-ups recorded throughout, not gated: 10 waits of 4 ms with their
 * wake-up, 1 ms runnable each; then one with none, switched in after
 * another thread (the kernel reported no wake-up: estimated from the 10,
 * counted as dropped); then one with none switched in after the idle task
 * (this VM reports nothing of an idle CPU: blocked until the switch-in).
 */
static void test_wakeups_dropped(void)
{
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	const struct wp_thread_times *t;
	struct wp_wakeup_estimate e;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	a = wakeups_account(WP_META_WAKEUPS, buf);
	feed(a, switch_rec(101, MS, false, false, buf));
	for (uint64_t i = 0; i < 12; i++) {
		uint64_t base = 10 * MS + i * 10 * MS;

		feed(a, switch_rec(101, base, true, false, buf));
		if (i < 10) {
			wp_account_wakeup(a, 101, START + base + 3 * MS, &writer);
			wp_account_enqueued(a, 101, START + base + 3 * MS);
		}
		if (i == 11)
			feed(a, switch_in_after(101, 0, base + 4 * MS, buf));
		else
			feed(a, switch_rec(101, base + 4 * MS, false, false, buf));
	}
	wp_account_finish(a, START + 130 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "dropped: one thread");
	is_u64(t->runnable_ns, MS + 10 * MS + MS,
	       "dropped: runnable from creation, in the 10, and the estimate's 1 ms");
	is_u64(t->blocked_ns, 10 * 3 * MS + 3 * MS + 4 * MS,
	       "dropped: the rest blocked, the wait switched in after the idle task all of it");
	is_u64(t->wakeups, 11, "dropped: the 10 and the one the kernel did not report");
	wp_account_wakeup_estimate(a, &e);
	ok(!e.gated && e.waits == 1 && e.dropped == 1 && e.waits_ns == 4 * MS && e.seen == 10 &&
	   e.runnable_ns == MS, "dropped: the estimate says what it did");
	wp_account_free(a);
}

/*
 * The estimate's stacks add up to their thread: 10 recorded waits of 4 ms
 * (1 ms runnable), then two the kernel reported no wake-up of, 1 ms in
 * stack B and 20 ms in stack C.  The thread moves the lesser of its share
 * (a quarter of 21 ms) and the mean length (1 ms a wait): 2 ms, which its
 * stacks share by their time; split stack by stack, the lesser of each
 * would move 1.25 ms.
 */
static void test_wakeups_dropped_stacks(void)
{
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	const uint64_t gap[2] = { MS, 20 * MS };
	const struct wp_stack_weight *b, *c, *w;
	const struct wp_thread_times *t;
	uint64_t base = 10 * MS, stacks = 0;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	a = wakeups_account(WP_META_WAKEUPS, buf);
	feed(a, switch_rec(101, MS, false, false, buf));
	for (uint64_t i = 0; i < 10; i++, base += 10 * MS) {
		feed(a, switch_rec(101, base, true, false, buf));
		wp_account_wakeup(a, 101, START + base + 3 * MS, &writer);
		wp_account_enqueued(a, 101, START + base + 3 * MS);
		feed(a, switch_rec(101, base + 4 * MS, false, false, buf));
	}
	for (int i = 0; i < 2; i++, base += 30 * MS) {
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + base, true, i ? STACK_C : STACK_B);
		feed(a, switch_rec(101, base, true, false, buf));
		feed(a, switch_rec(101, base + gap[i], false, false, buf));
	}
	wp_account_finish(a, START + base);
	t = wp_account_threads(a, &n);
	b = weight_of(a, STACK_B);
	c = weight_of(a, STACK_C);
	w = wp_account_stacks(a, &n);
	for (size_t i = 0; i < n; i++)
		stacks += w[i].runnable_ns;
	ok(t && b && c && t->runnable_ns == MS + 10 * MS + 2 * MS && stacks == t->runnable_ns,
	   "dropped, two stacks: the thread moves 2 ms, its stacks as much");
	ok(b && c && b->runnable_ns == 2 * MS / 21 && c->runnable_ns == 2 * MS - 2 * MS / 21,
	   "dropped, two stacks: by their time");
	wp_account_free(a);
}

/*
 * sched_switch before the switch records: the records take its time when it
 * is the same switch (same direction, at most 2 ms before), else their own.
 */
static void test_sched_switch(void)
{
	const struct wp_thread_times *t;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	a = new_account(0, 0, 0);
	feed(a, task_rec(PERF_RECORD_FORK, 101, 0, buf));
	wp_account_sched_switch(a, 0, 101, START + 2 * MS - 20000, UINT32_MAX);
	feed(a, switch_rec(101, 2 * MS, false, false, buf));		/* in at 1.98 ms */
	wp_account_sched_switch(a, 101, 0, START + 10 * MS - 30000, UINT32_MAX);
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 10 * MS - 10000, true, STACK_B);
	feed(a, switch_rec(101, 10 * MS, true, false, buf));		/* out at 9.97 ms */
	wp_account_sched_switch(a, 0, 101, START + 12 * MS, UINT32_MAX);
	feed(a, switch_rec(101, 15 * MS, false, false, buf));		/* 3 ms: another's */
	wp_account_sched_switch(a, 0, 101, START + 19 * MS, UINT32_MAX);		/* in, not out */
	feed(a, switch_rec(101, 20 * MS, true, true, buf));
	wp_account_sched_switch(a, 999, 101, START + 21 * MS, UINT32_MAX);	/* 999: not recorded */
	feed(a, switch_rec(101, 21 * MS + 40000, false, false, buf));
	wp_account_finish(a, START + 30 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 1, "sched_switch: one thread (the unknown one is not made)");
	is_u64(t->on_cpu_ns, (10 * MS - 30000) - (2 * MS - 20000) + 5 * MS + (30 * MS - 21 * MS),
	       "sched_switch: on-CPU from the sched_switch times, else the records'");
	is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->runnable_ns + t->preempted_ns,
	       "sched_switch: wall = on + blocked + runnable + preempted");
	is_u64(t->preempted_ns, (2 * MS - 20000) + 1 * MS,
	       "sched_switch: waiting from its creation to 1.98 ms, and from 20 to 21 ms");
	wp_account_free(a);
}

/* A THREAD_CLOCK record of tid at start + t (layout.h). */
static const struct perf_event_header *clock_rec(uint32_t tid, uint64_t t, uint16_t when,
						 uint64_t on, uint64_t rq, uint8_t *buf)
{
	struct wp_buf b = { 0 };

	wp_thread_clock_append(&b, when, 100, tid, START + t, on, rq, 1);
	memcpy(buf, b.data, b.len);
	wp_buf_release(&b);
	return (const void *)buf;
}

/*
 * The kernel's figures anchor a thread's total.  101 is born at 0, runs
 * 100 slices of 100 us, each switched in by its record 10 us after the
 * switch (the records say 9 ms on), preempted between; the kernel says
 * 10 ms at its exit, and 5 ms on a run queue (which does not anchor:
 * see anchor_times).  102 lives through the
 * recording (start and end figures), its records exact.  103, born,
 * has no figures: it moves by the mean lag of its 100 late switch-ins.
 */
static void test_anchors(void)
{
	const struct wp_thread_times *t;
	struct wp_anchor_summary sum;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	a = wakeups_account(WP_META_WAKEUPS | WP_META_EXIT_CLOCKS, buf);
	feed(a, task_rec(PERF_RECORD_FORK, 103, 0, buf));
	{
		struct wp_record_thread th = {
			.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
			.pid = 100, .tid = 102, .time = START,
		};

		feed(a, &th.header);	/* alive when recording began */
	}
	feed(a, clock_rec(102, 0, WP_CLOCK_START, 50 * MS, 7 * MS, buf));
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t base = 1 * MS + i * 200000;

		feed(a, switch_rec(101, base + 10000, false, false, buf));
		feed(a, switch_rec(101, base + 100000, true, true, buf));
		feed(a, switch_rec(103, base + 10000, false, false, buf));
		feed(a, switch_rec(103, base + 100000, true, true, buf));
	}
	feed(a, switch_rec(102, 5 * MS, true, false, buf));
	feed(a, switch_rec(102, 8 * MS, false, false, buf));
	feed(a, task_rec(PERF_RECORD_EXIT, 101, 22 * MS, buf));
	feed(a, clock_rec(101, 23 * MS, WP_CLOCK_EXIT, 10 * MS, 5 * MS, buf));
	feed(a, clock_rec(102, 30 * MS, WP_CLOCK_END, 50 * MS + 27 * MS, 7 * MS, buf));
	wp_account_finish(a, START + 30 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 3, "anchors: three threads");
	if (n != 3)
		goto out;
	is_u64(t[0].on_cpu_ns, 10 * MS, "anchors: 101's on-CPU is the kernel's at its exit");
	is_int(t[0].on_cpu_source, WP_ON_CPU_KERNEL, "anchors: 101 anchored");
	is_int(t[0].on_cpu_moved_ns, (long long)MS, "anchors: 101 moved 1 ms into on-CPU");
	/*
	 * Not the kernel's 5 ms: its records' 13 ms (1.01 ms from its birth,
	 * 99 preemptions of 110 us, 1.1 ms after the last slice), less the
	 * 1 ms its late switch-ins gave on-CPU time.
	 */
	is_u64(t[0].runnable_ns + t[0].preempted_ns, 12 * MS,
	       "anchors: 101's run queue time is its records', not the kernel's figure");
	is_u64(t[0].wall_ns, t[0].on_cpu_ns + t[0].blocked_ns + t[0].runnable_ns +
	       t[0].preempted_ns, "anchors: 101's wall = on + blocked + runnable + preempted");
	is_u64(t[1].on_cpu_ns, 27 * MS, "anchors: 102's on-CPU is the kernel's, its records' too");
	is_int(t[1].on_cpu_moved_ns, 0, "anchors: 102 moved nothing");
	is_int(t[2].on_cpu_source, WP_ON_CPU_ESTIMATED, "anchors: 103 has no figures: estimated");
	is_u64(t[2].on_cpu_ns, 10 * MS,
	       "anchors: 103 moved by 101's mean lag, 10 us a late switch-in");
	is_u64(t[2].wall_ns, t[2].on_cpu_ns + t[2].blocked_ns + t[2].runnable_ns +
	       t[2].preempted_ns, "anchors: 103's wall = on + blocked + runnable + preempted");
	wp_account_anchor_summary(a, &sum);
	ok(sum.anchored == 2 && sum.estimated == 1 && sum.anchored_moved_ns == (int64_t)MS,
	   "anchors: the summary counts them");
out:
	wp_account_free(a);
}

/*
 * A --time window anchored to the figures around its ends.  102 lives
 * through the recording and runs 0.5 ms of every ms by its records, but
 * the kernel counts 0.5 ms a ms in 0-10 and 20-40 ms and 0.7 in 10-20:
 * figures at 0, 10, 20, 30 and 40 ms.  A window at the figures (10-30)
 * is the kernel's exactly, 12 ms; one between them (15-25) shares each
 * second's figures by the records' progress (3.5 + 2.5 ms) within what
 * the time allows: the kernel's figure at 15 ms is between 107 and 110
 * ms, at 25 between 112 and 117, so 6 ms within 4.
 */
static void test_window_anchors(void)
{
	static const uint64_t figure[] = { 100, 105, 112, 117, 122 };	/* ms, at 0, 10, ..., 40 */

	for (int pass = 0; pass < 2; pass++) {
		struct wp_account *a = new_account(pass ? 15 * MS : 10 * MS, pass ? 25 * MS : 30 * MS,
						   0);
		struct wp_record_thread th = {
			.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
			.pid = 100, .tid = 102, .time = START,
		};
		const struct wp_thread_times *t;
		uint8_t buf[256];
		size_t n;

		if (!a) {
			ok(false, "window anchors: an account");
			return;
		}
		feed(a, &th.header);
		for (uint64_t i = 0; i < 40; i++) {
			if (i % 10 == 0)
				feed(a, clock_rec(102, i * MS, i ? WP_CLOCK_DURING : WP_CLOCK_START,
						  figure[i / 10] * MS, 0, buf));
			feed(a, switch_rec(102, i * MS + 1, false, false, buf));
			feed(a, switch_rec(102, i * MS + MS / 2 + 1, true, true, buf));
		}
		feed(a, clock_rec(102, 40 * MS, WP_CLOCK_END, figure[4] * MS, 0, buf));
		wp_account_finish(a, START + 40 * MS);
		t = wp_account_threads(a, &n);
		if (n != 1) {
			ok(false, "window anchors: one thread (%zu)", n);
			wp_account_free(a);
			return;
		}
		if (!pass) {
			is_u64(t->on_cpu_ns, 12 * MS, "window at the figures: the kernel's 12 ms");
			is_int(t->on_cpu_source, WP_ON_CPU_KERNEL, "window at the figures: anchored");
			ok(t->on_cpu_bound_ns <= 2, "window at the figures: exact (%llu ns)",
			   (unsigned long long)t->on_cpu_bound_ns);
		} else {
			ok(t->on_cpu_ns >= 6 * MS - 2 && t->on_cpu_ns <= 6 * MS + 2,
			   "window between figures: 6 ms as the records progress (%llu ns)",
			   (unsigned long long)t->on_cpu_ns);
			ok(t->on_cpu_bound_ns >= 4 * MS - 2 && t->on_cpu_bound_ns <= 4 * MS + 2,
			   "window between figures: within 4 ms, what the time allows (%llu ns)",
			   (unsigned long long)t->on_cpu_bound_ns);
			is_int(t->on_cpu_source, WP_ON_CPU_ESTIMATED, "window between figures: estimated");
		}
		is_u64(t->wall_ns, t->on_cpu_ns + t->blocked_ns + t->runnable_ns + t->preempted_ns,
		       "window anchors: wall = on + blocked + runnable + preempted");
		wp_account_free(a);
	}
}

static void test_exact_distribution(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_stack_weight *wa, *wb;
	uint8_t buf[256];

	/* 3 samples over 10 ns of on-CPU time: 2/3 and 1/3, summing exactly. */
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 1, false, STACK_A);
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 2, false, STACK_A);
	wp_account_sample(a, 100, 101, WP_NO_CPU, START + 3, false, STACK_B);
	feed(a, switch_rec(101, 10, true, false, buf));
	wp_account_finish(a, START + 10);
	wa = weight_of(a, STACK_A);
	wb = weight_of(a, STACK_B);
	ok(wa && wb, "distribution: both stacks weighed");
	if (wa && wb) {
		is_u64(wa->on_cpu_ns + wb->on_cpu_ns, 10, "distribution: parts add up exactly");
		is_u64(wa->on_cpu_ns, 7, "distribution: the remainder goes to the biggest");
	}
	wp_account_free(a);
}

static void test_lost(void)
{
	struct wp_account *a = new_account(0, 0, 0);
	const struct wp_thread_times *t;
	uint8_t buf[256];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = 100, .tid = 101, .time = START + 20 * MS, .id = 7 };
	uint64_t lost[2] = { 7, 3 };
	size_t n;

	feed_basic(a);
	h->type = PERF_RECORD_LOST;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(lost) + wp_sample_id_size(&fmt));
	memcpy(h + 1, lost, sizeof(lost));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(lost));
	feed(a, h);
	wp_account_finish(a, START + 50 * MS);
	t = wp_account_threads(a, &n);
	ok(t->approximate, "lost: the live thread is marked approximate");
	is_u64(wp_account_lost(a), 3, "lost: the count is taken from the record");
	wp_account_free(a);
}

/* --- memory --- */

/* The process's peak resident memory so far, in KiB. */
static long peak_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/*
 * 100000 threads of one process that each run a few microseconds, block
 * once and exit, as servers that start a thread per request make them:
 * what each costs, at its peak (measured in a child, whose memory nothing
 * else has used yet).  Each needs a few counters and a few histogram
 * buckets, not three histograms of 64 buckets and copies of them.
 */
#ifdef __SANITIZE_ADDRESS__
#define MEMORY_BOUND 4096	/* redzones, and every outgrown copy of the arrays held in quarantine */
#else
#define MEMORY_BOUND 1024
#endif

static void test_memory_per_thread(void)
{
	enum { THREADS = 100000 };
	long per = -1;
	int fds[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(fds) || (pid = fork()) < 0) {
		ok(false, "memory: cannot fork to measure");
		return;
	}
	if (!pid) {
		struct wp_account *a = new_account(0, 0, 0);
		uint8_t buf[256];
		long before = peak_kib(), bytes;

		for (uint32_t i = 0; i < THREADS; i++) {
			uint64_t t = (uint64_t)i * 1000;

			feed(a, task_rec(PERF_RECORD_FORK, 1000 + i, t + 1, buf));
			feed(a, switch_rec(1000 + i, t + 2, false, false, buf));
			feed(a, switch_rec(1000 + i, t + 5, true, false, buf));
			feed(a, switch_rec(1000 + i, t + 7, false, false, buf));
			feed(a, task_rec(PERF_RECORD_EXIT, 1000 + i, t + 9, buf));
		}
		wp_account_finish(a, START + (uint64_t)THREADS * 1000);
		bytes = (peak_kib() - before) * 1024 / THREADS;
		wp_account_free(a);
		_exit(write(fds[1], &bytes, sizeof(bytes)) == sizeof(bytes) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &per, sizeof(per)) != sizeof(per))
		per = -1;
	close(fds[0]);
	waitpid(pid, NULL, 0);
	diag("%ld bytes per short thread at the peak", per);
	ok(per >= 0 && per < MEMORY_BOUND, "memory: a short thread costs less than %d bytes (%ld)",
	   MEMORY_BOUND, per);
}

/* --- order --- */

static uint64_t delivered[16];
static int nr_delivered;

static int collect(const struct perf_event_header *rec, const struct wp_sample *s,
		   uint64_t time, void *arg)
{
	(void)rec;
	(void)s;
	(void)arg;
	if (nr_delivered < 16)
		delivered[nr_delivered++] = time;
	return 0;
}

static void test_order(void)
{
	/* Two rings read in turn: times interleave across passes. */
	static const uint64_t pass1[] = { 10, 11, 30, 5, 6 };
	static const uint64_t pass2[] = { 31, 7, 32, 12 };
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	struct wp_order *o;
	uint8_t buf[256];
	bool sorted = true;

	wp_order_new(&fmt, collect, NULL, NULL, &o);
	for (size_t i = 0; i < sizeof(pass1) / sizeof(pass1[0]); i++)
		wp_order_push(o, switch_rec(101, pass1[i], true, false, buf), NULL, 0);
	wp_order_push(o, &round, NULL, 0);
	is_int(nr_delivered, 0, "order: nothing is released after the first round");
	for (size_t i = 0; i < sizeof(pass2) / sizeof(pass2[0]); i++)
		wp_order_push(o, switch_rec(101, pass2[i], true, false, buf), NULL, 0);
	wp_order_push(o, &round, NULL, 0);
	is_int(nr_delivered, 7, "order: the second round releases all up to the first round's newest");
	wp_order_flush(o);
	is_int(nr_delivered, 9, "order: flush releases the rest");
	for (int i = 1; i < nr_delivered; i++)
		sorted &= delivered[i - 1] <= delivered[i];
	ok(sorted, "order: delivered in time order");
	is_u64(wp_order_late(o), 0, "order: nothing late");
	wp_order_free(o);
}

/* Delivery checks for the bound: times must not go back, memory stays within. */
struct bounded {
	struct wp_order *o;
	uint64_t n, last, backwards;
};

static int count_bounded(const struct perf_event_header *rec, const struct wp_sample *s,
			 uint64_t time, void *arg)
{
	struct bounded *b = arg;

	(void)s;
	(void)rec;
	b->n++;
	if (time < b->last)
		b->backwards++;
	b->last = time;
	return 0;
}

static void release_hold(void *hold)
{
	(*(uint64_t *)hold)++;
}

/* What the queue delivered of the samples of test_order_parsed. */
static struct {
	unsigned int n, parsed, inside;
	uint64_t times[4];
} got;

static int check_parsed(const struct perf_event_header *rec, const struct wp_sample *s,
			uint64_t time, void *arg)
{
	const uint8_t *r = (const void *)rec;

	(void)arg;
	if (got.n < 4)
		got.times[got.n] = time;
	got.n++;
	if (!s)
		return 0;
	got.parsed++;
	/* The parsed form points into the record delivered with it. */
	if ((const uint8_t *)s->callchain > r && (const uint8_t *)s->callchain < r + rec->size)
		got.inside++;
	return 0;
}

/* A sample of tid at t with a one-address callchain, in buf. */
static struct perf_event_header *sample_rec(uint32_t tid, uint64_t t, uint64_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t pid_tid[2] = { 100, tid };

	buf[1] = 1;			/* IDENTIFIER */
	buf[2] = 0x401000;		/* IP */
	memcpy(&buf[3], pid_tid, 8);	/* TID */
	buf[4] = t;			/* TIME */
	buf[5] = 1;			/* CALLCHAIN: nr */
	buf[6] = 0x401000;
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = 7 * 8;
	return h;
}

static void test_order_parsed(void)
{
	struct wp_sample_format sfmt;
	uint64_t held[2][7], copied[7], cut[7];
	struct perf_event_header *h;
	uint64_t hold = 0;
	struct wp_order *o;

	wp_sample_format_init(&sfmt, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN, 0);
	wp_order_new(&sfmt, check_parsed, NULL, release_hold, &o);
	/* Held in place, and copied; then one cut short of its callchain. */
	wp_order_push(o, sample_rec(101, 30, held[0]), &hold, sizeof(held));
	wp_order_push(o, sample_rec(101, 10, copied), NULL, 0);
	wp_order_push(o, sample_rec(101, 20, held[1]), &hold, sizeof(held));
	h = sample_rec(101, 40, cut);
	h->size = 6 * 8;
	wp_order_push(o, h, NULL, 0);
	wp_order_flush(o);
	is_int((int)got.n, 4, "order parsed: every sample delivered");
	is_int((int)got.parsed, 3, "order parsed: the well-formed ones with their parsed form");
	is_int((int)got.inside, 3, "order parsed: pointing into the delivered records");
	ok(got.times[0] == 10 && got.times[1] == 20 && got.times[2] == 30 && got.times[3] == 40,
	   "order parsed: in time order, the malformed one by the time it has");
	is_u64(hold, 2, "order parsed: both holds released");
	wp_order_free(o);
}

#define HELD_RECORDS 50000
static uint64_t held_recs[HELD_RECORDS][5];	/* 40-byte SWITCH records */
static uint64_t holds[HELD_RECORDS / 1000];	/* releases of each hold */

static void test_order_bound(void)
{
	struct bounded b = { 0 };
	uint8_t buf[256];
	uint64_t held = 0;
	const size_t bound = 16U << 20;
	bool within = true;

	/* No ROUND at all: copies, in time order, many times the bound. */
	wp_order_new(&fmt, count_bounded, &b, NULL, &b.o);
	wp_order_set_bound(b.o, bound);
	for (uint64_t i = 0; i < 2000000; i++) {
		wp_order_push(b.o, switch_rec(101, i, true, false, buf), NULL, 0);
		within &= wp_order_bytes(b.o) <= bound;
	}
	ok(within, "order bound: copies never hold more than the bound");
	ok(b.n > 1000000, "order bound: without rounds, records leave before the end (%" PRIu64
	   " of 2000000)", b.n);
	wp_order_flush(b.o);
	is_u64(b.n, 2000000, "order bound: every record is delivered once");
	is_u64(b.backwards, 0, "order bound: in time order");
	is_u64(wp_order_late(b.o), 0, "order bound: nothing late");
	ok(wp_order_early(b.o) > 0, "order bound: the early ones are counted");
	wp_order_free(b.o);

	/*
	 * Records left in held memory, 4 MiB per hold and a new hold every
	 * 1000 records, newest first: those the bound makes leave early are
	 * older than every later one, which then count as late.
	 */
	memset(&b, 0, sizeof(b));
	wp_order_new(&fmt, count_bounded, &b, release_hold, &b.o);
	wp_order_set_bound(b.o, bound);
	within = true;
	for (uint64_t i = 0; i < HELD_RECORDS; i++) {
		memcpy(held_recs[i], switch_rec(101, HELD_RECORDS - i, true, false, buf), 40);
		wp_order_push(b.o, (void *)held_recs[i], &holds[i / 1000], 4U << 20);
		within &= wp_order_bytes(b.o) <= bound;
	}
	wp_order_flush(b.o);
	for (size_t i = 0; i < HELD_RECORDS / 1000; i++)
		held += holds[i];
	ok(within, "order bound: held memory counts against the bound");
	is_u64(b.n, HELD_RECORDS, "order bound: every held record is delivered once");
	is_u64(held, HELD_RECORDS, "order bound: every hold is released once per record");
	ok(wp_order_late(b.o) > 0, "order bound: records older than released ones count as late");
	is_u64(wp_order_bytes(b.o), 0, "order bound: nothing held after the flush");
	wp_order_free(b.o);
}

static void test_order_span(void)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	struct wp_order *o;
	uint8_t buf[256];

	nr_delivered = 0;
	wp_order_new(&fmt, collect, NULL, NULL, &o);
	wp_order_set_span(o, START, START + 100 * MS);
	wp_order_push(o, switch_rec(101, 50 * MS, true, false, buf), NULL, 0);
	/* Just outside: given the nearer end, not counted. */
	wp_order_push(o, switch_rec(101, 100 * MS + 1, true, false, buf), NULL, 0);
	/* Far outside: damaged. */
	wp_order_push(o, switch_rec(101, UINT64_MAX - START, true, false, buf), NULL, 0);
	wp_order_push(o, switch_rec(101, 5000 * MS, true, false, buf), NULL, 0);
	wp_order_push(o, &round, NULL, 0);
	wp_order_flush(o);
	is_int(nr_delivered, 4, "order span: every record delivered");
	is_u64(delivered[0], START + 50 * MS, "order span: a time inside stays");
	is_u64(delivered[1], START + 100 * MS, "order span: one just after the end gets the end");
	is_u64(delivered[2], START + 100 * MS, "order span: 2^64 ns gets the end");
	is_u64(delivered[3], START + 100 * MS, "order span: 5 s after the start gets the end");
	is_u64(wp_order_impossible(o), 2, "order span: the two far outside are impossible");
	wp_order_free(o);
}

/* What an observer was told: the periods and samples, in the order they came. */
#define OBSERVED_MAX 32
static struct {
	struct wp_period p[OBSERVED_MAX];
	uint32_t waker_tid[OBSERVED_MAX];	/* of p[i].waker; UINT32_MAX: none */
	uint32_t tid[OBSERVED_MAX];		/* of p[i].thread */
	unsigned int n;
	uint64_t sample_time[OBSERVED_MAX];
	uint32_t sample_stack[OBSERVED_MAX];
	unsigned int samples;
} seen;

static void see_period(void *arg, const struct wp_period *p)
{
	(void)arg;
	if (seen.n == OBSERVED_MAX)
		return;
	seen.waker_tid[seen.n] = p->waker ? p->waker->tid : UINT32_MAX;
	seen.tid[seen.n] = p->thread->tid;
	seen.p[seen.n] = *p;
	/* Borrowed for the call only. */
	seen.p[seen.n].thread = NULL;
	seen.p[seen.n++].waker = NULL;
}

static void see_sample(void *arg, const struct wp_thread_times *t, uint64_t time, uint32_t stack)
{
	(void)arg;
	(void)t;
	if (seen.samples == OBSERVED_MAX)
		return;
	seen.sample_time[seen.samples] = time;
	seen.sample_stack[seen.samples++] = stack;
}

/*
 * The observer is told each period as it is counted: with wake-ups, a new
 * thread runnable 0-2 ms, on 2-5, blocked in B 5-15 (a writer woke it),
 * runnable 15-18, on 18-20, blocked 20-40 (a timer), runnable 40-42, on
 * 42-50 with a sample at 43; seen whole, and through a 3-45 ms window
 * with a 5 ms --min-block.
 */
static void test_observer(void)
{
	static const struct {
		enum wp_period_kind kind;
		uint64_t start, end;
		uint32_t stack, waker_tid;
	} whole[] = {
		{ WP_PERIOD_RUNNABLE, 0, 2, UNKNOWN, UINT32_MAX },
		{ WP_PERIOD_ON, 2, 5, UINT32_MAX, UINT32_MAX },
		{ WP_PERIOD_BLOCKED, 5, 15, STACK_B, 102 },
		{ WP_PERIOD_RUNNABLE, 15, 18, STACK_B, UINT32_MAX },
		{ WP_PERIOD_ON, 18, 20, UINT32_MAX, UINT32_MAX },
		{ WP_PERIOD_BLOCKED, 20, 40, STACK_B, 0 },
		{ WP_PERIOD_RUNNABLE, 40, 42, STACK_B, UINT32_MAX },
		{ WP_PERIOD_ON, 42, 50, UINT32_MAX, UINT32_MAX },
	};
	struct wp_waker writer = { .pid = 100, .tid = 102, .stack = 20, .kind = WP_WAKER_THREAD };
	struct wp_waker timer = { .stack = 21, .kind = WP_WAKER_TIMER };
	struct wp_account_observer obs = { .period = see_period, .sample = see_sample };
	struct wp_account_opts o = { .unsampled_stack = UNSAMPLED, .unknown_stack = UNKNOWN,
				     .observer = &obs };
	const struct wp_thread_times *t;
	uint64_t sum[4];
	bool same, back_to_back, shorts;
	uint8_t buf[256];

	meta.flags |= WP_META_WAKEUPS;
	for (int pass = 0; pass < 2; pass++) {
		struct wp_account *a;
		size_t n;

		if (pass) {
			o.window_start = START + 3 * MS;
			o.window_end = START + 45 * MS;
			o.min_block_ns = 5 * MS;
		}
		memset(&seen, 0, sizeof(seen));
		if (wp_account_new(&meta, &o, &a)) {
			ok(false, "observer: a new accounting");
			break;
		}
		feed(a, task_rec(PERF_RECORD_FORK, 101, 0, buf));
		feed(a, switch_rec(101, 2 * MS, false, false, buf));
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + 5 * MS, true, STACK_B);
		feed(a, switch_rec(101, 5 * MS, true, false, buf));
		wp_account_wakeup(a, 101, START + 15 * MS, &writer);
		feed(a, switch_rec(101, 18 * MS, false, false, buf));
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + 20 * MS, true, STACK_B);
		feed(a, switch_rec(101, 20 * MS, true, false, buf));
		wp_account_wakeup(a, 101, START + 40 * MS, &timer);
		feed(a, switch_rec(101, 42 * MS, false, false, buf));
		wp_account_sample(a, 100, 101, WP_NO_CPU, START + 43 * MS, false, STACK_A);
		wp_account_finish(a, START + 50 * MS);
		t = wp_account_threads(a, &n);
		memset(sum, 0, sizeof(sum));
		same = seen.n == (pass ? 7 : 8);
		back_to_back = true;
		shorts = true;
		for (unsigned int i = 0; i < seen.n; i++) {
			const struct wp_period *p = &seen.p[i];
			unsigned int k = pass ? i + 1 : i;	/* the window drops the first */
			uint64_t from = whole[k].start * MS, to = whole[k].end * MS;

			if (pass) {
				from = from < 3 * MS ? 3 * MS : from;
				to = to > 45 * MS ? 45 * MS : to;
			}
			same = same && k < 8 && p->kind == whole[k].kind &&
			       p->start_ns == START + from && p->end_ns == START + to &&
			       p->stack == whole[k].stack && seen.waker_tid[i] == whole[k].waker_tid &&
			       seen.tid[i] == 101;
			if (i && p->start_ns != seen.p[i - 1].end_ns)
				back_to_back = false;
			/* --min-block: measured over the whole stretch, the window aside. */
			if (p->short_off != (pass && p->kind != WP_PERIOD_ON &&
					     (whole[k].end - whole[k].start) * MS < 5 * MS))
				shorts = false;
			sum[p->kind] += p->end_ns - p->start_ns;
		}
		ok(same, "observer%s: each period, its kind, stack and waker",
		   pass ? " (window)" : "");
		ok(back_to_back, "observer%s: back to back", pass ? " (window)" : "");
		ok(shorts, "observer%s: short off-CPU periods are marked", pass ? " (window)" : "");
		ok(n == 1 && sum[WP_PERIOD_ON] == t->on_cpu_ns &&
		   sum[WP_PERIOD_BLOCKED] == t->blocked_ns &&
		   sum[WP_PERIOD_RUNNABLE] == t->runnable_ns &&
		   sum[WP_PERIOD_PREEMPTED] == t->preempted_ns,
		   "observer%s: the periods add up to the thread's times", pass ? " (window)" : "");
		ok(seen.samples == 1 && seen.sample_time[0] == START + 43 * MS &&
		   seen.sample_stack[0] == STACK_A, "observer%s: the on-CPU sample",
		   pass ? " (window)" : "");
		ok(n == 1 && t->serial == 0, "observer%s: the thread's serial", pass ? " (window)" : "");
		wp_account_free(a);
	}
	meta.flags &= ~WP_META_WAKEUPS;
}

/*
 * Sampled switch-out stacks (record --switch-stacks): 60 blocked intervals
 * of thread 101, 8 ms (site A) and 2 ms (site B) in turn, of which only
 * every fourth long one and every eighth short one has its stack; then
 * one of 32 ms, a length no sampled interval had.  The unsampled time of
 * each length goes to the stack sampled at that length (a plain ratio
 * would give A 120/136 of it all); the 32 ms one in proportion to the
 * sampled time.  Thread 102 has no sampled stack: its time stays put.
 */
#define NOT_SAMPLED 3
static void test_switch_estimate(void)
{
	struct wp_account_opts o = {
		.unsampled_stack = UNSAMPLED,
		.unknown_stack = UNKNOWN,
		.switch_stacks_sampled = true,
		.unsampled_switch_stack = NOT_SAMPLED,
	};
	const struct wp_stack_weight *wa, *wb, *wn;
	const struct wp_thread_times *th;
	struct wp_switch_estimate e;
	struct wp_account *a;
	uint64_t t = MS, sampled_a = 0, sampled_b = 0, big_a, big_b;
	uint8_t buf[256];
	size_t n;

	if (wp_account_new(&meta, &o, &a)) {
		ok(0, "estimate: an account");
		return;
	}
	for (int i = 0; i < 60; i++) {
		bool longer = !(i % 2);
		uint64_t d = longer ? 8 * MS : 2 * MS;

		if (longer && i % 4 == 0) {
			wp_account_sample(a, 100, 101, WP_NO_CPU, START + t, true, STACK_A);
			sampled_a += d;
		} else if (!longer && i % 8 == 1) {
			wp_account_sample(a, 100, 101, WP_NO_CPU, START + t, true, STACK_B);
			sampled_b += d;
		}
		feed(a, switch_rec(101, t, true, false, buf));
		feed(a, switch_rec(101, t + d, false, false, buf));
		t += d + MS;
	}
	feed(a, switch_rec(101, t, true, false, buf));
	feed(a, switch_rec(101, t + 32 * MS, false, false, buf));
	t += 33 * MS;
	feed(a, switch_rec(102, MS, true, false, buf));
	feed(a, switch_rec(102, 5 * MS, false, false, buf));
	wp_account_finish(a, START + t);
	th = wp_account_threads(a, &n);
	wa = weight_of(a, STACK_A);
	wb = weight_of(a, STACK_B);
	is_u64(sampled_a, 15 * 8 * MS, "estimate: 15 long intervals sampled");
	is_u64(sampled_b, 8 * 2 * MS, "estimate: 8 short ones sampled");
	/* the 32 ms in proportion to the sampled time, the remainder to A */
	big_b = (uint64_t)((unsigned __int128)(32 * MS) * sampled_b / (sampled_a + sampled_b));
	big_a = 32 * MS - big_b;
	ok(wa && wa->blocked_ns == 30 * 8 * MS + big_a,
	   "estimate: A has every 8 ms interval, and its share of the 32 ms one");
	ok(wb && wb->blocked_ns == 30 * 2 * MS + big_b,
	   "estimate: B has every 2 ms interval, and its share of the 32 ms one");
	ok(wa && wb && wa->blocked_count + wb->blocked_count == 61,
	   "estimate: the intervals are counted once");
	ok(wa && wa->estimated_ns[0] == wa->blocked_ns - sampled_a,
	   "estimate: A's estimated part is what was not sampled");
	ok(wb && wb->estimated_ns[0] == wb->blocked_ns - sampled_b,
	   "estimate: B's estimated part likewise");
	for (size_t i = 0; i < n; i++) {
		if (th[i].tid == 101) {
			is_u64(th[i].blocked_ns, 30 * 8 * MS + 30 * 2 * MS + 32 * MS,
			       "estimate: the thread's blocked time is exact");
			is_u64(th[i].switch_outs_unsampled, 61 - 23,
			       "estimate: 38 switch-outs had no stack");
		}
	}
	wn = weight_of(a, NOT_SAMPLED);
	ok(wn && wn->blocked_ns == 4 * MS,
	   "estimate: a thread with no sampled stack keeps its time unattributed");
	wp_account_switch_estimate(a, &e);
	is_u64(e.unsampled, 39, "estimate: 39 switch-outs without a stack in all");
	is_u64(e.threads, 2, "estimate: in two threads");
	is_u64(e.unattributed_ns, 4 * MS, "estimate: 4 ms left unattributed");
	is_u64(e.estimated_ns, 30 * 8 * MS + 30 * 2 * MS + 32 * MS - sampled_a - sampled_b,
	       "estimate: the rest is estimated");
	/*
	 * The strata of 8 and 2 ms held one stack each: no doubt there.  The
	 * 32 ms one had no sampled interval of its length: shared by the whole
	 * sampled time, it may have gone to either, p (1 - p) of it squared.
	 */
	{
		double p = (double)sampled_a / (double)(sampled_a + sampled_b);
		uint64_t want = (uint64_t)(2 * 32.0 * MS * sqrt(p * (1 - p)));

		ok(wa && near(wp_stack_weight_error_ns(wa, 0), want, want / 1000),
		   "estimate: A's bound is the unmatched 32 ms one's spread (%" PRIu64 " ns, want %"
		   PRIu64 ")", wa ? wp_stack_weight_error_ns(wa, 0) : 0, want);
		ok(wb && near(wp_stack_weight_error_ns(wb, 0), want, want / 1000),
		   "estimate: B's likewise");
		is_u64(e.max_error_ns, want, "estimate: the largest bound, said in the summary");
	}
	wp_account_free(a);
}

/*
 * Intervals of one length, A's and B's in turn, a quarter of each kept:
 * how the unsampled half splits is known to within the spread of the
 * draws, sqrt(n/(n-1) x 1/4 / n) of the unsampled time, where n = 18:
 * the strata start at the first unsampled switch-out (strata_note).
 */
static void test_switch_estimate_bound(void)
{
	struct wp_account_opts o = {
		.unsampled_stack = UNSAMPLED,
		.unknown_stack = UNKNOWN,
		.switch_stacks_sampled = true,
		.unsampled_switch_stack = NOT_SAMPLED,
	};
	const struct wp_stack_weight *wa, *wb;
	struct wp_account *a;
	uint64_t t = MS, d = 4 * MS, want;
	uint8_t buf[256];

	if (wp_account_new(&meta, &o, &a)) {
		ok(0, "bound: an account");
		return;
	}
	for (int i = 0; i < 40; i++) {
		if (i % 4 < 2)
			wp_account_sample(a, 100, 101, WP_NO_CPU, START + t, true,
					  i % 2 ? STACK_B : STACK_A);
		feed(a, switch_rec(101, t, true, false, buf));
		feed(a, switch_rec(101, t + d, false, false, buf));
		t += d + MS;
	}
	wp_account_finish(a, START + t);
	wa = weight_of(a, STACK_A);
	wb = weight_of(a, STACK_B);
	ok(wa && wb && wa->blocked_ns == 20 * d && wb->blocked_ns == 20 * d,
	   "bound: the unsampled half shared evenly");
	want = (uint64_t)(2 * 20.0 * (double)d * sqrt(18.0 / 17 * 0.25 / 18));
	ok(wa && near(wp_stack_weight_error_ns(wa, 0), want, want / 1000),
	   "bound: two standard errors of 18 draws (%" PRIu64 " ns, want %" PRIu64 ")",
	   wa ? wp_stack_weight_error_ns(wa, 0) : 0, want);
	ok(wb && wp_stack_weight_error_ns(wb, 0) == wp_stack_weight_error_ns(wa, 0),
	   "bound: B's the same");
	wp_account_free(a);
}

/*
 * Attached to a thread idle at first: its first figure is read 100 ms
 * into the recording, it sleeps to 300 ms, runs 400 ms, sleeps to the end
 * at 1 s.  The kernel counts 400 ms between its figures, as the records
 * do: its on-CPU time is 400 ms, not the kernel's rate over the span
 * stretched over the whole second (444 ms).
 */
static void test_anchor_idle_start(void)
{
	const struct wp_thread_times *t = NULL, *all;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	a = wakeups_account(WP_META_WAKEUPS | WP_META_EXIT_CLOCKS, buf);
	if (!a) {
		ok(0, "idle start: an account");
		return;
	}
	{
		struct wp_record_thread th = {
			.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
			.pid = 100, .tid = 102, .time = START,
		};

		feed(a, &th.header);	/* alive when recording began */
	}
	feed(a, switch_rec(102, 1 * MS, true, false, buf));
	feed(a, clock_rec(102, 100 * MS, WP_CLOCK_START, 50 * MS, 0, buf));
	feed(a, switch_rec(102, 300 * MS, false, false, buf));
	feed(a, switch_rec(102, 700 * MS, true, false, buf));
	feed(a, clock_rec(102, 1000 * MS, WP_CLOCK_END, 50 * MS + 400 * MS, 0, buf));
	wp_account_finish(a, START + 1000 * MS);
	all = wp_account_threads(a, &n);
	for (size_t i = 0; all && i < n; i++)
		if (all[i].tid == 102)
			t = &all[i];
	ok(t && t->on_cpu_ns >= 400 * MS && t->on_cpu_ns <= 401 * MS,
	   "idle start: on-CPU is the 400 ms it ran (and the 1 ms before its first switch), %" PRIu64,
	   t ? t->on_cpu_ns : 0);
	ok(t && t->kernel_on_cpu_ns == 400 * MS, "idle start: the kernel's 400 ms between its figures");
	wp_account_free(a);
}

/* A COMM record: tid of process pid takes comm at start + t, by exec or not. */
static const struct perf_event_header *comm_rec(uint32_t pid, uint32_t tid, const char *comm,
						uint64_t t, bool exec, uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[2] = { pid, tid };
	char name[16] = { 0 };
	struct wp_sample_id id = { .pid = pid, .tid = tid, .time = START + t, .id = 7 };

	strncpy(name, comm, sizeof(name) - 1);
	h->type = PERF_RECORD_COMM;
	h->misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + sizeof(name) + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), name, sizeof(name));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(body) + sizeof(name));
	return h;
}

/*
 * A process's main thread execs once: 60 late switch-ins under its first
 * name, 20 under its second, and the kernel's count at its exit 1.6 ms
 * above the records'.  Anchoring makes up for late switch-ins: each name
 * takes its share of the 1.6 ms by those it saw (1.2 and 0.4 ms), not the
 * last name all of it, and the names still add up to the thread.
 */
static void test_names_anchored(void)
{
	const struct wp_thread_times *t = NULL, *all;
	struct wp_account *a;
	uint8_t buf[256];
	uint64_t rec_on[2] = { 0, 0 }, now = MS;
	size_t n;

	a = wakeups_account(WP_META_WAKEUPS | WP_META_EXIT_CLOCKS, buf);
	if (!a) {
		ok(0, "names anchored: an account");
		return;
	}
	feed(a, comm_rec(100, 100, "one", 0, true, buf));
	for (int i = 0; i < 80; i++) {
		uint64_t on = i < 60 ? 100000 : 400000;

		if (i == 60)
			feed(a, comm_rec(100, 100, "two", now, true, buf));
		feed(a, switch_rec(100, now, true, true, buf));		/* preempted */
		feed(a, switch_rec(100, now + 50000, false, false, buf));	/* back */
		rec_on[i >= 60] += on;
		now += 50000 + on;
	}
	feed(a, task_rec(PERF_RECORD_EXIT, 100, now, buf));
	feed(a, clock_rec(100, now + MS, WP_CLOCK_EXIT, 15 * MS + 1600000, 0, buf));
	wp_account_finish(a, START + now + 2 * MS);
	all = wp_account_threads(a, &n);
	for (size_t i = 0; all && i < n; i++)
		if (all[i].tid == 100)
			t = &all[i];
	ok(t && t->nr_names == 2, "names anchored: two names (%u)", t ? t->nr_names : 0);
	if (t && t->nr_names == 2) {
		diag("names: %s %" PRIu64 ", %s %" PRIu64 "; thread %" PRIu64 ", moved %lld",
		     t->names[0].comm, t->names[0].on_cpu_ns, t->names[1].comm,
		     t->names[1].on_cpu_ns, t->on_cpu_ns, (long long)t->on_cpu_moved_ns);
		is_u64(t->names[0].on_cpu_ns + t->names[1].on_cpu_ns, t->on_cpu_ns,
		       "names anchored: the names add up to the thread");
		/* The first: 1 ms from the start and its 60 slices, and 3/4 of the move. */
		ok(t->on_cpu_moved_ns > 0 &&
		   near(t->names[0].on_cpu_ns, MS + rec_on[0] + (uint64_t)t->on_cpu_moved_ns * 3 / 4,
			100000),
		   "names anchored: the first name took the move of its 60 late switch-ins of 80");

	}
	wp_account_free(a);
}

/*
 * One CPU, two threads taking turns, gated: the first 20 rounds' switches
 * have sched_switch (the switch-ins' records 65 us after it, the
 * switch-outs' 5 us), the last 20 none, and their switch-ins' records
 * come 20 us after the switch.  Timed by the mean lag, such a switch-in
 * would start 40 us before the switch-out it follows on the CPU: it
 * starts with it, so that the two threads' on-CPU time is the CPU's; in
 * a system-wide recording and in one of the two threads alone.
 */
static void test_cpu_one_at_a_time(bool cpu_wide)
{
	const uint32_t flags = WP_META_WAKEUPS | WP_META_WAKEUPS_GATED |
			       (cpu_wide ? WP_META_CPU_WIDE : 0);
	const char *what = cpu_wide ? "one CPU, -a" : "one CPU";
	const uint64_t us = 1000;
	const struct wp_thread_times *t;
	struct wp_account *a;
	uint8_t buf[256];
	size_t n;

	meta.nr_cpus = 1;
	a = wakeups_account(flags, buf);
	meta.nr_cpus = 0;
	feed(a, task_rec(PERF_RECORD_FORK, 102, 0, buf));
	feed(a, switch_rec(101, MS, false, false, buf));
	for (uint64_t i = 0; i < 40; i++) {
		uint64_t base = 10 * MS + i * MS;
		bool timed = i < 20;
		uint64_t in_lag = timed ? 60 * us : 20 * us;

		if (timed)
			wp_account_sched_switch(a, 101, 102, START + base - 5 * us, 0);
		feed(a, switch_rec(101, base, true, true, buf));
		feed(a, switch_rec(102, base + in_lag, false, false, buf));
		if (timed)
			wp_account_sched_switch(a, 102, 101, START + base + 495 * us, 0);
		feed(a, switch_rec(102, base + 500 * us, true, true, buf));
		feed(a, switch_rec(101, base + 500 * us + in_lag, false, false, buf));
	}
	wp_account_finish(a, START + 60 * MS);
	t = wp_account_threads(a, &n);
	is_int((long long)n, 2, "%s: two threads", what);
	if (n == 2)
		is_u64(t[0].on_cpu_ns + t[1].on_cpu_ns, 59 * MS,
		       "%s: the threads' on-CPU time is the CPU's, no switch-in before "
		       "the switch-out it follows", what);
	for (size_t i = 0; i < n; i++)
		is_u64(t[i].wall_ns, t[i].on_cpu_ns + t[i].blocked_ns + t[i].runnable_ns +
		       t[i].preempted_ns, "%s: wall = on + blocked + runnable + preempted", what);
	wp_account_free(a);
}

/*
 * -a on one CPU: a thread's kernel figure larger than its records (their
 * switches were lost) leaves the CPU's threads more on-CPU time than it
 * had; what fitting them back takes from the thread without figures is
 * that thread's error at most, and its bound says so.
 */
static void test_cpus_trimmed(void)
{
	const struct wp_thread_times *t;
	struct wp_anchor_summary sum;
	struct wp_account *a;
	uint64_t on = 0, idle = 0;
	uint8_t buf[256];
	size_t n, nc;

	meta.nr_cpus = 1;
	a = wakeups_account(WP_META_WAKEUPS | WP_META_EXIT_CLOCKS | WP_META_CPU_WIDE, buf);
	meta.nr_cpus = 0;
	{
		struct wp_record_thread th = {
			.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
			.pid = 100, .tid = 102, .time = START,
		};

		feed(a, &th.header);
	}
	feed(a, clock_rec(102, 0, WP_CLOCK_START, 0, 0, buf));
	feed(a, switch_rec(101, MS, false, false, buf));
	feed(a, switch_rec(101, 21 * MS, true, true, buf));
	feed(a, switch_rec(102, 21 * MS, false, false, buf));
	feed(a, switch_rec(102, 25 * MS, true, false, buf));
	feed(a, clock_rec(102, 30 * MS, WP_CLOCK_END, 20 * MS, 0, buf));
	wp_account_finish(a, START + 30 * MS);
	t = wp_account_threads(a, &n);
	for (size_t i = 0; i < n; i++)
		on += t[i].on_cpu_ns;
	{
		const struct wp_cpu_time *c = wp_account_cpus(a, &nc);

		for (size_t i = 0; i < nc; i++)
			idle += c[i].idle_ns;
	}
	wp_account_anchor_summary(a, &sum);
	ok(on + idle <= 30 * MS, "cpus trimmed: on-CPU %llu + idle %llu ns fit one CPU's 30 ms",
	   (unsigned long long)on, (unsigned long long)idle);
	ok(sum.cpus_trimmed_ns > 0, "cpus trimmed: something was taken (%llu ns)",
	   (unsigned long long)sum.cpus_trimmed_ns);
	for (size_t i = 0; i < n; i++) {
		if (t[i].tid != 101)
			continue;
		ok(t[i].on_cpu_bound_ns >= sum.cpus_trimmed_ns,
		   "cpus trimmed: 101's bound (%llu ns) covers what it lost (%llu ns)",
		   (unsigned long long)t[i].on_cpu_bound_ns,
		   (unsigned long long)sum.cpus_trimmed_ns);
		is_u64(t[i].wall_ns, t[i].on_cpu_ns + t[i].blocked_ns + t[i].runnable_ns +
		       t[i].preempted_ns, "cpus trimmed: wall = on + blocked + runnable + preempted");
	}
	wp_account_free(a);
}

int main(void)
{
	setup();
	test_basic_split();
	test_window();
	test_window_anchors();
	test_min_block();
	test_new_thread();
	test_records_after_exit();
	test_snapshot_then_fork();
	test_wakeups();
	test_wakeups_enqueued();
	test_wakeups_gated();
	test_wakeups_gated_anchor();
	test_wakeups_dropped();
	test_wakeups_dropped_stacks();
	test_sched_switch();
	test_anchors();
	test_exact_distribution();
	test_lost();
	test_order();
	test_memory_per_thread();
	test_order_bound();
	test_order_parsed();
	test_order_span();
	test_observer();
	test_switch_estimate();
	test_switch_estimate_bound();
	test_names_anchored();
	test_anchor_idle_start();
	test_cpu_one_at_a_time(true);
	test_cpu_one_at_a_time(false);
	test_cpus_trimmed();
	return done_testing();
}
