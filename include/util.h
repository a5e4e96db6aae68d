/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.h: small helpers shared by every module (no state, no I/O).
 */
#ifndef WALLPROF_UTIL_H
#define WALLPROF_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

struct stat;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define NSEC_PER_SEC 1000000000ULL

/* Nanoseconds on the given clock (CLOCK_MONOTONIC for event times). */
static inline uint64_t wp_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/*
 * Parse a whole decimal unsigned number; 0 or -EINVAL for
 * garbage, trailing characters or overflow.
 */
int wp_parse_u64(const char *s, uint64_t *out);

/* Parse a non-negative decimal number of seconds ("2", "0.5"). */
int wp_parse_seconds(const char *s, double *out);

/* Read a small text file (e.g. a sysctl) into buf, NUL-terminated. */
int wp_read_text_file(const char *path, char *buf, size_t size);

/* Read an integer sysctl-style file; -errno when it cannot be read. */
int wp_read_int_file(const char *path, long *out);

/*
 * Open a regular file for reading, and nothing else: a path taken from a
 * recording may name a FIFO (whose open would block), a device (whose
 * driver acts on open) or a directory; neither a FIFO nor a device is
 * ever opened (unless /proc is missing and the file is swapped in a race).
 * Fills *st (when the path exists) and returns the descriptor (O_CLOEXEC),
 * -EINVAL when it is not a regular file (st->st_mode says what it is), or
 * -errno.
 */
int wp_open_regular(const char *path, struct stat *st);

/* "a directory", "a FIFO", "a character device", ... for messages. */
const char *wp_file_kind(mode_t mode);

/* Write all of buf to fd, retrying short writes and EINTR. */
int wp_write_all(int fd, const void *buf, size_t len);

/* Read exactly len bytes; -EIO at a short read (end of file). */
int wp_read_exact(int fd, void *buf, size_t len);

/*
 * A duration for people: 4 significant digits with a unit chosen by
 * magnitude ("812ns", "12.34us", "1.234s").  Returns buf.
 */
const char *wp_human_ns(uint64_t ns, char *buf, size_t size);

/*
 * Room for at least need elements of elem bytes in the array p of *cap
 * elements: p itself when it has it, else p reallocated to at least twice
 * its capacity (and *cap updated).  NULL when out of memory or when the
 * size would overflow; p and *cap are then as they were.
 *
 *	t = wp_grow(a->v, &a->cap, a->n + 1, sizeof(*a->v));
 *	if (!t)
 *		return -ENOMEM;
 *	a->v = t;
 */
void *wp_grow(void *p, size_t *cap, size_t need, size_t elem);

/*
 * wp_grow() for an array v of cap (a size_t) elements of v's own type:
 * 0, or -ENOMEM with v and cap as they were.  Evaluates v more than once.
 *
 *	if (WP_GROW(a->v, a->cap, a->n + 1))
 *		return -ENOMEM;
 *	a->v[a->n++] = x;
 */
#define WP_GROW(v, cap, need)							\
	__extension__({								\
		void *wp_grown_ = wp_grow((v), &(cap), (need), sizeof(*(v)));	\
										\
		if (wp_grown_)							\
			(v) = wp_grown_;					\
		wp_grown_ ? 0 : -ENOMEM;					\
	})

/*
 * Keys from a recording (pids, tids, event ids, names) are the file's to
 * choose: under a hash known in advance, a file can give every key the
 * same slot, and then each lookup walks them all.  A table keyed by them
 * hashes with wp_hash() and a seed of its own from wp_hash_seed(), random,
 * so no file can aim.  (Nothing may then depend on the order of the slots.)
 */
uint64_t wp_hash_seed(void);
uint64_t wp_hash(const void *p, size_t len, uint64_t seed);
uint64_t wp_hash_u64(uint64_t key, uint64_t seed);

/*
 * In an array of n elements of size bytes each, sorted by the uint64_t
 * at offset key_off in each, how many have a key at or below key (so the
 * last of them, when any, is at the result - 1).
 */
size_t wp_count_at_or_below(const void *base, size_t n, size_t size, size_t key_off,
			    uint64_t key);

/* A growable byte buffer; the holder owns data (free with wp_buf_release). */
struct wp_buf {
	uint8_t *data;
	size_t len, cap;
};

/* Make room for n more bytes; returns a pointer to them or NULL. */
void *wp_buf_reserve(struct wp_buf *b, size_t n);
int wp_buf_append(struct wp_buf *b, const void *p, size_t n);
void wp_buf_release(struct wp_buf *b);

#endif
