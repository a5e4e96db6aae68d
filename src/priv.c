/* SPDX-License-Identifier: GPL-2.0-or-later */
/* priv.c: capabilities, perf_event_paranoid, and how to explain refusals. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"
#define KPTR_RESTRICT_PATH "/proc/sys/kernel/kptr_restrict"

static bool cap_effective(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;

	if (!caps || !CAP_IS_SUPPORTED(cap))
		return false;
	if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &v))
		return false;
	return v == CAP_SET;
}

void wp_priv_read(struct wp_priv *p)
{
	cap_t caps = cap_get_proc();
	long paranoid, kptr;

	memset(p, 0, sizeof(*p));
	p->paranoid = wp_read_int_file(PARANOID_PATH, &paranoid) ? 4 : (int)paranoid;
	p->kptr_restrict = wp_read_int_file(KPTR_RESTRICT_PATH, &kptr) ? -1 : (int)kptr;
	p->root = geteuid() == 0;
	p->cap_perfmon = cap_effective(caps, CAP_PERFMON);
	p->cap_sys_admin = cap_effective(caps, CAP_SYS_ADMIN);
	p->cap_sys_ptrace = cap_effective(caps, CAP_SYS_PTRACE);
	p->cap_ipc_lock = cap_effective(caps, CAP_IPC_LOCK);
	p->cap_syslog = cap_effective(caps, CAP_SYSLOG);
	if (caps)
		cap_free(caps);
	p->uid = getuid();
	p->gid = getgid();
	p->setid = geteuid() != p->uid || getegid() != p->gid;
	/*
	 * The kernel's own verdict, made at execve: set when the program's
	 * file capabilities or set-ID bits gave this process more than its
	 * caller had, but not for root (cap_bprm_creds_from_file()).
	 */
	p->elevated = getauxval(AT_SECURE) != 0;
}

static bool has_perfmon(const struct wp_priv *p)
{
	return p->cap_perfmon || p->cap_sys_admin;
}

bool wp_priv_can_sample_kernel(const struct wp_priv *p)
{
	return has_perfmon(p) || p->paranoid <= 1;
}

bool wp_priv_can_trace_sched(const struct wp_priv *p)
{
	return has_perfmon(p) || p->paranoid <= -1;
}

bool wp_priv_can_profile_cpus(const struct wp_priv *p)
{
	return has_perfmon(p) || p->paranoid <= 0;
}

bool wp_priv_can_trace_others(const struct wp_priv *p)
{
	return p->cap_sys_ptrace || p->root;
}

/* Whether the "Uid:" or "Gid:" line of a /proc status text is id three times. */
static bool status_ids_are(const char *status, const char *key, unsigned long id)
{
	const char *line = strstr(status, key);
	unsigned long real, eff, saved;

	return line && sscanf(line + strlen(key), "%lu %lu %lu", &real, &eff, &saved) == 3 &&
	       real == id && eff == id && saved == id;
}

int wp_priv_user_may_trace(const struct wp_priv *p, pid_t tid)
{
	char path[64], status[4096];
	unsigned long long prm;
	const char *line;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (wp_read_text_file(path, status, sizeof(status)))
		return -ESRCH;
	/* The kernel compares the caller's real IDs (PTRACE_MODE_REALCREDS). */
	if (!status_ids_are(status, "\nUid:", (unsigned long)p->uid) ||
	    !status_ids_are(status, "\nGid:", (unsigned long)p->gid))
		return -EPERM;
	/* And a caller without capabilities may not trace a task holding some. */
	line = strstr(status, "\nCapPrm:");
	if (!line || sscanf(line + 8, "%llx", &prm) != 1 || prm)
		return -EPERM;
	/*
	 * /proc/PID files (not the directory) belong to root while the task
	 * is not dumpable; otherwise to its effective user and group.
	 */
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (stat(path, &st))
		return -ESRCH;
	if (st.st_uid != p->uid || st.st_gid != p->gid)
		return -EPERM;
	return 0;
}

bool wp_priv_can_read_kallsyms(const struct wp_priv *p)
{
	/* The kernel decides with the opener's effective capabilities. */
	switch (p->kptr_restrict) {
	case 0:
		if (p->paranoid <= 1)
			return true;
		/* fall through */
	case 1:
		return p->cap_syslog;
	default:
		return false;
	}
}

void wp_priv_warn_kallsyms_hidden(const struct wp_priv *p, const char *what)
{
	if (wp_priv_can_read_kallsyms(p))
		wp_warn("%s: /proc/kallsyms shows only zero addresses, although "
			"kernel.kptr_restrict is %d and kernel.perf_event_paranoid is %d%s",
			what, p->kptr_restrict, p->paranoid,
			p->cap_syslog ? " and CAP_SYSLOG is held" : "");
	else if (p->kptr_restrict < 0)
		wp_warn("%s: /proc/kallsyms shows only zero addresses, and "
			"kernel.kptr_restrict cannot be read", what);
	else if (p->kptr_restrict >= 2)
		wp_warn("%s: kernel.kptr_restrict is %d, which hides kernel addresses in "
			"/proc/kallsyms from everyone; lower it with 'sysctl kernel.kptr_restrict=1'",
			what, p->kptr_restrict);
	else if (p->kptr_restrict == 1)
		wp_warn("%s: kernel.kptr_restrict is 1, which shows kernel addresses in "
			"/proc/kallsyms only to CAP_SYSLOG; run as root or grant it "
			"(setcap cap_perfmon,cap_sys_ptrace,cap_syslog+ep)", what);
	else
		wp_warn("%s: /proc/kallsyms shows kernel addresses only to CAP_SYSLOG or with "
			"kernel.perf_event_paranoid <= 1 (it is %d); run as root or grant CAP_SYSLOG "
			"(setcap cap_perfmon,cap_sys_ptrace,cap_syslog+ep)", what, p->paranoid);
}

void wp_priv_explain_open_error(const struct wp_priv *p, int err,
				const char *what)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		if (p->paranoid > 2)
			wp_error("not allowed to profile %s: kernel.perf_event_paranoid is %d, "
				 "which forbids perf events to users without CAP_PERFMON; "
				 "run as root, grant CAP_PERFMON (setcap cap_perfmon,cap_sys_ptrace+ep), "
				 "or lower it with 'sysctl kernel.perf_event_paranoid=2'",
				 what, p->paranoid);
		else if (!wp_priv_can_trace_others(p))
			wp_error("not allowed to profile %s: it belongs to another user or is not "
				 "traceable; run as root, or grant wallprof CAP_PERFMON and give "
				 "--any-process (see PRIVILEGES in wallprof-record(1))", what);
		else
			wp_error("not allowed to profile %s (kernel.perf_event_paranoid is %d); "
				 "run as root or grant CAP_PERFMON", what, p->paranoid);
		break;
	case ESRCH:
		wp_error("cannot profile %s: no such process or thread", what);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		wp_error("cannot profile %s: the kernel does not support the requested event "
			 "(%s)", what, strerror(-err));
		break;
	case EMFILE:
	case ENFILE:
		wp_error("cannot profile %s: out of file descriptors (%s); raise 'ulimit -n'",
			 what, strerror(-err));
		break;
	default:
		wp_error("cannot profile %s: perf_event_open failed: %s", what, strerror(-err));
		break;
	}
}

int wp_priv_user_lookup(const char *name, struct wp_priv_user *u)
{
	struct passwd *pw;
	int n = 16;

	memset(u, 0, sizeof(*u));
	errno = 0;
	pw = getpwnam(name);
	if (!pw) {
		/* getpwnam(3): these errno values also mean "not found". */
		if (!errno || errno == ENOENT || errno == ESRCH || errno == EBADF ||
		    errno == EPERM)
			return -ENOENT;
		return -errno;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	/* Copied now: getgrouplist may reuse getpwnam's static entry. */
	u->name = strdup(pw->pw_name);
	u->home = strdup(pw->pw_dir);
	u->shell = strdup(pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
	if (!u->name || !u->home || !u->shell) {
		wp_priv_user_release(u);
		return -ENOMEM;
	}
	for (;;) {
		int want = n;
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));

		if (!g) {
			wp_priv_user_release(u);
			return -ENOMEM;
		}
		u->groups = g;
		if (getgrouplist(name, u->gid, u->groups, &want) >= 0) {
			u->ngroups = want;
			return 0;
		}
		/* want is now the size needed; never trust it to grow. */
		n = want > n ? want : n * 2;
		if (n > 65536) {
			wp_priv_user_release(u);
			return -E2BIG;
		}
	}
}

void wp_priv_user_release(struct wp_priv_user *u)
{
	free(u->groups);
	free(u->name);
	free(u->home);
	free(u->shell);
	memset(u, 0, sizeof(*u));
}

/* Drop every capability the kernel knows (PR_CAPBSET_READ fails past the last). */
static int empty_bounding_set(void)
{
	for (unsigned long c = 0; c < 64; c++) {
		int in = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (in < 0)
			return errno == EINVAL ? 0 : -errno;
		if (in && prctl(PR_CAPBSET_DROP, c, 0, 0, 0))
			return -errno;
	}
	return 0;
}

int wp_priv_drop_elevated(void)
{
	if (!getauxval(AT_SECURE))
		return 0;
	return wp_priv_drop_all(NULL);
}

int wp_priv_drop_gained(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

	memset(caps, 0, sizeof(caps));
	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	/*
	 * The inheritable set is the user's own: execve of a program with
	 * file capabilities leaves it as it was.  The ambient set is empty
	 * already (that execve cleared it), unless this process raised it.
	 */
	for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		caps[i].effective = caps[i].permitted = 0;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &hdr, caps))
		return -errno;
	return 0;
}

/* Whether any of the real, effective and saved user IDs is root's. */
static bool some_uid_is_root(void)
{
	uid_t r, e, s;

	return getresuid(&r, &e, &s) || !r || !e || !s;
}

/*
 * Runs in a forked child, so system calls only: libcap's cap_* functions
 * allocate.
 */
int wp_priv_drop_all(const struct wp_priv_user *u)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
	bool bounding_emptied = false;
	int err;

	memset(caps, 0, sizeof(caps));
	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	/*
	 * Without an empty bounding set a command running as uid 0 regains
	 * every capability at execve.  Changing it needs CAP_SETPCAP, which
	 * setresuid() to another user takes away: so first.
	 */
	if (caps[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)) {
		err = empty_bounding_set();
		if (err)
			return err;
		bounding_emptied = true;
	}
	/*
	 * glibc applies these to every thread of the process; this child has
	 * only the one, so each is a plain system call.
	 */
	if (u) {
		if (setgroups((size_t)u->ngroups, u->groups))
			return -errno;
		if (setresgid(u->gid, u->gid, u->gid))
			return -errno;
		if (setresuid(u->uid, u->uid, u->uid))
			return -errno;
	}
	/* EINVAL: a kernel before 4.3, without ambient capabilities. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	/* Effective, permitted and inheritable, which setresuid() keeps for uid 0. */
	memset(caps, 0, sizeof(caps));
	if (syscall(SYS_capset, &hdr, caps))
		return -errno;
	/*
	 * Root without CAP_SETPCAP (under a bounding set that lacks it) keeps
	 * its bounding set, and a command that runs as root would regain at
	 * execve every capability left in it.  With no_new_privs execve grants
	 * nothing that the process does not hold, and it holds nothing now.
	 */
	if (!bounding_emptied && some_uid_is_root() &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return 0;
}
