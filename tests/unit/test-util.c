/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-util.c: the array growth helper. */
#include <stdint.h>
#include <stdlib.h>

#include "tap.h"
#include "util.h"

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
	return done_testing();
}
