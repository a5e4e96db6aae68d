/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * threadclock.h: the kernel's own figures of threads' time, for the
 * recording (WP_RECORD_THREAD_CLOCK, layout.h).
 *
 * Switch records place a thread's time on the timeline, but each switch-in
 * record comes after the switch, once the kernel has switched the events
 * in: in a storm of short slices that adds up to tens of percent of a
 * thread's on-CPU time.  The scheduler's own totals do not drift: schedstat
 * (sum_exec_runtime, run_delay, pcount) for a thread alive when recording
 * starts and ends, and the same figures sent by the kernel's taskstats when
 * a thread exits (root, or CAP_NET_ADMIN).  Report anchors each thread's
 * total to them.
 *
 * Owns the reading of /proc/PID/task/TID/schedstat (a few bytes, capped),
 * and the exit listener: a thread of its own on a taskstats netlink socket
 * (libnl), which keeps the exits of the recording's processes (those whose
 * process, or an ancestor of it, was asked for; every exit for -a) as
 * finished records for the drain to take.
 */
#ifndef WALLPROF_THREADCLOCK_H
#define WALLPROF_THREADCLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "layout.h"
#include "util.h"

/*
 * Read thread tid's schedstat (of process pid; 0: look it up by tid alone).
 * 0, -ESRCH when it is gone, or another -errno.
 */
int wp_schedstat_read(pid_t pid, pid_t tid, uint64_t *on_cpu_ns, uint64_t *runq_ns,
		      uint64_t *slices);

/*
 * Append a THREAD_CLOCK record (when) for every thread of process pid,
 * read now (dated on clock), to out.  Returns how many, or -errno (-ESRCH:
 * the process is gone).  At most WP_THREADCLOCK_MAX_THREADS per process.
 */
#define WP_THREADCLOCK_MAX_THREADS 65536
int wp_threadclock_process(pid_t pid, enum wp_clock_when when, clockid_t clock,
			   struct wp_buf *out);

/*
 * The same for every process of the machine (for -a), or, with keep, for
 * those keep says are the recording's.  Returns how many, or -errno.
 */
int wp_threadclock_all(enum wp_clock_when when, clockid_t clock,
		       bool (*keep)(void *arg, pid_t pid), void *arg, struct wp_buf *out);

/*
 * The recording's processes: those given (wp_procset_add), and their
 * descendants, found by walking /proc's parent links (at most 64 levels),
 * with every verdict kept until the process ends.  Thread safe.
 */
struct wp_procset;

int wp_procset_new(struct wp_procset **out);
int wp_procset_add(struct wp_procset *ps, pid_t pid);
/* Whether process pid is one given, or a descendant (ppid: its parent if known, else 0). */
bool wp_procset_has(struct wp_procset *ps, pid_t pid, pid_t ppid);
/*
 * Process pid ended (group_dead: its last thread exited; else its main
 * thread did, maybe first): its verdict goes, as its pid may come back,
 * another process's, and hours of processes coming and going would keep
 * one each.  A given process's stays until its group is dead; a
 * descendant's is found again from its parent when asked.
 */
void wp_procset_gone(struct wp_procset *ps, pid_t pid, bool group_dead);
/* Verdicts held. */
size_t wp_procset_size(struct wp_procset *ps);
void wp_procset_free(struct wp_procset *ps);

struct wp_exitclock;

/*
 * Start listening to the kernel's exit figures, dated on clock, keeping
 * those of the processes of ps (borrowed until wp_exitclock_free), or of
 * every process when ps is NULL (-a).  Returns 0, -EPERM without
 * CAP_NET_ADMIN, -ENOENT when the kernel has no taskstats, or -errno.
 */
int wp_exitclock_start(clockid_t clock, struct wp_procset *ps, struct wp_exitclock **out);

/*
 * Move the finished records to out (appended, whole): 0 or -ENOMEM (they
 * stay for the next call).  Thread safe.
 */
int wp_exitclock_take(struct wp_exitclock *x, struct wp_buf *out);

/*
 * Take in every exit figure the kernel sent so far (it sends them as each
 * thread exits, before its parent can know): for the last drain pass.
 */
void wp_exitclock_flush(struct wp_exitclock *x);

/* Exits heard, kept, and lost (the socket's buffer overflowed). */
void wp_exitclock_counts(struct wp_exitclock *x, uint64_t *heard, uint64_t *kept,
			 uint64_t *lost);

/* Stop the listener (exits still queued in the socket are read first) and free x. */
void wp_exitclock_free(struct wp_exitclock *x);

#endif
