// SPDX-License-Identifier: GPL-2.0-or-later
/* filecache.c: copies of mapped files by build id (see filecache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filecache.h"
#include "symcache.h"
#include "util.h"

#define FILES_DIR "files"

static int hex_name(const uint8_t *id, size_t id_size, char *out, size_t size)
{
	if (!id_size || id_size > WP_SYMCACHE_MAX_ID || 2 * id_size + 1 > size)
		return -EINVAL;
	for (size_t i = 0; i < id_size; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	return 0;
}

/* The files directory inside the cache, made when missing (mkdir != 0). */
static int files_dir_open(int make)
{
	int top, fd, err = 0;

	top = wp_symcache_dir_open();
	if (top < 0)
		return top;
	if (make && mkdirat(top, FILES_DIR, 0700) && errno != EEXIST)
		err = -errno;
	fd = err ? -1 : openat(top, FILES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && fd < 0)
		err = -errno;
	close(top);
	return err ? err : fd;
}

static int copy_fd(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(from, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		int err = wp_write_all(to, buf, (size_t)n);

		if (err)
			return err;
		off += n;
	}
}

int wp_filecache_store(int src_fd, const uint8_t *id, size_t id_size)
{
	char name[2 * WP_SYMCACHE_MAX_ID + 1], tmp[sizeof(name) + 16];
	struct stat st;
	int dir, fd = -1, err;

	err = hex_name(id, id_size, name, sizeof(name));
	if (err)
		return err;
	if (fstat(src_fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	dir = files_dir_open(1);
	if (dir < 0)
		return dir;
	if (!fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -EEXIST;
		goto out;
	}
	/* A temporary name of our own in the directory (mkstemp takes no dirfd). */
	snprintf(tmp, sizeof(tmp), ".%s.", name);
	for (int tries = 0; tries < 16; tries++) {
		snprintf(tmp + strlen(name) + 2, 8, "%06x",
			 (unsigned int)((getpid() * 7919 + tries) & 0xffffff));
		fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = copy_fd(src_fd, fd);
	if (!err && close(fd))
		err = -errno;
	fd = -1;
	if (!err && renameat(dir, tmp, dir, name))
		err = -errno;
	if (err)
		unlinkat(dir, tmp, 0);
out:
	if (fd >= 0)
		close(fd);
	close(dir);
	return err;
}

int wp_filecache_open(const uint8_t *id, size_t id_size, char **path)
{
	char name[2 * WP_SYMCACHE_MAX_ID + 1];
	struct stat st;
	int dir, fd, err;

	err = hex_name(id, id_size, name, sizeof(name));
	if (err)
		return err;
	dir = files_dir_open(0);
	if (dir < 0)
		return dir;
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (!err && (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
		err = -EPERM;
	}
	close(dir);
	if (err)
		return err;
	if (path) {
		char *top = NULL;

		/* Only for messages: the directory's name as the cache sees it. */
		if (asprintf(&top, "/proc/self/fd/%d", fd) < 0)
			top = NULL;
		*path = top ? realpath(top, NULL) : NULL;
		free(top);
	}
	return fd;
}
