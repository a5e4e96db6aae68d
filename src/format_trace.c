/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_trace.c: a timeline in the Chrome trace-event JSON format, which
 * Perfetto UI and chrome://tracing open: a track per thread, grouped by
 * process; a complete ("X") event for every period of on-CPU, blocked,
 * runnable and preempted time, and an instant ("i") event for every
 * on-CPU sample.  Fields in wallprof-report(1).
 *
 * The periods are the timeline's (timeline.h), as the ledger counted them,
 * kept by the analysis for this format (wp_analysis.kept): one pass over
 * the recording.  A thread's periods are its segments as recorded: where
 * its totals were anchored to the kernel's own figures, they differ by
 * what that moved (the JSON report's on_cpu_moved_ns and wait_moved_ns).
 * Times are microseconds from the recording's start with three decimals,
 * so no nanosecond is lost.
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
#include "symbols.h"

#define NO_STACK UINT32_MAX

/* A thread's latest on-CPU sample: its stack names the on-CPU period it is in. */
struct last_sample {
	uint64_t time;
	uint32_t stack;
};

struct trace {
	const struct wp_view *v;	/* threads shown, names */
	const struct wp_analysis *an;	/* its stacks */
	FILE *out;
	uint64_t origin;		/* the recording's start, time 0 */
	bool *shown;			/* by thread serial */
	struct last_sample *last;	/* by thread serial */
	const struct wp_thread_times **by_serial;
	const struct wp_waker *wakers;
	size_t nr_wakers;
	size_t nr_threads;
	bool skip_short;		/* --min-block: no shorter off-CPU periods */
	bool first;			/* no event written yet */
};

static const char *const kind_names[] = {
	[WP_PERIOD_ON] = "on-cpu",
	[WP_PERIOD_BLOCKED] = "blocked",
	[WP_PERIOD_RUNNABLE] = "runnable",
	[WP_PERIOD_PREEMPTED] = "preempted",
};

static const enum wp_part kind_parts[] = {
	[WP_PERIOD_ON] = WP_PART_ON,
	[WP_PERIOD_BLOCKED] = WP_PART_BLOCKED,
	[WP_PERIOD_RUNNABLE] = WP_PART_RUNNABLE,
	[WP_PERIOD_PREEMPTED] = WP_PART_PREEMPTED,
};

static void put_str(FILE *out, const char *s)
{
	fputc('"', out);
	wp_quote_puts(out, s, WP_QUOTE_JSON);
	fputc('"', out);
}

/* Nanoseconds as microseconds with all their digits. */
static void put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/* A time on the trace's clock, which starts with the recording. */
static void put_ts(const struct trace *t, uint64_t ns)
{
	put_us(t->out, ns > t->origin ? ns - t->origin : 0);
}

/*
 * The scheduler's own frames, on top of every off-CPU kernel stack: they
 * say that the thread left the CPU, not why.
 */
static bool sched_frame(const struct wp_analysis *an, uint32_t tok)
{
	static const char *const prefixes[] = {
		"schedule", "preempt_schedule", "io_schedule", "cond_resched",
	};
	const char *name = wp_analysis_frame_name(an, tok);

	if (!(tok & WP_FRAME_KERNEL))
		return false;
	name += strspn(name, "_");
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * "KIND: leaf <- caller": the leaf is the innermost frame below the
 * scheduler's; the caller, for a kernel leaf, is the innermost user frame
 * (where the program was), else the leaf's caller.
 */
static void put_name(const struct trace *t, const char *kind, uint32_t stack)
{
	const uint32_t *frames = NULL;
	unsigned int n = 0, leaf = 0, caller;

	if (stack != NO_STACK)
		frames = wp_stacks_get(t->an->stacks, stack, &n);
	while (leaf + 1 < n && sched_frame(t->an, frames[leaf]))
		leaf++;
	caller = leaf + 1;
	if (n && frames[leaf] & WP_FRAME_KERNEL) {
		while (caller < n && frames[caller] & WP_FRAME_KERNEL)
			caller++;
		if (caller == n)
			caller = leaf + 1;
	}
	fprintf(t->out, "\"name\":\"%s", kind);
	if (n) {
		fputs(": ", t->out);
		wp_quote_puts(t->out, wp_analysis_frame_name(t->an, frames[leaf]), WP_QUOTE_JSON);
	}
	if (caller < n) {
		fputs(" <- ", t->out);
		wp_quote_puts(t->out, wp_analysis_frame_name(t->an, frames[caller]), WP_QUOTE_JSON);
	}
	fputc('"', t->out);
}

/* "key":[frames, innermost first], kernel ones marked as the text report marks them. */
static void put_stack(const struct trace *t, const char *key, uint32_t stack)
{
	const uint32_t *frames;
	unsigned int n;

	frames = wp_stacks_get(t->an->stacks, stack, &n);
	fprintf(t->out, "\"%s\":[", key);
	for (unsigned int f = 0; f < n; f++) {
		fputs(f ? ",\"" : "\"", t->out);
		wp_quote_puts(t->out, wp_analysis_frame_name(t->an, frames[f]), WP_QUOTE_JSON);
		fprintf(t->out, "%s\"", frames[f] & WP_FRAME_KERNEL ? " [k]" :
			frames[f] & WP_FRAME_INLINED ? " (inlined)" : "");
	}
	fputc(']', t->out);
}

/* The start of an event on the track of thread tid, up to its name. */
static void event_start(struct trace *t, const char *ph, const char *cat, uint32_t pid,
			uint32_t tid)
{
	fprintf(t->out, "%s{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
		t->first ? "\n" : ",\n", ph, cat, pid, tid);
	t->first = false;
}

static bool thread_shown(const struct trace *t, uint32_t serial)
{
	return serial < t->nr_threads && t->shown[serial];
}

static void put_sample(struct trace *t, const struct wp_kept_event *e)
{
	const struct wp_thread_times *th = t->by_serial[e->serial];

	t->last[e->serial].time = e->start_ns;
	t->last[e->serial].stack = e->stack;
	if (!wp_view_part(t->v, WP_PART_ON))
		return;
	event_start(t, "i", "sample", th->pid, th->tid);
	put_name(t, "sample", e->stack);
	fputs(",\"s\":\"t\",\"ts\":", t->out);
	put_ts(t, e->start_ns);
	fputs(",\"args\":{", t->out);
	put_stack(t, "stack", e->stack);
	fputs("}}", t->out);
}

static void put_waker(const struct trace *t, const struct wp_waker *w)
{
	static const char *const kinds[] = { "thread", "interrupt", "timer", "idle" };
	char buf[32];

	fputs("\"waker\":{\"name\":", t->out);
	put_str(t->out, wp_waker_name(t->v->an, w, buf, sizeof(buf)));
	fprintf(t->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"kind\":\"%s\"},", w->pid,
		w->tid, w->kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[w->kind] : "thread");
	put_stack(t, "waker_stack", w->stack);
}

/* Whether --waker-comm lets a period through (only blocked ones get this far). */
static bool waker_shown(const struct trace *t, const struct wp_waker *w)
{
	char buf[32];

	if (!t->v->have_waker_re)
		return true;
	return w && !regexec(&t->v->waker_re, wp_waker_name(t->v->an, w, buf, sizeof(buf)), 0,
				 NULL, 0);
}

static void put_period(struct trace *t, const struct wp_kept_event *e)
{
	const struct wp_thread_times *th = t->by_serial[e->serial];
	const struct wp_waker *waker = e->waker < t->nr_wakers ? &t->wakers[e->waker] : NULL;
	const struct last_sample *last;
	uint32_t stack = e->stack;
	const char *sep = "";

	if (!wp_view_part(t->v, kind_parts[e->kind]) ||
	    (t->skip_short && (e->flags & WP_KEPT_SHORT_OFF)) ||
	    (e->kind == WP_PERIOD_BLOCKED && !waker_shown(t, waker)))
		return;
	/* On-CPU: named after its latest sample, if it had one. */
	last = &t->last[e->serial];
	if (e->kind == WP_PERIOD_ON)
		stack = last->time >= e->start_ns && last->time <= e->end_ns ? last->stack : NO_STACK;
	event_start(t, "X", kind_names[e->kind], th->pid, th->tid);
	put_name(t, kind_names[e->kind], stack);
	fputs(",\"ts\":", t->out);
	put_ts(t, e->start_ns);
	fputs(",\"dur\":", t->out);
	put_us(t->out, e->end_ns - e->start_ns);
	fputs(",\"args\":{", t->out);
	if (stack != NO_STACK) {
		put_stack(t, "stack", stack);
		sep = ",";
	}
	if (e->kind == WP_PERIOD_ON && e->cpu != UINT32_MAX) {
		fprintf(t->out, "%s\"cpu\":%" PRIu32, sep, e->cpu);
		sep = ",";
	}
	if (waker) {
		fputs(sep, t->out);
		put_waker(t, waker);
		sep = ",";
	}
	if (e->flags & WP_KEPT_WAKEUP_UNRECORDED)
		fprintf(t->out, "%s\"wakeup_recorded\":false", sep);
	fputs("}}", t->out);
}

/* The recording, for the trace's readers: what ran where, and the window shown. */
static void put_header(struct trace *t)
{
	const struct wp_analysis *an = t->v->an;
	const struct wp_meta *m = an->meta;

	fprintf(t->out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"wallprof_version\":\"%s\","
		"\"command\":[", PACKAGE_VERSION);
	for (uint32_t i = 0; i < m->argc; i++) {
		if (i)
			fputc(',', t->out);
		put_str(t->out, m->argv[i]);
	}
	fputs("],\"hostname\":", t->out);
	put_str(t->out, m->hostname);
	fprintf(t->out, ",\"start_realtime_ns\":%" PRIu64 ",\"window_start_us\":", m->start_realtime_ns);
	put_ts(t, an->window_start);
	fputs(",\"window_end_us\":", t->out);
	put_ts(t, an->window_end);
	fputs(",\"mode\":", t->out);
	put_str(t->out, wp_mode_name(t->v->o.mode));
	fputs("},\"traceEvents\":[", t->out);
}

static void put_meta(struct trace *t, const char *what, uint32_t pid, uint32_t tid,
		     const char *name)
{
	event_start(t, "M", "__metadata", pid, tid);
	fprintf(t->out, "\"name\":\"%s\",\"args\":{\"name\":", what);
	put_str(t->out, name);
	fputs("}}", t->out);
}

/*
 * A process whose main thread exec'd: its name is every name it had
 * ("sh -> make -> cc1"), and its label its last command line read.
 */
static void put_identity(struct trace *t, const struct wp_thread_times *main)
{
	const struct wp_process_cmdline *cmdline = NULL;
	struct wp_buf b = { 0 };
	unsigned int own = 0;
	int err = 0;

	for (uint32_t i = 0; i < main->nr_names; i++) {
		const struct wp_process_name *n = &main->names[i];

		if (n->cmdline)
			cmdline = n->cmdline;
		if (n->inherited)
			continue;
		if (own++)
			err |= wp_buf_append(&b, " -> ", 4);
		err |= wp_buf_append(&b, n->comm, strlen(n->comm));
	}
	if (own > 1 && !err && !wp_buf_append(&b, "", 1))
		put_meta(t, "process_name", main->pid, main->pid, (const char *)b.data);
	else
		put_meta(t, "process_name", main->pid, main->pid, main->comm);
	if (cmdline) {
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);

		/* As shell words: an argument's spaces stay inside it. */
		for (const char *a = cmdline->args; mem && a < cmdline->args + cmdline->len;
		     a += strlen(a) + 1) {
			if (a > cmdline->args)
				fputc(' ', mem);
			wp_quote_shell_word(mem, a);
		}
		if (mem && !fclose(mem) && text) {
			event_start(t, "M", "__metadata", main->pid, main->pid);
			fputs("\"name\":\"process_labels\",\"args\":{\"labels\":", t->out);
			put_str(t->out, text);
			fputs("}}", t->out);
		}
		free(text);
	}
	wp_buf_release(&b);
}

/*
 * The names of the shown threads and of their processes (the name of the
 * thread whose tid is the pid, else of the first one shown), as they
 * were at the end.  Threads are sorted by pid, then tid.
 */
static void put_names(struct trace *t, const struct wp_thread_times *th, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		const char *pname = NULL;

		for (j = i; j < n && th[j].pid == th[i].pid; j++) {
			if (!thread_shown(t, th[j].serial))
				continue;
			if (!pname)
				pname = th[j].comm;
			put_meta(t, "thread_name", th[j].pid, th[j].tid, th[j].comm);
		}
		const struct wp_thread_times *main = NULL;

		if (!pname)
			continue;
		for (size_t k = i; k < j; k++)
			if (th[k].tid == th[k].pid) {
				pname = th[k].comm;
				main = th[k].nr_names ? &th[k] : NULL;
			}
		if (main)
			put_identity(t, main);
		else
			put_meta(t, "process_name", th[i].pid, th[i].pid, pname);
	}
}

/*
 * --critical-path: a track of its own, in a process of its own (a pid no
 * thread has: perf's pids stop at 2^22), one event per segment of the
 * path, named after what held it.
 */
#define CRITPATH_PID 2147483646U

static void put_critpath(struct trace *t)
{
	const struct wp_critpath *cp = t->v->critpath;
	const struct wp_waits *w = t->v->waits;
	const struct wp_waits_thread *th = wp_waits_thread(w, cp->serial);
	char holder[96], title[160];

	snprintf(title, sizeof(title), "critical path of %s (%" PRIu32 ")", th->t->comm,
		 th->t->tid);
	put_meta(t, "process_name", CRITPATH_PID, CRITPATH_PID, title);
	put_meta(t, "thread_name", CRITPATH_PID, CRITPATH_PID, title);
	for (size_t i = 0; i < cp->nr_segs; i++) {
		const struct wp_cp_segment *s = &cp->segs[i];
		const char *kind = s->kind == WP_CP_DEVICE ? wp_cause_name((enum wp_cause)s->cause) :
				   wp_cp_kind_name((enum wp_cp_kind)s->kind);

		wp_cp_holder(w, s, holder, sizeof(holder));
		event_start(t, "X", "critical-path", CRITPATH_PID, CRITPATH_PID);
		fputs("\"name\":", t->out);
		snprintf(title, sizeof(title), "%s %s", holder, kind);
		put_str(t->out, title);
		fputs(",\"ts\":", t->out);
		put_ts(t, s->start_ns);
		fputs(",\"dur\":", t->out);
		put_us(t->out, s->end_ns - s->start_ns);
		fputs(",\"args\":{\"holder\":", t->out);
		put_str(t->out, holder);
		fprintf(t->out, ",\"kind\":\"%s\",\"depth\":%u", kind, s->depth);
		if (s->stack != UINT32_MAX) {
			fputc(',', t->out);
			put_stack(t, "stack", s->stack);
		}
		if (s->waker < t->nr_wakers) {
			fputc(',', t->out);
			put_waker(t, &t->wakers[s->waker]);
		}
		fputs("}}", t->out);
	}
}

int wp_format_trace(struct wp_view *v, FILE *out)
{
	const struct wp_analysis *an = v->an;
	struct trace t = { .v = v, .an = an, .out = out, .origin = an->start_ns, .first = true };
	const struct wp_thread_times *th;
	int err = 0;
	size_t n;

	th = wp_account_threads(an->account, &n);
	t.nr_threads = n;
	t.shown = calloc(n + 1, sizeof(*t.shown));
	t.last = calloc(n + 1, sizeof(*t.last));
	t.by_serial = calloc(n + 1, sizeof(*t.by_serial));
	if (!t.shown || !t.last || !t.by_serial) {
		wp_error("trace: out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (th[i].serial < n) {
			t.shown[th[i].serial] = wp_view_thread(v, i);
			t.by_serial[th[i].serial] = &th[i];
		}
	t.wakers = wp_account_wakers(an->account, &t.nr_wakers);
	t.skip_short = an->opts.min_block_ns > 0;
	put_header(&t);
	put_names(&t, th, n);
	for (size_t i = 0; i < an->nr_kept; i++) {
		const struct wp_kept_event *e = &an->kept[i];

		if (!thread_shown(&t, e->serial) || !t.by_serial[e->serial])
			continue;
		if (e->kind == WP_KEPT_SAMPLE)
			put_sample(&t, e);
		else
			put_period(&t, e);
	}
	if (v->critpath)
		put_critpath(&t);
	fputs("\n]}\n", out);
out:
	free(t.shown);
	free(t.last);
	free(t.by_serial);
	return err;
}
