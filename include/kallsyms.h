/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kallsyms.h: kernel text symbols, sorted by address.
 *
 * Read from /proc/kallsyms (record saves the ones its stacks use; report
 * falls back to it on the recording's own boot) or parsed from the KSYMS
 * block of a data file ("hexaddr name" lines).  Owns the symbol array and
 * the names.
 */
#ifndef WALLPROF_KALLSYMS_H
#define WALLPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct wp_ksym {
	uint64_t addr;
	uint32_t name_off;	/* into names */
};

struct wp_kallsyms {
	struct wp_ksym *syms;
	size_t nr;
	char *names;		/* NUL-terminated names, back to back */
	size_t names_len;
};

/*
 * Text symbols (t, T, w, W) of the running kernel.  -EPERM when the
 * kernel hides the addresses from this process (all zero: see
 * wp_priv_can_read_kallsyms()), -errno when the file cannot be read.
 */
int wp_kallsyms_load(struct wp_kallsyms *k);

/*
 * A key of the loaded modules (/proc/modules' names and addresses): what
 * wp_kallsyms_load() gives changes only with it, so a reader that keeps
 * the symbols loaded need read them again only then.  0: unreadable.
 */
uint64_t wp_kallsyms_modules_key(void);

/*
 * After wp_kallsyms_load() returned -EPERM: log one warning, starting
 * with what ("kernel frames are shown as addresses"), that names the
 * capability or sysctl that hides the addresses.
 */
void wp_kallsyms_warn_hidden(const char *what);

/* Parse "hexaddr name" lines (the KSYMS block); returns 0 or -ENOMEM. */
int wp_kallsyms_parse(struct wp_kallsyms *k, const char *text, size_t len);

/* Index of the symbol that contains addr (the last one at or below it), or -1. */
long wp_kallsyms_find(const struct wp_kallsyms *k, uint64_t addr);

static inline const char *wp_kallsyms_name(const struct wp_kallsyms *k, size_t i)
{
	return k->names + k->syms[i].name_off;
}

void wp_kallsyms_release(struct wp_kallsyms *k);

#endif
