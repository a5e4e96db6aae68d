/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.h: one recording, from target to closed data file.
 *
 * Wires the stages together (privileges, events, target, drain, synthesized
 * state, build ids, summary) and owns the stop logic: SIGINT/SIGTERM, the
 * duration, or every target gone.  The command layer only fills the options.
 */
#ifndef WALLPROF_SESSION_H
#define WALLPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "target.h"

/*
 * A reader of the records as they come (wallprof top), with
 * --unwind=live: start gets the recording's meta before any record,
 * records the unwinder's output (time order, stack table), on the
 * unwinder's thread, after the file or the flight recorder had it.
 * Either returns 0 or -errno, which stops the unwinder.
 */
struct wp_meta;
struct wp_record_monitor {
	int (*start)(void *arg, const struct wp_meta *m);
	int (*records)(void *arg, const void *buf, size_t len, uint64_t round_ns);
	/* may be NULL: the flight recorder wrote a file (its name, borrowed), same thread */
	void (*saved)(void *arg, const char *name);
	void *arg;
};

struct wp_record_opts {
	struct wp_event_opts events;
	const char *output;
	bool force;
	int compress_level;	/* 0 = none */
	double duration;	/* seconds, 0 = until stopped */
	double rotate;		/* --rotate: seconds a file spans, 0 = one file */
	double flight_recorder;	/* --flight-recorder: seconds kept, 0 = all */
	pid_t *pids;		/* -p */
	size_t nr_pids;
	pid_t *tids;		/* -t */
	size_t nr_tids;
	char **command;		/* NULL-terminated, or NULL */
	const char *user;	/* --user */
	struct wp_child_env keep_env;	/* --preserve-env: what --user's command keeps */
	bool keep_caps;		/* --keep-capabilities: root's command keeps root's (the default) */
	bool drop_caps;		/* --drop-capabilities: the command gets none, even as root */
	bool any_process;	/* --any-process: capabilities reach every process */
	bool no_buildid_cache;	/* --no-buildid-cache: keep no copies of files */
	bool unwind_live;	/* --unwind=live: a stack table, unwound as it comes */
	/* with unwind_live; output may then be NULL: no file (a flight recorder's on request) */
	const struct wp_record_monitor *monitor;
	/* --flight-recorder: no file at the end, only on SIGUSR1, numbered past those there */
	bool flight_no_final;
	size_t flight_memory_max;	/* 0: WP_FLIGHT_MEMORY_MAX */
	/*
	 * Seconds between reads of the threads' own figures (THREAD_CLOCK,
	 * on the recording's clock, from its start): 0 reads them at each
	 * file's end when rotating, else every second (every few, whole
	 * seconds apart, when a read takes more than 1% of that).  Ignored
	 * when rotating.
	 */
	double clock_every;
	bool quiet;
	bool progress;		/* live status line on stderr */
	int argc;		/* wallprof's own command line, for the header */
	char **argv;
};

/*
 * The data was kept, but a write error cut the recording short or the
 * file could not be given its name (the status when the command's own
 * is 0).
 */
#define WP_RECORD_INCOMPLETE 3

/*
 * Record.  Returns the process exit status wallprof should use: the
 * command's status when one was launched (like time(1)), 0 on success,
 * WP_RECORD_INCOMPLETE, or 1 when recording failed and nothing was kept
 * (after logging why).
 */
int wp_record_run(const struct wp_record_opts *opts);

#endif
