/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotswap: two recordings of "the same program before and after a
 * change", for report --diff.  It spins in hs_steady and in one of
 * hs_alpha or hs_beta, chosen by its first argument: with "alpha",
 * hs_alpha takes twice the time of hs_steady; with "beta", hs_beta does.
 * Between a recording of each, the chosen function is what grew.
 * usage: hotswap alpha|beta [SECONDS]   (default 1)
 */
#include "wl.h"

static volatile unsigned long hs_sink;

__attribute__((noinline)) static unsigned long hs_spin(unsigned long x, int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long hs_steady(unsigned long x)
{
	return hs_spin(x, 100000);
}

__attribute__((noinline)) static unsigned long hs_alpha(unsigned long x)
{
	return hs_spin(x, 200000) + 1;
}

__attribute__((noinline)) static unsigned long hs_beta(unsigned long x)
{
	return hs_spin(x, 200000) + 2;
}

int main(int argc, char **argv)
{
	int beta = argc > 1 && !strcmp(argv[1], "beta");
	double until = wl_now() + wl_arg(argc, argv, 2, 1.0);
	unsigned long x = 1;

	if (argc < 2 || (!beta && strcmp(argv[1], "alpha"))) {
		fprintf(stderr, "usage: hotswap alpha|beta [SECONDS]\n");
		return 2;
	}
	while (wl_now() < until) {
		x = hs_steady(x);
		x = beta ? hs_beta(x) : hs_alpha(x);
	}
	hs_sink = x;
	wl_report("main", NULL);
	return 0;
}
