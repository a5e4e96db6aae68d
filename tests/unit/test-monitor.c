/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-monitor.c: top's intervals on synthetic records.  A thread whose
 * switch records read it short on a CPU (late switch-ins) is anchored to
 * its THREAD_CLOCK figures read at each interval's end; threads without
 * figures keep the records'; hundreds of threads blocked all through an
 * interval get their rows at its close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "monitor.h"
#include "util.h"
#include "tap.h"

#define US 1000ULL
#define MS 1000000ULL
#define SEC 1000000000ULL
#define START (1000 * SEC)
#define PID 100
#define SPINNER 101
#define SLEEPER 102
#define BLOCKED_FIRST 200
#define NR_BLOCKED 300

static struct wp_sample_format fmt;
static struct wp_meta meta;
static struct wp_monitor *mon;
static struct wp_buf feed;

/* What the intervals showed of the threads watched here. */
static struct {
	unsigned int intervals;
	struct wp_mon_row spinner[3], sleeper[3];
	size_t rows[3], blocked_full[3];
	uint64_t on_sum[3], len[3];
} shown;

static int on_interval(void *arg, const struct wp_mon_snapshot *s)
{
	unsigned int i = shown.intervals++;

	(void)arg;
	if (i >= 3)
		return 0;
	shown.rows[i] = s->nr_rows;
	shown.len[i] = s->end_ns - s->start_ns;
	for (size_t k = 0; k < s->nr_rows; k++) {
		const struct wp_mon_row *r = &s->rows[k];

		shown.on_sum[i] += r->on_ns;
		if (r->tid == SPINNER)
			shown.spinner[i] = *r;
		else if (r->tid == SLEEPER)
			shown.sleeper[i] = *r;
		else if (r->tid >= BLOCKED_FIRST && r->tid < BLOCKED_FIRST + NR_BLOCKED &&
			 wp_mon_row_blocked(r) == s->end_ns - s->start_ns)
			shown.blocked_full[i]++;
	}
	return 0;
}

/* A SWITCH record of tid on cpu at START + t, to the feed. */
static void add_switch(uint32_t tid, uint32_t cpu, uint64_t t, bool out, bool preempt)
{
	uint8_t buf[128];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = PID, .tid = tid, .time = START + t, .id = 7,
				   .cpu = cpu };

	h->type = PERF_RECORD_SWITCH;
	h->misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
		  (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1));
	if (wp_buf_append(&feed, buf, h->size))
		abort();
}

static void add_clock(enum wp_clock_when when, uint32_t tid, uint64_t t, uint64_t on,
		      uint64_t queued)
{
	if (wp_thread_clock_append(&feed, when, PID, tid, START + t, on, queued, 0))
		abort();
}

static unsigned int feed_errors;

/* Hand the feed over, as a drain pass would. */
static void flush(void)
{
	if (wp_monitor_records(mon, feed.data, feed.len, 0))
		feed_errors++;
	feed.len = 0;
}

int main(void)
{
	/* The kernel's figures of the spinner, from before the recording. */
	uint64_t on0 = 5 * SEC, rq0 = 2 * SEC;

	plan(18);
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.start_clock_ns = START;
	meta.flags = WP_META_SWITCHES;
	meta.sample_period_ns = MS;
	meta.nr_cpus = 2;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
	if (wp_monitor_new(SEC, on_interval, NULL, &mon))
		return 1;
	wp_monitor_expect_clocks(mon);
	ok(wp_monitor_start(mon, &meta) == 0, "monitor started");

	/* Known before the first figures are read (as an attach's threads are). */
	add_switch(SPINNER, 0, 5 * US, true, true);
	add_clock(WP_CLOCK_START, SPINNER, 10 * US, on0, rq0);
	/*
	 * Blocked threads: each runs until its switch-out in the first
	 * interval, then sleeps through the rest (their rows in the second
	 * are made at its close).
	 */
	for (uint32_t i = 0; i < NR_BLOCKED; i++)
		add_switch(BLOCKED_FIRST + i, 1, 20 * US + i * US, true, false);
	add_switch(SLEEPER, 1, 500 * US, true, false);
	/*
	 * The spinner shares CPU 0 with one other thread: the records have
	 * it on for 0.7 ms of every 2 (its switch-ins late), the kernel
	 * 1.2 ms of every 2, run-queue the rest.
	 */
	for (uint64_t t = MS; t < 2700 * MS; t += 2 * MS) {
		add_switch(SPINNER, 0, t + 500 * US, false, false);
		add_switch(SPINNER, 0, t + 1200 * US, true, true);
		if (t == 1001 * MS)
			add_clock(WP_CLOCK_DURING, SPINNER, SEC + 300 * US,
				  on0 + (SEC + 290 * US) * 6 / 10, rq0 + (SEC + 290 * US) * 4 / 10);
		if (t == 2001 * MS)
			add_clock(WP_CLOCK_DURING, SPINNER, 2 * SEC + 700 * US,
				  on0 + (2 * SEC + 690 * US) * 6 / 10,
				  rq0 + (2 * SEC + 690 * US) * 4 / 10);
		if (t % (100 * MS) == MS)
			flush();
	}
	flush();

	is_int(feed_errors, 0, "every record taken");
	is_int(shown.intervals, 2, "two intervals shown (the second held past its end)");
	is_int(shown.blocked_full[1], NR_BLOCKED,
	       "every thread blocked all through the second interval has its row");
	for (int i = 0; i < 2; i++) {
		const struct wp_mon_row *r = &shown.spinner[i];
		uint64_t len = shown.len[i], queued = r->runnable_ns + r->preempted_ns;

		ok(r->anchored, "interval %d: the spinner is anchored", i + 1);
		ok(r->on_ns >= len * 6 / 10 - US && r->on_ns <= len * 6 / 10 + US,
		   "interval %d: its on-CPU is the kernel's 60%% (%llu ns)", i + 1,
		   (unsigned long long)r->on_ns);
		ok(queued >= len * 4 / 10 - US && queued <= len * 4 / 10 + US,
		   "interval %d: runnable + preempted the kernel's 40%% (%llu ns)", i + 1,
		   (unsigned long long)queued);
		ok(r->on_records_ns < len * 4 / 10, "interval %d: the records had it at 35%%",
		   i + 1);
		ok(r->on_ns + queued + wp_mon_row_blocked(r) == len,
		   "interval %d: its time adds up to the interval", i + 1);
		ok(r->kernel_offset_ns <= MS, "interval %d: the reads' offset is their bound",
		   i + 1);
	}
	ok(!shown.sleeper[1].anchored && wp_mon_row_blocked(&shown.sleeper[1]) == shown.len[1],
	   "a thread without figures keeps the records'");
	ok(shown.on_sum[0] <= 2 * shown.len[0] && shown.on_sum[1] <= 2 * shown.len[1],
	   "no interval holds more on-CPU time than its CPUs");
	wp_monitor_free(mon);
	wp_buf_release(&feed);
	return done_testing();
}
