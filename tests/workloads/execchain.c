/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * execchain: burn CPU on the main thread for SECONDS, then exec NEXT with
 * the rest of the arguments (one process, one name per exec: run it
 * through symlinks of other names).
 * usage: execchain SECONDS [NEXT SECONDS [NEXT ...]] [-- ARGS...]
 * (ARGS after "--" are only carried along, for the command lines.)
 */
#include "wl.h"

static volatile unsigned long long chain_sink;

__attribute__((noinline)) static void chain_burn(double until)
{
	unsigned long long x = 1;

	while (wl_now() < until)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	chain_sink = x;
}

int main(int argc, char **argv)
{
	chain_burn(wl_now() + wl_arg(argc, argv, 1, 0.2));
	if (argc > 2 && strcmp(argv[2], "--")) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	return 0;
}
