/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * event.h: perf_event_open setup for a recording.
 *
 * Owns the event descriptions (attrs), every event fd and one ring per CPU.
 * Topology (as perf record's): for each target task and online CPU, one
 * on-CPU sampling event and, with off-CPU stacks, one context-switch event;
 * the first event on a CPU owns that CPU's ring and every later event on
 * the CPU is redirected into it (PERF_EVENT_IOC_SET_OUTPUT).  Task events
 * inherit into threads and children created later.
 *
 * Perf contexts: a task's inherited events live in a context of its own,
 * a clone of its creator's when every event there is inherited.  At a
 * switch between two clones the kernel swaps the contexts instead of
 * switching every event out and in, several times cheaper (a pipe
 * ping-pong runs 4 times as fast), but the events then move with the
 * context: when a task exits holding its creator's context, the partial
 * sampling periods in it die too, and if those are the events wallprof
 * opened, every task created later inherits events that are off.  So the
 * events opened for a task sit next to an anchor (a dummy event that is
 * not inherited), which keeps that context unshared: a launched command
 * runs under a stub holding its events (target.h), and so inherits copies
 * that may be swapped; an attached thread holds them itself.  A thread
 * seen making tasks that exit gets an anchor of its own (the drain's).
 */
#ifndef WALLPROF_EVENT_H
#define WALLPROF_EVENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "datafile.h"
#include "layout.h"
#include "priv.h"
#include "ring.h"
#include "tracefs.h"

/*
 * The scheduler's tracepoints recorded with wake-ups: sched_waking,
 * sched_wakeup_new, sched_wakeup, and sched_switch (which times switches
 * where schedstat does, before the kernel's switch records).
 */
#define WP_NR_SCHED_EVENTS 4
enum wp_wakeups {
	WP_WAKEUPS_AUTO,	/* with the waker's stack when allowed, else none */
	WP_WAKEUPS_STACKS,	/* the recording's wakers' stacks, kernel frames of others' */
	WP_WAKEUPS_NOSTACKS,	/* who and when, without the waker's stack */
	WP_WAKEUPS_OFF,
	WP_WAKEUPS_ALL_STACKS,	/* every waker's stack, other programs' too */
};

/*
 * The default budget of switch-out stacks a second per CPU: above what
 * ordinary programs switch (a few thousand a second), as perf samples
 * its context-switch event (4000 a second), far below a storm's hundreds
 * of thousands, whose cost it cuts to that of the switch records alone.
 * On servers that switch 10,000 to 15,000 times a second (PostgreSQL,
 * Redis) the stacks were most of what recording cost them, and 10000
 * took nearly all (bench/README.md).
 */
#define WP_SWITCH_STACKS_DEFAULT 4000
/*
 * The wake-up tracepoints go off in a CPU's closed slots only above this
 * many times its budget of switch-outs a second (stackgate.h): only a
 * wake-up names a wait's waker, so they stay on longer than the stacks.
 * Not much longer: each wait costs four of their samples (the waking
 * with the waker's kernel frames, the enqueueing, the switch out and
 * in) and the recorder's work on each, so that a server woken at every
 * few requests paid more for them than for the stacks.  Attached to
 * Redis under redis-benchmark (some 10,000 switch-outs a second on its
 * CPU), with the budget at 4000: served 0.87 times its requests alone
 * with 4, 0.96 with 2; PostgreSQL under pgbench 0.78 and 0.82
 * (bench/README.md).
 */
#define WP_WAKEUPS_GATE_FACTOR 2

struct wp_event_opts {
	const char *event;	/* cpu-clock, task-clock, cycles, instructions */
	uint64_t freq;		/* samples per second of on-CPU time */
	enum wp_callgraph callgraph;
	uint32_t stack_size;	/* DWARF user stack copy, multiple of 8 */
	bool off_cpu;		/* switch records + switch-out stacks */
	/*
	 * Switch-out stacks a second per CPU (--switch-stacks=RATE): the
	 * caller turns the switch-out event, and the wake-up tracepoints
	 * with it, off and on per CPU to keep within it (wp_evlist_gate,
	 * stackgate.h); 0 for a stack and the wake-ups at every switch
	 * (--switch-stacks=all).  Switch records stay exact either way.
	 */
	uint64_t switch_stack_budget;
	bool enable_on_exec;	/* launch mode: start counting at execve */
	bool enable_on_open;	/* attach mode: each event counts once it is set up */
	bool cpu_wide;		/* -a */
	unsigned int mmap_pages;	/* per CPU ring; 0 = choose */
	bool mmap_pages_given;	/* -m given: do not shrink on EPERM */
	enum wp_wakeups wakeups;
};

struct wp_evfd {
	int fd;			/* -1: a tracepoint closed by wp_evlist_sched_close */
	int cpu;
	unsigned int desc;	/* index into wp_evlist.descs */
	pid_t tid;		/* -1 for CPU-wide */
	uint64_t id;
	uint64_t file_id;	/* the id the file knows it by: its first one */
};

struct wp_id_alias;

/*
 * Descs at most: on-CPU samples, switch-outs, the scheduler's tracepoints,
 * sched_waking again for other programs' wakers (without their stacks),
 * and the task and switch records' own (wp_evlist_oncpu_per_cpu).
 */
#define WP_MAX_DESCS (2 + WP_NR_SCHED_EVENTS + 2)

struct wp_evlist {
	struct wp_event_desc descs[WP_MAX_DESCS];
	unsigned int nr_descs;
	unsigned int cpu_wide_descs;	/* bit per desc: opened per CPU, never per task */
	unsigned int cgroup_descs;	/* bit per desc: opened per CPU on cgroup_fd */
	/* bit per desc: per CPU for every task, the drain keeps the recording's (oncpu_per_cpu) */
	unsigned int percpu_descs;
	int cgroup_fd;			/* borrowed from wp_evlist_use_cgroup's caller */
	/*
	 * Attached through the targets' own cgroup: the processes whose
	 * records (and their children's) are the recording's, should another
	 * process join it (borrowed); none: the launched command's cgroup.
	 */
	const pid_t *cgroup_members;
	size_t nr_cgroup_members;
	uint64_t switch_tp_id;		/* sched:sched_switch's, or 0 when unknown */
	/* sched_waking, sched_wakeup_new, sched_wakeup, sched_switch, in that order. */
	char *sched_formats[WP_NR_SCHED_EVENTS];	/* their format files, as read */
	/*
	 * "pid", the wakee; of sched_switch "next_pid", the thread switched
	 * in.  Indexed by role - WP_EVENT_WAKEUP (the roles follow this order).
	 */
	struct wp_trace_field sched_pid_field[WP_NR_SCHED_EVENTS];
	char wakeups_missing[256];	/* why there are none (auto mode), or "" */
	bool tracefs_mounted;		/* wallprof mounted it */
	struct wp_sample_format fmt;
	uint64_t meta_flags;		/* WP_META_* describing what was set up */
	uint64_t sample_period_ns;	/* on-CPU period, 0 for frequency mode */
	int *cpus;			/* online CPUs */
	unsigned int nr_cpus;
	struct wp_ring *rings;		/* one per entry of cpus[] */
	uint64_t *peeked;		/* per ring: looked at up to here (wp_evlist_peek) */
	int *ring_owner;		/* fd that owns each ring, -1 if none */
	unsigned int mmap_pages;
	bool mmap_pages_given;
	bool enable_on_open;
	const char *asked_event;	/* the hardware event that fell back to cpu-clock */
	bool user_only;			/* kernel mode was not allowed */
	struct wp_evfd *fds;
	size_t nr_fds, cap_fds;
	int *anchor_fds;		/* per target task: keeps its context unshared */
	size_t nr_anchor_fds;
	struct wp_priv priv;
	/*
	 * The scheduler tracepoints closed and opened again
	 * (wp_evlist_sched_close/open): their filters to set again, the
	 * losses the closed ones counted, and the ids of the events opened
	 * again, each with the first id of its desc and CPU, newest last,
	 * under a lock (wp_evlist_id_alias runs on the drain thread).
	 */
	char *sched_filter[4];		/* by enum sched_filter (event.c); NULL: none */
	uint8_t sched_filter_of[WP_MAX_DESCS];	/* each desc's */
	bool sched_closed;
	uint64_t closed_lost;
	pthread_mutex_t alias_lock;
	bool alias_lock_init;
	struct wp_id_alias *aliases;
	size_t nr_aliases, cap_aliases;
};

/* Whether name is an event wallprof can sample. */
bool wp_event_name_known(const char *name);

/* Whether name is an event whose sampling period is a time (a clock). */
bool wp_event_is_clock(const char *name);

/*
 * The i-th event name that -e takes, with one line of help in *help; NULL
 * past the last (the shape of an option's word list, cmd/options.h).
 */
const char *wp_event_word(size_t i, const char **help);

/* The same for the words of --wakeups, and the word's value: 0 or -EINVAL. */
const char *wp_wakeups_word(size_t i, const char **help);
int wp_wakeups_parse(const char *word, enum wp_wakeups *how);

/*
 * Build the attrs.  Decides kernel-mode sampling and switch-out stacks
 * from priv, and falls back from a missing hardware PMU to cpu-clock.
 * -EINVAL (logged) for an unknown event name.
 */
int wp_evlist_init(struct wp_evlist *ev, const struct wp_event_opts *opts,
		   const struct wp_priv *priv);

/*
 * Open every event on every CPU for one task (inherited into its future
 * threads and children), with its anchor.  what names the target in error messages.  On
 * failure logs one sentence and returns -errno, except -ESRCH (the task is
 * gone), which is returned silently for the caller to judge; fds opened
 * earlier stay.
 */
int wp_evlist_open_task(struct wp_evlist *ev, pid_t tid, const char *what);

/*
 * A dummy event on tid that is not inherited: its perf context is no
 * longer a clone, nor those of the tasks it creates.  The fd, or -errno.
 */
int wp_event_open_anchor(pid_t tid);

/* Open every event on every CPU for all tasks (-a). */
int wp_evlist_open_cpus(struct wp_evlist *ev);

/*
 * Open the per-CPU events (the scheduler's tracepoints) of a recording of
 * tasks, after their events: they share the CPUs' rings.  Their records
 * are kept in the kernel for the wakees wp_evlist_filter_wakees() names.
 */
int wp_evlist_open_cpu_events(struct wp_evlist *ev);

/*
 * Keep the wake-ups of these threads, and of every thread newer than the
 * thread id newer_than (the threads they will create), in the kernel: a
 * filter on the wakee (for sched_switch, on either thread), which the
 * kernel takes once per event.  Others' that pass it are the drain
 * thread's to leave out.
 */
int wp_evlist_filter_wakees(struct wp_evlist *ev, const uint32_t *tids, size_t n,
			    uint32_t newer_than);

/*
 * The same filters again, for the threads tids (sorted or not) and those
 * above newer_than, so that the threads other programs created since
 * stop passing as the recording's future ones.  A filter is set only
 * once: new events replace the old ones (opened before these are closed,
 * turned on as they are turned off, CPU by CPU: the hits between two
 * ioctls go unrecorded, as while the budget closes them,
 * WP_META_WAKEUPS_GATED).  While they are closed, only the filters
 * change.  Returns 0 or -errno.
 */
int wp_evlist_refilter_wakees(struct wp_evlist *ev, const uint32_t *tids, size_t n,
			      uint32_t newer_than, uint64_t now_ns);

/*
 * Take the switch-out stacks, and with cpu-clock the on-CPU event (and
 * so the switch and task records), per CPU on cgroup_fd, a cgroup that
 * holds the launched command, or the processes attached to, members[0..n)
 * (borrowed: cgroup.h), out of their threads' own perf contexts.  Call
 * after wp_evlist_init, before the events are opened; false when there
 * is no event to move.  wp_evlist_open_cgroup_events then opens and
 * enables them.
 */
bool wp_evlist_use_cgroup(struct wp_evlist *ev, int cgroup_fd, const pid_t *members, size_t n);
int wp_evlist_open_cgroup_events(struct wp_evlist *ev);

/*
 * Attaching without a cgroup: sample on-CPU time per CPU, for every task,
 * rather than in each thread's own perf context, where the timer of a
 * clock event is stopped and started at every switch of the thread: in a
 * virtual machine each is an exit to the host, and PostgreSQL under
 * pgbench kept 0.55 of its throughput with cpu-clock per task against
 * 0.85 per CPU.  A per-task dummy event (WP_EVENT_SIDEBAND) carries the
 * task and switch records instead; the drain keeps the samples of the
 * recording's threads (wp_drain).  cpu-clock only; call after
 * wp_evlist_init, before the events are opened, with the privilege of
 * per-CPU events.  False when it does not apply.
 */
bool wp_evlist_oncpu_per_cpu(struct wp_evlist *ev);

/* Open the events of wp_evlist_oncpu_per_cpu, enabled: 0 or -errno (logged). */
int wp_evlist_open_percpu_events(struct wp_evlist *ev);

/* Whether the recording has wake-up events. */
bool wp_evlist_has_wakeups(const struct wp_evlist *ev);

/* Whether tid already has events (attach mode rescans). */
bool wp_evlist_has_task(const struct wp_evlist *ev, pid_t tid);

/*
 * Before the drain starts reading the rings: call fn for every record
 * that arrived since the last call, leaving it in the ring for the drain.
 * (Attach mode learns from FORK records which new threads already inherit
 * events.)
 */
typedef void (*wp_evlist_peek_fn)(const struct perf_event_header *rec, void *arg);
void wp_evlist_peek(struct wp_evlist *ev, wp_evlist_peek_fn fn, void *arg);

/*
 * Say (once, after the events are set up, so that an error comes alone)
 * what privileges or hardware withheld: the fallback to cpu-clock, stacks
 * and kernel samples not allowed.
 */
void wp_evlist_explain_limits(const struct wp_evlist *ev);

/*
 * Turn CPU cpu's switch-out stack event (with every inherited copy) on or
 * off: what a budget bounds (stackgate.h).  The wake-up and sched_switch
 * tracepoints follow the budget too, but on every CPU at once:
 * wp_evlist_sched_close() and _open() below, since a disabled tracepoint
 * event still costs each hit.  Returns 0 or the first ioctl's -errno.
 */
int wp_evlist_gate(struct wp_evlist *ev, unsigned int cpu, bool open);

/*
 * Close every CPU's scheduler tracepoints, or open them again as they
 * were (same ring, filter and attributes; new ids, which
 * wp_evlist_id_alias maps back).  A disabled tracepoint event still
 * costs each hit a call into perf: only closing the events on every CPU
 * takes perf's probe off the tracepoints.  Returns 0 or -errno.
 */
int wp_evlist_sched_close(struct wp_evlist *ev, uint64_t now_ns);
int wp_evlist_sched_open(struct wp_evlist *ev, uint64_t now_ns);

/*
 * The id that an event opened again by wp_evlist_sched_open stands for
 * (the first one of its desc and CPU, which the file's header lists), in
 * *canon; false for an id that is no such event's.  Thread-safe.
 */
bool wp_evlist_id_alias(struct wp_evlist *ev, uint64_t id, uint64_t *canon);

int wp_evlist_enable(struct wp_evlist *ev);
int wp_evlist_disable(struct wp_evlist *ev);

/*
 * Records the kernel failed to write, as counted on the events themselves
 * (PERF_FORMAT_LOST, Linux 6.0+; 0 before).  The kernel books the output
 * of inherited events, losses included, on the parent event we opened.
 */
uint64_t wp_evlist_read_lost(const struct wp_evlist *ev);

/*
 * Copy the event descriptions, with the ids of every fd, into meta
 * (meta->events and nr_events become owned by meta: wp_meta_release).
 */
int wp_evlist_describe(const struct wp_evlist *ev, struct wp_meta *meta);

/* Close every fd and unmap every ring; safe on a half-built list. */
void wp_evlist_release(struct wp_evlist *ev);

#endif
