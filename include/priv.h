/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * priv.h: what this process may do with perf events, and the words to say
 * when the kernel refuses.
 *
 * Owns the reading of capabilities (libcap), kernel.perf_event_paranoid
 * and kernel.kptr_restrict, whether wallprof holds privileges that its
 * user does not (file capabilities) and what that user could trace, the
 * looking up of a user for --user, and the dropping of every capability
 * in a launched command.
 */
#ifndef WALLPROF_PRIV_H
#define WALLPROF_PRIV_H

#include <stdbool.h>
#include <sys/types.h>

struct wp_priv {
	int paranoid;		/* kernel.perf_event_paranoid, 4 if unreadable */
	int kptr_restrict;	/* kernel.kptr_restrict, -1 if unreadable */
	bool root;		/* effective uid 0 */
	bool cap_perfmon;	/* CAP_PERFMON effective */
	bool cap_sys_admin;	/* CAP_SYS_ADMIN effective */
	bool cap_sys_ptrace;	/* CAP_SYS_PTRACE effective */
	bool cap_ipc_lock;	/* CAP_IPC_LOCK effective: no mlock limit */
	bool cap_syslog;	/* CAP_SYSLOG effective: kernel addresses */
	uid_t uid;		/* real user and group IDs: who ran wallprof */
	gid_t gid;
	bool setid;		/* set-user-ID or set-group-ID: effective IDs differ */
	/*
	 * The kernel raised this process above the user who ran it at
	 * execve (AT_SECURE): file capabilities on the binary, or set-ID.
	 * Never for root, who has every capability anyway.
	 */
	bool elevated;
};

/* Fill p from the running process; never fails. */
void wp_priv_read(struct wp_priv *p);

/* Kernel-mode samples and callchains (exclude_kernel=0). */
bool wp_priv_can_sample_kernel(const struct wp_priv *p);

/*
 * The raw data of trace events (the scheduler's wake-ups): CAP_PERFMON or
 * kernel.perf_event_paranoid at -1.
 */
bool wp_priv_can_trace_sched(const struct wp_priv *p);

/* CPU-wide events (pid -1), needed for -a. */
bool wp_priv_can_profile_cpus(const struct wp_priv *p);

/* Processes of other users. */
bool wp_priv_can_trace_others(const struct wp_priv *p);

/*
 * Whether the user who ran wallprof (p->uid, p->gid) could trace thread
 * tid, by the kernel's rules for ptrace read access by a caller without
 * capabilities: the thread's real, effective and saved user IDs are all
 * p->uid, its real, effective and saved group IDs are all p->gid, it has
 * no permitted capabilities (as a file-capability program has), and it is
 * dumpable (not running a set-ID program, nor made undumpable by prctl).
 * 0 when it could, -EPERM when not, -ESRCH when the thread is gone.  Logs
 * nothing.
 */
int wp_priv_user_may_trace(const struct wp_priv *p, pid_t tid);

/*
 * Whether /proc/kallsyms, opened by this process, shows the kernel's real
 * addresses rather than zeroes (the kernel's kallsyms_show_value()).
 */
bool wp_priv_can_read_kallsyms(const struct wp_priv *p);

/*
 * Log one warning saying that kernel frames have no names because
 * /proc/kallsyms hides the addresses, naming the capability or sysctl
 * that is missing.  what, first in the line, says what it means to the
 * user ("kernel frames are shown as addresses").
 */
void wp_priv_warn_kallsyms_hidden(const struct wp_priv *p, const char *what);

/*
 * Log one sentence explaining why perf_event_open failed with -err for
 * the given target description ("process 123", "all CPUs"), saying what
 * to do about it.
 */
void wp_priv_explain_open_error(const struct wp_priv *p, int err,
				const char *what);

/*
 * The identity of another user for a launched command (--user), looked
 * up before fork: NSS (getpwnam, getgrouplist) may allocate, take locks
 * or open files, none of which a forked child may do.
 */
struct wp_priv_user {
	uid_t uid;
	gid_t gid;
	gid_t *groups;		/* supplementary groups, owned */
	int ngroups;
	char *name;		/* from the passwd entry, owned */
	char *home;		/* owned */
	char *shell;		/* owned; /bin/sh when the entry has none */
};

/*
 * Look up name: user and group IDs, the supplementary groups
 * (getgrouplist, which includes the primary group), and the login name,
 * home directory and shell.  -ENOENT when there is no such user, -errno
 * when the lookup fails; logs neither.
 */
int wp_priv_user_lookup(const char *name, struct wp_priv_user *u);

void wp_priv_user_release(struct wp_priv_user *u);

/*
 * In a forked child about to exec the profiled command: empty the
 * bounding set when CAP_SETPCAP allows it (as it does for root), become
 * user u when u is non-NULL (groups, then real, effective and saved group
 * and user IDs), then drop every remaining capability (effective,
 * permitted, inheritable and ambient).  When the bounding set stays (no
 * CAP_SETPCAP) and a user ID is still root's, the child also sets
 * no_new_privs, since execve would otherwise give a root command the
 * capabilities of that bounding set.  So the command cannot inherit
 * wallprof's privileges, even when it runs as root.  System calls only,
 * no allocation (safe after fork).  Returns 0 or -errno, stopping at the
 * first failure.
 */
int wp_priv_drop_all(const struct wp_priv_user *u);

/*
 * In a forked child about to exec the command of a wallprof given
 * capabilities its user does not have (file capabilities): drop the
 * effective and permitted capabilities, which that execve gave, and any
 * ambient ones, but keep the inheritable set, the user's own, so that the
 * command runs with what its user had without wallprof.  System calls
 * only (safe after fork).  Returns 0 or -errno.
 */
int wp_priv_drop_gained(void);

/*
 * A command that needs no privilege, in a wallprof given capabilities its
 * user does not have (file capabilities): drop them all, so that reading
 * a crafted recording (whose paths report opens) reaches no further than
 * the user could.  Nothing changes for root or an unprivileged wallprof.
 * Returns 0 or -errno.
 */
int wp_priv_drop_elevated(void);

#endif
