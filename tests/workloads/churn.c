/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * churn: short-lived threads and processes, one after the other, for
 * SECONDS (default 1): each round creates a thread ("churner") that spins
 * SPIN_US microseconds (default 2000) and exits, and every fourth round
 * also forks a child process ("ck" and the parent's pid, so that the
 * children of one run can be told from another's) that spins as long and
 * exits.
 * Threads and processes exit while the recording runs, and their tids are
 * soon reused: the case where records of a task arrive after its EXIT.
 * Prints the main thread's schedstat line with, as its extra fields, the
 * rounds made and the CPU time of the whole process (every thread, dead or
 * alive, from getrusage) and of its children:
 *	thread main pid P tid T ... threads N forks M cpu_ns C children_cpu_ns K
 * usage: churn [SECONDS [SPIN_US]]
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include "wl.h"

static double spin_us = 2000;
static volatile unsigned long long churn_sink;

__attribute__((noinline)) static void churn_spin(void)
{
	double until = wl_now() + spin_us / 1e6;
	unsigned long long x = 1;

	while (wl_now() < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	churn_sink = x;
}

static void *churner(void *arg)
{
	(void)arg;
	wl_name("churner");
	churn_spin();
	return NULL;
}

static unsigned long long tv_ns(struct timeval tv)
{
	return (unsigned long long)tv.tv_sec * 1000000000ULL + (unsigned long long)tv.tv_usec * 1000ULL;
}

int main(int argc, char **argv)
{
	double secs = wl_arg(argc, argv, 1, 1.0), until;
	unsigned long threads = 0, forks = 0;
	struct rusage self, kids;
	char extra[200];

	spin_us = wl_arg(argc, argv, 2, 2000);
	until = wl_now() + secs;
	while (wl_now() < until) {
		pthread_t t;
		pid_t kid = -1;

		if (threads % 4 == 0) {
			kid = fork();
			if (kid == 0) {
				char name[16];

				snprintf(name, sizeof(name), "ck%d", (int)getppid());
				wl_name(name);
				churn_spin();
				_exit(0);
			}
			if (kid > 0)
				forks++;
		}
		if (pthread_create(&t, NULL, churner, NULL))
			return 1;
		pthread_join(t, NULL);
		threads++;
		if (kid > 0)
			waitpid(kid, NULL, 0);
	}
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	snprintf(extra, sizeof(extra), "threads %lu forks %lu cpu_ns %llu children_cpu_ns %llu",
		 threads, forks, tv_ns(self.ru_utime) + tv_ns(self.ru_stime),
		 tv_ns(kids.ru_utime) + tv_ns(kids.ru_stime));
	wl_report("main", extra);
	return 0;
}
