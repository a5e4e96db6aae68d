/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_waitgraph.c: the wait-for graph (waitgraph.h) as text, as DOT
 * for Graphviz, as an SVG that wallprof draws itself, and as JSON.
 * Fields and a worked example in wallprof-report(1).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "log.h"
#include "quote.h"
#include "symbols.h"
#include "util.h"
#include "waitgraph.h"

#define TEXT_EDGES 20		/* edges listed in the text, heaviest first */
#define TEXT_NODES 20		/* and nodes */
#define KNOT_EDGES 5		/* edges shown under a knot */
#define FRAMES 8		/* frames of a stack in one line */

enum wg_form { WG_TEXT, WG_DOT, WG_SVG, WG_JSON };

/* Say once what the recording lacks for the graph. */
static bool explain_missing(const struct wp_waits *w, FILE *out, const char *prefix)
{
	if (!w->has_wakeups) {
		fprintf(out, "%sthe recording has no wake-ups (they need CAP_PERFMON or "
			"kernel.perf_event_paranoid <= -1, and tracefs; or --wakeups was off): "
			"no thread can be named as another's waker\n", prefix);
		return true;
	}
	if (!w->waker_stacks)
		fprintf(out, "%sthe wake-ups were recorded without kernel stacks "
			"(--wakeups=nostacks, or no kernel samples): interrupts are not told "
			"apart as timer, network or disk\n", prefix);
	return false;
}

static const char *human(uint64_t ns, char *buf, size_t size)
{
	return wp_human_ns(ns, buf, size);
}

static void label(const struct wp_waitgraph *g, uint32_t node, char *buf, size_t size)
{
	wp_wg_node_label(&g->nodes[node], buf, size);
}

/* The waker's name and context: "[timer] (softirq HRTIMER)", "writer (thread)". */
static void put_waker_kind(FILE *out, const struct wp_waits *w, uint32_t waker,
			   enum wp_quote_mode mode)
{
	const struct wp_waker *wk = &w->wakers[waker];
	char buf[32], where[48];

	wp_quote_puts(out, wp_waker_name(w->an, wk, buf, sizeof(buf)), mode);
	fputs(wp_waker_where(wk, where, sizeof(where)), out);
}

static void text_edge(const struct wp_waitgraph *g, const struct wp_waits *w,
		      const struct wp_wg_edge *e, FILE *out)
{
	char from[96], to[96], b1[16], b2[16];

	label(g, e->from, from, sizeof(from));
	label(g, e->to, to, sizeof(to));
	fputs("  ", out);
	wp_quote_puts(out, from, WP_QUOTE_TEXT);
	fputs(" -> ", out);
	wp_quote_puts(out, to, WP_QUOTE_TEXT);
	fprintf(out, "  %s", human(e->weight_ns, b1, sizeof(b1)));
	if (e->direct_ns != e->weight_ns)
		fprintf(out, " (%s its own, in %" PRIu64 " waits)",
			human(e->direct_ns, b2, sizeof(b2)), e->count);
	else
		fprintf(out, " (in %" PRIu64 " waits)", e->count);
	if (e->estimated_ns)
		fprintf(out, ", ~%s of it estimated", human(e->estimated_ns, b2, sizeof(b2)));
	if (g->nodes[e->to].knot && g->nodes[e->to].knot != g->nodes[e->from].knot)
		fprintf(out, "  into knot %" PRIu32, g->nodes[e->to].knot);
	if (e->trimmed)
		fputs("  (light: left out of its knot)", out);
	fputc('\n', out);
	for (unsigned int i = 0; i < e->nr_waiting; i++) {
		char pct[16];

		snprintf(pct, sizeof(pct), "%s%.1f%%",
			 wp_estimated_enough(e->waiting[i].estimated_ns, e->waiting[i].ns) ? "~" : "",
			 100.0 * (double)e->waiting[i].ns / (double)(e->weight_ns ? e->weight_ns : 1));
		fprintf(out, "      %-10s %6s  ", i ? "" : "waiting in", pct);
		wp_waits_put_stack(out, w->an, e->waiting[i].id, FRAMES, WP_QUOTE_TEXT);
		fputc('\n', out);
	}
	for (unsigned int i = 0; i < e->nr_waker; i++) {
		const struct wp_waker *wk = &w->wakers[e->waker[i].id];

		fprintf(out, "      %-10s %5.1f%%  ", i ? "" : "woken by",
			100.0 * (double)e->waker[i].ns / (double)(e->weight_ns ? e->weight_ns : 1));
		put_waker_kind(out, w, e->waker[i].id, WP_QUOTE_TEXT);
		fputs(": ", out);
		wp_waits_put_stack(out, w->an, wk->stack, FRAMES, WP_QUOTE_TEXT);
		fputc('\n', out);
	}
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct wp_waitgraph *g = arg;
	const struct wp_wg_node *x = &g->nodes[*(const uint32_t *)a];
	const struct wp_wg_node *y = &g->nodes[*(const uint32_t *)b];
	uint64_t bx = wp_wg_blocked_ns(&x->times), by = wp_wg_blocked_ns(&y->times);

	if (bx != by)
		return bx > by ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int write_text(const struct wp_waitgraph *g, const struct wp_waits *w, FILE *out)
{
	static const enum wp_cause cols[] = {
		WP_CAUSE_THREAD, WP_CAUSE_OUTSIDE, WP_CAUSE_TIMER, WP_CAUSE_NETWORK, WP_CAUSE_DISK,
		WP_CAUSE_INTERRUPT, WP_CAUSE_GATED, WP_CAUSE_NONE,
	};
	size_t live = 0, listed = 0, nshown = 0, into;
	bool used[ARRAY_SIZE(cols)] = { false };
	char b1[16], b2[16], name[96];
	uint32_t *order;

	fprintf(out, "Wait-for graph of %zu thread%s over %s: who waited for whom\n",
		g->threads_shown, g->threads_shown == 1 ? "" : "s",
		human(g->window_ns, b1, sizeof(b1)));
	explain_missing(w, out, "note: ");
	for (size_t i = 0; i < g->nr_edges; i++)
		live += !g->edges[i].dropped;
	fprintf(out, "An edge weighs the waiting it carried: its own, and in cascade the waits "
		"of those waiting\nfor it; %zu edge%s under %.3g%% of the window (%s) left out, "
		"%zu shown.%s\n\n", g->nr_dropped, g->nr_dropped == 1 ? "" : "s",
		100.0 * g->opts.threshold, human(g->threshold_ns, b2, sizeof(b2)), live,
		g->cascade_cut ? "  (Cascades were cut short at their bound.)" : "");
	if (!g->nr_knots) {
		fputs("No knot: every node waits for something outside itself, or nothing "
		      "at work waited long enough (idle threads' waits make none).\n\n", out);
	} else {
		fprintf(out, "Knots (nodes that wait for nothing outside them: each holds a "
			"bottleneck), heaviest first:\n");
	}
	for (size_t k = 0; k < g->nr_knots; k++) {
		const struct wp_wg_knot *kn = &g->knots[k];

		fprintf(out, "  %zu. ", k + 1);
		for (uint32_t i = 0; i < kn->nr_nodes; i++) {
			label(g, kn->nodes[i], name, sizeof(name));
			fputs(i ? ", " : "", out);
			wp_quote_puts(out, name, WP_QUOTE_TEXT);
		}
		fprintf(out, ": waited for %s from outside", human(kn->in_ns, b1, sizeof(b1)));
		if (kn->inner_ns)
			fprintf(out, ", %s inside", human(kn->inner_ns, b2, sizeof(b2)));
		fputc('\n', out);
		into = 0;
		for (size_t i = 0; i < g->nr_edges; i++) {
			const struct wp_wg_edge *e = &g->edges[i];

			if (e->dropped || g->nodes[e->to].knot != k + 1)
				continue;
			if (into++ < KNOT_EDGES)
				text_edge(g, w, e, out);
		}
		if (into > KNOT_EDGES)
			fprintf(out, "  ... and %zu lighter edges into it (below)\n", into - KNOT_EDGES);
		fputc('\n', out);
	}
	fputs("Edges, heaviest first:\n", out);
	for (size_t i = 0; i < g->nr_edges && listed < TEXT_EDGES; i++) {
		if (g->edges[i].dropped)
			continue;
		text_edge(g, w, &g->edges[i], out);
		listed++;
	}
	if (live > listed)
		fprintf(out, "  ... %zu more (--format waitgraph-json has them all)\n", live - listed);
	if (!live)
		fputs("  none\n", out);
	order = calloc(g->nr_nodes + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < g->nr_nodes; i++)
		if (g->nodes[i].kind == WP_WG_THREADS && g->nodes[i].shown)
			order[nshown++] = (uint32_t)i;
	qsort_r(order, nshown, sizeof(*order), node_cmp, (void *)g);
	/* The columns of causes that some shown thread has. */
	for (size_t i = 0; i < nshown; i++)
		for (size_t c = 0; c < ARRAY_SIZE(cols); c++)
			used[c] |= g->nodes[order[i]].times.blocked_ns[cols[c]] != 0;
	fprintf(out, "\nThreads by what ended their waits (blocked time; most blocked first):\n"
		"%-30s %9s %9s", "node", "on-CPU", "wait-CPU");
	for (size_t c = 0; c < ARRAY_SIZE(cols); c++)
		if (used[c])
			fprintf(out, " %10s", cols[c] == WP_CAUSE_OUTSIDE ? "outside" :
				wp_cause_name(cols[c]));
	fputc('\n', out);
	for (size_t i = 0; i < nshown && i < TEXT_NODES; i++) {
		const struct wp_wg_node *n = &g->nodes[order[i]];
		char cell[32];

		label(g, order[i], name, sizeof(name));
		fprintf(out, "%-30s", wp_quote(cell, sizeof(cell), name, WP_QUOTE_TEXT));
		fprintf(out, " %9s", human(n->times.on_cpu_ns, b1, sizeof(b1)));
		fprintf(out, " %9s", human(n->times.runnable_ns + n->times.preempted_ns, b1,
					   sizeof(b1)));
		for (size_t c = 0; c < ARRAY_SIZE(cols); c++)
			if (used[c])
				fprintf(out, " %10s", human(n->times.blocked_ns[cols[c]], b1,
							    sizeof(b1)));
		fputc('\n', out);
	}
	if (nshown > TEXT_NODES)
		fprintf(out, "... %zu more\n", nshown - TEXT_NODES);
	free(order);
	return 0;
}

/* DOT: a string, quoted as JSON quotes it (the same escapes hold there). */
static void dot_str(FILE *out, const char *s)
{
	fputc('"', out);
	wp_quote_puts(out, s, WP_QUOTE_JSON);
	fputc('"', out);
}

static double edge_width(const struct wp_waitgraph *g, const struct wp_wg_edge *e)
{
	uint64_t max = g->nr_edges ? g->edges[0].weight_ns : 1;

	return 1.0 + 6.0 * (double)e->weight_ns / (double)(max ? max : 1);
}

static bool node_drawn(const struct wp_waitgraph *g, const bool *touched, size_t i)
{
	return touched[i] || g->nodes[i].knot;
}

/* Which nodes a live edge touches. */
static bool *touched_nodes(const struct wp_waitgraph *g)
{
	bool *t = calloc(g->nr_nodes + 1, sizeof(*t));

	for (size_t i = 0; t && i < g->nr_edges; i++)
		if (!g->edges[i].dropped)
			t[g->edges[i].from] = t[g->edges[i].to] = true;
	return t;
}

static int write_dot(const struct wp_waitgraph *g, const struct wp_waits *w, FILE *out)
{
	bool *touched = touched_nodes(g);
	char name[96], b1[16], b2[16], text[256];

	if (!touched)
		return -ENOMEM;
	fputs("// wallprof wait-for graph: an edge from A to B weighs the waiting that B "
	      "ended, directly and in cascade\n", out);
	if (explain_missing(w, out, "// note: ")) {
		/* Still a valid graph, of no edges. */
	}
	fprintf(out, "digraph waitgraph {\n  rankdir=LR;\n  node [shape=box, style=rounded, "
		"fontname=\"sans-serif\", fontsize=11];\n  edge [fontname=\"sans-serif\", "
		"fontsize=10];\n");
	for (size_t i = 0; i < g->nr_nodes; i++) {
		const struct wp_wg_node *n = &g->nodes[i];

		if (!node_drawn(g, touched, i))
			continue;
		label(g, (uint32_t)i, name, sizeof(name));
		if (n->kind == WP_WG_THREADS)
			snprintf(text, sizeof(text), "%s\non-CPU %s, blocked %s", name,
				 human(n->times.on_cpu_ns, b1, sizeof(b1)),
				 human(wp_wg_blocked_ns(&n->times), b2, sizeof(b2)));
		else
			snprintf(text, sizeof(text), "%s", name);
		fprintf(out, "  n%zu [label=", i);
		dot_str(out, text);
		if (n->kind != WP_WG_THREADS)
			fputs(", shape=ellipse", out);
		if (n->knot)
			fprintf(out, ", color=\"#c0392b\", penwidth=2, style=\"rounded,filled\", "
				"fillcolor=\"#fbe3e0\", xlabel=\"knot %" PRIu32 "\"", n->knot);
		fputs("];\n", out);
	}
	for (size_t i = 0; i < g->nr_edges; i++) {
		const struct wp_wg_edge *e = &g->edges[i];

		if (e->dropped)
			continue;
		fprintf(out, "  n%" PRIu32 " -> n%" PRIu32 " [label=\"%s\", penwidth=%.2f%s];\n",
			e->from, e->to, human(e->weight_ns, b1, sizeof(b1)), edge_width(g, e),
			e->trimmed ? ", style=dashed" : "");
	}
	fputs("}\n", out);
	free(touched);
	return 0;
}

/* SVG: a layered drawing, waiters on the left, what they wait for on the right. */
#define SVG_COL 330		/* a layer's width */
#define SVG_ROW 78		/* a node's row */
#define SVG_NODE_W 200
#define SVG_NODE_H 50
#define SVG_PAD 30
#define SVG_TOP 90

struct layout {
	uint32_t *layer;	/* per node */
	double *y;		/* its centre */
	size_t layers, rows;
};

/* Longest path from the waiters, over the live edges that do not close a cycle. */
static int lay_out(const struct wp_waitgraph *g, const bool *drawn, struct layout *l)
{
	size_t n = g->nr_nodes;
	uint32_t *count;
	double *key;
	int err = -ENOMEM;

	l->layer = calloc(n + 1, sizeof(*l->layer));
	l->y = calloc(n + 1, sizeof(*l->y));
	count = calloc(n + 2, sizeof(*count));
	key = calloc(n + 1, sizeof(*key));
	if (!l->layer || !l->y || !count || !key)
		goto out;
	/*
	 * Relaxation, at most n rounds: an edge pushes its target right of
	 * its source; in a cycle the bound stops it.
	 */
	for (size_t round = 0; round < n; round++) {
		bool moved = false;

		for (size_t i = 0; i < g->nr_edges; i++) {
			const struct wp_wg_edge *e = &g->edges[i];

			if (e->dropped || e->from == e->to || l->layer[e->from] + 1 > n ||
			    l->layer[e->to] >= l->layer[e->from] + 1)
				continue;
			if (g->nodes[e->from].knot && g->nodes[e->from].knot == g->nodes[e->to].knot)
				continue;	/* inside a knot: side by side */
			l->layer[e->to] = l->layer[e->from] + 1;
			moved = true;
		}
		if (!moved)
			break;
	}
	for (size_t i = 0; i < n; i++)
		if (drawn[i] && l->layer[i] + 1 > l->layers)
			l->layers = l->layer[i] + 1;
	/* Rows: in each layer, by the mean row of the nodes that wait for it. */
	for (int pass = 0; pass < 3; pass++) {
		memset(count, 0, (n + 2) * sizeof(*count));
		for (size_t i = 0; i < n; i++) {
			double sum = 0;
			unsigned int preds = 0;

			if (!drawn[i])
				continue;
			for (size_t k = 0; pass && k < g->nr_edges; k++) {
				const struct wp_wg_edge *e = &g->edges[k];

				if (!e->dropped && e->to == i && e->from != i) {
					sum += l->y[e->from];
					preds++;
				}
			}
			key[i] = preds ? sum / preds : (double)i;
		}
		for (size_t lay = 0; lay < l->layers; lay++) {
			size_t row = 0;

			/* Selection by key: layers hold few nodes. */
			for (;;) {
				size_t best = n;

				for (size_t i = 0; i < n; i++)
					if (drawn[i] && l->layer[i] == lay && l->y[i] >= 0 &&
					    (best == n || key[i] < key[best]))
						best = i;
				if (best == n)
					break;
				l->y[best] = -1.0 - (double)row++;
			}
			if (row > l->rows)
				l->rows = row;
		}
		for (size_t i = 0; i < n; i++)
			if (drawn[i])
				l->y[i] = SVG_TOP + SVG_NODE_H / 2.0 + (-l->y[i] - 1.0) * SVG_ROW;
	}
	err = 0;
out:
	free(count);
	free(key);
	return err;
}

static double node_x(const struct layout *l, uint32_t i)
{
	return SVG_PAD + (double)l->layer[i] * SVG_COL;
}

static void svg_edge(const struct wp_waitgraph *g, const struct wp_waits *w, const struct layout *l,
		     const struct wp_wg_edge *e, FILE *out)
{
	double x1 = node_x(l, e->from) + SVG_NODE_W, y1 = l->y[e->from];
	double x2 = node_x(l, e->to), y2 = l->y[e->to];
	double mx, my;
	char b1[16], from[96], to[96];

	fprintf(out, "<g class=\"edge\"><title>");
	label(g, e->from, from, sizeof(from));
	label(g, e->to, to, sizeof(to));
	wp_quote_puts(out, from, WP_QUOTE_XML);
	fputs(" waited for ", out);
	wp_quote_puts(out, to, WP_QUOTE_XML);
	fprintf(out, ": %s", human(e->weight_ns, b1, sizeof(b1)));
	fprintf(out, " (its own %s, %" PRIu64 " waits)", human(e->direct_ns, b1, sizeof(b1)),
		e->count);
	for (unsigned int i = 0; i < e->nr_waiting; i++) {
		fputs("&#10;waiting in: ", out);
		wp_waits_put_stack(out, w->an, e->waiting[i].id, FRAMES, WP_QUOTE_XML);
	}
	for (unsigned int i = 0; i < e->nr_waker; i++) {
		fputs("&#10;woken by ", out);
		put_waker_kind(out, w, e->waker[i].id, WP_QUOTE_XML);
		fputs(": ", out);
		wp_waits_put_stack(out, w->an, w->wakers[e->waker[i].id].stack, FRAMES,
				   WP_QUOTE_XML);
	}
	fputs("</title>", out);
	if (e->from == e->to) {
		/* A group waiting for itself: a loop over its box. */
		double cx = node_x(l, e->from) + SVG_NODE_W / 2.0, top = y1 - SVG_NODE_H / 2.0;

		fprintf(out, "<path d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\" "
			"stroke-width=\"%.2f\" marker-end=\"url(#arrow)\"/>", cx - 30, top,
			cx - 30, top - 34, cx + 30, top - 34, cx + 30, top, edge_width(g, e));
		mx = cx;
		my = top - 28;
	} else if (x2 > x1) {
		fprintf(out, "<path d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\" "
			"stroke-width=\"%.2f\" marker-end=\"url(#arrow)\"/>", x1, y1,
			(x1 + x2) / 2, y1, (x1 + x2) / 2, y2, x2, y2, edge_width(g, e));
		mx = (x1 + x2) / 2;
		my = (y1 + y2) / 2 - 4;
	} else {
		/* Back to the left or in the same layer: around below. */
		double sx = node_x(l, e->from) + SVG_NODE_W / 2.0, sy = y1 + SVG_NODE_H / 2.0;
		double tx = node_x(l, e->to) + SVG_NODE_W / 2.0, ty = y2 + SVG_NODE_H / 2.0;
		double low = (sy > ty ? sy : ty) + 40;

		fprintf(out, "<path d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\" "
			"stroke-width=\"%.2f\" marker-end=\"url(#arrow)\"%s/>", sx, sy, sx, low, tx,
			low, tx, ty, edge_width(g, e), e->trimmed ? " stroke-dasharray=\"6 4\"" : "");
		mx = (sx + tx) / 2;
		my = low - 8;
	}
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text></g>\n", mx, my,
		human(e->weight_ns, b1, sizeof(b1)));
}

static void svg_node(const struct wp_waitgraph *g, const struct layout *l, uint32_t i, FILE *out)
{
	const struct wp_wg_node *n = &g->nodes[i];
	double x = node_x(l, i), y = l->y[i] - SVG_NODE_H / 2.0;
	char name[96], b1[16], b2[16], b3[16];
	const char *fill = n->knot ? "#fbe3e0" : n->kind == WP_WG_THREADS ? "#eef3fb" : "#f2f2f2";
	const char *stroke = n->knot ? "#c0392b" : "#5b7bb2";

	label(g, i, name, sizeof(name));
	fputs("<g class=\"node\"><title>", out);
	wp_quote_puts(out, name, WP_QUOTE_XML);
	if (n->kind == WP_WG_THREADS) {
		fprintf(out, "&#10;on-CPU %s, waiting for a CPU %s, blocked %s",
			human(n->times.on_cpu_ns, b1, sizeof(b1)),
			human(n->times.runnable_ns + n->times.preempted_ns, b2, sizeof(b2)),
			human(wp_wg_blocked_ns(&n->times), b3, sizeof(b3)));
	}
	if (n->knot)
		fprintf(out, "&#10;knot %" PRIu32 ": waits for nothing outside it", n->knot);
	fprintf(out, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"%d\" "
		"fill=\"%s\" stroke=\"%s\" stroke-width=\"%d\"/>", x, y, SVG_NODE_W, SVG_NODE_H,
		n->kind == WP_WG_THREADS ? 6 : 24, fill, stroke, n->knot ? 3 : 1);
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"name\">",
		x + SVG_NODE_W / 2.0, y + 20);
	/* At most what fits in the box. */
	{
		char cut[40];

		/* TEXT-quoted, so the cut falls between characters; XML from that. */
		wp_quote(cut, sizeof(cut), name, WP_QUOTE_TEXT);
		wp_quote_puts(out, cut, WP_QUOTE_XML);
	}
	fputs("</text>", out);
	if (n->kind == WP_WG_THREADS)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">on-CPU %s, "
			"blocked %s</text>", x + SVG_NODE_W / 2.0, y + 38,
			human(n->times.on_cpu_ns, b1, sizeof(b1)),
			human(wp_wg_blocked_ns(&n->times), b2, sizeof(b2)));
	else if (n->knot)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">knot %" PRIu32
			"</text>", x + SVG_NODE_W / 2.0, y + 38, n->knot);
	fputs("</g>\n", out);
}

static int write_svg(const struct wp_waitgraph *g, const struct wp_waits *w,
		     const struct wp_view *v, FILE *out)
{
	bool *drawn = touched_nodes(g);
	struct layout l = { 0 };
	size_t width, height, ndrawn = 0;
	char b1[16], b2[16];
	int err;

	if (!drawn)
		return -ENOMEM;
	for (size_t i = 0; i < g->nr_nodes; i++) {
		drawn[i] = node_drawn(g, drawn, i);
		ndrawn += drawn[i];
	}
	err = lay_out(g, drawn, &l);
	if (err)
		goto out;
	width = 2 * SVG_PAD + (l.layers ? l.layers : 1) * SVG_COL;
	if (width < 760)
		width = 760;
	height = SVG_TOP + (l.rows ? l.rows : 1) * SVG_ROW + 40;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%zu\" "
		"height=\"%zu\" viewBox=\"0 0 %zu %zu\" font-family=\"sans-serif\" "
		"font-size=\"11\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" "
		"refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" "
		"orient=\"auto-start-reverse\">"
		"<path d=\"M0 0 L10 5 L0 10 z\" fill=\"#555\"/></marker></defs>\n"
		"<style>.edge path { fill: none; stroke: #7a869a; stroke-opacity: 0.8 } "
		".edge:hover path { stroke: #c0392b } .edge text { fill: #333 } "
		".name { font-weight: bold; font-size: 12px }</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfaf7\"/>\n", width, height, width,
		height);
	fprintf(out, "<text x=\"%d\" y=\"28\" font-size=\"16\">Wait-for graph: who waited for "
		"whom", SVG_PAD);
	fprintf(out, " (%zu threads, %s)</text>\n", g->threads_shown,
		human(g->window_ns, b1, sizeof(b1)));
	fprintf(out, "<text x=\"%d\" y=\"48\">", SVG_PAD);
	for (uint32_t i = 0; i < v->an->meta->argc; i++) {
		if (i)
			fputc(' ', out);
		wp_quote_puts(out, v->an->meta->argv[i], WP_QUOTE_XML);
	}
	fprintf(out, "</text>\n<text x=\"%d\" y=\"66\">Edges weigh the waiting they carried "
		"(own and cascaded); under %s left out (%zu). Red: knots, where the waiting "
		"ends. Hover for stacks.</text>\n", SVG_PAD, human(g->threshold_ns, b2, sizeof(b2)),
		g->nr_dropped);
	if (!w->has_wakeups)
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#c0392b\">The recording has no "
			"wake-ups: no thread can be named as another's waker.</text>\n", SVG_PAD,
			SVG_TOP + 20);
	else if (!ndrawn)
		fprintf(out, "<text x=\"%d\" y=\"%d\">No edge weighs more than %s.</text>\n",
			SVG_PAD, SVG_TOP + 20, human(g->threshold_ns, b1, sizeof(b1)));
	for (size_t i = 0; i < g->nr_edges; i++)
		if (!g->edges[i].dropped)
			svg_edge(g, w, &l, &g->edges[i], out);
	for (size_t i = 0; i < g->nr_nodes; i++)
		if (drawn[i])
			svg_node(g, &l, (uint32_t)i, out);
	fputs("</svg>\n", out);
out:
	free(l.layer);
	free(l.y);
	free(drawn);
	return err;
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	wp_quote_puts(out, s, WP_QUOTE_JSON);
	fputc('"', out);
}

void wp_json_frames(FILE *out, const struct wp_analysis *an, uint32_t stack)
{
	const uint32_t *frames = NULL;
	unsigned int n = 0;

	if (stack != UINT32_MAX)
		frames = wp_stacks_get(an->stacks, stack, &n);
	fputc('[', out);
	for (unsigned int i = 0; frames && i < n; i++) {
		fputs(i ? ", {\"name\": " : "{\"name\": ", out);
		json_str(out, wp_analysis_frame_name(an, frames[i]));
		if (frames[i] & WP_FRAME_KERNEL)
			fputs(", \"kernel\": true", out);
		if (frames[i] & WP_FRAME_INLINED)
			fputs(", \"inlined\": true", out);
		fputc('}', out);
	}
	fputc(']', out);
}

void wp_json_waker(FILE *out, const struct wp_waits *w, uint32_t waker)
{
	static const char *const kinds[] = { "thread", "interrupt", "timer", "idle" };
	const struct wp_waker *wk = &w->wakers[waker];
	const char *vec = wp_softirq_name(wk->softirq);
	char buf[32];

	fprintf(out, "\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": ", wk->pid, wk->tid);
	json_str(out, wp_waker_name(w->an, wk, buf, sizeof(buf)));
	fprintf(out, ", \"kind\": \"%s\", \"context\": \"%s\", \"cause\": \"%s\"",
		wk->kind < ARRAY_SIZE(kinds) ? kinds[wk->kind] : "thread",
		wp_wake_context_name(wk->context), wp_cause_name(wp_waits_waker_cause(w, waker)));
	if (vec)
		fprintf(out, ", \"softirq\": \"%s\"", vec);
	fputs(", \"frames\": ", out);
	wp_json_frames(out, w->an, wk->stack);
}

static int write_json(const struct wp_waitgraph *g, const struct wp_waits *w, FILE *out)
{
	static const char *const node_kinds[] = { "threads", "outside", "device" };
	char name[96];

	fprintf(out, "{\"waitgraph\": {\n  \"window_start_ns\": %" PRIu64 ", \"window_end_ns\": %"
		PRIu64 ", \"window_ns\": %" PRIu64 ",\n  \"threshold\": %.6g, \"threshold_ns\": %"
		PRIu64 ", \"grouping\": \"%s\", \"threads_shown\": %zu, \"blocked_ns\": %" PRIu64
		",\n  \"wakeups\": %s, \"waker_stacks\": %s, \"cascade_steps\": %" PRIu64
		", \"cascade_cut\": %s,\n  \"nodes\": [", g->window_start, g->window_end,
		g->window_ns, g->opts.threshold, g->threshold_ns,
		g->opts.grouping == WP_WG_GROUP_NONE ? "none" :
		g->opts.grouping == WP_WG_GROUP_NAME ? "name" : "stacks", g->threads_shown,
		g->blocked_ns, w->has_wakeups ? "true" : "false",
		w->waker_stacks ? "true" : "false", g->cascade_steps,
		g->cascade_cut ? "true" : "false");
	for (size_t i = 0; i < g->nr_nodes; i++) {
		const struct wp_wg_node *n = &g->nodes[i];

		fprintf(out, "%s\n    {\"id\": %zu, \"kind\": \"%s\", \"name\": ", i ? "," : "", i,
			node_kinds[n->kind]);
		json_str(out, n->name);
		label(g, (uint32_t)i, name, sizeof(name));
		fputs(", \"label\": ", out);
		json_str(out, name);
		if (n->kind == WP_WG_DEVICE)
			fprintf(out, ", \"cause\": \"%s\"", wp_cause_name(n->cause));
		else
			fprintf(out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32, n->pid, n->tid);
		if (n->kind == WP_WG_OUTSIDE)
			fprintf(out, ", \"threads\": %" PRIu32, n->nr_outside);
		if (n->knot)
			fprintf(out, ", \"knot\": %" PRIu32, n->knot);
		if (n->kind == WP_WG_THREADS) {
			fprintf(out, ", \"shown\": %s, \"idle\": %s, \"tids\": [",
				n->shown ? "true" : "false", n->idle ? "true" : "false");
			for (uint32_t k = 0; k < n->nr_serials; k++)
				fprintf(out, "%s%" PRIu32, k ? ", " : "",
					w->threads[n->serials[k]].t->tid);
			fprintf(out, "], \"on_cpu_ns\": %" PRIu64 ", \"runnable_ns\": %" PRIu64
				", \"preempted_ns\": %" PRIu64 ", \"blocked_ns\": {",
				n->times.on_cpu_ns, n->times.runnable_ns, n->times.preempted_ns);
			for (int c = 0; c < WP_NR_CAUSES; c++)
				fprintf(out, "%s\"%s\": %" PRIu64, c ? ", " : "",
					c == WP_CAUSE_OUTSIDE ? "outside" : wp_cause_name((enum wp_cause)c),
					n->times.blocked_ns[c]);
			fputc('}', out);
		}
		fputc('}', out);
	}
	fputs("\n  ],\n  \"edges\": [", out);
	for (size_t i = 0; i < g->nr_edges; i++) {
		const struct wp_wg_edge *e = &g->edges[i];

		fprintf(out, "%s\n    {\"from\": %" PRIu32 ", \"to\": %" PRIu32 ", \"weight_ns\": %"
			PRIu64 ", \"direct_ns\": %" PRIu64 ", \"estimated_ns\": %" PRIu64
			", \"count\": %" PRIu64 ", \"dropped\": %s, \"trimmed\": %s,\n"
			"     \"waiting\": [", i ? "," : "", e->from, e->to, e->weight_ns,
			e->direct_ns, e->estimated_ns, e->count,
			e->dropped ? "true" : "false", e->trimmed ? "true" : "false");
		for (unsigned int k = 0; k < e->nr_waiting; k++) {
			fprintf(out, "%s{\"ns\": %" PRIu64 ", \"estimated_ns\": %" PRIu64
				", \"count\": %" PRIu64 ", \"frames\": ", k ? ", " : "",
				e->waiting[k].ns, e->waiting[k].estimated_ns, e->waiting[k].count);
			wp_json_frames(out, w->an, e->waiting[k].id);
			fputc('}', out);
		}
		fputs("],\n     \"wakers\": [", out);
		for (unsigned int k = 0; k < e->nr_waker; k++) {
			fprintf(out, "%s{\"ns\": %" PRIu64 ", \"count\": %" PRIu64 ", ", k ? ", " : "",
				e->waker[k].ns, e->waker[k].count);
			wp_json_waker(out, w, e->waker[k].id);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("\n  ],\n  \"knots\": [", out);
	for (size_t k = 0; k < g->nr_knots; k++) {
		fprintf(out, "%s\n    {\"nodes\": [", k ? "," : "");
		for (uint32_t i = 0; i < g->knots[k].nr_nodes; i++)
			fprintf(out, "%s%" PRIu32, i ? ", " : "", g->knots[k].nodes[i]);
		fprintf(out, "], \"in_ns\": %" PRIu64 ", \"inner_ns\": %" PRIu64 "}",
			g->knots[k].in_ns, g->knots[k].inner_ns);
	}
	fputs("\n  ]\n}}\n", out);
	return 0;
}

static int write_graph(struct wp_view *v, FILE *out, enum wg_form form)
{
	struct wp_wg_opts o = {
		.threshold = v->o.wait_threshold, .grouping = (enum wp_wg_grouping)v->o.wait_grouping,
		.similarity = WP_WG_SIMILARITY, .knot_trim = WP_WG_KNOT_TRIM,
	};
	struct wp_waits own, *w = (struct wp_waits *)v->waits;
	struct wp_waitgraph g;
	int err;

	if (!w) {
		err = wp_waits_init(&own, v->an);
		if (err)
			return err;
		w = &own;
	}
	err = wp_waitgraph_build(w, v, &o, &g);
	if (!err) {
		switch (form) {
		case WG_TEXT:
			err = write_text(&g, w, out);
			break;
		case WG_DOT:
			err = write_dot(&g, w, out);
			break;
		case WG_SVG:
			err = write_svg(&g, w, v, out);
			break;
		case WG_JSON:
			err = write_json(&g, w, out);
			break;
		}
		if (err)
			wp_error("out of memory writing the wait-for graph");
		wp_waitgraph_release(&g);
	}
	if (w == &own)
		wp_waits_release(&own);
	return err;
}

int wp_format_waitgraph(struct wp_view *v, FILE *out)
{
	return write_graph(v, out, WG_TEXT);
}

int wp_format_waitgraph_dot(struct wp_view *v, FILE *out)
{
	return write_graph(v, out, WG_DOT);
}

int wp_format_waitgraph_svg(struct wp_view *v, FILE *out)
{
	return write_graph(v, out, WG_SVG);
}

int wp_format_waitgraph_json(struct wp_view *v, FILE *out)
{
	return write_graph(v, out, WG_JSON);
}
