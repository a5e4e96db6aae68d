// SPDX-License-Identifier: GPL-2.0-or-later
/* symtab.c: a module's symbols sorted by address (see symtab.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <gelf.h>

#include "symtab.h"
#include "util.h"

struct sym_entry {
	uint64_t start, size;
	const char *name;
	uint32_t index;		/* in libdwfl's order: among equals, the first wins */
	uint8_t rank;		/* global 3, weak 2, local 1: the higher wins, as in libdwfl */
};

struct wp_symtab {
	struct sym_entry *e;
	size_t n;
};

/* Looked back over at most this many entries for an overlapping symbol. */
#define OVERLAP_LOOK 16

static int by_start(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int wp_symtab_read(Dwfl_Module *mod, struct wp_symtab **out)
{
	int nsyms = dwfl_module_getsymtab(mod);
	struct wp_symtab *t;

	*out = NULL;
	if (nsyms <= 1)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->e = malloc((size_t)nsyms * sizeof(*t->e)))) {
		free(t);
		return -ENOMEM;
	}
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		uint8_t rank = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : bind == STB_LOCAL;

		/* What libdwfl's search skips. */
		if (!name || !*name || shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		t->e[t->n++] = (struct sym_entry){ .start = addr, .size = sym.st_size, .name = name,
						   .index = (uint32_t)i, .rank = rank };
	}
	if (!t->n) {
		wp_symtab_free(t);
		return 0;
	}
	qsort(t->e, t->n, sizeof(*t->e), by_start);
	*out = t;
	return 0;
}

static bool covers(const struct sym_entry *e, uint64_t addr)
{
	return e->size && addr >= e->start && addr - e->start < e->size;
}

const char *wp_symtab_find(const struct wp_symtab *t, uint64_t addr, uint64_t *start,
			   uint64_t *size)
{
	const struct sym_entry *best = NULL;
	size_t lo, group;

	if (!t)
		return NULL;
	/* The entries before lo start at or below addr. */
	lo = wp_count_at_or_below(t->e, t->n, sizeof(*t->e), offsetof(struct sym_entry, start), addr);
	if (!lo)
		return NULL;
	/* The nearest start at or below addr, all its symbols. */
	group = lo - 1;
	while (group > 0 && t->e[group - 1].start == t->e[lo - 1].start)
		group--;
	for (size_t i = group; i < lo; i++)
		if (covers(&t->e[i], addr) && (!best || t->e[i].rank > best->rank))
			best = &t->e[i];
	if (!best)
		return NULL;
	/*
	 * libdwfl takes a symbol of a higher binding around it over the
	 * nearest (symbols that overlap, which few files have): let it.
	 */
	for (size_t i = group, k = 0; i > 0 && k < OVERLAP_LOOK; i--, k++)
		if (t->e[i - 1].rank > best->rank && covers(&t->e[i - 1], addr))
			return NULL;
	*start = best->start;
	*size = best->size;
	return best->name;
}

void wp_symtab_free(struct wp_symtab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t);
}
