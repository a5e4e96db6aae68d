/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-util.c: the array growth helper, its macro, and the byte buffer on it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util.h"

struct pair {
	uint64_t a, b;
};

static void test_macro(void)
{
	struct pair *v = NULL, *before;
	size_t n = 0, cap = 0;
	bool kept = true;

	for (uint64_t i = 0; i < 5000; i++) {
		if (WP_GROW(v, cap, n + 1)) {
			kept = false;
			break;
		}
		v[n++] = (struct pair){ i, ~i };
	}
	for (size_t i = 0; i < n && kept; i++)
		kept = v[i].a == i && v[i].b == ~(uint64_t)i;
	ok(kept && n == 5000 && cap >= n, "WP_GROW: 5000 appends of a 16-byte type, all kept");
	before = v;
	cap = n;
	is_int(WP_GROW(v, cap, SIZE_MAX / sizeof(*v) + 1), -ENOMEM,
	       "WP_GROW: an element count whose size overflows: -ENOMEM");
	ok(v == before && cap == n, "the array and its capacity as they were");
	is_int(WP_GROW(v, cap, SIZE_MAX), -ENOMEM, "so does SIZE_MAX elements");
	free(v);
}

static void test_buf(void)
{
	struct wp_buf b = { 0 };
	bool all = true;

	for (unsigned int i = 0; i < 10000; i++)
		all &= !wp_buf_append(&b, &i, sizeof(i));
	for (unsigned int i = 0; i < 10000 && all; i++) {
		unsigned int got;

		memcpy(&got, b.data + i * sizeof(got), sizeof(got));
		all = got == i;
	}
	ok(all && b.len == 10000 * sizeof(unsigned int), "wp_buf: 10000 appends kept in order");
	ok(!wp_buf_reserve(&b, SIZE_MAX - b.len + 1), "wp_buf: room past SIZE_MAX refused");
	ok(wp_buf_reserve(&b, 0) == b.data + b.len, "wp_buf: room for nothing is the end");
	wp_buf_release(&b);
	ok(!b.data && !b.len && !b.cap, "wp_buf: released");
	{
		struct wp_buf empty = { 0 };

		/* An empty buffer's contents: NULL and 0, which memcpy may not be given. */
		ok(!wp_buf_append(&b, empty.data, empty.len) && !b.len,
		   "wp_buf: appending an empty buffer adds nothing");
		wp_buf_release(&b);
	}
}

int main(void)
{
	size_t cap = 0, old;
	int *v = NULL, *t;
	bool kept = true;

	t = wp_grow(v, &cap, 1, sizeof(*v));
	ok(t && cap >= 1, "from nothing: room for one (%zu)", cap);
	v = t;
	for (int i = 0; i < 1000; i++) {
		old = cap;
		t = wp_grow(v, &cap, (size_t)i + 1, sizeof(*v));
		if (!t) {
			kept = false;
			break;
		}
		if (cap != old && cap < 2 * old)
			kept = false;	/* grows by at least doubling */
		v = t;
		v[i] = i;
	}
	ok(kept, "1000 appends, each growth at least doubling (cap %zu)", cap);
	for (int i = 0; i < 1000 && kept; i++)
		kept = v[i] == i;
	ok(kept, "every element kept across growths");
	old = cap;
	ok(wp_grow(v, &cap, 10, sizeof(*v)) == v && cap == old, "enough room: the same array");
	ok(!wp_grow(v, &cap, SIZE_MAX / 2, sizeof(*v)) && cap == old,
	   "an overflowing size: NULL, the capacity as it was");
	free(v);
	test_macro();
	test_buf();
	return done_testing();
}
