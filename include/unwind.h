/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind.h: user stacks from a sample's registers and stack copy (libdwfl).
 *
 * One Dwfl per process, attached once and kept across that process's
 * samples, for the 64 processes sampled last (a Dwfl holds some hundred
 * kilobytes; older ones are dropped and rebuilt when needed); modules are
 * reported lazily, when a frame's PC first falls into a mapped ELF file,
 * with that mapping's load bias.  When the process's mappings change
 * (procmap generation), its Dwfl is rebuilt.
 * Memory reads are served from the copied stack only; a read outside it
 * marks the stack truncated.  Owns every libdwfl handle it creates.
 */
#ifndef WALLPROF_UNWIND_H
#define WALLPROF_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "layout.h"
#include "procmap.h"
#include "ucache.h"

#define WP_MAX_FRAMES 256

struct wp_ustack {
	uint64_t pc[WP_MAX_FRAMES];	/* innermost first */
	bool activation[WP_MAX_FRAMES];	/* pc is not a return address */
	unsigned int n;
	bool truncated;		/* the stack copy ended before the outermost frame */
	bool unreadable;	/* ... where the kernel could not read the stack */
	bool too_deep;		/* stopped at WP_MAX_FRAMES */
	bool failed;		/* not even the first frame */
	uint64_t needed;	/* stack bytes that would have sufficed, when known */
	/*
	 * Where in the copy the unwinder read its words, in the order it read
	 * them (nr_reads of them; more than the cache remembers,
	 * WP_UCACHE_MAX_READS: only the first are here).  With the registers
	 * and the address space, the words there decide the whole unwind.
	 */
	uint32_t read_off[WP_UCACHE_MAX_READS];
	unsigned int nr_reads;
};

struct wp_unwinder;

/*
 * An unwinder for samples recorded on arch, which must be this host's:
 * libdwfl learns the architecture from our own executable.
 */
int wp_unwinder_new(struct wp_procmap *pm, const struct wp_arch *arch,
		    struct wp_unwinder **out);

/* The user-mode IP in a DWARF sample's registers; false when it has none. */
bool wp_unwind_user_ip(const struct wp_unwinder *u, const struct wp_sample_format *fmt,
		       const struct wp_sample *s, uint64_t *ip);

/*
 * Unwind the user part of a DWARF sample of process s->pid.  Fills out
 * (n == 0 and failed when no frame could be had, e.g. a kernel thread).
 * Never fails hard: problems become flags and counters.
 */
void wp_unwind_sample(struct wp_unwinder *u, const struct wp_sample_format *fmt,
		      const struct wp_sample *s, struct wp_ustack *out);

void wp_unwinder_free(struct wp_unwinder *u);

#endif
