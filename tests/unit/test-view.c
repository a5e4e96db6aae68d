/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-view.c: what a view shows of an accounting made from synthetic
 * records: the parts of the time each --mode takes, the threads each
 * filter keeps, the sort keys, the options refused without wake-ups, and
 * the text report's thread table (rows by process, thread or name, cut
 * at a number of rows, with what they leave out added up).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "analysis.h"
#include "layout.h"
#include "log.h"
#include "order.h"
#include "tap.h"
#include "view.h"

#define MS 1000000ULL
#define START (1000 * MS)
#define END (START + 100 * MS)

static struct wp_sample_format fmt;
static struct wp_meta meta;

/* A SWITCH record of pid/tid at START + t. */
static void feed_switch(struct wp_account *a, uint32_t pid, uint32_t tid, uint64_t t, bool out,
			bool preempt)
{
	uint8_t buf[256];
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = pid, .tid = tid, .time = START + t, .id = 7 };

	h->type = PERF_RECORD_SWITCH;
	h->misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
		  (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, h + 1);
	wp_account_record(a, h, wp_record_time(&fmt, h));
}

/* A COMM record naming pid/tid at START + t. */
static void feed_comm(struct wp_account *a, uint32_t pid, uint32_t tid, uint64_t t,
		      const char *name)
{
	uint8_t buf[256] = { 0 };
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = pid, .tid = tid, .time = START + t, .id = 7 };
	uint32_t ids[2] = { pid, tid };
	size_t len = (strlen(name) + 1 + 7) & ~(size_t)7;

	h->type = PERF_RECORD_COMM;
	h->misc = 0;
	memcpy(h + 1, ids, sizeof(ids));
	memcpy((uint8_t *)(h + 1) + sizeof(ids), name, strlen(name));
	h->size = (uint16_t)(sizeof(*h) + sizeof(ids) + len + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(ids) + len);
	wp_account_record(a, h, wp_record_time(&fmt, h));
}

/*
 * Four threads over 100 ms, each running from the start:
 *	pid 100 tid 100 "server":  on 0-50, preempted 50-51, on 51-100 (on 99)
 *	pid 100 tid 101 "worker":  on 0-10, blocked 10-90, on 90-100 (on 20)
 *	pid 100 tid 102 "worker":  on 0-40, preempted 40-70, on 70-100 (on 70)
 *	pid 200 tid 200 "client":  on 0-5, blocked 5-100 (on 5)
 */
static struct wp_account *make_account(void)
{
	struct wp_account_opts o = { .unsampled_stack = 1, .unknown_stack = 2 };
	struct wp_account *a;

	if (wp_account_new(&meta, &o, &a))
		return NULL;
	feed_comm(a, 100, 100, 0, "server");
	feed_comm(a, 100, 101, 0, "worker");
	feed_comm(a, 100, 102, 0, "worker");
	feed_comm(a, 200, 200, 0, "client");
	feed_switch(a, 100, 100, 50 * MS, true, true);
	feed_switch(a, 100, 100, 51 * MS, false, false);
	feed_switch(a, 100, 101, 10 * MS, true, false);
	feed_switch(a, 100, 101, 90 * MS, false, false);
	feed_switch(a, 100, 102, 40 * MS, true, true);
	feed_switch(a, 100, 102, 70 * MS, false, false);
	feed_switch(a, 200, 200, 5 * MS, true, false);
	wp_account_finish(a, END);
	return a;
}

/* The tids the view shows, in the accounting's order, as "100 101 ...". */
static const char *shown(const struct wp_view *v, char *buf, size_t size)
{
	const struct wp_thread_times *t;
	size_t n, len = 0;

	buf[0] = 0;
	t = wp_account_threads(v->an->account, &n);
	for (size_t i = 0; i < n; i++)
		if (wp_view_thread(v, i) && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%u", len ? " " : "",
						t[i].tid);
	return buf;
}

static void test_threads(struct wp_analysis *an)
{
	const struct wp_thread_times *t;
	char buf[128];
	size_t n;

	t = wp_account_threads(an->account, &n);
	is_int((long long)n, 4, "four threads accounted");
	for (size_t i = 0; i < n; i++)
		if (t[i].tid == 101)
			is_u64(t[i].on_cpu_ns, 20 * MS, "the setup: worker 101 on-CPU 20 ms");
	struct {
		struct wp_view_opts o;
		const char *want, *what;
	} cases[] = {
		{ { .mode = WP_MODE_WALL }, "100 101 102 200", "no filter: every thread" },
		{ { .comm = "worker" }, "101 102", "--comm worker" },
		{ { .comm = "^(server|client)$" }, "100 200", "--comm as an extended regex" },
		{ { .comm = "erv" }, "", "--comm matches the whole name, not within it" },
		{ { .pids = (pid_t[]){ 200 }, .nr_pids = 1 }, "200", "--pid 200" },
		{ { .tids = (pid_t[]){ 101, 200 }, .nr_tids = 2 }, "101 200", "--tid 101,200" },
		{ { .pids = (pid_t[]){ 100 }, .nr_pids = 1, .comm = "worker" }, "101 102",
		  "--pid and --comm together" },
		{ { .busy_only = true, .explain = true }, "100 101 102 200",
		  "at work only: the client, on-CPU 5% of its wall, is not idle (under 5% is)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wp_view v;
		char got[128];

		if (!is_int(wp_view_init(&v, an, &cases[i].o), 0, "%s: the view opens", cases[i].what))
			continue;
		snprintf(got, sizeof(got), "%s", shown(&v, buf, sizeof(buf)));
		is_str(got, cases[i].want, "%s", cases[i].what);
		wp_view_release(&v);
	}
}

static void test_parts(struct wp_analysis *an)
{
	static const bool want[][WP_NR_PARTS] = {
		/*                  on     blocked preempted runnable */
		[WP_MODE_WALL]      = { true,  true,  true,  true },
		[WP_MODE_ON]        = { true,  false, false, false },
		[WP_MODE_OFF]       = { false, true,  true,  true },
		[WP_MODE_BLOCKED]   = { false, true,  false, false },
		[WP_MODE_PREEMPTED] = { false, false, true,  false },
		[WP_MODE_RUNNABLE]  = { false, false, false, true },
	};
	struct wp_stack_weight w;

	memset(&w, 0, sizeof(w));
	w.on_cpu_ns = 1;
	w.blocked_ns = 20;
	w.preempted_ns = 300;
	w.runnable_ns = 4000;
	for (int m = WP_MODE_WALL; m <= WP_MODE_RUNNABLE; m++) {
		struct wp_view_opts o = { .mode = (enum wp_mode)m };
		struct wp_view v;
		uint64_t sum = 0, want_sum = 0;
		bool parts_ok = true;

		/* --mode runnable needs wake-ups: the view is made by hand. */
		memset(&v, 0, sizeof(v));
		v.an = an;
		v.o = o;
		for (int p = 0; p < WP_NR_PARTS; p++) {
			parts_ok &= wp_view_part(&v, (enum wp_part)p) == want[m][p];
			sum += wp_view_part_ns(&v, &w, (enum wp_part)p);
		}
		want_sum = (want[m][WP_PART_ON] ? 1 : 0) + (want[m][WP_PART_BLOCKED] ? 20 : 0) +
			   (want[m][WP_PART_PREEMPTED] ? 300 : 0) +
			   (want[m][WP_PART_RUNNABLE] ? 4000 : 0);
		ok(parts_ok, "--mode %s: the parts of the time it takes", wp_mode_name((enum wp_mode)m));
		is_u64(sum, want_sum, "--mode %s: a stack's time is those parts' only",
		       wp_mode_name((enum wp_mode)m));
	}
}

static void test_sort_keys(struct wp_analysis *an)
{
	struct wp_thread_times t = { .tid = 7, .wall_ns = 100, .on_cpu_ns = 10, .blocked_ns = 50,
				     .runnable_ns = 15, .preempted_ns = 25 };
	struct {
		enum wp_sort sort;
		uint64_t want;
		const char *what;
	} cases[] = {
		{ WP_SORT_WALL, 100, "wall" },
		{ WP_SORT_ON, 10, "on" },
		{ WP_SORT_OFF, 90, "off: blocked + runnable + preempted" },
		{ WP_SORT_BLOCKED, 50, "blocked" },
		{ WP_SORT_PREEMPTED, 25, "preempted" },
		{ WP_SORT_RUNNABLE, 15, "runnable" },
		{ WP_SORT_TID, UINT64_MAX - 7, "tid: the lowest first" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wp_view v;

		memset(&v, 0, sizeof(v));
		v.an = an;
		v.o.sort = cases[i].sort;
		is_u64(wp_view_sort_key(&v, &t), cases[i].want, "--sort %s", cases[i].what);
	}
}

static void test_refused(struct wp_analysis *an)
{
	struct {
		struct wp_view_opts o;
		const char *what;
	} cases[] = {
		{ { .wakers = true }, "--wakers" },
		{ { .waker_comm = "x" }, "--waker-comm" },
		{ { .mode = WP_MODE_RUNNABLE }, "--mode runnable" },
		{ { .sort = WP_SORT_RUNNABLE }, "--sort runnable" },
		{ { .comm = "(" }, "a --comm that is no regular expression" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wp_view v;

		is_int(wp_view_init(&v, an, &cases[i].o), -EINVAL, "%s: refused (-EINVAL)",
		       cases[i].what);
	}
}

/* Rows' and rest's times add up to all the shown threads'. */
static bool table_adds_up(const struct wp_table *t, bool threads_only)
{
	uint64_t wall = t->rest.wall_ns, on = t->rest.on_cpu_ns, threads = t->rest_threads;

	for (size_t i = 0; i < t->nr_rows; i++) {
		if (threads_only && t->rows[i].kind == WP_ROW_THREAD)
			continue;
		wall += t->rows[i].sum.wall_ns;
		on += t->rows[i].sum.on_cpu_ns;
		threads += t->rows[i].threads;
	}
	return wall == t->all.wall_ns && on == t->all.on_cpu_ns && threads == t->threads;
}

static void test_table(struct wp_analysis *an)
{
	struct wp_view_opts o = { .by = WP_BY_THREAD, .sort = WP_SORT_ON };
	struct wp_table t;
	struct wp_view v;

	if (!is_int(wp_view_init(&v, an, &o), 0, "table: the view opens"))
		return;
	if (is_int(wp_view_table(&v, &t), 0, "--by thread: the table is made")) {
		is_int((long long)t.nr_rows, 4, "--by thread: a row a thread");
		ok(t.nr_rows == 4 && t.rows[0].sum.tid == 100 && t.rows[1].sum.tid == 102 &&
		   t.rows[2].sum.tid == 101 && t.rows[3].sum.tid == 200,
		   "--by thread, --sort on: 100 (99 ms), 102 (70), 101 (20), 200 (5)");
		is_u64(t.all.wall_ns, 400 * MS, "--by thread: all four threads' wall");
		is_u64(t.all.on_cpu_ns, 194 * MS, "--by thread: all four threads' on-CPU");
		is_u64(t.processes, 2, "--by thread: in two processes");
		ok(table_adds_up(&t, false), "--by thread: the rows add up to all");
		wp_view_table_release(&t);
	}
	v.o.rows = 2;
	if (is_int(wp_view_table(&v, &t), 0, "--by thread, 2 rows: the table is made")) {
		is_int((long long)t.nr_rows, 2, "--by thread, 2 rows: two rows");
		is_u64(t.rest_threads, 2, "--by thread, 2 rows: two threads left out");
		is_u64(t.rest.on_cpu_ns, 25 * MS, "--by thread, 2 rows: the rest's on-CPU (20 + 5 ms)");
		ok(table_adds_up(&t, false), "--by thread, 2 rows: rows and rest add up to all");
		wp_view_table_release(&t);
	}
	v.o.rows = 0;
	v.o.by = WP_BY_COMM;
	if (is_int(wp_view_table(&v, &t), 0, "--by comm: the table is made")) {
		is_int((long long)t.nr_rows, 3, "--by comm: a row a name");
		ok(t.nr_rows == 3 && !strcmp(t.rows[0].sum.comm, "server") &&
		   !strcmp(t.rows[1].sum.comm, "worker") && t.rows[1].threads == 2 &&
		   t.rows[1].sum.on_cpu_ns == 90 * MS,
		   "--by comm: server, then worker's two threads added up (90 ms)");
		ok(table_adds_up(&t, false), "--by comm: the rows add up to all");
		wp_view_table_release(&t);
	}
	v.o.by = WP_BY_PROCESS;
	if (is_int(wp_view_table(&v, &t), 0, "--by process: the table is made")) {
		/* Process 100 and its three threads; process 200, of one thread, one row. */
		is_int((long long)t.nr_rows, 5, "--by process: 100, its three threads, then 200");
		ok(t.nr_rows == 5 && t.rows[0].kind == WP_ROW_PROCESS && t.rows[0].threads == 3 &&
		   t.rows[0].sum.on_cpu_ns == 189 * MS && t.rows[4].kind == WP_ROW_ONE_THREAD &&
		   t.rows[4].sum.tid == 200,
		   "--by process: process 100 adds up its threads (189 ms on-CPU)");
		ok(table_adds_up(&t, true), "--by process: the process rows add up to all");
		wp_view_table_release(&t);
	}
	wp_view_release(&v);
}

int main(void)
{
	struct wp_analysis an;

	wp_log_set_level(WP_LOG_ERROR);
	memset(&meta, 0, sizeof(meta));
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.start_clock_ns = START;
	meta.flags = WP_META_SWITCHES;
	meta.sample_period_ns = MS;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
	memset(&an, 0, sizeof(an));
	an.meta = &meta;
	an.account = make_account();
	if (!ok(an.account != NULL, "the accounting is made"))
		return done_testing();
	an.start_ns = START;
	an.end_ns = END;
	test_threads(&an);
	test_parts(&an);
	test_sort_keys(&an);
	test_refused(&an);
	test_table(&an);
	wp_account_free(an.account);
	return done_testing();
}
