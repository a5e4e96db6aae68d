/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-hostile-keys.c: hash tables keyed by what a recording says (event
 * ids, pids, tids, names) stay fast when a file picks its keys to collide.
 *
 * Each table is filled with keys that all fell into one slot under the
 * fixed hash it had before its hash was seeded, then every key is looked
 * up.  With a chain of n keys that is n * n / 2 probes: seconds of CPU for
 * the 65536 keys here, and hours for the millions a file of some
 * megabytes can hold.  Seeded (util.h), it is a few milliseconds.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "datafile.h"
#include "procmap.h"
#include "strpool.h"
#include "tap.h"
#include "u64map.h"
#include "util.h"

#define NR_KEYS 65535
/*
 * Tens of times what it takes, under a third of what it took (3.6 to 17
 * s); the sanitizers make it all some five times slower (1.1 s seen for
 * the ledger's 65535 threads), the quadratic case as much.
 */
#ifdef __SANITIZE_ADDRESS__
#define CPU_LIMIT_S 5.0
#else
#define CPU_LIMIT_S 1.0
#endif

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The inverse of an odd number modulo 2^64 (Newton's iteration). */
static uint64_t inverse(uint64_t k)
{
	uint64_t x = k;

	for (int i = 0; i < 6; i++)
		x *= 2 - k * x;
	return x;
}

static void test_u64map(void)
{
	/* The old slot was bits 32 and up of key * K: 0 for all of these. */
	const uint64_t k_inv = inverse(0x9e3779b97f4a7c15ULL);
	struct wp_u64map m = WP_U64MAP_INIT;
	double t, t0 = cpu_seconds();
	bool all = true;
	uint64_t v;

	for (uint64_t j = 1; j <= NR_KEYS; j++)
		all &= !wp_u64map_put(&m, j * k_inv, j);
	for (uint64_t j = 1; j <= NR_KEYS; j++)
		all &= wp_u64map_get(&m, j * k_inv, &v) && v == j;
	ok(all, "u64map: %d colliding event ids stored and found", NR_KEYS);
	t = cpu_seconds() - t0;
	ok(t < CPU_LIMIT_S, "u64map: in %.3f s of CPU", t);
	wp_u64map_release(&m);
}

static void test_procmap(void)
{
	struct wp_procmap *pm;
	double t, t0 = cpu_seconds();
	bool all = true;

	if (!ok(!wp_procmap_new(false, &pm), "procmap: made"))
		return;
	/* The old slot was the low bits of pid * 2654435761: pids that share them. */
	for (uint32_t j = 1; j <= NR_KEYS; j++)
		all &= wp_procmap_process(pm, j << 16) != NULL;
	for (uint32_t j = 1; j <= NR_KEYS; j++) {
		struct wp_process *p = wp_procmap_process(pm, j << 16);

		all &= p && p->pid == j << 16;
	}
	ok(all, "procmap: %d colliding pids stored and found", NR_KEYS);
	t = cpu_seconds() - t0;
	ok(t < CPU_LIMIT_S, "procmap: in %.3f s of CPU", t);
	wp_procmap_free(pm);
}

static void test_account(void)
{
	struct wp_meta meta = { .start_clock_ns = 1000, .flags = WP_META_SWITCHES };
	const struct wp_thread_times *threads;
	struct wp_account *a;
	double t, t0 = cpu_seconds();
	bool all = true;
	size_t n;

	if (!ok(!wp_account_new(&meta, NULL, &a), "account: made"))
		return;
	/* The same hash of tids as procmap's of pids. */
	for (uint32_t j = 1; j <= NR_KEYS; j++)
		all &= !wp_account_sample(a, 7, j << 16, WP_NO_CPU, 2000 + j, false, 0);
	for (uint32_t j = 1; j <= NR_KEYS; j++)
		all &= !wp_account_sample(a, 7, j << 16, WP_NO_CPU, 100000 + j, false, 0);
	wp_account_finish(a, 200000);
	threads = wp_account_threads(a, &n);
	ok(all && n == NR_KEYS && threads[0].samples == 2,
	   "account: %d threads of colliding tids, two samples each", NR_KEYS);
	t = cpu_seconds() - t0;
	ok(t < CPU_LIMIT_S, "account: in %.3f s of CPU", t);
	wp_account_free(a);
}

/*
 * 65536 names of 48 bytes that the old hash of names (64-bit FNV-1a) put
 * in one slot of any table up to 2^17.  The low 17 bits of FNV-1a depend
 * on the low 17 bits of its state only: two 3-byte steps that take the
 * state's low bits to the same value (more steps than values: there are
 * some) are interchangeable, and 16 such pairs make 2^16 names.
 */
#define NAME_BITS 17
#define NAME_STEPS 16
#define STEP 3
#define NAME_SIZE (STEP * NAME_STEPS + 1)
#define FNV_PRIME 1099511628211ULL

/* Byte i (1 to 255) of step value v. */
static uint8_t step_byte(uint32_t v, int i)
{
	for (; i < STEP - 1; i++)
		v /= 255;
	return (uint8_t)(1 + v % 255);
}

static char *colliding_names(void)
{
	const uint32_t mask = (1U << NAME_BITS) - 1;
	/* The old hash started from this value (not FNV's usual one). */
	uint32_t state = (uint32_t)(1469598103934665603ULL & mask);
	uint32_t *seen = calloc(mask + 1, sizeof(*seen));
	char *names = malloc((size_t)(NR_KEYS + 1) * NAME_SIZE);
	uint32_t pair[NAME_STEPS][2];

	for (int i = 0; seen && names && i < NAME_STEPS; i++) {
		bool found = false;

		memset(seen, 0, (mask + 1) * sizeof(*seen));
		for (uint32_t v = 0; v < 255 * 255 * 255 && !found; v++) {
			uint64_t h = state;

			for (int b = 0; b < STEP; b++)
				h = ((h ^ step_byte(v, b)) * FNV_PRIME) & mask;
			if (seen[h]) {
				pair[i][0] = seen[h] - 1;
				pair[i][1] = v;
				state = (uint32_t)h;
				found = true;
			}
			seen[h] = v + 1;
		}
		if (!found) {
			free(names);
			names = NULL;
		}
	}
	free(seen);
	for (uint32_t k = 0; names && k <= NR_KEYS; k++) {
		char *name = names + (size_t)k * NAME_SIZE;

		for (int i = 0; i < NAME_STEPS; i++)
			for (int b = 0; b < STEP; b++)
				name[STEP * i + b] = (char)step_byte(pair[i][(k >> i) & 1], b);
		name[STEP * NAME_STEPS] = '\0';
	}
	return names;
}

static void test_strpool(void)
{
	char *names = colliding_names();
	struct wp_strpool *sp;
	double t, t0 = cpu_seconds();
	bool all = true;

	if (!ok(names && !wp_strpool_new(&sp), "strpool: made, and the names")) {
		free(names);
		return;
	}
	for (uint32_t k = 0; k <= NR_KEYS; k++)
		all &= wp_strpool_intern(sp, names + (size_t)k * NAME_SIZE) == k;
	for (uint32_t k = 0; k <= NR_KEYS; k++)
		all &= wp_strpool_intern(sp, names + (size_t)k * NAME_SIZE) == k;
	ok(all && wp_strpool_count(sp) == NR_KEYS + 1,
	   "strpool: %d colliding names interned once each", NR_KEYS + 1);
	t = cpu_seconds() - t0;
	ok(t < CPU_LIMIT_S, "strpool: in %.3f s of CPU", t);
	wp_strpool_free(sp);
	free(names);
}

int main(void)
{
	test_u64map();
	test_procmap();
	test_account();
	test_strpool();
	return done_testing();
}
