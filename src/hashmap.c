/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hashmap.c: an index of caller-kept entries; linear probing, grown at half full. */
#include <errno.h>
#include <stdlib.h>

#include "hashmap.h"
#include "util.h"

/*
 * Both halves of the hash: the low bits pick the slot, the high ones tell
 * apart most keys that share it without asking the caller.
 */
static uint32_t fold(uint64_t hash)
{
	return (uint32_t)(hash ^ (hash >> 32));
}

void wp_hashmap_init(struct wp_hashmap *m, wp_hashmap_match_fn *match, const void *ctx)
{
	*m = (struct wp_hashmap){ .seed = wp_hash_seed(), .match = match, .ctx = ctx };
}

uint64_t wp_hashmap_hash(const struct wp_hashmap *m, const void *key, size_t len)
{
	return wp_hash(key, len, m->seed);
}

uint32_t wp_hashmap_find(const struct wp_hashmap *m, uint64_t hash, const void *key)
{
	uint32_t h = fold(hash);
	size_t mask = m->cap - 1;

	if (!m->cap)
		return WP_HASHMAP_NONE;
	for (size_t i = h & mask; m->slots[i].entry; i = (i + 1) & mask) {
		const struct wp_hashmap_slot *s = &m->slots[i];

		if (s->hash == h && m->match(key, s->entry - 1, m->ctx))
			return s->entry - 1;
	}
	return WP_HASHMAP_NONE;
}

/* Into the first empty slot from h's own: the stored hash is all it takes. */
static void place(struct wp_hashmap *m, struct wp_hashmap_slot s)
{
	size_t mask = m->cap - 1, i;

	for (i = s.hash & mask; m->slots[i].entry; i = (i + 1) & mask)
		;
	m->slots[i] = s;
}

static int grow(struct wp_hashmap *m)
{
	struct wp_hashmap_slot *old = m->slots;
	size_t old_cap = m->cap, cap = old_cap ? old_cap * 2 : 64;

	if (cap > SIZE_MAX / sizeof(*old))
		return -ENOMEM;
	m->slots = calloc(cap, sizeof(*old));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].entry)
			place(m, old[i]);
	free(old);
	return 0;
}

int wp_hashmap_add(struct wp_hashmap *m, uint64_t hash, uint32_t entry)
{
	if (entry == WP_HASHMAP_NONE)
		return -EINVAL;
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	place(m, (struct wp_hashmap_slot){ .hash = fold(hash), .entry = entry + 1 });
	m->len++;
	return 0;
}

void wp_hashmap_release(struct wp_hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}
