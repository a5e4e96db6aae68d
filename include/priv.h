/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * priv.h: what this process may do with perf events, and the words to say
 * when the kernel refuses.
 *
 * Owns the reading of capabilities (libcap) and kernel.perf_event_paranoid,
 * and the dropping of every capability in a launched command.
 */
#ifndef WALLPROF_PRIV_H
#define WALLPROF_PRIV_H

#include <stdbool.h>

struct wp_priv {
	int paranoid;		/* kernel.perf_event_paranoid, 4 if unreadable */
	bool root;		/* effective uid 0 */
	bool cap_perfmon;	/* CAP_PERFMON effective */
	bool cap_sys_admin;	/* CAP_SYS_ADMIN effective */
	bool cap_sys_ptrace;	/* CAP_SYS_PTRACE effective */
	bool cap_ipc_lock;	/* CAP_IPC_LOCK effective: no mlock limit */
};

/* Fill p from the running process; never fails. */
void wp_priv_read(struct wp_priv *p);

/* Kernel-mode samples and callchains (exclude_kernel=0). */
bool wp_priv_can_sample_kernel(const struct wp_priv *p);

/* CPU-wide events (pid -1), needed for -a. */
bool wp_priv_can_profile_cpus(const struct wp_priv *p);

/* Processes of other users. */
bool wp_priv_can_trace_others(const struct wp_priv *p);

/*
 * Log one sentence explaining why perf_event_open failed with -err for
 * the given target description ("process 123", "all CPUs"), saying what
 * to do about it.
 */
void wp_priv_explain_open_error(const struct wp_priv *p, int err,
				const char *what);

/*
 * In a forked child about to exec the profiled command: drop every
 * capability (effective, permitted, inheritable, ambient and, when
 * allowed, the bounding set) so the command cannot inherit wallprof's
 * privileges, even when it runs as root.  Returns 0 or -errno.
 */
int wp_priv_drop_all(void);

#endif
