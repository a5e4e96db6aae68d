/* SPDX-License-Identifier: GPL-2.0-or-later */
/* debuginfo.c: a module's separate debug file, by build id or debuglink, regular files only. */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>

#include "buildid.h"
#include "debuginfod.h"
#include "debuginfo.h"
#include "fdlimit.h"
#include "util.h"

#define MAX_ID 64

/* What a candidate must be to be taken. */
struct want {
	const unsigned char *id;	/* its build id, when not NULL */
	size_t id_len;
	bool check_crc;			/* else its CRC, when asked */
	uint32_t crc;
	dev_t self_dev;			/* never the module's own file */
	ino_t self_ino;
};

/* The CRC-32 (zlib's) of a whole file, which .gnu_debuglink carries. */
static int file_crc32(int fd, uint32_t *out)
{
	uint32_t table[256], crc = 0xffffffff;
	unsigned char buf[65536];
	off_t off = 0;
	ssize_t n;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320 ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		off += n;
	}
	*out = crc ^ 0xffffffff;
	return 0;
}

/* Open path if it is a regular file that w accepts: its descriptor, or -1. */
static int try_file(const char *path, const struct want *w, char **name)
{
	uint8_t id[MAX_ID];
	struct stat st;
	uint32_t crc;
	int fd, n;

	fd = wp_open_regular(path, &st);
	/* No descriptor left: make room, else the names are lost, and said to be. */
	if (wp_fd_exhausted(fd) && wp_fd_reclaim())
		fd = wp_open_regular(path, &st);
	if (wp_fd_exhausted(fd))
		wp_fd_note_starved();
	if (fd < 0)
		return -1;
	if (st.st_dev == w->self_dev && st.st_ino == w->self_ino)
		goto no;
	if (w->id) {
		n = wp_build_id_read_fd(fd, id, sizeof(id));
		if (n <= 0 || (size_t)n != w->id_len || memcmp(id, w->id, w->id_len))
			goto no;
	} else if (w->check_crc && (file_crc32(fd, &crc) || crc != w->crc)) {
		goto no;
	}
	*name = strdup(path);
	if (!*name)
		goto no;
	return fd;
no:
	close(fd);
	return -1;
}

/* Try the path that fmt makes, unless it is too long. */
static int try_path(const struct want *w, char **name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int try_path(const struct want *w, char **name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_file(path, w, name);
}

void wp_debuginfo_build_id_path(const uint8_t *id, size_t len, char *buf, size_t size)
{
	char hex[2 * MAX_ID + 1];
	int n;

	if (!size)
		return;
	buf[0] = '\0';
	if (len < 2 || len > MAX_ID)
		return;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(buf, size, WP_DEBUGINFO_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
}

/* WP_DEBUGINFO_DIR/.build-id/xx/rest.debug */
static int by_build_id(const struct want *w, char **name)
{
	char path[PATH_MAX];

	wp_debuginfo_build_id_path(w->id, w->id_len, path, sizeof(path));
	return path[0] ? try_file(path, w, name) : -1;
}

/* link beside file, in a .debug directory there, and under WP_DEBUGINFO_DIR. */
static int by_link(const char *file, const char *link, const struct want *w, char **name)
{
	const char *slash = strrchr(file, '/');
	int d = slash ? (int)(slash - file) : 1, fd;

	if (!slash)
		file = ".";
	fd = try_path(w, name, "%.*s/%s", d, file, link);
	if (fd < 0)
		fd = try_path(w, name, "%.*s/.debug/%s", d, file, link);
	if (fd < 0 && file[0] == '/')
		fd = try_path(w, name, WP_DEBUGINFO_DIR "%.*s/%s", d, file, link);
	return fd;
}

/*
 * The debug file (or dwz file) with w's build id from debuginfod, when
 * DEBUGINFOD_URLS names servers: taken like a local candidate, from the
 * client's cache.  file is what it is for.
 */
static int by_debuginfod(const char *file, const struct want *w, char **name)
{
	char *path = NULL;
	int fd;

	if (!w->id)
		return -1;
	fd = wp_debuginfod_find(WP_DEBUGINFOD_DEBUGINFO, w->id, w->id_len, file, &path);
	if (fd < 0)
		return -1;
	close(fd);
	fd = try_file(path, w, name);
	free(path);
	return fd;
}

/*
 * The name and build id that the .gnu_debugaltlink section of file gives
 * (a dwz file shared by several debug files), in name[size] and id[MAX_ID].
 * Returns the id's length, or -1.
 */
static int read_altlink(const char *file, char *name, size_t size, uint8_t *id)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	struct stat st;
	int fd, ret = -1;
	Elf *elf;

	fd = wp_open_regular(file, &st);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname, *p, *nul;
		Elf_Data *data;
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".gnu_debugaltlink"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			break;
		/* The name, NUL-terminated, then the build id. */
		p = data->d_buf;
		nul = memchr(p, '\0', data->d_size);
		if (!nul || (size_t)(nul - p) >= size)
			break;
		n = data->d_size - (size_t)(nul + 1 - p);
		if (n < 2 || n > MAX_ID)
			break;
		memcpy(name, p, (size_t)(nul - p) + 1);
		memcpy(id, nul + 1, n);
		ret = (int)n;
		break;
	}
out:
	elf_end(elf);
	close(fd);
	return ret;
}

/*
 * The dwz file that the debug information in file links to: by build id,
 * then by its name (as given when absolute, else beside file) and by its
 * base name in the .dwz directories beside file and under WP_DEBUGINFO_DIR.
 */
static int find_alt(const char *file, char **name)
{
	char alt[PATH_MAX];
	uint8_t id[MAX_ID];
	struct want w = { .id = id };
	const char *slash = strrchr(file, '/'), *base;
	int n, d = slash ? (int)(slash - file) : 1, fd;

	n = read_altlink(file, alt, sizeof(alt), id);
	if (n < 0)
		return -1;
	w.id_len = (size_t)n;
	if (!slash)
		file = ".";
	base = strrchr(alt, '/') ? strrchr(alt, '/') + 1 : alt;
	fd = by_build_id(&w, name);
	if (fd < 0)
		fd = alt[0] == '/' ? try_file(alt, &w, name) :
				     try_path(&w, name, "%.*s/%s", d, file, alt);
	if (fd < 0)
		fd = try_path(&w, name, "%.*s/.dwz/%s", d, file, base);
	if (fd < 0)
		fd = try_path(&w, name, WP_DEBUGINFO_DIR "/.dwz/%s", base);
	if (fd < 0)
		fd = by_debuginfod(alt, &w, name);
	return fd;
}

void wp_debuginfo_set_use(Dwfl_Module *mod, enum wp_debug_use use)
{
	void **userdata = NULL;

	/* 0 stays "not said": the use is stored plus one. */
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = (void *)(uintptr_t)(use + 1);
}

/*
 * The debug file open at fd as the module's use wants it read: fd itself,
 * or its image (fd is then closed), or -1 (fd closed, *name freed) when
 * the use needs nothing that it holds.
 */
static int for_use(void *userdata, int fd, char **name)
{
	uintptr_t said = (uintptr_t)userdata;
	enum wp_debug_use use;
	int img, err;

	if (fd < 0 || !said)
		return fd;
	use = (enum wp_debug_use)(said - 1);
	err = wp_debug_image(fd, use, &img);
	if (!err) {
		close(fd);
		return img;
	}
	if (err == -ENOENT && use == WP_DEBUG_CFI) {
		close(fd);
		free(*name);
		*name = NULL;
		return -1;
	}
	/* Nothing to gain, or nothing this can rewrite: libdw reads it as it is. */
	return fd;
}

/*
 * The debug file of the file at file_name, whose build id is id (id_len
 * 0: none) and whose .gnu_debuglink gives debuglink and crc (or NULL):
 * an open descriptor with *name set, or -1.
 */
static int search(const char *file_name, const unsigned char *id, size_t id_len,
		  const char *debuglink, uint32_t crc, char **name)
{
	char link[NAME_MAX + 8], *real;
	struct want w = { 0 };
	struct stat st;
	int fd = -1;

	if (!stat(file_name, &st)) {
		w.self_dev = st.st_dev;
		w.self_ino = st.st_ino;
	}
	if (id_len) {
		/* A build id settles it; the debuglink's CRC is not looked at. */
		w.id = id;
		w.id_len = id_len;
		fd = by_build_id(&w, name);
	} else if (debuglink && crc) {
		w.check_crc = true;
		w.crc = crc;
	}
	if (fd >= 0)
		return fd;
	if (debuglink) {
		if (snprintf(link, sizeof(link), "%s", debuglink) >= (int)sizeof(link))
			return -1;
	} else {
		const char *slash = strrchr(file_name, '/');

		if (snprintf(link, sizeof(link), "%s.debug", slash ? slash + 1 : file_name) >=
		    (int)sizeof(link))
			return -1;
	}
	fd = by_link(file_name, link, &w, name);
	if (fd >= 0)
		return fd;
	/* The debug file may sit by the target of a symbolic link. */
	real = realpath(file_name, NULL);
	if (real && strcmp(real, file_name))
		fd = by_link(real, link, &w, name);
	free(real);
	/* Nothing here: a debuginfod server may have it, by build id. */
	if (fd < 0)
		fd = by_debuginfod(file_name, &w, name);
	return fd;
}

int wp_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
		      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits = NULL;
	const char *main_link = NULL;
	GElf_Word main_crc = 0;
	Dwarf_Addr bias;
	GElf_Addr vaddr;
	int n;
	Elf *elf;

	(void)modname;
	(void)base;
	if (!file_name)
		return -1;
	/*
	 * libdw asks for the module's debug file with the main file's own
	 * debuglink, and again for a dwz file with the name its DWARF links
	 * to: anything else is the second question.
	 */
	elf = dwfl_module_getelf(mod, &bias);
	if (elf)
		main_link = dwelf_elf_gnu_debuglink(elf, &main_crc);
	if (debuglink_file && (!main_link || strcmp(main_link, debuglink_file) ||
			       main_crc != debuglink_crc))
		return for_use(*userdata, find_alt(file_name, debuginfo_file_name),
			       debuginfo_file_name);
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	return for_use(*userdata, search(file_name, bits, n > 0 ? (size_t)n : 0, debuglink_file,
					 debuglink_crc, debuginfo_file_name),
		       debuginfo_file_name);
}

/* Size and modification time of the file open at fd (closed), or zeros. */
static void identify(int fd, char *name, uint64_t *size, uint64_t *mtime_ns)
{
	struct stat st;

	*size = *mtime_ns = 0;
	if (fd >= 0 && !fstat(fd, &st)) {
		*size = (uint64_t)st.st_size;
		*mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
	}
	if (fd >= 0)
		close(fd);
	free(name);
}

void wp_debuginfo_origin(int fd, const char *path, const uint8_t *id, size_t id_len,
			 uint64_t size[2], uint64_t mtime_ns[2])
{
	char *debug = NULL, *alt = NULL, *link = NULL;
	GElf_Word crc = 0;
	int dfd, afd;
	Elf *elf;

	elf_version(EV_CURRENT);	/* a report without stacks has no unwinder to have said it */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		const char *l = dwelf_elf_gnu_debuglink(elf, &crc);

		link = l ? strdup(l) : NULL;
		elf_end(elf);
	}
	dfd = search(path, id, id_len, link, crc, &debug);
	free(link);
	/* The dwz file that the debug file links to, else the file itself. */
	afd = find_alt(dfd >= 0 ? debug : path, &alt);
	identify(afd, alt, &size[1], &mtime_ns[1]);
	identify(dfd, debug, &size[0], &mtime_ns[0]);
}

uint64_t wp_debuginfo_installed(const char *path, const uint8_t *id, size_t id_len)
{
	char *name = NULL;
	struct stat st;
	uint64_t ns = 0;
	int fd;

	if (id_len < 2)
		return 0;
	fd = search(path, id, id_len, NULL, 0, &name);
	free(name);
	if (fd < 0)
		return 0;
	if (!fstat(fd, &st))
		ns = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL + (uint64_t)st.st_ctim.tv_nsec;
	close(fd);
	return ns ? ns : 1;
}
