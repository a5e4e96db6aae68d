/* SPDX-License-Identifier: GPL-2.0-or-later */
/* samplestack.c: callchain and unwound user stack of a sample, as places. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "arch.h"
#include "log.h"
#include "quote.h"
#include "samplestack.h"
#include "stacks.h"
#include "ucache.h"
#include "util.h"

#define UCACHE_SLOTS 65536	/* unwound stacks remembered, a power of two */
#define UCACHE_PLACES (1U << 20)	/* their places, in all */
#define PLACE_WORDS 6
#define KPLACE_SLOTS 4096	/* kernel addresses remembered, a power of two */

struct wp_resolver {
	struct wp_procmap *pm;		/* borrowed */
	struct wp_sample_format fmt;
	struct wp_unwinder *unwinder;	/* NULL: user stacks are not unwound */
	struct wp_ucache *ucache;	/* NULL: no cache, only slower */
	struct wp_stacks *places;	/* a place's words -> its id */
	struct wp_ustack ustack;
	uint64_t cache_hits;
	/*
	 * A kernel address's place is its address alone, and wake-ups and
	 * switch-outs come back to the same few dozen frames thousands of
	 * times a second: the place of each address seen last in its slot
	 * (addr 0: empty; a kernel address is never 0).
	 */
	struct kplace_slot {
		uint64_t addr;
		uint32_t place;
	} kplaces[KPLACE_SLOTS];
	/*
	 * The machine kind of a stack table's file recorded where this build
	 * cannot unwind: its stacks are unwound already, so the warning
	 * waits for a sample with a stack copy (the unwinder fell behind).
	 */
	char foreign[64];
};

/* Was the recording made on this machine's running kernel, in this boot? */
bool wp_same_kernel(const struct wp_meta *m)
{
	char host[256] = "", boot[40] = "";
	struct utsname u;

	if (uname(&u) || gethostname(host, sizeof(host) - 1))
		return false;
	if (strcmp(u.release, m->os_release) || strcmp(host, m->hostname))
		return false;
	/* Kernel addresses change at every boot (KASLR). */
	if (m->boot_id[0] &&
	    !wp_read_text_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot))) {
		boot[strcspn(boot, "\n")] = '\0';
		return !strcmp(boot, m->boot_id);
	}
	return true;
}

static void warn_foreign(const char *rec)
{
	char what[WP_QUOTE_SIZE(64)];

	wp_warn("the stacks were recorded on %s; wallprof unwinds DWARF stacks only on the "
		"machine kind they were recorded on, and only on %s: user frames are left out",
		wp_quote(what, sizeof(what), rec, WP_QUOTE_TEXT), wp_arch_supported());
}

/*
 * The unwinder for the file's DWARF stacks, or none (and a warning) when
 * they were recorded on a machine whose registers this build cannot map.
 */
static int unwinder_for(struct wp_resolver *r, const struct wp_meta *m)
{
	const char *host = wp_arch_host_machine();
	const char *rec = m->machine[0] ? m->machine : host;
	const struct wp_arch *arch = wp_arch_find(rec);

	if (!(m->sample_type & PERF_SAMPLE_STACK_USER))
		return 0;
	if (!arch || strcmp(rec, host)) {
		if (m->flags & WP_META_STACK_TABLE)
			snprintf(r->foreign, sizeof(r->foreign), "%s", rec);
		else
			warn_foreign(rec);
		return 0;
	}
	return wp_unwinder_new(r->pm, arch, &r->unwinder);
}

int wp_resolver_new(struct wp_procmap *pm, const struct wp_meta *m, struct wp_resolver **out)
{
	struct wp_resolver *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->pm = pm;
	wp_sample_format_init(&r->fmt, m->sample_type, m->regs_mask);
	r->fmt.stack_request = m->stack_size;
	err = wp_stacks_new(&r->places);
	if (!err)
		err = unwinder_for(r, m);
	if (err) {
		wp_resolver_free(r);
		return err;
	}
	/* Without the cache everything still works, only slower. */
	if (r->unwinder)
		wp_ucache_new(UCACHE_SLOTS, UCACHE_PLACES, &r->ucache);
	*out = r;
	return 0;
}

int wp_resolver_bound_cache(struct wp_resolver *r, unsigned int nr_slots, size_t nr_places)
{
	struct wp_ucache *c;
	int err;

	if (!r->unwinder)
		return 0;	/* nothing to cache */
	err = wp_ucache_new(nr_slots, nr_places, &c);
	if (err)
		return err;
	wp_ucache_free(r->ucache);
	r->ucache = c;
	return 0;
}

uint32_t wp_resolver_intern(struct wp_resolver *r, const struct wp_place *pl)
{
	uint32_t w[PLACE_WORDS] = {
		pl->kind | (pl->activation ? 0x100U : 0), pl->where,
		(uint32_t)pl->addr, (uint32_t)(pl->addr >> 32),
		(uint32_t)pl->pgoff, (uint32_t)(pl->pgoff >> 32),
	};

	return wp_stacks_intern(r->places, w, PLACE_WORDS);
}

bool wp_resolver_place(const struct wp_resolver *r, uint32_t id, struct wp_place *out)
{
	const uint32_t *w;
	unsigned int n;

	if (id >= wp_stacks_count(r->places))
		return false;
	w = wp_stacks_get(r->places, id, &n);
	if (!w || n != PLACE_WORDS)
		return false;
	out->kind = w[0] & 0xff;
	out->activation = w[0] & 0x100;
	out->where = w[1];
	out->addr = w[2] | (uint64_t)w[3] << 32;
	out->pgoff = w[4] | (uint64_t)w[5] << 32;
	return true;
}

size_t wp_resolver_nr_places(const struct wp_resolver *r)
{
	return wp_stacks_count(r->places);
}

uint64_t wp_resolver_cache_hits(const struct wp_resolver *r)
{
	return r->cache_hits;
}

static uint32_t kernel_place(struct wp_resolver *r, uint64_t addr)
{
	struct kplace_slot *k = &r->kplaces[(addr ^ addr >> 12) & (KPLACE_SLOTS - 1)];
	struct wp_place pl = { .kind = WP_PLACE_KERNEL, .addr = addr };
	uint32_t place;

	if (k->addr == addr && addr)
		return k->place;
	place = wp_resolver_intern(r, &pl);
	if (place != UINT32_MAX) {
		k->addr = addr;
		k->place = place;
	}
	return place;
}

static uint32_t user_place(struct wp_resolver *r, const struct wp_process *proc, uint64_t pc,
			   bool activation)
{
	struct wp_place pl;

	wp_process_place(proc, pc, activation, &pl);
	return wp_resolver_intern(r, &pl);
}

/*
 * The user stack unwound from the sample's registers and stack copy, or
 * found already unwound: the unwinder's result depends only on the
 * registers, the address space and the stack bytes it read.
 */
static void unwind_user(struct wp_resolver *r, struct wp_process *proc,
			const struct wp_sample *s, struct wp_sample_stack *out)
{
	struct wp_ucache_stack st = { .tokens = out->user };
	struct wp_addrspace *sp = r->ucache ? wp_procmap_addrspace(r->pm, proc) : NULL;
	uint64_t key = 0;

	out->flags |= WP_SSTACK_UNWOUND;
	if (sp) {
		key = wp_ucache_key(sp->id, s->regs, r->fmt.nr_regs);
		if (wp_ucache_find(r->ucache, key, s->stack, s->stack_dyn_size, &st)) {
			r->cache_hits++;
			out->nr_user = st.len <= WP_MAX_FRAMES ? st.len : WP_MAX_FRAMES;
			memcpy(out->user, st.tokens, out->nr_user * sizeof(*out->user));
			goto flags;
		}
	}
	wp_unwind_sample(r->unwinder, &r->fmt, s, &r->ustack);
	if (r->ustack.failed) {
		out->flags |= WP_SSTACK_FAILED;
		return;
	}
	for (unsigned int i = 0; i < r->ustack.n && i < WP_MAX_FRAMES; i++)
		out->user[out->nr_user++] = user_place(r, proc, r->ustack.pc[i],
						       r->ustack.activation[i]);
	st.len = out->nr_user;
	st.truncated = r->ustack.truncated;
	st.unreadable = r->ustack.unreadable;
	st.too_deep = r->ustack.too_deep;
	st.needed = r->ustack.needed;
	if (sp)
		wp_ucache_insert(r->ucache, key, s->stack, s->stack_dyn_size, r->ustack.read_off,
				 r->ustack.nr_reads, &st);
flags:
	if (st.truncated)
		out->flags |= WP_SSTACK_TRUNCATED;
	if (st.unreadable)
		out->flags |= WP_SSTACK_UNREADABLE;
	if (st.too_deep)
		out->flags |= WP_SSTACK_TOO_DEEP;
	out->needed = st.truncated ? st.needed : 0;
}

/*
 * Whether the sample's user state is of a program whose mappings the
 * recording does not hold: that of a process none are known of (a
 * launched command before its exec, still in the copy of wallprof that
 * launched it; a process whose maps were never seen), or that of a
 * process within execve, whose registers stay the old program's while
 * the new one is mapped (from the exec until a user IP falls in the new
 * maps: execve has returned).  Nothing can unwind or name it.
 */
static bool user_state_unknown(struct wp_resolver *r, struct wp_process *proc,
			       const struct perf_event_header *rec, const struct wp_sample *s)
{
	uint64_t ip;

	if (!proc || !proc->nr_maps)
		return true;
	if (!proc->in_exec)
		return false;
	if (!wp_sample_in_kernel(rec) && (r->fmt.sample_type & PERF_SAMPLE_IP))
		ip = s->ip;
	else if (!r->unwinder || !wp_unwind_user_ip(r->unwinder, &r->fmt, s, &ip))
		return false;
	if (!wp_process_find_map(proc, ip))
		return true;
	proc->in_exec = false;
	return false;
}

void wp_resolver_sample(struct wp_resolver *r, const struct perf_event_header *rec,
			const struct wp_sample *s, bool user, struct wp_sample_stack *out)
{
	/* Not made when unknown: an empty process names nothing either. */
	struct wp_process *proc = wp_procmap_find(r->pm, s->pid);
	struct wp_callchain_walk walk;
	bool kernel, first_user = true;
	uint64_t ip;

	out->flags = 0;
	out->needed = 0;
	out->nr_chain = out->nr_user = 0;
	out->ip = WP_NO_PLACE;
	if (proc && (r->fmt.sample_type & PERF_SAMPLE_TIME))
		wp_procmap_seen(r->pm, proc, s->time);
	if (user_state_unknown(r, proc, rec, s))
		user = false;
	/* The sampled address stands for the stack when nothing else does. */
	if ((r->fmt.sample_type & PERF_SAMPLE_IP) && s->ip) {
		if (wp_sample_in_kernel(rec))
			out->ip = kernel_place(r, s->ip);
		else if (user)
			out->ip = user_place(r, proc, s->ip, true);
	}
	wp_callchain_walk_init(&walk, rec, s);
	while (out->nr_chain < WP_SSTACK_CHAIN && wp_callchain_walk_next(&walk, &ip, &kernel)) {
		if (kernel) {
			out->chain[out->nr_chain++] = kernel_place(r, ip);
		} else if (user) {
			out->chain[out->nr_chain++] = user_place(r, proc, ip, first_user);
			first_user = false;
		}
	}
	if (r->foreign[0] && user && s->regs_abi != 0 && s->stack_dyn_size) {
		warn_foreign(r->foreign);	/* the first that needed unwinding */
		r->foreign[0] = '\0';
	}
	if (!r->unwinder || !user || s->regs_abi == 0)
		return;	/* no DWARF stacks, or a kernel thread: no user stack */
	/* Zeroed by record (another program's waker): nothing to unwind. */
	if (!s->stack_dyn_size && (!wp_unwind_user_ip(r->unwinder, &r->fmt, s, &ip) || !ip))
		return;
	unwind_user(r, proc, s, out);
}

void wp_resolver_free(struct wp_resolver *r)
{
	if (!r)
		return;
	wp_ucache_free(r->ucache);
	wp_unwinder_free(r->unwinder);
	wp_stacks_free(r->places);
	free(r);
}
