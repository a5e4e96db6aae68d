/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h: a subcommand's options as one table.
 *
 * Each subcommand lists its options once, in a struct cmd_option array:
 * getopt_long's arrays and the --help text are made from it, and the man
 * page test reads the options back from --help.  An option that takes one
 * of a set of words (--format, --mode, --sort) points to a function
 * that reads the table owning those words; --help lists them
 * with their descriptions, and "<option> help" prints them for the
 * completion script.
 */
#ifndef WALLPROF_OPTIONS_H
#define WALLPROF_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The words an option takes: the name of the i-th, with one line of help
 * in *help, or NULL past the last.  The first is the default.
 */
typedef const char *(*option_word_fn)(size_t i, const char **help);

enum option_arg { OPTION_NO_ARG, OPTION_ARG, OPTION_OPTIONAL_ARG };

/*
 * One row: a long option, or (name NULL) a heading of --help.  key is
 * what getopt_long returns: the short option letter, or a value from 256
 * up for an option without one.
 */
struct cmd_option {
	const char *name;		/* without "--" */
	int key;
	enum option_arg arg;
	const char *arg_help;		/* the argument in --help: " <file>", "[=<when>]" */
	const char *help;		/* '\n' starts a continuation line */
	option_word_fn words;		/* NULL unless it takes one of a set of words */
};

/* Room for the getopt_long arrays of the largest table. */
#define OPTIONS_MAX 48

struct option_parser {
	struct option longopts[OPTIONS_MAX + 1];
	char shortopts[3 * OPTIONS_MAX + 3];
};

/*
 * Fill p for getopt_long from the n rows of opts.  shortopts begins with
 * prefix (":" or "+:").  -E2BIG when the table does not fit.
 */
int options_parser_init(struct option_parser *p, const struct cmd_option *opts, size_t n,
			const char *prefix);

/* Print head, then one line (or more) per row of opts, in a column. */
void options_usage(FILE *out, const char *head, const struct cmd_option *opts, size_t n);

/* The words of w as "a, b, c" in buf (always NUL-terminated); returns buf. */
const char *options_word_list(option_word_fn w, char *buf, size_t size);

/* One line per word: its name, a tab, and its help (for the completion). */
void options_print_words(FILE *out, option_word_fn w);

#endif
