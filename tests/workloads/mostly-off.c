/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mostly-off: one thread ("mostly-off") that is blocked most of its time
 * yet has deep stacks on a CPU, the case where a view that lists on-CPU
 * stacks first has no room left for the one that matters.  It spins
 * SPIN_MS of its own CPU time at the end of a DEPTH-call path (mo_left or
 * mo_right at each level, as the round's bits say, so that its on-CPU
 * stacks differ), then sleeps 4 x SPIN_MS in mo_nap(), for SECONDS of
 * wall time.  It reports its schedstat line with "rounds N".
 * usage: mostly-off [SECONDS [SPIN_MS [DEPTH]]]   (defaults 10, 2 and 10)
 */
#include "wl.h"

static double mo_spin_s = 0.002;
static volatile unsigned long long mo_sink;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time rather than wall time: a busy machine makes it slower, not less on a CPU. */
__attribute__((noinline)) static void mo_spin(void)
{
	double until = thread_cpu() + mo_spin_s;
	unsigned long long x = mo_sink;

	while (thread_cpu() < until)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	mo_sink = x;
}

static void mo_down(int depth, unsigned long path);

__attribute__((noinline)) static void mo_left(int depth, unsigned long path)
{
	mo_down(depth - 1, path >> 1);
	mo_sink++;
}

__attribute__((noinline)) static void mo_right(int depth, unsigned long path)
{
	mo_down(depth - 1, path >> 1);
	mo_sink--;
}

__attribute__((noinline)) static void mo_down(int depth, unsigned long path)
{
	if (depth <= 0)
		mo_spin();
	else if (path & 1)
		mo_right(depth, path);
	else
		mo_left(depth, path);
}

__attribute__((noinline)) static void mo_nap(void)
{
	double s = 4 * mo_spin_s;
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts))
		;
}

struct mo_args {
	double until;
	int depth;
};

static void *mo_thread(void *arg)
{
	const struct mo_args *a = arg;
	unsigned long round = 0;
	char extra[64];

	wl_name("mostly-off");
	while (wl_now() < a->until) {
		mo_down(a->depth, round++);
		mo_nap();
	}
	snprintf(extra, sizeof(extra), "rounds %lu", round);
	wl_report("mostly-off", extra);
	return NULL;
}

int main(int argc, char **argv)
{
	struct mo_args a = { wl_now() + wl_arg(argc, argv, 1, 10), (int)wl_arg(argc, argv, 3, 10) };
	pthread_t t;

	mo_spin_s = wl_arg(argc, argv, 2, 2) / 1000;
	if (pthread_create(&t, NULL, mo_thread, &a))
		return 1;
	pthread_join(t, NULL);
	wl_report("main", NULL);
	return 0;
}
