/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * waitgraph.h: the wait-for graph of a recording, and its knots.
 *
 * A node is a thread, or a group of threads of one process that wait in
 * much the same places (their blocked time by switch-out stack, weighted
 * Jaccard similarity 0.45 or more), or a thread outside the recording, or
 * a device: the timer, the network, the disk, other interrupts.  An edge
 * A -> B weighs the waiting of the threads shown that B's wake-ups ended,
 * directly (A blocked, B woke it) and in cascade: while A waits for B over
 * [s, e), B's own waits inside [s, e) count toward B's edges too, and so
 * on down the chain, each thread once per chain (the cycle guard), so
 * that an edge weighs all the waiting that went through it.  Edges whose
 * weight is under a share of the window are dropped.  A knot is a set of
 * nodes that wait only for each other (a strongly connected component
 * with no edge out): every knot holds a bottleneck, and a device that
 * threads wait for is one by itself.  A knot of several nodes is narrowed
 * by dropping its lightest inner edges while they weigh under a fifth of
 * the window.  The design follows wPerf (Zhou et al., OSDI 2018).
 * Owns its nodes, edges and knots; borrows the waits it was built from.
 */
#ifndef WALLPROF_WAITGRAPH_H
#define WALLPROF_WAITGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "view.h"
#include "waits.h"

enum wp_wg_grouping {
	WP_WG_GROUP_STACKS,	/* threads of a process that wait in similar stacks */
	WP_WG_GROUP_NAME,	/* threads of a process with the same name */
	WP_WG_GROUP_NONE,	/* every thread a node of its own */
};

struct wp_wg_opts {
	double threshold;	/* edges under this share of the window are dropped */
	enum wp_wg_grouping grouping;
	double similarity;	/* WP_WG_GROUP_STACKS: the least weighted Jaccard index */
	double knot_trim;	/* knots: inner edges under this share of the window go */
};

#define WP_WG_THRESHOLD 0.01
#define WP_WG_SIMILARITY 0.45
#define WP_WG_KNOT_TRIM 0.20

enum wp_wg_node_kind {
	WP_WG_THREADS,		/* one or more threads of the recording */
	WP_WG_OUTSIDE,		/* a thread outside the recording (a waker only) */
	WP_WG_DEVICE,		/* a cause that is no thread (enum wp_cause) */
};

/* Time of a node's threads in the window; blocked time by what ended it. */
struct wp_wg_times {
	uint64_t on_cpu_ns, runnable_ns, preempted_ns;
	uint64_t blocked_ns[WP_NR_CAUSES];	/* by enum wp_cause */
};

struct wp_wg_node {
	enum wp_wg_node_kind kind;
	enum wp_cause cause;		/* DEVICE: which */
	uint32_t pid, tid;		/* THREADS: its first thread's; OUTSIDE: the first waker's */
	uint32_t nr_outside;		/* OUTSIDE: the process's threads that woke any */
	uint32_t *serials;		/* THREADS: its threads (by serial) */
	uint32_t nr_serials;
	char name[40];			/* its first thread's, or the waker's, or the device's */
	bool names_differ;		/* THREADS: its threads have more than one name */
	struct wp_wg_times times;	/* THREADS */
	uint32_t knot;			/* its knot + 1, or 0 */
	bool shown;			/* holds a thread the view shows */
	/*
	 * THREADS: every thread of it idle by the view's rule (it waited in
	 * one place nearly all along: a pool's idle worker, a runtime's
	 * timer loop), as the text report folds them: its waits pace no one,
	 * so they make no knot.
	 */
	bool idle;
};

/* Time an edge carries, by one stack of the waiting side or of the waker. */
struct wp_wg_stack {
	uint32_t id;			/* waiting: a stack id; waker: a waker index */
	uint64_t ns;
	uint64_t count;
	/*
	 * Waiting: of ns, the time of the edge's waits whose switch-out had
	 * no stack sampled, shared among its sampled stacks in proportion
	 * (as the ledger shares them: record's budget is blind to stacks).
	 */
	uint64_t estimated_ns;
};
#define WP_WG_STACKS 3		/* the heaviest kept per edge and side */

struct wp_wg_edge {
	uint32_t from, to;		/* node indexes */
	uint64_t weight_ns;		/* direct and cascaded */
	uint64_t direct_ns;		/* the waits that `to` ended itself */
	/*
	 * Of weight_ns and direct_ns: the waits of `from` whose wake-up was
	 * not recorded (record's budget), shared among its recorded wakers.
	 */
	uint64_t estimated_ns;
	uint64_t count;			/* blocked periods that `to` ended directly */
	bool dropped;			/* under the threshold */
	bool trimmed;			/* dropped while narrowing a knot */
	struct wp_wg_stack waiting[WP_WG_STACKS], waker[WP_WG_STACKS];
	unsigned int nr_waiting, nr_waker;
};

struct wp_wg_knot {
	uint32_t *nodes;
	uint32_t nr_nodes;
	uint64_t in_ns;			/* weight of the edges into it */
	uint64_t inner_ns;		/* weight of its inner edges */
};

struct wp_waitgraph {
	struct wp_wg_opts opts;
	uint64_t window_start, window_end, window_ns;
	uint64_t threshold_ns;
	struct wp_wg_node *nodes;
	size_t nr_nodes;
	struct wp_wg_edge *edges;	/* heaviest first */
	size_t nr_edges, nr_dropped;
	struct wp_wg_knot *knots;	/* heaviest first */
	size_t nr_knots;
	uint64_t blocked_ns;		/* of the threads shown, in all */
	uint64_t cascade_steps;		/* periods visited by the cascades */
	bool cascade_cut;		/* the cascades stopped at their budget or depth */
	size_t threads_shown;
};

/*
 * Build the graph of the threads that the view shows (and of everything
 * they waited for), over the analysis' window: 0, or -ENOMEM (logged).
 */
int wp_waitgraph_build(const struct wp_waits *w, const struct wp_view *v,
		       const struct wp_wg_opts *o, struct wp_waitgraph *g);
void wp_waitgraph_release(struct wp_waitgraph *g);

/* A node's name for people: "worker x4 (100)", "producer (100/101)", "[timer]". */
void wp_wg_node_label(const struct wp_wg_node *n, char *buf, size_t size);

/* Its blocked time in all. */
uint64_t wp_wg_blocked_ns(const struct wp_wg_times *t);

#endif
