/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-hashmap.c: the index of caller-kept entries, found by content. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "tap.h"

#define NR 100000

/* The caller's side: names in an array, the map holding their numbers. */
struct names {
	char (*v)[16];
	struct wp_hashmap index;
};

static unsigned int matches;	/* calls of the callback */

static bool is_name(const void *key, uint32_t entry, const void *ctx)
{
	const struct names *n = ctx;

	matches++;
	return !strcmp(n->v[entry], key);
}

static uint64_t hash_of(const struct names *n, const char *s)
{
	return wp_hashmap_hash(&n->index, s, strlen(s));
}

/* Add entry i with the hash h, or with its own when h is 0. */
static int add(struct names *n, uint32_t i, uint64_t h)
{
	return wp_hashmap_add(&n->index, h ? h : hash_of(n, n->v[i]), i);
}

static void test_grow(struct names *n)
{
	bool all = true;
	uint32_t e;

	for (uint32_t i = 0; i < NR; i++)
		all &= !add(n, i, 0);
	ok(all, "%d entries added, through %zu slots", NR, n->index.cap);
	ok(n->index.len == NR && n->index.len * 2 <= n->index.cap,
	   "never more than half full (%zu of %zu)", n->index.len, n->index.cap);
	for (uint32_t i = 0; i < NR && all; i++)
		all = wp_hashmap_find(&n->index, hash_of(n, n->v[i]), n->v[i]) == i;
	ok(all, "each one found after the growths");
	e = wp_hashmap_find(&n->index, hash_of(n, "absent"), "absent");
	ok(e == WP_HASHMAP_NONE, "a key never added is not found");
	/* A key whose hash is that of an entry, but not its text. */
	e = wp_hashmap_find(&n->index, hash_of(n, n->v[7]), "absent");
	ok(e == WP_HASHMAP_NONE, "a key with an entry's hash but not its text is not found");
}

static void test_collisions(struct names *n)
{
	const uint64_t same = 0x123456789abcdef0ULL;
	bool all = true;

	/* Every entry has one hash: only the callback tells them apart. */
	for (uint32_t i = 0; i < 1000; i++)
		all &= !add(n, i, same);
	ok(all, "1000 entries of one hash added");
	for (uint32_t i = 0; i < 1000 && all; i++)
		all = wp_hashmap_find(&n->index, same, n->v[i]) == i;
	ok(all, "each one found by its text");
	ok(wp_hashmap_find(&n->index, same, "absent") == WP_HASHMAP_NONE,
	   "and one not there is not");
	/* The stored hash keeps the callback away from other keys. */
	matches = 0;
	wp_hashmap_find(&n->index, same ^ 0xff00000000ULL, n->v[3]);
	is_int((int)matches, 0, "a different hash never asks the callback");
}

int main(void)
{
	struct names n = { .v = calloc(NR, sizeof(*n.v)) };

	if (!ok(n.v != NULL, "memory"))
		return done_testing();
	for (uint32_t i = 0; i < NR; i++)
		snprintf(n.v[i], sizeof(n.v[i]), "name%u", i);
	wp_hashmap_init(&n.index, is_name, &n);
	ok(wp_hashmap_find(&n.index, hash_of(&n, "name0"), "name0") == WP_HASHMAP_NONE,
	   "empty: nothing found, nothing allocated");
	is_int(wp_hashmap_add(&n.index, 0, WP_HASHMAP_NONE), -EINVAL,
	       "WP_HASHMAP_NONE is not an entry");
	ok(wp_hashmap_hash(&n.index, "a", 1) == wp_hashmap_hash(&n.index, "a", 1) &&
	   wp_hashmap_hash(&n.index, "a", 1) != wp_hashmap_hash(&n.index, "b", 1),
	   "hash: the same for the same key, another for another");
	test_grow(&n);
	wp_hashmap_release(&n.index);
	ok(n.index.len == 0 &&
	   wp_hashmap_find(&n.index, hash_of(&n, "name1"), "name1") == WP_HASHMAP_NONE,
	   "released: empty again");
	test_collisions(&n);
	wp_hashmap_release(&n.index);
	free(n.v);
	return done_testing();
}
