/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plt.h: names of an ELF file's PLT stubs ("name@plt").
 *
 * A stub has no symbol: a frame in one would show as file+offset.  Each
 * stub of .plt, .plt.sec, .plt.bnd and .plt.got jumps through a GOT slot,
 * and the dynamic relocation of that slot (JUMP_SLOT in .rela.plt,
 * GLOB_DAT in .rela.dyn for .plt.got, IRELATIVE for a local ifunc) names
 * the function, from .dynsym; an IRELATIVE slot has no symbol and is
 * named "*ABS*+0xADDEND@plt", as binutils names it.  Stubs are found by
 * decoding their jump (x86_64: jmp *disp(%rip), after endbr64 and a bnd
 * prefix or not), so lazy binding, BIND_NOW, PIE and not, IBT's .plt.sec
 * and MPX's .plt.bnd are read alike; the first entry of .plt (the lazy
 * resolver's) is left unnamed.  Owns its table and names.
 */
#ifndef WALLPROF_PLT_H
#define WALLPROF_PLT_H

#include <stdint.h>
#include <libelf.h>

struct wp_plt;

/*
 * The stubs of elf (borrowed, read now): 0 with *out set (NULL when the
 * file has no named stubs, or is not x86_64), or -ENOMEM.
 */
int wp_plt_read(Elf *elf, struct wp_plt **out);

/*
 * The name of the stub holding file address addr ("free@plt"), with its
 * first address in *entry, or NULL when addr is in none.  plt may be NULL.
 */
const char *wp_plt_name(const struct wp_plt *plt, uint64_t addr, uint64_t *entry);

/* The number of named stubs. */
size_t wp_plt_count(const struct wp_plt *plt);

/* NULL is fine. */
void wp_plt_free(struct wp_plt *plt);

#endif
