/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bigframe: the main thread spins in one leaf under three callers, in
 * turn: near (a small frame), mid (a 32 KiB array on its frame) and far
 * (a 1 MiB array).  A DWARF unwind of a sample in the leaf needs a copy of
 * the stack past the caller's frame: a few hundred bytes, about 33 KiB
 * (more than the default copy, less than the kernel's 65528 bytes), or
 * over 1 MiB (more than any copy).  Prints the on-CPU time spent under
 * each caller, measured by the thread's CPU clock.
 * usage: bigframe [SECONDS]   (default 1)
 */
#include "wl.h"

#define MID_BYTES (32 << 10)
#define FAR_BYTES (1 << 20)

static volatile unsigned long long bf_sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long long bf_leaf(unsigned long long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

/*
 * The array is written and read, so that it stays on the frame, and a
 * byte of each page is written: the kernel's copy of the stack stops at
 * the first page that is not present.
 */
#define CALLER(name, bytes)								\
	__attribute__((noinline)) static unsigned long long name(unsigned long long x)	\
	{										\
		volatile char buf[bytes];						\
		for (size_t i = 0; i < sizeof(buf); i += 4096)				\
			buf[i] = (char)x;						\
		buf[sizeof(buf) - 1] = (char)(x >> 8);					\
		x = bf_leaf(x);								\
		return x ^ (unsigned long long)(buf[0] + buf[sizeof(buf) - 1]);		\
	}
CALLER(bf_near, 64)
CALLER(bf_mid, MID_BYTES)
CALLER(bf_far, FAR_BYTES)

int main(int argc, char **argv)
{
	double until = wl_now() + wl_arg(argc, argv, 1, 1.0), spent[3] = { 0 };
	unsigned long long x = 1;
	char extra[128];

	for (int turn = 0; wl_now() < until; turn = (turn + 1) % 3) {
		double t0 = cpu_now();

		/* About a millisecond under each caller at a time. */
		for (int i = 0; i < 20; i++)
			x = turn == 0 ? bf_near(x) : turn == 1 ? bf_mid(x) : bf_far(x);
		spent[turn] += cpu_now() - t0;
	}
	bf_sink = x;
	snprintf(extra, sizeof(extra), "near_ns %.0f mid_ns %.0f far_ns %.0f",
		 spent[0] * 1e9, spent[1] * 1e9, spent[2] * 1e9);
	wl_report("main", extra);
	return 0;
}
