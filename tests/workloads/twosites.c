/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * twosites: one thread ("waiter") blocks in two places, site_a() and
 * site_b(): each asks a second thread ("answer") for a byte through a pipe
 * and waits for it, and the answer spins A_US microseconds (site A) or
 * B_US (site B) before it writes.  The waiter so switches tens of
 * thousands of times a second, with its off-CPU time split between the
 * two sites in a known ratio (about 3:1 by default).  Which site comes
 * next is drawn at random (ORDER "random", the default) or alternates
 * ("alternate": a sampler in step with the program would see one site).
 * The waiter measures the off-CPU time it spends in each site (wall time
 * less its own CPU time, around each call) and reports its schedstat line
 * with "a_off_ns X b_off_ns Y a_calls N b_calls M".
 * usage: twosites [SECONDS [ORDER [A_US [B_US]]]]
 */
#include <stdbool.h>

#include "wl.h"

static int ask[2], reply[2];
static double a_us = 30, b_us = 10;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void wait_answer(char site)
{
	char c = site;

	if (write(ask[1], &c, 1) != 1 || read(reply[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) static void site_a(void)
{
	wait_answer('a');
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

__attribute__((noinline)) static void site_b(void)
{
	wait_answer('b');
	__asm__ volatile("" ::: "memory");
}

static void *answer(void *arg)
{
	char c;

	(void)arg;
	wl_name("answer");
	while (read(ask[0], &c, 1) == 1 && c != 'q') {
		double until = wl_now() + (c == 'a' ? a_us : b_us) / 1e6;

		while (wl_now() < until)
			;
		if (write(reply[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double until = wl_now() + wl_arg(argc, argv, 1, 1.0);
	bool alternate = argc > 2 && !strcmp(argv[2], "alternate");
	double off[2] = { 0, 0 };
	unsigned long long calls[2] = { 0, 0 }, x = 88172645463325252ULL;
	char extra[160], q = 'q';
	pthread_t t;

	a_us = wl_arg(argc, argv, 3, a_us);
	b_us = wl_arg(argc, argv, 4, b_us);
	if (pipe(ask) || pipe(reply) || pthread_create(&t, NULL, answer, NULL))
		return 1;
	wl_name("waiter");
	while (wl_now() < until) {
		for (int i = 0; i < 64; i++) {
			int site;
			double w0, c0;

			if (alternate) {
				site = (int)(calls[0] + calls[1]) & 1;
			} else {
				/* xorshift64: the same draws in every run */
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				site = (int)(x >> 62) & 1;
			}
			w0 = wl_now();
			c0 = thread_cpu();
			if (site == 0)
				site_a();
			else
				site_b();
			off[site] += (wl_now() - w0) - (thread_cpu() - c0);
			calls[site]++;
		}
	}
	if (write(ask[1], &q, 1) != 1)
		return 1;
	pthread_join(t, NULL);
	snprintf(extra, sizeof(extra), "a_off_ns %.0f b_off_ns %.0f a_calls %llu b_calls %llu",
		 off[0] * 1e9, off[1] * 1e9, calls[0], calls[1]);
	wl_report("waiter", extra);
	return 0;
}
