// SPDX-License-Identifier: GPL-2.0-or-later
/* fdlimit.c: the descriptors wallprof may hold (fdlimit.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fdlimit.h"

/* Descriptors kept out of the caches' shares: data files, pipes, threads' own. */
#define RESERVE 24

static struct rlimit given;	/* as wallprof was started with */
static bool raised;
static unsigned int starved;

int wp_fdlimit_raise(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &given))
		return -errno;
	if (given.rlim_cur >= given.rlim_max)
		return 0;
	lim = given;
	lim.rlim_cur = lim.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return -errno;
	raised = true;
	return 0;
}

void wp_fdlimit_restore(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &given);
}

unsigned int wp_fdlimit(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim))
		return 1024;
	return lim.rlim_cur > 1U << 30 ? 1U << 30 : (unsigned int)lim.rlim_cur;
}

/* Descriptors open now (a guess of 16 without /proc). */
static unsigned int open_now(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	if (!d)
		return 16;
	while (readdir(d))
		n++;
	closedir(d);
	/* ".", ".." and the directory's own descriptor. */
	return n > 3 ? n - 3 : 0;
}

unsigned int wp_fdlimit_share(unsigned int parts, unsigned int min)
{
	unsigned int limit = wp_fdlimit(), used = open_now() + RESERVE;
	unsigned int share = limit > used ? (limit - used) / (parts ? parts : 1) : 0;

	return share > min ? share : min;
}

void wp_fd_note_starved(void)
{
	__atomic_fetch_add(&starved, 1, __ATOMIC_RELAXED);
}

unsigned int wp_fd_starved(void)
{
	return __atomic_load_n(&starved, __ATOMIC_RELAXED);
}

#define MAX_RECLAIMERS 8

static struct {
	wp_fd_reclaim_fn fn;
	void *arg;
} reclaimers[MAX_RECLAIMERS];

void wp_fd_reclaim_register(wp_fd_reclaim_fn fn, void *arg)
{
	for (unsigned int i = 0; i < MAX_RECLAIMERS; i++) {
		if (!reclaimers[i].fn) {
			reclaimers[i].fn = fn;
			reclaimers[i].arg = arg;
			return;
		}
	}
}

void wp_fd_reclaim_unregister(wp_fd_reclaim_fn fn, void *arg)
{
	for (unsigned int i = 0; i < MAX_RECLAIMERS; i++)
		if (reclaimers[i].fn == fn && reclaimers[i].arg == arg)
			reclaimers[i].fn = NULL;
}

unsigned int wp_fd_reclaim(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < MAX_RECLAIMERS; i++)
		if (reclaimers[i].fn)
			n += reclaimers[i].fn(reclaimers[i].arg);
	return n;
}

int wp_fd_dup(int fd)
{
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (copy < 0 && wp_fd_exhausted(-errno) && wp_fd_reclaim())
		copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0 && wp_fd_exhausted(-errno))
		wp_fd_note_starved();
	return copy;
}
