/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ucache.h: user stacks already unwound and named.
 *
 * The unwinder's result depends only on the registers, the address space
 * and the stack words it read, so an entry is keyed by a hash of (address
 * space, registers) and holds where in the copy the unwinder read and a
 * hash of the words it found there: a sample with the same key and the
 * same words at those places unwinds the same way, step by step, whatever
 * the rest of its stack holds (the locals between the return addresses
 * change from one call to the next; the words the unwinder follows do
 * not).  A truncated stack also depends on where the copy ended, so its
 * entry matches only the same copy size.
 * XXH3 hashes; a collision is not a practical concern.
 *
 * An entry holds the whole chain of frame tokens with the unwinder's
 * flags, never a chain cut to fit one sample: how much of it a sample
 * shows depends on the room that sample's kernel frames left, which
 * wp_ucache_emit() applies on the way out, the same way for a stack just
 * unwound as for one found here.
 *
 * Direct-mapped: a new entry replaces whatever held its slot; only the
 * slots in use take memory.  When the token store is full, everything is
 * dropped and filling starts over, so memory stays bounded.  Owns its
 * slots and tokens.
 */
#ifndef WALLPROF_UCACHE_H
#define WALLPROF_UCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The most stack reads an entry remembers, and so the unwinder notes
 * (unwind.h); an unwind that read more is not kept.  Most take a few dozen.
 */
#define WP_UCACHE_MAX_READS 128

/* A named user stack, innermost frame first, without any marker. */
struct wp_ucache_stack {
	const uint32_t *tokens;
	unsigned int len;
	bool truncated;		/* the stack copy ended before the outermost frame */
	bool unreadable;	/* ... where the kernel could not read the stack */
	bool too_deep;		/* the unwinder stopped at its frame limit */
	uint64_t needed;	/* stack bytes that would have sufficed, when known */
};

struct wp_ucache;

/*
 * nr_slots entries (a power of two) sharing a store of nr_tokens tokens.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int wp_ucache_new(unsigned int nr_slots, size_t nr_tokens, struct wp_ucache **out);

/*
 * The key of a sample: a hash of its address space's id (procmap.h:
 * processes with their code mapped alike share it) and its registers.
 */
uint64_t wp_ucache_key(uint64_t space, const uint64_t *regs, unsigned int nr_regs);

/*
 * Find the stack of a sample with this key and stack copy (dyn_size bytes
 * at stack).  On a hit fills *out, whose tokens are borrowed until the
 * next wp_ucache_insert() or wp_ucache_reset(), and returns true.
 */
bool wp_ucache_find(const struct wp_ucache *c, uint64_t key, const uint8_t *stack,
		    uint64_t dyn_size, struct wp_ucache_stack *out);

/*
 * Remember st (copied) for this key and stack copy (dyn_size bytes at
 * stack), in which the unwinder read the 8-byte words at read_offs[0,
 * nr_reads), in that order.  Returns 0, or -E2BIG for a chain, reads or
 * sizes the cache cannot hold (a read past the copy among them), -ENOMEM
 * (nothing is stored; lookups simply miss).
 */
int wp_ucache_insert(struct wp_ucache *c, uint64_t key, const uint8_t *stack,
		     uint64_t dyn_size, const uint32_t *read_offs, unsigned int nr_reads,
		     const struct wp_ucache_stack *st);

/* Forget every entry. */
void wp_ucache_reset(struct wp_ucache *c);

/*
 * Copy st into out, which has room for room tokens; returns the number
 * written.  A truncated or too deep stack ends with marker.  When the
 * stack (with its marker) does not fit, its first room - 1 frames are
 * written and then marker, and *cut is set (else cleared).
 */
unsigned int wp_ucache_emit(const struct wp_ucache_stack *st, uint32_t marker, uint32_t *out,
			    unsigned int room, bool *cut);

/* NULL is fine. */
void wp_ucache_free(struct wp_ucache *c);

#endif
