/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.c: number parsing and whole-buffer I/O used across modules. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Compiled in here, so that hashing a key costs no call into the library. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"

int wp_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int wp_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	/* Plain decimals only: strtod would also take hex, exponents, inf. */
	if (strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int wp_read_text_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

int wp_read_int_file(const char *path, long *out)
{
	char buf[64], *end;
	int err;

	err = wp_read_text_file(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	*out = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

int wp_open_regular(const char *path, struct stat *st)
{
	const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	char proc[32];
	struct stat fst;
	int pfd, fd;

	/* An O_PATH descriptor opens nothing: no FIFO blocks it, no driver sees it. */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		fd = -errno;
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		fd = -EINVAL;
		goto out;
	}
	/*
	 * Reopen that very file.  Without /proc, by its path again: what is
	 * there now is checked, but a FIFO or device swapped in meanwhile
	 * has been opened by then.
	 */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, flags);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, flags);
	if (fd < 0) {
		fd = -errno;
		goto out;
	}
	if (fstat(fd, &fst))
		fst.st_mode = 0;
	else
		*st = fst;
	if (!S_ISREG(fst.st_mode)) {
		close(fd);
		fd = -EINVAL;
	}
out:
	close(pfd);
	return fd;
}

const char *wp_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

int wp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int wp_read_exact(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void *wp_buf_reserve(struct wp_buf *b, size_t n)
{
	if (n > SIZE_MAX - b->len || WP_GROW(b->data, b->cap, b->len + n))
		return NULL;
	return b->data + b->len;
}

int wp_buf_append(struct wp_buf *b, const void *p, size_t n)
{
	void *dst = wp_buf_reserve(b, n);

	if (!dst)
		return -ENOMEM;
	/* (Nothing, an empty buffer's NULL data among it, is no pointer for memcpy.) */
	if (n)
		memcpy(dst, p, n);
	b->len += n;
	return 0;
}

void wp_buf_release(struct wp_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *wp_human_ns(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} units[] = { { 1000000000ULL, "s" }, { 1000000ULL, "ms" }, { 1000ULL, "us" } };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		double v = (double)ns / (double)units[i].div;

		if (ns < units[i].div)
			continue;
		snprintf(buf, size, "%.*f%s", v >= 100 ? 1 : v >= 10 ? 2 : 3, v, units[i].unit);
		return buf;
	}
	snprintf(buf, size, "%lluns", (unsigned long long)ns);
	return buf;
}

void *wp_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap;

	if (need <= n && p)
		return p;
	n = n > SIZE_MAX / 2 ? SIZE_MAX : n * 2;
	if (n < need)
		n = need;
	if (n < 16)
		n = 16;
	if (!elem || n > SIZE_MAX / elem)
		return NULL;
	p = realloc(p, n * elem);
	if (p)
		*cap = n;
	return p;
}

uint64_t wp_hash_seed(void)
{
	uint64_t seed;

	/* Before the kernel has its entropy (early boot), a clock will do. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
		seed = wp_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 40);
	return seed;
}

uint64_t wp_hash(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

uint64_t wp_hash_u64(uint64_t key, uint64_t seed)
{
	return XXH3_64bits_withSeed(&key, sizeof(key), seed);
}

size_t wp_count_at_or_below(const void *base, size_t n, size_t size, size_t key_off,
			    uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
