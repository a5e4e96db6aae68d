/* SPDX-License-Identifier: GPL-2.0-or-later */
/* buildid.c: NT_GNU_BUILD_ID lookup through libelf's note iterator. */
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid.h"
#include "util.h"

static int note_build_id(Elf_Data *data, uint8_t *id, size_t size)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
			size_t n = nh.n_descsz < size ? nh.n_descsz : size;

			memcpy(id, (const char *)data->d_buf + desc_off, n);
			return (int)n;
		}
	}
	return -ENOENT;
}

int wp_build_id_read_fd(int fd, uint8_t *id, size_t size)
{
	int ret = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t nphdr;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		ret = -ENOEXEC;
		goto out;
	}
	/* Program headers first: they survive stripping of section headers. */
	if (!elf_getphdrnum(elf, &nphdr)) {
		for (size_t i = 0; i < nphdr && ret < 0; i++) {
			GElf_Phdr ph;
			Elf_Data *data;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						    ELF_T_NHDR);
			if (data)
				ret = note_build_id(data, id, size);
		}
	}
	while (ret < 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data)
			ret = note_build_id(data, id, size);
	}
out:
	elf_end(elf);
	return ret;
}

int wp_build_id_read(const char *path, uint8_t *id, size_t size)
{
	struct stat st;
	int fd = wp_open_regular(path, &st), ret;

	if (fd < 0)
		return fd;
	ret = wp_build_id_read_fd(fd, id, size);
	close(fd);
	return ret;
}
