/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-plt.c: PLT stubs' names (src/plt.c) against binutils'.  For real
 * binaries (sort, libc.so.6, and the plt workload built PIE, non-PIE,
 * BIND_NOW and with IBT's .plt.sec), objdump -d labels each stub
 * <name@plt>: every byte of every such stub gets exactly that name, and
 * the lazy resolver's first entry of .plt gets none.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plt.h"
#include "tap.h"

#define MAX_STUBS 4096

struct label {
	uint64_t addr, end;	/* its instructions' bytes */
	char name[256];
	int section;		/* which "Disassembly of section" it is in */
};

static struct label labels[MAX_STUBS];

/* objdump's labels in the PLT sections of path: their number, or -1. */
static int objdump_labels(const char *path)
{
	char cmd[1024], line[1024];
	int n = 0, section = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got -j .plt.bnd "
		 "'%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		char name[256];

		if (!strncmp(line, "Disassembly of section", 22)) {
			section++;
		} else if (n < MAX_STUBS &&
			   sscanf(line, "%" SCNx64 " <%255[^>]>:", &addr, name) == 2) {
			labels[n] = (struct label){ .addr = addr, .end = addr, .section = section };
			snprintf(labels[n++].name, sizeof(labels[0].name), "%s", name);
		} else if (n && sscanf(line, " %" SCNx64 ":", &addr) == 1 && strchr(line, '\t')) {
			/* "    3750:\tff 25 72 88 01 00 \tjmp ...": its bytes end the label's so far. */
			const char *hex = strchr(line, '\t') + 1;
			uint64_t bytes = 0;

			for (size_t k = 0, len = strcspn(hex, "\t\n"); k < len; k++)
				bytes += hex[k] != ' ' && (k == 0 || hex[k - 1] == ' ');

			if (addr + bytes > labels[n - 1].end)
				labels[n - 1].end = addr + bytes;
		}
	}
	return pclose(f) == 0 ? n : -1;
}

/* Whether name is one objdump gives a stub (not "x@plt-0x10" or ".plt"). */
static int is_stub(const char *name)
{
	size_t len = strlen(name);

	return len > 4 && !strcmp(name + len - 4, "@plt");
}

static void check_file(const char *path, int want_stubs)
{
	struct wp_plt *plt = NULL;
	int fd, n, stubs = 0, wrong = 0, extra = 0;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!ok(fd >= 0, "%s opens", path))
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	is_int(wp_plt_read(elf, &plt), 0, "%s: its PLT is read", path);
	n = objdump_labels(path);
	ok(n > 0, "%s: objdump -d shows its PLT (%d labels)", path, n);
	for (int i = 0; i < n; i++) {
		const struct label *l = &labels[i];

		for (uint64_t a = l->addr; a < l->end; a++) {
			uint64_t entry = 0;
			const char *got = wp_plt_name(plt, a, &entry);

			if (!is_stub(l->name)) {
				if (got && extra++ < 3)
					diag("%s: 0x%" PRIx64 " (in <%s>) named %s", path, a, l->name,
					     got);
				continue;
			}
			if (!got || strcmp(got, l->name) || entry != l->addr) {
				if (wrong++ < 3)
					diag("%s: 0x%" PRIx64 " named %s at 0x%" PRIx64 ", objdump: %s",
					     path, a, got ? got : "(nothing)", entry, l->name);
			}
		}
		stubs += is_stub(l->name);
	}
	ok(stubs >= want_stubs, "%s: %d stubs (at least %d)", path, stubs, want_stubs);
	is_int((int)wp_plt_count(plt), stubs, "%s: as many stubs named as objdump names", path);
	is_int(wrong, 0, "%s: every byte of each stub named as objdump names it", path);
	is_int(extra, 0, "%s: no name elsewhere in the PLT", path);
	wp_plt_free(plt);
	elf_end(elf);
	close(fd);
}

/* The path of the libc.so.6 this test runs with. */
static int libc_path(char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, size, "%s", p);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

int main(void)
{
	static const char *const builds[] = { "plt", "plt-nopie", "plt-now", "plt-ibt" };
	const char *wl = getenv("WORKLOADS");
	struct wp_plt *none = NULL;
	char path[4096];

	elf_version(EV_CURRENT);
	if (system("objdump --version >/dev/null 2>&1")) {
		printf("1..0 # SKIP no objdump (binutils)\n");
		return 0;
	}
	is_int(wp_plt_read(NULL, &none), 0, "no file: read");
	ok(!none, "no file: no PLT");
	check_file("/usr/bin/sort", 10);
	if (ok(libc_path(path, sizeof(path)), "libc.so.6 is mapped"))
		check_file(path, 10);
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", wl ? wl : "tests/workloads", builds[i]);
		/* strtod, clock_gettime, strnlen, strlen and strchr at least. */
		check_file(path, 5);
	}
	return done_testing();
}
