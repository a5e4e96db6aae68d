/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_flamegraph.c: the stacks as one interactive SVG flame graph, its
 * script and style inside (flamegraph.js and flamegraph.css, made into C
 * strings by the build), so it opens anywhere without a network.
 *
 * The stacks of the view are merged into a tree of frames (a thread's
 * name, then its outermost frame first, or its leaf first with
 * --inverted); off-CPU time ends in the marker frame of its kind, as in
 * folded output.  A frame is as wide as its time.  Frames narrower than a
 * minimum share of the root are merged into their caller, and so are the
 * smallest of the rest when there are too many: a profile of any number
 * of stacks stays a few MB and opens quickly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "format.h"
#include "quote.h"
#include "symbols.h"
#include "u64map.h"
#include "util.h"

/* Made by the build from src/flamegraph.js and src/flamegraph.css. */
extern const char wp_flamegraph_script[];
extern const char wp_flamegraph_style[];

#define IMAGE_WIDTH 1200
#define PAD 10			/* left and right margins */
#define FRAME_HEIGHT 16
#define TOP 84			/* title, subtitle and legend */
#define BOTTOM 34		/* the details line */
#define CHAR_WIDTH 7		/* an average glyph at the frames' font size */
/* Frames below 1/10000 of the root (0.12 pixels) are merged into their caller... */
#define MIN_SHARE 10000
/* ...and the narrowest beyond this many frames, whatever their width. */
#define MAX_FRAMES 16000

/* What a frame's label is: a frame token, a thread name or an off-CPU marker. */
enum label_kind {
	LABEL_FRAME,
	LABEL_THREAD,		/* value: index of the first thread of that name */
	LABEL_MARKER,		/* value: enum wp_part, | MARKER_ESTIMATED */
	LABEL_CAUSE,		/* --critical-path: what a thread waited for (enum wp_cause) */
};
#define MARKER_ESTIMATED 0x100U


#define NO_NODE UINT32_MAX
/* Node indexes stay below this, so (parent, label) fits a 64-bit key. */
#define MAX_NODES (1U << 30)

struct fg_node {
	uint64_t label;		/* kind << 32 | value */
	uint32_t parent, child, next;	/* first callee, next sibling */
	uint32_t depth;
	uint64_t ns[WP_NR_PARTS];
	uint64_t total;
	uint64_t offset;	/* from the root's left edge, in ns */
	bool shown;
};

struct fg_tree {
	struct fg_node *nodes;
	size_t n, cap;
	struct wp_u64map children;	/* parent << 34 | label -> node */
	uint32_t max_depth;	/* of the frames shown */
};

static int tree_add_node(struct fg_tree *t, uint32_t parent, uint64_t label, uint32_t *out)
{
	uint64_t key = ((uint64_t)parent << 34) | label, idx;
	struct fg_node *grown, *nd;
	int err;

	if (wp_u64map_get(&t->children, key, &idx)) {
		*out = (uint32_t)idx;
		return 0;
	}
	if (t->n >= MAX_NODES)
		return -E2BIG;
	grown = wp_grow(t->nodes, &t->cap, t->n + 1, sizeof(*t->nodes));
	if (!grown)
		return -ENOMEM;
	t->nodes = grown;
	err = wp_u64map_put(&t->children, key, t->n);
	if (err)
		return err;
	nd = &t->nodes[t->n];
	memset(nd, 0, sizeof(*nd));
	nd->label = label;
	nd->parent = parent;
	nd->child = NO_NODE;
	nd->depth = t->nodes[parent].depth + 1;
	nd->next = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)t->n;
	*out = (uint32_t)t->n++;
	return 0;
}

/* Add ns of one part along the path of labels (root's callee first). */
static int tree_add_path(struct fg_tree *t, const uint64_t *labels, size_t n,
			 enum wp_part part, uint64_t ns)
{
	uint32_t at = 0;
	int err;

	t->nodes[0].ns[part] += ns;
	t->nodes[0].total += ns;
	for (size_t i = 0; i < n; i++) {
		err = tree_add_node(t, at, labels[i], &at);
		if (err)
			return err;
		t->nodes[at].ns[part] += ns;
		t->nodes[at].total += ns;
	}
	return 0;
}

static void tree_release(struct fg_tree *t)
{
	free(t->nodes);
	wp_u64map_release(&t->children);
}

struct fg {
	struct wp_view *v;
	struct fg_tree tree;
	uint32_t *thread_rep;	/* per thread: the first thread of its name */
	uint64_t *path;
	size_t path_cap;
	uint64_t min_ns;	/* narrowest frame drawn */
	double scale;		/* pixels per ns at the root */
	/* --diff: the base recording's tree, and per node its frame there. */
	struct fg *base;
	uint32_t *base_node;
	double max_delta;	/* largest change of share of a frame shown */
};

static int thread_cmp(const void *a, const void *b, void *arg)
{
	const struct wp_thread_times *th = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(th[x].comm, th[y].comm);

	return c ? c : (x > y) - (x < y);
}

/* Threads of the same name share a root frame, as in folded output. */
static int map_thread_names(struct fg *g)
{
	const struct wp_thread_times *th;
	uint32_t *order;
	size_t n;

	th = wp_account_threads(g->v->an->account, &n);
	g->thread_rep = calloc(n + 1, sizeof(*g->thread_rep));
	order = calloc(n + 1, sizeof(*order));
	if (!g->thread_rep || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), thread_cmp, (void *)th);
	for (size_t i = 0; i < n; i++)
		g->thread_rep[order[i]] = i && !strcmp(th[order[i]].comm, th[order[i - 1]].comm) ?
					  g->thread_rep[order[i - 1]] : order[i];
	free(order);
	return 0;
}

static uint64_t label_of(enum label_kind kind, uint32_t value)
{
	return ((uint64_t)kind << 32) | value;
}

/* The stack of one weight and part as a path of labels, in drawing order. */
static int build_path(struct fg *g, const struct wp_stack_weight *w, enum wp_part part,
		      size_t *len)
{
	uint32_t marker = (uint32_t)part;
	const uint32_t *frames;
	unsigned int nf;
	size_t n = 0;
	uint64_t *p;

	if (wp_view_part_estimated(w, part))
		marker |= MARKER_ESTIMATED;
	frames = wp_stacks_get(g->v->an->stacks, w->stack, &nf);
	p = wp_grow(g->path, &g->path_cap, (size_t)nf + 2, sizeof(*g->path));
	if (!p)
		return -ENOMEM;
	g->path = p;
	if (g->v->o.inverted) {
		if (wp_part_marker(part, false))
			p[n++] = label_of(LABEL_MARKER, marker);
		for (unsigned int f = 0; f < nf; f++)
			p[n++] = label_of(LABEL_FRAME, frames[f]);
		if (g->v->o.thread_root)
			p[n++] = label_of(LABEL_THREAD, g->thread_rep[w->thread]);
	} else {
		if (g->v->o.thread_root)
			p[n++] = label_of(LABEL_THREAD, g->thread_rep[w->thread]);
		for (unsigned int f = nf; f-- > 0;)
			p[n++] = label_of(LABEL_FRAME, frames[f]);
		if (wp_part_marker(part, false))
			p[n++] = label_of(LABEL_MARKER, marker);
	}
	*len = n;
	return 0;
}

/*
 * --critical-path: one segment of the path as a path of labels: what held
 * it (a device first, then the thread that waited for it), the stack, and
 * the marker of its kind.
 */
static int build_segment_path(struct fg *g, const struct wp_cp_segment *s, enum wp_part *part,
			      size_t *len)
{
	const struct wp_waits_thread *t = wp_waits_thread(g->v->waits, s->serial);
	const uint32_t *frames = NULL;
	unsigned int nf = 0;
	size_t n = 0;
	uint64_t *p;

	*part = s->kind == WP_CP_RUNNING ? WP_PART_ON : s->kind == WP_CP_RUNNABLE ?
		WP_PART_RUNNABLE : s->kind == WP_CP_PREEMPTED ? WP_PART_PREEMPTED : WP_PART_BLOCKED;
	if (s->stack != UINT32_MAX)
		frames = wp_stacks_get(g->v->an->stacks, s->stack, &nf);
	p = wp_grow(g->path, &g->path_cap, (size_t)nf + 3, sizeof(*g->path));
	if (!p)
		return -ENOMEM;
	g->path = p;
	if (s->kind == WP_CP_DEVICE || s->kind == WP_CP_OUTSIDE)
		p[n++] = label_of(LABEL_CAUSE, s->kind == WP_CP_OUTSIDE ? WP_CAUSE_OUTSIDE : s->cause);
	else if (s->kind == WP_CP_BLOCKED || s->kind == WP_CP_UNRECORDED)
		p[n++] = label_of(LABEL_CAUSE, s->flags & WP_CP_GATED ? WP_CAUSE_GATED :
					       WP_CAUSE_NONE);
	if (t)
		p[n++] = label_of(LABEL_THREAD, g->thread_rep[t->index]);
	for (unsigned int f = nf; f-- > 0;)
		p[n++] = label_of(LABEL_FRAME, frames[f]);
	if (*part != WP_PART_ON)
		p[n++] = label_of(LABEL_MARKER, (uint32_t)*part);
	*len = n;
	return 0;
}

static int build_tree(struct fg *g)
{
	const struct wp_stack_weight *w;
	size_t nw, len;
	int err;

	/* The root, "all": no label, never looked up. */
	g->tree.nodes = calloc(1, sizeof(*g->tree.nodes));
	if (!g->tree.nodes)
		return -ENOMEM;
	g->tree.cap = g->tree.n = 1;
	g->tree.nodes[0].parent = g->tree.nodes[0].child = g->tree.nodes[0].next = NO_NODE;
	if (g->v->critpath) {
		const struct wp_critpath *cp = g->v->critpath;

		for (size_t i = 0; i < cp->nr_segs; i++) {
			enum wp_part part;

			err = build_segment_path(g, &cp->segs[i], &part, &len);
			if (!err)
				err = tree_add_path(&g->tree, g->path, len, part,
						    cp->segs[i].end_ns - cp->segs[i].start_ns);
			if (err)
				return err;
		}
		return 0;
	}
	w = wp_account_stacks(g->v->an->account, &nw);
	for (size_t i = 0; i < nw; i++) {
		if (!wp_view_thread(g->v, w[i].thread) || !wp_view_stack(g->v, w[i].stack))
			continue;
		for (int part = 0; part < WP_NR_PARTS; part++) {
			uint64_t ns = wp_view_part_ns(g->v, &w[i], (enum wp_part)part);

			if (!ns)
				continue;
			err = build_path(g, &w[i], (enum wp_part)part, &len);
			if (!err)
				err = tree_add_path(&g->tree, g->path, len, (enum wp_part)part, ns);
			if (err)
				return err;
		}
	}
	return 0;
}

/* A label's text, unquoted: the caller quotes it for XML. */
static const char *label_name(const struct fg *g, uint64_t label)
{
	const struct wp_thread_times *th;
	uint32_t value = (uint32_t)label;
	size_t n;

	switch ((enum label_kind)(label >> 32)) {
	case LABEL_THREAD:
		th = wp_account_threads(g->v->an->account, &n);
		return value < n && th[value].comm[0] ? th[value].comm : "?";
	case LABEL_MARKER:
		return wp_part_marker((enum wp_part)(value & ~MARKER_ESTIMATED),
				      value & MARKER_ESTIMATED);
	case LABEL_CAUSE:
		return value == WP_CAUSE_TIMER ? "[timer]" : value == WP_CAUSE_NETWORK ? "[network]" :
		       value == WP_CAUSE_DISK ? "[disk]" : value == WP_CAUSE_INTERRUPT ?
		       "[interrupt]" : value == WP_CAUSE_OUTSIDE ? "[thread outside the recording]" :
		       value == WP_CAUSE_GATED ? "[wake-up not recorded]" : "[unknown]";
	default:
		return wp_analysis_frame_name(g->v->an, value);
	}
}

/* The same frame in the base tree as node i: same kind of label, same name. */
static uint32_t base_match(const struct fg *g, uint32_t i)
{
	const struct fg_node *nd = &g->tree.nodes[i];
	const struct fg_tree *bt = &g->base->tree;
	uint32_t p = g->base_node[nd->parent];
	const char *name = label_name(g, nd->label);

	if (p == NO_NODE)
		return NO_NODE;
	for (uint32_t c = bt->nodes[p].child; c != NO_NODE; c = bt->nodes[c].next)
		if (bt->nodes[c].label >> 32 == nd->label >> 32 &&
		    !strcmp(label_name(g->base, bt->nodes[c].label), name))
			return c;
	return NO_NODE;
}

/* Each side's share of its own total. */
static double node_share(const struct fg_tree *t, uint32_t i)
{
	return t->nodes[0].total ? (double)t->nodes[i].total / (double)t->nodes[0].total : 0;
}

static double node_delta(const struct fg *g, uint32_t i)
{
	uint32_t b = g->base_node[i];

	return node_share(&g->tree, i) - (b == NO_NODE ? 0 : node_share(&g->base->tree, b));
}

/* Match every node with the base's; parents come before their callees. */
static int match_base(struct fg *g)
{
	g->base_node = calloc(g->tree.n + 1, sizeof(*g->base_node));
	if (!g->base_node)
		return -ENOMEM;
	g->base_node[0] = 0;
	for (uint32_t i = 1; i < g->tree.n; i++)
		g->base_node[i] = base_match(g, i);
	for (uint32_t i = 0; i < g->tree.n; i++) {
		double d = node_delta(g, i);

		if (g->tree.nodes[i].shown && (d < 0 ? -d : d) > g->max_delta)
			g->max_delta = d < 0 ? -d : d;
	}
	return 0;
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y) - (x > y);
}

/*
 * The narrowest frame drawn: MIN_SHARE of the root, or wider when more
 * than MAX_FRAMES frames would pass.
 */
static int choose_min_width(struct fg *g)
{
	const struct fg_tree *t = &g->tree;
	uint64_t min_ns = t->nodes[0].total / MIN_SHARE, *totals;
	size_t n = 0;

	if (!min_ns)
		min_ns = 1;
	for (size_t i = 0; i < t->n; i++)
		n += t->nodes[i].total >= min_ns;
	if (n > MAX_FRAMES) {
		totals = malloc(t->n * sizeof(*totals));
		if (!totals)
			return -ENOMEM;
		for (size_t i = 0; i < t->n; i++)
			totals[i] = t->nodes[i].total;
		qsort(totals, t->n, sizeof(*totals), u64_desc);
		/* Ties at the cut are dropped too: never more than MAX_FRAMES. */
		min_ns = totals[MAX_FRAMES - 1] + 1;
		free(totals);
	}
	g->min_ns = min_ns;
	return 0;
}

static int child_cmp(const void *a, const void *b, void *arg)
{
	const struct fg *g = arg;
	const struct fg_node *x = &g->tree.nodes[*(const uint32_t *)a];
	const struct fg_node *y = &g->tree.nodes[*(const uint32_t *)b];
	int c = strcmp(label_name(g, x->label), label_name(g, y->label));

	if (c)
		return c;
	return (x->label > y->label) - (x->label < y->label);
}

/*
 * Lay the callees of every shown node out from its left edge, in the
 * order of their names (so that two graphs of one program look alike),
 * and mark which are shown.
 */
static int lay_out(struct fg *g)
{
	struct fg_tree *t = &g->tree;
	uint32_t *kids = NULL, *stack = NULL;
	size_t kcap = 0, nstack = 0;
	int err = 0;

	stack = malloc((t->n + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	t->nodes[0].shown = true;
	stack[nstack++] = 0;
	while (nstack) {
		struct fg_node *p = &t->nodes[stack[--nstack]];
		uint64_t off = p->offset;
		size_t nk = 0;
		uint32_t *grown;

		for (uint32_t c = p->child; c != NO_NODE; c = t->nodes[c].next) {
			if (t->nodes[c].total < g->min_ns)
				continue;
			grown = wp_grow(kids, &kcap, nk + 1, sizeof(*kids));
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			kids = grown;
			kids[nk++] = c;
		}
		if (nk)
			qsort_r(kids, nk, sizeof(*kids), child_cmp, g);
		for (size_t i = 0; i < nk; i++) {
			struct fg_node *c = &t->nodes[kids[i]];

			c->offset = off;
			c->shown = true;
			if (c->depth > t->max_depth)
				t->max_depth = c->depth;
			off += c->total;
			stack[nstack++] = kids[i];
		}
	}
out:
	free(kids);
	free(stack);
	return err;
}

/* The part that holds most of a frame's time; *pure: 90% of it or more. */
static int dominant_part(const struct fg_node *nd, bool *pure)
{
	int best = 0;

	for (int p = 1; p < WP_NR_PARTS; p++)
		if (nd->ns[p] > nd->ns[best])
			best = p;
	*pure = nd->ns[best] >= nd->total - nd->total / 10;
	return best;
}

/* A stable hash of a name, so a function keeps its shade from graph to graph. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261U;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619U;
	return h;
}

struct rgb {
	unsigned int r, g, b;
};

/* Base colour and spread of each hue: on-CPU warm, blocked blue, ... */
static const struct {
	struct rgb base, spread;
	const char *name;
} hues[] = {
	[WP_PART_ON] = { { 215, 70, 20 }, { 40, 140, 40 }, "on-CPU" },
	[WP_PART_BLOCKED] = { { 70, 120, 200 }, { 60, 70, 55 }, "blocked" },
	[WP_PART_PREEMPTED] = { { 160, 95, 200 }, { 50, 50, 50 }, "preempted" },
	[WP_PART_RUNNABLE] = { { 50, 170, 110 }, { 50, 60, 50 }, "runnable (woken, waiting for a CPU)" },
};

/*
 * The hue of the kind that holds most of the frame's time, shaded by its
 * name; paler when other kinds hold more than a tenth of it.
 */
static struct rgb hue_shade(int part, bool pure, const char *name)
{
	uint32_t h = name_hash(name);
	unsigned int a = h & 0xff, b = (h >> 8) & 0xff;
	struct rgb c = { hues[part].base.r + hues[part].spread.r * a / 255,
			 hues[part].base.g + hues[part].spread.g * b / 255,
			 hues[part].base.b + hues[part].spread.b * a / 255 };

	if (!pure) {
		c.r = (c.r + 255) / 2;
		c.g = (c.g + 255) / 2;
		c.b = (c.b + 255) / 2;
	}
	return c;
}

static void put_xml(FILE *out, const char *s)
{
	wp_quote_puts(out, s, WP_QUOTE_XML);
}

/* The first n characters of s (whole UTF-8 sequences), quoted for XML. */
static void put_xml_prefix(FILE *out, const char *s, size_t chars)
{
	size_t len = strlen(s), at = 0;

	for (size_t c = 0; c < chars && at < len; c++) {
		size_t l = wp_utf8_len(s + at, len - at);

		at += l ? l : 1;
	}
	wp_quote_write(out, s, at, WP_QUOTE_XML);
}

static void put_time(FILE *out, uint64_t ns, uint64_t whole)
{
	char buf[32];

	fprintf(out, "%s, %.2f%%", wp_human_ns(ns, buf, sizeof(buf)),
		whole ? 100.0 * (double)ns / (double)whole : 0.0);
}

static void put_frame(struct fg *g, FILE *out, const struct fg_node *nd, bool inverted)
{
	const char *name = nd == g->tree.nodes ? "all" : label_name(g, nd->label);
	uint64_t whole = g->tree.nodes[0].total;
	double x = PAD + (double)nd->offset * g->scale, w = (double)nd->total * g->scale;
	double y = inverted ? TOP + (double)nd->depth * FRAME_HEIGHT :
			      TOP + (double)(g->tree.max_depth - nd->depth) * FRAME_HEIGHT;
	bool pure;
	int part = dominant_part(nd, &pure);
	struct rgb c = nd == g->tree.nodes ? (struct rgb){ 200, 200, 200 } :
					     hue_shade(part, pure, name);
	uint32_t i = (uint32_t)(nd - g->tree.nodes);
	double delta = g->base ? node_delta(g, i) : 0;

	/* The differential colours: red for growth, blue for shrinkage. */
	if (g->base) {
		unsigned int fade = g->max_delta > 0 ?
			(unsigned int)(210 * (delta < 0 ? -delta : delta) / g->max_delta) : 0;

		c = delta >= 0 ? (struct rgb){ 250, 250 - fade, 250 - fade } :
				 (struct rgb){ 250 - fade, 250 - fade, 250 };
	}
	/* (A hostile file's frame may be wider than the whole: capped.) */
	double fit = w > 6 ? (w - 6) / CHAR_WIDTH : 0;
	size_t room = fit < 4096 ? (size_t)fit : 4096;
	char buf[32];
	int shown = 0;

	fprintf(out, "<g class=\"f\" data-o=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%" PRIu32
		"\"", nd->offset, nd->total, nd->depth);
	if (g->base)	/* the change of share, in millionths */
		fprintf(out, " data-delta=\"%.0f\"", delta * 1e6);
	fputs("><title>", out);
	put_xml(out, name);
	fputs("&#10;", out);
	put_time(out, nd->total, whole);
	if (g->base)
		fprintf(out, "&#10;base %.2f%%, this %.2f%%: %+.2f points", 100 * (node_share(&g->tree, i) - delta),
			100 * node_share(&g->tree, i), 100 * delta);
	/* The split by kind, when more than one kind is in the frame. */
	for (int p = 0; p < WP_NR_PARTS; p++)
		shown += nd->ns[p] != 0;
	for (int p = 0; p < WP_NR_PARTS && shown > 1; p++)
		if (nd->ns[p])
			fprintf(out, "&#10;%s %s", hues[p].name,
				wp_human_ns(nd->ns[p], buf, sizeof(buf)));
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"#%02x%02x%02x\"/><text x=\"%.2f\" y=\"%.1f\">", x, y, w, FRAME_HEIGHT - 1,
		c.r, c.g, c.b, x + 3, y + FRAME_HEIGHT - 4.5);
	if (room >= 3) {
		size_t chars = 0;

		for (const char *s = name; *s; chars++) {
			size_t l = wp_utf8_len(s, strlen(s));

			s += l ? l : 1;
		}
		if (chars <= room) {
			put_xml(out, name);
		} else {
			put_xml_prefix(out, name, room - 2);
			fputs("..", out);
		}
	}
	fputs("</text></g>\n", out);
}

static const char *mode_title(enum wp_mode mode)
{
	switch (mode) {
	case WP_MODE_ON:
		return "On-CPU";
	case WP_MODE_OFF:
		return "Off-CPU";
	case WP_MODE_BLOCKED:
		return "Blocked";
	case WP_MODE_PREEMPTED:
		return "Preempted";
	case WP_MODE_RUNNABLE:
		return "Runnable";
	default:
		return "Wall-clock";
	}
}

static void put_id_list(FILE *out, const char *option, const pid_t *ids, size_t n)
{
	if (!n)
		return;
	fprintf(out, " %s ", option);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%ld", i ? "," : "", (long)ids[i]);
}

static void put_head(struct fg *g, FILE *out, unsigned int height)
{
	const struct wp_analysis *an = g->v->an;
	const struct wp_view_opts *o = &g->v->o;
	const struct wp_meta *m = an->meta;
	char buf[32];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" data-pad=\"%d\" data-frames-width=\"%d\" "
		"data-char-width=\"%d\">\n<style>\n%s</style>\n<script><![CDATA[\n%s]]></script>\n",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, PAD, IMAGE_WIDTH - 2 * PAD, CHAR_WIDTH,
		wp_flamegraph_style, wp_flamegraph_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fbfaf7\"/>\n"
		"<text class=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">",
		IMAGE_WIDTH / 2);
	if (o->title) {
		put_xml(out, o->title);
	} else if (g->v->critpath) {
		const struct wp_waits_thread *t = wp_waits_thread(g->v->waits,
								  g->v->critpath->serial);

		fputs("Critical path of ", out);
		put_xml(out, t->t->comm);
		fprintf(out, " (%" PRIu32 ") over %s: what it waited for, from waker to waker",
			t->t->tid, wp_human_ns(g->v->critpath->end_ns - g->v->critpath->start_ns,
					       buf, sizeof(buf)));
	} else if (g->base) {
		fprintf(out, "Differential %s flame graph: red grew, blue shrank, as shares of "
			"each recording's total", mode_title(o->mode));
	} else {
		fprintf(out, "%s %s", mode_title(o->mode),
			o->inverted ? "icicle graph (callers above their callees)" : "flame graph");
		if (g->v->explain && o->mode == WP_MODE_WALL && g->v->system_default)
			fprintf(out, ": on-CPU time, and the waits of threads on-CPU %d%%+ "
				"of their time", WP_BUSY_PERCENT);
		else if (g->v->explain && o->mode == WP_MODE_WALL)
			fprintf(out, ": on-CPU time, and the waits of threads not idle");
	}
	/* The subtitle: what was recorded, for how long, where, which threads. */
	fprintf(out, "</text>\n<text class=\"subtitle\" x=\"%d\" y=\"44\" text-anchor=\"middle\">",
		IMAGE_WIDTH / 2);
	for (uint32_t i = 0; i < m->argc; i++) {
		if (i)
			fputc(' ', out);
		put_xml(out, m->argv[i]);
	}
	fprintf(out, " \xe2\x80\x94 %s on ", wp_human_ns(an->end_ns - an->start_ns, buf, sizeof(buf)));
	put_xml(out, m->hostname);
	if (an->has_window)
		fprintf(out, ", window %s", wp_human_ns(an->window_end - an->window_start,
							buf, sizeof(buf)));
	if (o->nr_pids || o->nr_tids || o->comm || o->grep) {
		fputs(", only", out);
		put_id_list(out, "--pid", o->pids, o->nr_pids);
		put_id_list(out, "--tid", o->tids, o->nr_tids);
		if (o->comm) {
			fputs(" --comm ", out);
			put_xml(out, o->comm);
		}
		if (o->grep) {
			fputs(" --grep ", out);
			put_xml(out, o->grep);
		}
	}
	if (!g->base && !g->v->critpath) {
		uint64_t threads, off_ns;

		wp_view_left_out(g->v, &threads, &off_ns);
		if (threads)
			fprintf(out, "; %s off-CPU of %" PRIu64 " %s left out (--mode wall "
				"shows it)", wp_human_ns(off_ns, buf, sizeof(buf)), threads,
				threads == 1 ? (g->v->system_default ? "less busy thread" : "idle thread") :
				(g->v->system_default ? "less busy threads" : "idle threads"));
	}
	fputs("</text>\n", out);
}

/* A swatch per kind the mode shows, then a note on mixed frames; the controls. */
static void put_legend(struct fg *g, FILE *out)
{
	bool wakeups = wp_account_has_wakeups(g->v->an->account);
	int x = PAD, kinds = 0;

	for (int p = 0; p < WP_NR_PARTS; p++) {
		struct rgb c = hue_shade(p, true, "");

		if (!wp_view_part(g->v, (enum wp_part)p) || (p == WP_PART_RUNNABLE && !wakeups))
			continue;
		fprintf(out, "<rect x=\"%d\" y=\"58\" width=\"12\" height=\"12\" rx=\"2\" "
			"fill=\"#%02x%02x%02x\"/><text x=\"%d\" y=\"68.5\">%s</text>\n",
			x, c.r, c.g, c.b, x + 16, hues[p].name);
		x += 16 + (int)strlen(hues[p].name) * CHAR_WIDTH + 18;
		kinds++;
	}
	if (g->base) {
		fprintf(out, "<text class=\"subtitle\" x=\"%d\" y=\"68.5\">The frames are this "
			"recording's; the base recording was:", PAD);
		for (uint32_t i = 0; i < g->base->v->an->meta->argc; i++) {
			fputc(' ', out);
			put_xml(out, g->base->v->an->meta->argv[i]);
		}
		fputs("</text>\n", out);
	} else if (kinds > 1)
		fprintf(out, "<text class=\"subtitle\" x=\"%d\" y=\"68.5\">paler: other kinds "
			"hold over a tenth of the frame's time (its tooltip splits it)</text>\n", x);
	fprintf(out, "<text id=\"reset\" class=\"control hidden\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"control\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"unsearch\" class=\"control hidden\" x=\"%d\" y=\"44\" "
		"text-anchor=\"end\">Clear search</text>\n",
		PAD, IMAGE_WIDTH - PAD, IMAGE_WIDTH - PAD);
}

static void put_foot(FILE *out, unsigned int height)
{
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" class=\"hidden\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"selftest\" class=\"hidden\" x=\"%d\" y=\"%u\"> </text>\n</svg>\n",
		PAD, height - 14, IMAGE_WIDTH - PAD, height - 14, PAD, height - 2);
}

int wp_format_flamegraph(struct wp_view *v, FILE *out)
{
	struct fg g = { .v = v }, base = { .v = v->base };
	unsigned int height;
	int err;

	err = map_thread_names(&g);
	if (!err)
		err = build_tree(&g);
	if (!err)
		err = choose_min_width(&g);
	if (!err)
		err = lay_out(&g);
	if (!err && v->base) {
		g.base = &base;
		err = map_thread_names(&base);
		if (!err)
			err = build_tree(&base);
		if (!err)
			err = match_base(&g);
	}
	if (err)
		goto out;
	g.scale = (double)(IMAGE_WIDTH - 2 * PAD) /
		  (double)(g.tree.nodes[0].total ? g.tree.nodes[0].total : 1);
	height = TOP + (g.tree.max_depth + 1) * FRAME_HEIGHT + BOTTOM;
	put_head(&g, out, height);
	put_legend(&g, out);
	/* Callers before callees: each frame is drawn over its caller's place. */
	for (size_t i = 0; i < g.tree.n; i++)
		if (g.tree.nodes[i].shown)
			put_frame(&g, out, &g.tree.nodes[i], v->o.inverted);
	put_foot(out, height);
out:
	tree_release(&g.tree);
	tree_release(&base.tree);
	free(g.thread_rep);
	free(base.thread_rep);
	free(g.path);
	free(base.path);
	free(g.base_node);
	return err;
}
