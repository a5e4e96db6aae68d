/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debuginfod.h: debug files and executables by build id from the
 * debuginfod servers that DEBUGINFOD_URLS names, through elfutils' client
 * (libdebuginfod.so.1, loaded when first needed, as libdw loads it).
 *
 * Off when DEBUGINFOD_URLS is unset or empty, or the library is not
 * installed.  The client keeps what it downloads in its own cache
 * (DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client) and bounds
 * each request by DEBUGINFOD_TIMEOUT.  A download says so in one line; a
 * server that cannot be reached (anything but "not found") is said once,
 * and no more requests are made in this process, so that a report waits
 * for an unreachable server once at most.  Owns the one client of the
 * process.
 */
#ifndef WALLPROF_DEBUGINFOD_H
#define WALLPROF_DEBUGINFOD_H

#include <stddef.h>
#include <stdint.h>

enum wp_debuginfod_kind {
	WP_DEBUGINFOD_DEBUGINFO,	/* the separate debug file */
	WP_DEBUGINFOD_EXECUTABLE,	/* the file itself */
};

/*
 * The file of kind for build id id (len bytes), about the file at what
 * (for the message): an open descriptor (O_RDONLY) with its path in the
 * client's cache in *path (malloc'd), or -ENOSYS when debuginfod is off,
 * -ENOENT when no server has it, or another -errno.
 */
int wp_debuginfod_find(enum wp_debuginfod_kind kind, const uint8_t *id, size_t len,
		       const char *what, char **path);

#endif
