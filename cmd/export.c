/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export.c: `wallprof export`: recordings into ClickHouse
 * (export_clickhouse.h), each analysed as report analyses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "builtin.h"
#include "export_clickhouse.h"
#include "log.h"
#include "options.h"
#include "quote.h"
#include "rotate.h"
#include "util.h"

enum {
	OPT_CLICKHOUSE = 256,
	OPT_HOST,
	OPT_LABEL,
	OPT_CREATE_TABLES,
};

static const struct cmd_option export_options[] = {
	{ "clickhouse", OPT_CLICKHOUSE, OPTION_ARG, " <url>",
	  "the server's HTTP interface: http://HOST:8123/[?database=DB]", NULL },
	{ "host", OPT_HOST, OPTION_ARG, " <name>",
	  "the host the rows name (default: the recording's host name)", NULL },
	{ "label", OPT_LABEL, OPTION_ARG, " <key=value>",
	  "a label of every row (repeat for more: deploy=v42, service=api)", NULL },
	{ "create-tables", OPT_CREATE_TABLES, OPTION_NO_ARG, NULL,
	  "create the tables that do not exist yet", NULL },
	{ "quiet", 'q', OPTION_NO_ARG, NULL, "no line per file", NULL },
	COMMON_OPTIONS("colour messages: auto (default), always, never"),
};

void export_usage(FILE *out)
{
	options_usage(out,
		      "usage: wallprof export --clickhouse <url> [<options>] <file>...\n"
		      "\n"
		      "Every thread's ledger and every stack of recordings into ClickHouse,\n"
		      "each file once.\n"
		      "\n",
		      export_options, ARRAY_SIZE(export_options));
}

/* A label key: what a query can name without quoting. */
static bool label_key_ok(const char *k, size_t len)
{
	if (!len || len > WP_CH_LABEL_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-",
			    k[i]))
			return false;
	return true;
}

int parse_label(const char *cmd, char *arg, struct wp_ch_label *labels, size_t *n)
{
	char *eq = strchr(arg, '=');

	if (!eq || !label_key_ok(arg, (size_t)(eq - arg)) || strlen(eq + 1) > WP_CH_LABEL_MAX)
		return usage_error(cmd, "--label: '%s' is not KEY=VALUE (a key of letters, "
				   "digits and _.:-, each at most %d bytes)", arg, WP_CH_LABEL_MAX);
	if (*n == WP_CH_LABELS_MAX)
		return usage_error(cmd, "--label: more than %d labels", WP_CH_LABELS_MAX);
	*eq = '\0';
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(labels[i].key, arg))
			return usage_error(cmd, "--label: '%s' is given twice", arg);
	labels[*n].key = arg;
	labels[*n].value = eq + 1;
	(*n)++;
	return 0;
}

/*
 * One file into the server; 0, or -errno (logged).  *server: the server
 * failed (the file may go later), not the file.
 */
static int export_file(struct wp_ch *ch, const char *path, struct wp_ch_source *src, bool quiet,
		       bool *server)
{
	struct wp_analysis_opts ao = { .frame_info = true };
	struct wp_analysis an;
	uint64_t rows;
	bool done;
	int err;

	*server = false;
	src->path = path;
	err = wp_ch_file_id(path, src->file_id);
	if (err)
		return err;
	err = wp_ch_file_done(ch, src->file_id, &done);
	if (err) {
		*server = true;
		return err;
	}
	if (done) {
		if (!quiet)
			fprintf(stderr, "wallprof: '%s' is in ClickHouse already (file %s)\n",
				wp_quoted(path), src->file_id);
		return 0;
	}
	err = wp_analysis_run(path, &ao, &an);
	if (err)
		return err;
	if (!an.complete)
		wp_warn("'%s' has no end (its recorder was killed, or still writes it): what it "
			"holds now goes in, and the rest never will", wp_quoted(path));
	err = wp_ch_export(ch, &an, src, &rows);
	/* What the server refused may go later; a row it already holds will not. */
	*server = err && err != -ENOMEM && err != -EEXIST;
	if (!err && !quiet)
		fprintf(stderr, "wallprof: '%s' -> ClickHouse: %" PRIu64 " rows (file %s)\n",
			wp_quoted(path), rows, src->file_id);
	if (!err && an.damaged)
		err = -EIO;
	wp_analysis_release(&an);
	return err;
}

int cmd_export(int argc, char **argv)
{
	struct wp_ch_label labels[WP_CH_LABELS_MAX];
	struct wp_ch_source src = { .labels = labels };
	const char *url = NULL;
	struct option_parser parser;
	struct common_opts co = { 0 };
	bool create = false;
	struct wp_ch *ch = NULL;
	int c, ret, failed = 0;

	if (options_parser_init(&parser, export_options, ARRAY_SIZE(export_options), ":"))
		return WP_EXIT_FAILURE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, parser.shortopts, parser.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CLICKHOUSE:
			url = optarg;
			break;
		case OPT_HOST:
			if (!optarg[0] || strlen(optarg) > 255)
				return usage_error("export", "--host: the name must be 1 to 255 bytes");
			src.host = optarg;
			break;
		case OPT_LABEL:
			ret = parse_label("export", optarg, labels, &src.nr_labels);
			if (ret)
				return ret;
			break;
		case OPT_CREATE_TABLES:
			create = true;
			break;
		case 'h':
			export_usage(stdout);
			return WP_EXIT_OK;
		default:
			ret = common_option("export", c, argv, &co);
			if (ret)
				return ret;
			break;
		}
	}
	common_log_level(&co);
	if (!url)
		return usage_error("export", "--clickhouse <url> is needed: where the rows go");
	if (optind == argc && !create)
		return usage_error("export", "no recording to export");
	if (wp_ch_open(url, &ch))
		return WP_EXIT_FAILURE;
	if (create && wp_ch_create_tables(ch)) {
		wp_ch_close(ch);
		return WP_EXIT_FAILURE;
	}
	for (int i = optind; i < argc; i++) {
		bool server;

		ret = export_file(ch, argv[i], &src, co.quiet, &server);
		if (ret)
			failed++;
		/* A server that cannot be reached will not be for the next file either. */
		if (ret == -ECONNREFUSED)
			break;
	}
	wp_ch_close(ch);
	return failed ? WP_EXIT_FAILURE : WP_EXIT_OK;
}

/*
 * record --rotate --export: a process of its own exports each file as
 * rotation completes it (renames it to its final name), while record
 * goes on; when the server fails, the files wait on disk (they are
 * never removed) and go, in order, once it answers again.  Record
 * closes the pipe when its last file is complete; the files left then
 * go, or are named for a later `wallprof export`.
 */

/* While the server fails: tries this far apart, at most. */
#define FOLLOW_BACKOFF_MAX_MS 30000
/* Once the recording has ended, the server gets this long to come back. */
#define FOLLOW_END_GRACE_MS 10000

/* Wait up to ms for the end of the recording (the pipe's end); true once it ended. */
static bool ended_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) <= 0)
		return false;
	return read(fd, &c, 1) <= 0;
}

/* File n of the recording, when complete and made by this one (not an earlier run's). */
static char *follow_file(const char *output, unsigned int n, const struct timespec *started)
{
	char *name = wp_rotate_name(output, n);
	struct stat st;

	if (!name)
		return NULL;
	if (stat(name, &st) || !S_ISREG(st.st_mode) ||
	    st.st_mtim.tv_sec < started->tv_sec ||
	    (st.st_mtim.tv_sec == started->tv_sec && st.st_mtim.tv_nsec < started->tv_nsec)) {
		free(name);
		return NULL;
	}
	return name;
}

static int follow(const char *url, const char *output, int fd, const struct timespec *started,
		  bool quiet)
{
	struct wp_ch_source src = { 0 };
	unsigned int n = 1, sent = 0, bad = 0, waiting = 0;
	int backoff = 0, grace = FOLLOW_END_GRACE_MS;
	bool ended = false, server;
	struct wp_ch *ch;
	char *name;
	int err;

	if (wp_ch_open(url, &ch))
		return WP_EXIT_FAILURE;
	for (;;) {
		name = follow_file(output, n, started);
		if (!name) {
			if (ended)
				break;
			ended = ended_within(fd, 500);
			continue;
		}
		err = export_file(ch, name, &src, true, &server);
		if (!err || !server) {
			free(name);
			if (err)
				bad++;	/* said why; a file that cannot be read will not be later */
			else
				sent++;
			n++;
			backoff = 0;
			continue;
		}
		free(name);
		/* The server failed: the file waits on disk, and the next ones behind it. */
		backoff = backoff ? backoff * 2 : 1000;
		if (backoff > FOLLOW_BACKOFF_MAX_MS)
			backoff = FOLLOW_BACKOFF_MAX_MS;
		if (ended) {
			if (grace <= 0)
				break;
			if (backoff > grace)
				backoff = grace;
			grace -= backoff;
			poll(NULL, 0, backoff);
		} else {
			ended = ended_within(fd, backoff);
		}
	}
	for (unsigned int k = n; (name = follow_file(output, k, started)); k++, free(name))
		waiting++;
	if (waiting) {
		char *first = wp_rotate_name(output, n);

		wp_error("%u of the recording's files wait on disk for ClickHouse (the first: "
			 "'%s'): send them with wallprof export", waiting,
			 wp_quoted(first ? first : output));
		free(first);
	} else if (!quiet && sent) {
		fprintf(stderr, "wallprof: %u files in ClickHouse\n", sent);
	}
	wp_ch_close(ch);
	return waiting || bad ? WP_EXIT_FAILURE : WP_EXIT_OK;
}

int export_follow_start(const char *url, const char *output, bool quiet, struct export_follower *f)
{
	int fds[2];
	pid_t pid;

	f->pid = -1;
	f->fd = -1;
	clock_gettime(CLOCK_REALTIME, &f->started);
	/* Before the first file could be made: one older is an earlier run's. */
	f->started.tv_sec -= 1;
	if (pipe2(fds, O_CLOEXEC)) {
		wp_error("cannot make a pipe: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		wp_error("cannot start the exporter: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -EAGAIN;
	}
	if (!pid) {
		cap_t none = cap_init();

		close(fds[1]);
		/* Ctrl-C and a closed terminal stop record, which ends its last file: then it goes too. */
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		/* It reads files and speaks HTTP: no capability, and below the recording. */
		if (none) {
			cap_set_proc(none);
			cap_free(none);
		}
		if (nice(10) < 0)
			wp_log(WP_LOG_DEBUG, "the exporter keeps its priority");
		_exit(follow(url, output, fds[0], &f->started, quiet));
	}
	close(fds[0]);
	f->pid = pid;
	f->fd = fds[1];
	return 0;
}

int export_follow_end(struct export_follower *f)
{
	int status;

	if (f->pid < 0)
		return 0;
	close(f->fd);
	while (waitpid(f->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	f->pid = -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}
