/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-threadclock.c: the kernel's own figures of threads' time: schedstat
 * read for this process's threads, and (as root) the exit figures that
 * taskstats sends, checked against what the exiting thread read of itself.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layout.h"
#include "threadclock.h"
#include "tap.h"

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct spinner {
	pid_t tid;
	uint64_t on_before_exit;
};

/* Spin some 20 ms of CPU time, read its own schedstat, and exit. */
static void *spin(void *arg)
{
	struct spinner *s = arg;
	uint64_t rq, n, end = wp_clock_ns(CLOCK_THREAD_CPUTIME_ID) + 20000000ULL;

	s->tid = gettid_();
	while (wp_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
	if (wp_schedstat_read(getpid(), s->tid, &s->on_before_exit, &rq, &n))
		s->on_before_exit = 0;
	return NULL;
}

static void test_schedstat(void)
{
	struct wp_buf b = { 0 };
	uint64_t on, rq, n, end = wp_clock_ns(CLOCK_THREAD_CPUTIME_ID) + 5000000ULL;
	struct wp_record_thread_clock tc;
	int count;

	while (wp_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
	ok(!wp_schedstat_read(getpid(), gettid_(), &on, &rq, &n) && on >= 5000000ULL && n >= 1,
	   "schedstat: this thread's on-CPU time is at least what it spun");
	ok(wp_schedstat_read(getpid(), 0x7ffffff0, &on, &rq, &n) == -ESRCH,
	   "schedstat: a thread that is not there is -ESRCH");
	count = wp_threadclock_process(getpid(), WP_CLOCK_END, CLOCK_MONOTONIC, &b);
	ok(count == 1 && b.len == sizeof(tc) && !wp_thread_clock_parse((const void *)b.data, &tc) &&
	   tc.tid == (uint32_t)gettid_() && tc.pid == (uint32_t)getpid() &&
	   tc.header.misc == WP_CLOCK_END && tc.on_cpu_ns >= 5000000ULL,
	   "threadclock: a record for this process's one thread");
	is_int(wp_threadclock_process(0x7ffffff0, WP_CLOCK_END, CLOCK_MONOTONIC, &b), -ESRCH,
	       "threadclock: a process that is not there is -ESRCH");
	wp_buf_release(&b);
}

/*
 * A child process, watched, makes a thread that spins and exits: its exit
 * figures come, with the on-CPU time the thread read of itself just
 * before.  (wallprof's own threads are never kept: hence a child.)
 */
static void test_exit_figures(void)
{
	struct wp_exitclock *x;
	struct wp_procset *ps;
	struct spinner s = { 0 };
	struct wp_buf b = { 0 };
	int go[2], done[2];
	bool found = false;
	pid_t child;
	int err;

	/*
	 * The child is forked before the listener's thread starts: a fork
	 * while another thread holds a lock (the sanitizers' allocator's)
	 * leaves the child stuck on it for good.
	 */
	if (pipe(go) || pipe(done)) {
		ok(0, "exitclock: pipes");
		return;
	}
	child = fork();
	if (!child) {
		pthread_t t;
		char c;

		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pthread_create(&t, NULL, spin, &s);
		pthread_join(t, NULL);
		_exit(write(done[1], &s, sizeof(s)) == sizeof(s) ? 0 : 1);
	}
	/* Only the child holds these ends: its end reads as end of file. */
	close(go[0]);
	close(done[1]);
	err = wp_procset_new(&ps);
	if (!err)
		err = wp_exitclock_start(CLOCK_MONOTONIC, ps, &x);
	if (err == -EPERM || err == -ENOENT) {
		printf("ok %d # SKIP taskstats %s\n", 0,
		       err == -EPERM ? "needs CAP_NET_ADMIN" : "is not in this kernel");
		close(go[1]);
		waitpid(child, NULL, 0);
		wp_procset_free(ps);
		return;
	}
	is_int(err, 0, "exitclock: the listener starts");
	if (err) {
		close(go[1]);
		waitpid(child, NULL, 0);
		return;
	}
	ok(!wp_procset_add(ps, child), "procset: the child is one");
	ok(wp_procset_has(ps, child, 0), "procset: and says so");
	ok(!wp_procset_has(ps, getppid(), 0), "procset: its grandparent is not");
	if (write(go[1], "g", 1) != 1 || read(done[0], &s, sizeof(s)) != sizeof(s))
		s.tid = 0;
	close(go[1]);
	close(done[0]);
	waitpid(child, NULL, 0);
	/* The figures come over a socket: give the listener a moment. */
	for (int i = 0; i < 100 && !found && s.tid; i++) {
		usleep(10000);
		wp_exitclock_take(x, &b);
		for (size_t off = 0; off + sizeof(struct wp_record_thread_clock) <= b.len;
		     off += sizeof(struct wp_record_thread_clock)) {
			struct wp_record_thread_clock tc;

			if (!wp_thread_clock_parse((const void *)(b.data + off), &tc) &&
			    tc.tid == (uint32_t)s.tid) {
				found = true;
				ok(tc.pid == (uint32_t)child && tc.header.misc == WP_CLOCK_EXIT,
				   "exitclock: the exit of the spinner, of the child");
				ok(s.on_before_exit && tc.on_cpu_ns >= s.on_before_exit &&
				   tc.on_cpu_ns - s.on_before_exit < 2000000ULL,
				   "exitclock: its on-CPU time is what it read of itself just "
				   "before (%llu, %llu)", (unsigned long long)tc.on_cpu_ns,
				   (unsigned long long)s.on_before_exit);
			}
		}
	}
	ok(found, "exitclock: the spinner's exit was heard");
	wp_exitclock_free(x);
	wp_procset_free(ps);
	wp_buf_release(&b);
}

/* A process whose parent is in the set is in it, whoever walks up first. */
static void test_procset_descendants(void)
{
	struct wp_procset *ps;
	pid_t child;
	int go[2];
	char c;

	if (wp_procset_new(&ps) || pipe(go))
		return;
	child = fork();
	if (!child) {
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	wp_procset_add(ps, getpid());
	ok(wp_procset_has(ps, child, 0), "procset: a child of a member is one");
	ok(wp_procset_has(ps, 0x7ffffff0, getpid()),
	   "procset: a process gone whose parent is a member is one");
	ok(!wp_procset_has(ps, getppid(), 0), "procset: the parent of a member is not");
	if (write(go[1], "x", 1) < 0)
		c = 0;
	waitpid(child, NULL, 0);
	wp_procset_free(ps);
}

/*
 * Hours of processes coming and going, each judged at its exit and then
 * gone: the verdicts held stay few.  Pids past any pid_max (2^22), which
 * /proc knows nothing of: a process without a known parent.
 */
static void test_procset_bounded(void)
{
	const pid_t given = 5000000;
	struct wp_procset *ps;
	size_t most = 0;
	bool judged = true;

	if (!ok(!wp_procset_new(&ps) && !wp_procset_add(ps, given), "procset: made, one given"))
		return;
	for (pid_t i = 1; i <= 10000; i++) {
		judged &= wp_procset_has(ps, given + i, given);
		judged &= !wp_procset_has(ps, given + 20000 + i, 0);
		if (wp_procset_size(ps) > most)
			most = wp_procset_size(ps);
		wp_procset_gone(ps, given + i, i % 2);
		wp_procset_gone(ps, given + 20000 + i, i % 2);
	}
	ok(judged, "procset: descendants in, the others not");
	ok(most <= 3 && wp_procset_size(ps) == 1,
	   "procset: at most %zu verdicts held for 20000 processes, 1 at the end", most);
	wp_procset_gone(ps, given, false);
	ok(wp_procset_has(ps, given, 0), "procset: a given process stays while its threads go on");
	wp_procset_gone(ps, given, true);
	ok(!wp_procset_has(ps, given, 0), "procset: and goes with its last thread");
	wp_procset_free(ps);
}

int main(void)
{
	test_schedstat();
	test_exit_figures();
	test_procset_descendants();
	test_procset_bounded();
	return done_testing();
}
