/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-u64map.c: the 64-bit hash map. */
#include <stdlib.h>

#include "tap.h"
#include "u64map.h"

int main(void)
{
	struct wp_u64map m = WP_U64MAP_INIT;
	uint64_t v = 0;
	bool all = true;

	ok(!wp_u64map_get(&m, 1, &v), "empty: no key");
	is_int(wp_u64map_put(&m, 0, 10), 0, "key 0 is a key like any other");
	is_int(wp_u64map_put(&m, UINT64_MAX, 11), 0, "so is the largest");
	ok(wp_u64map_get(&m, 0, &v) && v == 10, "0 -> 10");
	ok(wp_u64map_get(&m, UINT64_MAX, &v) && v == 11, "max -> 11");
	wp_u64map_put(&m, 0, 12);
	ok(wp_u64map_get(&m, 0, &v) && v == 12, "put replaces");
	is_u64(m.len, 2, "two keys");
	/* Keys that collide in the low bits, across several growths. */
	for (uint64_t k = 1; k <= 100000; k++)
		if (wp_u64map_put(&m, k << 32, k))
			all = false;
	ok(all, "100000 more keys stored");
	for (uint64_t k = 1; k <= 100000 && all; k++)
		all = wp_u64map_get(&m, k << 32, &v) && v == k;
	ok(all, "each one found with its value after growing");
	ok(!wp_u64map_get(&m, 3, NULL), "a key never put is absent");
	{
		uint64_t k, val, sum = 0, n = 0;
		size_t pos = 0;

		while (wp_u64map_next(&m, &pos, &k, &val)) {
			n++;
			sum += k >> 32 == val ? val : 0;
		}
		is_u64(n, m.len, "next visits every entry once");
		is_u64(sum, 100000ULL * 100001 / 2 + 0, "with its own value");
	}
	ok(m.len * 2 <= m.cap, "never more than half full (%zu of %zu)", m.len, m.cap);
	/* Deleting every other key keeps the rest findable (probe chains mended). */
	for (uint64_t k = 1; k <= 100000; k += 2)
		wp_u64map_del(&m, k << 32);
	all = m.len == 2 + 50000;
	for (uint64_t k = 1; k <= 100000 && all; k++)
		all = wp_u64map_get(&m, k << 32, &v) == !(k & 1) && (k & 1 || v == k);
	ok(all, "after deleting half the keys, the others are all found, the deleted none");
	wp_u64map_del(&m, 12345);
	is_u64(m.len, 50002, "deleting an absent key changes nothing");
	wp_u64map_del(&m, 0);
	ok(!wp_u64map_get(&m, 0, NULL) && m.len == 50001 &&
	   wp_u64map_get(&m, UINT64_MAX, &v) && v == 11, "key 0 deleted, the others kept");
	wp_u64map_del(&m, 0);
	is_u64(m.len, 50001, "deleting key 0 again changes nothing");
	wp_u64map_release(&m);
	ok(!wp_u64map_get(&m, 0, NULL), "released: empty again");
	{
		uint64_t k = 1, val = 0;
		size_t pos = 0;

		wp_u64map_put(&m, 0, 5);
		ok(wp_u64map_next(&m, &pos, &k, &val) && k == 0 && val == 5 &&
		   !wp_u64map_next(&m, &pos, &k, &val), "a map of key 0 alone: next gives it once");
		wp_u64map_release(&m);
	}
	return done_testing();
}
