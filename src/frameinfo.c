/* SPDX-License-Identifier: GPL-2.0-or-later */
/* frameinfo.c: files, addresses and source lines of frame tokens. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frameinfo.h"
#include "strpool.h"
#include "u64map.h"
#include "util.h"

struct noted {
	uint32_t file, src, line;	/* src: id in srcs, or WP_FRAMEINFO_NONE */
	uint64_t addr;
};

struct wp_frameinfo {
	struct wp_u64map token_at;	/* token -> index into notes */
	struct noted *notes;
	size_t nr_notes, cap_notes;
	struct wp_u64map file_of;	/* note key -> index into files */
	struct wp_frame_file *files;
	size_t nr_files, cap_files;
	struct wp_strpool *srcs;
};

int wp_frameinfo_new(struct wp_frameinfo **out)
{
	struct wp_frameinfo *fi = calloc(1, sizeof(*fi));
	int err;

	*out = NULL;
	if (!fi)
		return -ENOMEM;
	err = wp_strpool_new(&fi->srcs);
	if (err) {
		free(fi);
		return err;
	}
	*out = fi;
	return 0;
}

/* The index of the file of key, added if new; WP_FRAMEINFO_NONE when out of memory. */
static uint32_t file_index(struct wp_frameinfo *fi, uint32_t key, const char *path,
			   const uint8_t *build_id, size_t build_id_size)
{
	struct wp_frame_file *f, *grown;
	uint64_t idx;

	if (wp_u64map_get(&fi->file_of, key, &idx))
		return (uint32_t)idx;
	grown = wp_grow(fi->files, &fi->cap_files, fi->nr_files + 1, sizeof(*fi->files));
	if (!grown)
		return WP_FRAMEINFO_NONE;
	fi->files = grown;
	f = &fi->files[fi->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path || wp_u64map_put(&fi->file_of, key, fi->nr_files)) {
		free(f->path);
		return WP_FRAMEINFO_NONE;
	}
	if (build_id && build_id_size <= sizeof(f->build_id)) {
		memcpy(f->build_id, build_id, build_id_size);
		f->build_id_size = (uint8_t)build_id_size;
	}
	return (uint32_t)fi->nr_files++;
}

int wp_frameinfo_note(struct wp_frameinfo *fi, uint32_t token, uint32_t key,
		      const char *path, const uint8_t *build_id, size_t build_id_size,
		      uint64_t addr, const char *src, uint32_t line)
{
	struct noted *n, *grown;
	uint32_t file;

	if (wp_u64map_get(&fi->token_at, token, NULL))
		return 0;
	file = file_index(fi, key, path, build_id, build_id_size);
	if (file == WP_FRAMEINFO_NONE)
		return -ENOMEM;
	grown = wp_grow(fi->notes, &fi->cap_notes, fi->nr_notes + 1, sizeof(*fi->notes));
	if (!grown)
		return -ENOMEM;
	fi->notes = grown;
	n = &fi->notes[fi->nr_notes];
	n->file = file;
	n->addr = addr;
	n->line = line;
	n->src = src ? wp_strpool_intern(fi->srcs, src) : WP_FRAMEINFO_NONE;
	if (wp_u64map_put(&fi->token_at, token, fi->nr_notes))
		return -ENOMEM;
	fi->nr_notes++;
	if (addr > fi->files[file].max_addr)
		fi->files[file].max_addr = addr;
	return 0;
}

bool wp_frameinfo_get(const struct wp_frameinfo *fi, uint32_t token, struct wp_frame_info *info)
{
	const struct noted *n;
	uint64_t idx;

	if (!fi || !wp_u64map_get(&fi->token_at, token, &idx))
		return false;
	n = &fi->notes[idx];
	info->file = n->file;
	info->line = n->line;
	info->addr = n->addr;
	info->src = n->src == WP_FRAMEINFO_NONE ? NULL : wp_strpool_get(fi->srcs, n->src);
	return true;
}

const struct wp_frame_file *wp_frameinfo_files(const struct wp_frameinfo *fi, size_t *n)
{
	*n = fi ? fi->nr_files : 0;
	return fi ? fi->files : NULL;
}

void wp_frameinfo_free(struct wp_frameinfo *fi)
{
	if (!fi)
		return;
	wp_u64map_release(&fi->token_at);
	free(fi->notes);
	wp_u64map_release(&fi->file_of);
	for (size_t i = 0; i < fi->nr_files; i++)
		free(fi->files[i].path);
	free(fi->files);
	wp_strpool_free(fi->srcs);
	free(fi);
}
