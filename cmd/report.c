/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c: `wallprof report`: parse options, run the analysis, format it.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "builtin.h"
#include "datafile.h"
#include "dump.h"
#include "format.h"
#include "log.h"
#include "quote.h"
#include "target.h"
#include "util.h"
#include "view.h"

void report_usage(FILE *out)
{
	fprintf(out,
		"usage: wallprof report [<options>]\n"
		"\n"
		"Every thread's wall time split into on-CPU, blocked and preempted time,\n"
		"and the stacks that explain it.\n"
		"\n"
		"Input and output:\n"
		"  -i, --input <file>       data file to read (default wallprof.data)\n"
		"  -o, --output <file>      write the report to a file (default stdout)\n"
		"      --format <fmt>       text (default), hist, folded or json\n"
		"  -D, --dump               print every record, one line each\n"
		"What to show:\n"
		"      --mode <mode>        time that weighs stacks: wall (default), on, off,\n"
		"                           blocked, runnable or preempted\n"
		"      --sort <key>         text: order threads by wall (default), on, off,\n"
		"                           blocked, runnable, preempted or tid\n"
		"      --top <n>            text, json: number of stacks (default 10)\n"
		"      --per-thread         hist: one set of histograms per thread\n"
		"      --unit <unit>        folded: weights in ns, us (default) or ms\n"
		"      --no-thread-root     folded: no thread name as the root frame\n"
		"      --wakers             folded: the waker's stack after each blocked one\n"
		"      --lines              add file:line to frames\n"
		"Filters (every format):\n"
		"      --pid <pid,...>      only these processes\n"
		"      --tid <tid,...>      only these threads\n"
		"      --comm <regex>       only threads whose name matches\n"
		"      --waker-comm <regex> only blocked time that matching wakers ended\n"
		"      --time <start,end>   only this window, in seconds from record start\n"
		"      --min-block <usec>   no stacks for shorter off-CPU intervals\n"
		"      --grep <regex>       only stacks with a matching frame\n"
		"      --no-kernel          drop kernel frames\n"
		"      --no-user            drop user frames\n"
		"  -q, --quiet              no progress bar\n"
		"      --color[=<when>]     colour: auto (default: on a terminal), always, never\n"
		"  -v, --verbose            more messages\n"
		"  -h, --help               this text\n");
}

enum {
	OPT_FORMAT = 256,
	OPT_MODE,
	OPT_SORT,
	OPT_TOP,
	OPT_PER_THREAD,
	OPT_UNIT,
	OPT_NO_THREAD_ROOT,
	OPT_LINES,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_TIME,
	OPT_MIN_BLOCK,
	OPT_GREP,
	OPT_NO_KERNEL,
	OPT_NO_USER,
	OPT_COLOR,
	OPT_WAKERS,
	OPT_WAKER_COMM,
};

static const struct option report_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "dump", no_argument, NULL, 'D' },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "unit", required_argument, NULL, OPT_UNIT },
	{ "no-thread-root", no_argument, NULL, OPT_NO_THREAD_ROOT },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "waker-comm", required_argument, NULL, OPT_WAKER_COMM },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "grep", required_argument, NULL, OPT_GREP },
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
	{ "no-user", no_argument, NULL, OPT_NO_USER },
	{ "quiet", no_argument, NULL, 'q' },
	{ "color", optional_argument, NULL, OPT_COLOR },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

typedef int (*format_fn)(struct wp_view *v, FILE *out);

/* Index of word in a NULL-terminated list, or -1. */
static int pick(const char *word, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(word, list[i]))
			return i;
	return -1;
}

/* Whether an extended regular expression compiles (checked before reading). */
static bool regex_ok(const char *re)
{
	regex_t r;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return false;
	regfree(&r);
	return true;
}

static int parse_window(const char *arg, struct wp_analysis_opts *ao)
{
	char buf[64], *comma;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = '\0';
	if (wp_parse_seconds(buf, &ao->window_start_s) ||
	    wp_parse_seconds(comma + 1, &ao->window_end_s) ||
	    ao->window_end_s <= ao->window_start_s)
		return -EINVAL;
	ao->has_window = true;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const char *const formats[] = { "text", "hist", "folded", "json", NULL };
	static const format_fn format_fns[] = { wp_format_text, wp_format_hist,
						wp_format_folded, wp_format_json };
	static const char *const modes[] = { "wall", "on", "off", "blocked", "preempted",
					     "runnable", NULL };
	static const char *const sorts[] = { "wall", "on", "off", "blocked", "preempted", "tid",
					     "runnable", NULL };
	static const char *const units[] = { "ns", "us", "ms", NULL };
	static const uint64_t unit_ns[] = { 1, 1000, 1000000 };
	struct wp_view_opts vo = { .mode = WP_MODE_WALL, .sort = WP_SORT_WALL, .top = 10,
				   .unit_ns = 1000, .thread_root = true };
	struct wp_analysis_opts ao = { 0 };
	const char *input = "wallprof.data", *output = NULL;
	int c, idx, format = 0, ret = WP_EXIT_FAILURE;
	enum wp_color_mode color = WP_COLOR_AUTO;
	bool dump = false, quiet = false;
	struct wp_reader *reader = NULL;
	char *unfinished = NULL;
	bool running = false;
	struct wp_analysis an;
	char q[WP_QUOTE_MSG];
	struct wp_view v;
	uint64_t val;
	FILE *out = stdout;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:o:Dqvh", report_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_FORMAT:
			format = pick(optarg, formats);
			if (format < 0) {
			ret = usage_error("report", "--format: '%s' is not text, hist, folded or json",
					  optarg);
			goto out_free;
		}
			break;
		case 'D':
			dump = true;
			break;
		case OPT_MODE:
			idx = pick(optarg, modes);
			if (idx < 0) {
				ret = usage_error("report", "--mode: '%s' is not wall, on, off, blocked, runnable or preempted",
						  optarg);
				goto out_free;
			}
			vo.mode = (enum wp_mode)idx;
			break;
		case OPT_SORT:
			idx = pick(optarg, sorts);
			if (idx < 0) {
				ret = usage_error("report", "--sort: '%s' is not wall, on, off, blocked, runnable, preempted or tid",
						  optarg);
				goto out_free;
			}
			vo.sort = (enum wp_sort)idx;
			break;
		case OPT_TOP:
			if (wp_parse_u64(optarg, &val) || !val || val > 1000000) {
				ret = usage_error("report", "--top: '%s' is not a number from 1 to 1000000",
						  optarg);
				goto out_free;
			}
			vo.top = (unsigned int)val;
			break;
		case OPT_PER_THREAD:
			vo.per_thread = true;
			break;
		case OPT_UNIT:
			idx = pick(optarg, units);
			if (idx < 0) {
				ret = usage_error("report", "--unit: '%s' is not ns, us or ms", optarg);
				goto out_free;
			}
			vo.unit_ns = unit_ns[idx];
			break;
		case OPT_NO_THREAD_ROOT:
			vo.thread_root = false;
			break;
		case OPT_LINES:
			ao.lines = true;
			break;
		case OPT_PID:
			free(vo.pids);
			if (wp_parse_id_list(optarg, &vo.pids, &vo.nr_pids)) {
				ret = usage_error("report", "--pid: '%s' is not a list of process ids",
						  optarg);
				goto out_free;
			}
			break;
		case OPT_TID:
			free(vo.tids);
			if (wp_parse_id_list(optarg, &vo.tids, &vo.nr_tids)) {
				ret = usage_error("report", "--tid: '%s' is not a list of thread ids",
						  optarg);
				goto out_free;
			}
			break;
		case OPT_COMM:
			if (!regex_ok(optarg)) {
				ret = usage_error("report", "--comm: '%s' is not a valid regular expression",
						  optarg);
				goto out_free;
			}
			vo.comm = optarg;
			break;
		case OPT_WAKER_COMM:
			if (!regex_ok(optarg)) {
				ret = usage_error("report", "--waker-comm: '%s' is not a valid regular expression",
						  optarg);
				goto out_free;
			}
			vo.waker_comm = optarg;
			break;
		case OPT_WAKERS:
			vo.wakers = true;
			break;
		case OPT_TIME:
			if (parse_window(optarg, &ao)) {
				ret = usage_error("report", "--time: '%s' is not START,END in seconds with START < END",
						  optarg);
				goto out_free;
			}
			break;
		case OPT_MIN_BLOCK:
			if (wp_parse_u64(optarg, &val) || val > UINT64_MAX / 1000) {
				ret = usage_error("report", "--min-block: '%s' is not a number of microseconds",
						  optarg);
				goto out_free;
			}
			ao.min_block_ns = val * 1000;
			break;
		case OPT_GREP:
			if (!regex_ok(optarg)) {
				ret = usage_error("report", "--grep: '%s' is not a valid regular expression",
						  optarg);
				goto out_free;
			}
			vo.grep = optarg;
			break;
		case OPT_NO_KERNEL:
			ao.no_kernel = true;
			break;
		case OPT_NO_USER:
			ao.no_user = true;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_COLOR:
			idx = parse_color(optarg);
			if (idx < 0) {
				ret = usage_error("report", "--color: '%s' is not auto, always or never",
						  optarg);
				goto out_free;
			}
			color = (enum wp_color_mode)idx;
			break;
		case 'v':
			wp_log_set_level(WP_LOG_DEBUG);
			break;
		case 'h':
			report_usage(stdout);
			ret = WP_EXIT_OK;
			goto out_free;
		case ':':
			ret = usage_error("report", "option '%s' needs a value", argv[optind - 1]);
			goto out_free;
		default:
			ret = usage_error("report", "unknown option '%s'", argv[optind - 1]);
			goto out_free;
		}
	}
	if (optind < argc) {
		ret = usage_error("report", "unexpected argument '%s'", argv[optind]);
		goto out_free;
	}
	ao.progress = !quiet && isatty(STDERR_FILENO);
	/* A recorder that was killed left its data under the temporary name. */
	if (access(input, F_OK) && errno == ENOENT &&
	    !wp_writer_find_unfinished(input, &unfinished, &running)) {
		char q2[WP_QUOTE_MSG];

		wp_quote(q, sizeof(q), input, WP_QUOTE_TEXT);
		wp_quote(q2, sizeof(q2), unfinished, WP_QUOTE_TEXT);
		wp_warn("'%s' does not exist; reading '%s', %s", q, q2,
			running ? "which a running wallprof is still recording" :
				  "an unfinished recording left by a wallprof that was killed");
		input = unfinished;
	}
	/* The input is read first, so a bad input leaves no empty output file. */
	if (dump ? wp_reader_open(input, &reader) : wp_analysis_run(input, &ao, &an))
		goto out_free;
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			wp_error("cannot create '%s': %s", wp_quote(q, sizeof(q), output, WP_QUOTE_TEXT),
				 strerror(errno));
			out = stdout;
			if (!dump)
				wp_analysis_release(&an);
			goto out_free;
		}
	}
	vo.color = use_color(color, out);
	if (dump) {
		ret = wp_dump_reader(reader, input, out) ? WP_EXIT_FAILURE : WP_EXIT_OK;
		goto out_close;
	}
	if (!wp_view_init(&v, &an, &vo)) {
		ret = format_fns[format](&v, out) ? WP_EXIT_FAILURE : WP_EXIT_OK;
		/* A damaged file still gets its report, and a failing status. */
		if (an.damaged)
			ret = WP_EXIT_FAILURE;
		wp_view_release(&v);
	}
	wp_analysis_release(&an);
out_close:
	if (out != stdout && fclose(out)) {
		wp_error("cannot write '%s': %s", wp_quote(q, sizeof(q), output, WP_QUOTE_TEXT),
			 strerror(errno));
		ret = WP_EXIT_FAILURE;
	}
out_free:
	wp_reader_close(reader);
	free(unfinished);
	free(vo.pids);
	free(vo.tids);
	return ret;
}
