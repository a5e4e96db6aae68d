/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-symtab.c: the sorted symbol table names every address as libdwfl's
 * own search does, in this program and in the C library (whose functions
 * have global, weak and local aliases at one address), wherever it
 * answers at all, and it answers for nearly every function.
 */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "symtab.h"
#include "tap.h"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static char libc_path[4096];

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (strstr(info->dlpi_name, "/libc.so")) {
		snprintf(libc_path, sizeof(libc_path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Every function's first, middle and last byte, and a byte past it, both ways. */
static void check_file(const char *what, const char *path)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct wp_symtab *t = NULL;
	unsigned long asked = 0, answered = 0, differ = 0;
	Dwfl_Module *mod;
	int fd, n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ok(dwfl && fd >= 0, "%s: %s opened", what, path)) {
		if (fd >= 0)
			close(fd);
		dwfl_end(dwfl);
		return;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "m", path, fd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!ok(mod != NULL, "%s: reported to libdwfl", what)) {
		dwfl_end(dwfl);
		return;
	}
	is_int(wp_symtab_read(mod, &t), 0, "%s: its symbols read", what);
	ok(t != NULL, "%s: it has some", what);
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr start;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &start, NULL, NULL, NULL);
		uint64_t at[4] = { start, start + sym.st_size / 2, start + sym.st_size - 1,
				   start + sym.st_size };

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		for (int k = 0; k < 4; k++) {
			uint64_t s0 = 0, size = 0;
			GElf_Off off;
			GElf_Sym want;
			const char *got = wp_symtab_find(t, at[k], &s0, &size);
			const char *w = dwfl_module_addrinfo(mod, at[k], &off, &want, NULL, NULL, NULL);

			asked++;
			if (!got)
				continue;
			answered++;
			if (!w || strcmp(got, w) || s0 != at[k] - off || size != want.st_size) {
				if (differ++ < 5)
					diag("%s: %#llx: %s+%#llx (size %llu), libdwfl %s+%#llx (size %llu)",
					     what, (unsigned long long)at[k], got,
					     (unsigned long long)(at[k] - s0), (unsigned long long)size,
					     w ? w : "(none)", (unsigned long long)off,
					     (unsigned long long)want.st_size);
			}
		}
	}
	is_int((int)differ, 0, "%s: every answer is libdwfl's (%lu of %lu addresses answered)",
	       what, answered, asked);
	ok(asked && answered * 10 >= asked * 7, "%s: most addresses answered (%lu of %lu)", what,
	   answered, asked);
	ok(!wp_symtab_find(NULL, 0x1000, &(uint64_t){ 0 }, &(uint64_t){ 0 }), "%s: no table, no name",
	   what);
	wp_symtab_free(t);
	dwfl_end(dwfl);
}

int main(void)
{
	elf_version(EV_CURRENT);
	check_file("this program", "/proc/self/exe");
	dl_iterate_phdr(find_libc, NULL);
	if (libc_path[0])
		check_file("the C library", libc_path);
	else
		skip("no libc.so mapped here");
	return done_testing();
}
