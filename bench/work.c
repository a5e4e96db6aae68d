/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * work: a fixed amount of CPU-bound work for bench/record.sh.  THREADS
 * threads (default: online CPUs) each hash a 4 KiB stack buffer ITERS times
 * through a short call chain (work_thread -> work_round -> work_hash), so a
 * profiler's slowdown shows as a longer wall time for the same work.
 *
 * usage: work ITERS [THREADS]
 *        work --calibrate SECONDS      print the ITERS that take about
 *                                      SECONDS on one otherwise idle CPU
 *
 * Output: work threads T iters N wall_ns W cpu_ns C checksum X
 * (cpu_ns: the process's user + system time, profiling costs charged to it
 * included; wall_ns: from the first thread's start to the last one's end.)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static unsigned long long iters;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t work_hash(const uint64_t *buf, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= buf[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

__attribute__((noinline)) static uint64_t work_round(uint64_t seed)
{
	uint64_t buf[512];	/* 4 KiB on the stack: DWARF stacks have depth */

	for (size_t i = 0; i < 512; i++)
		buf[i] = seed + i * 0x9e3779b97f4a7c15ULL;
	return work_hash(buf, 512, seed);
}

static void *work_thread(void *arg)
{
	uint64_t h = (uint64_t)(uintptr_t)arg;

	for (unsigned long long i = 0; i < iters; i++)
		h = work_round(h);
	sink += h;
	return (void *)(uintptr_t)h;
}

static int calibrate(double seconds)
{
	unsigned long long n = 0;
	double t0 = now(), t;
	uint64_t h = 1;

	do {
		for (int i = 0; i < 1000; i++)
			h = work_round(h);
		n += 1000;
		t = now() - t0;
	} while (t < 0.5);
	sink = h;
	printf("%llu\n", (unsigned long long)((double)n / t * seconds));
	return 0;
}

int main(int argc, char **argv)
{
	long nthreads = sysconf(_SC_NPROCESSORS_ONLN);
	struct rusage ru;
	pthread_t *t;
	uint64_t sum = 0;
	double t0, t1;

	if (argc > 2 && !strcmp(argv[1], "--calibrate"))
		return calibrate(strtod(argv[2], NULL));
	if (argc < 2) {
		fprintf(stderr, "usage: work ITERS [THREADS] | work --calibrate SECONDS\n");
		return 2;
	}
	iters = strtoull(argv[1], NULL, 10);
	if (argc > 2)
		nthreads = strtol(argv[2], NULL, 10);
	if (nthreads < 1)
		nthreads = 1;
	t = calloc((size_t)nthreads, sizeof(*t));
	if (!t)
		return 1;
	t0 = now();
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, work_thread, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (long i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		sum ^= (uint64_t)(uintptr_t)r;
	}
	t1 = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("work threads %ld iters %llu wall_ns %.0f cpu_ns %.0f checksum %016" PRIx64 "\n",
	       nthreads, iters, (t1 - t0) * 1e9,
	       ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
		       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3,
	       sum);
	free(t);
	return 0;
}
