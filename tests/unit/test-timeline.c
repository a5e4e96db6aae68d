/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-timeline.c: the one model of every CPU and thread, on synthetic
 * record sequences: segments back to back, one thread per CPU at a time,
 * lost switch records, and threads first seen switching out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "layout.h"
#include "order.h"
#include "synth.h"
#include "timeline.h"
#include "tap.h"

#define US 1000ULL
#define MS 1000000ULL
#define START (1000 * MS)
#define UNKNOWN_STACK 2

static struct wp_sample_format fmt;
static struct wp_meta meta;

#define MAX_SEGS 4096
static struct {
	struct wp_segment s[MAX_SEGS];
	unsigned int n;
	unsigned int samples;
	unsigned int closed;
} seen;

static void on_segment(void *arg, const struct wp_segment *s)
{
	(void)arg;
	if (seen.n < MAX_SEGS)
		seen.s[seen.n++] = *s;
}

static void on_sample(void *arg, uint32_t thread, uint64_t time, uint32_t stack, uint32_t cpu)
{
	(void)arg, (void)thread, (void)time, (void)stack, (void)cpu;
	seen.samples++;
}

static void on_closed(void *arg, uint32_t thread)
{
	(void)arg, (void)thread;
	seen.closed++;
}

static void setup(uint32_t flags, uint32_t nr_cpus)
{
	memset(&meta, 0, sizeof(meta));
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.start_clock_ns = START;
	meta.flags = WP_META_SWITCHES | WP_META_OFFCPU_STACKS | flags;
	meta.sample_period_ns = MS;
	meta.nr_cpus = nr_cpus;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
	memset(&seen, 0, sizeof(seen));
}

static struct wp_timeline *new_timeline(void)
{
	struct wp_timeline_opts o = { .unknown_stack = UNKNOWN_STACK };
	struct wp_timeline_sink sink = { .segment = on_segment, .sample = on_sample,
					 .closed = on_closed };
	struct wp_timeline *tl;

	if (wp_timeline_new(&meta, &o, &tl))
		return NULL;
	if (wp_timeline_add_sink(tl, &sink)) {
		wp_timeline_free(tl);
		return NULL;
	}
	return tl;
}

/*
 * A SWITCH record (or, cpu_wide, SWITCH_CPU_WIDE naming other) of tid on
 * cpu at START + t.
 */
static void feed_switch(struct wp_timeline *tl, uint32_t tid, uint32_t cpu, uint64_t t, bool out,
			bool preempt, bool cpu_wide, uint32_t other)
{
	uint8_t buf[256];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = tid ? 100 : 0, .tid = tid, .time = START + t, .id = 7,
				   .cpu = cpu };
	size_t body = cpu_wide ? 8 : 0;
	uint32_t pt[2] = { other ? 100 : 0, other };

	h->type = cpu_wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH;
	h->misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
		  (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	h->size = (uint16_t)(sizeof(*h) + body + wp_sample_id_size(&fmt));
	if (body)
		memcpy(h + 1, pt, body);
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + body);
	wp_timeline_record(tl, h, wp_record_time(&fmt, h));
}

/* Each thread's segments back to back, and the sum of each kind, per thread. */
static bool back_to_back(uint32_t thread, uint64_t *sum, uint64_t *first, uint64_t *last)
{
	uint64_t end = 0;
	bool ok = true, any = false;

	memset(sum, 0, 5 * sizeof(*sum));
	for (unsigned int i = 0; i < seen.n; i++) {
		const struct wp_segment *s = &seen.s[i];

		if (s->thread != thread)
			continue;
		if (!any)
			*first = s->start_ns;
		else if (s->start_ns != end)
			ok = false;
		any = true;
		end = s->end_ns;
		sum[s->kind] += s->end_ns - s->start_ns;
	}
	*last = end;
	return ok && any;
}

/*
 * Two threads on one CPU; the switch-out of the first is lost: the
 * second's switch-in ends the first's running segment (approximate),
 * so the CPU never holds two.
 */
static void test_switch_in_ends_occupant(void)
{
	struct wp_timeline *tl;
	uint64_t sum[5], first, last, on = 0;

	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, false, 0);
	/* 101's switch-out at 10 ms is lost */
	feed_switch(tl, 102, 0, 10 * MS, false, false, false, 0);
	feed_switch(tl, 102, 0, 20 * MS, true, false, false, 0);
	feed_switch(tl, 101, 0, 20 * MS + 5 * US, false, false, false, 0);
	wp_timeline_finish(tl, START + 30 * MS);
	ok(back_to_back(0, sum, &first, &last), "occupant: 101's segments are back to back");
	on += sum[WP_SEG_RUNNING];
	is_u64(sum[WP_SEG_RUNNING], 9 * MS + 10 * MS - 5 * US,
	       "occupant: 101 runs 1-10 ms and from 20 ms on, not 1-20 ms");
	ok(wp_timeline_thread(tl, 0)->approximate, "occupant: 101 is approximate");
	ok(back_to_back(1, sum, &first, &last), "occupant: 102's segments are back to back");
	on += sum[WP_SEG_RUNNING];
	ok(on <= 30 * MS - START + START, "occupant: the CPU holds at most its time");
	is_u64(on, 29 * MS - 5 * US, "occupant: the two threads' on-CPU time is the CPU's");
	wp_timeline_free(tl);
}

/*
 * A thread first seen switching out ran since the later of the start and
 * the last switch-out recorded on its CPU: another thread ran there 0-8 ms.
 */
static void test_unknown_start_after_cpu_free(void)
{
	struct wp_timeline *tl;
	uint64_t sum[5], first, last;

	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 102, 0, 8 * MS, true, false, false, 0);
	feed_switch(tl, 101, 0, 12 * MS, true, true, false, 0);
	wp_timeline_finish(tl, START + 20 * MS);
	ok(back_to_back(0, sum, &first, &last), "unknown start: 102's segments");
	is_u64(sum[WP_SEG_RUNNING], 8 * MS, "unknown start: 102 ran 0-8 ms");
	ok(back_to_back(1, sum, &first, &last), "unknown start: 101's segments");
	is_u64(sum[WP_SEG_RUNNING], 4 * MS, "unknown start: 101 ran 8-12 ms, not 0-12");
	is_u64(last - first, 20 * MS, "unknown start: 101's segments cover its window");
	wp_timeline_free(tl);
}

/*
 * -a: a thread with samples on a CPU whose occupant's switch-out was
 * lost: the sample names the CPU's occupant.  Then the idle task's sample
 * ends it too.  No CPU ever holds more than its time.
 */
static void test_sample_names_occupant(void)
{
	struct wp_timeline *tl;
	uint64_t sum[5], first, last, on = 0;

	setup(WP_META_CPU_WIDE, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, true, 0);
	/* 101's switch-out and 102's switch-in lost; 102 sampled at 6 ms */
	wp_timeline_sample(tl, 100, 102, 0, START + 6 * MS, false, 7);
	feed_switch(tl, 102, 0, 9 * MS, true, false, true, 0);
	feed_switch(tl, 0, 0, 9 * MS + 1 * US, false, false, true, 102);
	wp_timeline_finish(tl, START + 10 * MS);
	ok(back_to_back(0, sum, &first, &last), "sample: 101's segments");
	on += sum[WP_SEG_RUNNING];
	is_u64(sum[WP_SEG_RUNNING], 5 * MS, "sample: 101 ran 1-6 ms, until 102's sample");
	ok(back_to_back(1, sum, &first, &last), "sample: 102's segments");
	on += sum[WP_SEG_RUNNING];
	is_u64(sum[WP_SEG_RUNNING], 3 * MS, "sample: 102 ran 6-9 ms");
	ok(on <= 10 * MS, "sample: the CPU holds at most its time");
	is_int(seen.samples, 1, "sample: counted once");
	wp_timeline_free(tl);
}

/*
 * A cgroup's switch records name the next task: a switch-in that the
 * switch-out before it on its CPU named starts at that switch-out, not at
 * its own record 30 us later (after the kernel switched the events in).
 */
static void test_named_next_starts_at_switch(void)
{
	struct wp_timeline *tl;
	uint64_t sum[5], first, last;

	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, true, 0);
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t t = 2 * MS + i * 2 * MS;

		feed_switch(tl, 101, 0, t, true, false, true, 102);
		feed_switch(tl, 102, 0, t + 30 * US, false, false, true, 101);
		feed_switch(tl, 102, 0, t + MS, true, false, true, 101);
		feed_switch(tl, 101, 0, t + MS + 30 * US, false, false, true, 102);
	}
	wp_timeline_finish(tl, START + 22 * MS);
	back_to_back(1, sum, &first, &last);
	is_u64(sum[WP_SEG_RUNNING], 10 * MS, "named next: 102's slices start at the switch");
	back_to_back(0, sum, &first, &last);
	is_u64(sum[WP_SEG_RUNNING], 11 * MS, "named next: so do 101's");
	for (unsigned int i = 0; i < seen.n; i++)
		if (seen.s[i].kind == WP_SEG_RUNNING && (seen.s[i].flags & WP_SEG_START_LATE) &&
		    seen.s[i].start_ns > START + 2 * MS) {
			ok(false, "named next: no slice is marked late");
			wp_timeline_free(tl);
			return;
		}
	ok(true, "named next: no slice is marked late");
	wp_timeline_free(tl);
}

/*
 * A thread that first appears in another's switch record (-a, the task
 * before a switch-in) is added while the switch-in is handled: the model
 * must not keep a pointer into its thread table across that (it grows).
 */
static void test_new_thread_during_switch_in(void)
{
	struct wp_timeline *tl;
	unsigned int ok_segments = 1;

	setup(WP_META_CPU_WIDE, 1);
	tl = new_timeline();
	for (uint32_t i = 0; i < 200; i++) {
		uint64_t t = MS + i * 100 * US;

		feed_switch(tl, 101, 0, t, true, false, true, 1000 + i);
		/* 1000 + i ran unseen in between; 101's switch-in names it */
		feed_switch(tl, 101, 0, t + 50 * US, false, false, true, 1000 + i);
	}
	wp_timeline_finish(tl, START + 30 * MS);
	for (unsigned int i = 0; i < seen.n; i++)
		if (seen.s[i].end_ns < seen.s[i].start_ns)
			ok_segments = 0;
	ok(ok_segments, "new thread in a switch-in: every segment well formed");
	is_int((long long)wp_timeline_nr_threads(tl), 201, "new thread in a switch-in: 201 threads");
	wp_timeline_free(tl);
}

/* A FORK (or EXIT) record of thread tid of process pid at START + t. */
static void feed_task(struct wp_timeline *tl, uint16_t type, uint32_t pid, uint32_t tid,
		      uint64_t t)
{
	uint8_t buf[256];
	struct perf_event_header *h = (void *)buf;
	struct wp_task_event te = { .pid = pid, .ppid = pid, .tid = tid, .ptid = pid,
				    .time = START + t };
	struct wp_sample_id id = { .pid = pid, .tid = tid, .time = START + t, .id = 7 };

	h->type = type;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(te) + wp_sample_id_size(&fmt));
	memcpy(h + 1, &te, sizeof(te));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(te));
	wp_timeline_record(tl, h, wp_record_time(&fmt, h));
}

/*
 * Hours of threads coming and going, as top sees them: forgetting the
 * exited ones keeps the model to the threads alive, and changes nothing
 * of the segments of the one that stays, whose pending wait keeps its
 * waker through the renumbering.
 */
static void test_forget_exited(void)
{
	struct wp_event_desc ev = { .role = WP_EVENT_ENQUEUED };
	struct wp_timeline *tl;
	uint64_t sum[5], first, last, ended_by = 0;
	size_t nw, forgotten, total = 0;
	const struct wp_waker *w;
	unsigned int wakers_ok = 1, slots_ok = 1;

	setup(WP_META_WAKEUPS, 2);
	meta.events = &ev;
	meta.nr_events = 1;
	tl = new_timeline();
	/* Thread 50 (process 100) on CPU 1, blocked from 1 ms. */
	feed_switch(tl, 50, 1, 0, false, false, false, 0);
	feed_switch(tl, 50, 1, MS, true, false, false, 0);
	for (uint32_t i = 0; i < 1000; i++) {
		uint64_t t = 2 * MS + i * MS;
		uint32_t tid = 1000 + i;
		struct wp_waker wk = { .pid = 100, .tid = tid, .stack = 5 + i % 3,
				       .kind = WP_WAKER_THREAD };

		feed_task(tl, PERF_RECORD_FORK, 100, tid, t);
		feed_switch(tl, tid, 0, t + 10 * US, false, false, false, 0);
		/* Each wakes 50 but the last; the next wake-up is the last one's. */
		wp_timeline_wakeup(tl, 50, t + 100 * US, &wk);
		feed_task(tl, PERF_RECORD_EXIT, 100, tid, t + 200 * US);
		feed_switch(tl, tid, 0, t + 210 * US, true, false, false, 0);
		/* Every 10 ms, an interval: those that exited before it began go. */
		if (i % 10 == 9) {
			if (wp_timeline_forget(tl, START + t - 10 * MS, &forgotten))
				slots_ok = 0;
			total += forgotten;
			w = wp_timeline_wakers(tl, &nw);
			if (nw > 1 || (nw == 1 && w[0].tid != tid))
				wakers_ok = 0;
			if (wp_timeline_nr_threads(tl) > 30)
				slots_ok = 0;
		}
	}
	ok(slots_ok, "forget: at most 30 slots for 1000 threads, those of the last 20 ms");
	ok(total >= 970, "forget: %zu of the 1000 exited threads forgotten", total);
	ok(wakers_ok, "forget: only the waker of the pending wait is kept");
	/* 50's wake-up reaches the run queue: its blocked time ends with the last waker. */
	wp_timeline_enqueued(tl, 50, START + 1002 * MS);
	feed_switch(tl, 50, 1, 1003 * MS, false, false, false, 0);
	w = wp_timeline_wakers(tl, &nw);
	for (unsigned int i = 0; i < seen.n; i++)
		if (seen.s[i].kind == WP_SEG_BLOCKED && seen.s[i].thread == 0 &&
		    seen.s[i].waker < nw)
			ended_by = w[seen.s[i].waker].tid;
	is_int((long long)ended_by, 1999, "forget: the blocked wait ends with its waker, renumbered");
	wp_timeline_finish(tl, START + 1010 * MS);
	ok(back_to_back(0, sum, &first, &last) && first == START && last == START + 1010 * MS,
	   "forget: the thread that stays has its segments back to back");
	is_int((long long)sum[WP_SEG_BLOCKED], (long long)(1001 * MS),
	       "forget: its blocked time is what it was");
	wp_timeline_free(tl);
}

/* A LOST record of n records on cpu at START + t. */
static void feed_lost(struct wp_timeline *tl, uint32_t cpu, uint64_t t, uint64_t n)
{
	uint8_t buf[256];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .time = START + t, .id = 7, .cpu = cpu };
	uint64_t body[2] = { 7, n };

	h->type = PERF_RECORD_LOST;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(body));
	wp_timeline_record(tl, h, wp_record_time(&fmt, h));
}

/*
 * A switch whose record was lost took place in its CPU's window of lost
 * records (from the last record the ring delivered to the LOST record),
 * not at the next record that tells of it; the window is what the
 * thread's time may be off by.
 */
static void test_lost_switch_in_window(void)
{
	struct wp_timeline *tl;
	uint64_t sum[5], first, last;

	/* A lost switch-out: running 1-3 ms (where the window 3-5 begins), not 1-15. */
	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, false, 0);
	wp_timeline_sample(tl, 100, 101, 0, START + 2 * MS, false, 7);
	wp_timeline_sample(tl, 100, 101, 0, START + 3 * MS, false, 7);
	feed_lost(tl, 0, 5 * MS, 3);
	feed_switch(tl, 101, 0, 15 * MS, false, false, false, 0);
	feed_switch(tl, 101, 0, 16 * MS, true, false, false, 0);
	wp_timeline_finish(tl, START + 20 * MS);
	ok(back_to_back(0, sum, &first, &last), "lost out: segments back to back");
	is_u64(sum[WP_SEG_RUNNING], 2 * MS + 1 * MS, "lost out: ran 1-3 ms and 15-16 ms");
	is_u64(sum[WP_SEG_PREEMPTED], 12 * MS, "lost out: off 3-15 ms, the reason unknown");
	ok(wp_timeline_thread(tl, 0)->approximate, "lost out: approximate");
	is_u64(wp_timeline_thread(tl, 0)->uncertain_ns, 2 * MS,
	       "lost out: uncertain by the window, 3-5 ms");
	wp_timeline_free(tl);

	/* A lost switch-in: running 5-8 ms (where the window 3-5 ends), not blocked until 8. */
	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, false, 0);
	feed_switch(tl, 101, 0, 2 * MS, true, false, false, 0);
	feed_switch(tl, 102, 0, 2 * MS + 10 * US, false, false, false, 0);
	feed_switch(tl, 102, 0, 3 * MS, true, false, false, 0);
	feed_lost(tl, 0, 5 * MS, 1);
	feed_switch(tl, 101, 0, 8 * MS, true, false, false, 0);
	wp_timeline_finish(tl, START + 10 * MS);
	ok(back_to_back(0, sum, &first, &last), "lost in: segments back to back");
	is_u64(sum[WP_SEG_RUNNING], 1 * MS + 3 * MS, "lost in: ran 1-2 ms and 5-8 ms");
	is_u64(wp_timeline_thread(tl, 0)->uncertain_ns, 2 * MS, "lost in: uncertain 3-5 ms");
	is_u64(wp_timeline_thread(tl, 1)->uncertain_ns, 2 * MS,
	       "lost in: 102, alive then, uncertain as much");
	wp_timeline_free(tl);

	/* A sample of a thread thought off: it switched in within the window. */
	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, false, 0);
	feed_switch(tl, 101, 0, 2 * MS, true, false, false, 0);
	feed_lost(tl, 0, 6 * MS, 1);
	wp_timeline_sample(tl, 100, 101, 0, START + 9 * MS, false, 7);
	feed_switch(tl, 101, 0, 10 * MS, true, false, false, 0);
	wp_timeline_finish(tl, START + 10 * MS);
	ok(back_to_back(0, sum, &first, &last), "lost in, sampled: segments back to back");
	is_u64(sum[WP_SEG_RUNNING], 1 * MS + 4 * MS, "lost in, sampled: ran 1-2 ms and 6-10 ms");
	wp_timeline_free(tl);

	/*
	 * No loss counted, the records contradict each other (a switch-in
	 * of a running thread): as before, and all of it uncertain.
	 */
	setup(0, 1);
	tl = new_timeline();
	feed_switch(tl, 101, 0, 1 * MS, false, false, false, 0);
	feed_switch(tl, 101, 0, 5 * MS, false, false, false, 0);
	feed_switch(tl, 101, 0, 6 * MS, true, false, false, 0);
	wp_timeline_finish(tl, START + 10 * MS);
	ok(back_to_back(0, sum, &first, &last), "contradiction: segments back to back");
	is_u64(sum[WP_SEG_RUNNING], 5 * MS, "contradiction: ran 1-6 ms");
	is_u64(wp_timeline_thread(tl, 0)->uncertain_ns, 4 * MS, "contradiction: 1-5 ms uncertain");
	wp_timeline_free(tl);
}

/*
 * A rotated file whose THREAD record says its state is not known (records
 * lost before the file began): the time to its first record is uncertain.
 */
static void test_uncertain_start(void)
{
	struct wp_timeline *tl;
	struct wp_buf b = { 0 };
	const struct perf_event_header *h;

	setup(0, 1);
	tl = new_timeline();
	if (!wp_synth_thread(&fmt, 100, 101, "t", START, &b) && b.len) {
		h = (const void *)b.data;
		((struct perf_event_header *)b.data)->misc = WP_THREAD_UNCERTAIN;
		wp_timeline_record(tl, h, START);
	}
	feed_switch(tl, 101, 0, 8 * MS, true, false, false, 0);
	feed_switch(tl, 101, 0, 9 * MS, false, false, false, 0);
	wp_timeline_finish(tl, START + 10 * MS);
	ok(b.len > 0, "uncertain start: a THREAD record made");
	ok(wp_timeline_thread(tl, 0)->approximate, "uncertain start: approximate");
	is_u64(wp_timeline_thread(tl, 0)->uncertain_ns, 8 * MS,
	       "uncertain start: uncertain until its first record, 8 ms");
	wp_timeline_free(tl);
	wp_buf_release(&b);
}

/* A wake-up's frames for wp_waker_classify: kernel names, then "u:" user ones. */
static const char *frame_of(unsigned int i, bool *kernel, void *arg)
{
	const char *const *names = arg;

	*kernel = strncmp(names[i], "u:", 2) != 0;
	return names[i];
}

static unsigned int count_names(const char *const *names)
{
	unsigned int n = 0;

	while (names[n])
		n++;
	return n;
}

/* Who woke, as the frames and the tracepoint's context say. */
static void test_waker_classify(void)
{
	static const char *const loopback[] = {
		"try_to_wake_up", "ep_poll_callback", "sock_def_readable", "tcp_v4_rcv",
		"net_rx_action", "handle_softirqs", "do_softirq.part.0", "__local_bh_enable_ip",
		"__dev_queue_xmit", "ip_finish_output2", "tcp_sendmsg", "__x64_sys_sendto",
		"do_syscall_64", "entry_SYSCALL_64_after_hwframe", NULL,
	};
	static const char *const from_nic[] = {
		"try_to_wake_up", "sock_def_readable", "tcp_v4_rcv", "net_rx_action",
		"handle_softirqs", "__irq_exit_rcu", "common_interrupt", "asm_common_interrupt",
		"__dev_queue_xmit", "tcp_sendmsg", "entry_SYSCALL_64_after_hwframe", NULL,
	};
	static const char *const disk_at_bh_enable[] = {
		"try_to_wake_up", "complete", "blk_update_request", "blk_done_softirq",
		"handle_softirqs", "do_softirq.part.0", "__local_bh_enable_ip", "release_sock",
		"tcp_sendmsg", "__x64_sys_sendto", "entry_SYSCALL_64_after_hwframe", NULL,
	};
	static const char *const timer[] = {
		"try_to_wake_up", "hrtimer_wakeup", "__hrtimer_run_queues", "hrtimer_interrupt",
		"sysvec_apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt", NULL,
	};
	static const char *const pipe[] = {
		"try_to_wake_up", "anon_pipe_write", "entry_SYSCALL_64_after_hwframe",
		"u:__write", "u:main", NULL,
	};
	const struct wp_arch *x86 = wp_arch_find("x86_64");
	struct wp_waker_class c;

	wp_waker_classify(x86, WP_WAKE_SOFTIRQ, 42, count_names(loopback), frame_of, (void *)loopback,
			  &c);
	ok(c.kind == WP_WAKER_THREAD && c.softirq == WP_SOFTIRQ_NET_RX &&
	   c.nr_frames == count_names(loopback),
	   "classify: a send over loopback, delivered in the sender's system call: the sender");
	wp_waker_classify(x86, WP_WAKE_SOFTIRQ, 0, count_names(loopback), frame_of, (void *)loopback,
			  &c);
	is_int(c.kind, WP_WAKER_INTERRUPT, "classify: the same with no thread: an interrupt");
	wp_waker_classify(x86, WP_WAKE_SOFTIRQ | WP_WAKE_HARDIRQ, 42, count_names(loopback), frame_of,
			  (void *)loopback, &c);
	is_int(c.kind, WP_WAKER_INTERRUPT, "classify: in a hard interrupt too: an interrupt");
	wp_waker_classify(x86, WP_WAKE_SOFTIRQ, 42, count_names(from_nic), frame_of, (void *)from_nic,
			  &c);
	ok(c.kind == WP_WAKER_INTERRUPT && c.softirq == WP_SOFTIRQ_NET_RX && c.nr_frames == 8,
	   "classify: NET_RX at an interrupt's exit: an interrupt, its frames down to asm_");
	wp_waker_classify(x86, WP_WAKE_SOFTIRQ, 42, count_names(disk_at_bh_enable), frame_of,
			  (void *)disk_at_bh_enable, &c);
	ok(c.kind == WP_WAKER_INTERRUPT && c.softirq == WP_SOFTIRQ_BLOCK,
	   "classify: a disk's softirq run as a send turned softirqs on: not the sender's");
	wp_waker_classify(x86, WP_WAKE_HARDIRQ, 42, count_names(timer), frame_of, (void *)timer, &c);
	ok(c.kind == WP_WAKER_TIMER && c.softirq == WP_SOFTIRQ_NONE && c.nr_frames == 6,
	   "classify: a timer's expiry in its interrupt");
	wp_waker_classify(x86, 0, 42, count_names(pipe), frame_of, (void *)pipe, &c);
	ok(c.kind == WP_WAKER_THREAD && c.nr_frames == 5, "classify: a thread's own wake-up");
	wp_waker_classify(x86, 0, 0, 0, frame_of, (void *)pipe, &c);
	is_int(c.kind, WP_WAKER_IDLE, "classify: the idle task's");
	wp_waker_classify(NULL, WP_WAKE_SOFTIRQ, 42, count_names(from_nic), frame_of,
			  (void *)from_nic, &c);
	ok(c.kind == WP_WAKER_INTERRUPT && c.nr_frames == count_names(from_nic),
	   "classify: a machine whose entry names are unknown keeps an interrupt's frames whole");
	is_int(wp_wake_context_of_flags(WP_STACK_SAMPLE_IRQ), WP_WAKE_HARDIRQ | WP_WAKE_SOFTIRQ,
	       "an older file's interrupt: any");
	is_int(wp_wake_context_of_flags(WP_STACK_SAMPLE_IRQ | WP_STACK_SAMPLE_SOFTIRQ),
	       WP_WAKE_SOFTIRQ, "a softirq's flags");
}

int main(void)
{
	test_waker_classify();
	test_uncertain_start();
	test_lost_switch_in_window();
	test_switch_in_ends_occupant();
	test_unknown_start_after_cpu_free();
	test_sample_names_occupant();
	test_named_next_starts_at_switch();
	test_new_thread_during_switch_in();
	test_forget_exited();
	return done_testing();
}
