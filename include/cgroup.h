/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.h: a cgroup (v2) of the launched command's own, or the one the
 * processes attached to have to themselves, for events that count per CPU
 * but only while its processes run.
 *
 * An event in a task's own perf context is scheduled out and in at each
 * of the task's context switches, at a cost that in a switch storm is a
 * few percent even while the event is turned off.  The recording's
 * events (the switch-out stacks, and with cpu-clock the on-CPU samples
 * and the switch and task records), opened per CPU on a cgroup that holds
 * the command and everything it starts, cost nothing at a switch between
 * two of its threads but the records they write.  The cgroup is made under
 * wallprof's own, so every controller that limits wallprof limits the
 * command as before; it is removed at the end (what is still in it goes
 * back to wallprof's cgroup).  Owns the cgroup's directory and its fd.
 */
#ifndef WALLPROF_CGROUP_H
#define WALLPROF_CGROUP_H

#include <sys/types.h>

struct wp_cgroup {
	int fd;		/* the directory, for PERF_FLAG_PID_CGROUP; -1 when none */
	char *path;	/* its path, malloc'ed */
	char *parent;	/* wallprof's own cgroup's path, malloc'ed */
};

/*
 * Make a cgroup for pid (not yet running its command) under wallprof's
 * own cgroup in the cgroup v2 hierarchy, and move pid into it.  0, or
 * -errno (no cgroup v2, no right to make one, ...), with *cg left empty.
 */
int wp_cgroup_create(struct wp_cgroup *cg, pid_t pid);

/* Move what is left in the cgroup back to wallprof's, and remove it. */
void wp_cgroup_remove(struct wp_cgroup *cg);

/*
 * The cgroup (v2) of the processes pids[0..n) when it holds them, and
 * processes they started, and nothing else, in it or in any cgroup below
 * it (a service's own, as systemd makes them): events opened per CPU on
 * it see exactly those, and cost their context switches nothing.  It is
 * found from /proc/PID/cgroup and opened a name at a time, never
 * following a link, and its processes read from its cgroup.procs files:
 * every name in it is the watched programs' choice.  0 with *fd its
 * directory (the caller's to close), or -errno: -ENOENT (no cgroup v2,
 * or not all in one), -EBUSY (the root cgroup, or another process is in
 * it), -E2BIG (more processes than are read).
 */
int wp_cgroup_of_processes(const pid_t *pids, size_t n, int *fd);

#endif
