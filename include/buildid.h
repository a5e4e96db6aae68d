/* SPDX-License-Identifier: GPL-2.0-or-later */
/* buildid.h: the GNU build id note of an ELF file (libelf). */
#ifndef WALLPROF_BUILDID_H
#define WALLPROF_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read the NT_GNU_BUILD_ID note of the ELF file at path into id (at most
 * size bytes).  Returns the id length, -ENOENT if the file has none,
 * -ENOEXEC if it is not ELF, -EINVAL if it is not a regular file (which
 * is not opened), or -errno from open.
 */
int wp_build_id_read(const char *path, uint8_t *id, size_t size);

/* Same, from an open file descriptor (not closed). */
int wp_build_id_read_fd(int fd, uint8_t *id, size_t size);

#endif
