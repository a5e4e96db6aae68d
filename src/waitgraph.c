/* SPDX-License-Identifier: GPL-2.0-or-later */
/* waitgraph.c: the wait-for graph, its cascades, groups and knots. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "u64map.h"
#include "util.h"
#include "waitgraph.h"

/*
 * A cascade goes this deep at most, and all of them visit this many
 * periods at most: a chain of waits longer than that is rare, and the
 * graph of a long recording stays seconds away.
 */
#define CASCADE_DEPTH 16
#define CASCADE_BUDGET 200000000ULL

#define NONE UINT32_MAX

/* Time one edge took at one stack (waiting side) or waker. */
struct acc {
	uint32_t edge, id;
	uint64_t ns, count;
	uint64_t est;		/* waiting: of ns, unsampled switch-outs' time shared in */
};

struct accs {
	struct acc *v;
	size_t n, cap;
	struct wp_u64map at;	/* edge << 32 | id -> index + 1 */
};

struct builder {
	const struct wp_waits *w;
	const struct wp_view *v;
	struct wp_waitgraph *g;
	uint32_t *group_of;		/* by serial: its group */
	uint32_t *node_of_group;	/* by group: its node, or NONE */
	size_t nr_groups;
	uint32_t device_node[WP_NR_CAUSES];
	struct wp_u64map outside;	/* pid -> node + 1 */
	struct wp_u64map outside_tids;	/* the outside threads seen */
	struct wp_u64map edge_at;	/* from << 32 | to -> edge + 1 */
	size_t cap_nodes, cap_edges;
	struct accs waiting, wakers;
	uint32_t visited[CASCADE_DEPTH + 2];
	uint64_t chain_edges[CASCADE_DEPTH + 2];	/* from << 32 | to, hop by hop */
	int err;
};

/* A new node, or NONE (b->err set). */
static uint32_t node_new(struct builder *b, enum wp_wg_node_kind kind)
{
	struct wp_waitgraph *g = b->g;
	struct wp_wg_node *n;

	if (WP_GROW(g->nodes, b->cap_nodes, g->nr_nodes + 1)) {
		b->err = -ENOMEM;
		return NONE;
	}
	n = &g->nodes[g->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	return (uint32_t)g->nr_nodes++;
}

/* The node of a thread's group, made on first use. */
static uint32_t thread_node(struct builder *b, uint32_t serial)
{
	uint32_t grp = b->group_of[serial], id;
	const struct wp_thread_times *t;
	struct wp_wg_node *n;

	if (b->node_of_group[grp] != NONE)
		return b->node_of_group[grp];
	id = node_new(b, WP_WG_THREADS);
	if (id == NONE)
		return NONE;
	b->node_of_group[grp] = id;
	n = &b->g->nodes[id];
	t = b->w->threads[serial].t;
	n->pid = t->pid;
	n->tid = t->tid;
	snprintf(n->name, sizeof(n->name), "%s", t->comm);
	return id;
}

static uint32_t device_node(struct builder *b, enum wp_cause c)
{
	uint32_t id;

	if (b->device_node[c] != NONE)
		return b->device_node[c];
	id = node_new(b, WP_WG_DEVICE);
	if (id == NONE)
		return NONE;
	b->g->nodes[id].cause = c;
	snprintf(b->g->nodes[id].name, sizeof(b->g->nodes[id].name), "%s", wp_cause_name(c));
	b->device_node[c] = id;
	return id;
}

/*
 * A thread outside the recording: a node per process (a load generator's
 * threads are one client, not a knot each), named as the reports name
 * its first thread, with how many of its threads woke the recording's.
 */
static uint32_t outside_node(struct builder *b, uint32_t waker)
{
	const struct wp_waker *wk = &b->w->wakers[waker];
	uint64_t key = wk->pid ? wk->pid : wk->tid, at, seen;
	struct wp_wg_node *n;
	uint32_t id;
	char buf[32];

	if (wp_u64map_get(&b->outside, key, &at)) {
		id = (uint32_t)at - 1;
	} else {
		id = node_new(b, WP_WG_OUTSIDE);
		if (id == NONE)
			return NONE;
		if (wp_u64map_put(&b->outside, key, (uint64_t)id + 1)) {
			b->err = -ENOMEM;
			return NONE;
		}
		n = &b->g->nodes[id];
		n->pid = wk->pid;
		n->tid = wk->tid;
		snprintf(n->name, sizeof(n->name), "%s",
			 wp_waker_name(b->w->an, wk, buf, sizeof(buf)));
	}
	if (!wp_u64map_get(&b->outside_tids, wk->tid, &seen)) {
		if (wp_u64map_put(&b->outside_tids, wk->tid, 1)) {
			b->err = -ENOMEM;
			return NONE;
		}
		b->g->nodes[id].nr_outside++;
	}
	return id;
}

/* The node that a blocked period of a cause waited for. */
static uint32_t cause_node(struct builder *b, enum wp_cause c, uint32_t serial, uint32_t waker)
{
	switch (c) {
	case WP_CAUSE_THREAD:
		return thread_node(b, serial);
	case WP_CAUSE_OUTSIDE:
		return outside_node(b, waker);
	default:
		return device_node(b, c);
	}
}

static int accs_add(struct accs *a, uint32_t edge, uint32_t id, uint64_t ns, bool count)
{
	uint64_t key = (uint64_t)edge << 32 | id, at;

	if (!wp_u64map_get(&a->at, key, &at)) {
		if (WP_GROW(a->v, a->cap, a->n + 1) || wp_u64map_put(&a->at, key, a->n + 1))
			return -ENOMEM;
		a->v[a->n] = (struct acc){ .edge = edge, .id = id };
		at = ++a->n;
	}
	a->v[at - 1].ns += ns;
	a->v[at - 1].count += count;
	return 0;
}

/*
 * ns of waiting from node `from` to node `to`, by a blocked period with
 * its stack and waker; direct: the period's own thread is shown.
 */
static void edge_add(struct builder *b, uint32_t from, uint32_t to, uint64_t ns, bool direct,
		     const struct wp_kept_event *p)
{
	struct wp_waitgraph *g = b->g;
	uint64_t key = (uint64_t)from << 32 | to, at;
	struct wp_wg_edge *e;

	if (from == NONE || to == NONE || !ns)
		return;
	if (!wp_u64map_get(&b->edge_at, key, &at)) {
		if (WP_GROW(g->edges, b->cap_edges, g->nr_edges + 1) ||
		    wp_u64map_put(&b->edge_at, key, g->nr_edges + 1)) {
			b->err = -ENOMEM;
			return;
		}
		e = &g->edges[g->nr_edges];
		memset(e, 0, sizeof(*e));
		e->from = from;
		e->to = to;
		at = ++g->nr_edges;
	}
	e = &g->edges[at - 1];
	e->weight_ns += ns;
	if (direct) {
		e->direct_ns += ns;
		e->count++;
	}
	if (accs_add(&b->waiting, (uint32_t)(at - 1), p->stack, ns, direct) ||
	    (p->waker != UINT32_MAX &&
	     accs_add(&b->wakers, (uint32_t)(at - 1), p->waker, ns, direct)))
		b->err = -ENOMEM;
}

/*
 * While a thread of the chain visited[0..depth] waited over [s, e) for
 * thread serial, serial's own waits inside it count toward its edges, and
 * those of whom it waited for, down the chain; but once per edge in a
 * chain (chain_edges[0..depth - 1]): in a convoy of one node's threads
 * (workers taking turns at a lock) every hop is that node's edge to
 * itself, and the same stretch of waiting would count once a hop.
 */
static void cascade(struct builder *b, uint32_t serial, uint64_t s, uint64_t e,
		    unsigned int depth)
{
	const struct wp_waits *w = b->w;
	const struct wp_waits_thread *t = wp_waits_thread(w, serial);

	if (!t)
		return;
	for (size_t i = wp_waits_first_after(w, serial, s); i < t->n && !b->err; i++) {
		const struct wp_kept_event *q = &w->periods[t->first + i];
		uint64_t from = q->start_ns > s ? q->start_ns : s;
		uint64_t to = q->end_ns < e ? q->end_ns : e;
		uint32_t next;
		enum wp_cause c;
		bool seen = false, again = false;
		uint64_t key;

		if (q->start_ns >= e)
			break;
		if (++b->g->cascade_steps > CASCADE_BUDGET) {
			b->g->cascade_cut = true;
			return;
		}
		if (q->kind != WP_PERIOD_BLOCKED || to <= from)
			continue;
		c = wp_waits_cause(w, q, &next);
		if (c == WP_CAUSE_NONE || c == WP_CAUSE_GATED)
			continue;
		key = (uint64_t)thread_node(b, serial) << 32 | cause_node(b, c, next, q->waker);
		for (unsigned int k = 0; k < depth; k++)
			again |= b->chain_edges[k] == key;
		if (!again)
			edge_add(b, (uint32_t)(key >> 32), (uint32_t)key, to - from, false, q);
		if (c != WP_CAUSE_THREAD)
			continue;
		for (unsigned int k = 0; k <= depth; k++)
			seen |= b->visited[k] == next;
		if (seen)
			continue;	/* a cycle: its waits are counted already */
		if (depth + 1 > CASCADE_DEPTH) {
			b->g->cascade_cut = true;
			continue;
		}
		b->visited[depth + 1] = next;
		b->chain_edges[depth] = key;
		cascade(b, next, from, to, depth + 1);
	}
}

static int stack_id_cmp(const void *a, const void *b);

/*
 * A thread's waits whose wake-up was not recorded (gated ns of them):
 * shared among the edges of its recorded waits, in proportion (the
 * ledger estimates its wakers so too).
 */
static void share_gated(struct builder *b, uint32_t self, const struct wp_u64map *mine,
			uint64_t known_ns, uint64_t gated_ns)
{
	struct wp_waitgraph *g = b->g;
	uint64_t left = gated_ns, key, ns;
	struct wp_wg_edge *last = NULL;
	struct wp_wg_stack *to;
	size_t pos = 0, n = 0;

	if (!known_ns || !gated_ns)
		return;
	/* In the order of the targets, so that the same file gives the same shares. */
	to = calloc(mine->len + 1, sizeof(*to));
	if (!to) {
		b->err = -ENOMEM;
		return;
	}
	while (wp_u64map_next(mine, &pos, &key, &ns))
		to[n++] = (struct wp_wg_stack){ .id = (uint32_t)key, .ns = ns };
	qsort(to, n, sizeof(*to), stack_id_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t at, part = (uint64_t)((double)gated_ns * (double)to[i].ns / (double)known_ns);
		struct wp_wg_edge *e;

		if (!wp_u64map_get(&b->edge_at, (uint64_t)self << 32 | to[i].id, &at))
			continue;
		e = &g->edges[at - 1];
		if (part > left)
			part = left;
		e->weight_ns += part;
		e->direct_ns += part;
		e->estimated_ns += part;
		left -= part;
		last = e;
	}
	/* What rounding left over, on the last: the shares add up. */
	if (last) {
		last->weight_ns += left;
		last->direct_ns += left;
		last->estimated_ns += left;
	}
	free(to);
}

/* A thread's blocked periods, as recorded, in all. */
static uint64_t periods_blocked_ns(const struct wp_waits *w, const struct wp_waits_thread *t)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct wp_kept_event *p = &w->periods[t->first + i];

		if (p->kind == WP_PERIOD_BLOCKED)
			ns += p->end_ns - p->start_ns;
	}
	return ns;
}

/* d of recorded ns as the ledger counts them: num of its for den recorded. */
static uint64_t as_ledger(uint64_t d, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)d * num / den) : d;
}

/*
 * Every wait of a shown thread, and the cascades it starts.  Its direct
 * edges count its waits as the ledger counts its blocked time (anchored
 * to the kernel's figures, which may move time between its waits and
 * its on-CPU or runnable time), scaled alike, so that they add up to its
 * node's blocked time (add_times) and never past it.
 */
static void waits_of(struct builder *b, uint32_t serial)
{
	const struct wp_waits *w = b->w;
	const struct wp_waits_thread *t = &w->threads[serial];
	uint32_t self = thread_node(b, serial);
	struct wp_u64map mine = WP_U64MAP_INIT;	/* its waits' targets -> ns */
	uint64_t known_ns = 0, gated_ns = 0;
	uint64_t recorded_ns = periods_blocked_ns(w, t), ledger_ns = t->t->blocked_ns;

	if (self == NONE)
		return;
	b->g->nodes[self].shown = true;
	for (size_t i = 0; i < t->n && !b->err; i++) {
		const struct wp_kept_event *p = &w->periods[t->first + i];
		uint64_t d = p->end_ns - p->start_ns, had = 0;
		uint32_t next, to;
		enum wp_cause c;

		if (p->kind != WP_PERIOD_BLOCKED)
			continue;
		d = as_ledger(d, ledger_ns, recorded_ns);
		b->g->blocked_ns += d;
		c = wp_waits_cause(w, p, &next);
		if (c == WP_CAUSE_GATED)
			gated_ns += d;
		if (c == WP_CAUSE_NONE || c == WP_CAUSE_GATED)
			continue;
		to = cause_node(b, c, next, p->waker);
		edge_add(b, self, to, d, true, p);
		known_ns += d;
		wp_u64map_get(&mine, to, &had);
		if (wp_u64map_put(&mine, to, had + d))
			b->err = -ENOMEM;
		if (c != WP_CAUSE_THREAD || next == serial)
			continue;
		b->visited[0] = serial;
		b->visited[1] = next;
		b->chain_edges[0] = (uint64_t)self << 32 | to;
		cascade(b, next, p->start_ns, p->end_ns, 1);
	}
	if (!b->err)
		share_gated(b, self, &mine, known_ns, gated_ns);
	wp_u64map_release(&mine);
}

/* A thread's blocked time by switch-out stack, sorted by stack. */
struct profile {
	uint32_t serial;
	uint64_t blocked_ns;
	struct wp_wg_stack *stacks;	/* id: stack, ns */
	size_t n;
};

static int stack_id_cmp(const void *a, const void *b)
{
	const struct wp_wg_stack *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int profile_of(const struct wp_waits *w, uint32_t serial, struct profile *pr)
{
	const struct wp_waits_thread *t = &w->threads[serial];
	size_t cap = 0, n = 0;

	pr->serial = serial;
	for (size_t i = 0; i < t->n; i++) {
		const struct wp_kept_event *p = &w->periods[t->first + i];

		if (p->kind != WP_PERIOD_BLOCKED)
			continue;
		pr->blocked_ns += p->end_ns - p->start_ns;
		/*
		 * A switch-out without a sampled stack says nothing of where
		 * the thread waited, and every thread has them alike.
		 */
		if (p->stack == w->an->unsampled_switch_stack)
			continue;
		if (WP_GROW(pr->stacks, cap, n + 1))
			return -ENOMEM;
		pr->stacks[n++] = (struct wp_wg_stack){ .id = p->stack,
							 .ns = p->end_ns - p->start_ns };
	}
	if (n)	/* (else never grown: qsort may not have a null array) */
		qsort(pr->stacks, n, sizeof(*pr->stacks), stack_id_cmp);
	/* One entry per stack. */
	pr->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (pr->n && pr->stacks[pr->n - 1].id == pr->stacks[i].id)
			pr->stacks[pr->n - 1].ns += pr->stacks[i].ns;
		else
			pr->stacks[pr->n++] = pr->stacks[i];
	}
	return 0;
}

/* Weighted Jaccard index of two threads' blocked time by stack. */
static double similarity(const struct profile *x, const struct profile *y)
{
	uint64_t lo = 0, hi = 0;
	size_t i = 0, j = 0;

	while (i < x->n || j < y->n) {
		if (j == y->n || (i < x->n && x->stacks[i].id < y->stacks[j].id)) {
			hi += x->stacks[i++].ns;
		} else if (i == x->n || y->stacks[j].id < x->stacks[i].id) {
			hi += y->stacks[j++].ns;
		} else {
			uint64_t a = x->stacks[i++].ns, c = y->stacks[j++].ns;

			lo += a < c ? a : c;
			hi += a > c ? a : c;
		}
	}
	return hi ? (double)lo / (double)hi : 0;
}

static int profile_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *x = a, *y = b;
	const struct wp_waits *w = arg;
	const struct wp_thread_times *tx = w->threads[x->serial].t, *ty = w->threads[y->serial].t;

	if (tx->pid != ty->pid)
		return tx->pid < ty->pid ? -1 : 1;
	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/*
 * Threads into groups: of one process, each joins the first group (the
 * heaviest waiter first) whose first thread waits as it does; a thread
 * that never blocked stays alone.
 */
static int group_threads(struct builder *b, const struct wp_wg_opts *o)
{
	const struct wp_waits *w = b->w;
	struct profile *pr;
	size_t *rep, n = 0, first_group = 0;
	int err = 0;

	b->group_of = calloc(w->nr_threads + 1, sizeof(*b->group_of));
	b->node_of_group = calloc(w->nr_threads + 1, sizeof(*b->node_of_group));
	pr = calloc(w->nr_threads + 1, sizeof(*pr));
	rep = calloc(w->nr_threads + 1, sizeof(*rep));
	if (!b->group_of || !b->node_of_group || !pr || !rep) {
		free(pr);
		free(rep);
		return -ENOMEM;
	}
	for (size_t s = 0; s < w->nr_threads; s++)
		b->node_of_group[s] = NONE;
	for (uint32_t s = 0; s < w->nr_threads && !err; s++)
		if (w->threads[s].t)
			err = profile_of(w, s, &pr[n++]);
	if (!err)
		qsort_r(pr, n, sizeof(*pr), profile_cmp, (void *)w);
	for (size_t i = 0; i < n && !err; i++) {
		const struct wp_thread_times *t = w->threads[pr[i].serial].t;
		size_t grp = b->nr_groups;

		if (i && w->threads[pr[i - 1].serial].t->pid != t->pid)
			first_group = b->nr_groups;
		for (size_t k = first_group; k < b->nr_groups && o->grouping != WP_WG_GROUP_NONE;
		     k++) {
			const struct profile *r = &pr[rep[k]];

			if (o->grouping == WP_WG_GROUP_NAME ?
			    !strcmp(t->comm, w->threads[r->serial].t->comm) :
			    pr[i].blocked_ns && r->blocked_ns &&
			    similarity(&pr[i], r) >= o->similarity) {
				grp = k;
				break;
			}
		}
		if (grp == b->nr_groups)
			rep[b->nr_groups++] = i;
		b->group_of[pr[i].serial] = (uint32_t)grp;
	}
	for (size_t i = 0; i < n; i++)
		free(pr[i].stacks);
	free(pr);
	free(rep);
	return err;
}

/*
 * A thread's times into its node's: the ledger's totals (on-CPU anchored
 * to the kernel's figures, the runnable part of unrecorded wake-ups
 * estimated), which the periods as recorded are not, so that every format
 * gives a thread the same figures; its blocked time split by cause as its
 * periods split it.
 */
static void add_times(struct wp_wg_times *t, const struct wp_waits *w, uint32_t serial)
{
	const struct wp_waits_thread *th = &w->threads[serial];
	const struct wp_thread_times *led = th->t;
	uint64_t blocked[WP_NR_CAUSES] = { 0 }, sum = periods_blocked_ns(w, th), given = 0;
	int most = WP_CAUSE_NONE;

	for (size_t i = 0; i < th->n; i++) {
		const struct wp_kept_event *p = &w->periods[th->first + i];
		uint32_t next;

		if (p->kind == WP_PERIOD_BLOCKED)
			blocked[wp_waits_cause(w, p, &next)] += p->end_ns - p->start_ns;
	}
	t->on_cpu_ns += led->on_cpu_ns;
	t->runnable_ns += led->runnable_ns;
	t->preempted_ns += led->preempted_ns;
	for (int c = 0; c < WP_NR_CAUSES; c++) {
		uint64_t part = sum ? as_ledger(blocked[c], led->blocked_ns, sum) : 0;

		t->blocked_ns[c] += part;
		given += part;
		if (blocked[c] > blocked[most])
			most = c;
	}
	t->blocked_ns[most] += led->blocked_ns - given;
}

/* Each thread node's threads and times; whether their names differ. */
static int fill_nodes(struct builder *b)
{
	const struct wp_waits *w = b->w;
	struct wp_waitgraph *g = b->g;

	for (uint32_t s = 0; s < w->nr_threads; s++) {
		uint32_t id;

		if (w->threads[s].t && (id = b->node_of_group[b->group_of[s]]) != NONE)
			g->nodes[id].nr_serials++;
	}
	for (size_t i = 0; i < g->nr_nodes; i++) {
		if (!g->nodes[i].nr_serials)
			continue;
		g->nodes[i].serials = calloc(g->nodes[i].nr_serials, sizeof(uint32_t));
		if (!g->nodes[i].serials)
			return -ENOMEM;
		g->nodes[i].nr_serials = 0;
		g->nodes[i].idle = true;
	}
	for (uint32_t s = 0; s < w->nr_threads; s++) {
		struct wp_wg_node *n;
		uint32_t id;

		if (!w->threads[s].t || (id = b->node_of_group[b->group_of[s]]) == NONE)
			continue;
		n = &g->nodes[id];
		n->serials[n->nr_serials++] = s;
		if (strcmp(n->name, w->threads[s].t->comm))
			n->names_differ = true;
		add_times(&n->times, w, s);
		if (wp_view_thread(b->v, w->threads[s].index))
			n->shown = true;
		if (!wp_view_idle_by_rule(b->v, w->threads[s].index))
			n->idle = false;
	}
	return 0;
}

/* Stack accumulators into each edge's heaviest few. */
static int acc_cmp(const void *a, const void *b)
{
	const struct acc *x = a, *y = b;

	if (x->edge != y->edge)
		return x->edge < y->edge ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The waiting time of an edge's unsampled switch-outs (the accumulators
 * v[0..n), one edge's, the one at unsampled among them), shared among its
 * sampled stacks in proportion to their time (est: each one's part); the
 * unsampled one keeps nothing.  What rounding leaves goes to the
 * heaviest.  Without a sampled stack, nothing moves.
 */
static void share_unsampled(struct acc *v, size_t n, size_t unsampled)
{
	uint64_t sampled = 0, left = v[unsampled].ns, part;
	size_t heaviest = n;

	for (size_t i = 0; i < n; i++)
		if (i != unsampled && v[i].ns) {
			sampled += v[i].ns;
			if (heaviest == n || v[i].ns > v[heaviest].ns)
				heaviest = i;
		}
	if (!sampled)
		return;
	for (size_t i = 0; i < n; i++) {
		if (i == unsampled || !v[i].ns)
			continue;
		part = (uint64_t)((double)v[unsampled].ns * (double)v[i].ns / (double)sampled);
		if (part > left)
			part = left;
		v[i].est = part;
		left -= part;
	}
	v[heaviest].est += left;
	for (size_t i = 0; i < n; i++)
		v[i].ns += v[i].est;
	v[unsampled].ns = 0;
}

static void keep_heaviest(struct wp_waitgraph *g, struct accs *a, bool waker,
			  uint32_t unsampled_stack)
{
	if (!a->n)
		return;	/* a->v was never grown: qsort may not have it */
	qsort(a->v, a->n, sizeof(*a->v), acc_cmp);
	/* An edge's waits without a sampled stack: spread over its sampled ones. */
	for (size_t lo = 0, hi; !waker && lo < a->n; lo = hi) {
		size_t unsampled = SIZE_MAX;

		for (hi = lo; hi < a->n && a->v[hi].edge == a->v[lo].edge; hi++)
			if (a->v[hi].id == unsampled_stack)
				unsampled = hi - lo;
		if (unsampled != SIZE_MAX) {
			share_unsampled(a->v + lo, hi - lo, unsampled);
			qsort(a->v + lo, hi - lo, sizeof(*a->v), acc_cmp);	/* heaviest first again */
		}
	}
	for (size_t i = 0; i < a->n; i++) {
		struct wp_wg_edge *e = &g->edges[a->v[i].edge];
		unsigned int *n = waker ? &e->nr_waker : &e->nr_waiting;
		struct wp_wg_stack *to = waker ? e->waker : e->waiting;

		if (*n < WP_WG_STACKS && a->v[i].ns)
			to[(*n)++] = (struct wp_wg_stack){ .id = a->v[i].id, .ns = a->v[i].ns,
							   .count = a->v[i].count,
							   .estimated_ns = a->v[i].est };
	}
}

static bool edge_live(const struct wp_wg_edge *e)
{
	return !e->dropped && !e->trimmed;
}

/*
 * Strongly connected components over the live edges (Tarjan's, without
 * recursion): comp[node] is its component, numbered from 0, sinks first.
 */
static int components(const struct wp_waitgraph *g, uint32_t *comp, size_t *nr_comps)
{
	size_t n = g->nr_nodes, ncomp = 0, sp = 0, csp = 0;
	uint32_t *first = calloc(n + 1, sizeof(*first)), *adj = NULL;
	uint32_t *index = calloc(n + 1, sizeof(*index)), *low = calloc(n + 1, sizeof(*low));
	uint32_t *stack = calloc(n + 1, sizeof(*stack)), *call = calloc(n + 1, sizeof(*call));
	uint32_t *next = calloc(n + 1, sizeof(*next));
	bool *on = calloc(n + 1, sizeof(*on));
	uint32_t counter = 1;
	size_t nadj = 0;
	int err = -ENOMEM;

	if (!first || !index || !low || !stack || !call || !next || !on)
		goto out;
	/* Adjacency lists: first[v] .. first[v + 1] in adj. */
	for (size_t i = 0; i < g->nr_edges; i++)
		if (edge_live(&g->edges[i]))
			first[g->edges[i].from + 1]++, nadj++;
	for (size_t v = 0; v < n; v++)
		first[v + 1] += first[v];
	adj = calloc(nadj + 1, sizeof(*adj));
	if (!adj)
		goto out;
	for (size_t v = 0; v <= n; v++)
		next[v] = first[v];
	for (size_t i = 0; i < g->nr_edges; i++)
		if (edge_live(&g->edges[i]))
			adj[next[g->edges[i].from]++] = g->edges[i].to;
	for (size_t root = 0; root < n; root++) {
		if (index[root])
			continue;
		call[csp++] = (uint32_t)root;
		index[root] = low[root] = counter++;
		stack[sp++] = (uint32_t)root;
		on[root] = true;
		next[root] = first[root];
		while (csp) {
			uint32_t v = call[csp - 1];

			if (next[v] < first[v + 1]) {
				uint32_t u = adj[next[v]++];

				if (!index[u]) {
					index[u] = low[u] = counter++;
					stack[sp++] = u;
					on[u] = true;
					next[u] = first[u];
					call[csp++] = u;
				} else if (on[u] && index[u] < low[v]) {
					low[v] = index[u];
				}
				continue;
			}
			if (low[v] == index[v]) {
				uint32_t u;

				do {
					u = stack[--sp];
					on[u] = false;
					comp[u] = (uint32_t)ncomp;
				} while (u != v);
				ncomp++;
			}
			csp--;
			if (csp && low[v] < low[call[csp - 1]])
				low[call[csp - 1]] = low[v];
		}
	}
	*nr_comps = ncomp;
	err = 0;
out:
	free(first);
	free(adj);
	free(index);
	free(low);
	free(stack);
	free(call);
	free(next);
	free(on);
	return err;
}

/*
 * The knots: components with no live edge out, that something at work
 * waits for (an edge in, or inside, from a node not idle: a runtime's
 * idle timer loop waiting for its timer paces no one).  While a knot of
 * several nodes has an inner
 * edge under the trim weight, its lightest goes and the components are
 * made again: what remains waits for the rest.
 */
static int find_knots(struct wp_waitgraph *g)
{
	uint64_t trim_ns = (uint64_t)(g->opts.knot_trim * (double)g->window_ns);
	uint32_t *comp = calloc(g->nr_nodes + 1, sizeof(*comp));
	size_t ncomp = 0;
	bool *out = NULL, *used = NULL;
	int err = -ENOMEM;

	if (!comp)
		return -ENOMEM;
	for (;;) {
		bool trimmed = false;

		err = components(g, comp, &ncomp);
		if (err)
			goto out;
		free(out);
		free(used);
		out = calloc(ncomp + 1, sizeof(*out));
		used = calloc(ncomp + 1, sizeof(*used));
		if (!out || !used) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < g->nr_edges; i++) {
			const struct wp_wg_edge *e = &g->edges[i];

			if (!edge_live(e))
				continue;
			if (!g->nodes[e->from].idle)
				used[comp[e->to]] = true;
			if (comp[e->from] != comp[e->to])
				out[comp[e->from]] = true;
		}
		/* Each knot of several nodes: its lightest inner edge, if light. */
		for (size_t c = 0; c < ncomp; c++) {
			struct wp_wg_edge *light = NULL;
			size_t members = 0;

			if (out[c] || !used[c])
				continue;
			for (size_t v = 0; v < g->nr_nodes; v++)
				members += comp[v] == c;
			if (members < 2)
				continue;
			for (size_t i = 0; i < g->nr_edges; i++) {
				struct wp_wg_edge *e = &g->edges[i];

				if (edge_live(e) && comp[e->from] == c && comp[e->to] == c &&
				    (!light || e->weight_ns < light->weight_ns))
					light = e;
			}
			if (light && light->weight_ns < trim_ns) {
				light->trimmed = true;
				trimmed = true;
			}
		}
		if (!trimmed)
			break;
	}
	for (size_t c = 0; c < ncomp; c++) {
		struct wp_wg_knot *k;

		if (out[c] || !used[c])
			continue;
		k = wp_grow(g->knots, &(size_t){ g->nr_knots }, g->nr_knots + 1, sizeof(*g->knots));
		if (!k) {
			err = -ENOMEM;
			goto out;
		}
		g->knots = k;
		k = &g->knots[g->nr_knots];
		memset(k, 0, sizeof(*k));
		for (size_t v = 0; v < g->nr_nodes; v++)
			k->nr_nodes += comp[v] == c;
		k->nodes = calloc(k->nr_nodes, sizeof(*k->nodes));
		if (!k->nodes) {
			err = -ENOMEM;
			goto out;
		}
		g->nr_knots++;
		k->nr_nodes = 0;
		for (size_t v = 0; v < g->nr_nodes; v++)
			if (comp[v] == c)
				k->nodes[k->nr_nodes++] = (uint32_t)v;
		for (size_t i = 0; i < g->nr_edges; i++) {
			const struct wp_wg_edge *e = &g->edges[i];

			if (e->dropped || comp[e->to] != c)
				continue;
			if (comp[e->from] == c)
				k->inner_ns += e->weight_ns;
			else
				k->in_ns += e->weight_ns;
		}
	}
	err = 0;
out:
	free(comp);
	free(out);
	free(used);
	return err;
}

static int edge_cmp(const void *a, const void *b)
{
	const struct wp_wg_edge *x = a, *y = b;

	if (x->weight_ns != y->weight_ns)
		return x->weight_ns > y->weight_ns ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static int knot_cmp(const void *a, const void *b)
{
	const struct wp_wg_knot *x = a, *y = b;
	uint64_t wx = x->in_ns + x->inner_ns, wy = y->in_ns + y->inner_ns;

	if (wx != wy)
		return wx > wy ? -1 : 1;
	return x->nodes[0] < y->nodes[0] ? -1 : x->nodes[0] > y->nodes[0];
}

int wp_waitgraph_build(const struct wp_waits *w, const struct wp_view *v,
		       const struct wp_wg_opts *o, struct wp_waitgraph *g)
{
	const struct wp_analysis *an = w->an;
	struct builder b = { .w = w, .v = v, .g = g };
	int err;

	memset(g, 0, sizeof(*g));
	g->opts = *o;
	g->window_start = an->window_start;
	g->window_end = an->window_end;
	g->window_ns = an->window_end > an->window_start ? an->window_end - an->window_start : 0;
	g->threshold_ns = (uint64_t)(o->threshold * (double)g->window_ns);
	for (int c = 0; c < WP_NR_CAUSES; c++)
		b.device_node[c] = NONE;
	err = group_threads(&b, o);
	for (uint32_t s = 0; !err && !b.err && s < w->nr_threads; s++) {
		if (!w->threads[s].t || !wp_view_thread(v, w->threads[s].index))
			continue;
		g->threads_shown++;
		waits_of(&b, s);
	}
	if (!err)
		err = b.err;
	if (!err)
		err = fill_nodes(&b);
	if (!err) {
		/* Node indexes of the edges stay; their stacks follow them sorted. */
		keep_heaviest(g, &b.waiting, false, w->an->unsampled_switch_stack);
		keep_heaviest(g, &b.wakers, true, WP_WAITS_NONE);
		for (size_t i = 0; i < g->nr_edges; i++) {
			g->edges[i].dropped = g->edges[i].weight_ns < g->threshold_ns;
			g->nr_dropped += g->edges[i].dropped;
		}
		if (g->nr_edges)
			qsort(g->edges, g->nr_edges, sizeof(*g->edges), edge_cmp);
		err = find_knots(g);
	}
	if (!err) {
		if (g->nr_knots)
			qsort(g->knots, g->nr_knots, sizeof(*g->knots), knot_cmp);
		for (size_t k = 0; k < g->nr_knots; k++)
			for (uint32_t i = 0; i < g->knots[k].nr_nodes; i++)
				g->nodes[g->knots[k].nodes[i]].knot = (uint32_t)k + 1;
	}
	free(b.group_of);
	free(b.node_of_group);
	free(b.waiting.v);
	free(b.wakers.v);
	wp_u64map_release(&b.waiting.at);
	wp_u64map_release(&b.wakers.at);
	wp_u64map_release(&b.outside);
	wp_u64map_release(&b.outside_tids);
	wp_u64map_release(&b.edge_at);
	if (err) {
		wp_error("out of memory making the wait-for graph");
		wp_waitgraph_release(g);
	}
	return err;
}

void wp_waitgraph_release(struct wp_waitgraph *g)
{
	for (size_t i = 0; i < g->nr_nodes; i++)
		free(g->nodes[i].serials);
	for (size_t i = 0; i < g->nr_knots; i++)
		free(g->knots[i].nodes);
	free(g->nodes);
	free(g->edges);
	free(g->knots);
	memset(g, 0, sizeof(*g));
}

uint64_t wp_wg_blocked_ns(const struct wp_wg_times *t)
{
	uint64_t ns = 0;

	for (int c = 0; c < WP_NR_CAUSES; c++)
		ns += t->blocked_ns[c];
	return ns;
}

void wp_wg_node_label(const struct wp_wg_node *n, char *buf, size_t size)
{
	switch (n->kind) {
	case WP_WG_DEVICE:
		snprintf(buf, size, "[%s]", n->name);
		break;
	case WP_WG_OUTSIDE:
		if (n->nr_outside > 1)
			snprintf(buf, size, "%s x%" PRIu32 " (%" PRIu32 ", not recorded)", n->name,
				 n->nr_outside, n->pid);
		else
			snprintf(buf, size, "%s (%" PRIu32 ", not recorded)", n->name, n->tid);
		break;
	default:
		if (n->nr_serials > 1)
			snprintf(buf, size, "%s%s x%" PRIu32 " (%" PRIu32 ")", n->name,
				 n->names_differ ? "..." : "", n->nr_serials, n->pid);
		else
			snprintf(buf, size, "%s (%" PRIu32 "/%" PRIu32 ")", n->name, n->pid, n->tid);
		break;
	}
}
