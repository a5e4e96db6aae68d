/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * frameinfo.h: what is known of a frame token beyond its name, for the
 * formats that describe code more closely than by name (pprof): the file
 * it is in (path and build id), the address of its function's entry in
 * that file, and the function's source file and first line.
 *
 * The symbolizer notes each token when it first makes it; the analysis
 * owns the table, which outlives the symbolizer and the process maps, and
 * formats read it.  A token stands for a name, so when two functions of
 * one name exist (static functions of two files) the first one seen
 * describes both.  Owns its files' paths and the source file names.
 */
#ifndef WALLPROF_FRAMEINFO_H
#define WALLPROF_FRAMEINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WP_FRAMEINFO_NONE UINT32_MAX	/* no file, no source file */

/* A file that frames are in: an ELF file, [vdso] or the kernel. */
struct wp_frame_file {
	char *path;		/* as recorded */
	uint8_t build_id[20];
	uint8_t build_id_size;	/* 0: unknown */
	uint64_t max_addr;	/* the highest address noted in it */
};

struct wp_frame_info {
	uint32_t file;		/* index into the files, or WP_FRAMEINFO_NONE */
	uint32_t line;		/* the function's first source line, 0: unknown */
	const char *src;	/* its source file, or NULL */
	uint64_t addr;		/* its entry, as a file (ELF) address; 0: unknown */
};

struct wp_frameinfo;

int wp_frameinfo_new(struct wp_frameinfo **out);

/*
 * Note token (the first note of a token wins).  key names the file among
 * the notes (the symbolizer's dso index); path and build_id describe it
 * the first time the key is seen.  src may be NULL.  0 or -ENOMEM.
 */
int wp_frameinfo_note(struct wp_frameinfo *fi, uint32_t token, uint32_t key,
		      const char *path, const uint8_t *build_id, size_t build_id_size,
		      uint64_t addr, const char *src, uint32_t line);

/* What is known of token: false when nothing was noted. */
bool wp_frameinfo_get(const struct wp_frameinfo *fi, uint32_t token,
		      struct wp_frame_info *info);

/* The files, by index; valid until wp_frameinfo_free. */
const struct wp_frame_file *wp_frameinfo_files(const struct wp_frameinfo *fi, size_t *n);

void wp_frameinfo_free(struct wp_frameinfo *fi);

#endif
