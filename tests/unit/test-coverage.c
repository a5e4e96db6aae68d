/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-coverage.c: one set of events per thread when attaching opened
 * events for threads that had inherited some already.
 */
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "tap.h"

#define MS 1000000ULL

static struct wp_sample_format fmt;

/* A SWITCH record of tid written by event id at time t. */
static const struct perf_event_header *switch_rec(uint32_t tid, uint64_t id, uint64_t t,
						  uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id sid = { .pid = 100, .tid = tid, .time = t, .id = id };

	h->type = PERF_RECORD_SWITCH;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &sid, h + 1);
	return h;
}

/* A FORK or EXIT of pid 100's task tid (parent ptid), by event id in writer's context. */
static const struct perf_event_header *task_rec(uint16_t type, uint32_t tid, uint32_t ptid,
						uint32_t writer, uint64_t id, uint64_t t,
						uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { 100, 100, tid, ptid };
	struct wp_sample_id sid = { .pid = 100, .tid = writer, .time = t, .id = id };

	h->type = type;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + 8 + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &t, 8);
	wp_sample_id_write(&fmt, &sid, (uint8_t *)(h + 1) + sizeof(body) + 8);
	return h;
}

/* A FORK of child by parent, written by event id (in the parent's context). */
static const struct perf_event_header *fork_rec(uint32_t parent, uint32_t child, uint64_t id,
						uint64_t t, uint8_t *buf)
{
	return task_rec(PERF_RECORD_FORK, child, parent, parent, id, t, buf);
}

/* The EXIT of tid, written by event id. */
static const struct perf_event_header *exit_rec(uint32_t tid, uint64_t id, uint64_t t,
						uint8_t *buf)
{
	return task_rec(PERF_RECORD_EXIT, tid, tid, tid, id, t, buf);
}

/* An ATTACH record: tid's own events ids[0..n), all set up at done. */
static const struct perf_event_header *attach_rec(uint32_t tid, uint64_t done,
						  const uint64_t *ids, uint32_t n, uint8_t *buf)
{
	struct wp_record_attach a = {
		.header = { .type = WP_RECORD_ATTACH,
			    .size = (uint16_t)(sizeof(a) + n * sizeof(uint64_t)) },
		.tid = tid, .nr_ids = n, .done = done,
	};

	memcpy(buf, &a, sizeof(a));
	memcpy(buf + sizeof(a), ids, n * sizeof(uint64_t));
	return (const void *)buf;
}

/*
 * Hours of threads coming and going under an attached thread, as top's
 * unwinder sees them: forgetting the exited ones keeps the table to
 * those alive, and a thread that reuses an attached thread's tid is
 * judged as itself.
 */
static void test_forget(void)
{
	const uint64_t main_ids[] = { 1, 2 }, t5_ids[] = { 5, 6 };
	bool kept = true, dup = true;
	size_t most = 0, total = 0;
	struct wp_coverage *c;
	uint8_t buf[256];

	wp_coverage_new(&fmt, &c);
	wp_coverage_keep(c, attach_rec(100, 1 * MS, main_ids, 2, buf), NULL, 0);
	wp_coverage_keep(c, attach_rec(101, 1 * MS, t5_ids, 2, buf), NULL, 0);
	/* 1000 threads made by 100, each living a millisecond; forgotten 10 ms after. */
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t tid = 1000 + i;
		uint64_t t = 10 * MS + i * MS;

		kept &= wp_coverage_keep(c, fork_rec(100, tid, 1, t, buf), NULL, t);
		kept &= wp_coverage_keep(c, switch_rec(tid, 1, t + 1, buf), NULL, t + 1);
		dup &= !wp_coverage_keep(c, switch_rec(tid, 5, t + 1, buf), NULL, t + 1);
		kept &= wp_coverage_keep(c, exit_rec(tid, 1, t + MS, buf), NULL, t + MS);
		if (i % 10 == 9) {
			total += wp_coverage_forget(c, t - 10 * MS);
			if (wp_coverage_threads(c) > most)
				most = wp_coverage_threads(c);
		}
	}
	ok(kept && dup, "forget: the threads' own records kept, the others' dropped");
	ok(most <= 30, "forget: at most %zu threads held for 1000, those of the last 20 ms", most);
	ok(total >= 970, "forget: %zu of the 1000 exited threads let go", total);
	/* Attached 101 exits; a thread 100 makes later has its tid. */
	wp_coverage_keep(c, exit_rec(101, 5, 2000 * MS, buf), NULL, 2000 * MS);
	/* Before the forget: its tid comes back at once, under 100's events. */
	wp_coverage_keep(c, fork_rec(100, 1000, 1, 2000 * MS, buf), NULL, 2000 * MS);
	wp_coverage_keep(c, exit_rec(1000, 1, 2000 * MS + 1, buf), NULL, 2000 * MS + 1);
	wp_coverage_keep(c, fork_rec(100, 1000, 1, 2000 * MS + 2, buf), NULL, 2000 * MS + 2);
	wp_coverage_forget(c, 3000 * MS);
	ok(!wp_coverage_keep(c, switch_rec(1000, 5, 3001 * MS, buf), NULL, 3001 * MS),
	   "forget: a tid reused before the forget keeps its entry");
	wp_coverage_keep(c, fork_rec(100, 101, 1, 3002 * MS, buf), NULL, 3002 * MS);
	ok(wp_coverage_keep(c, switch_rec(101, 1, 3003 * MS, buf), NULL, 3003 * MS),
	   "forget: a new thread with an exited attached thread's tid counts its own events");
	wp_coverage_free(c);
}

int main(void)
{
	const uint64_t main_ids[] = { 1, 2 }, t5_ids[] = { 5, 6 };
	struct wp_coverage *c;
	uint8_t buf[256];

	wp_sample_format_init(&fmt, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD, 0);

	/* Without ATTACH records (a launched command, -a): everything counts. */
	wp_coverage_new(&fmt, &c);
	ok(wp_coverage_keep(c, switch_rec(7, 1, 1 * MS, buf), NULL, 1 * MS), "no attach: kept");
	ok(wp_coverage_keep(c, switch_rec(7, 9, 1 * MS, buf), NULL, 1 * MS), "no attach: any event");
	wp_coverage_free(c);

	/*
	 * Thread 100 attached (events 1, 2) at 1 ms; it creates 101 at 5 ms,
	 * which inherits them; 101 is then attached too (events 5, 6) at 8 ms,
	 * so from 8 ms its records come twice; 101 then creates 102, which
	 * inherits both sets.
	 */
	wp_coverage_new(&fmt, &c);
	ok(wp_coverage_keep(c, attach_rec(100, 1 * MS, main_ids, 2, buf), NULL, 0), "ATTACH of 100");
	ok(wp_coverage_keep(c, attach_rec(101, 8 * MS, t5_ids, 2, buf), NULL, 0), "ATTACH of 101");
	ok(wp_coverage_keep(c, switch_rec(100, 1, 2 * MS, buf), NULL, 2 * MS), "100 by its events");
	ok(wp_coverage_keep(c, switch_rec(100, 9, 2 * MS, buf), NULL, 2 * MS),
	   "100 by events of nobody attached");
	ok(wp_coverage_keep(c, fork_rec(100, 101, 1, 5 * MS, buf), NULL, 5 * MS), "the FORK of 101");
	ok(wp_coverage_keep(c, switch_rec(101, 1, 6 * MS, buf), NULL, 6 * MS),
	   "101 by inherited events before its own are set up");
	ok(!wp_coverage_keep(c, switch_rec(101, 5, 7 * MS, buf), NULL, 7 * MS),
	   "101 by its own events, not yet all set up: dropped");
	ok(wp_coverage_keep(c, switch_rec(101, 5, 9 * MS, buf), NULL, 9 * MS),
	   "101 by its own events once set up");
	ok(!wp_coverage_keep(c, switch_rec(101, 1, 9 * MS, buf), NULL, 9 * MS),
	   "101 by the inherited ones then: a duplicate");
	ok(!wp_coverage_keep(c, fork_rec(101, 102, 2, 10 * MS, buf), NULL, 10 * MS),
	   "the FORK of 102 written by the inherited events: dropped");
	ok(wp_coverage_keep(c, fork_rec(101, 102, 6, 10 * MS, buf), NULL, 10 * MS),
	   "the FORK of 102 written by 101's events: kept");
	ok(wp_coverage_keep(c, switch_rec(102, 5, 11 * MS, buf), NULL, 11 * MS),
	   "102 by the copies of 101's events");
	ok(!wp_coverage_keep(c, switch_rec(102, 1, 11 * MS, buf), NULL, 11 * MS),
	   "102 by the copies of 100's: a duplicate");
	is_u64(wp_coverage_dropped(c), 4, "four duplicates dropped");
	wp_coverage_free(c);
	test_forget();
	return done_testing();
}
