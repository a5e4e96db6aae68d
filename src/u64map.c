/* SPDX-License-Identifier: GPL-2.0-or-later */
/* u64map.c: open addressing, linear probing, grown at half full. */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"
#include "util.h"

/* Keys may come from a recording: hashed with the map's own seed (util.h). */
static size_t slot_of(const struct wp_u64map *m, uint64_t key)
{
	return (size_t)wp_hash_u64(key, m->seed) & (m->cap - 1);
}

/* The slot of key (not 0): the one holding it, or the empty one it would take. */
static struct wp_u64map_slot *find(const struct wp_u64map *m, uint64_t key)
{
	size_t i = slot_of(m, key);

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static int grow(struct wp_u64map *m)
{
	struct wp_u64map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	if (!old.cap)
		m->seed = wp_hash_seed();
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find(m, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

int wp_u64map_put(struct wp_u64map *m, uint64_t key, uint64_t val)
{
	struct wp_u64map_slot *s;

	if (!key) {
		m->len += !m->has_zero;
		m->has_zero = true;
		m->zero_val = val;
		return 0;
	}
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	s = find(m, key);
	if (!s->key) {
		s->key = key;
		m->len++;
	}
	s->val = val;
	return 0;
}

void wp_u64map_del(struct wp_u64map *m, uint64_t key)
{
	size_t i, j;

	if (!key) {
		m->len -= m->has_zero;
		m->has_zero = false;
		return;
	}
	if (!m->cap)
		return;
	i = (size_t)(find(m, key) - m->slots);
	if (!m->slots[i].key)
		return;
	m->slots[i].key = 0;
	m->len--;
	/*
	 * Linear probing without tombstones: move back every entry after the
	 * hole that would no longer be found past it.
	 */
	for (j = (i + 1) & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
		size_t home = slot_of(m, m->slots[j].key);

		/* Keep it where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].key = 0;
		i = j;
	}
}

bool wp_u64map_get(const struct wp_u64map *m, uint64_t key, uint64_t *val)
{
	const struct wp_u64map_slot *s;

	if (!key) {
		if (m->has_zero && val)
			*val = m->zero_val;
		return m->has_zero;
	}
	if (!m->cap)
		return false;
	s = find(m, key);
	if (s->key && val)
		*val = s->val;
	return s->key != 0;
}

bool wp_u64map_next(const struct wp_u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (!m->slots[*pos].key)
			continue;
		*key = m->slots[*pos].key;
		*val = m->slots[*pos].val;
		(*pos)++;
		return true;
	}
	/* Key 0 last, at the position after the slots. */
	if (*pos == m->cap && m->has_zero) {
		*key = 0;
		*val = m->zero_val;
		(*pos)++;
		return true;
	}
	return false;
}

void wp_u64map_release(struct wp_u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
	m->has_zero = false;
}
