/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis.h: a recording run through the whole report pipeline
 *
 *	reader -> time order -> process maps -> unwind -> symbols -> stacks
 *	       -> accounting
 *
 * into the model that every output format reads.  Owns every stage.
 */
#ifndef WALLPROF_ANALYSIS_H
#define WALLPROF_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "account.h"
#include "datafile.h"
#include "frameinfo.h"
#include "tasknames.h"
#include "stacks.h"
#include "strpool.h"

struct wp_analysis_opts {
	bool has_window;
	double window_start_s, window_end_s;	/* seconds from record start */
	uint64_t min_block_ns;
	bool no_kernel, no_user;	/* drop those frames from stacks */
	bool lines;			/* file:line in frame names */
	bool progress;			/* a progress bar on stderr */
	/* Keep each frame's file, entry address and source line (for pprof). */
	bool frame_info;
	bool no_cache;			/* neither read nor write the symbol cache */
	/* Keep the timeline's periods and samples (wp_analysis.kept), for a timeline. */
	bool keep_timeline;
};

/*
 * One period of a thread's time, or one on-CPU sample, as the ledger
 * counted it (inside the window), in the order the ledger counted them
 * (periods as they end, samples as they come).
 */
enum { WP_KEPT_SAMPLE = 0xff };
enum {
	WP_KEPT_SHORT_OFF = 1U << 0,		/* off-CPU, shorter than --min-block */
	WP_KEPT_WAKEUP_UNRECORDED = 1U << 1,	/* blocked, its wake-up gated off */
	WP_KEPT_WAKER_UNRECORDED = 1U << 2,	/* blocked, its waker gated off */
	WP_KEPT_WAKEUP_DROPPED = 1U << 3,	/* blocked, no wake-up with them on */
};
struct wp_kept_event {
	uint64_t start_ns, end_ns;	/* absolute; a sample's time twice */
	uint32_t serial;		/* the thread's (wp_thread_times.serial) */
	uint32_t stack;			/* off-CPU: switch-out stack; sample: its stack */
	uint32_t waker;			/* blocked: index into wp_account_wakers(), or UINT32_MAX */
	uint32_t cpu;			/* on-CPU: where, or UINT32_MAX */
	uint8_t kind;			/* enum wp_period_kind, or WP_KEPT_SAMPLE */
	uint8_t flags;			/* WP_KEPT_* */
};

/* A period of the ledger's (account.h) as the timeline keeps it. */
struct wp_kept_event wp_kept_of_period(const struct wp_period *p);

/*
 * With keep_timeline, each thread's creation (a FORK record: the kernel
 * writes one for every new process and thread), in time order: who made
 * whom, the edge that sched_wakeup_new would give, without its cost.
 */
struct wp_kept_fork {
	uint64_t time;
	uint32_t parent, child;		/* tids */
};

/* Where frames without a function name were, and why they have none. */
enum wp_unnamed_reason {
	WP_UNNAMED_NO_SYMBOLS,	/* the file is there but names nothing there */
	WP_UNNAMED_MISSING,	/* the file is gone or not the recorded one */
	WP_UNNAMED_NO_FILE,	/* memory of no file (JIT code, or maps unknown) */
	WP_UNNAMED_KERNEL,	/* kernel symbols were not available */
	WP_UNNAMED_NO_FDS,	/* no descriptor could be had for the file or its debug file */
};

#define WP_UNNAMED_FILES 5
struct wp_unnamed_file {
	char path[256];		/* the file, or "[kernel]", "[anonymous]" */
	uint64_t frames;
	enum wp_unnamed_reason reason;
	char package[128];	/* Debian package that ships it, or "" */
	/* For no symbols: where its debug file would be found by build id, or "". */
	char debug_file[192];
	uint64_t stack_ns;	/* time of the stacks with one of its frames unnamed */
	uint32_t where;		/* its dso index (symbols.h's wp_symbols_unnamed_where) */
};

struct wp_quality {
	uint64_t samples;		/* samples with a stack to unwind */
	uint64_t unwind_failed;		/* not even one user frame */
	uint64_t truncated;		/* ended by the end of the stack copy */
	uint64_t unreadable;		/* ended where the kernel could not read the stack */
	uint64_t too_deep;		/* stopped at the frame limit */
	uint64_t truncated_needed;	/* largest stack size that would have done */
	uint64_t truncated_in_reach;	/* of them, those that needed a copy the kernel makes */
	uint64_t frames, unnamed;	/* frames of samples, and those without a name */
	struct wp_unnamed_file unnamed_files[WP_UNNAMED_FILES];	/* most first */
	unsigned int nr_unnamed_files;
	uint64_t stacks_ns;		/* time of all stacks, for the share of stack_ns */
	unsigned int changed_files, missing_files;
	unsigned int starved_files;	/* not opened for lack of descriptors */
	unsigned int fd_limit;		/* the limit on descriptors, when some were lacking */
	unsigned int jit_live_maps;	/* processes named from /tmp/perf-PID.map now */
	uint64_t cache_hits;		/* user stacks found already unwound */
	/*
	 * Samples of an event the file does not describe, left out: not
	 * on-CPU time, nor any other (the kernel may have given one of ours
	 * another recorder's id, and its time and stacks with it).
	 */
	uint64_t unknown_samples;
};

struct wp_analysis {
	struct wp_reader *reader;	/* owns meta */
	const struct wp_meta *meta;
	struct wp_account *account;
	struct wp_stacks *stacks;
	struct wp_strpool *names;
	struct wp_frameinfo *frames;	/* files, addresses, source lines of frame tokens */
	struct wp_tasknames *tasknames;	/* names of wakers read while recording */
	struct wp_summary summary;	/* zeroed when the file has none */
	struct wp_quality quality;
	bool complete;			/* the file has its summary */
	bool damaged;			/* a corrupt block ended reading early */
	uint64_t start_ns, end_ns;	/* the recording window */
	uint64_t window_start, window_end;	/* after --time, absolute */
	bool has_window;			/* --time was given */
	uint64_t records;
	uint64_t out_of_order;		/* records older than one already seen */
	uint64_t impossible_times;	/* records dated well outside the recording */
	uint64_t bad_stack_defs;	/* damaged stack table entries (stacktable.h) */
	/*
	 * The stack of an off-CPU interval whose switch-out had no stack
	 * sampled (record's budget): "[off-cpu: not sampled]", whose time the
	 * ledger shares among the sampled stacks (account.h).
	 */
	uint32_t unsampled_switch_stack;
	const char *path;			/* borrowed from the caller */
	struct wp_analysis_opts opts;
	/* With keep_timeline: every period and sample, in the ledger's order. */
	struct wp_kept_event *kept;
	size_t nr_kept, cap_kept;
	struct wp_kept_fork *forks;
	size_t nr_forks, cap_forks;
};

/*
 * Run the pipeline over the file at path.  A damaged or incomplete file
 * still yields the figures up to the damage (and says so through
 * complete/damaged); errors that leave nothing to report return -errno,
 * logged.
 */
int wp_analysis_run(const char *path, const struct wp_analysis_opts *opts,
		    struct wp_analysis *an);

/* The display name of a frame token. */
const char *wp_analysis_frame_name(const struct wp_analysis *an, uint32_t token);

void wp_analysis_release(struct wp_analysis *an);

/*
 * A system-wide recording's CPUs (wp_account_cpus) and their times added
 * up in *sum, with the time span they cover (the window, if any) in
 * *span_ns: *n CPUs of span_ns each.  NULL, *n 0, when not system-wide.
 */
const struct wp_cpu_time *wp_analysis_cpus(const struct wp_analysis *an, size_t *n,
					   struct wp_cpu_time *sum, uint64_t *span_ns);

#endif
