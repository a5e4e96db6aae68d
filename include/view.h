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
	bool inverted;		/* flamegraph: an icicle rooted at the leaves */
	const char *title;	/* flamegraph: instead of the default title */
	bool color;
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
};

/* Compile the regexes; -EINVAL (logged) for a bad one. */
int wp_view_init(struct wp_view *v, const struct wp_analysis *an,
		 const struct wp_view_opts *o);
void wp_view_release(struct wp_view *v);

/* Whether the thread at this index of the accounting is shown. */
bool wp_view_thread(const struct wp_view *v, size_t idx);

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
 * idle task) or ":tid" for a thread the recording does not name.
 */
const char *wp_waker_name(const struct wp_waker *w, char *buf, size_t size);

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

#endif
