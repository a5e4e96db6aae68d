/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top.c: `wallprof top`: every thread's time, live, interval by interval.
 *
 * A recording like record's, unwound live and written to no file (the
 * flight recorder keeps the last seconds for the `s` key), whose records
 * go to the monitor (monitor.h), which hands over a snapshot per
 * interval: printed in batch mode, drawn by the full screen view
 * (topview.c) otherwise.  All of it runs on wallprof's own threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "log.h"
#include "monitor.h"
#include "options.h"
#include "quote.h"
#include "session.h"
#include "target.h"
#include "timeline.h"
#include "topview.h"
#include "util.h"

/* Cheap enough to watch a busy server: a few on-CPU samples, a budget of stacks. */
#define TOP_FREQ 49
#define TOP_SWITCH_STACKS 500
#define TOP_STACK 4096
#define TOP_KEEP 30.0
#define TOP_FLIGHT_MEMORY ((size_t)64 << 20)

enum {
	OPT_FORMAT = 256,
	OPT_KEEP,
};

static const char *format_word(size_t i, const char **help)
{
	static const char *const words[][2] = {
		{ "text", "a table per interval" },
		{ "json", "one JSON object per interval, a line each" },
	};

	if (i >= ARRAY_SIZE(words))
		return NULL;
	*help = words[i][1];
	return words[i][0];
}

static const struct cmd_option top_options[] = {
	{ NULL, 0, 0, NULL, "Target:", NULL },
	{ "pid", 'p', OPTION_ARG, " <pid,...>", "watch running processes and their new threads",
	  NULL },
	{ "tid", 't', OPTION_ARG, " <tid,...>", "watch threads", NULL },
	{ "all-cpus", 'a', OPTION_NO_ARG, NULL, "every task on every CPU", NULL },
	{ NULL, 0, 0, NULL, "Display:", NULL },
	{ "delay", 'd', OPTION_ARG, " <secs>", "seconds an interval lasts (default 1)", NULL },
	{ "batch", 'b', OPTION_NO_ARG, NULL, "print each interval to standard output, no screen",
	  NULL },
	{ "iterations", 'n', OPTION_ARG, " <count>", "stop after this many intervals", NULL },
	{ "format", OPT_FORMAT, OPTION_ARG, " <fmt>", "batch output:", format_word },
	{ "output", 'o', OPTION_ARG, " <file>",
	  "where the 's' key saves the last seconds\n(default wallprof-top.data, numbered)", NULL },
	{ "keep", OPT_KEEP, OPTION_ARG, " <secs>",
	  "seconds the 's' key saves (default 30; 0: no\nflight recorder)", NULL },
	COMMON_OPTIONS("colour: auto (default), always, never"),
};

void top_usage(FILE *out)
{
	options_usage(out,
		      "usage: wallprof top [<options>] -p <pid>[,<pid>...] | -t <tid>[,<tid>...] | -a\n"
		      "   or: wallprof top [<options>] [--] <command> [<args>...]\n"
		      "\n",
		      top_options, ARRAY_SIZE(top_options));
}

static double pct(uint64_t ns, uint64_t of)
{
	return of ? 100.0 * (double)ns / (double)of : 0;
}


static const char *waker_kind_word(uint32_t kind)
{
	switch (kind) {
	case WP_WAKER_INTERRUPT:
		return "interrupt";
	case WP_WAKER_TIMER:
		return "timer";
	case WP_WAKER_IDLE:
		return "idle";
	default:
		return "thread";
	}
}

/* Rows sorted as shown by default: on-CPU, then waiting for a CPU, then wall. */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	wp_quote_puts(f, s, WP_QUOTE_JSON);
	fputc('"', f);
}

static void print_json(struct top *t, const struct wp_mon_snapshot *s,
		       const struct wp_mon_row *rows)
{
	uint64_t len = s->end_ns - s->start_ns;
	double secs = (double)len / 1e9;
	FILE *f = stdout;

	fprintf(f, "{\"interval\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"seconds\":%.6f,\"lost\":%" PRIu64 ",\"wakeups\":%s,\"threads\":[",
		s->index, s->start_ns, s->end_ns, secs, s->lost, s->wakeups ? "true" : "false");
	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct wp_mon_row *r = &rows[i];
		uint64_t blocked = wp_mon_row_blocked(r);
		char frame[512];

		fprintf(f, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":", i ? "," : "",
			r->pid, r->tid);
		json_str(f, r->comm);
		fprintf(f, ",\"on_cpu_pct\":%.2f,\"runnable_pct\":%.2f,\"preempted_pct\":%.2f,"
			"\"blocked_pct\":%.2f,\"blocked_kind_pct\":{",
			pct(r->on_ns, len), pct(r->runnable_ns, len), pct(r->preempted_ns, len),
			pct(blocked, len));
		for (int k = 0; k < WP_BLOCK_KINDS; k++)
			fprintf(f, "%s\"%s\":%.2f", k ? "," : "", wp_block_kind_name(k),
				pct(r->blocked_ns[k], len));
		fprintf(f, "},\"on_cpu_ns\":%" PRIu64 ",\"runnable_ns\":%" PRIu64
			",\"preempted_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64
			",\"switches_per_s\":%.1f,\"voluntary\":%" PRIu64 ",\"involuntary\":%" PRIu64
			",\"samples\":%" PRIu64 ",\"exited\":%s,\"approximate\":%s,"
			"\"runnable_estimated_ns\":%" PRIu64 ",\"runnable_unknown_ns\":%" PRIu64
			",\"anchored\":%s,\"on_cpu_records_ns\":%" PRIu64 ",\"kernel_offset_ns\":%"
			PRIu64 ",\"top_waker\":",
			r->on_ns, r->runnable_ns, r->preempted_ns, blocked,
			secs > 0 ? (double)r->switches / secs : 0, r->voluntary, r->involuntary,
			r->samples, r->exited ? "true" : "false", r->approximate ? "true" : "false",
			r->runnable_estimated_ns, r->runnable_unknown_ns,
			r->anchored ? "true" : "false", r->anchored ? r->on_records_ns : r->on_ns,
			r->kernel_offset_ns);
		if (r->nr_wakers) {
			const struct wp_mon_waker *w = &r->wakers[0];

			fprintf(f, "{\"kind\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":",
				waker_kind_word(w->kind), w->pid, w->tid);
			json_str(f, w->comm);
			fprintf(f, ",\"blocked_ns\":%" PRIu64 ",\"count\":%" PRIu64 "}", w->ns,
				w->count);
		} else {
			fputs("null", f);
		}
		fputs(",\"wait_frame\":", f);
		if (r->wait_stack >= 0) {
			const struct wp_mon_stack *ws = &r->stacks[r->wait_stack];
			const char *names[16];
			bool kernel[16];
			unsigned int n;

			json_str(f, wp_monitor_wait_frame(t->mon, ws->stack, frame, sizeof(frame)));
			fprintf(f, ",\"wait_kind\":\"%s\",\"wait_ns\":%" PRIu64 ",\"wait_stack\":[",
				wp_block_kind_name(ws->kind), ws->ns);
			n = wp_monitor_frames(t->mon, ws->stack, names, kernel, 16);
			for (unsigned int j = 0; j < n; j++) {
				fputs(j ? "," : "", f);
				json_str(f, names[j]);
			}
			fputc(']', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static void print_text(struct top *t, const struct wp_mon_snapshot *s,
		       const struct wp_mon_row *rows)
{
	uint64_t len = s->end_ns - s->start_ns;
	double secs = (double)len / 1e9;
	FILE *f = stdout;

	fprintf(f, "wallprof top: interval %" PRIu64 ", %.3f s, %zu threads%s\n", s->index, secs,
		s->nr_rows, s->lost ? ", records lost" : "");
	fprintf(f, "%7s %7s %-15s %5s %5s %5s %5s %5s %5s %5s %5s %5s %7s  %-22s %s\n", "PID",
		"TID", "COMM", "ON%", "RUN%", "PRE%", "BLK%", "LOCK", "IO", "SLEEP", "NET", "OTHER",
		"SW/s", "WAKER", "WAITS IN");
	for (size_t i = 0; i < s->nr_rows; i++) {
		const struct wp_mon_row *r = &rows[i];
		char q[WP_QUOTE_SIZE(16)], wbuf[96], frame[512], qf[WP_QUOTE_SIZE(120)], run[16];
		const char *waker = r->nr_wakers ? wp_mon_waker_name(&r->wakers[0], wbuf, sizeof(wbuf)) :
				    "-";

		frame[0] = '\0';
		if (r->wait_stack >= 0)
			wp_monitor_wait_frame(t->mon, r->stacks[r->wait_stack].stack, frame,
					      sizeof(frame));
		frame[120] = '\0';
		fprintf(f, "%7" PRIu32 " %7" PRIu32 " %-15s %5.1f %5s %5.1f %5.1f %5.1f %5.1f %5.1f "
			"%5.1f %5.1f %7.0f  %-22s %s%s%s\n", r->pid, r->tid,
			wp_quote(q, sizeof(q), r->comm, WP_QUOTE_TEXT), pct(r->on_ns, len),
			wp_mon_runnable_pct(r, len, run, sizeof(run)), pct(r->preempted_ns, len),
			pct(wp_mon_row_blocked(r), len), pct(r->blocked_ns[WP_BLOCK_LOCK], len),
			pct(r->blocked_ns[WP_BLOCK_IO], len), pct(r->blocked_ns[WP_BLOCK_SLEEP], len),
			pct(r->blocked_ns[WP_BLOCK_NET], len), pct(r->blocked_ns[WP_BLOCK_OTHER], len),
			secs > 0 ? (double)r->switches / secs : 0, waker,
			frame[0] ? wp_quote(qf, sizeof(qf), frame, WP_QUOTE_TEXT) : "-",
			r->exited ? "  [exited]" : "", r->approximate ? "  [records lost]" : "");
	}
	fputc('\n', f);
}

/* Wake the session's main thread: it stops the recording at a signal. */
static void top_stop(void)
{
	kill(getpid(), SIGTERM);
}

/* Each interval: printed (batch), or handed to the screen. */
static int on_interval(void *arg, const struct wp_mon_snapshot *s)
{
	struct top *t = arg;
	struct wp_mon_row *rows;

	if (!t->batch)
		return top_view_interval(t, s);
	rows = malloc((s->nr_rows ? s->nr_rows : 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	memcpy(rows, s->rows, s->nr_rows * sizeof(*rows));
	qsort(rows, s->nr_rows, sizeof(*rows), wp_mon_row_cmp);
	if (t->json)
		print_json(t, s, rows);
	else
		print_text(t, s, rows);
	free(rows);
	fflush(stdout);
	t->shown++;
	if (t->count && t->shown >= t->count) {
		top_stop();
		return 1;
	}
	return 0;
}

static int mon_start(void *arg, const struct wp_meta *m)
{
	struct top *t = arg;

	return wp_monitor_start(t->mon, m);
}

static void mon_saved(void *arg, const char *name)
{
	top_view_saved(arg, name);
}

static int mon_records(void *arg, const void *buf, size_t len, uint64_t round_ns)
{
	struct top *t = arg;
	int err = wp_monitor_records(t->mon, buf, len, round_ns);

	/* Stopping is not an error of the recording. */
	return err > 0 ? 0 : err;
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .delay = 1.0, .keep = TOP_KEEP, .stop = top_stop };
	struct wp_record_monitor mon = { .start = mon_start, .records = mon_records,
					 .saved = mon_saved, .arg = &t };
	struct wp_record_opts o = {
		.events = {
			.event = "cpu-clock",
			.freq = TOP_FREQ,
			.callgraph = WP_CALLGRAPH_DWARF,
			.stack_size = TOP_STACK,
			.off_cpu = true,
			.switch_stack_budget = TOP_SWITCH_STACKS,
		},
		.unwind_live = true,
		.quiet = true,
		.monitor = &mon,
		.flight_no_final = true,
		.flight_memory_max = TOP_FLIGHT_MEMORY,
		.argc = argc + 1,
	};
	struct option_parser parser;
	struct common_opts co = { 0 };
	uint64_t v;
	int c, ret;

	o.argv = argv - 1;
	t.output = "wallprof-top.data";
	if (options_parser_init(&parser, top_options, ARRAY_SIZE(top_options), "+:"))
		return WP_EXIT_FAILURE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, parser.shortopts, parser.longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 't':
		case 'a':
			if (target_option("top", c, optarg, &o, &ret) && ret)
				goto out;
			break;
		case 'd':
			if (wp_parse_seconds(optarg, &t.delay) || t.delay < 0.1 || t.delay > 3600) {
				ret = usage_error("top", "--delay: '%s' is not a number of seconds from "
						  "0.1 to 3600", optarg);
				goto out;
			}
			break;
		case 'b':
			t.batch = true;
			break;
		case 'n':
			if (wp_parse_u64(optarg, &v) || !v || v > 1000000000) {
				ret = usage_error("top", "--iterations: '%s' is not a count of "
						  "intervals from 1", optarg);
				goto out;
			}
			t.count = v;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json")) {
				t.json = true;
			} else if (strcmp(optarg, "text")) {
				ret = unknown_word("top", "--format", "format", format_word, optarg);
				goto out;
			}
			break;
		case 'o':
			if (!*optarg) {
				ret = usage_error("top", "--output: the file name is empty");
				goto out;
			}
			t.output = optarg;
			t.output_given = true;
			break;
		case OPT_KEEP:
			if (wp_parse_seconds(optarg, &t.keep) || t.keep < 0 ||
			    (t.keep > 0 && t.keep < 1) || t.keep > 3600) {
				ret = usage_error("top", "--keep: '%s' is not 0 or a number of seconds "
						  "from 1 to 3600", optarg);
				goto out;
			}
			break;
		case 'h':
			top_usage(stdout);
			ret = WP_EXIT_OK;
			goto out;
		default:
			ret = common_option("top", c, argv, &co);
			if (ret)
				goto out;
			break;
		}
	}
	if (optind < argc)
		o.command = argv + optind;
	if (!o.command && !o.nr_pids && !o.nr_tids && !o.events.cpu_wide) {
		ret = usage_error("top", "nothing to watch: give -p, -t, -a or a command");
		goto out;
	}
	if ((o.nr_pids != 0) + (o.nr_tids != 0) + (o.command != NULL) + o.events.cpu_wide > 1) {
		ret = usage_error("top", "give only one of a command, -p, -t and -a");
		goto out;
	}
	if (t.json && !t.batch) {
		ret = usage_error("top", "--format applies to batch mode (-b)");
		goto out;
	}
	if (t.output_given && (t.batch || t.keep == 0)) {
		ret = usage_error("top", "--output names what the 's' key saves: it needs the full "
				  "screen (no -b) and --keep above 0");
		goto out;
	}
	if (!t.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		ret = usage_error("top", "the full screen view needs a terminal: use -b for batch "
				  "mode");
		goto out;
	}
	o.events.enable_on_exec = o.command != NULL;
	o.events.enable_on_open = !o.command && !o.events.cpu_wide;
	if (!t.batch && t.keep > 0) {
		o.flight_recorder = t.keep;
		o.output = t.output;
		o.force = false;
		o.compress_level = 1;
	}
	if (co.verbose)
		wp_log_set_level(WP_LOG_DEBUG);
	else
		wp_log_set_level(WP_LOG_WARN);
	ret = wp_monitor_new((uint64_t)(t.delay * 1e9), on_interval, &t, &t.mon);
	if (ret) {
		wp_error("cannot start: %s", strerror(-ret));
		ret = WP_EXIT_FAILURE;
		goto out;
	}
	/* The threads' own figures at each interval's end anchor its rows. */
	o.clock_every = t.delay;
	wp_monitor_expect_clocks(t.mon);
	if (!t.batch) {
		ret = top_view_start(&t, co.color);
		if (ret) {
			ret = WP_EXIT_FAILURE;
			goto out;
		}
	}
	ret = wp_record_run(&o);
	if (!t.batch)
		top_view_end(&t);
	/* Stopped by its count, or by q: what was asked was done. */
	if (t.batch ? (t.count && t.shown >= t.count) : t.quit_key)
		ret = WP_EXIT_OK;
	else if (ret && !o.command)
		ret = t.shown ? WP_EXIT_OK : WP_EXIT_FAILURE;
out:
	wp_monitor_free(t.mon);
	free(o.pids);
	free(o.tids);
	return ret;
}
