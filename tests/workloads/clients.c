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
 * With WL_CPULOG_MS set, every thread notes its own CPU time and the
 * monotonic clock at most every that many milliseconds as it runs, and
 * prints them at the end, "cpulog TID MONOTONIC_NS CPU_NS" a line: the
 * kernel's figure of its time at any instant lies between two of them.
 * usage: clients [SECONDS [CLIENTS [WORK_US [wait]]]]
 */
#include <sys/socket.h>

#include "wl.h"

#define MAX_CLIENTS 16

static double until;
static double work_us;
static int nr_clients;
static int fds[MAX_CLIENTS][2];

/* A thread's notes of its CPU time (WL_CPULOG_MS). */
struct cpulog {
	unsigned long long (*v)[2];	/* monotonic ns, thread CPU ns */
	size_t n, cap;
	unsigned long long every_ns, next_ns;
	int tid;
};
static struct cpulog logs[2 * MAX_CLIENTS];
static unsigned long long log_every_ns;

static unsigned long long ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* A note when the last is every_ns old (the CPU time read between two clock reads). */
static void cpulog_tick(struct cpulog *l)
{
	unsigned long long now, cpu;

	if (!log_every_ns || (now = ns_of(CLOCK_MONOTONIC)) < l->next_ns || l->n == l->cap)
		return;
	cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
	l->v[l->n][0] = now;
	l->v[l->n++][1] = cpu;
	l->next_ns = now + log_every_ns;
}

static void cpulog_start(struct cpulog *l, double secs)
{
	l->tid = wl_gettid();
	if (!log_every_ns)
		return;
	l->cap = (size_t)(secs * 1e9 / (double)log_every_ns) * 2 + 64;
	l->v = calloc(l->cap, sizeof(*l->v));
	if (!l->v)
		l->cap = 0;
	cpulog_tick(l);
}

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
	struct cpulog *l = &logs[2 * (long)arg + 1];
	char c;

	wl_name("server");
	cpulog_start(l, until - wl_now() + 1);
	while (read(fd, &c, 1) == 1 && c != 'q') {
		cpulog_tick(l);
		work(work_us / 2);
		if (write(fd, &c, 1) != 1)
			break;
	}
	l->next_ns = 0;
	cpulog_tick(l);
	wl_report_later("server", NULL);
	return NULL;
}

static void *client(void *arg)
{
	int fd = fds[(long)arg][0];
	struct cpulog *l = &logs[2 * (long)arg];
	unsigned long long requests = 0;
	char extra[64], c = 'r';

	wl_name("client");
	cpulog_start(l, until - wl_now() + 1);
	while (requests & 255 || wl_now() < until) {
		cpulog_tick(l);
		work(work_us);
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			break;
		requests++;
	}
	l->next_ns = 0;
	cpulog_tick(l);
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
	if (getenv("WL_CPULOG_MS"))
		log_every_ns = (unsigned long long)(strtod(getenv("WL_CPULOG_MS"), NULL) * 1e6);
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
	for (int i = 0; i < 2 * nr_clients; i++)
		for (size_t k = 0; k < logs[i].n; k++)
			printf("cpulog %d %llu %llu\n", logs[i].tid, logs[i].v[k][0], logs[i].v[k][1]);
	return 0;
}
