/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * waitfor.c: threads that wait for each other in known ways, for the
 * wait-for graph and the critical path.  Every thread prints its
 * schedstat line (wl.h) with what it measured itself.
 *
 *	prodcons SECONDS  one "producer" makes an item with 5 ms of CPU
 *			  (wf_make_item), sleeps 5 ms (wf_pause), and queues
 *			  it; four "worker" threads wait on the queue
 *			  (wf_take) and take each item with 0.2 ms of CPU: the
 *			  producer and its sleep pace everything
 *	chain		  "main" waits on a condition variable for "w1", which
 *			  reads a pipe that "w2" writes after spinning 200 ms of
 *			  CPU (wf_spin_cpu) and sleeping 100 ms (wf_chain_sleep);
 *			  main prints the CLOCK_MONOTONIC times of its wait,
 *			  w2 those of its spin (CPU and wall) and of its sleep
 *	tcp SECONDS	  a "client" thread sends 64 bytes to a "server" thread
 *			  over loopback TCP and waits for them back; the server
 *			  spends 0.1 ms of CPU on each (wf_serve)
 *
 * usage: waitfor MODE [SECONDS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "wl.h"

#if defined(__GNUC__) && !defined(__clang__)
#define WF_NOINLINE __attribute__((noinline, noclone))
#else
#define WF_NOINLINE __attribute__((noinline))
#endif

static volatile unsigned long long wf_sink;

static unsigned long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* ns of the calling thread's own CPU time, whatever the machine's load. */
WF_NOINLINE static void wf_spin_cpu(unsigned long long ns)
{
	unsigned long long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns, x = 1;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	wf_sink = x;
}

static void sleep_ns(unsigned long long ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* prodcons: an unbounded queue of item counts. */
#define WORKERS 4
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static long q_items;
static int q_stop;
static double wf_until;

WF_NOINLINE static void wf_make_item(void)
{
	wf_spin_cpu(5000000ULL);
}

WF_NOINLINE static void wf_pause(void)
{
	sleep_ns(5000000ULL);
}

static void *producer(void *arg)
{
	long made = 0;
	char extra[64];

	(void)arg;
	wl_name("producer");
	while (wl_now() < wf_until) {
		wf_make_item();
		wf_pause();
		pthread_mutex_lock(&q_lock);
		q_items++;
		pthread_cond_signal(&q_cond);
		pthread_mutex_unlock(&q_lock);
		made++;
	}
	pthread_mutex_lock(&q_lock);
	q_stop = 1;
	pthread_cond_broadcast(&q_cond);
	pthread_mutex_unlock(&q_lock);
	snprintf(extra, sizeof(extra), "items %ld", made);
	wl_report_later("producer", extra);
	return NULL;
}

/* The next item, or 0 once the producer stopped and the queue is empty. */
WF_NOINLINE static int wf_take(void)
{
	int got = 0;

	pthread_mutex_lock(&q_lock);
	while (!q_items && !q_stop)
		pthread_cond_wait(&q_cond, &q_lock);
	if (q_items) {
		q_items--;
		got = 1;
	}
	pthread_mutex_unlock(&q_lock);
	return got;
}

static void *worker(void *arg)
{
	long taken = 0;
	char extra[64];

	(void)arg;
	wl_name("worker");
	while (wf_take()) {
		wf_spin_cpu(200000ULL);
		taken++;
	}
	snprintf(extra, sizeof(extra), "items %ld", taken);
	wl_report_later("worker", extra);
	return NULL;
}

static int prodcons(double seconds)
{
	pthread_t p, w[WORKERS];

	wf_until = wl_now() + seconds;
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	wl_report_flush();
	return 0;
}

/* chain */
static pthread_mutex_t c_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c_cond = PTHREAD_COND_INITIALIZER;
static int c_done;
static int c_pipe[2];
static char c_w1_line[256], c_w2_line[256];

WF_NOINLINE static void wf_chain_sleep(void)
{
	sleep_ns(100000000ULL);
}

static void *chain_w1(void *arg)
{
	char c;

	(void)arg;
	wl_name("w1");
	while (read(c_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&c_lock);
	c_done = 1;
	pthread_cond_signal(&c_cond);
	pthread_mutex_unlock(&c_lock);
	wl_format_report(c_w1_line, sizeof(c_w1_line), "w1", "");
	return NULL;
}

static void *chain_w2(void *arg)
{
	unsigned long long s0, s1, c0, c1, z0, z1;
	char extra[192];

	(void)arg;
	wl_name("w2");
	s0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	wf_spin_cpu(200000000ULL);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	s1 = z0 = now_ns(CLOCK_MONOTONIC);
	wf_chain_sleep();
	z1 = now_ns(CLOCK_MONOTONIC);
	snprintf(extra, sizeof(extra), "spin_start %llu spin_end %llu spin_cpu_ns %llu "
		 "sleep_start %llu sleep_end %llu", s0, s1, c1 - c0, z0, z1);
	wl_format_report(c_w2_line, sizeof(c_w2_line), "w2", extra);
	while (write(c_pipe[1], "x", 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int chain(void)
{
	unsigned long long t0, t1;
	pthread_t w1, w2;
	char extra[96];

	if (pipe(c_pipe))
		return 1;
	wl_name("main");
	t0 = now_ns(CLOCK_MONOTONIC);
	pthread_create(&w1, NULL, chain_w1, NULL);
	pthread_create(&w2, NULL, chain_w2, NULL);
	pthread_mutex_lock(&c_lock);
	while (!c_done)
		pthread_cond_wait(&c_cond, &c_lock);
	pthread_mutex_unlock(&c_lock);
	t1 = now_ns(CLOCK_MONOTONIC);
	pthread_join(w1, NULL);
	pthread_join(w2, NULL);
	snprintf(extra, sizeof(extra), "wait_start %llu wait_end %llu", t0, t1);
	wl_report("main", extra);
	fputs(c_w1_line, stdout);
	fputs(c_w2_line, stdout);
	return 0;
}

/* tcp */
#define MSG 64
static int t_listen;

static int full(ssize_t (*io)(int, void *, size_t, int), int fd, char *buf)
{
	size_t got = 0;

	while (got < MSG) {
		ssize_t n = io(fd, buf + got, MSG - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static ssize_t do_recv(int fd, void *buf, size_t len, int flags)
{
	return recv(fd, buf, len, flags);
}

static ssize_t do_send(int fd, void *buf, size_t len, int flags)
{
	return send(fd, buf, len, flags | MSG_NOSIGNAL);
}

WF_NOINLINE static void wf_serve(void)
{
	wf_spin_cpu(100000ULL);
}

static void *server(void *arg)
{
	int one = 1, fd;
	long served = 0;
	char buf[MSG], extra[64];

	(void)arg;
	wl_name("server");
	fd = accept(t_listen, NULL, NULL);
	if (fd < 0)
		return NULL;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (!full(do_recv, fd, buf)) {
		wf_serve();
		if (full(do_send, fd, buf))
			break;
		served++;
	}
	close(fd);
	snprintf(extra, sizeof(extra), "served %ld", served);
	wl_report_later("server", extra);
	return NULL;
}

static int tcp(double seconds)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, fd;
	long done = 0;
	char buf[MSG] = "ping", extra[96];
	double start, until;
	pthread_t s;

	wl_name("client");
	t_listen = socket(AF_INET, SOCK_STREAM, 0);
	if (t_listen < 0 || bind(t_listen, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(t_listen, 1) || getsockname(t_listen, (struct sockaddr *)&a, &len))
		return 1;
	pthread_create(&s, NULL, server, NULL);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		return 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	start = wl_now();
	until = start + seconds;
	while (wl_now() < until) {
		if (full(do_send, fd, buf) || full(do_recv, fd, buf))
			break;
		done++;
	}
	snprintf(extra, sizeof(extra), "requests %ld per_s %.0f", done, done / (wl_now() - start));
	close(fd);
	pthread_join(s, NULL);
	wl_report("client", extra);
	wl_report_flush();
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = wl_arg(argc, argv, 2, 2);

	if (argc < 2) {
		fprintf(stderr, "usage: waitfor prodcons|chain|tcp [SECONDS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "prodcons"))
		return prodcons(seconds);
	if (!strcmp(argv[1], "chain"))
		return chain();
	if (!strcmp(argv[1], "tcp"))
		return tcp(seconds);
	fprintf(stderr, "waitfor: unknown mode '%s'\n", argv[1]);
	return 2;
}
