/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostile.c: a program that puts terminal control sequences wherever a
 * profiler will print them: two threads named with PR_SET_NAME, one with
 * an OSC "set window title" sequence, one with raw C1 bytes (0x9b is CSI
 * and 0x85 NEL to some terminals); its own file name and arguments are the
 * test's to choose (run a copy at a hostile path).  Each thread spins and
 * sleeps, so that both on-CPU and off-CPU stacks are recorded.
 *
 *	hostile SECONDS [ANY ARGUMENTS...]
 */
#include <sys/prctl.h>

#include "wl.h"

static volatile unsigned long sink;
static double seconds;

static __attribute__((noinline)) void hostile_spin(double until)
{
	while (wl_now() < until)
		for (int i = 0; i < 10000; i++)
			sink = sink * 6364136223846793005ULL + 1;
}

/* Alternate 20 ms of spinning and 10 ms of sleep until the end. */
static void spin_and_sleep(void)
{
	double end = wl_now() + seconds;
	struct timespec nap = { 0, 10 * 1000 * 1000 };

	while (wl_now() < end) {
		hostile_spin(wl_now() + 0.02);
		nanosleep(&nap, NULL);
	}
}

static void *named_thread(void *name)
{
	/* prctl, not pthread_setname_np: the bytes go to the kernel as they are. */
	prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
	spin_and_sleep();
	return NULL;
}

int main(int argc, char **argv)
{
	static char title[] = "\033]2;pwn\007";
	static char c1[] = "c1\x9b" "2J\x85" "x";
	pthread_t a, b;

	seconds = wl_arg(argc, argv, 1, 0.5);
	if (pthread_create(&a, NULL, named_thread, title) ||
	    pthread_create(&b, NULL, named_thread, c1)) {
		perror("pthread_create");
		return 1;
	}
	spin_and_sleep();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
