/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ucache.c: user stacks already unwound and named, keyed by what decided them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "u64map.h"
#include "ucache.h"
#include "util.h"

struct ucache_entry {
	uint64_t key;		/* address space, registers */
	uint64_t words_hash;	/* of the words read, in order */
	uint64_t needed;
	uint32_t read_end;	/* the end of the furthest word read */
	uint32_t dyn_size;	/* for truncated stacks only, else 0 */
	uint32_t off, len;	/* in tokens[] */
	uint32_t reads, nr_reads;	/* in read_offs[] */
	bool used, truncated, unreadable, too_deep;
};

/*
 * The slots are direct-mapped (a key's slot is key & mask), but only the
 * slots in use take memory: a table of them keyed by slot number holds
 * each one's index in entries.  A small report fills a few hundred of the
 * 65536 slots, and an array of them all would cost it a page fault for
 * each one touched.
 */
struct wp_ucache {
	struct wp_u64map used;	/* slot -> index in entries */
	struct ucache_entry *entries;
	size_t nr_entries, cap_entries;
	unsigned int mask;	/* nr_slots - 1 */
	uint32_t *tokens;
	size_t nr_tokens, cap_tokens;
	uint32_t *read_offs;	/* as many as tokens may be */
	size_t nr_read_offs;
};

/* The hash of the words at offs[0, n) of stack, in that order. */
static uint64_t words_hash(const uint8_t *stack, const uint32_t *offs, unsigned int n)
{
	uint64_t words[WP_UCACHE_MAX_READS];

	for (unsigned int i = 0; i < n; i++)
		memcpy(&words[i], stack + offs[i], sizeof(words[i]));
	return XXH3_64bits(words, n * sizeof(words[0]));
}

/* The entry of key's slot, or NULL when the slot is empty. */
static struct ucache_entry *slot_entry(const struct wp_ucache *c, uint64_t key)
{
	uint64_t idx;

	return wp_u64map_get(&c->used, key & c->mask, &idx) ? &c->entries[idx] : NULL;
}

int wp_ucache_new(unsigned int nr_slots, size_t nr_tokens, struct wp_ucache **out)
{
	struct wp_ucache *c;

	*out = NULL;
	if (!nr_slots || (nr_slots & (nr_slots - 1)) || !nr_tokens || nr_tokens > UINT32_MAX)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->tokens = malloc(nr_tokens * sizeof(*c->tokens));
	c->read_offs = malloc(nr_tokens * sizeof(*c->read_offs));
	if (!c->tokens || !c->read_offs) {
		wp_ucache_free(c);
		return -ENOMEM;
	}
	c->mask = nr_slots - 1;
	c->cap_tokens = nr_tokens;
	*out = c;
	return 0;
}

uint64_t wp_ucache_key(uint64_t space, const uint64_t *regs, unsigned int nr_regs)
{
	return XXH3_64bits_withSeed(regs, (size_t)nr_regs * sizeof(*regs), space);
}

bool wp_ucache_find(const struct wp_ucache *c, uint64_t key, const uint8_t *stack,
		    uint64_t dyn_size, struct wp_ucache_stack *out)
{
	const struct ucache_entry *e = slot_entry(c, key);

	if (!e || !e->used || e->key != key || e->read_end > dyn_size)
		return false;
	if (e->truncated && e->dyn_size != dyn_size)
		return false;
	if (words_hash(stack, c->read_offs + e->reads, e->nr_reads) != e->words_hash)
		return false;
	out->tokens = c->tokens + e->off;
	out->len = e->len;
	out->truncated = e->truncated;
	out->unreadable = e->unreadable;
	out->too_deep = e->too_deep;
	out->needed = e->needed;
	return true;
}

void wp_ucache_reset(struct wp_ucache *c)
{
	wp_u64map_release(&c->used);
	c->nr_entries = 0;
	c->nr_tokens = 0;
	c->nr_read_offs = 0;
}

int wp_ucache_insert(struct wp_ucache *c, uint64_t key, const uint8_t *stack,
		     uint64_t dyn_size, const uint32_t *read_offs, unsigned int nr_reads,
		     const struct wp_ucache_stack *st)
{
	struct ucache_entry *e;
	uint32_t read_end = 0;

	if (nr_reads > WP_UCACHE_MAX_READS || dyn_size > UINT32_MAX || st->len > c->cap_tokens ||
	    nr_reads > c->cap_tokens)
		return -E2BIG;
	/* Offsets come from the unwinder: never hash past the copy. */
	for (unsigned int i = 0; i < nr_reads; i++) {
		if (read_offs[i] > dyn_size || dyn_size - read_offs[i] < 8)
			return -E2BIG;
		if (read_offs[i] + 8 > read_end)
			read_end = read_offs[i] + 8;
	}
	/* Full: start over rather than grow without bound. */
	if (st->len > c->cap_tokens - c->nr_tokens || nr_reads > c->cap_tokens - c->nr_read_offs)
		wp_ucache_reset(c);
	e = slot_entry(c, key);
	if (!e) {
		if (WP_GROW(c->entries, c->cap_entries, c->nr_entries + 1) ||
		    wp_u64map_put(&c->used, key & c->mask, c->nr_entries))
			return -ENOMEM;
		e = &c->entries[c->nr_entries++];
	}
	e->key = key;
	e->read_end = read_end;
	e->reads = (uint32_t)c->nr_read_offs;
	e->nr_reads = nr_reads;
	if (nr_reads)
		memcpy(c->read_offs + c->nr_read_offs, read_offs, nr_reads * sizeof(*read_offs));
	c->nr_read_offs += nr_reads;
	e->words_hash = words_hash(stack, read_offs, nr_reads);
	e->dyn_size = st->truncated ? (uint32_t)dyn_size : 0;
	e->off = (uint32_t)c->nr_tokens;
	e->len = st->len;
	e->truncated = st->truncated;
	e->unreadable = st->unreadable;
	e->too_deep = st->too_deep;
	e->needed = st->needed;
	e->used = true;
	if (st->len)
		memcpy(c->tokens + c->nr_tokens, st->tokens, st->len * sizeof(*st->tokens));
	c->nr_tokens += st->len;
	return 0;
}

unsigned int wp_ucache_emit(const struct wp_ucache_stack *st, uint32_t marker, uint32_t *out,
			    unsigned int room, bool *cut)
{
	bool mark = st->truncated || st->too_deep;
	unsigned int n = st->len;

	*cut = mark ? n >= room : n > room;
	if (*cut) {
		/* What fits, and a marker saying there was more. */
		if (!room)
			return 0;
		n = room - 1;
		mark = true;
	}
	if (n)
		memcpy(out, st->tokens, n * sizeof(*out));
	if (mark)
		out[n++] = marker;
	return n;
}

void wp_ucache_free(struct wp_ucache *c)
{
	if (!c)
		return;
	wp_u64map_release(&c->used);
	free(c->entries);
	free(c->tokens);
	free(c->read_offs);
	free(c);
}
