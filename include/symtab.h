/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symtab.h: a module's symbols sorted by address, for naming in log time.
 *
 * libdwfl's dwfl_module_addrinfo reads every symbol of the module for
 * each address it names: naming the 2,400 places of a PostgreSQL
 * recording spent half its time there.  This table reads them once
 * (dwfl_module_getsym_info: the symbol table, or the dynamic one, and a
 * separate debug file's or MiniDebugInfo's) and finds an address's
 * symbol by binary search, with libdwfl's preferences: the nearest
 * symbol at or below the address whose size covers it, a global one over
 * a weak one over a local one at the same address, the first in the
 * table among equals.  Where that is not certain to be libdwfl's answer
 * (no sized symbol covers the address, or one of a higher binding
 * overlaps it), it gives none, and the caller asks libdwfl.  The names are the module's: the table lives no longer than
 * it.  Owns its entries.
 */
#ifndef WALLPROF_SYMTAB_H
#define WALLPROF_SYMTAB_H

#include <stdint.h>
#include <elfutils/libdwfl.h>

struct wp_symtab;

/* The symbols of mod, read now: 0 with *out (NULL when it has none), or -ENOMEM. */
int wp_symtab_read(Dwfl_Module *mod, struct wp_symtab **out);

/*
 * The symbol covering module address addr: its name, with its start
 * and size, or NULL (ask libdwfl).  t may be NULL.
 */
const char *wp_symtab_find(const struct wp_symtab *t, uint64_t addr, uint64_t *start,
			   uint64_t *size);

/* NULL is fine. */
void wp_symtab_free(struct wp_symtab *t);

#endif
