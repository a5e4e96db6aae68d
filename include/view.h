/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * view.h: what the user asked to see of an analysis: which threads, which
 * time (--mode), which stacks (--grep), in which unit and order.  Every
 * output format asks the view, so a filter means the same in all of them.
 */
#ifndef WALLPROF_VIEW_H
#define WALLPROF_VIEW_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "analysis.h"

struct wp_critpath;
struct wp_waits;

enum wp_mode {
	WP_MODE_WALL,		/* on-CPU + blocked + runnable + preempted */
	WP_MODE_ON,
	WP_MODE_OFF,		/* blocked + runnable + preempted */
	WP_MODE_BLOCKED,
	WP_MODE_PREEMPTED,
	WP_MODE_RUNNABLE,	/* woken, waiting for a CPU (wake-ups only) */
};

/* The kinds of time a stack can carry. */
enum wp_part {
	WP_PART_ON,
	WP_PART_BLOCKED,
	WP_PART_PREEMPTED,
	WP_PART_RUNNABLE,
	WP_NR_PARTS,
};

enum wp_sort {
	WP_SORT_WALL,
	WP_SORT_ON,
	WP_SORT_OFF,
	WP_SORT_BLOCKED,
	WP_SORT_PREEMPTED,
	WP_SORT_TID,
	WP_SORT_RUNNABLE,
};

/* The rows of the text report's thread table (--by). */
enum wp_group_by {
	WP_BY_PROCESS,		/* processes, each with its busiest threads */
	WP_BY_THREAD,
	WP_BY_COMM,		/* one row per thread name, over every process */
};

/*
 * The stacks of the text report (--stacks): whole, one per stack and
 * frame per line, or compact, one line per stack; auto: compact when the
 * recording's shown threads are more than the thread table's default
 * rows (WP_TABLE_ROWS), so that a report of hundreds of processes fits on
 * a screen or two.
 */
enum wp_stacks_style {
	WP_STACKS_AUTO,
	WP_STACKS_FULL,
	WP_STACKS_COMPACT,
};

/*
 * A thread on-CPU this share of its wall time or more is busy: in a
 * system-wide recording, its waits are worth a look (wp_view_system_default).
 */
#define WP_BUSY_PERCENT 10

/*
 * An idle thread: on-CPU less than WP_IDLE_PERMILLE thousandths of its
 * wall time, blocked (with the wait for a CPU after each wake-up) half of
 * it or more, and in one stack for WP_IDLE_STACK_PERCENT of that or more
 * (what it did as it started is the rest) (a pool's worker waiting for work, a JVM's
 * compiler thread, make waiting for its children).  The default view
 * folds such threads into a line per stack, and shows no wait of theirs.
 */
#define WP_IDLE_PERMILLE 50
#define WP_IDLE_STACK_PERCENT 80

/*
 * At least this many processes of one name (their main thread's) are one
 * row of the default thread table, a program's: twelve cc1 of a build.
 */
#define WP_TABLE_PROGRAM 4

struct wp_view_opts {
	enum wp_mode mode;
	enum wp_sort sort;
	pid_t *pids;
	size_t nr_pids;
	pid_t *tids;
	size_t nr_tids;
	const char *comm;	/* name or extended regex */
	const char *grep;	/* extended regex matched against frame names */
	const char *waker_comm;	/* only blocked time these wakers ended */
	uint64_t unit_ns;	/* folded weights: 1, 1000 or 1000000 */
	bool thread_root;	/* folded: thread name as the root frame */
	bool wakers;		/* folded: the waker's stack after the blocked one */
	bool per_thread;	/* hist: one histogram per thread */
	unsigned int top;	/* text/json: number of stacks */
	bool top_given;		/* --top was given */
	enum wp_stacks_style stacks;	/* text */
	enum wp_group_by by;	/* text: rows of the thread table */
	unsigned int rows;	/* text: thread table rows at most; 0: all */
	bool mode_given;	/* --mode was given: no system-wide default */
	/*
	 * The format shows what explains the time when no --mode is given
	 * (text, flamegraph): see wp_view.explain.
	 */
	bool explain;
	bool sort_given;	/* --sort was given */
	bool busy_only;		/* only busy threads (WP_BUSY_PERCENT) */
	bool inverted;		/* flamegraph: an icicle rooted at the leaves */
	const char *title;	/* flamegraph: instead of the default title */
	bool color;
	double wait_threshold;	/* waitgraph: edges under this share of the window go */
	int wait_grouping;	/* waitgraph: enum wp_wg_grouping (waitgraph.h) */
};

struct wp_view {
	const struct wp_analysis *an;
	struct wp_view_opts o;
	regex_t comm_re, grep_re, waker_re;
	bool have_comm_re, have_grep_re, have_waker_re;
	uint8_t *grep_cache;	/* per stack: 0 unknown, 1 match, 2 no match */
	/*
	 * --diff: the view of the base recording, with the same options
	 * (borrowed; NULL without --diff).  Formats that compare show what
	 * changed from it to this one, each side as a share of its own total.
	 */
	struct wp_view *base;
	/*
	 * Seen without --mode by a format that asks (o.explain), the view
	 * shows what explains the time first: the text report ranks threads
	 * (unless --sort says otherwise) and stacks by on-CPU time, then shows
	 * the waits of the threads at work (wp_view_at_work) apart; idle
	 * threads are folded into a line per stack (unless --threads all), and
	 * processes of one program into one row.  In wall mode (the flame
	 * graph's) the off-CPU time of threads not at work is left out.
	 */
	bool explain;
	/*
	 * explain in a system-wide recording: the threads at work are the busy
	 * ones (WP_BUSY_PERCENT), not all but the idle, since most daemons
	 * wake now and then in a few places.
	 */
	bool system_default;
	/* explain: per thread index, its idle stack + 1, or 0 when not idle (owned). */
	uint32_t *idle_stack;
	bool derived;		/* made by wp_view_derive: idle_stack is borrowed */
	/*
	 * --critical-path: the path that text, flamegraph, trace and json show
	 * instead of (json: beside) the stacks, and the timeline it was made
	 * from; both borrowed, NULL without.
	 */
	const struct wp_critpath *critpath;
	const struct wp_waits *waits;
};

/* Compile the regexes; -EINVAL (logged) for a bad one. */
int wp_view_init(struct wp_view *v, const struct wp_analysis *an,
		 const struct wp_view_opts *o);
void wp_view_release(struct wp_view *v);

/*
 * A view like v with another mode, of busy threads only if busy_only:
 * it borrows v's regexes and caches, so it is never released and lives
 * no longer than v.
 */
void wp_view_derive(const struct wp_view *v, enum wp_mode mode, bool busy_only,
		    struct wp_view *out);

/* Whether the thread at this index of the accounting is shown. */
bool wp_view_thread(const struct wp_view *v, size_t idx);

/*
 * Whether the thread at this index is idle (WP_IDLE_PERMILLE), and then
 * the stack it waited in; only in an explain view, false otherwise.
 */
bool wp_view_idle(const struct wp_view *v, size_t idx, uint32_t *stack);

/* Whether it is idle by that rule, in any view (which folds it or not). */
bool wp_view_idle_by_rule(const struct wp_view *v, size_t idx);

/*
 * Whether the waits of the thread at this index are worth a look: in a
 * system-wide recording it is busy, in another it is not idle.
 */
bool wp_view_at_work(const struct wp_view *v, size_t idx);

/*
 * An explain view in wall mode leaves out the off-CPU time of threads
 * not at work: how many threads that is, and their off-CPU time.
 */
void wp_view_left_out(const struct wp_view *v, uint64_t *threads, uint64_t *off_ns);

/* Whether the mode includes this part of the time. */
bool wp_view_part(const struct wp_view *v, enum wp_part part);

/* The time of one part of a stack weight (0 when the mode excludes it). */
uint64_t wp_view_part_ns(const struct wp_view *v, const struct wp_stack_weight *w,
			 enum wp_part part);

/*
 * How many of one part a stack weight holds: on-CPU samples, or the
 * off-CPU intervals of that kind.
 */
uint64_t wp_view_part_count(const struct wp_stack_weight *w, enum wp_part part);

/*
 * A waker's name: its thread's, "[interrupt]", "[timer]", "swapper" (the
 * idle task), the name read while recording for a thread outside the
 * recorded ones (tasknames.h), or ":tid" for one that has none.
 */
const char *wp_waker_name(const struct wp_analysis *an, const struct wp_waker *w, char *buf,
			  size_t size);

/* Whether a waker (an index into wp_account_wakers) passes --waker-comm. */
bool wp_view_waker(const struct wp_view *v, uint32_t waker);

/* The blocked time of a stack weight that the shown wakers ended, and how often. */
uint64_t wp_view_woken_ns(const struct wp_view *v, const struct wp_stack_weight *w,
			  uint64_t *count);

/* Whether a stack passes --grep. */
bool wp_view_stack(struct wp_view *v, uint32_t stack);

/* The marker frame that tells an off-CPU stack in folded output. */
const char *wp_part_marker(enum wp_part part, bool estimated);

/*
 * The part of a stack weight's time that is an estimate: time of
 * switch-outs whose stack was not sampled, shared out among the sampled
 * stacks (account.h).
 */
uint64_t wp_view_part_estimated_ns(const struct wp_stack_weight *w, enum wp_part part);

/*
 * How far that estimate may be off: two standard errors of the shared-out
 * switch-out time (about 95% of recordings fall within), at most the
 * estimate itself.  0 when nothing was shared out.
 */
uint64_t wp_view_part_estimate_error_ns(const struct wp_stack_weight *w, enum wp_part part);

/*
 * Whether a time is marked as estimated: 1% of it or more is.  (Below the
 * --switch-stacks rate the kernel still skips a stack now and then; a
 * time it hardly changes keeps its plain name.)  Formats mark such times:
 * "(estimated)" in the off-CPU marker frame, "~" before the time in text.
 */
bool wp_estimated_enough(uint64_t estimated_ns, uint64_t ns);
bool wp_view_part_estimated(const struct wp_stack_weight *w, enum wp_part part);

/*
 * A word that --mode or --sort takes, the value it stands for, and one
 * line for --help.  wp_modes and wp_sorts are the one list of each: the
 * report's parser, --help and errors read them, and the completion and
 * the man page test through `wallprof report --mode help` (--sort help).
 * The first row is the default; a row with a NULL name ends each.
 */
struct wp_view_word {
	const char *name;
	int value;		/* enum wp_mode or enum wp_sort */
	const char *help;
};

extern const struct wp_view_word wp_modes[];
extern const struct wp_view_word wp_sorts[];

/* The row of words called name, or NULL. */
const struct wp_view_word *wp_view_word_find(const struct wp_view_word *words,
					     const char *name);

/* The --mode word of a mode: "wall", "on", "off", "blocked", ... */
const char *wp_mode_name(enum wp_mode mode);

/* The threads' sort key value. */
uint64_t wp_view_sort_key(const struct wp_view *v, const struct wp_thread_times *t);

/*
 * The thread table of the text report: rows of processes, threads or
 * names (--by), the first by the sort key, cut at o.rows rows; what the
 * rows leave out is summed, so a reader sees how much is missing.
 *
 * By process, the busiest processes come each with a row for up to
 * WP_TABLE_THREADS of its busiest threads, as long as rows remain; the
 * rows left then go to more threads of the processes shown, the first
 * first.  A process that has a single thread in the recording, or whose
 * only thread not folded as idle is its main thread, is one row (kind
 * WP_ROW_ONE_THREAD), which stands for its thread.
 */
#define WP_TABLE_ROWS 24	/* the default o.rows */
#define WP_TABLE_THREADS 3

enum wp_row_kind {
	WP_ROW_PROCESS,		/* a process's threads added up */
	WP_ROW_THREAD,		/* one thread (under its process's row, by process) */
	WP_ROW_ONE_THREAD,	/* a process of one thread */
	WP_ROW_COMM,		/* every shown thread of one name */
	WP_ROW_PROGRAM,		/* by process, explain: WP_TABLE_PROGRAM processes or more of a name */
};

struct wp_table_row {
	enum wp_row_kind kind;
	/*
	 * Its shown threads added up: pid and tid are its own (a process's:
	 * its pid, a name's: its lowest pid), comm the process's main thread's
	 * or the name.
	 */
	struct wp_thread_times sum;
	uint64_t threads, processes;	/* that it adds up */
};

/* Idle threads that waited in one stack (explain, folded out of the rows). */
struct wp_idle_fold {
	uint32_t stack;
	struct wp_thread_times sum;	/* its threads added up */
	uint64_t threads, processes;
	uint32_t names[4];	/* thread indexes of up to 4 of its distinct names */
	unsigned int nr_names;
	uint64_t more_names;	/* distinct names past those */
};

struct wp_table {
	struct wp_table_row *rows;	/* in the order to print */
	size_t nr_rows;
	/* explain with rows: the idle threads, most threads first (not in rows nor rest). */
	struct wp_idle_fold *idle;
	size_t nr_idle;
	uint64_t idle_threads;
	struct wp_thread_times all;	/* every shown thread added up */
	uint64_t threads, processes;	/* shown in all */
	/* The shown threads that no row stands for alone, added up. */
	struct wp_thread_times rest;
	uint64_t rest_threads, rest_processes;
	uint64_t rest_names;		/* by comm: names without a row */
};

int wp_view_table(const struct wp_view *v, struct wp_table *t);
void wp_view_table_release(struct wp_table *t);

/* The words of --by and --stacks, as wp_modes. */
extern const struct wp_view_word wp_groupings[];
extern const struct wp_view_word wp_stack_styles[];

#endif
