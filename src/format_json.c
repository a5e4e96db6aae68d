/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_json.c: the report as one JSON document (schema in
 * wallprof-report(1)); times are integers in nanoseconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "waits.h"
#include "layout.h"
#include "quote.h"
#include "symbols.h"

/* A JSON string: names and paths are raw bytes, the output is strict UTF-8. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	wp_quote_puts(out, s, WP_QUOTE_JSON);
	fputc('"', out);
}

static const char *event_role(uint32_t role)
{
	switch (role) {
	case WP_EVENT_SWITCH_OUT:
		return "switch-out";
	case WP_EVENT_WAKEUP:
		return "wake-up";
	case WP_EVENT_WAKEUP_NEW:
		return "wake-up-new";
	case WP_EVENT_ENQUEUED:
		return "enqueued";
	case WP_EVENT_SCHED_SWITCH:
		return "switch-times";
	case WP_EVENT_SIDEBAND:
		return "records";
	default:
		return "on-cpu";
	}
}

static void print_header(const struct wp_analysis *an, FILE *out)
{
	const struct wp_meta *m = an->meta;
	const struct wp_summary *s = &an->summary;

	fprintf(out, "  \"header\": {\n    \"command\": [");
	for (uint32_t i = 0; i < m->argc; i++) {
		fprintf(out, "%s", i ? ", " : "");
		json_str(out, m->argv[i]);
	}
	fprintf(out, "],\n    \"hostname\": ");
	json_str(out, m->hostname);
	fprintf(out, ",\n    \"os_release\": ");
	json_str(out, m->os_release);
	fprintf(out, ",\n    \"nr_cpus\": %u,\n    \"start_realtime_ns\": %" PRIu64
		",\n    \"start_ns\": %" PRIu64 ",\n    \"end_ns\": %" PRIu64
		",\n    \"duration_ns\": %" PRIu64 ",\n    \"events\": [",
		m->nr_cpus, m->start_realtime_ns, an->start_ns, an->end_ns,
		an->end_ns - an->start_ns);
	for (uint32_t e = 0; e < m->nr_events; e++) {
		fprintf(out, "%s{\"name\": ", e ? ", " : "");
		json_str(out, m->events[e].name);
		fprintf(out, ", \"role\": \"%s\"}", event_role(m->events[e].role));
	}
	fprintf(out, "],\n    \"sample_period_ns\": %" PRIu64 ",\n    \"off_cpu_stacks\": %s"
		",\n    \"wakeups\": %s"
		",\n    \"complete\": %s,\n    \"damaged\": %s,\n    \"impossible_times\": %" PRIu64
		",\n    \"lost_records\": %" PRIu64
		",\n    \"lost_samples\": %" PRIu64 ",\n    \"window_start_ns\": %" PRIu64
		",\n    \"window_end_ns\": %" PRIu64 ",\n    \"cut_short\": ",
		m->sample_period_ns, m->flags & WP_META_OFFCPU_STACKS ? "true" : "false",
		wp_account_has_wakeups(an->account) ? "true" : "false", an->complete ? "true" : "false", an->damaged ? "true" : "false",
		an->impossible_times,
		s->lost_records + s->lost_unreported, s->lost_samples, an->window_start,
		an->window_end);
	/* Cut short by a write error: when, and the system's words for why. */
	if (s->cut_short_errno) {
		fprintf(out, "{\"at_ns\": %" PRIu64 ", \"error\": ", s->end_clock_ns);
		json_str(out, strerror((int)s->cut_short_errno));
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs("\n  },\n", out);
}

static const char *cmdline_source(uint16_t source)
{
	return source == WP_CMDLINE_LAUNCH ? "launch" : source == WP_CMDLINE_ATTACH ? "attach" :
	       source == WP_CMDLINE_EXEC ? "exec" : "unknown";
}

/* A main thread's names (process identity), with the command line read under each. */
static void print_names(const struct wp_thread_times *t, FILE *out)
{
	fprintf(out, ", \"names\": [");
	for (uint32_t i = 0; i < t->nr_names; i++) {
		const struct wp_process_name *n = &t->names[i];
		const struct wp_process_cmdline *c = n->cmdline;

		fprintf(out, "%s{\"comm\": ", i ? ", " : "");
		json_str(out, n->comm);
		fprintf(out, ", \"start_ns\": %" PRIu64 ", \"wall_ns\": %" PRIu64
			", \"on_cpu_ns\": %" PRIu64 ", \"inherited\": %s, \"cmdline\": ",
			n->start_ns, n->wall_ns, n->on_cpu_ns, n->inherited ? "true" : "false");
		if (!c) {
			fputs("null}", out);
			continue;
		}
		fprintf(out, "{\"args\": [");
		for (const char *a = c->args; a < c->args + c->len; a += strlen(a) + 1) {
			fprintf(out, "%s", a > c->args ? ", " : "");
			json_str(out, a);
		}
		fprintf(out, "], \"read_ns\": %" PRIu64 ", \"source\": \"%s\", \"truncated\": %s}}",
			c->time, cmdline_source(c->source), c->truncated ? "true" : "false");
	}
	fputc(']', out);
}

/* A system-wide recording's CPUs: the threads' on-CPU time and the idle task's. */
static void print_cpus(const struct wp_view *v, FILE *out)
{
	const struct wp_cpu_time *c;
	struct wp_cpu_time sum;
	uint64_t span;
	size_t n;

	c = wp_analysis_cpus(v->an, &n, &sum, &span);
	fprintf(out, "  \"cpus\": ");
	if (!c) {
		fputs("null,\n", out);
		return;
	}
	fprintf(out, "{\"nr_cpus\": %zu, \"capacity_ns\": %" PRIu64 ", \"on_cpu_ns\": %" PRIu64
		", \"idle_ns\": %" PRIu64 ", \"unseen_ns\": %" PRIu64 ", \"per_cpu\": [", n,
		span * n, sum.busy_ns, sum.idle_ns, sum.unseen_ns);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s{\"cpu\": %zu, \"on_cpu_ns\": %" PRIu64 ", \"idle_ns\": %" PRIu64
			", \"unseen_ns\": %" PRIu64 "}", i ? ", " : "", i, c[i].busy_ns, c[i].idle_ns,
			c[i].unseen_ns);
	fputs("]},\n", out);
}

static void print_threads(const struct wp_view *v, FILE *out)
{
	const struct wp_thread_times *th;
	size_t n;
	bool first = true;

	th = wp_account_threads(v->an->account, &n);
	fprintf(out, "  \"threads\": [");
	for (size_t i = 0; i < n; i++) {
		const struct wp_thread_times *t = &th[i];

		if (!wp_view_thread(v, i))
			continue;
		fprintf(out, "%s\n    {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": ",
			first ? "" : ",", t->pid, t->tid);
		json_str(out, t->comm);
		fprintf(out, ", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
			", \"wall_ns\": %" PRIu64 ", \"on_cpu_ns\": %" PRIu64
			", \"off_cpu_ns\": %" PRIu64 ", \"blocked_ns\": %" PRIu64
			", \"runnable_ns\": %" PRIu64 ", \"preempted_ns\": %" PRIu64
			", \"wakeups\": %" PRIu64 ", \"wakeups_unrecorded\": %" PRIu64
			", \"voluntary_switches\": %" PRIu64
			", \"involuntary_switches\": %" PRIu64 ", \"samples\": %" PRIu64
			", \"switch_samples\": %" PRIu64 ", \"switch_outs_unsampled\": %" PRIu64
			", \"exited\": %s, \"approximate\": %s, \"on_cpu_source\": \"%s\""
			", \"on_cpu_moved_ns\": %" PRId64 ", \"on_cpu_bound_ns\": %" PRIu64,
			t->start_ns, t->end_ns, t->wall_ns, t->on_cpu_ns,
			t->blocked_ns + t->runnable_ns + t->preempted_ns, t->blocked_ns,
			t->runnable_ns, t->preempted_ns, t->wakeups, t->wakeups_unrecorded,
			t->voluntary_switches, t->involuntary_switches, t->samples,
			t->switch_samples, t->switch_outs_unsampled, t->exited ? "true" : "false",
			t->approximate ? "true" : "false",
			t->on_cpu_source == WP_ON_CPU_KERNEL ? "kernel" :
			t->on_cpu_source == WP_ON_CPU_ESTIMATED ? "estimated" : "records",
			t->on_cpu_moved_ns, t->on_cpu_bound_ns);
		if (t->kernel_on_cpu_ns)
			fprintf(out, ", \"kernel_on_cpu_ns\": %" PRIu64, t->kernel_on_cpu_ns);
		if (t->wait_moved_ns[0] || t->wait_moved_ns[1] || t->wait_moved_ns[2])
			fprintf(out, ", \"wait_moved_ns\": {\"blocked\": %" PRId64 ", \"runnable\": %"
				PRId64 ", \"preempted\": %" PRId64 "}", t->wait_moved_ns[0],
				t->wait_moved_ns[1], t->wait_moved_ns[2]);
		print_names(t, out);
		fputc('}', out);
		first = false;
	}
	fprintf(out, "\n  ],\n");
}

struct json_stack {
	size_t weight;
	enum wp_part part;
	uint64_t ns;
};

static int stack_cmp(const void *x, const void *y)
{
	const struct json_stack *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->weight < b->weight ? -1 : a->weight > b->weight;
}

/* A stack's frames as a JSON array, innermost first. */
static void print_frames(const struct wp_analysis *an, uint32_t stack, FILE *out)
{
	const uint32_t *frames;
	unsigned int nf;

	frames = wp_stacks_get(an->stacks, stack, &nf);
	fputc('[', out);
	for (unsigned int f = 0; f < nf; f++) {
		fprintf(out, "%s{\"name\": ", f ? ", " : "");
		json_str(out, wp_analysis_frame_name(an, frames[f]));
		if (frames[f] & WP_FRAME_KERNEL)
			fprintf(out, ", \"kernel\": true");
		if (frames[f] & WP_FRAME_INLINED)
			fprintf(out, ", \"inlined\": true");
		fputc('}', out);
	}
	fputc(']', out);
}

static int wake_cmp(const void *x, const void *y)
{
	const struct wp_wake_weight *a = *(const struct wp_wake_weight *const *)x;
	const struct wp_wake_weight *b = *(const struct wp_wake_weight *const *)y;

	if (a->blocked_ns != b->blocked_ns)
		return a->blocked_ns > b->blocked_ns ? -1 : 1;
	return a->waker < b->waker ? -1 : a->waker > b->waker;
}

/* The wakers of a blocked stack entry: who ended how much of its time. */
static int print_wakers(const struct wp_view *v, const struct wp_stack_weight *sw, FILE *out)
{
	static const char *const kinds[] = { "thread", "interrupt", "timer", "idle" };
	const struct wp_wake_weight *k, **sel;
	const struct wp_waker *wk;
	size_t nk, nwk, n = 0;
	char buf[32];

	k = wp_account_wake_weights(v->an->account, &nk);
	wk = wp_account_wakers(v->an->account, &nwk);
	for (uint32_t i = sw->wakes; i && i <= nk; i = k[i - 1].next)
		n++;
	sel = calloc(n + 1, sizeof(*sel));
	if (!sel)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = sw->wakes; i && i <= nk; i = k[i - 1].next)
		if (wp_view_waker(v, k[i - 1].waker))
			sel[n++] = &k[i - 1];
	qsort(sel, n, sizeof(*sel), wake_cmp);
	fprintf(out, ", \"wakers\": [");
	for (size_t i = 0; i < n; i++) {
		const struct wp_waker *a = &wk[sel[i]->waker];

		fprintf(out, "%s{\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": ",
			i ? ", " : "", a->pid, a->tid);
		json_str(out, wp_waker_name(v->an, a, buf, sizeof(buf)));
		fprintf(out, ", \"kind\": \"%s\", \"context\": \"%s\"", kinds[a->kind],
			wp_wake_context_name(a->context));
		if (wp_softirq_name(a->softirq))
			fprintf(out, ", \"softirq\": \"%s\"", wp_softirq_name(a->softirq));
		fprintf(out, ", \"ns\": %" PRIu64 ", \"count\": %" PRIu64 ", \"frames\": ",
			sel[i]->blocked_ns, sel[i]->count);
		print_frames(v->an, a->stack, out);
		fputc('}', out);
	}
	fputc(']', out);
	free(sel);
	return 0;
}

static int print_stacks(struct wp_view *v, FILE *out)
{
	static const char *const kinds[] = { "on-cpu", "blocked", "preempted", "runnable" };
	const struct wp_analysis *an = v->an;
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	struct json_stack *js;
	size_t nth, nw, n = 0;
	int err = 0;

	th = wp_account_threads(an->account, &nth);
	w = wp_account_stacks(an->account, &nw);
	js = calloc(nw * WP_NR_PARTS + 1, sizeof(*js));
	if (!js)
		return -ENOMEM;
	for (size_t i = 0; i < nw; i++) {
		if (!wp_view_thread(v, w[i].thread) || !wp_view_stack(v, w[i].stack))
			continue;
		for (int p = 0; p < WP_NR_PARTS; p++) {
			uint64_t ns = wp_view_part_ns(v, &w[i], (enum wp_part)p);

			if (ns) {
				js[n].weight = i;
				js[n].part = (enum wp_part)p;
				js[n++].ns = ns;
			}
		}
	}
	qsort(js, n, sizeof(*js), stack_cmp);
	fprintf(out, "  \"mode\": \"%s\",\n  \"stacks\": [", wp_mode_name(v->o.mode));
	for (size_t i = 0; i < n && i < v->o.top; i++) {
		const struct wp_stack_weight *sw = &w[js[i].weight];

		fprintf(out, "%s\n    {\"pid\": %" PRIu32 ", \"tid\": %" PRIu32 ", \"comm\": ",
			i ? "," : "", th[sw->thread].pid, th[sw->thread].tid);
		json_str(out, th[sw->thread].comm);
		fprintf(out, ", \"kind\": \"%s\", \"ns\": %" PRIu64 ", \"samples\": %" PRIu64
			", \"estimated_ns\": %" PRIu64 ", \"estimate_error_ns\": %" PRIu64
			", \"frames\": ", kinds[js[i].part], js[i].ns,
			wp_view_part_count(sw, js[i].part), wp_view_part_estimated_ns(sw, js[i].part),
			wp_view_part_estimate_error_ns(sw, js[i].part));
		print_frames(an, sw->stack, out);
		if (js[i].part == WP_PART_BLOCKED && wp_account_has_wakeups(an->account)) {
			err = print_wakers(v, sw, out);
			if (err)
				break;
		}
		fputc('}', out);
	}
	fprintf(out, "\n  ],\n");
	free(js);
	return err;
}

int wp_format_json(struct wp_view *v, FILE *out)
{
	const struct wp_quality *q = &v->an->quality;
	uint64_t unsampled_ns, unsampled_threads, untimed_ins, switch_ins;
	struct wp_switch_estimate se;
	struct wp_wakeup_estimate we;
	struct wp_anchor_summary as;
	int err;

	wp_account_unsampled(v->an->account, &unsampled_ns, &unsampled_threads);
	wp_account_untimed_switch_ins(v->an->account, &untimed_ins, &switch_ins);
	wp_account_switch_estimate(v->an->account, &se);
	wp_account_wakeup_estimate(v->an->account, &we);
	wp_account_anchor_summary(v->an->account, &as);
	fprintf(out, "{\n  \"wallprof_version\": \"%s\",\n  \"schema_version\": 1,\n",
		PACKAGE_VERSION);
	print_header(v->an, out);
	print_threads(v, out);
	print_cpus(v, out);
	err = print_stacks(v, out);
	if (err)
		return err;
	fprintf(out, "  \"quality\": {\"records\": %" PRIu64 ", \"unwound_samples\": %" PRIu64
		", \"truncated_stacks\": %" PRIu64 ", \"truncated_needed_bytes\": %" PRIu64
		", \"unreadable_stacks\": %" PRIu64 ", \"unwind_failed\": %" PRIu64 ", \"frames\": %" PRIu64
		", \"unnamed_frames\": %" PRIu64 ", \"out_of_order\": %" PRIu64
		", \"unwind_cache_hits\": %" PRIu64 ", \"live_raw_samples\": %" PRIu64
		", \"unknown_event_samples\": %" PRIu64
		", \"unsampled_on_cpu_ns\": %" PRIu64
		", \"unsampled_threads\": %" PRIu64 ", \"switch_ins\": %" PRIu64
		", \"switch_ins_untimed\": %" PRIu64 ", \"switch_stacks\": {\"rate\": %" PRIu64
		", \"rate_per\": \"%s\", \"switch_outs\": %" PRIu64 ", \"unsampled\": %" PRIu64
		", \"estimated_ns\": %" PRIu64 ", \"unattributed_ns\": %" PRIu64
		", \"threads\": %" PRIu64 ", \"max_error_ns\": %" PRIu64
		"}, \"wakeups_gated\": {\"gated\": %s"
		", \"waits_unrecorded\": %" PRIu64 ", \"waits_unrecorded_ns\": %" PRIu64
		", \"waits_dropped\": %" PRIu64 ", \"runnable_estimated_ns\": %" PRIu64 ", \"waits_recorded\": %" PRIu64
		", \"unwoken_shared_ns\": %" PRIu64 "}, \"on_cpu_anchors\": {\"threads\": %" PRIu64
		", \"moved_ns\": %" PRId64 ", \"worst_share\": %.4f, \"estimated_threads\": %" PRIu64
		", \"estimated_moved_ns\": %" PRIu64 ", \"late_switch_ins\": %" PRIu64
		", \"cpus_moved_ns\": %" PRId64 ", \"cpus_trimmed_ns\": %" PRIu64
		", \"exit_tails\": %" PRIu64 ", \"exit_tails_ns\": %" PRIu64
		", \"window_partial\": %" PRIu64 ", \"window_partial_max_ns\": %" PRIu64 "}, "
		"\"unnamed_files\": [",
		v->an->records, q->samples, q->truncated, q->truncated_needed, q->unreadable,
		q->unwind_failed,
		q->frames, q->unnamed, v->an->out_of_order, q->cache_hits,
		v->an->summary.raw_samples, q->unknown_samples + v->an->summary.unknown_samples,
		unsampled_ns,
		unsampled_threads, switch_ins, untimed_ins, wp_meta_switch_stack_rate(v->an->meta),
		v->an->meta->switch_stack_budget ? "cpu" : "thread and cpu", se.switch_outs,
		se.unsampled, se.estimated_ns, se.unattributed_ns, se.threads, se.max_error_ns,
		we.gated ? "true" : "false", we.waits, we.waits_ns, we.dropped, we.runnable_ns, we.seen,
		we.unwoken_ns, as.anchored, as.anchored_moved_ns, as.worst_share, as.estimated,
		as.estimated_moved_abs_ns, as.late_starts, as.cpus_moved_ns, as.cpus_trimmed_ns,
		as.exit_tails, as.exit_tails_ns, as.window_partial, as.window_partial_max_ns);
	for (unsigned int i = 0; i < q->nr_unnamed_files; i++) {
		static const char *const reasons[] = {
			[WP_UNNAMED_NO_SYMBOLS] = "no-symbols",
			[WP_UNNAMED_MISSING] = "missing",
			[WP_UNNAMED_NO_FILE] = "no-file",
			[WP_UNNAMED_KERNEL] = "kernel",
			[WP_UNNAMED_NO_FDS] = "no-descriptors",
		};
		const struct wp_unnamed_file *f = &q->unnamed_files[i];

		fprintf(out, "%s{\"file\": \"", i ? ", " : "");
		wp_quote_puts(out, f->path, WP_QUOTE_JSON);
		fprintf(out, "\", \"frames\": %" PRIu64 ", \"reason\": \"%s\", \"package\": ",
			f->frames, reasons[f->reason]);
		if (f->package[0]) {
			fputc('"', out);
			wp_quote_puts(out, f->package, WP_QUOTE_JSON);
			fputc('"', out);
		} else {
			fputs("null", out);
		}
		fprintf(out, ", \"stack_ns\": %" PRIu64 ", \"debug_file\": ", f->stack_ns);
		if (f->debug_file[0]) {
			fputc('"', out);
			wp_quote_puts(out, f->debug_file, WP_QUOTE_JSON);
			fputc('"', out);
		} else {
			fputs("null", out);
		}
		fputc('}', out);
	}
	fputs("]}", out);
	/* --critical-path: the path, beside the rest. */
	if (v->critpath) {
		fputs(",\n  ", out);
		wp_format_critpath_json(v, out);
	}
	fputs("\n}\n", out);
	return 0;
}
