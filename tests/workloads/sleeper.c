/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sleeper: one thread ("sleeper") sleeps COUNT times for MS milliseconds in
 * sleep_once() (defaults 20 and 10), then reports its schedstat line with
 * "sleeps COUNT".
 * usage: sleeper [COUNT] [MS]
 */
#include "wl.h"

static int sleep_count = 20;
static double sleep_ms = 10;

__attribute__((noinline)) static void sleep_once(double ms)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6),
	};

	while (nanosleep(&ts, &ts))
		;
}

static void *sleeper(void *arg)
{
	char extra[64];

	(void)arg;
	wl_name("sleeper");
	for (int i = 0; i < sleep_count; i++)
		sleep_once(sleep_ms);
	snprintf(extra, sizeof(extra), "sleeps %d", sleep_count);
	wl_report("sleeper", extra);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	sleep_count = (int)wl_arg(argc, argv, 1, 20);
	sleep_ms = wl_arg(argc, argv, 2, 10);
	if (pthread_create(&t, NULL, sleeper, NULL))
		return 1;
	pthread_join(t, NULL);
	wl_report("main", NULL);
	return 0;
}
