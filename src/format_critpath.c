/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_critpath.c: a thread's critical path (critpath.h) as text: who
 * and what held it, the stacks on it, and the path in time order; and as
 * the critical_path member of the JSON report.  The flame graph and the
 * trace draw it themselves (format_flamegraph.c, format_trace.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "format.h"
#include "log.h"
#include "quote.h"
#include "util.h"
#include "waits.h"

#define TEXT_HOLDERS 20
#define TEXT_STACKS 12
#define TEXT_SEGMENTS 40
#define FRAMES 8

/* Segments of one holder and state, or one stack of them, added up. */
struct sum {
	const struct wp_cp_segment *first;	/* stands for them */
	uint64_t ns, count;
};

/* What a blocked segment's label says of it (put_state). */
#define BLOCKED_LABEL_FLAGS (WP_CP_CYCLE | WP_CP_TOO_DEEP | WP_CP_GATED)

/* The thread an outside segment names (the waker's), or 0. */
static uint32_t outside_tid(const struct wp_waits *w, const struct wp_cp_segment *s)
{
	return s->kind == WP_CP_OUTSIDE && s->waker < w->nr_wakers ? w->wakers[s->waker].tid : 0;
}

/*
 * One holder in one state, as the summary names them (put_holder,
 * put_state): the kind, the device, the thread, a blocked segment's
 * label, and an outside waker's thread.  arg: the waits.
 */
static int by_holder(const void *a, const void *b, void *arg)
{
	const struct wp_cp_segment *x = *(const struct wp_cp_segment *const *)a;
	const struct wp_cp_segment *y = *(const struct wp_cp_segment *const *)b;
	uint32_t fx = x->kind == WP_CP_BLOCKED ? x->flags & BLOCKED_LABEL_FLAGS : 0;
	uint32_t fy = y->kind == WP_CP_BLOCKED ? y->flags & BLOCKED_LABEL_FLAGS : 0;
	uint32_t tx = outside_tid(arg, x), ty = outside_tid(arg, y);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->cause != y->cause)
		return x->cause < y->cause ? -1 : 1;
	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return 0;
}

static int by_stack(const void *a, const void *b, void *arg)
{
	const struct wp_cp_segment *x = *(const struct wp_cp_segment *const *)a;
	const struct wp_cp_segment *y = *(const struct wp_cp_segment *const *)b;
	int c = by_holder(a, b, arg);

	if (c)
		return c;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if ((x->flags ^ y->flags) & WP_CP_NEAREST_SAMPLE)
		return x->flags & WP_CP_NEAREST_SAMPLE ? 1 : -1;
	return 0;
}

/* Where a stack of the path was: a running slice's without a sample says so. */
static void put_path_stack(FILE *out, const struct wp_view *v, const struct wp_cp_segment *s,
			   unsigned int frames)
{
	if (s->kind == WP_CP_RUNNING && (s->flags & WP_CP_NEAREST_SAMPLE))
		fputs("(no sample in its slices: the nearest) ", out);
	wp_waits_put_stack(out, v->an, s->stack, frames, WP_QUOTE_TEXT);
}

static int sum_cmp(const void *a, const void *b)
{
	const struct sum *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The path's segments added up by cmp's classes, most time first; *n of them. */
static struct sum *sums(const struct wp_critpath *cp, const struct wp_waits *w,
			int (*cmp)(const void *, const void *, void *), size_t *n)
{
	const struct wp_cp_segment **order = calloc(cp->nr_segs + 1, sizeof(*order));
	struct sum *s = calloc(cp->nr_segs + 1, sizeof(*s));

	*n = 0;
	if (!order || !s) {
		free(order);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < cp->nr_segs; i++)
		order[i] = &cp->segs[i];
	qsort_r(order, cp->nr_segs, sizeof(*order), cmp, (void *)w);
	for (size_t i = 0; i < cp->nr_segs; i++) {
		if (!*n || cmp(&order[i], &s[*n - 1].first, (void *)w))
			s[(*n)++].first = order[i];
		s[*n - 1].ns += order[i]->end_ns - order[i]->start_ns;
		s[*n - 1].count++;
	}
	qsort(s, *n, sizeof(*s), sum_cmp);
	free(order);
	return s;
}

/* "on-CPU", "woke w2 (102)" (a device), "blocked, nothing on record ends it". */
static void put_state(const struct wp_waits *w, const struct wp_cp_segment *s, FILE *out)
{
	const struct wp_waits_thread *t = wp_waits_thread(w, s->serial);

	switch (s->kind) {
	case WP_CP_DEVICE:
	case WP_CP_OUTSIDE:
		fputs("woke ", out);
		if (t)
			fprintf(out, "%s", wp_quoted(t->t->comm));
		fprintf(out, " (%" PRIu32 ")", t ? t->t->tid : 0);
		break;
	case WP_CP_BLOCKED:
		fputs(s->flags & WP_CP_CYCLE ? "blocked (its waker waits for it: a cycle)" :
		      s->flags & WP_CP_TOO_DEEP ? "blocked (too deep to follow)" :
		      s->flags & WP_CP_GATED ? "blocked, its wake-up not recorded (budget)" :
		      "blocked, no wake-up on record", out);
		break;
	default:
		fputs(wp_cp_kind_name((enum wp_cp_kind)s->kind), out);
		break;
	}
}

static void put_holder(const struct wp_waits *w, const struct wp_cp_segment *s, FILE *out)
{
	char buf[96];

	wp_cp_holder(w, s, buf, sizeof(buf));
	wp_quote_puts(out, buf, WP_QUOTE_TEXT);
}

static void put_ms(FILE *out, uint64_t ns)
{
	fprintf(out, "%10.3f ms", (double)ns / 1e6);
}

int wp_format_critpath_text(struct wp_view *v, FILE *out)
{
	const struct wp_critpath *cp = v->critpath;
	const struct wp_waits *w = v->waits;
	const struct wp_waits_thread *t = wp_waits_thread(w, cp->serial);
	uint64_t window = cp->end_ns - cp->start_ns, total = 0;
	struct sum *holders, *stacks;
	size_t nh, ns, runs = 0;

	holders = sums(cp, w, by_holder, &nh);
	stacks = sums(cp, w, by_stack, &ns);
	if (!holders || !stacks) {
		free(holders);
		free(stacks);
		wp_error("out of memory writing the critical path");
		return -ENOMEM;
	}
	fprintf(out, "Critical path of %s (pid %" PRIu32 ", tid %" PRIu32 ") from %.6f s to %.6f s "
		"(%.3f ms):\nwhat its time waited for, followed from each wake-up to the waker "
		"(%" PRIu64 " wake-up%s followed).\n", wp_quoted(t->t->comm), t->t->pid, t->t->tid,
		(double)(cp->start_ns - v->an->start_ns) / 1e9,
		(double)(cp->end_ns - v->an->start_ns) / 1e9, (double)window / 1e6,
		cp->wakeups_followed, cp->wakeups_followed == 1 ? "" : "s");
	if (!w->has_wakeups)
		fputs("note: the recording has no wake-ups: no wait can be followed to its waker\n",
		      out);
	else if (!w->waker_stacks)
		fputs("note: the wake-ups have no kernel stacks: interrupts are not told apart as "
		      "timer, network or disk\n", out);
	fprintf(out, "\nWho and what held it, most first:\n%13s %7s  %s\n", "time", "share",
		"holder and state");
	for (size_t i = 0; i < nh; i++) {
		total += holders[i].ns;
		if (i >= TEXT_HOLDERS)
			continue;
		put_ms(out, holders[i].ns);
		fprintf(out, " %6.2f%%  ", 100.0 * (double)holders[i].ns / (double)window);
		put_holder(w, holders[i].first, out);
		fputc(' ', out);
		put_state(w, holders[i].first, out);
		fputc('\n', out);
	}
	if (nh > TEXT_HOLDERS)
		fprintf(out, "%13s %7s  ... %zu more\n", "", "", nh - TEXT_HOLDERS);
	put_ms(out, total);
	fprintf(out, " %6.2f%%  in all: the window\n", 100.0 * (double)total / (double)window);

	fputs("\nStacks on the path, most time first:\n", out);
	for (size_t i = 0; i < ns && i < TEXT_STACKS; i++) {
		const struct wp_cp_segment *s = stacks[i].first;

		put_ms(out, stacks[i].ns);
		fputs("  ", out);
		put_holder(w, s, out);
		fputc(' ', out);
		put_state(w, s, out);
		fputs(s->kind == WP_CP_RUNNING ? ": " : ", waiting in: ", out);
		put_path_stack(out, v, s, FRAMES);
		fputc('\n', out);
		if ((s->kind == WP_CP_DEVICE || s->kind == WP_CP_OUTSIDE) && s->waker < w->nr_wakers) {
			fputs("                 woken from: ", out);
			wp_waits_put_stack(out, v->an, w->wakers[s->waker].stack, FRAMES, WP_QUOTE_TEXT);
			fputc('\n', out);
		}
	}
	if (ns > TEXT_STACKS)
		fprintf(out, "  ... %zu more (--format flamegraph draws them all)\n", ns - TEXT_STACKS);

	/*
	 * The story: runs of one holder in one state (their stacks differ
	 * from sample to sample), each with the stack of its longest piece.
	 */
	for (size_t i = 0, j; i < cp->nr_segs; i = j) {
		for (j = i + 1; j < cp->nr_segs && !by_holder(&(const struct wp_cp_segment *){
							      &cp->segs[i] },
						      &(const struct wp_cp_segment *){
							      &cp->segs[j] }, (void *)w); j++)
			;
		runs++;
	}
	fprintf(out, "\nIn time order (%s%zu run%s of one holder and state):\n",
		runs > TEXT_SEGMENTS ? "the first of " : "", runs, runs == 1 ? "" : "s");
	for (size_t i = 0, j, shown = 0; i < cp->nr_segs && shown < TEXT_SEGMENTS; i = j, shown++) {
		const struct wp_cp_segment *s = &cp->segs[i], *longest = s;

		for (j = i + 1; j < cp->nr_segs && !by_holder(&(const struct wp_cp_segment *){ s },
						      &(const struct wp_cp_segment *){
							      &cp->segs[j] }, (void *)w); j++)
			if (cp->segs[j].end_ns - cp->segs[j].start_ns >
			    longest->end_ns - longest->start_ns)
				longest = &cp->segs[j];
		fprintf(out, "  +%10.3f ms", (double)(s->start_ns - cp->start_ns) / 1e6);
		put_ms(out, cp->segs[j - 1].end_ns - s->start_ns);
		fputs("  ", out);
		put_holder(w, s, out);
		fputc(' ', out);
		put_state(w, s, out);
		fputs(": ", out);
		put_path_stack(out, v, longest, 5);
		fputc('\n', out);
	}
	if (runs > TEXT_SEGMENTS)
		fprintf(out, "  ... %zu more (--format trace shows the path on a track of its own)\n",
			runs - TEXT_SEGMENTS);
	free(holders);
	free(stacks);
	return 0;
}

void wp_format_critpath_json(const struct wp_view *v, FILE *out)
{
	const struct wp_critpath *cp = v->critpath;
	const struct wp_waits *w = v->waits;
	const struct wp_waits_thread *t = wp_waits_thread(w, cp->serial);

	fprintf(out, "\"critical_path\": {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": \"",
		t->t->pid, t->t->tid);
	wp_quote_puts(out, t->t->comm, WP_QUOTE_JSON);
	fprintf(out, "\", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64 ", \"window_ns\": %"
		PRIu64 ", \"wakeups_followed\": %" PRIu64 ", \"cycle_ns\": %" PRIu64
		", \"segments\": [", cp->start_ns, cp->end_ns, cp->end_ns - cp->start_ns,
		cp->wakeups_followed, cp->cycles);
	for (size_t i = 0; i < cp->nr_segs; i++) {
		const struct wp_cp_segment *s = &cp->segs[i];
		const struct wp_waits_thread *h = wp_waits_thread(w, s->serial);

		fprintf(out, "%s\n    {\"start_ns\": %" PRIu64 ", \"ns\": %" PRIu64
			", \"kind\": \"%s\", \"depth\": %u", i ? "," : "", s->start_ns,
			s->end_ns - s->start_ns, wp_cp_kind_name((enum wp_cp_kind)s->kind), s->depth);
		if (h) {
			fprintf(out, ", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": \"",
				h->t->pid, h->t->tid);
			wp_quote_puts(out, h->t->comm, WP_QUOTE_JSON);
			fputc('"', out);
		}
		if (s->kind == WP_CP_DEVICE)
			fprintf(out, ", \"cause\": \"%s\"", wp_cause_name((enum wp_cause)s->cause));
		if (s->cpu != UINT32_MAX)
			fprintf(out, ", \"cpu\": %" PRIu32, s->cpu);
		if (s->flags & WP_CP_CYCLE)
			fputs(", \"cycle\": true", out);
		if (s->flags & WP_CP_TOO_DEEP)
			fputs(", \"too_deep\": true", out);
		if (s->flags & WP_CP_GATED)
			fputs(", \"wakeup_recorded\": false", out);
		if (s->flags & WP_CP_NEAREST_SAMPLE)
			fputs(", \"stack_from_nearest_sample\": true", out);
		fputs(", \"frames\": ", out);
		wp_json_frames(out, v->an, s->stack);
		if (s->waker < w->nr_wakers) {
			fputs(", \"waker\": {", out);
			wp_json_waker(out, w, s->waker);
			fputc('}', out);
		}
		fputc('}', out);
	}
	fputs("\n  ]}", out);
}
