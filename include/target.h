/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target.h: what is profiled: a launched command or running processes.
 *
 * Owns the launched command and its stub: the stub is forked stopped on a
 * pipe so that events can be attached to it before the command runs a
 * single instruction; it gives up the capabilities the command must not
 * have (and optionally becomes another user) and forks the command as
 * wallprof's own child, which inherits the stub's events.  The stub then waits, untouched by signals,
 * until the pipe closes.
 */
#ifndef WALLPROF_TARGET_H
#define WALLPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct wp_child {
	pid_t pid;	/* the command, once wp_child_start() succeeded, else -1 */
	pid_t stub;	/* what the events are attached to */
	int go_fd;	/* write end: one byte releases the stub, EOF ends it */
	int err_fd;	/* read end: errno if execve failed, EOF if it worked */
	char *cmd;	/* argv[0], for messages */
};

/* What the launched command keeps of wallprof's capabilities. */
enum wp_child_caps {
	/* All: wallprof holds what its user holds (root, or no capability). */
	WP_CHILD_CAPS_AS_USER,
	/*
	 * None of those that wallprof's file capabilities gave it; the
	 * user's inheritable set stays (wp_priv_drop_gained()).
	 */
	WP_CHILD_DROP_GAINED,
	/* None at all, even as root (wp_priv_drop_all()). */
	WP_CHILD_DROP_ALL,
};

/*
 * What a command run as another user keeps of wallprof's environment
 * (--preserve-env): all of it, or, besides TERM, COLORTERM, PATH, LANG,
 * LANGUAGE, LC_* and TZ, the variables named in names ("A,B,C*": a
 * trailing '*' matches every name that starts so; NULL for none).
 */
struct wp_child_env {
	bool all;
	const char *names;
};

/*
 * Whether name[0..len) may be named in --preserve-env: letters, digits
 * and '_', not starting with a digit, with an optional trailing '*'.
 */
bool wp_child_env_name_ok(const char *name, size_t len);

/*
 * Fork a child that waits, then drops the capabilities that caps says
 * and execs argv.  With user (looked up here before fork) the child first
 * leaves for a session of its own, without a controlling terminal,
 * becomes that user with no capability whatever caps says, and execs
 * with the user's HOME, USER, LOGNAME and SHELL and what keep keeps of
 * wallprof's environment (keep is read only with user).  Returns 0 or
 * -errno (logged).
 */
int wp_child_prepare(struct wp_child *c, char *const argv[], const char *user,
		     const struct wp_child_env *keep, enum wp_child_caps caps);

/*
 * Let the child run the command.  Returns 0 once execve succeeded, or the
 * child's -errno (logged as "cannot run ...") after reaping it.
 */
int wp_child_start(struct wp_child *c);

/* Once the recording's events are disabled: end the stub and reap it. */
void wp_child_finish(struct wp_child *c);

/* Kill (if still waiting) and forget a child that never started. */
void wp_child_abort(struct wp_child *c);

/*
 * Parse a comma-separated list of positive ids ("12,34"), each kept
 * once.  *out is malloc'ed and owned by the caller.  -EINVAL for
 * anything else.
 */
int wp_parse_id_list(const char *s, pid_t **out, size_t *n);

/*
 * The thread ids of a process, from /proc/PID/task (malloc'ed).  -ESRCH
 * when the process does not exist.
 */
int wp_list_threads(pid_t pid, pid_t **out, size_t *n);

/* The process (thread group) a thread belongs to, or -ESRCH. */
pid_t wp_thread_group(pid_t tid);

/*
 * How many child processes of process pid, already running, are not
 * among the n processes listed (from /proc/PID/task/TID/children, each
 * read up to 4 KiB); *first is one of them.  0 when none, or when they
 * cannot be read.
 */
size_t wp_unlisted_children(pid_t pid, const pid_t *listed, size_t n, pid_t *first);

/*
 * Whether the process (or thread) exists and has a thread that is not a
 * zombie: a process lives on after its main thread's pthread_exit().
 */
bool wp_process_alive(pid_t pid);

/* A thread of the process that is still alive (pid itself if it is), or -ESRCH. */
pid_t wp_live_thread(pid_t pid);

#endif
