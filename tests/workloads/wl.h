/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wl.h: shared bits of the test workloads.  Each workload prints, just
 * before it exits, one line per interesting thread with the kernel's own
 * figures from /proc/self/task/TID/schedstat, the ground truth that
 * wallprof's numbers are checked against:
 *
 *	thread <name> pid <pid> tid <tid> oncpu_ns <n> runq_ns <n> slices <n> <extra>
 */
#ifndef WL_H
#define WL_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline pid_t wl_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double wl_arg(int argc, char **argv, int i, double def)
{
	return argc > i ? strtod(argv[i], NULL) : def;
}

/* Report the calling thread's schedstat line (see above). */
static inline void wl_report(const char *name, const char *extra)
{
	unsigned long long on = 0, rq = 0, slices = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", wl_gettid());
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu %llu %llu", &on, &rq, &slices) != 3)
			on = rq = slices = 0;
		fclose(f);
	}
	printf("thread %s pid %d tid %d oncpu_ns %llu runq_ns %llu slices %llu %s\n", name,
	       (int)getpid(), (int)wl_gettid(), on, rq, slices, extra ? extra : "");
	fflush(stdout);
}

static inline void wl_name(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

#endif
