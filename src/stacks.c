/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stacks.c: stack interning: one copy of each distinct frame sequence. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "stacks.h"
#include "util.h"

struct stack_ref {
	uint32_t off, len;
};

/* A stack as a key: its frames. */
struct frames {
	const uint32_t *f;
	unsigned int n;
};

struct wp_stacks {
	uint32_t *frames;
	size_t nr_frames, cap_frames;
	struct stack_ref *refs;
	size_t nr, cap;
	struct wp_hashmap index;	/* frames -> id */
};

static bool is_stack(const void *key, uint32_t id, const void *ctx)
{
	const struct wp_stacks *st = ctx;
	const struct stack_ref *r = &st->refs[id];
	const struct frames *k = key;

	return r->len == k->n && !memcmp(st->frames + r->off, k->f, k->n * sizeof(*k->f));
}

int wp_stacks_new(struct wp_stacks **out)
{
	struct wp_stacks *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return -ENOMEM;
	wp_hashmap_init(&st->index, is_stack, st);
	*out = st;
	return 0;
}

uint32_t wp_stacks_intern(struct wp_stacks *st, const uint32_t *frames, unsigned int n)
{
	const struct frames key = { frames, n };
	uint64_t h = wp_hashmap_hash(&st->index, frames, n * sizeof(*frames));
	uint32_t id = wp_hashmap_find(&st->index, h, &key);
	struct stack_ref *r;

	if (id != WP_HASHMAP_NONE)
		return id;
	if (st->nr_frames + n > UINT32_MAX || WP_GROW(st->refs, st->cap, st->nr + 1) ||
	    WP_GROW(st->frames, st->cap_frames, st->nr_frames + n) ||
	    wp_hashmap_add(&st->index, h, (uint32_t)st->nr))
		return UINT32_MAX;
	r = &st->refs[st->nr];
	r->off = (uint32_t)st->nr_frames;
	r->len = n;
	memcpy(st->frames + st->nr_frames, frames, n * sizeof(*frames));
	st->nr_frames += n;
	return (uint32_t)st->nr++;
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
	wp_hashmap_release(&st->index);
	free(st);
}
