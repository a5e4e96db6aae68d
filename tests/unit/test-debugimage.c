/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-debugimage.c: images of debug files (src/debugimage.c).  The debug
 * file is this test's own DWARF, split off and compressed by objcopy (zlib,
 * and zstd where binutils can), with a made-up .debug_frame added.  Each
 * use's image holds the sections it needs, decompressed and byte for byte
 * the originals, and no other DWARF; libdw reads it; damaged files (bits
 * flipped, cut short, sizes that lie) are refused, never crashed on.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdw.h>

#include "debugimage.h"
#include "tap.h"
#include "util.h"

static char dir[64], self[128], frame[128];
static uint8_t frame_bytes[4096];

static void fail(const char *what)
{
	ok(0, "%s", what);
}

/* The bytes of section name of the ELF file open at fd (malloc'd), or NULL. */
static uint8_t *section(int fd, const char *name, size_t *size, GElf_Shdr *out)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint8_t *copy = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
			continue;
		*out = sh;
		*size = 0;
		if (sh.sh_type == SHT_NOBITS) {
			copy = malloc(1);
			break;
		}
		d = elf_rawdata(scn, NULL);
		if (d && (copy = malloc(d->d_size + 1))) {
			memcpy(copy, d->d_buf, d->d_size);
			*size = d->d_size;
		}
		break;
	}
out:
	elf_end(elf);
	return copy;
}

/* Is section name of image the same bytes as in orig (decompressed, not compressed)? */
static bool same_section(int image, int orig, const char *name)
{
	GElf_Shdr a, b;
	size_t na = 0, nb = 0;
	uint8_t *pa = section(image, name, &na, &a), *pb = section(orig, name, &nb, &b);
	bool same = pa && pb && a.sh_type != SHT_NOBITS && !(a.sh_flags & SHF_COMPRESSED) &&
		    na == nb && !memcmp(pa, pb, na);

	free(pa);
	free(pb);
	return same;
}

/* Is section name left out of image (SHT_NOBITS)? */
static bool left_out(int image, const char *name)
{
	GElf_Shdr sh;
	size_t n;
	uint8_t *p = section(image, name, &n, &sh);
	bool out = p && sh.sh_type == SHT_NOBITS;

	free(p);
	return out;
}

static int open_image(const char *path, enum wp_debug_use use, int *img)
{
	int fd = open(path, O_RDONLY), err;

	if (fd < 0)
		return -errno;
	err = wp_debug_image(fd, use, img);
	close(fd);
	return err;
}

static void test_uses(const char *label, const char *dbg)
{
	int fd = open(self, O_RDONLY), img, ffd = open(frame, O_RDONLY), dfd = open(dbg, O_RDONLY);
	Dwarf *dw;

	is_int(open_image(dbg, WP_DEBUG_NAMES, &img), 0, "%s: an image for names", label);
	ok(same_section(img, fd, ".debug_info") && same_section(img, fd, ".debug_abbrev") &&
	   same_section(img, fd, ".debug_str"),
	   "%s: .debug_info, .debug_abbrev and .debug_str decompressed, as they were", label);
	ok(left_out(img, ".debug_line") && left_out(img, ".debug_frame"),
	   "%s: no line tables, no .debug_frame", label);
	ok(same_section(img, dfd, ".symtab") && same_section(img, dfd, ".strtab"),
	   "%s: the symbol table as it was", label);
	dw = dwarf_begin(img, DWARF_C_READ);
	{
		Dwarf_Off off = 0, next;
		size_t hsize;
		int cus = 0;

		while (dw && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
			Dwarf_Die die;

			cus += dwarf_offdie(dw, off + hsize, &die) != NULL;
			off = next;
		}
		ok(dw && cus > 0, "%s: libdw reads its compile units (%d)", label, cus);
	}
	if (dw)
		dwarf_end(dw);
	close(img);

	is_int(open_image(dbg, WP_DEBUG_LINES, &img), 0, "%s: an image for lines", label);
	ok(same_section(img, fd, ".debug_info") && same_section(img, fd, ".debug_line"),
	   "%s: with .debug_line, as it was", label);
	close(img);

	is_int(open_image(dbg, WP_DEBUG_CFI, &img), 0, "%s: an image for unwinding", label);
	ok(same_section(img, ffd, ".debug_frame"), "%s: .debug_frame, as it was", label);
	ok(left_out(img, ".debug_info") && left_out(img, ".debug_line"),
	   "%s: and no other DWARF", label);
	close(img);
	close(fd);
	close(ffd);
	close(dfd);
}

/* The offset and size of .debug_info's bytes (compressed) in the file at path. */
static bool info_place(const char *path, size_t *off, size_t *size)
{
	int fd = open(path, O_RDONLY);
	GElf_Shdr sh;
	size_t n;
	uint8_t *p = fd >= 0 ? section(fd, ".debug_info", &n, &sh) : NULL;

	free(p);
	if (fd >= 0)
		close(fd);
	*off = sh.sh_offset;
	*size = sh.sh_size;
	return p && (sh.sh_flags & SHF_COMPRESSED) && sh.sh_size > 64;
}

static void test_damage(const char *dbg)
{
	char bad[128];
	uint8_t *file;
	size_t n = 0, off, size;
	int fd = open(dbg, O_RDONLY), img, refused = 0, made = 0, other = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !info_place(dbg, &off, &size)) {
		fail("the zlib debug file has a compressed .debug_info");
		if (fd >= 0)
			close(fd);
		return;
	}
	n = (size_t)st.st_size;
	file = malloc(n);
	if (!file || wp_read_exact(fd, file, n)) {
		fail("read the zlib debug file");
		free(file);
		close(fd);
		return;
	}
	close(fd);
	snprintf(bad, sizeof(bad), "%s/bad.debug", dir);
	/* Bits flipped all over the compressed .debug_info (past its header). */
	for (size_t at = off + 24; at < off + size; at += size / 97 + 1) {
		int wfd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600), err;

		file[at] ^= 0x10;
		if (wfd < 0 || wp_write_all(wfd, file, n))
			other++;
		if (wfd >= 0)
			close(wfd);
		file[at] ^= 0x10;
		err = open_image(bad, WP_DEBUG_NAMES, &img);
		if (!err) {
			made++;
			close(img);
		} else if (err == -EBADMSG) {
			refused++;
		} else {
			other++;
		}
	}
	ok(refused > 0 && other == 0, "bits flipped in compressed DWARF: refused %d times, "
	   "made %d (what zlib's checksum lets through)", refused, made);
	/* The section's decompressed size made huge. */
	{
		Elf64_Chdr ch;
		int wfd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		memcpy(&ch, file + off, sizeof(ch));
		ch.ch_size = 1ULL << 40;
		memcpy(file + off, &ch, sizeof(ch));
		if (wfd < 0 || wp_write_all(wfd, file, n))
			fail("write");
		if (wfd >= 0)
			close(wfd);
		is_int(open_image(bad, WP_DEBUG_NAMES, &img), -EBADMSG,
		       "a decompressed size beyond any is refused");
		ch.ch_size = 64;
		memcpy(file + off, &ch, sizeof(ch));
		wfd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (wfd < 0 || wp_write_all(wfd, file, n))
			fail("write");
		if (wfd >= 0)
			close(wfd);
		is_int(open_image(bad, WP_DEBUG_NAMES, &img), -EBADMSG,
		       "a decompressed size smaller than the data is refused");
	}
	/* Cut short anywhere: an error, never a crash. */
	{
		int dfd = open(dbg, O_RDONLY), errs = 0, images = 0;

		if (dfd < 0 || wp_read_exact(dfd, file, n))
			fail("read the zlib debug file");
		if (dfd >= 0)
			close(dfd);
		for (size_t len = 0; len < n; len += n / 61 + 1) {
			int wfd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600), err;

			if (wfd < 0 || wp_write_all(wfd, file, len))
				other++;
			if (wfd >= 0)
				close(wfd);
			err = open_image(bad, WP_DEBUG_NAMES, &img);
			if (!err) {
				images++;
				close(img);
			} else {
				errs++;
			}
		}
		ok(errs > 0 && other == 0, "files cut short: %d refused, %d images (cut past "
		   "the DWARF)", errs, images);
	}
	free(file);
}

int main(void)
{
	char cmd[512], dbg[128], dbgz[128], plain[128];
	int fd, img;

	elf_version(EV_CURRENT);
	if (system("objcopy --version >/dev/null 2>&1")) {
		plan(1);
		skip("objcopy is not installed (Debian package binutils)");
		return done_testing();
	}
	snprintf(dir, sizeof(dir), "/tmp/wallprof-test-debugimage-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(self, sizeof(self), "%s/self", dir);
	snprintf(frame, sizeof(frame), "%s/frame.o", dir);
	snprintf(dbg, sizeof(dbg), "%s/zlib.debug", dir);
	snprintf(dbgz, sizeof(dbgz), "%s/zstd.debug", dir);
	snprintf(plain, sizeof(plain), "%s/plain.debug", dir);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), self);
	if (system(cmd))
		return 1;
	/* A made-up .debug_frame: its bytes only need to come back the same. */
	for (size_t i = 0; i < sizeof(frame_bytes); i++)
		frame_bytes[i] = (uint8_t)(i * 7 + i / 13);
	fd = open(frame, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || wp_write_all(fd, frame_bytes, sizeof(frame_bytes)))
		return 1;
	close(fd);
	/* The frame's file: an ELF object holding it, for same_section(). */
	snprintf(cmd, sizeof(cmd), "cd %s && objcopy -I binary -O elf64-x86-64 "
		 "--rename-section .data=.debug_frame frame.o frame.elf && mv frame.elf frame.o",
		 dir);
	if (system(cmd)) {
		fail("objcopy makes an object of the made-up .debug_frame");
		return done_testing();
	}
	snprintf(cmd, sizeof(cmd), "cd %s && "
		 "objcopy -O binary --only-section=.debug_frame frame.o frame.bin && "
		 "objcopy --only-keep-debug --add-section .debug_frame=frame.bin "
		 "--compress-debug-sections=zlib self zlib.debug && "
		 "objcopy --only-keep-debug self plain.debug", dir);
	ok(!system(cmd), "objcopy makes a zlib-compressed debug file with a .debug_frame");
	test_uses("zlib", dbg);
	snprintf(cmd, sizeof(cmd), "cd %s && objcopy --only-keep-debug --add-section "
		 ".debug_frame=frame.bin --compress-debug-sections=zstd self zstd.debug 2>/dev/null",
		 dir);
	if (!system(cmd))
		test_uses("zstd", dbgz);
	else
		skip("this objcopy cannot compress with zstd");

	is_int(open_image(plain, WP_DEBUG_NAMES, &img), -ENODATA,
	       "a debug file with nothing compressed needs no image");
	is_int(open_image(self, WP_DEBUG_CFI, &img), -ENOENT,
	       "a file without .debug_frame is of no use for unwinding");
	snprintf(cmd, sizeof(cmd), "%s/text", dir);
	fd = open(cmd, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		if (wp_write_all(fd, "not an ELF file\n", 16))
			fail("write");
		close(fd);
	}
	is_int(open_image(cmd, WP_DEBUG_NAMES, &img), -ENOEXEC, "a file that is not ELF: -ENOEXEC");
	ok(wp_debug_use_needs(WP_DEBUG_NAMES, ".zdebug_info") &&
	   wp_debug_use_needs(WP_DEBUG_LINES, ".debug_line.dwo") &&
	   !wp_debug_use_needs(WP_DEBUG_NAMES, ".debug_line") &&
	   !wp_debug_use_needs(WP_DEBUG_NAMES, ".debug_loclists") &&
	   !wp_debug_use_needs(WP_DEBUG_CFI, ".gnu_debugaltlink"),
	   "which sections each use needs, by name (.zdebug_, .dwo)");
	test_damage(dbg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		perror("rm");
	return done_testing();
}
