/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * leader-exit: prints "pid PID", starts a thread ("worker") that sleeps
 * COUNT times for 10 ms (default 150), waits DELAY seconds (default 0) and
 * leaves with pthread_exit(): the process lives on, with a zombie main
 * thread, until the worker is done; the worker then reports "sleeps COUNT".
 * For attach tests: a process is alive as long as any of its threads is.
 * Both wait, sleeping 10 ms at a time, for SIGUSR1 first (the main thread
 * only when DELAY is not 0): a test sends it once it has attached, so that
 * the process outlives a slow attach.
 * usage: leader-exit [DELAY] [COUNT]
 */
#include "wl.h"

#include <signal.h>

static int sleep_count = 150;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) static void sleep_ms(double ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6),
	};

	while (nanosleep(&ts, &ts))
		;
}

static void *worker(void *arg)
{
	char extra[64];

	(void)arg;
	wl_name("worker");
	while (!go)
		sleep_ms(10);
	for (int i = 0; i < sleep_count; i++)
		sleep_ms(10);
	snprintf(extra, sizeof(extra), "sleeps %d", sleep_count);
	wl_report("worker", extra);
	return NULL;
}

int main(int argc, char **argv)
{
	double delay = wl_arg(argc, argv, 1, 0);
	pthread_t t;

	sleep_count = (int)wl_arg(argc, argv, 2, 150);
	signal(SIGUSR1, on_usr1);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (delay > 0) {
		while (!go)
			sleep_ms(10);
		sleep_ms(delay * 1000);
	}
	pthread_exit(NULL);
}
