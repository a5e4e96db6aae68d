/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pingpong: a context-switch storm.  Two threads ("ping", "pong") pass one
 * byte back and forth through two pipes for SECONDS (default 1), so each
 * blocks in read() once per round trip.  Reports "rounds N".
 * usage: pingpong [SECONDS]
 */
#include "wl.h"

static int to_pong[2], to_ping[2];
static volatile int stop;

__attribute__((noinline)) static void pass_byte(int in, int out)
{
	char c = 'x';

	if (out >= 0 && write(out, &c, 1) != 1)
		stop = 1;
	if (in >= 0 && read(in, &c, 1) != 1)
		stop = 1;
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	wl_name("pong");
	while (read(to_pong[0], &c, 1) == 1 && c != 'q')
		pass_byte(-1, to_ping[1]);
	wl_report("pong", NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	double until = wl_now() + wl_arg(argc, argv, 1, 1.0);
	unsigned long long rounds = 0;
	char extra[64];
	pthread_t t;

	if (pipe(to_pong) || pipe(to_ping))
		return 1;
	if (pthread_create(&t, NULL, pong, NULL))
		return 1;
	wl_name("ping");
	while (!stop && (rounds & 1023 || wl_now() < until)) {
		pass_byte(to_ping[0], to_pong[1]);
		rounds++;
	}
	if (write(to_pong[1], "q", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	snprintf(extra, sizeof(extra), "rounds %llu", rounds);
	wl_report("ping", extra);
	return 0;
}
