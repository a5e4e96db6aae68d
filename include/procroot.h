/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procroot.h: a file as a watched process sees it, opened by a recorder
 * that may be root, without leaving the process's root.
 *
 * A process in a chroot or a container names files by paths of its own
 * root.  Opened as /proc/PID/root/PATH, a path is resolved by the
 * recorder: an absolute symbolic link inside the process's tree (which
 * the process may put there at any time) is followed from the recorder's
 * root, and the recorder opens, as root, whatever file of the host the
 * link names.  Here a path is resolved from a descriptor of the process's
 * root with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): every link,
 * absolute or "..", stays inside that root, and no /proc magic link is
 * followed.  Without openat2 (Linux before 5.6), each component is opened
 * in turn without following any link, and a link met on the way is
 * refused: the paths the kernel reports for mappings have none.  Only a
 * regular file is ever opened for reading (a FIFO, a device node never).
 * Owns nothing between calls.
 */
#ifndef WALLPROF_PROCROOT_H
#define WALLPROF_PROCROOT_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Open the regular file at path (absolute) as process pid sees it, for
 * reading (O_CLOEXEC), filling *st.  Returns the descriptor; -EINVAL when
 * it is not a regular file, -ELOOP when the fallback met a symbolic link,
 * -EXDEV when resolving it would leave the root, -ENOENT when the process
 * or the file is gone, or another -errno.
 */
int wp_procroot_open(pid_t pid, const char *path, struct stat *st);

/*
 * The device and inode of the file process pid has mapped at addr, as
 * /proc/PID/maps gives them (what a MMAP2 record would give, when it
 * carries a build id instead).  0, -ENOENT when nothing is mapped there
 * (or the process is gone), or -errno.
 */
int wp_procroot_mapped_file(pid_t pid, uint64_t addr, uint32_t *maj, uint32_t *min,
			    uint64_t *ino);

#endif
