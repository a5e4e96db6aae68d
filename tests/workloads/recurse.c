/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * recurse: the hot leaf sits under a direct recursion of DEPTH calls of
 * the same function: main -> rc_driver -> rc_recurse x DEPTH -> rc_leaf.
 * Built without frame pointers and without sibling-call optimisation (see
 * tests/Makefile.inc), so every level is a real frame whose return address
 * is the same as its caller's: only the stack pointer tells them apart.
 * usage: recurse [DEPTH [SECONDS]]   (defaults 10 and 1)
 */
#include "wl.h"

static volatile unsigned long long rc_sink;

__attribute__((noinline)) static unsigned long long rc_leaf(unsigned long long x)
{
	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static unsigned long long rc_recurse(int depth, unsigned long long x)
{
	if (depth <= 1)
		return rc_leaf(x);
	/* Work after the call keeps it a real call, not a jump. */
	return rc_recurse(depth - 1, x + 1) ^ (x >> 3);
}

__attribute__((noinline)) static void rc_driver(int depth, double until)
{
	unsigned long long x = 1;

	while (wl_now() < until)
		x += rc_recurse(depth, x);
	rc_sink = x;
}

int main(int argc, char **argv)
{
	int depth = (int)wl_arg(argc, argv, 1, 10);
	double secs = wl_arg(argc, argv, 2, 1.0);

	rc_driver(depth > 0 ? depth : 1, wl_now() + secs);
	wl_report("main", NULL);
	return 0;
}
