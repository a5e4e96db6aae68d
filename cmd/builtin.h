/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * builtin.h: the subcommands of wallprof.
 *
 * A new subcommand is four edits: cmd/<name>.c with cmd_<name>(), a row in
 * the table in cmd/wallprof.c, man/wallprof-<name>.1, and tests.
 */
#ifndef WALLPROF_BUILTIN_H
#define WALLPROF_BUILTIN_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <sys/types.h>
#include "options.h"

/* Exit statuses shared by every subcommand. */
#define WP_EXIT_OK 0
#define WP_EXIT_FAILURE 1
#define WP_EXIT_USAGE 2

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_top(int argc, char **argv);

void record_usage(FILE *out);
void report_usage(FILE *out);
void convert_usage(FILE *out);
void export_usage(FILE *out);
void top_usage(FILE *out);

struct wp_ch_label;
/*
 * --label KEY=VALUE of export and report --from, into labels[*n]
 * (WP_CH_LABELS_MAX of them): 0, or a usage error's status.  arg is
 * split in place.
 */
int parse_label(const char *cmd, char *arg, struct wp_ch_label *labels, size_t *n);
/*
 * record --rotate --export URL: a process that exports each file of the
 * recording (output, numbered as rotation names them) once complete,
 * started before the recording; export_follow_end, once its last file is
 * complete, waits for the rest to go (or to be named as waiting on disk):
 * 0, or -EIO when some wait.
 */
struct export_follower {
	pid_t pid;
	int fd;
	struct timespec started;
};
int export_follow_start(const char *url, const char *output, bool quiet,
			struct export_follower *f);
int export_follow_end(struct export_follower *f);
enum wp_color_mode { WP_COLOR_AUTO, WP_COLOR_ALWAYS, WP_COLOR_NEVER };

/*
 * --color's word: "auto", "always" or "never" (NULL, as from a bare
 * --color, is always) into *mode: 0, or a usage error's status (printed).
 */
int color_option(const char *cmd, const char *arg, enum wp_color_mode *mode);

/*
 * The options every subcommand takes alike.  Its table ends with its -q
 * row (where it has one: its help says what -q hides) and
 * COMMON_OPTIONS(color_help); its getopt loop takes its own keys and -h,
 * and hands every other one to common_option.
 */
#define OPT_COLOR 0x7000	/* above every subcommand's own keys (256 up) */
#define COMMON_OPTIONS(color_help)                                                   \
	{ "color", OPT_COLOR, OPTION_OPTIONAL_ARG, "[=<when>]", color_help, NULL },  \
	{ "verbose", 'v', OPTION_NO_ARG, NULL, "more messages", NULL },              \
	{ "help", 'h', OPTION_NO_ARG, NULL, "this text", NULL }

struct common_opts {
	bool quiet, verbose;
	enum wp_color_mode color;	/* messages on stderr follow it at once */
};

/*
 * Key c of subcommand cmd's getopt loop (argv its arguments), not one of
 * its own: -q, -v and --color go into *co (0); a missing value or an
 * unknown option is a usage error, whose status is returned (printed).
 */
int common_option(const char *cmd, int c, char *const argv[], struct common_opts *co);
/* wallprof's messages as -v and -q ask: all, or warnings and errors only (-q wins). */
void common_log_level(const struct common_opts *co);

/*
 * Whether to colour what goes to f: always/never as asked; auto means a
 * terminal, unless NO_COLOR is set (https://no-color.org) or TERM is dumb.
 * Also sets the colour of wallprof's own messages on stderr.
 */
bool use_color(enum wp_color_mode mode, FILE *f);

struct wp_record_opts;

/*
 * What to record, as record and top take it: -p PID,..., -t TID,..., -a.
 * Whether c is one of these; *ret then 0, or a usage error's status.
 */
bool target_option(const char *cmd, int c, const char *arg, struct wp_record_opts *o,
		   int *ret);

/* Print "wallprof <cmd>: <msg>" and a hint, return WP_EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A word of an option that its table (read by words, cmd/options.h) does
 * not know: "help" lists the words on stdout (WP_EXIT_OK), anything else
 * is a usage error naming them.
 */
int unknown_word(const char *cmd, const char *option, const char *noun, option_word_fn words,
		 const char *arg);

#endif
