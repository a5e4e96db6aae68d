/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timeline.h: one model of every CPU and every thread of a recording.
 *
 * Fed a recording's records in time order (switch records, sched_switch
 * and wake-up samples, on-CPU and switch-out samples, FORK, COMM, EXIT,
 * THREAD and LOST records), it keeps who occupies each CPU and what state
 * each thread is in, and hands its sinks typed segments of each thread's
 * time as each one ends:
 *
 *	running    on a CPU, from a switch-in to a switch-out;
 *	blocked    after a voluntary switch-out, until the wake-up (with the
 *	           waker: a thread, an interrupt, a timer, the idle task);
 *	runnable   woken (or new), waiting for a CPU until the switch-in;
 *	preempted  after an involuntary switch-out, until the switch-in.
 *
 * A thread's segments come in time order, back to back, from its window's
 * start (its creation, or the recording's start) to its end (its exit, or
 * the recording's end): they add up to its wall time.  One CPU holds one
 * thread at a time: a switch-in (or, with -a, a sample) of another thread
 * on a CPU ends the running segment of the one the model had there, whose
 * switch-out was lost.  A thread first seen switching out was running
 * since the later of its window's start and the last switch-out recorded
 * on that CPU.
 *
 * Times are the kernel's: a switch takes its sched_switch sample's time
 * when the recording has one (where the scheduler's clocks turn), else its
 * record's, which comes after the kernel switched the thread's events in:
 * such a running segment is marked as starting late (WP_SEG_START_LATE),
 * so that the ledger can anchor the thread's total to the kernel's own
 * (THREAD_CLOCK records) and say how much was moved.
 *
 * The sinks (the ledger, a timeline store for the trace format, a live
 * monitor) only read; none keeps a thread model of its own.  Stacks and
 * wakers' stacks are the caller's handles (stack ids in reports, anything
 * that fits 32 bits elsewhere).  Owns its threads, CPUs and wakers, all
 * of them for the recording's life unless a live user forgets the exited
 * (wp_timeline_forget).
 */
#ifndef WALLPROF_TIMELINE_H
#define WALLPROF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "datafile.h"

#define WP_NO_STACK UINT32_MAX
#define WP_NO_WAKER UINT32_MAX
#define WP_NO_CPU UINT32_MAX

enum wp_seg_kind {
	WP_SEG_RUNNING,
	WP_SEG_BLOCKED,
	WP_SEG_RUNNABLE,
	WP_SEG_PREEMPTED,
	/*
	 * A recording without switch records (--no-off-cpu): the thread's
	 * whole window, whose on-CPU part only its samples can tell.
	 */
	WP_SEG_UNKNOWN,
};

/* Segment flags. */
enum {
	/* running: began at a switch record's time, after the switch itself */
	WP_SEG_START_LATE = 1U << 0,
	/* off: began at a switch-out (not at the window's start, nor a lost one) */
	WP_SEG_SWITCH_OUT = 1U << 1,
	/* off: the last segment of an off-CPU interval (a switch-in, or the end, ends it) */
	WP_SEG_OFF_END = 1U << 2,
	/* runnable: began at a wake-up that ended a blocked segment */
	WP_SEG_WOKEN = 1U << 3,
	/*
	 * blocked, its wake-up not recorded: with the wake-up tracepoints
	 * gated, it fell where they were off; else (WP_SEG_WAKEUP_DROPPED)
	 * the kernel reported none while they were on
	 */
	WP_SEG_WAKEUP_UNRECORDED = 1U << 4,
	/* blocked, its wake-up not recorded: nor its waker */
	WP_SEG_WAKER_UNRECORDED = 1U << 5,
	/* records of this thread were lost around it: a boundary is a guess */
	WP_SEG_APPROXIMATE = 1U << 6,
	/* off: began as the state of a rotated file's start (a THREAD record) */
	WP_SEG_AT_FILE_START = 1U << 7,
	/*
	 * blocked, gated: a recorded wait, wake-up and switch-in on both
	 * ends with the tracepoints open (the unrecorded ones are split by such)
	 */
	WP_SEG_FAIR_SAMPLE = 1U << 8,
	/* blocked, its wake-up not recorded with the tracepoints on (see above) */
	WP_SEG_WAKEUP_DROPPED = 1U << 9,
};

struct wp_segment {
	uint32_t thread;	/* serial (wp_timeline_thread) */
	uint8_t kind;		/* enum wp_seg_kind */
	uint16_t flags;
	uint32_t cpu;		/* running: where; off: the CPU it left; WP_NO_CPU */
	uint64_t start_ns, end_ns;	/* absolute; end >= start */
	/* off: when the off-CPU interval it is part of began */
	uint64_t off_start_ns;
	/* off: the switch-out's stack, or one of the markers (wp_timeline_opts) */
	uint32_t stack;
	/* blocked: who ended it (wp_timeline_wakers), or WP_NO_WAKER */
	uint32_t waker;
	/* runnable that a recorded wake-up began: when (for the tally of gated waits) */
	uint64_t woken_ns;
};

/* Who ended a blocked interval. */
enum wp_waker_kind {
	WP_WAKER_THREAD,	/* a thread, in its own context */
	WP_WAKER_INTERRUPT,	/* interrupt context: whoever ran was not the waker */
	WP_WAKER_TIMER,		/* a timer's interrupt */
	WP_WAKER_IDLE,		/* the idle task */
};

/*
 * The name shown for a waker that is no thread of its own (an interrupt,
 * a timer, the idle task: "swapper", as the kernel names it), or NULL
 * for WP_WAKER_THREAD.
 */
const char *wp_waker_kind_name(enum wp_waker_kind kind);

/*
 * The context of a wake-up, from its tracepoint's common_flags: in a
 * task's own (0), or in a hard interrupt, a softirq, an NMI (or more than
 * one, nested); and the softirq whose handler did the waking, when its
 * stack tells (the kernel's vector + 1; 0: none known).
 */
enum { WP_WAKE_HARDIRQ = 1U << 0, WP_WAKE_SOFTIRQ = 1U << 1, WP_WAKE_NMI = 1U << 2 };
enum wp_softirq {
	WP_SOFTIRQ_NONE, WP_SOFTIRQ_HI, WP_SOFTIRQ_TIMER, WP_SOFTIRQ_NET_TX,
	WP_SOFTIRQ_NET_RX, WP_SOFTIRQ_BLOCK, WP_SOFTIRQ_IRQ_POLL, WP_SOFTIRQ_TASKLET,
	WP_SOFTIRQ_SCHED, WP_SOFTIRQ_HRTIMER, WP_SOFTIRQ_RCU, WP_NR_SOFTIRQS,
};

/*
 * A compact wake-up's context (layout.h's WP_STACK_SAMPLE_* flags) as
 * WP_WAKE_* bits; for a file written before they were kept, a hard
 * interrupt's for any interrupt (which one the stack may still tell).
 */
uint8_t wp_wake_context_of_flags(uint32_t flags);

/* The WP_STACK_SAMPLE_* flags that keep a wake-up's context (the inverse). */
uint32_t wp_wake_flags_of_context(uint8_t context);

/* What a wake-up's frames say of its waker (wp_waker_classify). */
struct wp_waker_class {
	enum wp_waker_kind kind;
	uint8_t softirq;		/* enum wp_softirq: the handler that woke */
	unsigned int nr_frames;		/* the waker's: an interrupt's end at its entry */
};

/* Frame i of a wake-up's stack, innermost first: its name, and whether the kernel's. */
typedef const char *(*wp_waker_frame_fn)(unsigned int i, bool *kernel, void *arg);

/*
 * The waker of a wake-up made in context (WP_WAKE_* bits) while thread
 * tid ran (0: the idle task), from its n frames.  In a task's context,
 * the thread, or the idle task.  In an interrupt's, whoever ran was not
 * the waker: a timer's expiry (TIMER) or INTERRUPT, with the softirq
 * whose handler woke, its frames down to the interrupt's entry (below
 * it is only what it interrupted).  But the network's receive softirq
 * that a thread ran itself, in the system call that sent to the woken
 * one (local_bh_enable after __dev_queue_xmit: loopback), was that
 * thread's doing, as bcc's offwaketime names it: THREAD, with its
 * softirq.  The entries' names are arch's (NULL: an unknown machine,
 * whose interrupts' frames are kept whole).
 */
struct wp_arch;
void wp_waker_classify(const struct wp_arch *arch, uint8_t context, uint32_t tid, unsigned int n,
		       wp_waker_frame_fn frame, void *arg, struct wp_waker_class *out);

struct wp_waker {
	uint32_t pid, tid;	/* 0 for interrupts and timers */
	uint32_t stack;		/* at the wake-up (the caller's handle) */
	uint32_t kind;		/* enum wp_waker_kind */
	char comm[16];		/* the thread's name then, "" when not a known thread */
	uint8_t context;	/* WP_WAKE_* bits; 0: a task's own (or not recorded) */
	uint8_t softirq;	/* enum wp_softirq */
};

/* What the timeline knows of a thread. */
struct wp_tl_thread {
	uint32_t pid, tid, serial;
	char comm[16];
	uint64_t start_ns;	/* its creation, or the recording's start */
	uint64_t end_ns;	/* its exit (or the end) once closed, else 0 */
	bool exited;
	bool closed;
	bool approximate;	/* records were lost in its window */
	bool forked_process;	/* a FORK made it a new process's main thread */
	/* created during the recording (its FORK, or the launched command's exec) */
	bool born;
	bool sampled;		/* it had an on-CPU or a switch-out sample */
	/*
	 * How much of its window its records leave unknown: the windows of
	 * lost records while it lived, and where its records contradicted
	 * each other without a loss counted.  Its on-CPU time as recorded is
	 * within this of the truth (before any anchoring to the kernel's).
	 */
	uint64_t uncertain_ns;
};

/* Kinds of a CPU's time that is no thread's of the recording (-a). */
enum wp_cpu_span_kind {
	WP_CPU_IDLE,		/* the idle task's */
	/* between a switch-out and a switch-in that name different other tasks */
	WP_CPU_UNSEEN,
};

/*
 * The sinks.  Any may be NULL.  Pointers are borrowed for the call; a
 * thread's serial stays, its wp_tl_thread may move at the next input.
 */
struct wp_timeline_sink {
	void (*segment)(void *arg, const struct wp_segment *s);
	/* an on-CPU sample that the model counts: its thread runs (or may) */
	void (*sample)(void *arg, uint32_t thread, uint64_t time, uint32_t stack, uint32_t cpu);
	/* a switch-out stack, for the next switch-out of thread */
	void (*switch_sample)(void *arg, uint32_t thread, uint64_t time);
	/* a thread's name at time; exec: it started a program (a process's main thread) */
	void (*renamed)(void *arg, uint32_t thread, uint64_t time, const char comm[16],
			bool exec);
	/*
	 * its EXIT record, at time: running_since is the start of the slice it
	 * runs in then, or 0 when it is not running; counted_until the last
	 * time in that slice the kernel surely brought the thread's figure up
	 * to date (its switch-in, or a thread it made onto its own CPU's run
	 * queue then: wp_timeline_counted), which the figure taskstats sends at its
	 * exit holds, and no later but for ticks
	 */
	void (*exited)(void *arg, uint32_t thread, uint64_t time, uint64_t running_since,
		       uint64_t counted_until);
	/* the thread's window is final (start_ns, end_ns); its segments are all out */
	void (*closed)(void *arg, uint32_t thread);
	/* -a: a stretch of a CPU's time that was no recorded thread's */
	void (*cpu_span)(void *arg, uint32_t cpu, enum wp_cpu_span_kind kind, uint64_t start,
			 uint64_t end);
	/* the kernel reported n records lost at time */
	void (*lost)(void *arg, uint64_t n, uint64_t time);
	void *arg;
};

struct wp_timeline_opts {
	/* off-CPU time without a stack: the recording has none, or it was lost */
	uint32_t unknown_stack;
	/*
	 * a wait that began before the recording (or its file) and whose
	 * stack could not be read then (waitstack.h); 0: unknown_stack
	 */
	uint32_t start_stack;
	/*
	 * The recording samples switch-out stacks (--switch-stacks RATE): a
	 * switch-out without one was not sampled, and gets this one.
	 */
	bool switch_stacks_sampled;
	uint32_t unsampled_switch_stack;
};

struct wp_timeline;

int wp_timeline_new(const struct wp_meta *meta, const struct wp_timeline_opts *opts,
		    struct wp_timeline **out);

/* Add a sink (at most 4); before the first input. */
int wp_timeline_add_sink(struct wp_timeline *tl, const struct wp_timeline_sink *sink);

/* One non-sample record, in time order; time as wp_record_time(). */
int wp_timeline_record(struct wp_timeline *tl, const struct perf_event_header *rec,
		       uint64_t time);

/*
 * One sample of thread tid on cpu, in time order, with the caller's handle
 * of its stack.  switch_out: a stack taken at a switch-out, for the
 * off-CPU interval that the thread's next SWITCH_OUT record starts.  tid
 * 0 is the idle task (-a: its CPU is idle).
 */
int wp_timeline_sample(struct wp_timeline *tl, uint32_t pid, uint32_t tid, uint32_t cpu,
		       uint64_t time, bool switch_out, uint32_t stack);

/*
 * A wake-up (sched_waking), in time order: it names the waker of the
 * blocked interval of the thread wakee (one of the recording's; others
 * are ignored), and ends that interval unless the recording has
 * sched_wakeup, whose time (wp_timeline_enqueued) does.
 */
int wp_timeline_wakeup(struct wp_timeline *tl, uint32_t wakee, uint64_t time,
		       const struct wp_waker *waker);

/* The woken thread wakee reached a run queue (sched_wakeup): runnable from time. */
/* The kernel counted running thread tid's time up to time (account.h). */
int wp_timeline_counted(struct wp_timeline *tl, uint32_t tid, uint64_t time);
int wp_timeline_enqueued(struct wp_timeline *tl, uint32_t wakee, uint64_t time);

/*
 * CPU cpu switched from thread prev to thread next (sched_switch; either
 * may be another's, or 0 for the idle task) at time: the switch records
 * of the two that follow take its time, where schedstat's clocks turn.
 */
int wp_timeline_sched_switch(struct wp_timeline *tl, uint32_t prev, uint32_t next,
			     uint64_t time, uint32_t cpu);

/* Close every open thread at end_ns (the recording's end) and every CPU. */
int wp_timeline_finish(struct wp_timeline *tl, uint64_t end_ns);

/*
 * The thread of a serial (valid until the next input), and how many there
 * are (slots, the forgotten ones' included: see wp_timeline_forget).
 */
const struct wp_tl_thread *wp_timeline_thread(const struct wp_timeline *tl, uint32_t serial);
size_t wp_timeline_nr_threads(const struct wp_timeline *tl);

/* The live thread with this tid, or NULL. */
const struct wp_tl_thread *wp_timeline_find(const struct wp_timeline *tl, uint32_t tid);

/* The latest thread with this tid, alive or not, or NULL. */
const struct wp_tl_thread *wp_timeline_latest(const struct wp_timeline *tl, uint32_t tid);

/*
 * Whether thread serial is running (or, not yet switched, counts as
 * running so far) and since when: the open segment's start.
 */
bool wp_timeline_running_since(const struct wp_timeline *tl, uint32_t serial, uint64_t *since);

/* Whether thread serial's state is not known yet (no switch of it so far). */
bool wp_timeline_undecided(const struct wp_timeline *tl, uint32_t serial);

/* Whether thread serial is runnable or preempted, and since when. */
bool wp_timeline_queued_since(const struct wp_timeline *tl, uint32_t serial, uint64_t *since);

/* A live thread's state as of the last input: for a rotated file's start. */
struct wp_tl_state {
	uint32_t serial;
	bool off;		/* off-CPU since a switch-out */
	bool preempted;		/* that switch-out was involuntary */
	uint32_t stack;		/* that switch-out's stack handle, or WP_NO_STACK */
	uint64_t off_since;	/* when */
	/*
	 * Records were lost since its last switch (or, never switched, since
	 * its start), or a rotated file began so: its state is a guess.
	 */
	bool uncertain;
	/* Running (or not yet switched): since when (its open segment's start). */
	uint64_t since;
};

/* Call fn for every live thread; stops at fn's non-zero return, which it returns. */
int wp_timeline_each_live(const struct wp_timeline *tl,
			  int (*fn)(void *arg, const struct wp_tl_thread *t,
				    const struct wp_tl_state *st),
			  void *arg);

/* The wakers named so far. */
const struct wp_waker *wp_timeline_wakers(const struct wp_timeline *tl, size_t *n);

/* The recording has wake-ups: runnable time and wakers exist. */
bool wp_timeline_has_wakeups(const struct wp_timeline *tl);

/*
 * In a recording with sched_switch samples: the switch-ins that had none
 * (timed by their later switch record instead), and all; in [from, to).
 */
struct wp_switch_timing {
	uint64_t switch_ins, untimed;
	/* untimed ones moved back by the mean lag of the timed (gated recordings) */
	uint64_t lag_corrected;
	uint64_t mean_lag_ns[2];	/* of the timed switch-outs [0] and -ins [1] */
};
void wp_timeline_switch_timing(const struct wp_timeline *tl, struct wp_switch_timing *st);

/*
 * Whether the tracepoints were found closed after time (two switch-outs
 * in a row without their sched_switch): waits that began then may have
 * lost their wake-up.  Only in gated recordings.
 */
uint64_t wp_timeline_last_untimed_out(const struct wp_timeline *tl);

/* Records lost (LOST, LOST_SAMPLES). */
uint64_t wp_timeline_lost(const struct wp_timeline *tl);

/*
 * Set the window in which the switch-in counts of wp_timeline_switch_timing
 * are counted (a report's --time); 0 = unbounded.
 */
void wp_timeline_set_window(struct wp_timeline *tl, uint64_t start, uint64_t end);

/*
 * Forget the threads whose window closed before `before` (their exit),
 * for a live model that runs for hours (the monitor): they are found no
 * more by their tid, their slots (and serials) go to threads made after,
 * and of the wakers only those that a remaining thread's wait still
 * refers to stay, renumbered (the sinks read a waker at its segment, and
 * none kept an index since).  Their segments have all been handed out;
 * a record of such a thread that still comes makes a new thread, so
 * before should lie well after the exits that records of the exited may
 * still follow (an interval).  What was forgotten, as wp_timeline_thread
 * returns it, is stale.  A recording that is reported never calls it.
 * 0 or -ENOMEM; *forgotten: how many (may be NULL).
 */
int wp_timeline_forget(struct wp_timeline *tl, uint64_t before, size_t *forgotten);

void wp_timeline_free(struct wp_timeline *tl);

#endif
