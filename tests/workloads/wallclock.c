/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wallclock: one process whose threads spend their wall time in known
 * ways, for about SECONDS (default 1.5), each through functions with
 * distinctive names:
 *
 *	spinner	 on a CPU: wc_spin_outer -> wc_spin_middle (inlined) -> wc_spin_leaf
 *	sleeper	 blocked in nanosleep: wc_sleep_once() sleeps 10 ms at a time
 *	locker,	 contending for one mutex: wc_lock_round() takes it and holds it
 *	locker2	 while wc_lock_hold() spins 2 ms, so each blocks in a futex
 *		 while the other holds it
 *	reader	 blocked on a pipe in wc_pipe_wait(); the main thread writes a
 *		 byte every 20 ms, and closes the pipe at the end
 *
 * Every thread reports its schedstat line (wl.h) just before it returns,
 * the main thread ("main") last.
 * usage: wallclock [SECONDS]
 */
#include <errno.h>

#include "wl.h"

/* Kept out of line and unspecialised, so that the names stay as written. */
#if defined(__GNUC__) && !defined(__clang__)
#define WC_NOINLINE __attribute__((noinline, noclone))
#else
#define WC_NOINLINE __attribute__((noinline))
#endif

static double wc_until;
static pthread_mutex_t wc_mutex = PTHREAD_MUTEX_INITIALIZER;
static int wc_pipe[2];
static volatile unsigned long long wc_sink;

/* The spinner: the same shape as spin.c's chain, other names. */
WC_NOINLINE static unsigned long long wc_spin_leaf(unsigned long long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static inline __attribute__((always_inline)) unsigned long long wc_spin_middle(unsigned long long x)
{
	x = wc_spin_leaf(x) ^ (x >> 7);
	return x;
}

WC_NOINLINE static void wc_spin_outer(double until)
{
	unsigned long long x = 1;

	while (wl_now() < until)
		x = wc_spin_middle(x);
	wc_sink = x;
}

static void *wc_spinner(void *arg)
{
	(void)arg;
	wl_name("spinner");
	wc_spin_outer(wc_until);
	wl_report_later("spinner", NULL);
	return NULL;
}

/* The sleeper: 10 ms naps until the end. */
WC_NOINLINE static int wc_sleep_once(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 10 * 1000 * 1000 };
	int n = 0;

	while (nanosleep(&ts, &ts))
		n++;
	__asm__ volatile("" ::: "memory");	/* no tail call into libc */
	return n;
}

static void *wc_sleeper(void *arg)
{
	char extra[64];
	int sleeps = 0;

	(void)arg;
	wl_name("sleeper");
	while (wl_now() < wc_until) {
		wc_sleep_once();
		sleeps++;
	}
	snprintf(extra, sizeof(extra), "sleeps %d", sleeps);
	wl_report_later("sleeper", extra);
	return NULL;
}

/* The lockers: hold the mutex while spinning ~2 ms, then let go. */
WC_NOINLINE static void wc_lock_hold(void)
{
	double end = wl_now() + 0.002;
	unsigned long long x = 7;

	while (wl_now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
	wc_sink = x;
}

WC_NOINLINE static void wc_lock_round(void)
{
	pthread_mutex_lock(&wc_mutex);
	wc_lock_hold();
	pthread_mutex_unlock(&wc_mutex);
	__asm__ volatile("" ::: "memory");
}

static void *wc_locker(void *arg)
{
	const char *name = arg;
	char extra[64];
	int rounds = 0;

	wl_name(name);
	while (wl_now() < wc_until) {
		wc_lock_round();
		rounds++;
		/* A moment outside the lock, so that the other gets it. */
		double end = wl_now() + 0.0002;

		while (wl_now() < end)
			;
	}
	snprintf(extra, sizeof(extra), "rounds %d", rounds);
	wl_report_later(name, extra);
	return NULL;
}

/* The reader: one byte at a time from the pipe, until it is closed. */
WC_NOINLINE static ssize_t wc_pipe_wait(int fd)
{
	char c;
	ssize_t n;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	__asm__ volatile("" ::: "memory");
	return n;
}

static void *wc_reader(void *arg)
{
	char extra[64];
	int bytes = 0;

	(void)arg;
	wl_name("reader");
	while (wc_pipe_wait(wc_pipe[0]) > 0)
		bytes++;
	snprintf(extra, sizeof(extra), "bytes %d", bytes);
	wl_report_later("reader", extra);
	return NULL;
}

int main(int argc, char **argv)
{
	static char locker1[] = "locker", locker2[] = "locker2";
	struct timespec tick = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };
	pthread_t t[5];
	int nt = 0;

	wc_until = wl_now() + wl_arg(argc, argv, 1, 1.5);
	if (pipe(wc_pipe))
		return 1;
	if (pthread_create(&t[nt++], NULL, wc_spinner, NULL) ||
	    pthread_create(&t[nt++], NULL, wc_sleeper, NULL) ||
	    pthread_create(&t[nt++], NULL, wc_locker, locker1) ||
	    pthread_create(&t[nt++], NULL, wc_locker, locker2) ||
	    pthread_create(&t[nt++], NULL, wc_reader, NULL))
		return 1;
	while (wl_now() < wc_until) {
		if (write(wc_pipe[1], "x", 1) != 1)
			return 1;
		nanosleep(&tick, NULL);
	}
	close(wc_pipe[1]);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	wl_report_flush();
	wl_report("main", NULL);
	return 0;
}
