/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symcache.h: names of code addresses, kept from one report to the next.
 *
 * Naming the addresses of a file means reading its debug information,
 * most of a small report's time; the next report of anything that runs
 * the same file asks for the same addresses again.  A cache file holds,
 * for one file (by build id) and one kind of report, what each address
 * looked up was named: its chain of frames (names, inline flags, and
 * where pprof wants them the function's entry and source line), or that
 * it had no name.  Its header also says which files the names came from
 * (the file, its debug file, a dwz file: size and modification time),
 * and it is used only while they are the same files.
 *
 * A cache file is written whole under a temporary name and renamed into
 * place, so that a report reads an old file or a new one, never half of
 * one; when two reports save the same file, the last one's stays.  It is
 * read only whole and checked (magic, version, sizes, a checksum, every
 * entry's bounds): a damaged file is ignored, and replaced when the
 * report saves.  Only the user's own regular files, in a directory of
 * the user's own that no one else may write, are read or written, and
 * symbolic links are not followed there.  Owns its buffers and the files
 * it writes.
 */
#ifndef WALLPROF_SYMCACHE_H
#define WALLPROF_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WP_SYMCACHE_INLINED 1U	/* the frame is an inlined call */
#define WP_SYMCACHE_MAX_FRAMES 64
#define WP_SYMCACHE_MAX_ID 64	/* bytes of a build id */

/* One frame of an address's chain, innermost first. */
struct wp_symcache_frame {
	const char *name;	/* what the report shows */
	uint32_t flags;		/* WP_SYMCACHE_* */
	uint32_t line;		/* the function's first source line, 0: unknown */
	uint64_t entry;		/* its entry (file address), 0: unknown */
	const char *src;	/* its source file, or NULL */
};

/* The files the names came from: the file, its debug file, a dwz file. */
#define WP_SYMCACHE_ORIGINS 3
struct wp_symcache_origin {
	uint64_t size[WP_SYMCACHE_ORIGINS];	/* 0 (and mtime 0): no such file */
	uint64_t mtime_ns[WP_SYMCACHE_ORIGINS];
};

struct wp_symcache;

/*
 * The cache directory, $XDG_CACHE_HOME/wallprof (an absolute
 * XDG_CACHE_HOME, else ~/.cache), made (0700) when missing: an open
 * descriptor (O_CLOEXEC), or -ECANCELED when WALLPROF_NO_CACHE is set (not
 * empty), -ENOENT without a home, -EPERM when it or the directory it
 * would be made in is not the user's own or others may write it, or
 * -errno when it cannot be made.
 */
int wp_symcache_dir_open(void);

/*
 * The cache of the file with build id id (1..WP_SYMCACHE_MAX_ID bytes) for
 * reports of kind (a small number: what the names include), in the
 * directory dirfd (borrowed: it must outlive the cache).  Its entries are
 * read when its file exists, is whole and comes from the same origin;
 * else it starts empty.  0, -EINVAL or -ENOMEM.
 */
int wp_symcache_open(int dirfd, const uint8_t *id, size_t id_len, unsigned int kind,
		     const struct wp_symcache_origin *origin, struct wp_symcache **out);

/* Is there a cache file for that build id and kind in dirfd (whatever it holds)? */
bool wp_symcache_present(int dirfd, const uint8_t *id, size_t id_len, unsigned int kind);

/*
 * The chain cached for addr: true, with its *n frames in out (0 frames:
 * the address has no name); false when addr is not in the cache (or has
 * more than max frames).  Names are borrowed until the next
 * wp_symcache_put() or wp_symcache_free().
 */
bool wp_symcache_get(const struct wp_symcache *c, uint64_t addr, struct wp_symcache_frame *out,
		     unsigned int max, unsigned int *n);

/*
 * Add addr's chain of n frames (at most WP_SYMCACHE_MAX_FRAMES; 0: no
 * name), copied.  0, or -EINVAL for a chain the file cannot hold (too
 * many frames, a name too long or with a NUL), -ENOMEM.
 */
int wp_symcache_put(struct wp_symcache *c, uint64_t addr, const struct wp_symcache_frame *frames,
		    unsigned int n);

/*
 * Write the cache file when something was added since it was read, or
 * when there was no whole file of the same origin to read (then even with
 * nothing in it: that no names of the file were wanted is worth keeping
 * too).  0 or -errno.
 */
int wp_symcache_save(struct wp_symcache *c);

/* NULL is fine. */
void wp_symcache_free(struct wp_symcache *c);

#endif
