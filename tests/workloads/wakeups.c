/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wakeups.c: threads whose every wait has a known waker, for the tests of
 * wake-ups and wakers.
 *
 *	pipe	 "reader" blocks in wk_read_byte() on a pipe; "writer" sleeps
 *		 2 ms and writes a byte in wk_write_byte(), so only its write
 *		 wakes the reader (the last byte says stop: no close wakes it)
 *	mutex	 "lockA" and "lockB" take turns at one mutex, holding it for
 *		 1 ms: each blocks in the lock, and only the other's unlock
 *		 wakes it
 *	sleep	 "sleeper" sleeps 2 ms at a time: only timers wake it
 *	overload 2 x CPUs + 1 "hog" threads spin 3 ms and sleep 1 ms in
 *		 turn: more runnable threads than CPUs, so they wait for one
 *		 after each wake-up and are preempted
 *
 * Every thread prints its schedstat line (wl.h) once it has joined.
 * usage: wakeups MODE [SECONDS]
 */
#include <errno.h>

#include "wl.h"

#if defined(__GNUC__) && !defined(__clang__)
#define WK_NOINLINE __attribute__((noinline, noclone))
#else
#define WK_NOINLINE __attribute__((noinline))
#endif

#define MAX_HOGS 64

static double wk_until;
static int wk_pipe[2];
static pthread_mutex_t wk_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long long wk_sink;

static void wk_sleep_ms(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

WK_NOINLINE static void wk_spin_ms(double ms)
{
	double until = wl_now() + ms / 1e3;
	unsigned long long x = 1;

	while (wl_now() < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	wk_sink = x;
}

WK_NOINLINE static char wk_read_byte(void)
{
	char c = 'q';

	while (read(wk_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return c;
}

WK_NOINLINE static void wk_write_byte(char c)
{
	while (write(wk_pipe[1], &c, 1) < 0 && errno == EINTR)
		;
}

static void *wk_reader(void *arg)
{
	char extra[32];
	int bytes = 0;

	(void)arg;
	wl_name("reader");
	while (wk_read_byte() != 'q')
		bytes++;
	snprintf(extra, sizeof(extra), "bytes %d", bytes);
	wl_report_later("reader", extra);
	return NULL;
}

static void *wk_writer(void *arg)
{
	(void)arg;
	wl_name("writer");
	while (wl_now() < wk_until) {
		wk_sleep_ms(2);
		wk_write_byte('x');
	}
	wk_write_byte('q');
	wl_report_later("writer", NULL);
	return NULL;
}

WK_NOINLINE static void wk_lock_turn(void)
{
	pthread_mutex_lock(&wk_mutex);
	wk_spin_ms(1);
	pthread_mutex_unlock(&wk_mutex);
}

static void *wk_locker(void *arg)
{
	const char *name = arg;
	char extra[32];
	int turns = 0;

	wl_name(name);
	while (wl_now() < wk_until) {
		wk_lock_turn();
		turns++;
		wk_spin_ms(0.1);	/* the other one's turn begins meanwhile */
	}
	snprintf(extra, sizeof(extra), "turns %d", turns);
	wl_report_later(name, extra);
	return NULL;
}

static void *wk_sleeper(void *arg)
{
	char extra[32];
	int sleeps = 0;

	(void)arg;
	wl_name("sleeper");
	while (wl_now() < wk_until) {
		wk_sleep_ms(2);
		sleeps++;
	}
	snprintf(extra, sizeof(extra), "sleeps %d", sleeps);
	wl_report_later("sleeper", extra);
	return NULL;
}

static void *wk_hog(void *arg)
{
	(void)arg;
	wl_name("hog");
	while (wl_now() < wk_until) {
		wk_spin_ms(3);
		wk_sleep_ms(1);
	}
	wl_report_later("hog", NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_t t[MAX_HOGS];
	int n = 0;

	wk_until = wl_now() + wl_arg(argc, argv, 2, 1.0);
	if (!strcmp(mode, "pipe")) {
		if (pipe(wk_pipe))
			return 1;
		pthread_create(&t[n++], NULL, wk_reader, NULL);
		pthread_create(&t[n++], NULL, wk_writer, NULL);
	} else if (!strcmp(mode, "mutex")) {
		pthread_create(&t[n++], NULL, wk_locker, "lockA");
		pthread_create(&t[n++], NULL, wk_locker, "lockB");
	} else if (!strcmp(mode, "sleep")) {
		pthread_create(&t[n++], NULL, wk_sleeper, NULL);
	} else if (!strcmp(mode, "overload")) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		int hogs = cpus > 0 && cpus * 2 + 1 < MAX_HOGS ? (int)cpus * 2 + 1 : MAX_HOGS;

		while (n < hogs)
			pthread_create(&t[n++], NULL, wk_hog, NULL);
	} else {
		fprintf(stderr, "usage: wakeups pipe|mutex|sleep|overload [SECONDS]\n");
		return 2;
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	wl_report_flush();
	wl_report("main", NULL);
	return 0;
}
