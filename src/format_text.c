/* SPDX-License-Identifier: GPL-2.0-or-later */
/* format_text.c: the text report, readable in 80 columns (89 with wake-ups). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "quote.h"
#include "symbols.h"
#include "unwind.h"
#include "util.h"
#include "waits.h"

#define DUR(ns, b) wp_human_ns((ns), (b), sizeof(b))

/* ANSI SGR sequences, or nothing without --color. */
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_ON "\033[32m"
#define C_BLOCKED "\033[31m"
#define C_PREEMPTED "\033[33m"
#define C_KERNEL "\033[36m"
#define C_RESET "\033[m"
#define PAINT(v, c) ((v)->o.color ? (c) : "")

/* Wakers shown under each blocked stack; the rest are summed in a line. */
#define WAKERS_PER_STACK 3

static void print_header(const struct wp_analysis *an, FILE *out)
{
	const struct wp_meta *m = an->meta;
	time_t secs = (time_t)(m->start_realtime_ns / NSEC_PER_SEC);
	char when[64] = "?", dur[32];
	const char *per_cpu;
	struct tm tm;

	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	/*
	 * The recording names all of these: quoted, like every name below;
	 * the command line as shell words, to paste back into a shell.
	 */
	fprintf(out, "# command:");
	for (uint32_t i = 0; i < m->argc; i++) {
		fputc(' ', out);
		wp_quote_shell_word(out, m->argv[i]);
	}
	fprintf(out, "\n# started %s, recorded %s on ", when, DUR(an->end_ns - an->start_ns, dur));
	wp_quote_puts(out, m->hostname, WP_QUOTE_TEXT);
	fputs(" (", out);
	wp_quote_puts(out, m->os_release, WP_QUOTE_TEXT);
	fprintf(out, ", %u CPUs)\n", m->nr_cpus);
	fprintf(out, "# events:");
	/* Attached, sampled per CPU: the threads' samples, kept from every task's. */
	per_cpu = m->flags & WP_META_ONCPU_PER_CPU ? " per CPU" : "";
	for (uint32_t e = 0; e < m->nr_events; e++) {
		const struct wp_event_desc *ev = &m->events[e];
		char name[WP_QUOTE_SIZE(sizeof(ev->name))];

		wp_quote(name, sizeof(name), ev->name, WP_QUOTE_TEXT);
		if (wp_event_other_wakers(ev))
			fprintf(out, "%s wake-ups by other threads, kernel frames (%s)",
				e ? "," : "", name);
		else if (ev->role == WP_EVENT_WAKEUP || ev->role == WP_EVENT_WAKEUP_NEW ||
			 ev->role == WP_EVENT_ENQUEUED)
			fprintf(out, "%s wake-ups (%s)", e ? "," : "", name);
		else if (ev->role == WP_EVENT_SWITCH_OUT && m->switch_stack_budget)
			fprintf(out, "%s stacks at switch-out (%s, at most %" PRIu64 "/s per CPU)",
				e ? "," : "", name, m->switch_stack_budget);
		else if (ev->role == WP_EVENT_SWITCH_OUT && ev->attr.freq)
			fprintf(out, "%s stacks at switch-out (%s, at most %" PRIu64 "/s)",
				e ? "," : "", name, (uint64_t)ev->attr.sample_freq);
		else if (ev->role == WP_EVENT_SWITCH_OUT)
			fprintf(out, "%s stacks at switch-out (%s)", e ? "," : "", name);
		else if (ev->role == WP_EVENT_SCHED_SWITCH)
			fprintf(out, "%s switch times (%s, every switch)", e ? "," : "", name);
		else if (ev->role == WP_EVENT_SIDEBAND)
			continue;	/* the switch records', said below */
		else if (ev->attr.freq)
			fprintf(out, "%s %s at %" PRIu64 " Hz%s", e ? "," : "", name,
				(uint64_t)ev->attr.sample_freq, per_cpu);
		else
			fprintf(out, "%s %s every %" PRIu64 " ns%s", e ? "," : "", name,
				(uint64_t)ev->attr.sample_period, per_cpu);
	}
	if (m->flags & WP_META_SWITCHES)
		fprintf(out, ", switch records");
	fputc('\n', out);
	if (!(m->flags & WP_META_SWITCHES))
		fprintf(out, "# recorded with --no-off-cpu: on-CPU time is estimated as samples "
			"times the period; the rest of each thread's time counts as blocked\n");
	if (m->flags & WP_META_OFFCPU_STACKS_DENIED)
		fprintf(out, "# off-CPU stacks were not recorded: they need CAP_PERFMON or "
			"kernel.perf_event_paranoid <= 1\n");
	if (an->summary.cut_short_errno)
		fprintf(out, "# cut short at %s by a write error (%s): the figures end at the "
			"last record written\n",
			DUR(an->summary.end_clock_ns - an->start_ns, dur),
			strerror((int)an->summary.cut_short_errno));
}

/* One row of the thread table; id is its first column. */
static void print_row(const struct wp_thread_times *t, const char *id, FILE *out, bool runnable)
{
	char w[16], on[16], bl[16], ru[16], pr[16];
	double pct = t->wall_ns ? 100.0 * (double)t->on_cpu_ns / (double)t->wall_ns : 0;
	char comm[13];

	/* Programs choose their thread names, control bytes and all; 12 columns. */
	wp_quote(comm, sizeof(comm), t->comm, WP_QUOTE_TEXT);
	fprintf(out, "%-9s %-12s %7s %7s %7s", id, comm, DUR(t->wall_ns, w),
		DUR(t->on_cpu_ns, on), DUR(t->blocked_ns, bl));
	if (runnable)
		fprintf(out, " %8s", DUR(t->runnable_ns, ru));
	fprintf(out, " %7s %3.0f%% %5" PRIu64 " %5" PRIu64 " %6" PRIu64 "%s\n",
		DUR(t->preempted_ns, pr), pct, t->voluntary_switches, t->involuntary_switches,
		t->samples, t->approximate || t->on_cpu_source == WP_ON_CPU_ESTIMATED ? " ~" : "");
}

/*
 * On-CPU time without a sample: each thread's sampling clock starts with
 * the thread, so threads that run less than a period in all (short-lived
 * request threads) have none.  Worth a line when it is a good part.
 */
static void print_unsampled(const struct wp_analysis *an, FILE *out)
{
	const struct wp_thread_times *th;
	uint64_t ns, threads, on = 0;
	char p[16];
	size_t n;

	wp_account_unsampled(an->account, &ns, &threads);
	th = wp_account_threads(an->account, &n);
	for (size_t i = 0; i < n; i++)
		on += th[i].on_cpu_ns;
	if (!on || ns * 20 < on)
		return;
	fprintf(out, "# samples: %.1f%% of on-CPU time has none, in %" PRIu64 " threads that "
		"ran for less than a sampling period", 100.0 * (double)ns / (double)on, threads);
	if (an->meta->sample_period_ns)
		fprintf(out, " (%s)", DUR(an->meta->sample_period_ns, p));
	fprintf(out, " in all; a higher -F samples them\n");
}

/*
 * How on-CPU times were anchored to the kernel's own figures: a switch-in
 * timed by its record (no sched_switch sample) starts late, by the time
 * the kernel took to switch the events in, which a storm adds up.  Worth
 * a line when the records alone were off by 1% or more, or when nothing
 * could anchor late switch-ins.
 */
static void print_anchors(const struct wp_analysis *an, FILE *out)
{
	struct wp_anchor_summary s;
	uint64_t untimed, all;
	char m[16], e[16];

	wp_account_anchor_summary(an->account, &s);
	wp_account_untimed_switch_ins(an->account, &untimed, &all);
	if (s.anchored && (s.worst_share >= 0.01 || s.estimated || (all && untimed * 20 >= all))) {
		char net[16];

		/* Some threads read short and others long: both, and their sum (json: moved_ns). */
		fprintf(out, "# on-CPU: anchored to the kernel's own figures for %" PRIu64
			" threads (schedstat, and taskstats at exit): their switch records alone "
			"were off by %s in all (%s %s net), up to %.1f%% of a thread's", s.anchored,
			DUR(s.anchored_moved_abs_ns, m),
			DUR((uint64_t)(s.anchored_moved_ns >= 0 ? s.anchored_moved_ns :
				       -s.anchored_moved_ns), net),
			s.anchored_moved_ns >= 0 ? "short" : "long", 100.0 * s.worst_share);
		if (s.estimated)
			fprintf(out, "; %" PRIu64 " threads without them (~) moved by the mean lag, "
				"%s in all, within as much", s.estimated,
				DUR(s.estimated_moved_abs_ns, e));
		fputc('\n', out);
	}
	if (s.window_partial && s.clocks_during)
		fprintf(out, "# on-CPU: the --time window's ends lie between the kernel's figures "
			"(read every second from the recording's start, or at each rotated file's "
			"end) for %" PRIu64 " threads (~): their on-CPU is the window's estimated "
			"share, within %s at most; a window whose ends are at figures is anchored "
			"exactly\n", s.window_partial,
			DUR(s.window_partial_max_ns, e));
	else if (s.window_partial)
		fprintf(out, "# on-CPU: the --time window's ends lie between the kernel's figures, "
			"which this recording has only at its start and end, for %" PRIu64 " threads "
			"(~): their on-CPU is the window's estimated share, within %s at most (record "
			"now reads them every second, anchoring windows at whole seconds exactly)\n",
			s.window_partial, DUR(s.window_partial_max_ns, e));
	/*
	 * Short threads: what the exit figures cannot confirm, worth a line
	 * from 1% of the on-CPU time.
	 */
	if (s.exit_tails_ns && s.exit_tails_ns * 100 >= s.on_cpu_ns)
		fprintf(out, "# on-CPU: the last slices of %" PRIu64 " exiting threads, %s in all "
			"(%.0f%% of the on-CPU time), are their records' own: taskstats sends a "
			"thread's figures before its last slice ends; within as much\n",
			s.exit_tails, DUR(s.exit_tails_ns, e),
			100.0 * (double)s.exit_tails_ns / (double)s.on_cpu_ns);
	if (!s.anchored && s.late_starts && (!all || untimed * 20 >= all))
		fprintf(out, "# on-CPU: %" PRIu64 " switch-ins are timed by their switch records, "
			"which come after the switch: on-CPU reads a few microseconds short for "
			"each, which a storm adds up, and no kernel figures were recorded to "
			"anchor it (they need root for threads that exit)\n", s.late_starts);
}

/* part of all as a percentage, never rounded to 0 or 100 when it is neither. */
static const char *share_text(uint64_t part, uint64_t all, char *buf)
{
	double pct = 100.0 * (double)part / (double)(all ? all : 1);

	if (part && pct < 0.1)
		return "<0.1%";
	if (part < all && pct > 99.9)
		return ">99.9%";
	snprintf(buf, 16, "%.1f%%", pct);
	return buf;
}

/*
 * Switch-out stacks sampled above --switch-stacks' rate: how many went
 * without one, and what their time became.
 */
static void print_switch_estimate(const struct wp_analysis *an, FILE *out)
{
	uint64_t rate = wp_meta_switch_stack_rate(an->meta);
	struct wp_switch_estimate e;
	char a[16], b[16], c[16], d[16], p[16];

	if (!rate)
		return;
	wp_account_switch_estimate(an->account, &e);
	fprintf(out, "# switch-out stacks: at most %" PRIu64 "/s per %s", rate,
		an->meta->switch_stack_budget ? "CPU" : "thread and CPU");
	if (!e.unsampled) {
		fprintf(out, ", every switch-out had one\n");
		return;
	}
	fprintf(out, "; %" PRIu64 " of %" PRIu64 " switch-outs (%s) had none, in %" PRIu64
		" thread%s: ~ marks the %s of off-CPU time shared out among their sampled stacks",
		e.unsampled, e.switch_outs, share_text(e.unsampled, e.switch_outs, p),
		e.threads, e.threads == 1 ? "" : "s", DUR(e.estimated_ns, a));
	if (e.unattributed_ns)
		fprintf(out, ", %s left as [off-cpu: not sampled]", DUR(e.unattributed_ns, b));
	if (e.max_error_ns)
		fprintf(out, "; the largest bound, two standard errors, +-%s on a stack of %s",
			DUR(e.max_error_ns, c), DUR(e.max_error_of_ns, d));
	fprintf(out, " (--switch-stacks=all keeps every one)\n");
}

/*
 * How many waits had no wake-up recorded (gated with the stacks, or none
 * reported by the kernel), and what of their time was estimated.
 */
static void print_wakeup_estimate(const struct wp_analysis *an, FILE *out)
{
	struct wp_wakeup_estimate e;
	char a[16], b[16], c[16];

	wp_account_wakeup_estimate(an->account, &e);
	if (!e.waits)
		return;
	fprintf(out, "# wake-ups: %" PRIu64 " waits (%s) had no wake-up recorded", e.waits,
		DUR(e.waits_ns, a));
	if (e.dropped < e.waits)
		fprintf(out, ", %" PRIu64 " because the wake-up tracepoints were off (above the "
			"budget)", e.waits - e.dropped);
	if (e.dropped)
		fprintf(out, ", %" PRIu64 " while they were on (the kernel delivered none)",
			e.dropped);
	fprintf(out, ": ~ marks their runnable time, %s, estimated from the %" PRIu64
		" waits that had one", DUR(e.runnable_ns, b), e.seen);
	if (e.unwoken_ns)
		fprintf(out, ", and %s of blocked time shared among the known wakers",
			DUR(e.unwoken_ns, c));
	fprintf(out, e.dropped < e.waits ? " (--switch-stacks=all keeps them on)\n" : "\n");
}

/*
 * The runtimes that name their compiled code in /tmp/perf-PID.map when
 * asked, told by a frame of their own in the stacks that hold code of no
 * file, and how to ask.
 */
static const struct jit_runtime {
	const char *frames[3];	/* a frame name that starts so is the runtime's */
	const char *hint;
} jit_runtimes[] = {
	{ { "JavaCalls::", "JavaThread::", "Interpreter" },
	  "a JVM's: 'jcmd PID Compiler.perfmap' writes its names to /tmp/perf-PID.map "
	  "while it runs, for report to read; or run it with -XX:+UnlockDiagnosticVMOptions "
	  "-XX:+DumpPerfMapAtExit; and JIT code has no unwind information, so stacks stop "
	  "in it unless the JVM keeps frame pointers (-XX:+PreserveFramePointer)" },
	{ { "v8::", "Builtins_", "node::" },
	  "node's (V8): run it with --perf-basic-prof (or --perf-basic-prof-only-functions)" },
	{ { "_PyEval_EvalFrame", "PyEval_EvalCode", "_PyFunction_Vectorcall" },
	  "Python's: Python 3.12 and later name it with -X perf (or PYTHONPERFSUPPORT=1)" },
};

/*
 * The runtime whose frames stand beside unnamed code of no file, and the
 * process (*pid) of a thread that ran it; or NULL.
 */
static const struct jit_runtime *find_jit_runtime(const struct wp_analysis *an, uint32_t *pid)
{
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	size_t nth, nw;

	th = wp_account_threads(an->account, &nth);
	w = wp_account_stacks(an->account, &nw);
	for (size_t j = 0; j < nw; j++) {
		unsigned int nf;
		const uint32_t *f = wp_stacks_get(an->stacks, w[j].stack, &nf);
		bool anon = false;

		if (w[j].thread >= nth)
			continue;
		*pid = th[w[j].thread].pid;
		for (unsigned int i = 0; i < nf && !anon; i++)
			anon = (f[i] & WP_FRAME_UNNAMED) &&
			       !strncmp(wp_analysis_frame_name(an, f[i]), WP_ANON_FRAME_PREFIX,
					strlen(WP_ANON_FRAME_PREFIX));
		for (unsigned int i = 0; anon && i < nf; i++) {
			const char *name = wp_analysis_frame_name(an, f[i]);

			for (size_t r = 0; r < ARRAY_SIZE(jit_runtimes); r++)
				for (size_t k = 0; k < ARRAY_SIZE(jit_runtimes[r].frames); k++)
					if (!strncmp(name, jit_runtimes[r].frames[k],
						     strlen(jit_runtimes[r].frames[k])))
						return &jit_runtimes[r];
		}
	}
	return NULL;
}

/* Where the unnamed frames are (those worth a line), and what would name them. */
static void print_unnamed(const struct wp_analysis *an, FILE *out)
{
	const struct wp_quality *q = &an->quality;

	static const char *const why[] = {
		[WP_UNNAMED_NO_SYMBOLS] = "no symbols there",
		[WP_UNNAMED_MISSING] = "the file is missing or not the one recorded",
		[WP_UNNAMED_NO_FILE] = "code of no file (a JIT's, or mappings not recorded)",
		[WP_UNNAMED_KERNEL] = "kernel symbols were not available to the recording",
		[WP_UNNAMED_NO_FDS] = "wallprof lacked file descriptors to read it",
	};

	for (unsigned int i = 0; i < q->nr_unnamed_files; i++) {
		const struct wp_unnamed_file *f = &q->unnamed_files[i];
		double pct = 100.0 * (double)f->frames / (double)q->frames;
		char t[16];

		if (pct < 1.0)
			break;	/* sorted: the rest are smaller */
		fprintf(out, "#   %.1f%% in ", pct);
		wp_quote_puts(out, f->path, WP_QUOTE_TEXT);
		/* How much of the profile it leaves unexplained. */
		fprintf(out, ": %s (stacks of %s, %.1f%% of the time)", why[f->reason],
			DUR(f->stack_ns, t),
			q->stacks_ns ? 100.0 * (double)f->stack_ns / (double)q->stacks_ns : 0.0);
		if (f->reason == WP_UNNAMED_NO_FILE) {
			uint32_t pid = 0;
			const struct jit_runtime *r = find_jit_runtime(an, &pid);

			fprintf(out, "; a frame per mapping (" WP_ANON_FRAME_PREFIX "ADDRESS]): "
				"a perf map (/tmp/perf-PID.map) names JIT code, ");
			for (const char *h = r ? r->hint : NULL; h && *h; h++) {
				/* The process's own ID for PID in the hint. */
				if (!strncmp(h, "PID", 3) && pid) {
					fprintf(out, "%" PRIu32, pid);
					h += 2;
				} else {
					fputc(*h, out);
				}
			}
			if (!r)
				fprintf(out, "when the JIT writes one");
			fputc('\n', out);
			continue;
		}
		if (f->reason != WP_UNNAMED_NO_SYMBOLS) {
			fputc('\n', out);
			continue;
		}
		fprintf(out, "; its debug symbols would name them");
		if (f->package[0]) {
			fprintf(out, " (Debian: ");
			wp_quote_puts(out, f->package, WP_QUOTE_TEXT);
			fprintf(out, "-dbgsym, from the debian-debug archive)");
		}
		if (f->debug_file[0])
			fprintf(out, "%s%s", f->package[0] ? ", installed as " : ": ",
				f->debug_file);
		fputc('\n', out);
	}
}

/* bound: the largest on-CPU error bound among the rows marked ~. */
static void print_approximate(FILE *out, uint64_t bound)
{
	char b[16];

	fprintf(out, "~ approximate: records were lost, or switch records contradicted "
		"each other, while the thread ran");
	if (bound)
		fprintf(out, "; on-CPU within %s of the truth at most (json: on_cpu_bound_ns)\n",
			DUR(bound, b));
	else
		fprintf(out, "; on-CPU anchored to the kernel's own figures still\n");
}

/*
 * What a larger stack copy would do for the stacks it cut short.  What
 * the unwinder reached for is a lower bound on what each one needs; the
 * kernel copies at most WP_STACK_COPY_MAX bytes, so never advise more.
 */
static void print_stack_copy_advice(const struct wp_analysis *an, FILE *out)
{
	const struct wp_quality *q = &an->quality;
	uint64_t need = ALIGN_UP(q->truncated_needed, (uint64_t)8);
	double kib = (double)need / 1024;

	if (!q->truncated)
		return;
	if (need <= an->meta->stack_size) {
		if (an->meta->stack_size < WP_STACK_COPY_MAX)
			fprintf(out, " (try a larger -g dwarf,SIZE, up to %u)", WP_STACK_COPY_MAX);
		return;
	}
	if (need <= WP_STACK_COPY_MAX) {
		fprintf(out, " (they needed at least -g dwarf,%" PRIu64 ")", need);
		return;
	}
	/* One stack of thousands reads 0.0%: say it is one, not "some" of them. */
	fprintf(out, " (%s needed at least %.*f %s, more than the kernel copies: ",
		q->truncated == 1 ? "one stack" : "some",
		kib >= 1024 ? 1 : 0, kib >= 1024 ? kib / 1024 : kib, kib >= 1024 ? "MiB" : "KiB");
	if (an->meta->stack_size < WP_STACK_COPY_MAX && q->truncated == 1)
		fprintf(out, "its largest copy, -g dwarf,%u, would %skeep it whole", WP_STACK_COPY_MAX,
			q->truncated_in_reach ? "" : "not ");
	else if (an->meta->stack_size < WP_STACK_COPY_MAX)
		fprintf(out, "its largest copy, -g dwarf,%u, would keep at most %.1f%% of them whole",
			WP_STACK_COPY_MAX,
			100.0 * (double)q->truncated_in_reach / (double)q->truncated);
	else
		fprintf(out, "%u bytes at most, as recorded", WP_STACK_COPY_MAX);
	fprintf(out, "; -g fp has no such limit where the code keeps frame pointers)");
}

/*
 * The quality lines: at the end of the report, or, in a compact one
 * (after_header), under the header, so that the report ends with what
 * its stacks leave out; there with what ~ means (else under the table).
 */
static void print_footer(const struct wp_view *v, FILE *out, bool approx, uint64_t bound,
			 bool after_header)
{
	const struct wp_analysis *an = v->an;
	const struct wp_summary *s = &an->summary;
	const struct wp_quality *q = &an->quality;
	uint64_t lost = s->lost_records + s->lost_samples + s->lost_unreported, first, last;
	char a[16], b[16];

	fprintf(out, "%s# quality: %" PRIu64 " records", after_header ? "" : "\n", an->records);
	if (an->complete)
		fprintf(out, ", %" PRIu64 " lost (%.2f%%)", lost,
			s->records + lost ? 100.0 * (double)lost / (double)(s->records + lost) : 0);
	else
		fprintf(out, ", the recording did not finish");
	wp_account_loss_span(an->account, &first, &last);
	if (first)
		fprintf(out, " between %s and %s", DUR(first - an->start_ns, a),
			DUR(last - an->start_ns, b));
	if (an->damaged)
		fprintf(out, ", damaged file: read up to the damage");
	if (an->out_of_order)
		fprintf(out, ", %" PRIu64 " out of order", an->out_of_order);
	if (an->impossible_times)
		fprintf(out, ", %" PRIu64 " with impossible times", an->impossible_times);
	if (q->unknown_samples + s->unknown_samples)
		fprintf(out, ", %" PRIu64 " samples of events not the recording's left out "
			"(another profiler's, shared by the kernel)",
			q->unknown_samples + s->unknown_samples);
	fputc('\n', out);
	if (q->samples) {
		fprintf(out, "# stacks: %" PRIu64 " unwound, %.1f%% cut short by the stack copy",
			q->samples, 100.0 * (double)q->truncated / (double)q->samples);
		print_stack_copy_advice(an, out);
		if (q->unreadable)
			fprintf(out, ", %.1f%% where the kernel could not read the stack",
				100.0 * (double)q->unreadable / (double)q->samples);
		if (q->too_deep)
			fprintf(out, ", %.1f%% stopped at the frame limit",
				100.0 * (double)q->too_deep / (double)q->samples);
		fprintf(out, ", %.1f%% not unwound",
			100.0 * (double)q->unwind_failed / (double)q->samples);
		if (s->raw_samples)
			fprintf(out, ", %" PRIu64 " by report: the live unwinder fell behind",
				s->raw_samples);
		fputc('\n', out);
	}
	fprintf(out, "# frames: %.1f%% unnamed",
		q->frames ? 100.0 * (double)q->unnamed / (double)q->frames : 0.0);
	if (q->changed_files || q->missing_files)
		fprintf(out, ", binaries since recording: %u changed, %u missing",
			q->changed_files, q->missing_files);
	if (q->fd_limit)
		fprintf(out, ", names lost for lack of file descriptors (the limit is %u; "
			"%u files not opened)", q->fd_limit, q->starved_files);
	if (q->jit_live_maps)
		fprintf(out, ", JIT code of %u processes named from /tmp/perf-PID.map now "
			"(the recording has no names for it)", q->jit_live_maps);
	fputc('\n', out);
	print_unnamed(an, out);
	print_unsampled(an, out);
	print_anchors(an, out);
	print_switch_estimate(an, out);
	print_wakeup_estimate(an, out);
	if ((an->meta->flags & WP_META_SWITCHES) && !wp_account_has_wakeups(an->account))
		fprintf(out, "# wake-ups were not recorded: blocked time includes the wait for a "
			"CPU after each wake-up (record --wakeups, with CAP_PERFMON, splits it)\n");
	if (approx && after_header)
		print_approximate(out, bound);
}

/* The command line shown under a process, at most this many columns. */
#define CMDLINE_COLUMNS 72

/* A command line as shell words, cut to CMDLINE_COLUMNS ("..." then). */
static void print_cmdline(const struct wp_process_cmdline *c, FILE *out)
{
	char *text = NULL;
	size_t len = 0, cut;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	for (const char *a = c->args; a < c->args + c->len; a += strlen(a) + 1) {
		if (a > c->args)
			fputc(' ', mem);
		wp_quote_shell_word(mem, a);	/* programs choose their arguments */
	}
	if (fclose(mem) || !text)
		return;
	cut = len;
	if (len > CMDLINE_COLUMNS) {
		cut = CMDLINE_COLUMNS - 3;
		while (cut && ((unsigned char)text[cut] & 0xc0) == 0x80)
			cut--;	/* not inside a character */
	}
	fwrite(text, 1, cut, out);
	fputs(cut < len || c->truncated ? "...\n" : "\n", out);
	free(text);
}

/* The main thread of process pid that kept its names (the latest), or NULL. */
static const struct wp_thread_times *names_of(const struct wp_analysis *an, uint32_t pid)
{
	const struct wp_thread_times *th, *main = NULL;
	size_t n, lo = 0, hi;

	th = wp_account_threads(an->account, &n);
	hi = n;
	while (lo < hi) {	/* sorted by pid, then tid */
		size_t mid = lo + (hi - lo) / 2;

		if (th[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && th[lo].pid == pid; lo++)
		if (th[lo].tid == pid && th[lo].nr_names)
			main = &th[lo];
	return main;
}

/*
 * Who a process was, under its row, when its name alone does not tell:
 * every name it exec'd under, with its main thread's time under each,
 * and its command line when it had several names or shares its name with
 * another process shown.  A name inherited from the parent at fork is not
 * the process's own, and left out here (JSON has it).
 */
static void print_identity(const struct wp_analysis *an, uint32_t pid, bool shared, FILE *out)
{
	const struct wp_thread_times *main = names_of(an, pid);
	const struct wp_process_cmdline *cmdline = NULL;
	unsigned int own = 0;
	char d[16];

	if (!main)
		return;
	for (uint32_t i = 0; i < main->nr_names; i++) {
		own += !main->names[i].inherited;
		if (main->names[i].cmdline)
			cmdline = main->names[i].cmdline;
	}
	if (own > 1) {
		bool arrow = false;

		fprintf(out, "%12snames: ", "");
		for (uint32_t i = 0; i < main->nr_names; i++) {
			const struct wp_process_name *n = &main->names[i];

			if (n->inherited)
				continue;
			fputs(arrow ? " -> " : "", out);
			wp_quote_puts(out, n->comm, WP_QUOTE_TEXT);
			fprintf(out, " %s", DUR(n->wall_ns, d));
			arrow = true;
		}
		fputc('\n', out);
	}
	if (cmdline && (own > 1 || shared)) {
		fprintf(out, "%12scmdline: ", "");
		print_cmdline(cmdline, out);
	}
}

static bool process_row(const struct wp_table_row *r)
{
	return r->kind == WP_ROW_PROCESS || r->kind == WP_ROW_ONE_THREAD;
}

static int by_comm(const void *x, const void *y, void *rows)
{
	const struct wp_table_row *r = rows;

	return strcmp(r[*(const size_t *)x].sum.comm, r[*(const size_t *)y].sum.comm);
}

/* The last command line recorded of process pid, or NULL. */
static const struct wp_process_cmdline *last_cmdline(const struct wp_analysis *an, uint32_t pid)
{
	const struct wp_thread_times *main = names_of(an, pid);
	const struct wp_process_cmdline *c = NULL;

	for (uint32_t i = 0; main && i < main->nr_names; i++)
		if (main->names[i].cmdline)
			c = main->names[i].cmdline;
	return c;
}

static bool same_cmdline(const struct wp_process_cmdline *a, const struct wp_process_cmdline *b)
{
	return a && b && a->len == b->len && !memcmp(a->args, b->args, a->len);
}

/*
 * Which process rows share their name with another whose command line
 * differs: theirs tells them apart (nine git processes of git gc), where
 * three hundred /bin/true would only fill the table (calloc'ed; NULL: none).
 */
static bool *shared_names(const struct wp_analysis *an, const struct wp_table *t)
{
	size_t *order = malloc((t->nr_rows + 1) * sizeof(*order)), n = 0;
	bool *shared = calloc(t->nr_rows + 1, sizeof(*shared));

	if (!order || !shared) {
		free(order);
		free(shared);
		return NULL;
	}
	for (size_t i = 0; i < t->nr_rows; i++)
		if (process_row(&t->rows[i]))
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_comm, t->rows);
	for (size_t i = 0, j; i < n; i = j) {
		const struct wp_process_cmdline *first = NULL, *c;
		bool differ = false;

		/* A command line never read (the process was too quick) tells nothing. */
		for (j = i; j < n && !strcmp(t->rows[order[j]].sum.comm,
					     t->rows[order[i]].sum.comm); j++) {
			c = last_cmdline(an, t->rows[order[j]].sum.pid);
			if (!first)
				first = c;
			else if (c)
				differ |= !same_cmdline(first, c);
		}
		for (size_t k = i; differ && k < j; k++)
			shared[order[k]] = true;
	}
	free(order);
	return shared;
}

static const char *plural(uint64_t n, const char *one, const char *more)
{
	return n == 1 ? one : more;
}

/* Idle threads' folds shown each; the rest are summed in one line. */
#define IDLE_LINES 5

static int print_path(const struct wp_view *v, uint32_t stack, int room, FILE *out);

/* The thread table's width: 80 columns, 89 with its RUNNABLE column. */
#define TABLE_COLUMNS 80
#define TABLE_COLUMNS_RUNNABLE 89

/*
 * The idle threads (explain), two lines per stack they waited in: how
 * many, their time and their names; then the stack's innermost named
 * frames.
 */
static void print_idle_folds(const struct wp_view *v, const struct wp_table *t, FILE *out)
{
	int width = wp_account_has_wakeups(v->an->account) ? TABLE_COLUMNS_RUNNABLE : TABLE_COLUMNS;
	const struct wp_thread_times *th;
	struct wp_thread_times more = { 0 };
	uint64_t more_threads = 0;
	char id[32], w[16], on[16];
	size_t nth;

	th = wp_account_threads(v->an->account, &nth);
	for (size_t i = 0; i < t->nr_idle; i++) {
		const struct wp_idle_fold *f = &t->idle[i];
		int used;

		if (i >= IDLE_LINES) {
			more.wall_ns += f->sum.wall_ns;
			more.on_cpu_ns += f->sum.on_cpu_ns;
			more_threads += f->threads;
			continue;
		}
		snprintf(id, sizeof(id), "%" PRIu64 " %s", f->threads,
			 plural(f->threads, "thread", "threads"));
		used = fprintf(out, "%-9s %-12s %7s %7s  ", "idle", id, DUR(f->sum.wall_ns, w),
			       DUR(f->sum.on_cpu_ns, on));
		for (unsigned int k = 0; k < f->nr_names; k++) {
			char comm[WP_QUOTE_SIZE(sizeof(th->comm))];
			uint64_t left = f->nr_names - k + f->more_names - 1;

			wp_quote(comm, sizeof(comm), th[f->names[k]].comm[0] ? th[f->names[k]].comm : "?",
				 WP_QUOTE_TEXT);
			/* Room for the name, and for " and 99 more names" after it. */
			if (k && used + 2 + (int)strlen(comm) + (left ? 19 : 0) > width) {
				fprintf(out, " and %" PRIu64 " more names", left + 1);
				break;
			}
			used += fprintf(out, "%s%s", k ? ", " : "", comm);
			if (k == f->nr_names - 1 && f->more_names)
				fprintf(out, " and %" PRIu64 " more %s", f->more_names,
					plural(f->more_names, "name", "names"));
		}
		used = fprintf(out, "\n%10sin ", "") - 1;
		if (print_path(v, f->stack, width - used, out))
			fputc('\n', out);
	}
	if (more_threads) {
		snprintf(id, sizeof(id), "%" PRIu64 " %s", more_threads,
			 plural(more_threads, "thread", "threads"));
		fprintf(out, "%-9s %-12s %7s %7s  in %zu more places\n", "idle", id,
			DUR(more.wall_ns, w), DUR(more.on_cpu_ns, on), t->nr_idle - IDLE_LINES);
	}
}

/*
 * The thread table: the rows the view chose (--by, --threads), then a
 * line that says what they leave out, so that nothing goes unseen.
 */
static void print_threads(const struct wp_view *v, const struct wp_table *t, FILE *out)
{
	static const char *const id_title[] = { "PID/TID", "TID", "PROCS/THR" };
	bool runnable = wp_account_has_wakeups(v->an->account);
	char id[48], w[16], on[16];
	bool *shared;

	shared = shared_names(v->an, t);
	fprintf(out, "\n%s%-9s %-12s %7s %7s %7s", PAINT(v, C_BOLD), id_title[v->o.by], "COMM",
		"WALL", "ON-CPU", "BLOCKED");
	if (runnable)
		fprintf(out, " %8s", "RUNNABLE");
	fprintf(out, " %7s %4s %5s %5s %6s%s\n", "PREEMPT", "%ON", "VOL", "INVOL", "SAMPL",
		PAINT(v, C_RESET));
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct wp_table_row *r = &t->rows[i];

		switch (r->kind) {
		case WP_ROW_PROCESS:
		case WP_ROW_ONE_THREAD:
			snprintf(id, sizeof(id), "%" PRIu32, r->sum.pid);
			break;
		case WP_ROW_THREAD:
			/* Under its process's row, or alone (--by thread). */
			snprintf(id, sizeof(id), "%s%" PRIu32, v->o.by == WP_BY_PROCESS ? "  " : "",
				 r->sum.tid);
			break;
		case WP_ROW_COMM:
			snprintf(id, sizeof(id), "%" PRIu64 "/%" PRIu64, r->processes, r->threads);
			break;
		case WP_ROW_PROGRAM:
			snprintf(id, sizeof(id), "%" PRIu64 " procs", r->processes);
			break;
		}
		print_row(&r->sum, id, out, runnable);
		if (process_row(r))
			print_identity(v->an, r->sum.pid, shared && shared[i], out);
	}
	free(shared);
	print_idle_folds(v, t, out);
	if (t->rest_names)
		fprintf(out, "... and %" PRIu64 " more %s: %" PRIu64 " %s in %" PRIu64 " %s "
			"(%s wall, %s on-CPU)\n", t->rest_names, plural(t->rest_names, "name", "names"),
			t->rest_threads, plural(t->rest_threads, "thread", "threads"),
			t->rest_processes, plural(t->rest_processes, "process", "processes"),
			DUR(t->rest.wall_ns, w), DUR(t->rest.on_cpu_ns, on));
	else if (t->rest_threads)
		fprintf(out, "... and %" PRIu64 " more %s in %" PRIu64 " %s (%s wall, %s on-CPU)\n",
			t->rest_threads, plural(t->rest_threads, "thread", "threads"),
			t->rest_processes, plural(t->rest_processes, "process", "processes"),
			DUR(t->rest.wall_ns, w), DUR(t->rest.on_cpu_ns, on));
}

/*
 * Whether a row of the table is approximate (a note then says what ~
 * means), and the largest bound of a row's on-CPU error.
 */
static bool table_approximate(const struct wp_table *t, uint64_t *bound)
{
	bool any = false;

	*bound = 0;
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct wp_thread_times *r = &t->rows[i].sum;

		any |= r->approximate || r->on_cpu_source == WP_ON_CPU_ESTIMATED;
		if (r->on_cpu_bound_ns > *bound)
			*bound = r->on_cpu_bound_ns;
	}
	return any;
}

/*
 * A system-wide recording: the CPUs' idle time, as a row that is no
 * thread's, and the ledger of the CPUs' time.
 */
static void print_idle(const struct wp_analysis *an, FILE *out)
{
	const struct wp_cpu_time *c;
	struct wp_cpu_time sum;
	char a[16], b[16], t[16], u[16], w[16];
	uint64_t span;
	size_t n;

	c = wp_analysis_cpus(an, &n, &sum, &span);
	if (!c)
		return;
	fprintf(out, "\n%-9s %-12s %7s  idle, no thread:", "[idle]", "swapper",
		DUR(sum.idle_ns, a));
	for (size_t i = 0; i < n && i < 8; i++)
		fprintf(out, "%s cpu%zu %s", i ? "," : "", i, DUR(c[i].idle_ns, a));
	fprintf(out, "%s\n", n > 8 ? ", ... (JSON has every CPU)" : "");
	fprintf(out, "# CPU time: on-CPU %s + idle %s", DUR(sum.busy_ns, a), DUR(sum.idle_ns, b));
	/* Tasks that wrote no switch records, in between: rare, and said. */
	if (sum.unseen_ns)
		fprintf(out, " + unseen %s", DUR(sum.unseen_ns, a));
	fprintf(out, " = %s; %zu CPUs x %s = %s\n",
		DUR(sum.busy_ns + sum.idle_ns + sum.unseen_ns, t), n, DUR(span, u), DUR(span * n, w));
}

/* A stack's time summed over the shown threads with the same name. */
struct top_entry {
	uint32_t stack;
	uint32_t thread;	/* a representative thread, for its name */
	enum wp_part part;
	uint64_t ns;
	uint64_t estimated_ns;	/* of ns: see wp_view_part_estimated_ns() */
};

static int top_cmp(const void *x, const void *y)
{
	const struct top_entry *a = x, *b = y;
	int c;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	c = (int)a->part - (int)b->part;
	return c;
}

/* Order for merging: by stack, part and thread name (threads of a name side by side). */
static int key_cmp(const void *x, const void *y, void *threads)
{
	const struct top_entry *a = x, *b = y;
	const struct wp_thread_times *th = threads;
	int c;

	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	if (a->part != b->part)
		return (int)a->part - (int)b->part;
	c = strcmp(th[a->thread].comm, th[b->thread].comm);
	if (c)
		return c;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

static const char *part_name(enum wp_part part)
{
	static const char *const names[] = { "on-CPU", "blocked", "preempted", "runnable" };

	return names[part];
}

/* A stack's frames, innermost first, one per line after indent spaces. */
static void print_frames(const struct wp_view *v, uint32_t stack, int indent, FILE *out)
{
	const struct wp_analysis *an = v->an;
	const uint32_t *frames;
	unsigned int n;

	frames = wp_stacks_get(an->stacks, stack, &n);
	for (unsigned int f = 0; f < n; f++) {
		bool k = frames[f] & WP_FRAME_KERNEL;

		/* Frame names hold file names, which programs choose. */
		fprintf(out, "%*s%s", indent, "", k ? PAINT(v, C_KERNEL) : "");
		wp_quote_puts(out, wp_analysis_frame_name(an, frames[f]), WP_QUOTE_TEXT);
		fprintf(out, "%s%s\n",
			k ? " [k]" : frames[f] & WP_FRAME_INLINED ? " (inlined)" : "",
			k ? PAINT(v, C_RESET) : "");
	}
}

/* A compact stack's line fits in the thread table's width (the first frame whole). */
#define COMPACT_COLUMNS 80
#define COMPACT_COLUMNS_RUNNABLE 89

/*
 * A stack at the end of a compact line: its innermost named user frames
 * (named kernel frames after "[k] " when it has no named user frame; its
 * innermost frame when none is named), innermost first, joined by " < "
 * (" <..< " where frames are left out between two), as many as fit in
 * room columns and the first one always; then, in parentheses, how many
 * of its frames that leaves out: kernel ones, unnamed ones and those past
 * the room.
 */
static int print_path(const struct wp_view *v, uint32_t stack, int room, FILE *out)
{
	const struct wp_analysis *an = v->an;
	struct wp_buf path = { 0 }, name = { 0 };
	unsigned int n, shown = 0, last = 0;
	uint32_t skip = WP_FRAME_UNNAMED | WP_FRAME_KERNEL;
	const uint32_t *frames;
	int err = 0;

	frames = wp_stacks_get(an->stacks, stack, &n);
	for (int pass = 0; pass < 2; pass++) {
		unsigned int f = 0;

		while (f < n && (frames[f] & skip))
			f++;
		if (f < n)
			break;
		skip = pass ? 0 : WP_FRAME_UNNAMED;	/* none of those: fewer left out */
	}
	for (unsigned int f = 0; f < n; f++) {
		bool k = frames[f] & WP_FRAME_KERNEL;
		const char *sep = !shown ? "" : f == last + 1 ? " < " : " <..< ";

		if (frames[f] & skip)
			continue;
		/* Kernel frames are shown only when the stack has no named user frame. */
		if (!shown && k && wp_buf_append(&path, "[k] ", 4)) {
			err = -ENOMEM;
			goto out;
		}
		name.len = 0;
		/* Frame names hold file names, which programs choose. */
		err = wp_quote_buf(&name, wp_analysis_frame_name(an, frames[f]),
				   strlen(wp_analysis_frame_name(an, frames[f])), WP_QUOTE_TEXT);
		if (err)
			goto out;
		/* Room for the count after it too: " (+123)". */
		if (shown && path.len + strlen(sep) + name.len + 7 > (size_t)room)
			break;
		/* (Nothing appended is empty: an empty buffer's data may be NULL.) */
		if ((shown && wp_buf_append(&path, sep, strlen(sep))) ||
		    (name.len && wp_buf_append(&path, name.data, name.len))) {
			err = -ENOMEM;
			goto out;
		}
		shown++;
		last = f;
	}
	if (path.len)
		fwrite(path.data, 1, path.len, out);
	if (n > shown)
		fprintf(out, " (+%u)", n - shown);
	fputc('\n', out);
out:
	wp_buf_release(&path);
	wp_buf_release(&name);
	return err;
}

/* Blocked time that one waker ended, for a stack or a thread. */
struct woken {
	uint32_t waker;		/* index into wp_account_wakers() */
	uint32_t thread;	/* the waiting thread */
	uint64_t ns, count;
	/*
	 * Merged, the waker that ended most of the time stands for the rest
	 * (a thread renamed once it ran, as a JVM names its workers, is
	 * named as it was for most of its wake-ups): its own time.
	 */
	uint64_t waker_ns;
	bool one_thread;	/* merged entries all had the same waker thread */
};

/* The wakers, and the analysis that names them, for the orders below. */
struct wakers {
	const struct wp_waker *wk;
	const struct wp_analysis *an;
};

/* The waker's name, as wp_waker_name puts it. */
static const char *woken_name(const struct wakers *ws, const struct woken *x, char *buf,
			      size_t size)
{
	return wp_waker_name(ws->an, &ws->wk[x->waker], buf, size);
}

/* Order for merging wakers of one stack: by name, then stack. */
static int by_waker_name_stack(const void *x, const void *y, void *wakers)
{
	const struct woken *a = x, *b = y;
	const struct wakers *ws = wakers;
	const struct wp_waker *wk = ws->wk;
	char na[32], nb[32];
	int c = strcmp(woken_name(ws, a, na, sizeof(na)), woken_name(ws, b, nb, sizeof(nb)));

	if (c)
		return c;
	if (wk[a->waker].stack != wk[b->waker].stack)
		return wk[a->waker].stack < wk[b->waker].stack ? -1 : 1;
	return 0;
}

/* Order for merging wakers of one compact stack, whose stacks are not shown: by name. */
static int by_waker_name(const void *x, const void *y, void *wakers)
{
	const struct woken *a = x, *b = y;
	const struct wakers *ws = wakers;
	char na[32], nb[32];

	return strcmp(woken_name(ws, a, na, sizeof(na)), woken_name(ws, b, nb, sizeof(nb)));
}

static int by_ns(const void *x, const void *y)
{
	const struct woken *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->waker < b->waker ? -1 : a->waker > b->waker;
}

/* Append the shown wake weights of stack weight w to x[nx]. */
static int woken_add(const struct wp_view *v, const struct wp_stack_weight *w, struct woken **x,
		     size_t *nx, size_t *cap)
{
	const struct wp_wake_weight *k;
	struct woken *grown;
	size_t nk;

	k = wp_account_wake_weights(v->an->account, &nk);
	for (uint32_t j = w->wakes; j && j <= nk; j = k[j - 1].next) {
		if (!wp_view_waker(v, k[j - 1].waker))
			continue;
		grown = wp_grow(*x, cap, *nx + 1, sizeof(**x));
		if (!grown)
			return -ENOMEM;
		*x = grown;
		(*x)[(*nx)++] = (struct woken){ .waker = k[j - 1].waker, .thread = w->thread,
						.ns = k[j - 1].blocked_ns,
						.count = k[j - 1].count, .one_thread = true };
	}
	return 0;
}

/* Sort by cmp, add up the entries it finds equal, then sort by time; the count left. */
static size_t woken_merge(struct woken *x, size_t n,
			  int (*cmp)(const void *, const void *, void *), const struct wakers *ws)
{
	const struct wp_waker *wk = ws->wk;
	size_t m = 0;

	if (!n)
		return 0;	/* x may be NULL */
	qsort_r(x, n, sizeof(*x), cmp, (void *)ws);
	for (size_t i = 0; i < n; i++) {
		if (m && !cmp(&x[m - 1], &x[i], (void *)ws)) {
			x[m - 1].one_thread &= wk[x[m - 1].waker].tid == wk[x[i].waker].tid;
			x[m - 1].ns += x[i].ns;
			x[m - 1].count += x[i].count;
			if (x[i].ns > x[m - 1].waker_ns) {
				x[m - 1].waker = x[i].waker;
				x[m - 1].waker_ns = x[i].ns;
			}
			continue;
		}
		x[m] = x[i];
		x[m++].waker_ns = x[i].ns;
	}
	qsort(x, m, sizeof(*x), by_ns);
	return m;
}

/*
 * Under a blocked stack: who ended that blocked time, merged like the
 * stack is (by name; and by stack unless compact, as its stack is shown
 * then), with the share of the stack's blocked time each ended.
 */
static int print_stack_wakers(const struct wp_view *v, const struct top_entry *e, bool compact,
			      FILE *out)
{
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	const struct wp_waker *wk;
	size_t nth, nw, nwk, nx = 0, cap = 0, m = 0, lines;
	struct woken *x = NULL;
	uint64_t shown = 0, unwoken = 0;
	char d[16], buf[32], tail[40] = "";
	const char *comm = NULL;

	th = wp_account_threads(v->an->account, &nth);
	w = wp_account_stacks(v->an->account, &nw);
	wk = wp_account_wakers(v->an->account, &nwk);
	comm = th[e->thread].comm;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].stack != e->stack || !wp_view_thread(v, w[i].thread) ||
		    strcmp(th[w[i].thread].comm, comm))
			continue;
		if (woken_add(v, &w[i], &x, &nx, &cap)) {
			free(x);
			return -ENOMEM;
		}
	}
	m = woken_merge(x, nx, compact ? by_waker_name : by_waker_name_stack,
			&(struct wakers){ wk, v->an });
	for (size_t i = 0; i < m; i++)
		shown += x[i].ns;
	/* Blocked at the end of the recording, or woken unseen (lost records). */
	if (!v->have_waker_re && e->ns > shown)
		unwoken = e->ns - shown;
	lines = (m < WAKERS_PER_STACK ? m : WAKERS_PER_STACK) + (m > WAKERS_PER_STACK);
	/* Compact, the share whose waker was not recorded ends the last waker line, not a line of its own. */
	if (compact && lines && unwoken)
		snprintf(tail, sizeof(tail), "; %.1f%% waker unrecorded",
			 100.0 * (double)unwoken / (double)e->ns);
	for (size_t i = 0; i < m && i < WAKERS_PER_STACK; i++) {
		const struct wp_waker *a = &wk[x[i].waker];
		char name[WP_QUOTE_SIZE(32)];

		wp_quote(name, sizeof(name), wp_waker_name(v->an, a, buf, sizeof(buf)), WP_QUOTE_TEXT);
		fprintf(out, "%19s%s%5.1f%%%s woken by %s", "", PAINT(v, C_BOLD),
			e->ns ? 100.0 * (double)x[i].ns / (double)e->ns : 0.0, PAINT(v, C_RESET),
			name);
		if (a->kind == WP_WAKER_THREAD && x[i].one_thread)
			fprintf(out, " (%" PRIu32 "/%" PRIu32 ")", a->pid, a->tid);
		fprintf(out, ", %" PRIu64 " time%s, %s%s\n", x[i].count, x[i].count == 1 ? "" : "s",
			DUR(x[i].ns, d), compact ? (i + 1 == lines ? tail : "") : ":");
		if (!compact)
			print_frames(v, a->stack, 25, out);
	}
	if (m > WAKERS_PER_STACK) {
		uint64_t rest = 0;

		for (size_t i = WAKERS_PER_STACK; i < m; i++)
			rest += x[i].ns;
		fprintf(out, "%19s%5.1f%% woken by %zu other wakers%s\n", "",
			e->ns ? 100.0 * (double)rest / (double)e->ns : 0.0, m - WAKERS_PER_STACK,
			tail);
	}
	if (unwoken && !tail[0])
		fprintf(out, "%19s%5.1f%% waker not recorded\n", "",
			100.0 * (double)unwoken / (double)e->ns);
	free(x);
	return 0;
}

/*
 * The last line of compact stacks: the n stacks (of m in all) that were
 * left out and their time, and the options that show them and whole stacks.
 */
static void print_stacks_left_out(const struct top_entry *rest, size_t n, size_t m, FILE *out)
{
	uint64_t ns = 0;
	char d[16];

	for (size_t i = 0; i < n; i++)
		ns += rest[i].ns;
	if (n)
		fprintf(out, "... and %zu more %s (%s); --top %zu shows them, --stacks full "
			"every frame\n", n, n == 1 ? "stack" : "stacks", DUR(ns, d), m);
	else
		fprintf(out, "... every stack is shown; --stacks full shows every frame\n");
}

/*
 * The top stacks of the view: under title when one is given (else one
 * that names the mode), at most top of them; compact, a line each, and
 * then a line that counts the stacks left out.
 */
static int print_top_stacks(struct wp_view *v, FILE *out, const char *title, unsigned int top,
			    bool compact)
{
	const struct wp_analysis *an = v->an;
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	struct top_entry *e;
	size_t nth, nw, ne = 0, m = 0;
	uint64_t total = 0;
	char d[16];
	int err = 0;

	th = wp_account_threads(an->account, &nth);
	w = wp_account_stacks(an->account, &nw);
	e = calloc(nw * WP_NR_PARTS + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < nw; i++) {
		if (!wp_view_thread(v, w[i].thread))
			continue;
		for (int p = 0; p < WP_NR_PARTS; p++) {
			uint64_t ns = wp_view_part_ns(v, &w[i], (enum wp_part)p);

			if (!ns)
				continue;
			total += ns;	/* the share is of everything shown, grep or not */
			if (!wp_view_stack(v, w[i].stack))
				continue;
			e[ne].stack = w[i].stack;
			e[ne].thread = w[i].thread;
			e[ne].part = (enum wp_part)p;
			e[ne].estimated_ns = wp_view_part_estimated_ns(&w[i], (enum wp_part)p);
			e[ne++].ns = ns;
		}
	}
	/* Merge the same stack and part across threads of the same name. */
	qsort_r(e, ne, sizeof(*e), key_cmp, (void *)th);
	for (size_t i = 0; i < ne; i++) {
		if (m && e[m - 1].stack == e[i].stack && e[m - 1].part == e[i].part &&
		    !strcmp(th[e[m - 1].thread].comm, th[e[i].thread].comm)) {
			e[m - 1].ns += e[i].ns;
			e[m - 1].estimated_ns += e[i].estimated_ns;
			continue;
		}
		e[m++] = e[i];
	}
	qsort(e, m, sizeof(*e), top_cmp);
	static const char *const mode_title[] = { "wall", "on-CPU", "off-CPU", "blocked",
						   "preempted", "runnable" };

	if (title)
		fprintf(out, "\n%s%s (%s in all):%s\n", PAINT(v, C_BOLD), title, DUR(total, d),
			PAINT(v, C_RESET));
	else
		fprintf(out, "\n%sTop stacks by %s time (%s in all):%s\n", PAINT(v, C_BOLD),
			mode_title[v->o.mode], DUR(total, d), PAINT(v, C_RESET));
	for (size_t i = 0; i < m && i < top; i++) {
		static const char *const part_color[] = { C_ON, C_BLOCKED, C_PREEMPTED,
							  C_PREEMPTED };
		char comm[WP_QUOTE_SIZE(sizeof(th->comm))];

		wp_quote(comm, sizeof(comm), th[e[i].thread].comm, WP_QUOTE_TEXT);

		char ns[20];

		snprintf(ns, sizeof(ns), "%s%s",
			 wp_estimated_enough(e[i].estimated_ns, e[i].ns) ? "~" : "", DUR(e[i].ns, d));
		fprintf(out, "%s%s%6.2f%%%s %9s  %s%-9s%s  %s", compact ? "" : "\n",
			PAINT(v, C_BOLD), total ? 100.0 * (double)e[i].ns / (double)total : 0.0,
			PAINT(v, C_RESET), ns, PAINT(v, part_color[e[i].part]),
			part_name(e[i].part), PAINT(v, C_RESET), comm);
		if (compact) {
			/* Columns so far: the share, time and kind, then the name. */
			int used = 30 + (int)strlen(comm), width;

			width = wp_account_has_wakeups(an->account) ? COMPACT_COLUMNS_RUNNABLE :
								       COMPACT_COLUMNS;
			used += fprintf(out, "%*s  ", used < 42 ? 42 - used : 0, "");
			err = print_path(v, e[i].stack, width - used, out);
		} else {
			fputc('\n', out);
			print_frames(v, e[i].stack, 19, out);
		}
		if (!err && e[i].part == WP_PART_BLOCKED && wp_account_has_wakeups(an->account))
			err = print_stack_wakers(v, &e[i], compact, out);
		if (err)
			break;
	}
	if (!m)
		fprintf(out, "  (none)\n");
	else if (compact && !err)
		print_stacks_left_out(e + (m < top ? m : top), m < top ? 0 : m - top, m, out);
	free(e);
	return err;
}

/* Order for merging by waiting thread and waker thread (or kind). */
static int by_pair(const void *x, const void *y, void *wakers)
{
	const struct woken *a = x, *b = y;
	const struct wp_waker *wk = ((const struct wakers *)wakers)->wk;
	const struct wp_waker *wa = &wk[a->waker], *wb = &wk[b->waker];

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (wa->kind != wb->kind)
		return wa->kind < wb->kind ? -1 : 1;
	if (wa->tid != wb->tid)
		return wa->tid < wb->tid ? -1 : 1;
	/* An interrupt's softirq tells which (wp_waker_where). */
	if (wa->context != wb->context)
		return wa->context < wb->context ? -1 : 1;
	return wa->softirq < wb->softirq ? -1 : wa->softirq > wb->softirq;
}

static void print_thread_id(const struct wp_thread_times *t, char *buf, size_t size)
{
	char comm[WP_QUOTE_SIZE(sizeof(t->comm))];

	wp_quote(comm, sizeof(comm), t->comm, WP_QUOTE_TEXT);
	snprintf(buf, size, "%" PRIu32 "/%" PRIu32 " %s", t->pid, t->tid, comm);
}

/*
 * Waiting thread by waker thread: how often, and how much blocked time it
 * ended; at most rows lines, then a line that counts the pairs left out.
 */
static int print_who_woke_whom(struct wp_view *v, unsigned int rows, FILE *out)
{
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	const struct wp_waker *wk;
	size_t nth, nw, nwk, nx = 0, cap = 0, m = 0;
	struct woken *x = NULL;
	char d[16], buf[32], who[256], by[256], where[48];

	th = wp_account_threads(v->an->account, &nth);
	w = wp_account_stacks(v->an->account, &nw);
	wk = wp_account_wakers(v->an->account, &nwk);
	for (size_t i = 0; i < nw; i++) {
		if (!wp_view_thread(v, w[i].thread) || !wp_view_part(v, WP_PART_BLOCKED) ||
		    !wp_view_stack(v, w[i].stack))
			continue;
		if (woken_add(v, &w[i], &x, &nx, &cap)) {
			free(x);
			return -ENOMEM;
		}
	}
	m = woken_merge(x, nx, by_pair, &(struct wakers){ wk, v->an });
	fprintf(out, "\n%sWho woke whom (blocked time each waker ended):%s\n", PAINT(v, C_BOLD),
		PAINT(v, C_RESET));
	if (m)
		fprintf(out, "%s%-30s %-30s %7s %8s%s\n", PAINT(v, C_BOLD), "WAITING", "WAKER",
			"COUNT", "BLOCKED", PAINT(v, C_RESET));
	for (size_t i = 0; i < m && i < rows; i++) {
		const struct wp_waker *a = &wk[x[i].waker];
		char name[WP_QUOTE_SIZE(32)];

		print_thread_id(&th[x[i].thread], who, sizeof(who));
		wp_quote(name, sizeof(name), wp_waker_name(v->an, a, buf, sizeof(buf)), WP_QUOTE_TEXT);
		if (a->kind == WP_WAKER_THREAD)
			snprintf(by, sizeof(by), "%" PRIu32 "/%" PRIu32 " %s%s", a->pid, a->tid,
				 name, wp_waker_where(a, where, sizeof(where)));
		else
			snprintf(by, sizeof(by), "%s%s", name,
				 wp_waker_where(a, where, sizeof(where)));
		fprintf(out, "%-30s %-30s %7" PRIu64 " %8s\n", who, by, x[i].count,
			DUR(x[i].ns, d));
	}
	if (!m) {
		fprintf(out, "  (none)\n");
	} else if (m > rows) {
		uint64_t rest = 0;

		for (size_t i = rows; i < m; i++)
			rest += x[i].ns;
		fprintf(out, "... and %zu more %s (%s blocked); --top %zu shows them\n", m - rows,
			m - rows == 1 ? "pair" : "pairs", DUR(rest, d), m);
	}
	free(x);
	return 0;
}

/* The waits of busy threads that a system-wide report shows apart, at most. */
#define BUSY_WAITS 5

/*
 * Without --mode: what explains the time comes first, on-CPU time; then
 * the waits of the threads at work, not of those that slept the whole
 * recording in one place (a pool's idle workers, make waiting for its
 * children, a system's daemons), which are folded a line per place.
 */
static void print_explain_default(const struct wp_view *v, FILE *out)
{
	char busy[48] = "threads not idle";

	if (v->system_default)
		snprintf(busy, sizeof(busy), "threads on-CPU %d%% of their time or more",
			 WP_BUSY_PERCENT);
	fprintf(out, "# %sdefaults: %sstacks by on-CPU time, then the waits of %s; idle "
		"threads folded a line per place (--mode wall: every wait%s%s)\n",
		v->system_default ? "-a " : "", v->o.sort_given ? "" : "threads and ", busy,
		v->o.sort_given ? "" : ", --sort wall", v->o.rows ? ", --threads all" : "");
}

/* The lines of who woke whom in a compact report, unless --top says. */
#define COMPACT_PAIRS 3

/*
 * Full or compact (--stacks): by default compact when the shown threads
 * are more than the thread table's default rows, whatever --threads says
 * (the recording is large, not the table).
 */
static bool stacks_compact(const struct wp_view *v, const struct wp_table *t)
{
	if (v->o.stacks != WP_STACKS_AUTO)
		return v->o.stacks == WP_STACKS_COMPACT;
	/* Idle threads folded away have no stack of their own to show. */
	return t->threads - t->idle_threads > WP_TABLE_ROWS;
}

/*
 * Full: the header, the thread table, the stacks with all their frames,
 * who woke whom, the quality lines.  Compact: the quality lines under the
 * header, the table, who woke whom (shortened), the stacks a line each,
 * and last the line of what the stacks leave out.
 */
int wp_format_text(struct wp_view *v, FILE *out)
{
	bool wakeups = wp_account_has_wakeups(v->an->account), compact, approx;
	uint64_t bound;
	unsigned int pairs = v->o.top;
	struct wp_view on, waits, *wakers = v;
	struct wp_table t;
	char title[64];
	int err;

	if (v->base)
		return wp_format_text_diff(v, out);
	if (v->critpath)
		return wp_format_critpath_text(v, out);
	err = wp_view_table(v, &t);
	if (err)
		return err;
	compact = stacks_compact(v, &t);
	approx = table_approximate(&t, &bound);
	if (compact && !v->o.top_given && pairs > COMPACT_PAIRS)
		pairs = COMPACT_PAIRS;
	print_header(v->an, out);
	if (v->explain)
		print_explain_default(v, out);
	if (compact)
		print_footer(v, out, approx, bound, true);
	print_threads(v, &t, out);
	print_idle(v->an, out);
	/* What ~ means, where a reader of the table looks (a compact report had it above). */
	if (approx && !compact) {
		fputc('\n', out);
		print_approximate(out, bound);
	}
	if (v->explain) {
		wp_view_derive(v, WP_MODE_ON, false, &on);
		wp_view_derive(v, WP_MODE_OFF, true, &waits);
		wakers = &waits;
	}
	if (compact && wakeups)
		err = print_who_woke_whom(wakers, pairs, out);
	if (!err && v->explain) {
		if (v->system_default)
			snprintf(title, sizeof(title), "Waits of threads on-CPU %d%%+ of their time",
				 WP_BUSY_PERCENT);
		else
			snprintf(title, sizeof(title), "Waits of threads not idle");
		err = print_top_stacks(&on, out, NULL, v->o.top, compact);
		if (!err)
			err = print_top_stacks(&waits, out, title,
					       v->o.top_given || v->o.top < BUSY_WAITS ?
					       v->o.top : BUSY_WAITS, compact);
	} else if (!err) {
		err = print_top_stacks(v, out, NULL, v->o.top, compact);
	}
	if (!err && !compact && wakeups)
		err = print_who_woke_whom(wakers, pairs, out);
	if (!err && !compact)
		print_footer(v, out, approx, bound, false);
	wp_view_table_release(&t);
	return err;
}
