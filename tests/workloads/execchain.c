/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * execchain: burn CPU on the main thread for SECONDS, then exec NEXT with
 * the rest of the arguments (one process, one name per exec: run it
 * through symlinks of other names).
 * usage: execchain SECONDS [NEXT SECONDS [NEXT ...]] [-- ARGS...]
 * (ARGS after "--" are only carried along, for the command lines.)
 * Each stage prints its own times (see main).
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

/* The calling thread's on-CPU time so far, from schedstat (0 if unreadable). */
static unsigned long long chain_oncpu(void)
{
	unsigned long long on = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on;
}

/*
 * Each stage prints what it measured of itself before it execs the next
 * or returns: "stage NAME start_ns T0 end_ns T1 oncpu_start_ns C0
 * oncpu_end_ns C1" (CLOCK_MONOTONIC, the clock of the recording, and
 * schedstat's on-CPU time of the one thread all stages run on).
 */
int main(int argc, char **argv)
{
	double t0 = wl_now();
	unsigned long long c0 = chain_oncpu(), c1;
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	chain_burn(t0 + wl_arg(argc, argv, 1, 0.2));
	c1 = chain_oncpu();
	printf("stage %s start_ns %.0f end_ns %.0f oncpu_start_ns %llu oncpu_end_ns %llu\n",
	       name, t0 * 1e9, wl_now() * 1e9, c0, c1);
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "--")) {
		execv(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	return 0;
}
