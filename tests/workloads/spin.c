/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spin: one thread ("spinner") burns CPU for SECONDS (default 1) through a
 * known call chain: spin_outer -> spin_middle (inlined) -> spin_leaf.
 * With "cpu", SECONDS of its own CPU time rather than of wall time: a
 * busy machine then makes it take longer, not spin less.
 * usage: spin [SECONDS [cpu]]
 */
#include "wl.h"

static double spin_seconds = 1.0;
static volatile unsigned long long spin_sink;
static clockid_t spin_clock = CLOCK_MONOTONIC;

/* Seconds on spin_clock. */
static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(spin_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long long spin_leaf(unsigned long long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static inline __attribute__((always_inline)) unsigned long long spin_middle(unsigned long long x)
{
	x = spin_leaf(x) ^ (x >> 7);
	return x;
}

__attribute__((noinline)) static void spin_outer(double until)
{
	unsigned long long x = 1;

	while (spin_now() < until)
		x = spin_middle(x);
	spin_sink = x;
}

static void *spinner(void *arg)
{
	(void)arg;
	wl_name("spinner");
	spin_outer(spin_now() + spin_seconds);
	wl_report("spinner", NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	spin_seconds = wl_arg(argc, argv, 1, 1.0);
	if (argc > 2 && !strcmp(argv[2], "cpu"))
		spin_clock = CLOCK_THREAD_CPUTIME_ID;
	if (pthread_create(&t, NULL, spinner, NULL))
		return 1;
	pthread_join(t, NULL);
	wl_report("main", NULL);
	return 0;
}
