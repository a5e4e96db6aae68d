/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * clients: a small client/server program.  CLIENTS threads ("client")
 * each do WORK_US microseconds of work, then send a request over a
 * socket pair to one server thread ("server") per client and wait for
 * its reply (the server also works WORK_US / 2 per request), for SECONDS.
 * Tens of thousands of short slices a second per thread: the case where
 * switch records alone miss much of each slice.  Every thread reports its
 * schedstat line (wl.h), the clients with "requests N".
 * With "wait" last, it reads a byte from its standard input before it
 * starts (so that a recorder can attach to it first), then runs SECONDS.
 * usage: clients [SECONDS [CLIENTS [WORK_US [wait]]]]
 */
#include <sys/socket.h>

#include "wl.h"

#define MAX_CLIENTS 16

static double until;
static double work_us;
static int nr_clients;
static int fds[MAX_CLIENTS][2];

/* Spin for us microseconds of the thread's own CPU time. */
__attribute__((noinline)) static void work(double us)
{
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3 + us;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while ((double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3 < end);
}

static void *server(void *arg)
{
	int fd = fds[(long)arg][1];
	char c;

	wl_name("server");
	while (read(fd, &c, 1) == 1 && c != 'q') {
		work(work_us / 2);
		if (write(fd, &c, 1) != 1)
			break;
	}
	wl_report_later("server", NULL);
	return NULL;
}

static void *client(void *arg)
{
	int fd = fds[(long)arg][0];
	unsigned long long requests = 0;
	char extra[64], c = 'r';

	wl_name("client");
	while (requests & 255 || wl_now() < until) {
		work(work_us);
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			break;
		requests++;
	}
	c = 'q';
	if (write(fd, &c, 1) != 1)
		return NULL;
	snprintf(extra, sizeof(extra), "requests %llu", requests);
	wl_report_later("client", extra);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t c[MAX_CLIENTS], s[MAX_CLIENTS];

	if (argc > 4 && !strcmp(argv[4], "wait")) {
		char go;

		if (read(0, &go, 1) != 1)
			return 2;
	}
	until = wl_now() + wl_arg(argc, argv, 1, 1.0);
	nr_clients = (int)wl_arg(argc, argv, 2, 3);
	work_us = wl_arg(argc, argv, 3, 10);
	if (nr_clients < 1 || nr_clients > MAX_CLIENTS)
		return 2;
	for (long i = 0; i < nr_clients; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[i]))
			return 1;
	for (long i = 0; i < nr_clients; i++)
		if (pthread_create(&s[i], NULL, server, (void *)i) ||
		    pthread_create(&c[i], NULL, client, (void *)i))
			return 1;
	for (int i = 0; i < nr_clients; i++) {
		pthread_join(c[i], NULL);
		pthread_join(s[i], NULL);
	}
	wl_report_flush();
	return 0;
}
