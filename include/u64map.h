/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * u64map.h: a hash map from 64-bit keys to 64-bit values.
 *
 * Open addressing with linear probing, never more than half full, so a
 * lookup touches a slot or two, whatever the keys (a seeded hash, util.h).
 * Any key may be stored: a slot with key 0 is empty, and key 0 itself is
 * kept beside the slots.  The map owns its slots; it is a value type that
 * starts zeroed (WP_U64MAP_INIT).
 */
#ifndef WALLPROF_U64MAP_H
#define WALLPROF_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wp_u64map_slot {
	uint64_t key, val;
};

struct wp_u64map {
	struct wp_u64map_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t len;		/* keys, 0 included */
	uint64_t seed;		/* of its hash, random (util.h), set with the slots */
	bool has_zero;		/* key 0 is there, with value zero_val */
	uint64_t zero_val;
};

#define WP_U64MAP_INIT { 0 }

/* Set key to val (replacing any value it had): 0 or -ENOMEM. */
int wp_u64map_put(struct wp_u64map *m, uint64_t key, uint64_t val);

/* Remove key (nothing when absent). */
void wp_u64map_del(struct wp_u64map *m, uint64_t key);

/* Whether key is present; its value in *val when val is not NULL. */
bool wp_u64map_get(const struct wp_u64map *m, uint64_t key, uint64_t *val);

/*
 * Walk the map: start with *pos = 0; each call gives one entry and returns
 * true, or false when there is none left.  Order is arbitrary, and differs
 * from one run to the next (the seed): sort what is shown.
 */
bool wp_u64map_next(const struct wp_u64map *m, size_t *pos, uint64_t *key, uint64_t *val);

void wp_u64map_release(struct wp_u64map *m);

#endif
