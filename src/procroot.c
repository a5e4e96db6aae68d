// SPDX-License-Identifier: GPL-2.0-or-later
/* procroot.c: files as a watched process sees them (procroot.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
/* The kernel's ABI (include/uapi/linux/openat2.h), for older headers. */
struct open_how {
	unsigned long long flags, mode, resolve;
};
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_IN_ROOT 0x10
#endif
#ifndef SYS_openat2
#define SYS_openat2 437		/* the same on every architecture */
#endif

#include "procroot.h"

/* The whole of a mapped file's path a component may take. */
#define MAX_COMPONENT 255

/*
 * Without openat2: path's components one at a time from root, none of
 * them a symbolic link, none "..".  An O_PATH descriptor of the file.
 */
static int walk_nofollow(int root, const char *path)
{
	int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);
	const char *p = path;

	if (cur < 0)
		return -errno;
	while (*p) {
		char comp[MAX_COMPONENT + 1];
		size_t len = strcspn(p, "/");
		struct stat st;
		int next;

		if (!len || (len == 1 && p[0] == '.')) {
			p += len + (p[len] == '/');
			continue;
		}
		if (len > MAX_COMPONENT || (len == 2 && p[0] == '.' && p[1] == '.')) {
			close(cur);
			return len > MAX_COMPONENT ? -ENAMETOOLONG : -EXDEV;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return -errno;
		if (fstat(next, &st) || S_ISLNK(st.st_mode)) {
			close(next);
			return -ELOOP;
		}
		cur = next;
		p += len + (p[len] == '/');
	}
	return cur;
}

int wp_procroot_open(pid_t pid, const char *path, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char proc[40];
	int root, pfd, fd;

	if (path[0] != '/')
		return -EINVAL;
	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)pid);
	root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	/* (The test hook stands for a kernel before 5.6.) */
	if (getenv("WALLPROF_TEST_NO_OPENAT2")) {
		pfd = -1;
		errno = ENOSYS;
	} else {
		pfd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	}
	if (pfd < 0 && errno == ENOSYS)
		pfd = walk_nofollow(root, path);
	else if (pfd < 0)
		pfd = -errno;
	close(root);
	if (pfd < 0)
		return pfd;
	/* An O_PATH descriptor opens nothing: no FIFO blocks, no driver sees it. */
	if (fstat(pfd, st)) {
		fd = -errno;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		fd = -EINVAL;
		goto out;
	}
	/* That very file, through our own descriptor table. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
out:
	close(pfd);
	return fd;
}

int wp_procroot_mapped_file(pid_t pid, uint64_t addr, uint32_t *maj, uint32_t *min,
			    uint64_t *ino)
{
	/* A line: addresses, permissions, offset, device, inode, then a path. */
	char path[40], line[4096 + 128];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* Sorted by address: at most as many lines as mappings, up to addr. */
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		uint64_t start, end, inode;
		unsigned int ma, mi;

		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			/* A path longer than the buffer: the rest of its line. */
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %x:%x %" SCNu64,
			   &start, &end, &ma, &mi, &inode) != 5)
			continue;
		if (start > addr)
			break;
		if (addr < end) {
			*maj = ma;
			*min = mi;
			*ino = inode;
			err = inode ? 0 : -ENOENT;
		}
	}
	fclose(f);
	return err;
}
