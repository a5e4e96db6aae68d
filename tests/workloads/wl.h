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

/* The calling thread's schedstat line (see above), into line. */
static inline void wl_format_report(char *line, size_t size, const char *name, const char *extra)
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
	snprintf(line, size, "thread %s pid %d tid %d oncpu_ns %llu runq_ns %llu slices %llu %s\n",
		 name, (int)getpid(), (int)wl_gettid(), on, rq, slices, extra ? extra : "");
}

/* Report the calling thread's schedstat line (see above). */
static inline void wl_report(const char *name, const char *extra)
{
	char line[256];

	wl_format_report(line, sizeof(line), name, extra);
	fputs(line, stdout);
	fflush(stdout);
}

/*
 * The same for a thread that returns right after: the line is kept and
 * printed by wl_report_flush, so that nothing (a lock on stdout, the
 * write) makes the thread wait between its reading and its end.
 */
#define WL_MAX_REPORTS 64
static char wl_reports[WL_MAX_REPORTS][256];
static int wl_nr_reports;

static inline void wl_report_later(const char *name, const char *extra)
{
	int i = __atomic_fetch_add(&wl_nr_reports, 1, __ATOMIC_RELAXED);

	if (i < WL_MAX_REPORTS)
		wl_format_report(wl_reports[i], sizeof(wl_reports[i]), name, extra);
}

/* After the threads were joined. */
static inline void wl_report_flush(void)
{
	for (int i = 0; i < wl_nr_reports && i < WL_MAX_REPORTS; i++)
		fputs(wl_reports[i], stdout);
	fflush(stdout);
}

static inline void wl_name(const char *name)
{
	pthread_setname_np(pthread_self(), name);
}

#endif
