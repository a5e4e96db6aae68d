/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_hist.c: log2 histograms (in the manner of bcc's cpudist and
 * offcputime) of on-CPU slice lengths, off-CPU interval lengths, and the
 * waits for a CPU after a wake-up (runqlat's) and after a preemption, for
 * all shown threads or one per thread.
 */
#include <inttypes.h>
#include <string.h>

#include "format.h"
#include "quote.h"
#include "util.h"

#define BAR_WIDTH 40

/*
 * on_cpu_ns: for the on-CPU slices, the threads' on-CPU time as the report
 * has it (anchored to the kernel's figures), said where the slices, as the
 * switch records time them, add up to more than a hundredth less or more;
 * else 0.
 */
static void print_hist(const char *title, const struct wp_hist *h, uint64_t on_cpu_ns, FILE *out)
{
	uint64_t max = 0, total = 0, n = 0;
	int lo = -1, hi = -1;
	char a[16], b[16];

	for (int i = 0; i < WP_HIST_BUCKETS; i++) {
		if (!h->count[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (h->count[i] > max)
			max = h->count[i];
		total += h->total_ns[i];
		n += h->count[i];
	}
	fprintf(out, "\n%s: %" PRIu64 " intervals, %s in all\n", title, n,
		wp_human_ns(total, a, sizeof(a)));
	if (on_cpu_ns && (on_cpu_ns > total ? on_cpu_ns - total : total - on_cpu_ns) * 100 > on_cpu_ns)
		fprintf(out, "  as the switch records time them; the kernel's own figures give "
			"these threads %s on a CPU\n", wp_human_ns(on_cpu_ns, b, sizeof(b)));
	if (lo < 0)
		return;
	fprintf(out, "%21s : %8s %6s  %-*s\n", "length", "count", "time", BAR_WIDTH + 2,
		"distribution");
	for (int i = lo; i <= hi; i++) {
		/*
		 * Up to the next bucket's start, not included: printed to 4
		 * digits, 2^(i+1) - 1 and 2^(i+1) would read as two numbers
		 * (65.53us, 65.54us).  The last bucket ends at the largest
		 * u64: 1 << 64 does not exist.
		 */
		uint64_t from = i ? 1ULL << i : 0;
		uint64_t to = i < WP_HIST_BUCKETS - 1 ? 1ULL << (i + 1) : UINT64_MAX;
		int bar = max ? (int)((h->count[i] * BAR_WIDTH + max - 1) / max) : 0;
		char range[48];

		snprintf(range, sizeof(range), "%s -> %s", wp_human_ns(from, a, sizeof(a)),
			 wp_human_ns(to, b, sizeof(b)));
		fprintf(out, "%21s : %8" PRIu64 " %5.1f%%  |%-*.*s|\n", range, h->count[i],
			total ? 100.0 * (double)h->total_ns[i] / (double)total : 0.0, BAR_WIDTH,
			bar, "****************************************");
	}
}

static void print_set(const struct wp_view *v, const struct wp_hist *h, uint64_t anchored_on_ns,
		      FILE *out)
{
	if (wp_view_part(v, WP_PART_ON))
		print_hist("on-CPU slices (switch-in to switch-out)", &h[WP_HIST_ON_SLICES],
			   anchored_on_ns, out);
	if (wp_view_part(v, WP_PART_BLOCKED) || wp_view_part(v, WP_PART_PREEMPTED) ||
	    wp_view_part(v, WP_PART_RUNNABLE))
		print_hist("off-CPU intervals (switch-out to switch-in)", &h[WP_HIST_OFF_INTERVALS],
			   0, out);
	/* runqlat's question, in two halves: after a wake-up, and after a preemption. */
	if (wp_account_has_wakeups(v->an->account) && wp_view_part(v, WP_PART_RUNNABLE))
		print_hist("wake-up latency (woken, waiting for a CPU)", &h[WP_HIST_WAKEUP_WAITS],
			   0, out);
	if (wp_view_part(v, WP_PART_PREEMPTED))
		print_hist("preemption waits (preempted, waiting for a CPU)",
			   &h[WP_HIST_PREEMPT_WAITS], 0, out);
}

int wp_format_hist(struct wp_view *v, FILE *out)
{
	const struct wp_thread_times *th;
	struct wp_hist h[WP_HIST_KINDS];
	size_t n, shown = 0;

	struct wp_anchor_summary as;
	uint64_t on = 0;

	wp_account_anchor_summary(v->an->account, &as);
	th = wp_account_threads(v->an->account, &n);
	memset(h, 0, sizeof(h));
	for (size_t i = 0; i < n; i++) {
		if (!wp_view_thread(v, i))
			continue;
		shown++;
		if (v->o.per_thread) {
			memset(h, 0, sizeof(h));
			on = 0;
		}
		/* Anchored or estimated: the slices then are not the report's on-CPU time. */
		if (as.anchored || as.estimated)
			on += th[i].on_cpu_ns;
		for (int k = 0; k < WP_HIST_KINDS; k++)
			wp_thread_hist_add(&th[i], (enum wp_hist_kind)k, &h[k]);
		if (v->o.per_thread) {
			char comm[WP_QUOTE_SIZE(sizeof(th->comm))];

			/* Programs name their threads: escapes and all. */
			fprintf(out, "%s# thread %" PRIu32 " (%s) of process %" PRIu32 "\n",
				shown > 1 ? "\n" : "", th[i].tid,
				wp_quote(comm, sizeof(comm), th[i].comm, WP_QUOTE_TEXT), th[i].pid);
			print_set(v, h, on, out);
		}
	}
	if (!v->o.per_thread) {
		fprintf(out, "# %zu threads\n", shown);
		print_set(v, h, on, out);
	}
	return 0;
}
