/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deep-inline: a recursion deeper than the unwinder's 256-frame limit in
 * which every level names as more than one frame: the recursive call sits
 * inside always-inlined functions, so its return address lies in inlined
 * code.  The unwound user stack alone then comes close to, and with the
 * kernel frames of a switch-out or a system call exceeds, the 512 frames
 * a stack of the report holds.  The leaf spins, then sleeps, always from
 * the same call site: the same user stack is met again and again under
 * kernel stacks of different depths (on-CPU in user mode, on-CPU in the
 * system call, switched out).
 * usage: deep-inline [DEPTH [SECONDS]]   (defaults 300 and 1)
 */
#include "wl.h"

static volatile unsigned long long dl_sink;
static double dl_until;

__attribute__((noinline)) static unsigned long long dl_leaf(unsigned long long x)
{
	struct timespec ts = { 0, 200000 };

	while (wl_now() < dl_until) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		nanosleep(&ts, NULL);
	}
	return x;
}

__attribute__((noinline)) static unsigned long long dl_recurse(int depth, unsigned long long x);

/* Work after each call keeps the return address inside the inlined body. */
static inline __attribute__((always_inline)) unsigned long long
dl_inner(int depth, unsigned long long x)
{
	unsigned long long r = dl_recurse(depth - 1, x + 1);

	dl_sink += r;
	return r ^ (x >> 3);
}

static inline __attribute__((always_inline)) unsigned long long
dl_outer(int depth, unsigned long long x)
{
	unsigned long long r = dl_inner(depth, x * 3);

	dl_sink ^= r;
	return r + 7;
}

__attribute__((noinline)) static unsigned long long dl_recurse(int depth, unsigned long long x)
{
	unsigned long long r;

	if (depth <= 1)
		return dl_leaf(x);
	r = dl_outer(depth, x);
	dl_sink -= r;
	return r - 1;
}

int main(int argc, char **argv)
{
	int depth = (int)wl_arg(argc, argv, 1, 300);

	dl_until = wl_now() + wl_arg(argc, argv, 2, 1.0);
	dl_sink = dl_recurse(depth > 0 ? depth : 1, 1);
	wl_report("main", NULL);
	return 0;
}
