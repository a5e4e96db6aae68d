/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hashmap.h: entries found by their content (strings, frame sequences),
 * for tables whose keys are not integers; those want u64map.h.
 *
 * The caller keeps its entries in an array of its own and owns them; the
 * map owns only its slots, which hold entry numbers and 32 bits of each
 * entry's hash.  The caller hashes a key with wp_hashmap_hash(), seeded
 * (keys may come from a recording, util.h), and a callback given at init
 * says whether a key is that of an entry.  Open addressing, linear
 * probing, never more than half full.  Entries are never removed: the
 * tables that use it only intern.
 */
#ifndef WALLPROF_HASHMAP_H
#define WALLPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WP_HASHMAP_NONE UINT32_MAX

/* Whether key is the key of entry (a number the caller gave wp_hashmap_add). */
typedef bool wp_hashmap_match_fn(const void *key, uint32_t entry, const void *ctx);

struct wp_hashmap_slot {
	uint32_t hash;		/* of the entry, folded to 32 bits */
	uint32_t entry;		/* + 1; 0 = empty */
};

struct wp_hashmap {
	struct wp_hashmap_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t len;
	uint64_t seed;
	wp_hashmap_match_fn *match;
	const void *ctx;	/* borrowed, passed to match */
};

/* An empty map; match(key, entry, ctx) compares keys.  Allocates nothing. */
void wp_hashmap_init(struct wp_hashmap *m, wp_hashmap_match_fn *match, const void *ctx);

/* The hash of a key of len bytes, with this map's seed. */
uint64_t wp_hashmap_hash(const struct wp_hashmap *m, const void *key, size_t len);

/* The entry whose key is key (hash being its hash), or WP_HASHMAP_NONE. */
uint32_t wp_hashmap_find(const struct wp_hashmap *m, uint64_t hash, const void *key);

/*
 * Index entry under hash, the hash of its key, which must not be in the
 * map yet (wp_hashmap_find first).  0, -EINVAL for WP_HASHMAP_NONE, or
 * -ENOMEM (the map then as it was).
 */
int wp_hashmap_add(struct wp_hashmap *m, uint64_t hash, uint32_t entry);

/* Free the slots; the map is then empty, ready for use again. */
void wp_hashmap_release(struct wp_hashmap *m);

#endif
