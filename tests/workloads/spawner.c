/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spawner: a process that keeps making short threads, for attach tests.
 * Prints "pid PID", waits DELAY seconds (default 0.5), then for SECONDS
 * (default 2):
 *   join:  the main thread spins SPIN_US microseconds (default 200), then
 *          creates a thread ("spawnee") that spins as long, and joins it;
 *   chain: each thread ("spawnee") spins SPIN_US, starts the next one and
 *          exits, while the main thread waits (so at any moment one short
 *          thread runs, created by a thread that is about to exit).
 * Then prints its main thread's schedstat line with, as extra fields, the
 * threads made and the CPU time of the whole process (getrusage):
 *	thread main pid P tid T ... threads N cpu_ns C
 * A DELAY below 0 waits for SIGUSR1 instead: a test sends it once it has
 * attached, however long that took; the line then also gives the main
 * thread's on-CPU time (schedstat) and the process's CPU time when it
 * came: "go_oncpu_ns N go_cpu_ns C".
 * usage: spawner join|chain [SECONDS [SPIN_US [DELAY]]]
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "wl.h"

static double spin_us = 200, until;
static atomic_ulong made;
static atomic_int chain_done;
static volatile unsigned long long spawn_sink;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) static void spawn_spin(void)
{
	double end = wl_now() + spin_us / 1e6;
	unsigned long long x = 1;

	while (wl_now() < end)
		for (int i = 0; i < 100; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	spawn_sink = x;
}

static void *spawnee(void *arg)
{
	(void)arg;
	wl_name("spawnee");
	spawn_spin();
	return NULL;
}

static void *chain_link(void *arg)
{
	pthread_t next;

	(void)arg;
	wl_name("spawnee");
	spawn_spin();
	if (wl_now() < until && !pthread_create(&next, NULL, chain_link, NULL)) {
		pthread_detach(next);
		made++;
	} else {
		chain_done = 1;
	}
	return NULL;
}

/* The process's CPU time so far (getrusage), in ns. */
static unsigned long long cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (unsigned long long)ru.ru_utime.tv_sec * 1000000000ULL +
	       (unsigned long long)ru.ru_utime.tv_usec * 1000ULL +
	       (unsigned long long)ru.ru_stime.tv_sec * 1000000000ULL +
	       (unsigned long long)ru.ru_stime.tv_usec * 1000ULL;
}

/* The calling thread's on-CPU time so far (schedstat), in ns. */
static unsigned long long oncpu_ns(void)
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

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	int chain = argc > 1 && !strcmp(argv[1], "chain");
	double secs = wl_arg(argc, argv, 2, 2.0);
	unsigned long long go_oncpu = 0, go_cpu = 0;
	char extra[192];
	pthread_t t;

	spin_us = wl_arg(argc, argv, 3, 200);
	signal(SIGUSR1, on_usr1);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (wl_arg(argc, argv, 4, 0.5) < 0) {
		while (!go)
			sleep_s(0.01);
		go_oncpu = oncpu_ns();
		go_cpu = cpu_ns();
	} else {
		sleep_s(wl_arg(argc, argv, 4, 0.5));
	}
	until = wl_now() + secs;
	if (chain) {
		if (pthread_create(&t, NULL, chain_link, NULL))
			return 1;
		pthread_detach(t);
		made++;
		while (!chain_done)
			sleep_s(0.01);
		sleep_s(0.01);	/* let the last link exit */
	} else {
		while (wl_now() < until) {
			spawn_spin();
			if (pthread_create(&t, NULL, spawnee, NULL))
				return 1;
			pthread_join(t, NULL);
			made++;
		}
	}
	snprintf(extra, sizeof(extra), "threads %lu cpu_ns %llu go_oncpu_ns %llu go_cpu_ns %llu",
		 (unsigned long)made, cpu_ns(), go_oncpu, go_cpu);
	wl_report("main", extra);
	return 0;
}
