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
static void put_frame(struct wp_buf *b, const char *name, uint32_t token)
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

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int wp_format_folded(struct wp_view *v, FILE *out)
{
	const struct wp_analysis *an = v->an;
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	struct folded_line *lines = NULL;
	size_t nth, nw, nl = 0, cap = 0;
	struct wp_buf b = { 0 };
	int err = 0;

	th = wp_account_threads(an->account, &nth);
	w = wp_account_stacks(an->account, &nw);
	for (size_t i = 0; i < nw; i++) {
		const uint32_t *frames;
		unsigned int n;

		if (!wp_view_thread(v, w[i].thread) || !wp_view_stack(v, w[i].stack))
			continue;
		frames = wp_stacks_get(an->stacks, w[i].stack, &n);
		for (int part = 0; part < WP_NR_PARTS; part++) {
			uint64_t ns = wp_view_part_ns(v, &w[i], (enum wp_part)part);
			const char *marker = wp_part_marker((enum wp_part)part);

			if (!ns)
				continue;
			b.len = 0;
			if (v->o.thread_root)
				put_frame(&b, th[w[i].thread].comm[0] ? th[w[i].thread].comm : "?", 0);
			for (unsigned int f = n; f-- > 0;)
				put_frame(&b, wp_analysis_frame_name(an, frames[f]), frames[f]);
			if (marker)
				put_frame(&b, marker, 0);
			if (!wp_buf_append(&b, "", 1) && nl == cap) {
				struct folded_line *nlines;

				cap = cap ? cap * 2 : 256;
				nlines = realloc(lines, cap * sizeof(*nlines));
				if (!nlines) {
					err = -ENOMEM;
					goto out;
				}
				lines = nlines;
			}
			lines[nl].text = strdup((const char *)b.data);
			if (!lines[nl].text) {
				err = -ENOMEM;
				goto out;
			}
			lines[nl++].ns = ns;
		}
	}
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
