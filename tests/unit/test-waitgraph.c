/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-waitgraph.c: the wait-for graph and the critical path on synthetic
 * timelines, made by the ledger itself from switch records and wake-ups:
 * A waits on B over 0-100 ms while B waits on C over 20-100 ms; the
 * same with C asleep on a timer; and a cycle, A and B each woken by the
 * other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "analysis.h"
#include "critpath.h"
#include "layout.h"
#include "tap.h"
#include "util.h"
#include "view.h"
#include "waitgraph.h"
#include "waits.h"

#define MS 1000000ULL
#define START (1000 * MS)
#define END (120 * MS)
#define A 101
#define B 102
#define C 103
#define STACK_A 10
#define STACK_B 11
#define STACK_C 12
#define RUN_C 13

static struct wp_sample_format fmt;
static struct wp_meta meta;

/* A SWITCH record of tid at start + t. */
static const struct perf_event_header *switch_rec(uint32_t tid, uint64_t t, bool out,
						  uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	struct wp_sample_id id = { .pid = 100, .tid = tid, .time = START + t, .id = 7 };

	h->type = PERF_RECORD_SWITCH;
	h->misc = out ? PERF_RECORD_MISC_SWITCH_OUT : 0;
	h->size = (uint16_t)(sizeof(*h) + wp_sample_id_size(&fmt));
	wp_sample_id_write(&fmt, &id, h + 1);
	return h;
}

/* A FORK of thread tid of process 100 at start + t. */
static const struct perf_event_header *fork_rec(uint32_t tid, uint64_t t, uint8_t *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { 100, 100, tid, 100 };
	uint64_t time = START + t;
	struct wp_sample_id id = { .pid = 100, .tid = tid, .time = START + t, .id = 7 };

	h->type = PERF_RECORD_FORK;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + 8 + wp_sample_id_size(&fmt));
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &time, 8);
	wp_sample_id_write(&fmt, &id, (uint8_t *)(h + 1) + sizeof(body) + 8);
	return h;
}

/* The kept timeline, as the analysis keeps it (analysis.c's observer). */
static void keep_period(void *arg, const struct wp_period *p)
{
	struct wp_analysis *an = arg;

	if (WP_GROW(an->kept, an->cap_kept, an->nr_kept + 1))
		abort();
	an->kept[an->nr_kept++] = wp_kept_of_period(p);
}

static void keep_sample(void *arg, const struct wp_thread_times *t, uint64_t time, uint32_t stack)
{
	struct wp_analysis *an = arg;

	if (WP_GROW(an->kept, an->cap_kept, an->nr_kept + 1))
		abort();
	an->kept[an->nr_kept++] = (struct wp_kept_event){
		.start_ns = time, .end_ns = time, .serial = t->serial, .stack = stack,
		.waker = UINT32_MAX, .cpu = UINT32_MAX, .kind = WP_KEPT_SAMPLE,
	};
}

struct fixture {
	struct wp_analysis an;
	struct wp_account_observer obs;
	struct wp_waits w;
	struct wp_view v;
	uint8_t buf[256];
};

static void feed(struct fixture *f, const struct perf_event_header *h)
{
	wp_account_record(f->an.account, h, wp_record_time(&fmt, h));
}

/* A recording of 0-END ms; window_end: as --time, the end of the window (0: END). */
/* The stack of a switch-out whose stack was not sampled, with sampled ones. */
#define UNSAMPLED 3

/*
 * A recording of 0-END ms; window_end: as --time, the end of the window
 * (0: END); sampled: switch-out stacks sampled, as under record's budget.
 */
static void begin_window(struct fixture *f, uint64_t window_end, bool sampled)
{
	struct wp_account_opts o = { .unsampled_stack = 1, .unknown_stack = 2,
				     .switch_stacks_sampled = sampled,
				     .unsampled_switch_stack = UNSAMPLED };

	memset(f, 0, sizeof(*f));
	f->an.unsampled_switch_stack = UNSAMPLED;
	f->an.meta = &meta;
	f->an.start_ns = f->an.window_start = START;
	f->an.end_ns = START + END;
	f->an.window_end = START + (window_end ? window_end : END);
	if (window_end) {
		o.window_start = START;
		o.window_end = START + window_end;
		f->an.has_window = true;
	}
	f->obs = (struct wp_account_observer){ .period = keep_period, .sample = keep_sample,
					       .arg = &f->an };
	o.observer = &f->obs;
	if (wp_account_new(&meta, &o, &f->an.account))
		abort();
	/* Three threads, all made at 0 and running. */
	for (uint32_t tid = A; tid <= C; tid++) {
		feed(f, fork_rec(tid, 0, f->buf));
		feed(f, switch_rec(tid, 0, false, f->buf));
	}
}

static void begin(struct fixture *f)
{
	begin_window(f, 0, false);
}

/* Close the recording at END and index what was kept. */
static void end(struct fixture *f)
{
	struct wp_view_opts vo = { .unit_ns = 1000, .wait_threshold = WP_WG_THRESHOLD };

	wp_account_finish(f->an.account, START + END);
	if (wp_waits_init(&f->w, &f->an) || wp_view_init(&f->v, &f->an, &vo))
		abort();
}

static void release(struct fixture *f)
{
	wp_view_release(&f->v);
	wp_waits_release(&f->w);
	wp_account_free(f->an.account);
	free(f->an.kept);
}

static uint32_t serial_of(struct fixture *f, uint32_t tid)
{
	return wp_waits_serial_at(&f->w, tid, START + 50 * MS);
}

/* The node holding thread tid, or -1. */
static long node_of(const struct wp_waitgraph *g, struct fixture *f, uint32_t tid)
{
	uint32_t s = serial_of(f, tid);

	for (size_t i = 0; i < g->nr_nodes; i++)
		for (uint32_t k = 0; k < g->nodes[i].nr_serials; k++)
			if (g->nodes[i].serials[k] == s)
				return (long)i;
	return -1;
}

static long device_node(const struct wp_waitgraph *g, enum wp_cause c)
{
	for (size_t i = 0; i < g->nr_nodes; i++)
		if (g->nodes[i].kind == WP_WG_DEVICE && g->nodes[i].cause == c)
			return (long)i;
	return -1;
}

static const struct wp_wg_edge *edge(const struct wp_waitgraph *g, long from, long to)
{
	for (size_t i = 0; i < g->nr_edges; i++)
		if ((long)g->edges[i].from == from && (long)g->edges[i].to == to)
			return &g->edges[i];
	return NULL;
}

static struct wp_waitgraph graph(struct fixture *f, enum wp_wg_grouping grouping)
{
	struct wp_wg_opts o = { .threshold = WP_WG_THRESHOLD, .grouping = grouping,
				.similarity = WP_WG_SIMILARITY, .knot_trim = WP_WG_KNOT_TRIM };
	struct wp_waitgraph g;

	if (wp_waitgraph_build(&f->w, &f->v, &o, &g))
		abort();
	return g;
}

/* Time of the path's segments of thread tid (0: any) and kind. */
static uint64_t path_ns(struct fixture *f, const struct wp_critpath *cp, uint32_t tid,
			enum wp_cp_kind kind)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < cp->nr_segs; i++) {
		const struct wp_cp_segment *s = &cp->segs[i];

		if (s->kind == kind && (!tid || s->serial == serial_of(f, tid)))
			ns += s->end_ns - s->start_ns;
	}
	return ns;
}

static uint64_t path_total(const struct wp_critpath *cp)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < cp->nr_segs; i++)
		ns += cp->segs[i].end_ns - cp->segs[i].start_ns;
	return ns;
}

/*
 * A blocks at 0 until B wakes it at 100 ms; B runs until 20 ms and blocks
 * until C wakes it at 100 ms; C runs; all run to 120 ms.  With
 * c_sleeps, C itself sleeps from 40 ms until a timer wakes it at 100 ms.
 */
static void feed_chain(struct fixture *f, bool c_sleeps)
{
	struct wp_waker by_b = { .pid = 100, .tid = B, .stack = 20, .kind = WP_WAKER_THREAD };
	struct wp_waker by_c = { .pid = 100, .tid = C, .stack = 21, .kind = WP_WAKER_THREAD };
	struct wp_waker timer = { .stack = 22, .kind = WP_WAKER_TIMER,
				  .context = WP_WAKE_HARDIRQ };

	wp_account_sample(f->an.account, 100, A, WP_NO_CPU, START, true, STACK_A);
	feed(f, switch_rec(A, 0, true, f->buf));
	for (uint64_t t = 1; t < 20; t += 2)
		wp_account_sample(f->an.account, 100, B, WP_NO_CPU, START + t * MS, false, 30);
	for (uint64_t t = 1; t < 100; t += 2)
		wp_account_sample(f->an.account, 100, C, WP_NO_CPU, START + t * MS, false, RUN_C);
	wp_account_sample(f->an.account, 100, B, WP_NO_CPU, START + 20 * MS, true, STACK_B);
	feed(f, switch_rec(B, 20 * MS, true, f->buf));
	if (c_sleeps) {
		wp_account_sample(f->an.account, 100, C, WP_NO_CPU, START + 40 * MS, true, STACK_C);
		feed(f, switch_rec(C, 40 * MS, true, f->buf));
		wp_account_wakeup(f->an.account, C, START + 100 * MS, &timer);
		feed(f, switch_rec(C, 100 * MS, false, f->buf));
	}
	wp_account_wakeup(f->an.account, B, START + 100 * MS, &by_c);
	feed(f, switch_rec(B, 100 * MS, false, f->buf));
	wp_account_wakeup(f->an.account, A, START + 100 * MS, &by_b);
	feed(f, switch_rec(A, 100 * MS, false, f->buf));
}

static void test_chain(void)
{
	struct fixture f;
	struct wp_waitgraph g;
	const struct wp_wg_edge *ab, *bc;
	struct wp_critpath cp;
	long na, nb, nc;

	begin(&f);
	feed_chain(&f, false);
	end(&f);
	g = graph(&f, WP_WG_GROUP_NONE);
	na = node_of(&g, &f, A);
	nb = node_of(&g, &f, B);
	nc = node_of(&g, &f, C);
	ok(na >= 0 && nb >= 0 && nc >= 0 && na != nb && nb != nc, "chain: a node per thread");
	ab = edge(&g, na, nb);
	bc = edge(&g, nb, nc);
	ok(ab && ab->direct_ns == 100 * MS && ab->count == 1, "chain: A waited 100 ms for B");
	ok(bc && bc->direct_ns == 80 * MS && bc->count == 1, "chain: B waited 80 ms for C");
	ok(ab && ab->weight_ns == 100 * MS, "chain: A -> B weighs 100 ms (a cascade never takes "
	   "from it)");
	ok(bc && bc->weight_ns == 160 * MS,
	   "chain: B -> C weighs 160 ms: B's own 80, and A's 80 that waited through it");
	is_int((long long)g.nr_knots, 1, "chain: one knot");
	ok(g.nr_knots == 1 && g.knots[0].nr_nodes == 1 && (long)g.knots[0].nodes[0] == nc,
	   "chain: C, who waits for no one, is the knot");
	ok(g.nr_knots == 1 && g.knots[0].in_ns == 160 * MS, "chain: 160 ms waited for it");
	wp_waitgraph_release(&g);

	ok(!wp_critpath_compute(&f.w, serial_of(&f, A), START, START + END, &cp),
	   "chain: A's critical path");
	is_u64(path_total(&cp), END, "chain: the path adds up to the window");
	is_u64(path_ns(&f, &cp, B, WP_CP_RUNNING), 20 * MS, "chain: B ran 20 ms of it");
	is_u64(path_ns(&f, &cp, C, WP_CP_RUNNING), 80 * MS, "chain: then C ran 80 ms");
	is_u64(path_ns(&f, &cp, A, WP_CP_RUNNING), 20 * MS, "chain: then A itself, 20 ms");
	is_u64(path_ns(&f, &cp, 0, WP_CP_BLOCKED), 0, "chain: nothing left unexplained");
	ok(cp.nr_segs && cp.segs[0].serial == serial_of(&f, B) && cp.segs[0].depth == 1,
	   "chain: it starts with B, one wake-up away");
	ok(cp.nr_segs > 1 && cp.segs[1].serial == serial_of(&f, C) && cp.segs[1].depth == 2 &&
	   cp.segs[1].stack == RUN_C, "chain: then C, two away, in its sampled stack");
	wp_critpath_release(&cp);
	ok(!wp_critpath_compute(&f.w, serial_of(&f, A), START + 10 * MS, START + 50 * MS, &cp) &&
	   path_total(&cp) == 40 * MS && path_ns(&f, &cp, B, WP_CP_RUNNING) == 10 * MS &&
	   path_ns(&f, &cp, C, WP_CP_RUNNING) == 30 * MS,
	   "chain: a window inside: B 10 ms, C 30 ms");
	wp_critpath_release(&cp);
	release(&f);
}

/*
 * The same chain seen through a --time window that ends at 60 ms, before
 * the wake-ups: A's cut wait still leads to B, then C.
 */
static void test_window(void)
{
	struct fixture f;
	struct wp_critpath cp;
	struct wp_waitgraph g;

	begin_window(&f, 60 * MS, false);
	feed_chain(&f, false);
	end(&f);
	ok(!wp_critpath_compute(&f.w, serial_of(&f, A), START, START + END, &cp),
	   "window: A's critical path");
	is_u64(cp.end_ns - cp.start_ns, 60 * MS, "window: cut to the window");
	is_u64(path_ns(&f, &cp, B, WP_CP_RUNNING), 20 * MS, "window: B ran 20 ms");
	is_u64(path_ns(&f, &cp, C, WP_CP_RUNNING), 40 * MS,
	       "window: then C, to the window's end, though it woke B after it");
	wp_critpath_release(&cp);
	g = graph(&f, WP_WG_GROUP_NONE);
	ok(edge(&g, node_of(&g, &f, A), node_of(&g, &f, B)) &&
	   edge(&g, node_of(&g, &f, A), node_of(&g, &f, B))->weight_ns == 60 * MS,
	   "window: A -> B weighs the 60 ms inside the window");
	wp_waitgraph_release(&g);
	release(&f);
}

static void test_timer(void)
{
	struct fixture f;
	struct wp_waitgraph g;
	const struct wp_wg_edge *ct;
	struct wp_critpath cp;
	long nc, nt;

	begin(&f);
	feed_chain(&f, true);
	end(&f);
	g = graph(&f, WP_WG_GROUP_NONE);
	nc = node_of(&g, &f, C);
	nt = device_node(&g, WP_CAUSE_TIMER);
	ct = edge(&g, nc, nt);
	ok(nt >= 0 && ct && ct->direct_ns == 60 * MS, "timer: C waited 60 ms for the timer");
	ok(ct && ct->weight_ns == 60 * MS + 60 * MS + 60 * MS,
	   "timer: and so did B and A, through C: 180 ms");
	ok(ct && ct->nr_waiting && ct->waiting[0].id == STACK_C,
	   "timer: the edge names C's switch-out stack");
	ok(g.nr_knots == 1 && g.knots[0].nr_nodes == 1 && (long)g.knots[0].nodes[0] == nt,
	   "timer: the timer is the one knot");
	wp_waitgraph_release(&g);
	ok(!wp_critpath_compute(&f.w, serial_of(&f, A), START, START + END, &cp),
	   "timer: A's critical path");
	is_u64(path_total(&cp), END, "timer: adds up to the window");
	is_u64(path_ns(&f, &cp, C, WP_CP_RUNNING), 20 * MS, "timer: C ran 20 ms");
	is_u64(path_ns(&f, &cp, C, WP_CP_DEVICE), 60 * MS, "timer: then C's timer, 60 ms");
	wp_critpath_release(&cp);
	release(&f);
}

/*
 * A blocks at 10 ms until B wakes it at 100 ms; B blocks at 20 ms until
 * A "wakes" it at 90 ms: a cycle the records could only show if some were
 * wrong, which neither analysis may loop on.
 */
static void test_cycle(void)
{
	struct wp_waker by_a = { .pid = 100, .tid = A, .stack = 20, .kind = WP_WAKER_THREAD };
	struct wp_waker by_b = { .pid = 100, .tid = B, .stack = 21, .kind = WP_WAKER_THREAD };
	struct fixture f;
	struct wp_waitgraph g;
	struct wp_critpath cp;
	long na, nb;

	begin(&f);
	wp_account_sample(f.an.account, 100, A, WP_NO_CPU, START + 10 * MS, true, STACK_A);
	feed(&f, switch_rec(A, 10 * MS, true, f.buf));
	wp_account_sample(f.an.account, 100, B, WP_NO_CPU, START + 20 * MS, true, STACK_B);
	feed(&f, switch_rec(B, 20 * MS, true, f.buf));
	wp_account_wakeup(f.an.account, B, START + 90 * MS, &by_a);
	feed(&f, switch_rec(B, 90 * MS, false, f.buf));
	wp_account_wakeup(f.an.account, A, START + 100 * MS, &by_b);
	feed(&f, switch_rec(A, 100 * MS, false, f.buf));
	end(&f);
	g = graph(&f, WP_WG_GROUP_NONE);
	na = node_of(&g, &f, A);
	nb = node_of(&g, &f, B);
	/* Each wait goes round the cycle once, and stops where it began. */
	ok(edge(&g, na, nb) && edge(&g, na, nb)->direct_ns == 90 * MS &&
	   edge(&g, na, nb)->weight_ns == 90 * MS + 70 * MS,
	   "cycle: A -> B: its own 90 ms, and B's 70 that went round through A");
	ok(edge(&g, nb, na) && edge(&g, nb, na)->direct_ns == 70 * MS &&
	   edge(&g, nb, na)->weight_ns == 70 * MS + 70 * MS,
	   "cycle: B -> A: its own 70 ms, and A's 70 through B");
	ok(g.nr_knots == 1 && g.knots[0].nr_nodes == 2, "cycle: A and B are one knot");
	wp_waitgraph_release(&g);
	ok(!wp_critpath_compute(&f.w, serial_of(&f, A), START, START + END, &cp),
	   "cycle: the critical path ends");
	is_u64(path_total(&cp), END, "cycle: adds up to the window");
	is_u64(cp.cycles, 70 * MS, "cycle: B's wait for A, inside A's wait, stays blocked");
	wp_critpath_release(&cp);
	release(&f);
}

/* Threads of one process that wait in the same stacks are one node, by stacks or name. */
static void test_groups(void)
{
	struct fixture f;
	struct wp_waitgraph g;

	begin(&f);
	feed_chain(&f, false);
	end(&f);
	g = graph(&f, WP_WG_GROUP_STACKS);
	ok(node_of(&g, &f, A) != node_of(&g, &f, B), "groups: A and B wait in other stacks");
	wp_waitgraph_release(&g);
	g = graph(&f, WP_WG_GROUP_NAME);
	ok(node_of(&g, &f, A) == node_of(&g, &f, B) && node_of(&g, &f, B) == node_of(&g, &f, C),
	   "groups: by name, threads of no name are one node");
	/*
	 * A's 100 ms and B's 80: B's waits inside A's are the same edge's,
	 * once per chain (not 260 ms, B's counted again through A's).
	 */
	ok(g.nr_knots == 1 && g.knots[0].nr_nodes == 1 && g.knots[0].inner_ns == 180 * MS,
	   "groups: ... that waits for itself: a knot, each wait once (%llu ms)",
	   g.nr_knots ? (unsigned long long)(g.knots[0].inner_ns / MS) : 0ULL);
	wp_waitgraph_release(&g);
	release(&f);
}

/*
 * Switch-out stacks sampled: A waits for B three times, 10 ms in STACK_A,
 * 30 ms in STACK_A2 and 20 ms after a switch-out without a stack.  The
 * edge's waiting stacks share those 20 ms as 10 to 30: 5 and 15.
 */
#define STACK_A2 40
static void test_unsampled(void)
{
	struct wp_waker by_b = { .pid = 100, .tid = B, .stack = 21, .kind = WP_WAKER_THREAD };
	const struct wp_wg_edge *e;
	struct fixture f;
	struct wp_waitgraph g;
	uint64_t total = 0;

	begin_window(&f, 0, true);
	wp_account_sample(f.an.account, 100, A, WP_NO_CPU, START + 10 * MS, true, STACK_A);
	feed(&f, switch_rec(A, 10 * MS, true, f.buf));
	wp_account_wakeup(f.an.account, A, START + 20 * MS, &by_b);
	feed(&f, switch_rec(A, 20 * MS, false, f.buf));
	feed(&f, switch_rec(A, 30 * MS, true, f.buf));
	wp_account_wakeup(f.an.account, A, START + 50 * MS, &by_b);
	feed(&f, switch_rec(A, 50 * MS, false, f.buf));
	wp_account_sample(f.an.account, 100, A, WP_NO_CPU, START + 60 * MS, true, STACK_A2);
	feed(&f, switch_rec(A, 60 * MS, true, f.buf));
	wp_account_wakeup(f.an.account, A, START + 90 * MS, &by_b);
	feed(&f, switch_rec(A, 90 * MS, false, f.buf));
	end(&f);
	g = graph(&f, WP_WG_GROUP_NONE);
	e = edge(&g, node_of(&g, &f, A), node_of(&g, &f, B));
	ok(e && e->direct_ns == 60 * MS, "unsampled: A -> B carries its 60 ms");
	if (e) {
		for (unsigned int i = 0; i < e->nr_waiting; i++) {
			total += e->waiting[i].ns;
			ok(e->waiting[i].id != UNSAMPLED, "unsampled: no [off-cpu: not sampled] left");
		}
		is_u64(total, 60 * MS, "unsampled: the waiting stacks add up to the edge's own");
		ok(e->nr_waiting == 2 && e->waiting[0].id == STACK_A2 &&
		   e->waiting[0].ns == 45 * MS && e->waiting[0].estimated_ns == 15 * MS,
		   "unsampled: STACK_A2 30 ms and 15 of the 20 shared, marked estimated");
		ok(e->nr_waiting == 2 && e->waiting[1].id == STACK_A &&
		   e->waiting[1].ns == 15 * MS && e->waiting[1].estimated_ns == 5 * MS,
		   "unsampled: STACK_A 10 ms and 5 shared");
	}
	wp_waitgraph_release(&g);
	release(&f);
}

/*
 * A wait whose wake-up the kernel did not deliver, with the tracepoints
 * on (not gated): A blocks at 10 ms until B wakes it at 50, and again at
 * 60 until it is switched in at 90 with no wake-up.  The first is A's
 * edge to B; the second is unknown, not shared among A's recorded
 * wakers as the gate's unrecorded waits are (the gate's open slots are a
 * random sample; a wake-up the kernel dropped is not).
 */
static void test_dropped(void)
{
	struct wp_waker by_b = { .pid = 100, .tid = B, .stack = 20, .kind = WP_WAKER_THREAD };
	struct fixture f;
	struct wp_waitgraph g;
	const struct wp_wg_edge *ab;

	begin(&f);
	wp_account_sample(f.an.account, 100, A, WP_NO_CPU, START + 10 * MS, true, STACK_A);
	feed(&f, switch_rec(A, 10 * MS, true, f.buf));
	wp_account_wakeup(f.an.account, A, START + 50 * MS, &by_b);
	feed(&f, switch_rec(A, 50 * MS, false, f.buf));
	wp_account_sample(f.an.account, 100, A, WP_NO_CPU, START + 60 * MS, true, STACK_A);
	feed(&f, switch_rec(A, 60 * MS, true, f.buf));
	feed(&f, switch_rec(A, 90 * MS, false, f.buf));
	end(&f);
	g = graph(&f, WP_WG_GROUP_NONE);
	ab = edge(&g, node_of(&g, &f, A), node_of(&g, &f, B));
	ok(ab && ab->direct_ns == 40 * MS && ab->estimated_ns == 0 && ab->count == 1,
	   "dropped: A -> B holds the recorded wait alone (%llu ms, %llu estimated)",
	   ab ? (unsigned long long)(ab->direct_ns / MS) : 0ULL,
	   ab ? (unsigned long long)(ab->estimated_ns / MS) : 0ULL);
	{
		long na = node_of(&g, &f, A);

		ok(na >= 0 && g.nodes[na].times.blocked_ns[WP_CAUSE_NONE] == 30 * MS,
		   "dropped: its other 30 ms are unknown (%llu ms)",
		   na >= 0 ? (unsigned long long)(g.nodes[na].times.blocked_ns[WP_CAUSE_NONE] / MS) :
			     0ULL);
	}
	wp_waitgraph_release(&g);
	release(&f);
}

int main(void)
{
	memset(&meta, 0, sizeof(meta));
	meta.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	meta.start_clock_ns = START;
	meta.flags = WP_META_SWITCHES | WP_META_OFFCPU_STACKS | WP_META_WAKEUPS;
	meta.sample_period_ns = MS;
	wp_sample_format_init(&fmt, meta.sample_type, 0);
	test_chain();
	test_window();
	test_timer();
	test_cycle();
	test_groups();
	test_unsampled();
	test_dropped();
	return done_testing();
}
