/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c: `wallprof report`: parse options, run the analysis, format it.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "builtin.h"
#include "critpath.h"
#include "datafile.h"
#include "dump.h"
#include "export_clickhouse.h"
#include "format.h"
#include "log.h"
#include "options.h"
#include "quote.h"
#include "target.h"
#include "util.h"
#include "view.h"
#include "waitgraph.h"
#include "waits.h"

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
	OPT_WAKERS,
	OPT_WAKER_COMM,
	OPT_INVERTED,
	OPT_TITLE,
	OPT_DIFF,
	OPT_NO_CACHE,
	OPT_THREADS,
	OPT_BY,
	OPT_STACKS,
	OPT_CRITICAL_PATH,
	OPT_WAIT_THRESHOLD,
	OPT_WAIT_GROUPS,
	OPT_FROM,
	OPT_HOST,
	OPT_LABEL,
	OPT_SINCE,
	OPT_UNTIL,
};

/* The words of --format, --mode and --sort, from the tables that own them. */
static const char *format_word(size_t i, const char **help)
{
	*help = wp_formats[i].help;
	return wp_formats[i].name;
}

static const char *mode_word(size_t i, const char **help)
{
	*help = wp_modes[i].help;
	return wp_modes[i].name;
}

static const char *sort_word(size_t i, const char **help)
{
	*help = wp_sorts[i].help;
	return wp_sorts[i].name;
}

static const char *by_word(size_t i, const char **help)
{
	*help = wp_groupings[i].help;
	return wp_groupings[i].name;
}

static const char *stacks_word(size_t i, const char **help)
{
	*help = wp_stack_styles[i].help;
	return wp_stack_styles[i].name;
}

static const struct cmd_option report_options[] = {
	{ NULL, 0, 0, NULL, "Input and output:", NULL },
	{ "input", 'i', OPTION_ARG, " <file>", "data file to read (default wallprof.data)", NULL },
	{ "output", 'o', OPTION_ARG, " <file>", "write the report to a file (default stdout)", NULL },
	{ "format", OPT_FORMAT, OPTION_ARG, " <fmt>", "the form of the report ('help' lists them):",
	  format_word },
	{ "dump", 'D', OPTION_NO_ARG, NULL, "print every record, one line each", NULL },
	{ "diff", OPT_DIFF, OPTION_ARG, " <base>",
	  "text, flamegraph: what changed since the recording base", NULL },
	{ "no-cache", OPT_NO_CACHE, OPTION_NO_ARG, NULL,
	  "neither use nor keep names in the symbol cache", NULL },
	{ NULL, 0, 0, NULL, "What to show:", NULL },
	{ "mode", OPT_MODE, OPTION_ARG, " <mode>", "time that weighs stacks:", mode_word },
	{ "sort", OPT_SORT, OPTION_ARG, " <key>", "text: order threads by:", sort_word },
	{ "top", OPT_TOP, OPTION_ARG, " <n>", "text, json: number of stacks (default 10)", NULL },
	{ "threads", OPT_THREADS, OPTION_ARG, " <n|all>",
	  "text: rows of the thread table (default 24)", NULL },
	{ "by", OPT_BY, OPTION_ARG, " <rows>", "text: the thread table's rows:", by_word },
	{ "stacks", OPT_STACKS, OPTION_ARG, " <style>", "text: how stacks are shown:",
	  stacks_word },
	{ "per-thread", OPT_PER_THREAD, OPTION_NO_ARG, NULL,
	  "hist: one set of histograms per thread", NULL },
	{ "unit", OPT_UNIT, OPTION_ARG, " <unit>", "folded: weights in ns, us (default) or ms",
	  NULL },
	{ "no-thread-root", OPT_NO_THREAD_ROOT, OPTION_NO_ARG, NULL,
	  "folded, flamegraph: no thread name as the root frame", NULL },
	{ "wakers", OPT_WAKERS, OPTION_NO_ARG, NULL,
	  "folded: the waker's stack after each blocked one", NULL },
	{ "lines", OPT_LINES, OPTION_NO_ARG, NULL, "add file:line to frames", NULL },
	{ "inverted", OPT_INVERTED, OPTION_NO_ARG, NULL,
	  "flamegraph: an icicle graph, rooted at the leaves", NULL },
	{ "title", OPT_TITLE, OPTION_ARG, " <text>", "flamegraph: the title", NULL },
	{ NULL, 0, 0, NULL, "Why it waited:", NULL },
	{ "critical-path", OPT_CRITICAL_PATH, OPTION_ARG, " <tid[@start-end]>",
	  "text, flamegraph, trace, json: what the thread waited for, from waker to waker", NULL },
	{ "wait-threshold", OPT_WAIT_THRESHOLD, OPTION_ARG, " <percent>",
	  "waitgraph: leave out edges under this share of the window (default 1)", NULL },
	{ "wait-groups", OPT_WAIT_GROUPS, OPTION_ARG, " <how>",
	  "waitgraph: threads as one node: stacks (default), name, none", NULL },
	{ NULL, 0, 0, NULL, "From ClickHouse (wallprof export), instead of a file:", NULL },
	{ "from", OPT_FROM, OPTION_ARG, " <url>",
	  "folded: the rows exported there, added up by the server", NULL },
	{ "host", OPT_HOST, OPTION_ARG, " <name>", "--from: only this host's rows (repeat for more)",
	  NULL },
	{ "label", OPT_LABEL, OPTION_ARG, " <key=value>",
	  "--from: only rows with this label (repeat: all of them)", NULL },
	{ "since", OPT_SINCE, OPTION_ARG, " <time>",
	  "--from: files that end at or after: UTC date and time, epoch\nseconds, or -N{s,m,h,d} ago", NULL },
	{ "until", OPT_UNTIL, OPTION_ARG, " <time>", "--from: files that begin before (as --since)",
	  NULL },
	{ NULL, 0, 0, NULL, "Filters (every format):", NULL },
	{ "pid", OPT_PID, OPTION_ARG, " <pid,...>", "only these processes", NULL },
	{ "tid", OPT_TID, OPTION_ARG, " <tid,...>", "only these threads", NULL },
	{ "comm", OPT_COMM, OPTION_ARG, " <regex>", "only threads whose name matches", NULL },
	{ "waker-comm", OPT_WAKER_COMM, OPTION_ARG, " <regex>",
	  "only blocked time that matching wakers ended", NULL },
	{ "time", OPT_TIME, OPTION_ARG, " <start,end>",
	  "only this window, in seconds from record start", NULL },
	{ "min-block", OPT_MIN_BLOCK, OPTION_ARG, " <usec>",
	  "no stacks for shorter off-CPU intervals", NULL },
	{ "grep", OPT_GREP, OPTION_ARG, " <regex>", "only stacks with a matching frame", NULL },
	{ "no-kernel", OPT_NO_KERNEL, OPTION_NO_ARG, NULL, "drop kernel frames", NULL },
	{ "no-user", OPT_NO_USER, OPTION_NO_ARG, NULL, "drop user frames", NULL },
	{ "quiet", 'q', OPTION_NO_ARG, NULL, "no progress bar", NULL },
	COMMON_OPTIONS("colour: auto (default: on a terminal), always, never"),
};

void report_usage(FILE *out)
{
	options_usage(out,
		      "usage: wallprof report [<options>]\n"
		      "\n"
		      "Every thread's wall time split into on-CPU, blocked and preempted time,\n"
		      "and the stacks that explain it.\n"
		      "\n",
		      report_options, ARRAY_SIZE(report_options));
}

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

/* --critical-path TID[@START-END]: the thread and the window (seconds from record start). */
struct cp_request {
	bool given;
	uint32_t tid;
	bool has_window;
	double start_s, end_s;
};

static int parse_critical_path(const char *arg, struct cp_request *r)
{
	char buf[96], *at, *dash;
	uint64_t tid;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	at = strchr(buf, '@');
	if (at) {
		*at++ = '\0';
		dash = strchr(at, '-');
		if (!dash)
			return -EINVAL;
		*dash++ = '\0';
		if (wp_parse_seconds(at, &r->start_s) || wp_parse_seconds(dash, &r->end_s) ||
		    r->end_s <= r->start_s)
			return -EINVAL;
		r->has_window = true;
	}
	if (wp_parse_u64(buf, &tid) || !tid || tid > UINT32_MAX)
		return -EINVAL;
	r->tid = (uint32_t)tid;
	r->given = true;
	return 0;
}

/*
 * The critical path asked for, into *cp over the indexed timeline w: the
 * thread with that tid whose window holds the start (the latest such).
 */
static int critical_path(const struct wp_analysis *an, const struct wp_waits *w,
			 const struct cp_request *r, struct wp_critpath *cp)
{
	uint64_t start = an->window_start, end = an->window_end;
	uint32_t serial;
	int err;

	if (r->has_window) {
		start = an->start_ns + (uint64_t)(r->start_s * 1e9);
		end = an->start_ns + (uint64_t)(r->end_s * 1e9);
	}
	serial = wp_waits_serial_at(w, r->tid, start);
	if (serial == WP_WAITS_NONE) {
		/* A thread born inside the window. */
		for (size_t i = 0; i < w->nr_threads; i++)
			if (w->threads[i].t && w->threads[i].t->tid == r->tid &&
			    w->threads[i].t->start_ns < end && w->threads[i].t->end_ns > start)
				serial = (uint32_t)i;
	}
	if (serial == WP_WAITS_NONE) {
		wp_error("--critical-path: the recording has no thread %" PRIu32 "%s", r->tid,
			 r->has_window ? " in that window" : "");
		return -ESRCH;
	}
	err = wp_critpath_compute(w, serial, start, end, cp);
	if (err == -ESRCH)
		wp_error("--critical-path: thread %" PRIu32 " has no time in that window%s", r->tid,
			 an->has_window ? " (and --time)" : "");
	else if (!err && r->has_window && (cp->start_ns != start || cp->end_ns != end))
		wp_info("--critical-path: thread %" PRIu32 "'s time in the recording%s is %.3f s "
			"to %.3f s of the window asked for", r->tid,
			an->has_window ? " and --time" : "",
			(double)(cp->start_ns - an->start_ns) / 1e9,
			(double)(cp->end_ns - an->start_ns) / 1e9);
	return err;
}

/*
 * --diff: the base recording, read through the same pipeline, seen with
 * the same view options; then the format with both.
 */
static int report_diff(struct wp_view *v, struct wp_analysis *base_an,
		       const struct wp_view_opts *vo, const struct wp_format *format, FILE *out)
{
	struct wp_view base;
	int ret = WP_EXIT_FAILURE;

	if (!wp_view_init(&base, base_an, vo)) {
		v->base = &base;
		ret = format->write(v, out) ? WP_EXIT_FAILURE : WP_EXIT_OK;
		v->base = NULL;
		if (base_an->damaged)
			ret = WP_EXIT_FAILURE;
		wp_view_release(&base);
	}
	return ret;
}

/* --from: the report computed by the server from exported rows. */
struct from_request {
	const char *url;
	const char *hosts[WP_CH_LABELS_MAX];
	struct wp_ch_label labels[WP_CH_LABELS_MAX];
	struct wp_ch_filter filter;
};

static int report_from(const struct from_request *fr, const struct wp_view_opts *vo,
		       const char *output)
{
	struct wp_ch *ch;
	FILE *out = stdout;
	int ret = WP_EXIT_FAILURE;

	if (wp_ch_open(fr->url, &ch))
		return WP_EXIT_FAILURE;
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			wp_error("cannot create '%s': %s", wp_quoted(output), strerror(errno));
			wp_ch_close(ch);
			return WP_EXIT_FAILURE;
		}
	}
	if (!wp_ch_folded(ch, &fr->filter, vo->mode, vo->unit_ns, vo->thread_root, vo->wakers,
			  out))
		ret = WP_EXIT_OK;
	if (out != stdout && fclose(out)) {
		wp_error("cannot write '%s': %s", wp_quoted(output), strerror(errno));
		ret = WP_EXIT_FAILURE;
	}
	wp_ch_close(ch);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	static const char *const units[] = { "ns", "us", "ms", NULL };
	static const char *const wait_groups[] = { "stacks", "name", "none", NULL };
	static const uint64_t unit_ns[] = { 1, 1000, 1000000 };
	struct wp_view_opts vo = { .mode = (enum wp_mode)wp_modes[0].value,
				   .sort = WP_SORT_WALL, .top = 10,
				   .by = (enum wp_group_by)wp_groupings[0].value,
				   .rows = WP_TABLE_ROWS,
				   .unit_ns = 1000, .thread_root = true,
				   .wait_threshold = WP_WG_THRESHOLD,
				   .wait_grouping = WP_WG_GROUP_STACKS };
	const struct wp_format *format = &wp_formats[0];
	const struct wp_view_word *word;
	struct wp_analysis_opts ao = { 0 };
	const char *input = "wallprof.data", *output = NULL, *base_input = NULL;
	int c, idx, ret = WP_EXIT_FAILURE;
	struct option_parser parser;
	struct common_opts co = { 0 };
	bool dump = false;
	struct wp_reader *reader = NULL;
	char *unfinished = NULL;
	bool running = false;
	struct wp_analysis an, base_an;
	bool have_base = false;
	struct wp_view v;
	uint64_t val;
	FILE *out = stdout;
	struct cp_request cpr = { 0 };
	struct wp_critpath cp = { 0 };
	struct wp_waits waits = { 0 };
	bool have_waits = false;
	double pct;
	struct from_request fr = { 0 };
	bool input_given = false, format_given = false;

	if (options_parser_init(&parser, report_options, ARRAY_SIZE(report_options), ":"))
		return WP_EXIT_FAILURE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, parser.shortopts, parser.longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			input_given = true;
			break;
		case OPT_FROM:
			fr.url = optarg;
			break;
		case OPT_HOST:
			if (!optarg[0] || strlen(optarg) > 255 ||
			    fr.filter.nr_hosts == WP_CH_LABELS_MAX) {
				ret = usage_error("report", "--host: a name of 1 to 255 bytes, at most "
						  "%d of them", WP_CH_LABELS_MAX);
				goto out_free;
			}
			fr.hosts[fr.filter.nr_hosts++] = optarg;
			break;
		case OPT_LABEL:
			ret = parse_label("report", optarg, fr.labels, &fr.filter.nr_labels);
			if (ret)
				goto out_free;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (wp_ch_parse_time(optarg, wp_clock_ns(CLOCK_REALTIME) / NSEC_PER_SEC,
					     c == OPT_SINCE ? &fr.filter.since_s :
							      &fr.filter.until_s)) {
				ret = usage_error("report", "%s: '%s' is not a UTC date "
						  "(YYYY-MM-DD[ HH:MM[:SS]]), seconds since 1970, or "
						  "-N followed by s, m, h or d",
						  c == OPT_SINCE ? "--since" : "--until", optarg);
				goto out_free;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_FORMAT:
			format = wp_format_find(optarg);
			format_given = true;
			if (!format) {
				ret = unknown_word("report", "--format", "format", format_word, optarg);
				goto out_free;
			}
			break;
		case 'D':
			dump = true;
			break;
		case OPT_DIFF:
			base_input = optarg;
			break;
		case OPT_MODE:
			word = wp_view_word_find(wp_modes, optarg);
			if (!word) {
				ret = unknown_word("report", "--mode", "mode", mode_word, optarg);
				goto out_free;
			}
			vo.mode = (enum wp_mode)word->value;
			vo.mode_given = true;
			break;
		case OPT_SORT:
			word = wp_view_word_find(wp_sorts, optarg);
			if (!word) {
				ret = unknown_word("report", "--sort", "sort key", sort_word, optarg);
				goto out_free;
			}
			vo.sort = (enum wp_sort)word->value;
			vo.sort_given = true;
			break;
		case OPT_BY:
			word = wp_view_word_find(wp_groupings, optarg);
			if (!word) {
				ret = unknown_word("report", "--by", "grouping", by_word, optarg);
				goto out_free;
			}
			vo.by = (enum wp_group_by)word->value;
			break;
		case OPT_STACKS:
			word = wp_view_word_find(wp_stack_styles, optarg);
			if (!word) {
				ret = unknown_word("report", "--stacks", "style", stacks_word, optarg);
				goto out_free;
			}
			vo.stacks = (enum wp_stacks_style)word->value;
			break;
		case OPT_THREADS:
			if (!strcmp(optarg, "all")) {
				vo.rows = 0;
				break;
			}
			if (wp_parse_u64(optarg, &val) || !val || val > 1000000) {
				ret = usage_error("report", "--threads: '%s' is not 'all' or a number "
						  "from 1 to 1000000", optarg);
				goto out_free;
			}
			vo.rows = (unsigned int)val;
			break;
		case OPT_TOP:
			if (wp_parse_u64(optarg, &val) || !val || val > 1000000) {
				ret = usage_error("report", "--top: '%s' is not a number from 1 to 1000000",
						  optarg);
				goto out_free;
			}
			vo.top = (unsigned int)val;
			vo.top_given = true;
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
		case OPT_INVERTED:
			vo.inverted = true;
			break;
		case OPT_TITLE:
			vo.title = optarg;
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
		case OPT_NO_CACHE:
			ao.no_cache = true;
			break;
		case OPT_NO_USER:
			ao.no_user = true;
			break;
		case OPT_CRITICAL_PATH:
			if (parse_critical_path(optarg, &cpr)) {
				ret = usage_error("report", "--critical-path: '%s' is not TID or "
						  "TID@START-END (seconds from record start, START < END)",
						  optarg);
				goto out_free;
			}
			break;
		case OPT_WAIT_THRESHOLD:
			if (wp_parse_seconds(optarg, &pct) || pct > 100) {
				ret = usage_error("report", "--wait-threshold: '%s' is not a percentage "
						  "from 0 to 100", optarg);
				goto out_free;
			}
			vo.wait_threshold = pct / 100.0;
			break;
		case OPT_WAIT_GROUPS:
			idx = pick(optarg, wait_groups);
			if (idx < 0) {
				ret = usage_error("report", "--wait-groups: '%s' is not stacks, name or "
						  "none", optarg);
				goto out_free;
			}
			vo.wait_grouping = idx == 0 ? WP_WG_GROUP_STACKS :
					   idx == 1 ? WP_WG_GROUP_NAME : WP_WG_GROUP_NONE;
			break;
		case 'h':
			report_usage(stdout);
			ret = WP_EXIT_OK;
			goto out_free;
		default:
			idx = common_option("report", c, argv, &co);
			if (idx) {
				ret = idx;
				goto out_free;
			}
			break;
		}
	}
	common_log_level(&co);
	if (optind < argc) {
		ret = usage_error("report", "unexpected argument '%s'", argv[optind]);
		goto out_free;
	}
	if (!fr.url && (fr.filter.nr_hosts || fr.filter.nr_labels || fr.filter.since_s ||
			fr.filter.until_s)) {
		ret = usage_error("report", "--host, --label, --since and --until choose rows of "
				  "--from");
		goto out_free;
	}
	if (fr.url) {
		fr.filter.hosts = fr.hosts;
		fr.filter.labels = fr.labels;
		if (!format_given)
			format = wp_format_find("folded");
		if (!format || format->write != wp_format_folded)
			ret = usage_error("report", "--from: only --format folded is computed in "
					  "the server");
		else if (input_given || dump || base_input || cpr.given || vo.pids || vo.tids ||
			 vo.comm || vo.grep || vo.waker_comm || ao.has_window ||
			 ao.min_block_ns || ao.lines || ao.no_kernel || ao.no_user)
			ret = usage_error("report", "--from reads no file: -i, --dump, --diff, "
					  "--critical-path, --lines and the filters "
					  "(--pid ... --no-user) are not for it");
		else
			ret = report_from(&fr, &vo, output);
		goto out_free;
	}
	if (base_input && (dump || !wp_format_can_diff(format))) {
		ret = usage_error("report", "--diff: only the text and flamegraph formats compare "
				  "two recordings");
		goto out_free;
	}
	if (cpr.given && (dump || base_input || !(format->write == wp_format_text ||
						  format->write == wp_format_flamegraph ||
						  format->write == wp_format_trace ||
						  format->write == wp_format_json))) {
		ret = usage_error("report", "--critical-path: only the text, flamegraph, trace and "
				  "json formats show it");
		goto out_free;
	}
	ao.progress = !co.quiet && isatty(STDERR_FILENO);
	ao.frame_info = format->frame_info;
	ao.keep_timeline = format->timeline || cpr.given;
	/* A recorder that was killed left its data under the temporary name. */
	if (access(input, F_OK) && errno == ENOENT &&
	    !wp_writer_find_unfinished(input, &unfinished, &running)) {
		wp_warn("'%s' does not exist; reading '%s', %s", wp_quoted(input),
			wp_quoted(unfinished),
			running ? "which a running wallprof is still recording" :
				  "an unfinished recording left by a wallprof that was killed");
		input = unfinished;
	}
	/*
	 * Buffers of megabytes (the file's blocks) come and go while the
	 * report's threads map and unmap debug files: from the heap, so that
	 * freeing one is no munmap, which waits for the address space's lock
	 * behind the other threads' mmaps (3 ms of a 25 ms report).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	/* The inputs are read first, so a bad one leaves no empty output file. */
	if (dump ? wp_reader_open(input, &reader) : wp_analysis_run(input, &ao, &an))
		goto out_free;
	if (base_input) {
		if (wp_analysis_run(base_input, &ao, &base_an)) {
			wp_analysis_release(&an);
			goto out_free;
		}
		have_base = true;
	}
	/* The path too: a thread not in the recording leaves no empty file. */
	if (cpr.given) {
		if (!wp_waits_init(&waits, &an))
			have_waits = true;
		if (!have_waits || critical_path(&an, &waits, &cpr, &cp)) {
			wp_analysis_release(&an);
			goto out_free;
		}
	}
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			wp_error("cannot create '%s': %s", wp_quoted(output), strerror(errno));
			out = stdout;
			if (!dump)
				wp_analysis_release(&an);
			goto out_free;
		}
	}
	vo.color = use_color(co.color, out);
	/* What a person reads first shows what explains the time (view.h). */
	vo.explain = !base_input && (format->write == wp_format_text ||
				     format->write == wp_format_flamegraph);
	if (dump) {
		ret = wp_dump_reader(reader, input, out) ? WP_EXIT_FAILURE : WP_EXIT_OK;
		goto out_close;
	}
	if (!wp_view_init(&v, &an, &vo)) {
		if (cpr.given) {
			v.critpath = &cp;
			v.waits = &waits;
		}
		ret = have_base ? report_diff(&v, &base_an, &vo, format, out) :
				  format->write(&v, out) ? WP_EXIT_FAILURE : WP_EXIT_OK;
		/* A damaged file still gets its report, and a failing status. */
		if (an.damaged)
			ret = WP_EXIT_FAILURE;
		wp_view_release(&v);
	}
	wp_analysis_release(&an);
out_close:
	if (out != stdout && fclose(out)) {
		wp_error("cannot write '%s': %s", wp_quoted(output), strerror(errno));
		ret = WP_EXIT_FAILURE;
	}
out_free:
	wp_critpath_release(&cp);
	if (have_waits)
		wp_waits_release(&waits);
	if (have_base)
		wp_analysis_release(&base_an);
	wp_reader_close(reader);
	free(unfinished);
	free(vo.pids);
	free(vo.tids);
	return ret;
}
