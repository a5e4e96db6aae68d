// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup.c: the launched command's own cgroup (cgroup.h).
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
 * Cgroups left by a wallprof that was killed: empty ones whose process is
 * gone.  A busy one is left alone (rmdir fails).
 */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[4096 + 256];
		long pid;
		char *end;

		if (strncmp(e->d_name, CGROUP_PREFIX, strlen(CGROUP_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(CGROUP_PREFIX), &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		if (!rmdir(path))
			wp_debug("removed the stale cgroup %s", path);
	}
	closedir(d);
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
	char path[4096 + 16];
	FILE *f;
	int pid;

	if (!cg->path)
		return;
	if (cg->fd >= 0)
		close(cg->fd);
	/* A process that outlives the command (a daemon it started) goes back. */
	for (int round = 0; round < 3 && rmdir(cg->path) && errno == EBUSY; round++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path);
		f = fopen(path, "re");
		if (!f)
			break;
		while (fscanf(f, "%d", &pid) == 1)
			if (write_pid(cg->parent, pid))
				wp_debug("cannot move process %d out of %s", pid, cg->path);
		fclose(f);
	}
	free(cg->path);
	free(cg->parent);
	cg->fd = -1;
	cg->path = cg->parent = NULL;
}
