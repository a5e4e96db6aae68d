/* SPDX-License-Identifier: GPL-2.0-or-later */
/* priv.c: capabilities, perf_event_paranoid, and how to explain refusals. */
#include <errno.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"

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
	long paranoid;

	memset(p, 0, sizeof(*p));
	p->paranoid = wp_read_int_file(PARANOID_PATH, &paranoid) ? 4 : (int)paranoid;
	p->root = geteuid() == 0;
	p->cap_perfmon = cap_effective(caps, CAP_PERFMON);
	p->cap_sys_admin = cap_effective(caps, CAP_SYS_ADMIN);
	p->cap_sys_ptrace = cap_effective(caps, CAP_SYS_PTRACE);
	p->cap_ipc_lock = cap_effective(caps, CAP_IPC_LOCK);
	if (caps)
		cap_free(caps);
}

static bool has_perfmon(const struct wp_priv *p)
{
	return p->cap_perfmon || p->cap_sys_admin;
}

bool wp_priv_can_sample_kernel(const struct wp_priv *p)
{
	return has_perfmon(p) || p->paranoid <= 1;
}

bool wp_priv_can_profile_cpus(const struct wp_priv *p)
{
	return has_perfmon(p) || p->paranoid <= 0;
}

bool wp_priv_can_trace_others(const struct wp_priv *p)
{
	return p->cap_sys_ptrace || p->root;
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
				 "traceable; run as root or grant CAP_SYS_PTRACE and CAP_PERFMON "
				 "(setcap cap_perfmon,cap_sys_ptrace+ep)", what);
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

int wp_priv_drop_all(void)
{
	cap_t none;
	int err = 0;

	/*
	 * With CAP_SETPCAP (root) also empty the bounding set: otherwise a
	 * command running as uid 0 regains every capability at execve.
	 */
	if (CAP_IS_SUPPORTED(CAP_SETPCAP)) {
		for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++)
			if (CAP_IS_SUPPORTED(c) && cap_get_bound(c) == 1)
				cap_drop_bound(c);
	}
	if (cap_reset_ambient() && errno != EINVAL)
		err = -errno;
	none = cap_init();
	if (!none)
		return -ENOMEM;
	if (cap_set_proc(none) && !err)
		err = -errno;
	cap_free(none);
	return err;
}
