/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stacks.c: stack interning: one copy of each distinct frame sequence. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

struct stack_ref {
	uint32_t off, len;
	uint64_t hash;
};

struct wp_stacks {
	uint32_t *frames;
	size_t nr_frames, cap_frames;
	struct stack_ref *refs;
	size_t nr, cap;
	uint32_t *slots;	/* id + 1 */
	size_t nr_slots;
};

static uint64_t hash_frames(const uint32_t *f, unsigned int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (unsigned int i = 0; i < n; i++)
		h = (h ^ f[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

int wp_stacks_new(struct wp_stacks **out)
{
	struct wp_stacks *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->nr_slots = 1024;
	st->slots = calloc(st->nr_slots, sizeof(*st->slots));
	if (!st->slots) {
		free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

static size_t find_slot(const struct wp_stacks *st, const uint32_t *f, unsigned int n,
			uint64_t h)
{
	size_t i = h & (st->nr_slots - 1);

	for (; st->slots[i]; i = (i + 1) & (st->nr_slots - 1)) {
		const struct stack_ref *r = &st->refs[st->slots[i] - 1];

		if (r->hash == h && r->len == n &&
		    !memcmp(st->frames + r->off, f, n * sizeof(*f)))
			break;
	}
	return i;
}

static int rehash(struct wp_stacks *st)
{
	uint32_t *old = st->slots;
	size_t old_n = st->nr_slots;

	st->slots = calloc(old_n * 2, sizeof(*st->slots));
	if (!st->slots) {
		st->slots = old;
		return -ENOMEM;
	}
	st->nr_slots = old_n * 2;
	for (size_t i = 0; i < old_n; i++) {
		const struct stack_ref *r;
		size_t j;

		if (!old[i])
			continue;
		r = &st->refs[old[i] - 1];
		for (j = r->hash & (st->nr_slots - 1); st->slots[j]; j = (j + 1) & (st->nr_slots - 1))
			;
		st->slots[j] = old[i];
	}
	free(old);
	return 0;
}

uint32_t wp_stacks_intern(struct wp_stacks *st, const uint32_t *frames, unsigned int n)
{
	uint64_t h = hash_frames(frames, n);
	size_t slot = find_slot(st, frames, n, h);
	struct stack_ref *r;

	if (st->slots[slot])
		return st->slots[slot] - 1;
	if ((st->nr + 1) * 2 > st->nr_slots) {
		if (rehash(st))
			return UINT32_MAX;
		slot = find_slot(st, frames, n, h);
	}
	if (st->nr == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct stack_ref *nr = realloc(st->refs, cap * sizeof(*nr));

		if (!nr)
			return UINT32_MAX;
		st->refs = nr;
		st->cap = cap;
	}
	if (st->nr_frames + n > st->cap_frames) {
		size_t cap = st->cap_frames ? st->cap_frames * 2 : 4096;
		uint32_t *nf;

		while (cap < st->nr_frames + n)
			cap *= 2;
		nf = realloc(st->frames, cap * sizeof(*nf));
		if (!nf)
			return UINT32_MAX;
		st->frames = nf;
		st->cap_frames = cap;
	}
	r = &st->refs[st->nr];
	r->off = (uint32_t)st->nr_frames;
	r->len = n;
	r->hash = h;
	memcpy(st->frames + st->nr_frames, frames, n * sizeof(*frames));
	st->nr_frames += n;
	st->slots[slot] = (uint32_t)++st->nr;
	return (uint32_t)(st->nr - 1);
}

const uint32_t *wp_stacks_get(const struct wp_stacks *st, uint32_t id, unsigned int *n)
{
	if (id >= st->nr) {
		*n = 0;
		return NULL;
	}
	*n = st->refs[id].len;
	return st->frames + st->refs[id].off;
}

size_t wp_stacks_count(const struct wp_stacks *st)
{
	return st->nr;
}

void wp_stacks_free(struct wp_stacks *st)
{
	if (!st)
		return;
	free(st->frames);
	free(st->refs);
	free(st->slots);
	free(st);
}
