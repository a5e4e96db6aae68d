/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filecache.h: copies of mapped files, by build id, for files that report
 * cannot find at their recorded path.
 *
 * A process in a chroot or in another mount namespace maps files whose
 * paths mean another file, or nothing, on the host, and those files may
 * be gone (a container's image, a private tmpfs) by the time report
 * runs.  record keeps a copy of each such file while the process lives,
 * under "files/<build id in hex>" in wallprof's cache directory (see
 * wp_symcache_dir_open()); report looks there when the recorded path is
 * missing or holds another file.  A copy is written under a temporary
 * name and renamed into place, so a reader sees a whole copy or none.
 * Owns nothing between calls.
 */
#ifndef WALLPROF_FILECACHE_H
#define WALLPROF_FILECACHE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Limits: what a copy may hold (its data, holes aside), what the copies
 * of one recording may hold in all, and how much and how old the copies
 * on disk may be (WALLPROF_FILES_MAX_SIZE and WALLPROF_FILES_MAX_AGE
 * override the last two).  A program that maps a file chooses how large
 * it is: without these, one sparse file of 3 GiB took 37 s and 3 GiB of
 * root's disk.
 */
#define WP_FILECACHE_MAX_COPY (256ULL << 20)
#define WP_FILECACHE_MAX_KEPT (1ULL << 30)
#define WP_FILECACHE_MAX_SIZE (2ULL << 30)
#define WP_FILECACHE_MAX_AGE_DAYS 30

/* One recording's copying. */
struct wp_filecache_copy {
	uint64_t budget;	/* bytes of data it may still copy */
	const sigset_t *stop;	/* a pending one of these stops the copying */
	int signal;		/* the one that did (taken from the pending ones), or 0 */
};

/*
 * Copy the regular file open at src_fd (read from its start; the offset
 * is not used) into the cache under id: its data only, its holes left
 * holes (a sparse file stays sparse), taking what it copies from
 * cp->budget.  Returns 0, -EEXIST when the cache already holds it (its
 * time of use is renewed), -ECANCELED when the cache is turned off
 * (WALLPROF_NO_CACHE), -EFBIG when it holds more than
 * WP_FILECACHE_MAX_COPY of data, -EDQUOT when more than what is left of
 * the budget, -EINTR when a signal of cp->stop came (nothing more should
 * be copied), or -errno.
 */
int wp_filecache_store(int src_fd, const uint8_t *id, size_t id_size,
		       struct wp_filecache_copy *cp);

/* What pruning did. */
struct wp_filecache_pruned {
	unsigned int removed;	/* copies and leftovers removed */
	uint64_t freed;		/* bytes of disk they took */
	uint64_t left;		/* bytes of disk the copies take now */
};

/*
 * Remove the copies not used for longer than the age limit, then, while
 * the copies take more than the size limit on disk, the least recently
 * used (by their modification time, which storing and opening renew),
 * but never one used since keep_since (CLOCK_REALTIME ns: the current
 * recording's); and temporary files a killed recorder left, a day old.
 * Returns 0, -ENOENT when there is no cache, or -errno.
 */
int wp_filecache_prune(uint64_t keep_since, struct wp_filecache_pruned *out);

/*
 * Open the cached copy of the file with build id id, read-only (the
 * caller checks its build id), renewing its time of use.  Returns a descriptor or -errno (-ENOENT
 * when there is none).  *path, when not NULL, gets its name (malloc'ed).
 */
int wp_filecache_open(const uint8_t *id, size_t id_size, char **path);

#endif
