// SPDX-License-Identifier: GPL-2.0-or-later
/* filecache.c: copies of mapped files by build id (see filecache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filecache.h"
#include "log.h"
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

/* Bytes a piece of the copy: a pending signal is seen between two. */
#define PIECE (1U << 20)
/* A sparse file of more than this (however little data) is no library. */
#define MAX_APPARENT (64ULL << 30)
/* A temporary copy this old was left by a recorder that was killed. */
#define LEFTOVER_NS (24ULL * 3600 * NSEC_PER_SEC)
/* The copies looked at when pruning, at most. */
#define MAX_ENTRIES 100000

/* Take a pending stop signal (the caller blocks them); true when one was. */
static bool stop_pending(struct wp_filecache_copy *cp)
{
	const struct timespec zero = { 0, 0 };
	sigset_t pending;
	int sig;

	if (!cp->stop || sigpending(&pending))
		return false;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(cp->stop, sig) == 1 && sigismember(&pending, sig) == 1)
			break;
	if (sig == NSIG)
		return false;
	sig = sigtimedwait(cp->stop, NULL, &zero);
	cp->signal = sig > 0 ? sig : SIGINT;
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/*
 * Copy from's data into to, at the same offsets, holes left holes: the
 * extents SEEK_DATA finds (every byte when the file system cannot say),
 * and of those the pieces that are not all zeros.
 */
static int copy_sparse(int from, int to, uint64_t size, struct wp_filecache_copy *cp)
{
	uint8_t *buf = malloc(PIECE);
	const char *delay = getenv("WALLPROF_TEST_COPY_DELAY_US");
	useconds_t delay_us = delay ? (useconds_t)strtoul(delay, NULL, 10) : 0;
	bool seek = true;
	uint64_t off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	/* (A slow disk, for tests of stopping: at most a second a piece.) */
	if (delay_us > 1000000)
		delay_us = 1000000;
	while (!err && off < size) {
		off_t data = (off_t)off, hole = (off_t)size;

		if (seek) {
			data = lseek(from, (off_t)off, SEEK_DATA);
			if (data < 0 && errno == ENXIO)
				break;	/* holes to the end */
			if (data < 0) {
				seek = false;	/* not said here: every byte */
				data = (off_t)off;
			} else {
				hole = lseek(from, data, SEEK_HOLE);
				if (hole < 0 || (uint64_t)hole > size)
					hole = (off_t)size;
			}
		}
		for (off = (uint64_t)data; !err && off < (uint64_t)hole;) {
			size_t want = (uint64_t)hole - off < PIECE ? (size_t)((uint64_t)hole - off) : PIECE;
			ssize_t n;

			if (delay_us)
				usleep(delay_us);
			if (stop_pending(cp)) {
				err = -EINTR;
				break;
			}
			n = pread(from, buf, want, (off_t)off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				err = -errno;
				break;
			}
			if (!n) {
				size = off;	/* it shrank meanwhile */
				break;
			}
			if (!all_zero(buf, (size_t)n)) {
				for (size_t done = 0; !err && done < (size_t)n;) {
					ssize_t w = pwrite(to, buf + done, (size_t)n - done,
							   (off_t)(off + done));

					if (w < 0 && errno != EINTR)
						err = -errno;
					else if (w > 0)
						done += (size_t)w;
				}
			}
			off += (uint64_t)n;
		}
		if (!err && off < (uint64_t)hole)
			break;
		off = (uint64_t)hole;
	}
	/* The holes at the end: the file's size without its bytes. */
	if (!err && ftruncate(to, (off_t)size))
		err = -errno;
	free(buf);
	return err;
}

int wp_filecache_store(int src_fd, const uint8_t *id, size_t id_size,
		       struct wp_filecache_copy *cp)
{
	char name[2 * WP_SYMCACHE_MAX_ID + 1], tmp[sizeof(name) + 16];
	uint64_t data;
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
		/* Used again: pruning goes by the time of last use. */
		utimensat(dir, name, NULL, AT_SYMLINK_NOFOLLOW);
		err = -EEXIST;
		goto out;
	}
	if (fstat(src_fd, &st)) {
		err = -errno;
		goto out;
	}
	/* What the copy will hold: the blocks the file has, not its size. */
	data = (uint64_t)st.st_blocks * 512;
	if (data > WP_FILECACHE_MAX_COPY || (uint64_t)st.st_size > MAX_APPARENT) {
		err = -EFBIG;
		goto out;
	}
	if (data > cp->budget) {
		err = -EDQUOT;
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
	err = copy_sparse(src_fd, fd, (uint64_t)st.st_size, cp);
	if (!err && close(fd))
		err = -errno;
	fd = -1;
	if (!err && renameat(dir, tmp, dir, name))
		err = -errno;
	if (err)
		unlinkat(dir, tmp, 0);
	else
		cp->budget -= data;
out:
	if (fd >= 0)
		close(fd);
	close(dir);
	return err;
}

/* A limit from the environment (a number, with K, M or G for sizes), or def. */
static uint64_t env_limit(const char *var, uint64_t def, bool size)
{
	const char *v = getenv(var);
	char *end;
	unsigned long long n;
	int shift = 0;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (size && *end && !end[1])
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : -1;
	if (errno || end == v || shift < 0 || (*end && !shift) || n > (1ULL << 40) >> shift) {
		wp_warn("%s='%s' is not a %s; %s is used", var, v,
			size ? "size (bytes, or with K, M or G)" : "number of days",
			size ? "2G" : "30");
		return def;
	}
	return (uint64_t)n << shift;
}

struct entry {
	uint64_t used_ns, bytes;
	char name[2 * WP_SYMCACHE_MAX_ID + 16];
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->used_ns < y->used_ns ? -1 : x->used_ns > y->used_ns;
}

int wp_filecache_prune(uint64_t keep_since, struct wp_filecache_pruned *out)
{
	uint64_t max_size = env_limit("WALLPROF_FILES_MAX_SIZE", WP_FILECACHE_MAX_SIZE, true);
	uint64_t max_age_ns = env_limit("WALLPROF_FILES_MAX_AGE", WP_FILECACHE_MAX_AGE_DAYS,
					false) * 86400 * NSEC_PER_SEC;
	uint64_t now = wp_clock_ns(CLOCK_REALTIME), total = 0;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int dir;

	memset(out, 0, sizeof(*out));
	dir = files_dir_open(0);
	if (dir < 0)
		return dir;
	d = fdopendir(dir);
	if (!d) {
		close(dir);
		return -errno;
	}
	while ((de = readdir(d)) && n < MAX_ENTRIES) {
		struct stat st;
		uint64_t used;
		bool leftover = de->d_name[0] == '.';

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		used = (uint64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + (uint64_t)st.st_mtim.tv_nsec;
		if (leftover ? used + LEFTOVER_NS < now :
			       used + max_age_ns < now && used < keep_since) {
			if (!unlinkat(dirfd(d), de->d_name, 0)) {
				out->removed++;
				out->freed += (uint64_t)st.st_blocks * 512;
			}
			continue;
		}
		if (leftover)
			continue;
		if (WP_GROW(v, cap, n + 1))
			break;
		v[n].used_ns = used;
		v[n].bytes = (uint64_t)st.st_blocks * 512;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		total += v[n].bytes;
		n++;
	}
	if (total > max_size && n)
		qsort(v, n, sizeof(*v), entry_cmp);
	for (size_t i = 0; i < n && total > max_size && v[i].used_ns < keep_since; i++) {
		if (unlinkat(dirfd(d), v[i].name, 0))
			continue;
		out->removed++;
		out->freed += v[i].bytes;
		total -= v[i].bytes;
	}
	out->left = total;
	free(v);
	closedir(d);
	return 0;
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
	/* Used: pruning goes by the time of last use. */
	if (!err)
		futimens(fd, NULL);
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
