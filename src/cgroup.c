// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup.c: the launched command's own cgroup, and the attached processes' (cgroup.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "util.h"

#define CGROUP_PREFIX "wallprof-"

/* Where the cgroup v2 hierarchy is mounted (mount point, malloc'ed). */
static int cgroup2_mount(char **out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	/* "36 25 0:30 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw,..." */
	while (err == -ENOENT && getline(&line, &cap, f) > 0) {
		char *dash = strstr(line, " - "), mnt[4096];

		if (!dash || strncmp(dash, " - cgroup2 ", 11) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* Octal escapes (\040 for a space) are not worth undoing: skip those. */
		if (strchr(mnt, '\\'))
			continue;
		*out = strdup(mnt);
		err = *out ? 0 : -ENOMEM;
	}
	free(line);
	fclose(f);
	return err;
}

/* This process's cgroup v2 path ("0::/user.slice/..."), malloc'ed. */
static int own_cgroup(char **out)
{
	char buf[8192], *p, *nl;
	int err = wp_read_text_file("/proc/self/cgroup", buf, sizeof(buf));

	if (err)
		return err;
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(p, "0::/", 4)) {
			/* A cgroup removed under us reads "/... (deleted)". */
			if (strstr(p, " (deleted)"))
				return -ENOENT;
			*out = strdup(p + 3);
			return *out ? 0 : -ENOMEM;
		}
	}
	return -ENOENT;
}

static int write_pid(const char *dir, pid_t pid)
{
	char path[4096 + 16], num[24];
	int fd, err = 0, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(num, sizeof(num), "%d\n", (int)pid);
	if (write(fd, num, (size_t)n) != n)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/*
 * How deep a tree under the command's cgroup is removed: the command may
 * make cgroups of its own inside it (a container runtime, a service
 * manager), but no real one nests this deep.  One descriptor is open per
 * level while removing.
 */
#define MAX_DEPTH 32
/* Rounds of moving processes out and trying rmdir again: they may fork meanwhile. */
#define MOVE_ROUNDS 4

/* Move every process of the cgroup open at dir to the cgroup whose cgroup.procs is to. */
static void move_procs(int dir, int to)
{
	char buf[4096 + 1];
	size_t have = 0;
	ssize_t n;
	int fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	/* Read a page at a time: a cgroup may hold any number of processes. */
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0 || (n < 0 && errno == EINTR)) {
		char *p = buf, *nl;

		if (n < 0)
			continue;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			size_t len = (size_t)(nl - p) + 1;

			/* One pid per write(): the kernel takes one at a time. */
			if (write(to, p, len) != (ssize_t)len)
				wp_debug("cannot move process %.*s out of a cgroup: %s",
					 (int)(len - 1), p, strerror(errno));
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* no line is that long: not a pid list */
	}
	close(fd);
}

/*
 * Remove the cgroup name under the directory open at parent, with every
 * cgroup below it, moving the processes found in them to the cgroup
 * whose cgroup.procs is open at to (wallprof's own: they carry on as
 * they would have without the recording).  Depth first, since a cgroup
 * with children cannot be removed.  0 or -errno (-EBUSY: some remained).
 */
static int remove_tree(int parent, const char *name, int to, unsigned int depth)
{
	int dir, err = 0;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	dir = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int round = 0; round < MOVE_ROUNDS; round++) {
		int dup_fd = dup(dir);
		DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		struct dirent *e;

		if (!d) {
			if (dup_fd >= 0)
				close(dup_fd);
			err = -ENOMEM;
			break;
		}
		/* Children first: a cgroup with children cannot be removed. */
		while ((e = readdir(d))) {
			int sub;

			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			sub = remove_tree(dir, e->d_name, to, depth + 1);
			if (sub && !err)
				err = sub;
		}
		closedir(d);
		move_procs(dir, to);
		if (!unlinkat(parent, name, AT_REMOVEDIR) || errno == ENOENT) {
			err = 0;
			break;
		}
		err = -errno;
		if (err != -EBUSY && err != -ENOTEMPTY)
			break;
	}
	close(dir);
	return err;
}

/* The cgroup.procs file of the cgroup at path, for writing, or -errno. */
static int procs_open(const char *path)
{
	char file[4096 + 16];
	int fd;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Cgroups left by a wallprof that was killed: those whose process is
 * gone, with whatever the command made inside them; what still runs in
 * them goes to this wallprof's cgroup (their parent).
 */
static void remove_stale(const char *parent)
{
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC), to;
	DIR *d;
	struct dirent *e;

	if (pfd < 0)
		return;
	to = procs_open(parent);
	d = fdopendir(dup(pfd));
	while (d && (e = readdir(d))) {
		long pid;
		char *end;
		int err;

		if (strncmp(e->d_name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(CGROUP_PREFIX), &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		err = remove_tree(pfd, e->d_name, to, 0);
		if (!err)
			wp_debug("removed the stale cgroup %s/%s", parent, e->d_name);
		else
			wp_debug("cannot remove the stale cgroup %s/%s: %s", parent, e->d_name,
				 strerror(-err));
	}
	if (d)
		closedir(d);
	if (to >= 0)
		close(to);
	close(pfd);
}

int wp_cgroup_create(struct wp_cgroup *cg, pid_t pid)
{
	char *mnt = NULL, *own = NULL;
	int err;

	cg->fd = -1;
	cg->path = cg->parent = NULL;
	err = cgroup2_mount(&mnt);
	if (!err)
		err = own_cgroup(&own);
	if (err)
		goto out;
	if (asprintf(&cg->parent, "%s%s", mnt, strcmp(own, "/") ? own : "") < 0 ||
	    asprintf(&cg->path, "%s/" CGROUP_PREFIX "%d", cg->parent, (int)getpid()) < 0) {
		cg->parent = cg->path = NULL;	/* undefined after a failure */
		err = -ENOMEM;
		goto out;
	}
	remove_stale(cg->parent);
	if (mkdir(cg->path, 0755)) {
		err = -errno;
		goto out;
	}
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0) {
		err = -errno;
		rmdir(cg->path);
		goto out;
	}
	err = write_pid(cg->path, pid);
	if (err) {
		close(cg->fd);
		rmdir(cg->path);
	}
out:
	if (err) {
		wp_debug("no cgroup of its own for the command: %s", strerror(-err));
		free(cg->path);
		free(cg->parent);
		cg->fd = -1;
		cg->path = cg->parent = NULL;
	}
	free(mnt);
	free(own);
	return err;
}

void wp_cgroup_remove(struct wp_cgroup *cg)
{
	const char *name;
	int parent, to, err;

	if (!cg->path)
		return;
	if (cg->fd >= 0)
		close(cg->fd);
	/*
	 * A process that outlives the command (a daemon it started) goes
	 * back, from whatever cgroup the command made inside its own.
	 */
	name = strrchr(cg->path, '/') + 1;
	parent = open(cg->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	to = procs_open(cg->parent);
	err = parent < 0 ? -errno : remove_tree(parent, name, to, 0);
	if (err)
		wp_warn("cannot remove the command's cgroup %s: %s; the next recording "
			"removes it", cg->path, strerror(-err));
	if (to >= 0)
		close(to);
	if (parent >= 0)
		close(parent);
	free(cg->path);
	free(cg->parent);
	cg->fd = -1;
	cg->path = cg->parent = NULL;
}

/* A process's cgroup v2 path ("/system.slice/x.service"), malloc'ed. */
static int process_cgroup(pid_t pid, char **out)
{
	char file[64], buf[8192], *p, *nl, *found = NULL;
	int err;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	err = wp_read_text_file(file, buf, sizeof(buf));
	if (err)
		return err;
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(p, "0::/", 4))
			continue;
		/* One v2 line: a second would be a name with a newline in it. */
		if (found || strstr(p, " (deleted)"))
			return -ENOENT;
		found = p + 3;
	}
	if (!found)
		return -ENOENT;
	*out = strdup(found);
	return *out ? 0 : -ENOMEM;
}

/* The directory of path under the directory open at root, a name at a time. */
static int open_below(int root, const char *path)
{
	char *copy = strdup(path), *name, *save = NULL;
	int fd = dup(root);
	unsigned int depth = 0;

	if (!copy || fd < 0) {
		free(copy);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	for (name = strtok_r(copy, "/", &save); name && fd >= 0;
	     name = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(name, ".") || !strcmp(name, "..") || ++depth > MAX_DEPTH * 4) {
			close(fd);
			fd = -ELOOP;
			break;
		}
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next < 0 ? -errno : next;
	}
	free(copy);
	return fd;
}

/* At most this many processes and cgroups are read from a cgroup tree. */
#define PROCS_MAX 65536

static bool listed(const pid_t *pids, size_t n, long pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* A process's parent, from /proc/PID/stat; 0 when it is gone. */
static long parent_of(long pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (wp_read_text_file(path, buf, sizeof(buf)))
		return 0;
	/* "PID (COMM) S PPID ...": the name may hold anything, ')' too. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] && p[3] == ' ' ? strtol(p + 4, NULL, 10) : 0;
}

/* Ancestors looked at, at most, for a process of a cgroup. */
#define ANCESTORS_MAX 64

/*
 * Whether pid is one of pids[0..n) or was started by one (a server's
 * workers, a short-lived child), or has exited meanwhile.
 */
static bool theirs(const pid_t *pids, size_t n, long pid)
{
	for (unsigned int i = 0; i < ANCESTORS_MAX; i++) {
		if (listed(pids, n, pid))
			return true;
		pid = parent_of(pid);
		if (!pid)
			return i == 0;	/* gone: whoever it was is no longer there */
		if (pid <= 1)
			return false;
	}
	return false;
}

/*
 * Whether every process in the cgroup open at dir, and in every cgroup
 * below it, is one of pids[0..n) or started by one: 0, -EBUSY (another
 * is), -E2BIG.
 */
static int only_these(int dir, const pid_t *pids, size_t n, unsigned int depth, size_t *seen)
{
	char buf[4096 + 1];
	size_t have = 0;
	ssize_t got;
	int fd, sub_fd, dup_fd, err = 0;
	DIR *d;
	struct dirent *e;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	/* (Cgroups count too: a tree of many empty ones is read no further.) */
	if (++*seen > PROCS_MAX)
		return -E2BIG;
	fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (!err && ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0 ||
			(got < 0 && errno == EINTR))) {
		char *p = buf, *nl;

		if (got < 0)
			continue;
		have += (size_t)got;
		buf[have] = '\0';
		while (!err && (nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			char *end;
			long pid = strtol(p, &end, 10);

			if (end != nl || ++*seen > PROCS_MAX)
				err = end != nl ? -EINVAL : -E2BIG;
			else if (!theirs(pids, n, pid))
				err = -EBUSY;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			err = -EINVAL;	/* no line is that long: not a pid list */
	}
	close(fd);
	if (err)
		return err;
	dup_fd = dup(dir);
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -ENOMEM;
	}
	while (!err && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub_fd = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub_fd < 0)
			continue;	/* removed meanwhile */
		err = only_these(sub_fd, pids, n, depth + 1, seen);
		close(sub_fd);
	}
	closedir(d);
	return err;
}

int wp_cgroup_of_processes(const pid_t *pids, size_t n, int *fd)
{
	char *mnt = NULL, *path = NULL;
	size_t seen = 0;
	int root = -1, dir = -1, err;

	*fd = -1;
	if (!n)
		return -ENOENT;
	err = cgroup2_mount(&mnt);
	for (size_t i = 0; !err && i < n; i++) {
		char *other = NULL;

		err = process_cgroup(pids[i], i ? &other : &path);
		if (!err && other && strcmp(other, path))
			err = -ENOENT;
		free(other);
	}
	if (!err && !strcmp(path, "/"))
		err = -EBUSY;
	if (!err) {
		root = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = root < 0 ? -errno : 0;
	}
	if (!err) {
		dir = open_below(root, path);
		err = dir < 0 ? dir : 0;
	}
	/* Read from the directory itself: this is the cgroup they are in, and theirs alone. */
	if (!err)
		err = only_these(dir, pids, n, 0, &seen);
	if (!err && seen < 2)
		err = -ENOENT;	/* (the cgroup itself counted, and no process) */
	if (err) {
		wp_debug("the processes attached to have no cgroup of their own: %s",
			 strerror(-err));
		if (dir >= 0)
			close(dir);
	} else {
		*fd = dir;
	}
	if (root >= 0)
		close(root);
	free(mnt);
	free(path);
	return err;
}
