/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wallprof.c: the command table, global options and dispatch.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "builtin.h"
#include "fdlimit.h"
#include "options.h"
#include "log.h"
#include "priv.h"
#include "quote.h"
#include "session.h"
#include "target.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	void (*usage)(FILE *out);
	const char *summary;
	bool privileged;	/* keeps capabilities the binary was given */
};

static const struct cmd_struct commands[] = {
	{ "record", cmd_record, record_usage, "Run a command or attach to processes and record on-CPU and off-CPU events", true },
	{ "report", cmd_report, report_usage, "Read a recording and print what it holds", false },
	{ "convert", cmd_convert, convert_usage, "Rewrite a recording with its stacks unwound: a much smaller file", false },
	{ "export", cmd_export, export_usage, "Write recordings into ClickHouse, for queries across hosts", false },
	{ "top", cmd_top, top_usage, "Show every thread's time live: on-CPU, waiting for a CPU, blocked, and who it waits for", true },
};

static const struct cmd_struct *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void main_usage(FILE *out)
{
	fprintf(out,
		"usage: wallprof [--version] [--help] <command> [<args>]\n"
		"\n"
		"wallprof splits every thread's wall-clock time into on-CPU and off-CPU time,\n"
		"with the stacks that explain both.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "   %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"'wallprof help <command>' or 'wallprof <command> --help' shows a command's options.\n"
		"Exit status: 0 success, 1 failure, 2 usage error; record returns the\n"
		"profiled command's status, or 3 when it kept a recording cut short.\n");
}

bool target_option(const char *cmd, int c, const char *arg, struct wp_record_opts *o,
		   int *ret)
{
	*ret = 0;
	switch (c) {
	case 'p':
		free(o->pids);
		if (wp_parse_id_list(arg, &o->pids, &o->nr_pids))
			*ret = usage_error(cmd, "--pid: '%s' is not a list of process ids", arg);
		return true;
	case 't':
		free(o->tids);
		if (wp_parse_id_list(arg, &o->tids, &o->nr_tids))
			*ret = usage_error(cmd, "--tid: '%s' is not a list of thread ids", arg);
		return true;
	case 'a':
		o->events.cpu_wide = true;
		return true;
	}
	return false;
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The message quotes what the user typed, which may be anything. */
	fprintf(stderr, "wallprof %s: ", cmd);
	wp_quote_puts(stderr, msg, WP_QUOTE_MESSAGE);
	fprintf(stderr, " (see 'wallprof %s --help')\n", cmd);
	return WP_EXIT_USAGE;
}

int unknown_word(const char *cmd, const char *option, const char *noun, option_word_fn words,
		 const char *arg)
{
	char known[256];

	if (!strcmp(arg, "help")) {
		options_print_words(stdout, words);
		return WP_EXIT_OK;
	}
	return usage_error(cmd, "%s: unknown %s '%s' (known: %s)", option, noun, arg,
			   options_word_list(words, known, sizeof(known)));
}

static bool color_messages;

static void log_sink(enum wp_log_level level, const char *msg)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	static const char *const color[] = { "\033[1;31m", "\033[1;33m", "", "\033[2m" };

	if (color_messages && level != WP_LOG_INFO)
		fprintf(stderr, "wallprof: %s%s\033[m%s\n", color[level], prefix[level], msg);
	else
		fprintf(stderr, "wallprof: %s%s\n", prefix[level], msg);
}

int color_option(const char *cmd, const char *arg, enum wp_color_mode *mode)
{
	if (!arg || !strcmp(arg, "always"))
		*mode = WP_COLOR_ALWAYS;
	else if (!strcmp(arg, "auto"))
		*mode = WP_COLOR_AUTO;
	else if (!strcmp(arg, "never"))
		*mode = WP_COLOR_NEVER;
	else
		return usage_error(cmd, "--color: '%s' is not auto, always or never", arg);
	return 0;
}

int common_option(const char *cmd, int c, char *const argv[], struct common_opts *co)
{
	int ret;

	switch (c) {
	case 'q':
		co->quiet = true;
		return 0;
	case 'v':
		co->verbose = true;
		return 0;
	case OPT_COLOR:
		ret = color_option(cmd, optarg, &co->color);
		if (!ret)
			use_color(co->color, stderr);
		return ret;
	case ':':
		return usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	default:
		return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
	}
}

void common_log_level(const struct common_opts *co)
{
	if (co->verbose)
		wp_log_set_level(WP_LOG_DEBUG);
	if (co->quiet)
		wp_log_set_level(WP_LOG_WARN);
}

static bool color_auto(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (no && *no)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(fileno(f));
}

bool use_color(enum wp_color_mode mode, FILE *f)
{
	color_messages = mode == WP_COLOR_ALWAYS ||
			 (mode == WP_COLOR_AUTO && color_auto(stderr));
	if (mode == WP_COLOR_AUTO)
		return color_auto(f);
	return mode == WP_COLOR_ALWAYS;
}

/*
 * Show the man page; when man or the page is missing (an uninstalled
 * build), fall back to the built-in usage text.
 */
static int show_help(const struct cmd_struct *c)
{
	char page[64], local[4096];
	struct stat st;
	pid_t pid;
	int status;

	snprintf(page, sizeof(page), "wallprof-%s", c->name);
	snprintf(local, sizeof(local), "%s/man/%s.1", WP_SOURCE_DIR, page);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", 1);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		if (!stat(local, &st))
			execlp("man", "man", "-l", local, (char *)NULL);
		execlp("man", "man", page, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		return WP_EXIT_OK;
	c->usage(stdout);
	return WP_EXIT_OK;
}

/* Like git and perf: a write error on stdout is a failure, not silence. */
static int finish_stdout(int ret)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "wallprof: error: cannot write to standard output: %s\n",
			strerror(errno));
		return ret ? ret : WP_EXIT_FAILURE;
	}
	return ret;
}

static int not_a_command(const char *name)
{
	fprintf(stderr, "wallprof: '%s' is not a wallprof command (see 'wallprof --help')\n",
		wp_quoted(name));
	return WP_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct cmd_struct *c;
	const char *name;

	wp_log_set_sink(log_sink);
	use_color(WP_COLOR_AUTO, stdout);
	if (argc < 2) {
		main_usage(stderr);
		return WP_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		main_usage(stdout);
		return finish_stdout(WP_EXIT_OK);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
		printf("wallprof %s\n", PACKAGE_VERSION);
		return finish_stdout(WP_EXIT_OK);
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			main_usage(stdout);
			return finish_stdout(WP_EXIT_OK);
		}
		c = find_command(argv[2]);
		if (!c)
			return not_a_command(argv[2]);
		return finish_stdout(show_help(c));
	}
	if (name[0] == '-') {
		fprintf(stderr, "wallprof: unknown option '%s' (see 'wallprof --help')\n",
			wp_quoted(name));
		return WP_EXIT_USAGE;
	}
	c = find_command(name);
	if (!c)
		return not_a_command(name);
	/*
	 * Every descriptor the hard limit allows: reports keep many files
	 * open, and the caches share what there is (fdlimit.h).
	 */
	if (wp_fdlimit_raise())
		wp_debug("the limit on open files stays at %u", wp_fdlimit());
	/* Only record needs what setcap gave the binary; nothing else keeps it. */
	if (!c->privileged) {
		int err = wp_priv_drop_elevated();

		if (err) {
			fprintf(stderr, "wallprof: error: cannot drop the capabilities of this "
				"binary: %s\n", strerror(-err));
			return WP_EXIT_FAILURE;
		}
	}
	return finish_stdout(c->fn(argc - 1, argv + 1));
}
