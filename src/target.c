/* SPDX-License-Identifier: GPL-2.0-or-later */
/* target.c: launching the profiled command and finding existing threads. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdlimit.h"
#include "log.h"
#include "priv.h"
#include "quote.h"
#include "target.h"
#include "util.h"

/* The variables that describe the user, as su(1) sets them. */
static const char *const user_vars[] = { "HOME=", "USER=", "LOGNAME=", "SHELL=" };
#define NR_USER_VARS (sizeof(user_vars) / sizeof(user_vars[0]))

/*
 * What another user's command keeps of root's environment without
 * --preserve-env: how to talk to the terminal, where commands are, and
 * the language, formats and time zone.  A trailing '*' matches a prefix.
 */
static const char kept_vars[] = "TERM,COLORTERM,PATH,LANG,LANGUAGE,LC_*,TZ";

/*
 * The environment of a command run as another user: that user's HOME,
 * USER, LOGNAME and SHELL, and of wallprof's own only what keep allows.
 * Built before fork.
 */
struct user_env {
	char **envp;			/* entries borrowed from environ, and vars */
	char *vars[NR_USER_VARS];	/* owned */
};

static void user_env_release(struct user_env *e)
{
	free(e->envp);
	for (size_t i = 0; i < NR_USER_VARS; i++)
		free(e->vars[i]);
	memset(e, 0, sizeof(*e));
}

/* Whether entry ("NAME=value") is named in list ("A,B,C*"). */
static bool env_listed(const char *entry, const char *list)
{
	size_t len = strcspn(entry, "=");

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n && list[n - 1] == '*' ? len >= n - 1 && !strncmp(entry, list, n - 1) :
		    n == len && !strncmp(entry, list, n))
			return true;
		list += n + (list[n] == ',');
	}
	return false;
}

static int user_env_init(struct user_env *e, const struct wp_priv_user *u,
			 const struct wp_child_env *keep)
{
	const char *values[NR_USER_VARS] = { u->home, u->name, u->name, u->shell };
	size_t n = 0, k = 0;

	memset(e, 0, sizeof(*e));
	while (environ && environ[n])
		n++;
	e->envp = calloc(n + NR_USER_VARS + 1, sizeof(*e->envp));
	if (!e->envp)
		return -ENOMEM;
	for (size_t i = 0; i < NR_USER_VARS; i++) {
		size_t len = strlen(user_vars[i]) + strlen(values[i]) + 1;

		e->vars[i] = malloc(len);
		if (!e->vars[i]) {
			user_env_release(e);
			return -ENOMEM;
		}
		snprintf(e->vars[i], len, "%s%s", user_vars[i], values[i]);
		e->envp[k++] = e->vars[i];
	}
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t v = 0; v < NR_USER_VARS; v++)
			replaced |= !strncmp(environ[i], user_vars[v], strlen(user_vars[v]));
		if (replaced)
			continue;
		if (keep->all || env_listed(environ[i], kept_vars) ||
		    env_listed(environ[i], keep->names))
			e->envp[k++] = environ[i];
	}
	return 0;
}

bool wp_child_env_name_ok(const char *name, size_t len)
{
	if (!len || len > 256 || isdigit((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_' ||
		      (name[i] == '*' && i == len - 1 && len > 1)))
			return false;
	return true;
}

/*
 * What the launch pipe carries to wallprof: the command's pid, from the
 * stub, and an errno if it could not run.  Each message is written whole
 * (less than PIPE_BUF), and they may come in either order.
 */
struct launch_msg {
	int32_t kind;
	int32_t value;
};
enum { LAUNCH_PID = 'P', LAUNCH_ERRNO = 'E' };

static void launch_send(int fd, int32_t kind, int32_t value)
{
	struct launch_msg m = { kind, value };

	if (write(fd, &m, sizeof(m)) < 0)
		_exit(127);
}

/*
 * Runs in the forked child, the stub, until it forks the command; the
 * command runs this until execve.  It allocates nothing and uses no NSS
 * (the user and the environment were made before fork), so a lock that
 * another thread held at fork cannot stop it; record also forks before
 * it starts its drain and writer threads (wp_drain_start() comes later in
 * session.c).  Every call is a system call wrapper but execvpe, which
 * POSIX does not count as async-signal-safe: it searches PATH (read with
 * getenv) itself.  glibc's execvpe allocates nothing and takes no lock,
 * which glibc's own posix_spawnp child relies on too; with another C
 * library, it is the one call here to check.
 *
 * Why a stub: the recording's events are attached to it, and it forks the
 * command as wallprof's own child (CLONE_PARENT), which inherits them.
 * The stub never runs again and keeps the events in a perf context that
 * the kernel never shares (see event.h), so that the command's tasks all
 * carry inherited copies: the kernel may swap those between a thread and
 * the threads it made at a context switch (the cheap way), and a copy
 * dies with its thread without taking the recording's events with it.
 * The stub lives until wallprof closes the go pipe (wp_child_finish).
 */
static void child_main(int go_fd, int err_fd, char *const argv[],
		       const struct wp_priv_user *user, enum wp_child_caps caps, char *const envp[])
{
	sigset_t all, none;
	char go;
	int err = 0;
	long pid;

	if (read(go_fd, &go, 1) != 1)
		_exit(127);	/* the parent gave up */
	/*
	 * Another user's command gets a session of its own, without a
	 * controlling terminal: in wallprof's it could push input into the
	 * terminal (TIOCSTI) that root's shell reads after wallprof ends.
	 */
	if (user && setsid() < 0)
		err = errno;
	if (!err && (user || caps == WP_CHILD_DROP_ALL))
		err = -wp_priv_drop_all(user);
	else if (!err && caps == WP_CHILD_DROP_GAINED)
		err = -wp_priv_drop_gained();
	if (err) {
		launch_send(err_fd, LAUNCH_ERRNO, err);
		_exit(127);
	}
	/* Nothing but SIGKILL ends the stub before wallprof says so. */
	sigfillset(&all);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &all, NULL);
	pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), 0UL, 0UL, 0UL, 0UL);
	if (pid < 0) {
		launch_send(err_fd, LAUNCH_ERRNO, errno);
		_exit(127);
	}
	if (pid == 0) {
		if (user && setsid() < 0) {
			launch_send(err_fd, LAUNCH_ERRNO, errno);
			_exit(127);
		}
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvpe(argv[0], argv, envp);
		launch_send(err_fd, LAUNCH_ERRNO, errno);
		_exit(127);
	}
	launch_send(err_fd, LAUNCH_PID, (int32_t)pid);
	close(err_fd);
	/* Signals stay blocked: only the end of the pipe ends the stub. */
	for (;;) {
		ssize_t n = read(go_fd, &go, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	_exit(0);
}

int wp_child_prepare(struct wp_child *c, char *const argv[], const char *user,
		     const struct wp_child_env *keep, enum wp_child_caps caps)
{
	int go[2] = { -1, -1 }, ep[2] = { -1, -1 }, err;
	struct wp_priv_user pu = { 0 };
	struct user_env env = { 0 };

	memset(c, 0, sizeof(*c));
	c->pid = c->stub = -1;
	c->go_fd = c->err_fd = -1;
	if (user) {
		err = wp_priv_user_lookup(user, &pu);
		if (err == -ENOENT) {
			wp_error("no such user '%s'", wp_quoted(user));
			return -EINVAL;
		}
		if (err) {
			wp_error("cannot look up user '%s': %s", wp_quoted(user), strerror(-err));
			return err;
		}
		/* Root itself: a set-user-ID root wallprof must not lend it out. */
		if (geteuid() != 0 || getuid() != 0) {
			wp_error("--user needs wallprof to run as root");
			err = -EPERM;
			goto out_user;
		}
		err = user_env_init(&env, &pu, keep);
		if (err)
			goto out_user;
	}
	c->cmd = strdup(argv[0]);
	if (!c->cmd) {
		err = -ENOMEM;
		goto out_user;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		err = -errno;
		goto out_close;
	}
	c->stub = fork();
	if (c->stub < 0) {
		err = -errno;
		wp_error("cannot fork: %s", strerror(-err));
		goto out_close;
	}
	if (c->stub == 0) {
		close(go[1]);
		close(ep[0]);
		/* Restore what a shell would give the command. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		/* Its own limit on open files, not the one wallprof raised. */
		wp_fdlimit_restore();
		{
			sigset_t none;

			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
		}
		child_main(go[0], ep[1], argv, user ? &pu : NULL, caps,
			   user ? env.envp : environ);
	}
	close(go[0]);
	close(ep[1]);
	c->go_fd = go[1];
	c->err_fd = ep[0];
	user_env_release(&env);
	wp_priv_user_release(&pu);
	return 0;

out_close:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	free(c->cmd);
	c->cmd = NULL;
out_user:
	user_env_release(&env);
	wp_priv_user_release(&pu);
	return err;
}

/* Let the stub go (it reads EOF) and reap it. */
static void stub_end(struct wp_child *c)
{
	if (c->go_fd >= 0)
		close(c->go_fd);
	c->go_fd = -1;
	if (c->stub > 0)
		while (waitpid(c->stub, NULL, 0) < 0 && errno == EINTR)
			;
	c->stub = -1;
}

int wp_child_start(struct wp_child *c)
{
	int child_errno = 0;
	pid_t pid = -1;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1) {
		int err = -errno;

		wp_error("cannot start '%s': %s", wp_quoted(c->cmd), strerror(-err));
		return err;
	}
	/*
	 * EOF once the stub and the command closed the pipe (O_CLOEXEC): the
	 * command runs.
	 */
	for (;;) {
		struct launch_msg m;

		n = read(c->err_fd, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m))
			break;
		if (m.kind == LAUNCH_PID)
			pid = m.value;
		else if (m.kind == LAUNCH_ERRNO && !child_errno)
			child_errno = m.value > 0 ? m.value : EIO;
	}
	close(c->err_fd);
	c->err_fd = -1;
	if (!child_errno && pid <= 0)
		child_errno = EIO;
	if (child_errno) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		stub_end(c);
		wp_error("cannot run '%s': %s", wp_quoted(c->cmd), strerror(child_errno));
		return -child_errno;
	}
	c->pid = pid;
	return 0;
}

void wp_child_finish(struct wp_child *c)
{
	stub_end(c);
}

void wp_child_abort(struct wp_child *c)
{
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->stub > 0)
		kill(c->stub, SIGKILL);
	stub_end(c);
	free(c->cmd);
	memset(c, 0, sizeof(*c));
	c->pid = c->stub = -1;
	c->go_fd = c->err_fd = -1;
}

int wp_parse_id_list(const char *s, pid_t **out, size_t *n)
{
	pid_t *ids = NULL;
	size_t cnt = 0;
	const char *p = s;

	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		long v;
		pid_t *ni;

		if (!isdigit((unsigned char)*p))
			goto bad;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v <= 0 || v > INT32_MAX || (*end && *end != ','))
			goto bad;
		ni = realloc(ids, (cnt + 1) * sizeof(*ids));
		if (!ni) {
			free(ids);
			return -ENOMEM;
		}
		ids = ni;
		/* A task named twice is still one task: its events once. */
		for (size_t i = 0; i < cnt && v; i++)
			if (ids[i] == (pid_t)v)
				v = 0;
		if (v)
			ids[cnt++] = (pid_t)v;
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			goto bad;
	}
	*out = ids;
	*n = cnt;
	return 0;
bad:
	free(ids);
	return -EINVAL;
}

int wp_list_threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	pid_t *ids = NULL;
	size_t cnt = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		pid_t *ni;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		ni = realloc(ids, (cnt + 1) * sizeof(*ids));
		if (!ni) {
			free(ids);
			closedir(d);
			return -ENOMEM;
		}
		ids = ni;
		ids[cnt++] = (pid_t)strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	*out = ids;
	*n = cnt;
	return 0;
}

pid_t wp_thread_group(pid_t tid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (wp_read_text_file(path, buf, sizeof(buf)))
		return -ESRCH;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -ESRCH;
	return (pid_t)strtol(p + 6, NULL, 10);
}

size_t wp_unlisted_children(pid_t pid, const pid_t *listed, size_t n, pid_t *first)
{
	pid_t *tids;
	size_t nr_tids, count = 0;

	if (wp_list_threads(pid, &tids, &nr_tids))
		return 0;
	for (size_t i = 0; i < nr_tids; i++) {
		char path[64], buf[4096], *p = buf, *end;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, tids[i]);
		if (wp_read_text_file(path, buf, sizeof(buf)))
			continue;
		for (long child; (child = strtol(p, &end, 10)) > 0 && end != p; p = end) {
			size_t k = 0;

			while (k < n && listed[k] != (pid_t)child)
				k++;
			if (k < n)
				continue;
			if (!count++)
				*first = (pid_t)child;
		}
	}
	free(tids);
	return count;
}

/* Whether /proc/<path>/stat shows a task that is neither zombie nor dead. */
static bool stat_alive(const char *path)
{
	char buf[512], *p;

	if (wp_read_text_file(path, buf, sizeof(buf)))
		return false;
	/* The state letter follows the last ')' of the comm field. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

pid_t wp_live_thread(pid_t pid)
{
	char path[96];
	struct dirent *de;
	pid_t found = -ESRCH;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (stat_alive(path))
		return pid;
	/*
	 * A process whose main thread called pthread_exit() shows as a
	 * zombie while its other threads still run.
	 */
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while (found < 0 && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/stat", pid, de->d_name);
		if (stat_alive(path))
			found = (pid_t)strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	return found;
}

bool wp_process_alive(pid_t pid)
{
	return wp_live_thread(pid) > 0;
}
