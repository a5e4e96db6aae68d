/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.c: `wallprof record`: parse options, hand them to the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "log.h"
#include "options.h"
#include "session.h"
#include "target.h"
#include "util.h"

#define DEFAULT_FREQ 999
#define DEFAULT_STACK 8192
/* Stack copies repeat a lot: level 1 shrinks them ~100x at little CPU cost. */
#define DEFAULT_COMPRESS 1

enum {
	OPT_NO_OFF_CPU = 256,
	OPT_NO_COMPRESS,
	OPT_USER,
	OPT_ANY_PROCESS,
	OPT_WAKEUPS,
	OPT_SWITCH_STACKS,
	OPT_KEEP_CAPS,
	OPT_DROP_CAPS,
	OPT_PRESERVE_ENV,
	OPT_NO_BUILDID_CACHE,
	OPT_UNWIND,
	OPT_ROTATE,
	OPT_EXPORT,
	OPT_FLIGHT_RECORDER,
};

/* Files shorter than a second would be mostly their own state records. */
#define MIN_FILE_SECONDS 1.0
#define MAX_FILE_SECONDS (7 * 24 * 3600.0)

static const struct cmd_option record_options[] = {
	{ NULL, 0, 0, NULL, "Sampling:", NULL },
	{ "freq", 'F', OPTION_ARG, " <hz>",
	  "on-CPU samples per second of CPU time (default 999)", NULL },
	{ "event", 'e', OPTION_ARG, " <name>", "what drives on-CPU samples ('help' lists them):",
	  wp_event_word },
	{ "call-graph", 'g', OPTION_ARG, " <mode>", "dwarf[,<size>] (default dwarf,8192), fp or none",
	  NULL },
	{ "no-off-cpu", OPT_NO_OFF_CPU, OPTION_NO_ARG, NULL,
	  "no context-switch records and no switch-out stacks", NULL },
	{ "switch-stacks", OPT_SWITCH_STACKS, OPTION_ARG, "=<rate>",
	  "'all' switch-out stacks, or at most <rate> a second\nper CPU, the rest "
	  "estimated (default 4000)", NULL },
	{ "wakeups", OPT_WAKEUPS, OPTION_ARG, "=<how>", "wake-ups and their wakers:",
	  wp_wakeups_word },
	{ "unwind", OPT_UNWIND, OPTION_ARG, "=<when>",
	  "when to unwind stacks: 'live' (default: while\nrecording, a table of distinct stacks, a far\n"
	  "smaller file) or 'report' (the file keeps stack\ncopies, unwound by report)", NULL },
	{ NULL, 0, 0, NULL, "Target:", NULL },
	{ "pid", 'p', OPTION_ARG, " <pid,...>",
	  "attach to running processes and their new threads", NULL },
	{ "tid", 't', OPTION_ARG, " <tid,...>", "attach to threads", NULL },
	{ "all-cpus", 'a', OPTION_NO_ARG, NULL, "every task on every CPU", NULL },
	{ "user", OPT_USER, OPTION_ARG, " <name>", "run the command as this user (wallprof as root)",
	  NULL },
	{ "preserve-env", OPT_PRESERVE_ENV, OPTION_OPTIONAL_ARG, "[=<list>]",
	  "with --user: keep all of the environment, or these\nvariables too (default: TERM, PATH, LANG, ...)",
	  NULL },
	{ "drop-capabilities", OPT_DROP_CAPS, OPTION_NO_ARG, NULL,
	  "run the command without any capability, even\nas root (default: those of its user)",
	  NULL },
	{ "keep-capabilities", OPT_KEEP_CAPS, OPTION_NO_ARG, NULL,
	  "root's command keeps root's capabilities (the\ndefault; for scripts that give it)",
	  NULL },
	{ "any-process", OPT_ANY_PROCESS, OPTION_NO_ARG, NULL,
	  "let file capabilities reach processes of other\nusers (-p, -t, -a)", NULL },
	{ "duration", 'd', OPTION_ARG, " <secs>", "stop after this many seconds (0: until stopped)",
	  NULL },
	{ NULL, 0, 0, NULL, "Output:", NULL },
	{ "output", 'o', OPTION_ARG, " <file>", "data file (default wallprof.data)", NULL },
	{ "force", 'f', OPTION_NO_ARG, NULL, "overwrite an existing data file", NULL },
	{ "rotate", OPT_ROTATE, OPTION_ARG, " <secs>",
	  "a new complete file every <secs> seconds: <file>\nnumbered, e.g. out.0001.data", NULL },
	{ "export", OPT_EXPORT, OPTION_ARG, " <url>",
	  "with --rotate: each file into ClickHouse once complete\n(wallprof export; they wait on disk while it is down)",
	  NULL },
	{ "flight-recorder", OPT_FLIGHT_RECORDER, OPTION_ARG, " <secs>",
	  "keep only the last <secs> seconds in memory; write\nthem on SIGUSR1 and at the end",
	  NULL },
	{ "compress", 'z', OPTION_OPTIONAL_ARG, "[=<level>]",
	  "zstd compression level 1-19 (default: on, level 1)", NULL },
	{ "no-compress", OPT_NO_COMPRESS, OPTION_NO_ARG, NULL, "store the data uncompressed", NULL },
	{ "no-buildid-cache", OPT_NO_BUILDID_CACHE, OPTION_NO_ARG, NULL,
	  "keep no copies of files mapped in a chroot or\nanother mount namespace", NULL },
	{ "mmap-pages", 'm', OPTION_ARG, " <n>",
	  "ring buffer pages per CPU (power of two), or a size\nsuch as 8M", NULL },
	{ "quiet", 'q', OPTION_NO_ARG, NULL, "no progress line and no summary", NULL },
	COMMON_OPTIONS("colour messages: auto (default), always, never"),
};

void record_usage(FILE *out)
{
	options_usage(out,
		      "usage: wallprof record [<options>] [--] <command> [<args>...]\n"
		      "   or: wallprof record [<options>] -p <pid>[,<pid>...] | -t <tid>[,<tid>...] | -a\n"
		      "\n",
		      record_options, ARRAY_SIZE(record_options));
}

static int parse_call_graph(const char *arg, struct wp_event_opts *ev)
{
	uint64_t size;

	if (!strcmp(arg, "none")) {
		ev->callgraph = WP_CALLGRAPH_NONE;
	} else if (!strcmp(arg, "fp")) {
		ev->callgraph = WP_CALLGRAPH_FP;
	} else if (!strcmp(arg, "dwarf")) {
		ev->callgraph = WP_CALLGRAPH_DWARF;
	} else if (!strncmp(arg, "dwarf,", 6)) {
		if (wp_parse_u64(arg + 6, &size) || size < 8 || size > WP_STACK_COPY_MAX)
			return usage_error("record", "--call-graph: stack size must be 8..%d bytes",
					   WP_STACK_COPY_MAX);
		ev->callgraph = WP_CALLGRAPH_DWARF;
		ev->stack_size = (uint32_t)ALIGN_UP(size, (uint64_t)8);
	} else {
		return usage_error("record", "--call-graph: '%s' is not dwarf[,size], fp or none",
				   arg);
	}
	return 0;
}

/* --preserve-env: all of it, or a comma-separated list of names. */
static int parse_preserve_env(const char *arg, struct wp_child_env *keep)
{
	const char *p = arg;

	if (!arg) {
		keep->all = true;
		return 0;
	}
	for (;;) {
		size_t n = strcspn(p, ",");

		if (!wp_child_env_name_ok(p, n))
			return usage_error("record", "--preserve-env: '%s' is not a comma-separated "
					   "list of variable names (a name may end in '*')", arg);
		if (!p[n])
			break;
		p += n + 1;
	}
	keep->names = arg;
	return 0;
}

/* Pages (a power of two) or a size with a K/M/G suffix. */
static int parse_mmap_pages(const char *given, struct wp_event_opts *ev)
{
	uint64_t v, page = (uint64_t)sysconf(_SC_PAGESIZE), mult = 0;
	const char *arg = given;
	char num[32];
	size_t len = strlen(arg);

	if (len && len < sizeof(num) && strchr("kKmMgG", arg[len - 1])) {
		mult = strchr("kK", arg[len - 1]) ? 1ULL << 10 :
		       strchr("mM", arg[len - 1]) ? 1ULL << 20 : 1ULL << 30;
		memcpy(num, arg, len - 1);
		num[len - 1] = '\0';
		arg = num;
	}
	if (wp_parse_u64(arg, &v) || !v)
		goto bad;
	if (mult)
		v = v * mult / page;
	if (!v || (v & (v - 1)) || v > (1ULL << 20))
		goto bad;
	ev->mmap_pages = (unsigned int)v;
	ev->mmap_pages_given = true;
	return 0;
bad:
	return usage_error("record", "--mmap-pages: '%s' is not a power-of-two number of pages "
			   "or a size such as 8M", given);
}

int cmd_record(int argc, char **argv)
{
	struct wp_record_opts o = {
		.events = {
			.event = "cpu-clock",
			.freq = DEFAULT_FREQ,
			.callgraph = WP_CALLGRAPH_DWARF,
			.stack_size = DEFAULT_STACK,
			.off_cpu = true,
			.switch_stack_budget = WP_SWITCH_STACKS_DEFAULT,
		},
		.output = "wallprof.data",
		.compress_level = DEFAULT_COMPRESS,
		.unwind_live = true,
		.argc = argc + 1,
	};
	struct option_parser parser;
	struct export_follower follower = { .pid = -1 };
	const char *export_url = NULL;
	struct common_opts co = { 0 };
	uint64_t v;
	int c, ret;

	/* The header keeps wallprof's own command line: "wallprof record ...". */
	o.argv = argv - 1;
	/* '+': the command's own options follow it, untouched. */
	if (options_parser_init(&parser, record_options, ARRAY_SIZE(record_options), "+:"))
		return WP_EXIT_FAILURE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, parser.shortopts, parser.longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (wp_parse_u64(optarg, &v) || !v || v > 100000) {
				ret = usage_error("record", "--freq: '%s' is not a rate in 1..100000 Hz",
						  optarg);
				goto out;
			}
			o.events.freq = v;
			break;
		case 'e':
			if (!wp_event_name_known(optarg)) {
				ret = unknown_word("record", "--event", "event", wp_event_word, optarg);
				goto out;
			}
			o.events.event = optarg;
			break;
		case 'g':
			ret = parse_call_graph(optarg, &o.events);
			if (ret)
				goto out;
			break;
		case OPT_SWITCH_STACKS:
			if (!strcmp(optarg, "all")) {
				o.events.switch_stack_budget = 0;
			} else if (wp_parse_u64(optarg, &v) || !v || v > 100000) {
				ret = usage_error("record", "--switch-stacks: '%s' is neither 'all' "
						  "nor a rate in 1..100000 per second", optarg);
				goto out;
			} else {
				o.events.switch_stack_budget = v;
			}
			break;
		case OPT_WAKEUPS:
			if (wp_wakeups_parse(optarg, &o.events.wakeups)) {
				ret = unknown_word("record", "--wakeups", "word", wp_wakeups_word, optarg);
				goto out;
			}
			break;
		case OPT_NO_OFF_CPU:
			o.events.off_cpu = false;
			break;
		case 'p':
		case 't':
		case 'a':
			if (target_option("record", c, optarg, &o, &ret) && ret)
				goto out;
			break;
		case OPT_USER:
			o.user = optarg;
			break;
		case OPT_ANY_PROCESS:
			o.any_process = true;
			break;
		case OPT_KEEP_CAPS:
			o.keep_caps = true;
			break;
		case OPT_DROP_CAPS:
			o.drop_caps = true;
			break;
		case OPT_PRESERVE_ENV:
			ret = parse_preserve_env(optarg, &o.keep_env);
			if (ret)
				goto out;
			break;
		case 'd':
			if (wp_parse_seconds(optarg, &o.duration) || o.duration < 0) {
				ret = usage_error("record", "--duration: '%s' is not a number of seconds "
						  "(0: until stopped)", optarg);
				goto out;
			}
			break;
		case OPT_ROTATE:
		case OPT_FLIGHT_RECORDER: {
			double secs;

			if (wp_parse_seconds(optarg, &secs) || secs < MIN_FILE_SECONDS ||
			    secs > MAX_FILE_SECONDS) {
				ret = usage_error("record", "--%s: '%s' is not a number of seconds "
						  "from %.0f to %.0f (a week)",
						  c == OPT_ROTATE ? "rotate" : "flight-recorder", optarg,
						  MIN_FILE_SECONDS, MAX_FILE_SECONDS);
				goto out;
			}
			if (c == OPT_ROTATE)
				o.rotate = secs;
			else
				o.flight_recorder = secs;
			break;
		}
		case 'o':
			o.output = optarg;
			break;
		case OPT_EXPORT:
			export_url = optarg;
			break;
		case 'f':
			o.force = true;
			break;
		case 'z':
			o.compress_level = DEFAULT_COMPRESS;
			if (optarg && (wp_parse_u64(optarg, &v) || v < 1 || v > 19)) {
				ret = usage_error("record", "--compress: level '%s' is not 1..19", optarg);
				goto out;
			}
			if (optarg)
				o.compress_level = (int)v;
			break;
		case OPT_NO_COMPRESS:
			o.compress_level = 0;
			break;
		case OPT_NO_BUILDID_CACHE:
			o.no_buildid_cache = true;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "live") && strcmp(optarg, "report")) {
				ret = usage_error("record", "--unwind: '%s' is neither 'report' nor 'live'",
						  optarg);
				goto out;
			}
			o.unwind_live = !strcmp(optarg, "live");
			break;
		case 'm':
			ret = parse_mmap_pages(optarg, &o.events);
			if (ret)
				goto out;
			break;
		case 'h':
			record_usage(stdout);
			ret = WP_EXIT_OK;
			goto out;
		default:
			ret = common_option("record", c, argv, &co);
			if (ret)
				goto out;
			break;
		}
	}
	if (optind < argc)
		o.command = argv + optind;
	if (!o.command && !o.nr_pids && !o.nr_tids && !o.events.cpu_wide) {
		ret = usage_error("record", "nothing to record: give a command, -p, -t or -a");
		goto out;
	}
	if ((o.nr_pids != 0) + (o.nr_tids != 0) + (o.command && !o.events.cpu_wide) +
	    o.events.cpu_wide > 1 && !(o.command && o.events.cpu_wide && !o.nr_pids && !o.nr_tids)) {
		ret = usage_error("record", "give only one of a command, -p, -t and -a "
				  "(-a may come with a command that sets the duration)");
		goto out;
	}
	if (o.user && !o.command) {
		ret = usage_error("record", "--user applies only to a launched command");
		goto out;
	}
	if ((o.keep_env.all || o.keep_env.names) && !o.user) {
		ret = usage_error("record", "--preserve-env applies only with --user (without it "
				  "the command gets the whole environment)");
		goto out;
	}
	if (o.drop_caps && !o.command) {
		ret = usage_error("record", "--drop-capabilities applies only to a launched command");
		goto out;
	}
	if (o.keep_caps && o.drop_caps) {
		ret = usage_error("record", "give --keep-capabilities or --drop-capabilities, not both");
		goto out;
	}
	if (o.keep_caps && (!o.command || o.user)) {
		ret = usage_error("record", "--keep-capabilities applies only to a launched command "
				  "run as root, without --user");
		goto out;
	}
	if (o.rotate > 0 && o.flight_recorder > 0) {
		ret = usage_error("record", "give --rotate or --flight-recorder, not both: one writes "
				  "every interval, the other only on SIGUSR1 and at the end");
		goto out;
	}
	if (!o.events.off_cpu && !wp_event_is_clock(o.events.event)) {
		ret = usage_error("record", "--no-off-cpu needs a clock event (cpu-clock or task-clock): "
				  "on-CPU time is then estimated from the samples, and '%s' "
				  "does not count time", o.events.event);
		goto out;
	}
	o.events.enable_on_exec = o.command && !o.events.cpu_wide;
	o.events.enable_on_open = !o.command && !o.events.cpu_wide;
	o.quiet = co.quiet;
	common_log_level(&co);
	o.progress = !o.quiet && isatty(STDERR_FILENO);

	if (export_url && o.rotate <= 0) {
		ret = usage_error("record", "--export needs --rotate: a file goes once complete");
		goto out;
	}
	if (export_url && strncmp(export_url, "http://", 7) && strncmp(export_url, "https://", 8)) {
		ret = usage_error("record", "--export: '%s' is not an http:// or https:// URL",
				  export_url);
		goto out;
	}
	/* Before the recording's threads: a fork of one thread. */
	if (export_url && export_follow_start(export_url, o.output, o.quiet, &follower)) {
		ret = WP_EXIT_FAILURE;
		goto out;
	}
	ret = wp_record_run(&o);
	/* The recording's status is the exit status; files that wait say so. */
	export_follow_end(&follower);
out:
	free(o.pids);
	free(o.tids);
	return ret;
}
