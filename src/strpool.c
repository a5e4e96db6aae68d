/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strpool.c: string interning: each distinct string stored once, found by its text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "strpool.h"
#include "util.h"

struct wp_strpool {
	char **strs;
	size_t nr, cap;
	struct wp_hashmap index;	/* string -> id */
};

static bool is_string(const void *key, uint32_t id, const void *ctx)
{
	const struct wp_strpool *sp = ctx;

	return !strcmp(sp->strs[id], key);
}

int wp_strpool_new(struct wp_strpool **out)
{
	struct wp_strpool *sp = calloc(1, sizeof(*sp));

	*out = NULL;
	if (!sp)
		return -ENOMEM;
	wp_hashmap_init(&sp->index, is_string, sp);
	*out = sp;
	return 0;
}

uint32_t wp_strpool_intern(struct wp_strpool *sp, const char *s)
{
	uint64_t h = wp_hashmap_hash(&sp->index, s, strlen(s));
	uint32_t id = wp_hashmap_find(&sp->index, h, s);
	char *copy;

	if (id != WP_HASHMAP_NONE)
		return id;
	if (WP_GROW(sp->strs, sp->cap, sp->nr + 1))
		return UINT32_MAX;
	copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	if (wp_hashmap_add(&sp->index, h, (uint32_t)sp->nr)) {
		free(copy);
		return UINT32_MAX;
	}
	sp->strs[sp->nr] = copy;
	return (uint32_t)sp->nr++;
}

const char *wp_strpool_get(const struct wp_strpool *sp, uint32_t id)
{
	return id < sp->nr ? sp->strs[id] : "?";
}

size_t wp_strpool_count(const struct wp_strpool *sp)
{
	return sp->nr;
}

void wp_strpool_free(struct wp_strpool *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->nr; i++)
		free(sp->strs[i]);
	free(sp->strs);
	wp_hashmap_release(&sp->index);
	free(sp);
}
