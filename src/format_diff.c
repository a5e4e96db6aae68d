/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_diff.c: the text report of --diff: the functions whose share of
 * the time grew and shrank most from the base recording to this one.
 *
 * A function's time is that of every stack it is in (counted once in a
 * recursive stack), and its share is that time over its recording's total
 * of the view, so recordings of different lengths compare.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "quote.h"
#include "symbols.h"
#include "util.h"

/* Rows of each of the two tables (grew, shrank), unless --top says more. */
#define DIFF_ROWS 10

struct fn_time {
	const char *name;	/* borrowed from the recording's names */
	uint64_t ns;
};

struct fn_times {
	struct fn_time *v;
	size_t n, cap;
	uint64_t total;
};

static int fn_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fn_time *)a)->name, ((const struct fn_time *)b)->name);
}

/* Every function's inclusive time in the view, sorted by name, one row each. */
static int collect(struct wp_view *v, struct fn_times *ft)
{
	const struct wp_stack_weight *w;
	size_t nw, out = 0;

	w = wp_account_stacks(v->an->account, &nw);
	for (size_t i = 0; i < nw; i++) {
		const uint32_t *frames;
		unsigned int nf;
		uint64_t ns = 0;

		if (!wp_view_thread(v, w[i].thread) || !wp_view_stack(v, w[i].stack))
			continue;
		for (int p = 0; p < WP_NR_PARTS; p++)
			ns += wp_view_part_ns(v, &w[i], (enum wp_part)p);
		if (!ns)
			continue;
		ft->total += ns;
		frames = wp_stacks_get(v->an->stacks, w[i].stack, &nf);
		for (unsigned int f = 0; f < nf; f++) {
			const char *name = wp_analysis_frame_name(v->an, frames[f]);
			struct fn_time *grown;
			bool seen = false;

			/* A recursive function counts once per stack. */
			for (unsigned int g = 0; g < f && !seen; g++)
				seen = !strcmp(wp_analysis_frame_name(v->an, frames[g]), name);
			if (seen)
				continue;
			grown = wp_grow(ft->v, &ft->cap, ft->n + 1, sizeof(*ft->v));
			if (!grown)
				return -ENOMEM;
			ft->v = grown;
			ft->v[ft->n++] = (struct fn_time){ name, ns };
		}
	}
	if (!ft->n)
		return 0;
	qsort(ft->v, ft->n, sizeof(*ft->v), fn_cmp);
	for (size_t i = 0; i < ft->n; i++) {
		if (out && !strcmp(ft->v[out - 1].name, ft->v[i].name))
			ft->v[out - 1].ns += ft->v[i].ns;
		else
			ft->v[out++] = ft->v[i];
	}
	ft->n = out;
	return 0;
}

struct fn_delta {
	const char *name;
	uint64_t before, after;	/* ns */
	double share_before, share_after;	/* of each recording's total */
};

static int delta_cmp(const void *a, const void *b)
{
	const struct fn_delta *x = a, *y = b;
	double dx = x->share_after - x->share_before, dy = y->share_after - y->share_before;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double share(uint64_t ns, uint64_t total)
{
	return total ? (double)ns / (double)total : 0;
}

static void print_row(FILE *out, const struct fn_delta *d)
{
	char b[32], a[32];

	fprintf(out, "  %+8.2f%%  %7.2f%% %10s  %7.2f%% %10s  ",
		100 * (d->share_after - d->share_before), 100 * d->share_before,
		wp_human_ns(d->before, b, sizeof(b)), 100 * d->share_after,
		wp_human_ns(d->after, a, sizeof(a)));
	wp_quote_puts(out, d->name, WP_QUOTE_TEXT);
	fputc('\n', out);
}

static void print_header(FILE *out, const char *what, const struct wp_analysis *an,
			 uint64_t total)
{
	char buf[32];

	fprintf(out, "# %s:", what);
	for (uint32_t i = 0; i < an->meta->argc; i++) {
		fputc(' ', out);
		wp_quote_puts(out, an->meta->argv[i], WP_QUOTE_TEXT);
	}
	fprintf(out, "\n#   %s in all\n", wp_human_ns(total, buf, sizeof(buf)));
}

int wp_format_text_diff(struct wp_view *v, FILE *out)
{
	struct fn_times before = { 0 }, after = { 0 };
	struct fn_delta *d = NULL;
	size_t n = 0, rows, i, j;
	int err;

	err = collect(v->base, &before);
	if (!err)
		err = collect(v, &after);
	if (err)
		goto out;
	d = calloc(before.n + after.n + 1, sizeof(*d));
	if (!d) {
		err = -ENOMEM;
		goto out;
	}
	/* Both lists are sorted by name: merge them. */
	for (i = 0, j = 0; i < before.n || j < after.n;) {
		int c = i == before.n ? 1 : j == after.n ? -1 :
			strcmp(before.v[i].name, after.v[j].name);

		d[n].name = c <= 0 ? before.v[i].name : after.v[j].name;
		d[n].before = c <= 0 ? before.v[i++].ns : 0;
		d[n].after = c >= 0 ? after.v[j++].ns : 0;
		d[n].share_before = share(d[n].before, before.total);
		d[n].share_after = share(d[n].after, after.total);
		n++;
	}
	if (n)
		qsort(d, n, sizeof(*d), delta_cmp);
	print_header(out, "base", v->base->an, before.total);
	print_header(out, "this", v->an, after.total);
	fprintf(out, "# each side as a share of its own total %s time\n\n",
		wp_mode_name(v->o.mode));
	rows = v->o.top > DIFF_ROWS ? v->o.top : DIFF_ROWS;
	fprintf(out, "Grew most:\n     DELTA     BASE       TIME     THIS       TIME  FUNCTION\n");
	for (i = 0; i < n && i < rows && d[i].share_after > d[i].share_before; i++)
		print_row(out, &d[i]);
	fprintf(out, "\nShrank most:\n     DELTA     BASE       TIME     THIS       TIME  FUNCTION\n");
	for (i = 0; i < n && i < rows && d[n - 1 - i].share_after < d[n - 1 - i].share_before; i++)
		print_row(out, &d[n - 1 - i]);
out:
	free(d);
	free(before.v);
	free(after.v);
	return err;
}
