/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * account.h: the ledger: every thread's wall time, split exactly into
 * on-CPU and off-CPU (blocked, runnable, preempted) time, by stack.
 *
 * Fed a recording's records in time order, which it hands to its
 * timeline (timeline.h), the one model of every CPU and thread; the
 * ledger reads the timeline's segments and adds them up: per thread, per
 * stack (on-CPU samples are weighted so that a thread's stacks add up to
 * its exact on-CPU time; off-CPU segments go to their switch-out stack),
 * per waker, per CPU, into histograms, and per process name.  Each thread
 * is accounted over its window: from the later of record start and its
 * creation to the earlier of record end and its exit; wall = on + blocked
 * + runnable + preempted, to the nanosecond.  Estimates (stacks of
 * unsampled switch-outs, waits whose wake-up went unrecorded) are a pass
 * of their own at the end, and say what they moved.  Owns its timeline,
 * thread table, names and CPUs; formatters only read them.
 */
#ifndef WALLPROF_ACCOUNT_H
#define WALLPROF_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "datafile.h"
#include "timeline.h"

/* log2 histogram: bucket i holds values in [2^i, 2^(i+1)) ns (0 in bucket 0). */
#define WP_HIST_BUCKETS 64
struct wp_hist {
	uint64_t count[WP_HIST_BUCKETS];
	uint64_t total_ns[WP_HIST_BUCKETS];
};

enum wp_hist_kind {
	WP_HIST_ON_SLICES,	/* switch-in to switch-out */
	WP_HIST_OFF_INTERVALS,	/* switch-out to switch-in */
	WP_HIST_PREEMPT_WAITS,	/* the involuntary ones among them */
	WP_HIST_WAKEUP_WAITS,	/* wake-up to switch-in (runnable time) */
	WP_HIST_KINDS,
};

/*
 * A thread's histograms, kept as the buckets it filled (most threads fill
 * a handful): read them with wp_thread_hist_add().
 */
struct wp_thread_hists;

/* A process's command line as the recording read it (layout.h, WP_RECORD_CMDLINE). */
struct wp_process_cmdline {
	uint64_t time;		/* when it was read */
	uint16_t source;	/* enum wp_cmdline_source */
	bool truncated;		/* more than WP_CMDLINE_MAX bytes */
	uint32_t len;
	const char *args;	/* len bytes: the arguments, each NUL-terminated */
};

/*
 * One name a process had: from its creation or an exec to its next exec,
 * or its end.  The times are its main thread's, inside the window; a
 * process's names add up to its main thread's wall time.
 */
struct wp_process_name {
	char comm[16];
	uint64_t start_ns;	/* when it took the name (or its window began) */
	uint64_t wall_ns, on_cpu_ns;
	/*
	 * Its parent's name, from the fork to its first exec (a shell's
	 * child before it runs the command).
	 */
	bool inherited;
	/* The last command line read under this name, or NULL. */
	const struct wp_process_cmdline *cmdline;
};

struct wp_thread_times {
	uint32_t pid, tid;
	char comm[16];
	uint64_t start_ns, end_ns;	/* the accounted window */
	uint64_t wall_ns;		/* end_ns - start_ns */
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;		/* voluntary switch-out until the wake-up */
	uint64_t runnable_ns;		/* woken, waiting for a CPU (wake-ups only) */
	uint64_t preempted_ns;		/* involuntary switch-out until switch-in */
	uint64_t wakeups;		/* blocked intervals that a wake-up ended */
	uint64_t wakeups_unrecorded;	/* of them, those whose wake-up was not recorded */
	uint64_t voluntary_switches;
	uint64_t involuntary_switches;
	uint64_t samples;		/* on-CPU samples */
	uint64_t switch_samples;	/* switch-out stacks */
	/*
	 * Switch-outs whose stack the kernel did not sample (--switch-stacks
	 * RATE): their time is spread over the thread's sampled stacks.
	 */
	uint64_t switch_outs_unsampled;
	bool exited;
	bool approximate;		/* records were lost in its window */
	/*
	 * Where on_cpu_ns comes from (enum wp_on_cpu_source): the switch
	 * records as they are, or anchored to the kernel's own total, or moved
	 * by the recording's mean lag (an estimate).  on_cpu_moved_ns is what
	 * anchoring or the estimate moved into on-CPU time from the waits
	 * before late switch-ins (negative: out of it); kernel_on_cpu_ns the
	 * kernel's total over the anchored span, when anchored.
	 */
	uint8_t on_cpu_source;
	int64_t on_cpu_moved_ns;
	uint64_t kernel_on_cpu_ns;
	/*
	 * How far on_cpu_ns may be from the truth: what lost records (or
	 * records that contradicted each other) left unknown, where the
	 * kernel's figures do not cover it, and what an estimate moved.  0:
	 * exact (nothing lost, or anchored to the kernel over its window).
	 */
	uint64_t on_cpu_bound_ns;
	/*
	 * What anchoring moved in blocked, runnable and preempted time (the
	 * timeline's segments, as recorded, add up to the totals less these).
	 */
	int64_t wait_moved_ns[3];
	uint32_t serial;		/* creation order from 0: the same in every pass */
	const struct wp_thread_hists *hists;	/* NULL: no interval at all */
	/*
	 * A process's main thread that exec'd, or whose command line was
	 * read: every name it had, in time order (else NULL and 0).
	 */
	const struct wp_process_name *names;
	uint32_t nr_names;
};

enum wp_on_cpu_source {
	/* The switch records: no switch-in of its came late, or nothing to anchor to */
	WP_ON_CPU_RECORDS,
	/* Anchored to the kernel's own figures (THREAD_CLOCK records): exact */
	WP_ON_CPU_KERNEL,
	/*
	 * Its late switch-ins moved by the anchored threads' mean (within
	 * on_cpu_moved_ns), or a --time window's share of the kernel's
	 * figures whose ends lie between them (within on_cpu_bound_ns)
	 */
	WP_ON_CPU_ESTIMATED,
};

/*
 * How the on-CPU times were anchored (after finish): the threads anchored
 * to the kernel's figures and what that moved in all (the records alone
 * read short by it), the largest share of a thread's time moved, and the
 * threads estimated from their mean, with what the estimate moved (the
 * bound of its error); late: running segments that began at a switch
 * record's late time.  none_why: 0, or why no thread could be anchored.
 */
struct wp_anchor_summary {
	uint64_t anchored, anchored_moved_abs_ns;
	int64_t anchored_moved_ns;
	double worst_share;		/* |moved| / kernel figure, largest */
	uint64_t estimated, estimated_moved_abs_ns;
	uint64_t late_starts;
	uint64_t clocks;		/* THREAD_CLOCK records used */
	int64_t cpus_moved_ns;		/* -a: what the CPUs' busy time moved with them */
	/* -a: on-CPU time over the CPUs' time, taken back (threads without figures first) */
	uint64_t cpus_trimmed_ns;
	/*
	 * Threads anchored at their exit: taskstats sends a thread's figure
	 * before its last slice ends, so that slice is the records' own,
	 * and its length bounds what the anchor cannot confirm.
	 */
	uint64_t exit_tails, exit_tails_ns;
	/*
	 * A --time window whose ends lie between the kernel's figures (read
	 * every second from the start; once at each end in older files):
	 * the threads whose on-CPU is within a bound then, and the largest.
	 */
	uint64_t window_partial, window_partial_max_ns;
	/* Figures read while recording (every second since 2026-12; else start and end only). */
	uint64_t clocks_during;
	uint64_t on_cpu_ns;		/* every thread's, after anchoring: for shares */
};
struct wp_account;
void wp_account_anchor_summary(const struct wp_account *a, struct wp_anchor_summary *s);

/* Add the thread's histogram of one kind into h (zeroed by the caller). */
void wp_thread_hist_add(const struct wp_thread_times *t, enum wp_hist_kind kind,
			struct wp_hist *h);

/*
 * Time attributed to one stack in one thread.  On-CPU samples are weighted
 * so that a thread's entries add up to its exact on-CPU time; off-CPU
 * intervals are weighed by their duration and attributed to the stack
 * captured at their switch-out.
 */
struct wp_stack_weight {
	uint32_t thread;	/* index into wp_account_threads() */
	uint32_t stack;		/* stack id (stacks.h) */
	uint64_t samples;
	uint64_t on_cpu_ns;
	uint64_t blocked_ns;
	uint64_t runnable_ns;	/* after the wake-ups of the intervals blocked here */
	uint64_t preempted_ns;
	uint64_t blocked_count;
	uint64_t runnable_count;
	uint64_t preempted_count;
	uint32_t wakes;		/* its first wp_wake_weight + 1; 0: none */
	/*
	 * Of blocked_ns, runnable_ns and preempted_ns, in that order, the
	 * time of switch-outs whose stack was not sampled, shared out among
	 * the thread's sampled stacks of the same kind (an estimate; the
	 * thread's totals stay exact).
	 */
	uint64_t estimated_ns[3];
	/*
	 * The variance (ns squared) of each of those estimates, from the
	 * spread of the sampled intervals they were shared by: its square
	 * root is the estimate's standard error.
	 */
	float estimate_var[3];
};

/*
 * Two standard errors of w's estimated_ns[k] (k: 0 blocked, 1 runnable,
 * 2 preempted), at most the estimate; 0 when nothing was estimated.
 */
uint64_t wp_stack_weight_error_ns(const struct wp_stack_weight *w, int k);

/*
 * Blocked time of one stack weight that one waker ended; the weight's
 * wake weights form a list through next.
 */
struct wp_wake_weight {
	uint32_t waker;		/* index into wp_account_wakers() */
	uint32_t next;		/* the next one's index + 1; 0: the last */
	uint64_t blocked_ns;
	uint64_t count;
};

/*
 * The observer: each period of a thread's time as the accounting counts
 * it, for outputs that show when things happened (a timeline) rather than
 * how much.  A period is the part inside the window of one stretch of one
 * state, [start_ns, end_ns), never empty.  A thread's periods come in time
 * order, back to back, and add up per kind to its wp_thread_times;
 * different threads' periods interleave.  A recording without switch
 * records has none (its on-CPU time is estimated from samples).
 */
enum wp_period_kind {
	WP_PERIOD_ON,
	WP_PERIOD_BLOCKED,
	WP_PERIOD_RUNNABLE,
	WP_PERIOD_PREEMPTED,
};

struct wp_period {
	const struct wp_thread_times *thread;	/* as it is now (its comm may change) */
	enum wp_period_kind kind;
	uint64_t start_ns, end_ns;	/* absolute */
	uint32_t stack;		/* off-CPU: the switch-out stack; on-CPU: UINT32_MAX */
	bool short_off;		/* off-CPU and shorter than min_block_ns: no stack weight */
	const struct wp_waker *waker;	/* blocked: who ended it, or NULL */
	uint32_t waker_index;		/* its index in wp_account_wakers(), or UINT32_MAX */
	uint32_t cpu;			/* on-CPU: where, or UINT32_MAX when not known */
	/*
	 * Blocked, with its wake-up unrecorded (the tracepoints gated off):
	 * its end may have been runnable; the totals move an estimated share
	 * of such periods' time (struct wp_wakeup_estimate), the periods not.
	 */
	bool wakeup_unrecorded;
	/* Blocked, gated: woken where the tracepoints were off, so its waker is not known. */
	bool waker_unrecorded;
	/*
	 * Blocked, its wake-up unrecorded while the tracepoints were on (the
	 * kernel delivered none): no sample of the gate's, so no share of
	 * the recorded wakers stands for it.
	 */
	bool wakeup_dropped;
};

/*
 * period: one period, as it is counted.  sample: one on-CPU sample that
 * the accounting counted (inside the window), with its stack.  Pointers
 * are borrowed for the call.  Either may be NULL.
 */
struct wp_account_observer {
	void (*period)(void *arg, const struct wp_period *p);
	void (*sample)(void *arg, const struct wp_thread_times *t, uint64_t time,
		       uint32_t stack);
	void *arg;
};

struct wp_account_opts {
	uint64_t window_start, window_end;	/* absolute ns; 0 = unbounded */
	uint64_t min_block_ns;	/* shorter off-CPU intervals get no stack weight */
	uint32_t unsampled_stack;	/* stack for on-CPU time without samples */
	uint32_t unknown_stack;		/* stack for off-CPU time without a stack */
	uint32_t start_stack;		/* a wait since before the recording, stackless */
	/*
	 * The recording samples switch-out stacks (--switch-stacks RATE): a
	 * switch-out without one is not sampled, and its time is estimated;
	 * what no sampled stack can stand for stays on unsampled_switch_stack.
	 */
	bool switch_stacks_sampled;
	uint32_t unsampled_switch_stack;
	const struct wp_account_observer *observer;	/* borrowed; NULL: none */
};

struct wp_account;

int wp_account_new(const struct wp_meta *meta, const struct wp_account_opts *opts,
		   struct wp_account **out);

/*
 * One non-sample record, in time order (see order.h); time as
 * wp_record_time().
 */
int wp_account_record(struct wp_account *a, const struct perf_event_header *rec,
		      uint64_t time);

/*
 * One sample on cpu (WP_NO_CPU: unknown), in time order, with the id of
 * its (symbolized) stack.  switch_out: a stack taken at a switch-out, for
 * the off-CPU interval that the thread's next SWITCH_OUT record starts.
 * tid 0: the idle task (-a: its CPU was idle), counted for no thread.
 */
int wp_account_sample(struct wp_account *a, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time, bool switch_out, uint32_t stack);

/*
 * A wake-up (sched_waking), in time order: it names the waker of the
 * blocked interval of the thread wakee (one of the recording's; others
 * are ignored), and ends that interval unless the recording has
 * sched_wakeup, whose time (wp_account_enqueued) does.
 */
int wp_account_wakeup(struct wp_account *a, uint32_t wakee, uint64_t time,
		      const struct wp_waker *waker);

/*
 * CPU cpu switched from thread prev to thread next (sched_switch; either
 * may be another's, or 0 for the idle task) at time: the switch records
 * of the two that follow take its time, where schedstat's clocks turn.
 */
int wp_account_sched_switch(struct wp_account *a, uint32_t prev, uint32_t next, uint64_t time,
			    uint32_t cpu);

/* The woken thread wakee reached a run queue (sched_wakeup): runnable from time. */
/*
 * The kernel brought the running thread tid's figures up to date at time
 * (it put a thread it made on its own CPU's run queue): what its exit
 * figure holds of its last slice (timeline.h's counted_until).
 */
int wp_account_counted(struct wp_account *a, uint32_t tid, uint64_t time);
int wp_account_enqueued(struct wp_account *a, uint32_t wakee, uint64_t time);

/*
 * Close every open window at end_ns (the recording's end) and sort the
 * threads by pid, then tid.
 */
void wp_account_finish(struct wp_account *a, uint64_t end_ns);

/* The threads after wp_account_finish (else none), valid until wp_account_free. */
const struct wp_thread_times *wp_account_threads(const struct wp_account *a, size_t *n);

/* Stack weights after wp_account_finish, valid until wp_account_free. */
const struct wp_stack_weight *wp_account_stacks(const struct wp_account *a, size_t *n);

/* Whether the recording has wake-ups: runnable time and wakers exist. */
bool wp_account_has_wakeups(const struct wp_account *a);

/* The wakers, and the wake weights (wp_stack_weight.wakes), after finish. */
const struct wp_waker *wp_account_wakers(const struct wp_account *a, size_t *n);
const struct wp_wake_weight *wp_account_wake_weights(const struct wp_account *a, size_t *n);

/*
 * On-CPU time of threads that were never sampled (a thread's sampling
 * clock starts with it: one that runs less than a period in all is not),
 * and how many such threads; after wp_account_finish.
 */
void wp_account_unsampled(const struct wp_account *a, uint64_t *ns, uint64_t *threads);

/*
 * In a recording with sched_switch samples: the switch-ins (in the window)
 * that had none, timed by their later switch record instead, and all.
 */
void wp_account_untimed_switch_ins(const struct wp_account *a, uint64_t *untimed,
				   uint64_t *all);

/*
 * After finish, with sampled switch-out stacks: how many switch-outs had
 * none, the off-CPU time of the stack weights that are estimates, the time
 * no sampled stack could stand for (left on unsampled_switch_stack), and
 * the threads concerned.
 */
struct wp_switch_estimate {
	uint64_t switch_outs;		/* in the window, every thread */
	uint64_t unsampled;		/* of them without a stack */
	uint64_t estimated_ns;
	uint64_t unattributed_ns;
	uint64_t threads;
	/* The largest wp_stack_weight_error_ns() of any stack, and that part's ns. */
	uint64_t max_error_ns, max_error_of_ns;
};
void wp_account_switch_estimate(const struct wp_account *a, struct wp_switch_estimate *e);

/*
 * The waits in the window whose wake-up was not recorded (the tracepoints
 * gated with the switch-out stacks by record's budget, or the kernel
 * reporting none), their time, the runnable part of it estimated from
 * the waits whose wake-up was (how many), and the blocked time whose
 * waker was not recorded, shared among the stacks' known wakers.
 * gated: the budget turned them off.  After wp_account_finish; all 0
 * without wake-ups.
 */
struct wp_wakeup_estimate {
	bool gated;
	uint64_t waits, waits_ns;
	uint64_t dropped;		/* of the waits, those with the tracepoints on */
	uint64_t runnable_ns;
	uint64_t seen;
	uint64_t unwoken_ns;
};
void wp_account_wakeup_estimate(const struct wp_account *a, struct wp_wakeup_estimate *e);

/*
 * A system-wide recording's CPUs (-a, with switch records): each CPU's
 * time splits into the on-CPU time of the threads that ran there and the
 * idle task's (pid 0, "swapper"), which is no thread of the table.  Both
 * are inside the window, from the CPU's switch records: busy + idle +
 * unseen is the window's length, up to clock differences of microseconds.  A CPU that
 * never switched is idle throughout when its samples were of the idle
 * task, else busy.
 */
struct wp_cpu_time {
	uint64_t idle_ns;
	uint64_t busy_ns;
	/*
	 * Between a switch-out and the next switch-in that name different
	 * tasks as the other: tasks that wrote no switch records of their own
	 * ran there (one, then the idle task, say), in shares unknown.
	 */
	uint64_t unseen_ns;
};

/* After finish: the CPUs' times (*n is 0 when the recording is not system-wide). */
const struct wp_cpu_time *wp_account_cpus(const struct wp_account *a, size_t *n);

/* Records the kernel reported lost, as seen in LOST/LOST_SAMPLES records. */
uint64_t wp_account_lost(const struct wp_account *a);

/* First and last time a loss was reported (0 when none). */
void wp_account_loss_span(const struct wp_account *a, uint64_t *first, uint64_t *last);

/* The timeline the ledger reads (its threads, wakers and switch timing). */
const struct wp_timeline *wp_account_timeline(const struct wp_account *a);

void wp_account_free(struct wp_account *a);

#endif
