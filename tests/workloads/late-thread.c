/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * late-thread: prints "pid PID" and waits DELAY seconds (default 1), then
 * starts a thread ("late") that spins for SPIN seconds (default 0.5) and
 * reports its tid; exits when it is done.  For attach tests: a thread that
 * did not exist when the profiler attached.
 * usage: late-thread [DELAY] [SPIN]
 */
#include "wl.h"

static double spin_for = 0.5;
static volatile unsigned long long late_sink;

__attribute__((noinline)) static void late_work(double until)
{
	unsigned long long x = 1;

	while (wl_now() < until)
		for (int i = 0; i < 10000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
	late_sink = x;
}

static void *late(void *arg)
{
	(void)arg;
	wl_name("late");
	late_work(wl_now() + spin_for);
	wl_report("late", NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	double delay = wl_arg(argc, argv, 1, 1.0);
	struct timespec ts = {
		.tv_sec = (time_t)delay,
		.tv_nsec = (long)((delay - (double)(time_t)delay) * 1e9),
	};
	pthread_t t;

	spin_for = wl_arg(argc, argv, 2, 0.5);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	while (nanosleep(&ts, &ts))
		;
	if (pthread_create(&t, NULL, late, NULL))
		return 1;
	pthread_join(t, NULL);
	wl_report("main", NULL);
	return 0;
}
