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

#include <stddef.h>
#include <stdint.h>

/*
 * Copy the regular file open at src_fd (read from its start; the offset
 * is not used) into the cache under id.  Returns 0, -EEXIST when the
 * cache already holds it, -ECANCELED when the cache is turned off
 * (WALLPROF_NO_CACHE), or -errno.
 */
int wp_filecache_store(int src_fd, const uint8_t *id, size_t id_size);

/*
 * Open the cached copy of the file with build id id, read-only (the
 * caller checks its build id).  Returns a descriptor or -errno (-ENOENT
 * when there is none).  *path, when not NULL, gets its name (malloc'ed).
 */
int wp_filecache_open(const uint8_t *id, size_t id_size, char **path);

#endif
