/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plt.c: PLT stubs named by the relocation of the GOT slot they jump through. */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plt.h"
#include "util.h"

/* x86_64 dynamic relocations that fill a slot a stub jumps through. */
#define R_GLOB_DAT 6
#define R_JUMP_SLOT 7
#define R_IRELATIVE 37

/* A GOT slot and the name of what it holds (an offset in names). */
struct slot {
	uint64_t got;
	size_t name;
};

struct stub {
	uint64_t start;
	uint64_t size;
	size_t name;
};

struct wp_plt {
	struct stub *stubs;
	size_t nr_stubs, cap_stubs;
	char *names;		/* NUL-terminated names, one after the other */
	size_t names_len, cap_names;
};

/* Keep "<text>@plt" in p->names: its offset, or -ENOMEM. */
static int add_name(struct wp_plt *p, const char *text, size_t *at)
{
	size_t len = strlen(text) + sizeof("@plt");

	if (WP_GROW(p->names, p->cap_names, p->names_len + len))
		return -ENOMEM;
	*at = p->names_len;
	snprintf(p->names + p->names_len, len, "%s@plt", text);
	p->names_len += len;
	return 0;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

static int stub_cmp(const void *a, const void *b)
{
	const struct stub *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The name of what a relocation puts in a stub's slot, or NULL for another relocation. */
static const char *reloc_name(Elf *elf, GElf_Shdr *symsh, Elf_Data *syms, uint64_t info,
			      int64_t addend, char *buf, size_t size)
{
	uint64_t type = GELF_R_TYPE(info), idx = GELF_R_SYM(info);
	GElf_Sym sym;
	const char *name;

	if (type != R_JUMP_SLOT && type != R_GLOB_DAT && type != R_IRELATIVE)
		return NULL;
	if (!idx) {
		/* An ifunc of the file itself: named by its resolver's address. */
		if (type != R_IRELATIVE)
			return NULL;
		snprintf(buf, size, "*ABS*+0x%" PRIx64, (uint64_t)addend);
		return buf;
	}
	if (!syms || !gelf_getsym(syms, (int)idx, &sym))
		return NULL;
	name = elf_strptr(elf, symsh->sh_link, sym.st_name);
	return name && *name ? name : NULL;
}

/* The slots filled by the dynamic relocations of section scn, added to *slots. */
static int read_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct wp_plt *p,
		      struct slot **slots, size_t *nr, size_t *cap)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *data = elf_getdata(scn, NULL), *syms = NULL;
	GElf_Shdr symsh;
	size_t count;
	char buf[64];

	if (!data || !sh->sh_entsize || !symscn || !gelf_getshdr(symscn, &symsh))
		return 0;
	syms = elf_getdata(symscn, NULL);
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		const char *name;
		uint64_t off, info;
		int64_t addend = 0;

		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
			addend = r.r_addend;
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			off = r.r_offset;
			info = r.r_info;
		}
		name = reloc_name(elf, &symsh, syms, info, addend, buf, sizeof(buf));
		if (!name)
			continue;
		if (WP_GROW(*slots, *cap, *nr + 1) || add_name(p, name, &(*slots)[*nr].name))
			return -ENOMEM;
		(*slots)[(*nr)++].got = off;
	}
	return 0;
}

/*
 * The GOT slot that the stub at addr (its bytes b[0..len)) jumps through:
 * jmp *disp32(%rip), alone, after a bnd prefix, after endbr64, or both.
 */
static bool stub_slot(const uint8_t *b, size_t len, uint64_t addr, uint64_t *got)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t at = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(b, endbr64, sizeof(endbr64)))
		at = sizeof(endbr64);
	if (at < len && b[at] == 0xf2)
		at++;
	if (at + 6 > len || b[at] != 0xff || b[at + 1] != 0x25)
		return false;
	memcpy(&disp, b + at + 2, sizeof(disp));
	*got = addr + at + 6 + (uint64_t)(int64_t)disp;
	return true;
}

static bool plt_section(const char *name)
{
	return !strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got") ||
	       !strcmp(name, ".plt.bnd");
}

/* The stubs of a PLT section whose slots are in slots[nr] (sorted). */
static int read_stubs(Elf_Scn *scn, const GElf_Shdr *sh, struct wp_plt *p,
		      const struct slot *slots, size_t nr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	uint64_t step = sh->sh_entsize;

	if (!data || !data->d_buf || data->d_size < sh->sh_size)
		return 0;
	/* Stubs are 16 bytes (8 in a .plt.got without IBT), as the section says. */
	if (step < 8 || step > 64 || sh->sh_size % step)
		step = 16;
	for (uint64_t off = 0; off + step <= sh->sh_size; off += step) {
		struct slot key, *hit;

		if (!stub_slot((const uint8_t *)data->d_buf + off, step, sh->sh_addr + off,
			       &key.got))
			continue;
		hit = bsearch(&key, slots, nr, sizeof(*slots), slot_cmp);
		if (!hit)
			continue;
		if (WP_GROW(p->stubs, p->cap_stubs, p->nr_stubs + 1))
			return -ENOMEM;
		p->stubs[p->nr_stubs++] = (struct stub){
			.start = sh->sh_addr + off, .size = step, .name = hit->name
		};
	}
	return 0;
}

int wp_plt_read(Elf *elf, struct wp_plt **out)
{
	struct wp_plt *p = NULL;
	struct slot *slots = NULL;
	size_t nr = 0, cap = 0, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int err = 0;

	*out = NULL;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	while (!err && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
		    (sh.sh_flags & SHF_ALLOC))
			err = read_slots(elf, scn, &sh, p, &slots, &nr, &cap);
	if (err || !nr)
		goto out;
	qsort(slots, nr, sizeof(*slots), slot_cmp);
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && plt_section(name))
			err = read_stubs(scn, &sh, p, slots, nr);
	}
	if (!err && p->nr_stubs) {
		qsort(p->stubs, p->nr_stubs, sizeof(*p->stubs), stub_cmp);
		*out = p;
		p = NULL;
	}
out:
	free(slots);
	wp_plt_free(p);
	return err;
}

const char *wp_plt_name(const struct wp_plt *plt, uint64_t addr, uint64_t *entry)
{
	/* The last stub that starts at or below addr. */
	size_t lo = plt ? wp_count_at_or_below(plt->stubs, plt->nr_stubs, sizeof(*plt->stubs),
					       offsetof(struct stub, start), addr) : 0;

	if (!lo || addr - plt->stubs[lo - 1].start >= plt->stubs[lo - 1].size)
		return NULL;
	if (entry)
		*entry = plt->stubs[lo - 1].start;
	return plt->names + plt->stubs[lo - 1].name;
}

size_t wp_plt_count(const struct wp_plt *plt)
{
	return plt ? plt->nr_stubs : 0;
}

void wp_plt_free(struct wp_plt *plt)
{
	if (!plt)
		return;
	free(plt->stubs);
	free(plt->names);
	free(plt);
}
