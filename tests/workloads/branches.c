/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * branches: many distinct stacks.  Every call of br_work sits at the end
 * of a path of DEPTH calls, each of br_left or br_right as the bits of a
 * counter say, so up to 2^DEPTH different stacks are sampled: the big
 * profile of the flame graph test.  Built with frame pointers (see
 * tests/Makefile.inc) so that it can be recorded cheaply with -g fp.
 * It runs for SECONDS of its own CPU time, not of wall time, so that a
 * busy machine makes it take longer rather than sample less.
 * usage: branches [DEPTH [SECONDS]]   (defaults 16 and 1)
 */
#include "wl.h"

static volatile unsigned long br_sink;

__attribute__((noinline)) static unsigned long br_work(unsigned long x)
{
	for (int i = 0; i < 300; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static unsigned long br_down(int depth, unsigned long path, unsigned long x);

__attribute__((noinline)) static unsigned long br_left(int depth, unsigned long path,
							unsigned long x)
{
	return br_down(depth, path, x + 1) ^ (x >> 3);
}

__attribute__((noinline)) static unsigned long br_right(int depth, unsigned long path,
							 unsigned long x)
{
	return br_down(depth, path, x + 2) ^ (x >> 5);
}

__attribute__((noinline)) static unsigned long br_down(int depth, unsigned long path,
							unsigned long x)
{
	if (depth <= 0)
		return br_work(x);
	return (path & 1 ? br_right : br_left)(depth - 1, path >> 1, x) + 1;
}

/* The process's CPU time so far, in seconds. */
static double br_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int depth = (int)wl_arg(argc, argv, 1, 16);
	double until = br_cpu_now() + wl_arg(argc, argv, 2, 1.0);
	unsigned long x = 1, n = 0;

	if (depth < 1 || depth > 40)
		depth = 16;
	while (br_cpu_now() < until)
		for (int i = 0; i < 64; i++, n++)
			/* A multiplicative walk visits the paths in no simple order. */
			x += br_down(depth, n * 0x9e3779b97f4a7c15UL >> (64 - depth), x);
	br_sink = x;
	wl_report("main", NULL);
	return 0;
}
