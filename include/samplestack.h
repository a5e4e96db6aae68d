/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * samplestack.h: a sample's stack as code places, before any naming.
 *
 * The one implementation of "which code was a sample in", for report's
 * analysis and for the live unwinder that writes stack tables: the
 * kernel's callchain, and the user stack unwound from the sample's
 * registers and stack copy (unwind.h, with a cache of stacks already
 * unwound), each address made a place (procmap.h) in the process's
 * mappings at the sample's time.  Places are interned: a stack is a list
 * of place ids.  Naming places is symbols.h's.  Owns the unwinder, its
 * cache and the place table; reads the procmap it is given.
 */
#ifndef WALLPROF_SAMPLESTACK_H
#define WALLPROF_SAMPLESTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"
#include "layout.h"
#include "procmap.h"
#include "unwind.h"

#define WP_SSTACK_CHAIN 512	/* callchain entries kept */
#define WP_NO_PLACE UINT32_MAX

/* wp_sample_stack.flags */
#define WP_SSTACK_UNWOUND	1U	/* the user stack was unwound (or tried) */
#define WP_SSTACK_FAILED	2U	/* not even one user frame */
#define WP_SSTACK_TRUNCATED	4U	/* ended by the end of the stack copy */
#define WP_SSTACK_TOO_DEEP	8U	/* stopped at the unwinder's frame limit */
#define WP_SSTACK_UNREADABLE	16U	/* truncated where the kernel could not read the stack */
#define WP_SSTACK_FLAGS		31U

struct wp_sample_stack {
	uint32_t flags;		/* WP_SSTACK_* */
	uint32_t ip;		/* place of the sampled address, or WP_NO_PLACE */
	uint64_t needed;	/* stack bytes that would have sufficed (truncated) */
	unsigned int nr_chain, nr_user;
	uint32_t chain[WP_SSTACK_CHAIN];	/* callchain places, kernel's first */
	uint32_t user[WP_MAX_FRAMES];		/* unwound user places, innermost first */
};

struct wp_resolver;

/*
 * Whether the recording was made on this machine's running kernel, in
 * this boot: then its [vdso] and kernel addresses are this kernel's.
 */
bool wp_same_kernel(const struct wp_meta *m);

/*
 * A resolver for the samples of a recording with meta m, over the
 * processes of pm (borrowed; the caller feeds it the recording's records).
 * Unwinds DWARF stacks only when they were recorded on this machine kind
 * (else warns once: user frames are left out).  Returns 0 or -ENOMEM.
 */
int wp_resolver_new(struct wp_procmap *pm, const struct wp_meta *m, struct wp_resolver **out);

/*
 * Bound the cache of unwound stacks to nr_slots stacks (a power of two)
 * and nr_places places in all, dropping what it held; 0 or -errno (then
 * the cache is as it was).  A report keeps a large one for its files'
 * many processes; a recording's unwinder, running for hours beside the
 * workload, trades some unwinding for memory.
 */
int wp_resolver_bound_cache(struct wp_resolver *r, unsigned int nr_slots, size_t nr_places);

/*
 * The places of sample s (record rec).  user: whether its user frames are
 * wanted at all.
 */
void wp_resolver_sample(struct wp_resolver *r, const struct perf_event_header *rec,
			const struct wp_sample *s, bool user, struct wp_sample_stack *out);

/* The id of a place (added if new), or WP_NO_PLACE when out of memory. */
uint32_t wp_resolver_intern(struct wp_resolver *r, const struct wp_place *pl);

/* The place of an id: false for an unknown id. */
bool wp_resolver_place(const struct wp_resolver *r, uint32_t id, struct wp_place *out);

/* Places interned so far: ids are 0 .. this - 1. */
size_t wp_resolver_nr_places(const struct wp_resolver *r);

/* User stacks found already unwound. */
uint64_t wp_resolver_cache_hits(const struct wp_resolver *r);

/* NULL is fine. */
void wp_resolver_free(struct wp_resolver *r);

#endif
