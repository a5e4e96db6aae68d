/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_folded.c: Brendan Gregg's folded stacks, one line per distinct
 * stack, "root;outer;...;leaf weight", for flamegraph.pl and speedscope.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "quote.h"
#include "symbols.h"
#include "util.h"

struct folded_line {
	char *text;
	uint64_t ns;
};

/*
 * A frame, quoted: no ';' (the separator) and no byte that ends a line or
 * upsets a terminal or the XML of a flame graph built from the output.
 */
void wp_folded_frame(struct wp_buf *b, const char *name, uint32_t token)
{
	if (b->len)
		wp_buf_append(b, ";", 1);
	wp_quote_buf(b, name, strlen(name), WP_QUOTE_FOLDED);
	/* FlameGraph's conventions: kernel frames _[k], inlined _[i]. */
	if (token & WP_FRAME_KERNEL)
		wp_buf_append(b, "_[k]", 4);
	else if (token & WP_FRAME_INLINED)
		wp_buf_append(b, "_[i]", 4);
}

/*
 * A frame of a stack.  The pseudo-stacks of off-CPU time without a stack
 * ("[off-cpu: not sampled]", "[off-cpu: stacks not recorded]") lose their
 * "off-cpu: ": in this format only the last frame, the marker of the
 * kind of time, starts with "[off-cpu", and the marker follows them too.
 */
void wp_folded_stack_frame(struct wp_buf *b, const char *name, uint32_t token)
{
	static const char pseudo[] = "[off-cpu: ";
	char plain[128];

	if (!(token & (WP_FRAME_KERNEL | WP_FRAME_INLINED)) &&
	    !strncmp(name, pseudo, sizeof(pseudo) - 1) &&
	    strlen(name) - (sizeof(pseudo) - 1) < sizeof(plain) - 1) {
		snprintf(plain, sizeof(plain), "[%s", name + sizeof(pseudo) - 1);
		name = plain;
	}
	wp_folded_frame(b, name, token);
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

struct folded {
	struct folded_line *lines;
	size_t nl, cap;
};

static int add_line(struct folded *fo, const struct wp_buf *b, uint64_t ns)
{
	struct folded_line *grown;
	char *text;

	if (!ns)
		return 0;
	grown = wp_grow(fo->lines, &fo->cap, fo->nl + 1, sizeof(*fo->lines));
	if (!grown)
		return -ENOMEM;
	fo->lines = grown;
	text = malloc(b->len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, b->data, b->len);
	text[b->len] = '\0';
	fo->lines[fo->nl].text = text;
	fo->lines[fo->nl++].ns = ns;
	return 0;
}

/*
 * --wakers: one line per waker of a blocked stack, its frames after a
 * "--" frame, the waker's leaf first and its name last (the shape of
 * offwaketime -f), and what no waker ended on the stack alone.
 */
static int add_waker_lines(struct wp_view *v, struct folded *fo, struct wp_buf *b,
			   const struct wp_stack_weight *w, uint64_t ns)
{
	const struct wp_wake_weight *k;
	const struct wp_waker *wk;
	size_t nk, nwk, base = b->len;
	uint64_t woken = 0;
	char name[32];
	int err;

	k = wp_account_wake_weights(v->an->account, &nk);
	wk = wp_account_wakers(v->an->account, &nwk);
	for (uint32_t i = w->wakes; i && i <= nk; i = k[i - 1].next) {
		const struct wp_waker *a = &wk[k[i - 1].waker];
		const uint32_t *frames;
		unsigned int n;

		if (!wp_view_waker(v, k[i - 1].waker))
			continue;
		b->len = base;
		wp_folded_frame(b, "--", 0);
		frames = wp_stacks_get(v->an->stacks, a->stack, &n);
		for (unsigned int f = 0; f < n; f++)
			wp_folded_stack_frame(b, wp_analysis_frame_name(v->an, frames[f]), frames[f]);
		if (v->o.thread_root)
			wp_folded_frame(b, wp_waker_name(v->an, a, name, sizeof(name)), 0);
		err = add_line(fo, b, k[i - 1].blocked_ns);
		if (err)
			return err;
		woken += k[i - 1].blocked_ns;
	}
	b->len = base;
	return add_line(fo, b, ns > woken ? ns - woken : 0);
}

int wp_format_folded(struct wp_view *v, FILE *out)
{
	const struct wp_analysis *an = v->an;
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	struct folded fo = { 0 };
	struct folded_line *lines;
	size_t nth, nw, nl;
	struct wp_buf b = { 0 };
	int err = 0;

	th = wp_account_threads(an->account, &nth);
	w = wp_account_stacks(an->account, &nw);
	for (size_t i = 0; i < nw && !err; i++) {
		const uint32_t *frames;
		unsigned int n;

		if (!wp_view_thread(v, w[i].thread) || !wp_view_stack(v, w[i].stack))
			continue;
		frames = wp_stacks_get(an->stacks, w[i].stack, &n);
		for (int part = 0; part < WP_NR_PARTS && !err; part++) {
			uint64_t ns = wp_view_part_ns(v, &w[i], (enum wp_part)part);
			const char *marker = wp_part_marker((enum wp_part)part,
							    wp_view_part_estimated(&w[i], (enum wp_part)part));

			if (!ns)
				continue;
			b.len = 0;
			if (v->o.thread_root)
				wp_folded_frame(&b, th[w[i].thread].comm[0] ? th[w[i].thread].comm : "?", 0);
			for (unsigned int f = n; f-- > 0;)
				wp_folded_stack_frame(&b, wp_analysis_frame_name(an, frames[f]), frames[f]);
			if (marker)
				wp_folded_frame(&b, marker, 0);
			if (v->o.wakers && part == WP_PART_BLOCKED)
				err = add_waker_lines(v, &fo, &b, &w[i], ns);
			else
				err = add_line(&fo, &b, ns);
		}
	}
	lines = fo.lines;
	nl = fo.nl;
	if (err)
		goto out;
	/* Equal stacks of different threads with the same name add up. */
	if (nl)	/* lines is NULL when there is nothing */
		qsort(lines, nl, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nl;) {
		uint64_t ns = 0, weight;
		size_t j = i;

		while (j < nl && !strcmp(lines[j].text, lines[i].text))
			ns += lines[j++].ns;
		weight = (ns + v->o.unit_ns / 2) / v->o.unit_ns;
		if (weight)
			fprintf(out, "%s %" PRIu64 "\n", lines[i].text, weight);
		i = j;
	}
out:
	for (size_t i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	wp_buf_release(&b);
	return err;
}
