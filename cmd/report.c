/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.c: `wallprof report`: read a recording and print it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "analysis.h"
#include "dump.h"
#include "format.h"
#include "log.h"

void report_usage(FILE *out)
{
	fprintf(out,
		"usage: wallprof report [-i <file>] [--dump]\n"
		"\n"
		"Prints every thread's wall time split into on-CPU, blocked and preempted\n"
		"time, or with --dump every record of the file.\n"
		"\n"
		"  -i, --input <file>   data file to read (default wallprof.data)\n"
		"  -D, --dump           print every record, one line each\n"
		"  -v, --verbose        more messages\n"
		"  -h, --help           this text\n");
}

static const struct option report_options[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "dump", no_argument, NULL, 'D' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int report_text(const char *input)
{
	struct wp_analysis_opts opts = { .progress = false };
	struct wp_view_opts vo = { .mode = WP_MODE_WALL, .top = 10, .unit_ns = 1000,
				   .thread_root = true };
	struct wp_analysis an;
	struct wp_view v;
	int ret;

	if (wp_analysis_run(input, &opts, &an))
		return WP_EXIT_FAILURE;
	if (wp_view_init(&v, &an, &vo)) {
		wp_analysis_release(&an);
		return WP_EXIT_FAILURE;
	}
	ret = (getenv("WP_FOLDED") ? wp_format_folded(&v, stdout) : wp_format_text(&v, stdout)) ?
	      WP_EXIT_FAILURE : WP_EXIT_OK;
	wp_view_release(&v);
	/* A damaged file still gets its report, and a failing status. */
	if (an.damaged)
		ret = WP_EXIT_FAILURE;
	wp_analysis_release(&an);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	const char *input = "wallprof.data";
	bool dump = false;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":i:Dvh", report_options, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'D':
			dump = true;
			break;
		case 'v':
			wp_log_set_level(WP_LOG_DEBUG);
			break;
		case 'h':
			report_usage(stdout);
			return WP_EXIT_OK;
		case ':':
			return usage_error("report", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("report", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("report", "unexpected argument '%s'", argv[optind]);
	if (dump)
		return wp_dump_file(input, stdout) ? WP_EXIT_FAILURE : WP_EXIT_OK;
	return report_text(input);
}
