/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kallsyms.c: kernel text symbols from /proc/kallsyms or a saved copy. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "priv.h"
#include "util.h"

static int ksym_cmp(const void *a, const void *b)
{
	const struct wp_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Append one symbol; name is len bytes, not NUL-terminated. */
static int kallsyms_add(struct wp_kallsyms *k, size_t *cap, size_t *names_cap,
			uint64_t addr, const char *name, size_t len)
{
	if (WP_GROW(k->syms, *cap, k->nr + 1) ||
	    WP_GROW(k->names, *names_cap, k->names_len + len + 1))
		return -ENOMEM;
	memcpy(k->names + k->names_len, name, len);
	k->names[k->names_len + len] = '\0';
	k->syms[k->nr].addr = addr;
	k->syms[k->nr].name_off = (uint32_t)k->names_len;
	k->nr++;
	k->names_len += len + 1;
	return 0;
}

int wp_kallsyms_load(struct wp_kallsyms *k)
{
	size_t cap = 0, names_cap = 0;
	bool nonzero = false;
	char line[512];
	int err = 0;
	FILE *f;

	memset(k, 0, sizeof(*k));
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char *name, type;

		addr = strtoull(line, &name, 16);
		/* "addr type name [module]" */
		if (name[0] != ' ' || !name[1] || name[2] != ' ')
			continue;
		type = name[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name += 3;
		err = kallsyms_add(k, &cap, &names_cap, addr, name, strcspn(name, " \t\n"));
		nonzero |= addr != 0;
	}
	fclose(f);
	if (!err && !nonzero)
		err = -EPERM;	/* every address reads as 0: wp_kallsyms_warn_hidden() */
	if (err) {
		wp_kallsyms_release(k);
		return err;
	}
	qsort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
	return 0;
}

uint64_t wp_kallsyms_modules_key(void)
{
	uint64_t key = 0xcbf29ce484222325ULL;	/* FNV-1a */
	char line[1024];
	FILE *f = fopen("/proc/modules", "re");

	if (!f)
		return 0;
	/* "name size refcount deps state address": what moves symbols is name and address. */
	while (fgets(line, sizeof(line), f)) {
		const char *addr = strrchr(line, ' ');
		size_t name_len = strcspn(line, " ");

		for (size_t i = 0; i < name_len; i++)
			key = (key ^ (uint8_t)line[i]) * 0x100000001b3ULL;
		for (; addr && *addr && *addr != '\n'; addr++)
			key = (key ^ (uint8_t)*addr) * 0x100000001b3ULL;
		key = (key ^ '\n') * 0x100000001b3ULL;
	}
	fclose(f);
	return key;
}

void wp_kallsyms_warn_hidden(const char *what)
{
	struct wp_priv p;

	/* The same capabilities and sysctls the kernel judged at open. */
	wp_priv_read(&p);
	wp_priv_warn_kallsyms_hidden(&p, what);
}

int wp_kallsyms_parse(struct wp_kallsyms *k, const char *text, size_t len)
{
	size_t cap = 0, names_cap = 0;
	const char *p = text, *end = text + len;
	int err = 0;

	memset(k, 0, sizeof(*k));
	while (!err && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long long addr;
		char *name;

		if (!nl)
			nl = end;
		/*
		 * Only a line that starts with a digit is read: strtoull skips
		 * leading white space, newlines too, which would make every
		 * line of a block of blank lines a scan to its end.
		 */
		if (isxdigit((unsigned char)*p)) {
			addr = strtoull(p, &name, 16);
			if (name < nl && *name == ' ')
				err = kallsyms_add(k, &cap, &names_cap, addr, name + 1,
						   (size_t)(nl - name - 1));
		}
		p = nl + 1;
	}
	if (err) {
		wp_kallsyms_release(k);
		return err;
	}
	if (k->nr)
		qsort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
	return 0;
}

long wp_kallsyms_find(const struct wp_kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

void wp_kallsyms_release(struct wp_kallsyms *k)
{
	free(k->syms);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
