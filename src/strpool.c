/* SPDX-License-Identifier: GPL-2.0-or-later */
/* strpool.c: string interning with an open-addressing hash of ids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strpool.h"
#include "util.h"

struct wp_strpool {
	char **strs;
	size_t nr, cap;
	uint32_t *slots;	/* id + 1, 0 = empty */
	size_t nr_slots;
	uint64_t seed;		/* of the hash: names come from recordings (util.h) */
};

int wp_strpool_new(struct wp_strpool **out)
{
	struct wp_strpool *sp = calloc(1, sizeof(*sp));

	*out = NULL;
	if (!sp)
		return -ENOMEM;
	sp->seed = wp_hash_seed();
	sp->nr_slots = 1024;
	sp->slots = calloc(sp->nr_slots, sizeof(*sp->slots));
	if (!sp->slots) {
		free(sp);
		return -ENOMEM;
	}
	*out = sp;
	return 0;
}

static size_t find_slot(const struct wp_strpool *sp, const char *s)
{
	size_t h = (size_t)wp_hash(s, strlen(s), sp->seed) & (sp->nr_slots - 1);

	while (sp->slots[h] && strcmp(sp->strs[sp->slots[h] - 1], s))
		h = (h + 1) & (sp->nr_slots - 1);
	return h;
}

static int rehash(struct wp_strpool *sp)
{
	uint32_t *old = sp->slots;
	size_t old_n = sp->nr_slots;

	sp->slots = calloc(old_n * 2, sizeof(*sp->slots));
	if (!sp->slots) {
		sp->slots = old;
		return -ENOMEM;
	}
	sp->nr_slots = old_n * 2;
	for (size_t i = 0; i < old_n; i++)
		if (old[i])
			sp->slots[find_slot(sp, sp->strs[old[i] - 1])] = old[i];
	free(old);
	return 0;
}

uint32_t wp_strpool_intern(struct wp_strpool *sp, const char *s)
{
	size_t h = find_slot(sp, s);
	char *copy;

	if (sp->slots[h])
		return sp->slots[h] - 1;
	if ((sp->nr + 1) * 2 > sp->nr_slots) {
		if (rehash(sp))
			return UINT32_MAX;
		h = find_slot(sp, s);
	}
	if (sp->nr == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 256;
		char **ns = realloc(sp->strs, cap * sizeof(*ns));

		if (!ns)
			return UINT32_MAX;
		sp->strs = ns;
		sp->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return UINT32_MAX;
	sp->strs[sp->nr] = copy;
	sp->slots[h] = (uint32_t)++sp->nr;
	return (uint32_t)(sp->nr - 1);
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
	free(sp->slots);
	free(sp);
}
