/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * convert.c: `wallprof convert`: a raw recording rewritten with its
 * stacks unwound (convert.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "convert.h"
#include "log.h"
#include "options.h"
#include "quote.h"
#include "util.h"

#define DEFAULT_COMPRESS 1

enum {
	OPT_NO_COMPRESS = 256,
};

static const struct cmd_option convert_options[] = {
	{ "input", 'i', OPTION_ARG, " <file>", "raw recording to read (default wallprof.data)",
	  NULL },
	{ "output", 'o', OPTION_ARG, " <file>",
	  "file to write (default: the input's name with\n.unwound before .data)", NULL },
	{ "force", 'f', OPTION_NO_ARG, NULL, "overwrite an existing output file", NULL },
	{ "compress", 'z', OPTION_OPTIONAL_ARG, "[=<level>]",
	  "zstd compression level 1-19 (default: on, level 1)", NULL },
	{ "no-compress", OPT_NO_COMPRESS, OPTION_NO_ARG, NULL, "store the data uncompressed", NULL },
	{ "quiet", 'q', OPTION_NO_ARG, NULL, "no summary line", NULL },
	COMMON_OPTIONS("colour messages: auto (default), always, never"),
};

void convert_usage(FILE *out)
{
	options_usage(out, "usage: wallprof convert [<options>]\n\n", convert_options,
		      ARRAY_SIZE(convert_options));
}

/* "NAME.data" -> "NAME.unwound.data"; any other name gets ".unwound.data" appended. */
static char *default_output(const char *in)
{
	size_t len = strlen(in), stem = len;
	char *out;

	if (len > 5 && !strcmp(in + len - 5, ".data"))
		stem = len - 5;
	out = malloc(stem + sizeof(".unwound.data"));
	if (out) {
		memcpy(out, in, stem);
		strcpy(out + stem, ".unwound.data");
	}
	return out;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

int cmd_convert(int argc, char **argv)
{
	struct wp_convert_opts o = { .compress_level = DEFAULT_COMPRESS };
	struct wp_convert_result res;
	const char *input = "wallprof.data", *output = NULL;
	struct option_parser parser;
	char *made = NULL, q1[WP_QUOTE_MSG], q2[WP_QUOTE_MSG];
	struct common_opts co = { 0 };
	int c, ret;
	uint64_t v;

	if (options_parser_init(&parser, convert_options, ARRAY_SIZE(convert_options), ":"))
		return WP_EXIT_FAILURE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, parser.shortopts, parser.longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'f':
			o.force = true;
			break;
		case 'z':
			o.compress_level = DEFAULT_COMPRESS;
			if (optarg && (wp_parse_u64(optarg, &v) || v < 1 || v > 19))
				return usage_error("convert", "--compress: level '%s' is not 1..19",
						   optarg);
			if (optarg)
				o.compress_level = (int)v;
			break;
		case OPT_NO_COMPRESS:
			o.compress_level = 0;
			break;
		case 'h':
			convert_usage(stdout);
			return WP_EXIT_OK;
		default:
			ret = common_option("convert", c, argv, &co);
			if (ret)
				return ret;
			break;
		}
	}
	if (optind < argc)
		return usage_error("convert", "unexpected argument '%s' (the input is given with -i)",
				   argv[optind]);
	common_log_level(&co);
	if (!output) {
		output = made = default_output(input);
		if (!made) {
			wp_error("out of memory");
			return WP_EXIT_FAILURE;
		}
	}
	if (!strcmp(input, output)) {
		free(made);
		return usage_error("convert", "the output must be another file than the input");
	}
	ret = wp_convert_file(input, output, &o, &res);
	if (!ret && !co.quiet)
		fprintf(stderr, "wallprof: '%s' (%.2f MiB) -> '%s' (%.2f MiB, %.1f%%): %" PRIu64
			" samples, %" PRIu64 " distinct stacks, %" PRIu64 " places (%" PRIu64
			" named)\n",
			wp_quote(q1, sizeof(q1), input, WP_QUOTE_TEXT), mib(res.in_bytes),
			wp_quote(q2, sizeof(q2), output, WP_QUOTE_TEXT), mib(res.out_bytes),
			res.in_bytes ? 100.0 * (double)res.out_bytes / (double)res.in_bytes : 0.0,
			res.stats.samples, res.stats.stacks, res.stats.places, res.stats.named);
	if (!ret && res.damaged)
		wp_warn("'%s' is damaged: converted up to the damage", wp_quoted(input));
	free(made);
	return ret ? WP_EXIT_FAILURE : WP_EXIT_OK;
}
