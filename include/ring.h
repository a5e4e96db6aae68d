/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ring.h: reader of one perf mmap ring buffer.
 *
 * Owns the mapping (when created by wp_ring_map) and a scratch buffer for
 * records that wrap around the end of the data area, the only records it
 * copies: the others are read in place.  The reader follows the
 * kernel's protocol: load data_head with acquire semantics, read records in
 * [data_tail, data_head), then publish data_tail with release semantics so
 * the kernel may reuse the space.  Only one thread may read a ring.
 *
 * Usage:
 *	wp_ring_begin(r);
 *	while ((n = wp_ring_read_next(r, &rec)) > 0)
 *		use(rec);	// valid until the next read_next or end
 *	wp_ring_end(r);
 */
#ifndef WALLPROF_RING_H
#define WALLPROF_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct wp_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t data_size;	/* power of two */
	uint64_t head;		/* snapshot taken by wp_ring_begin */
	uint64_t pos;		/* next unread byte */
	void *map_base;		/* NULL when the memory belongs to the caller */
	size_t map_len;
	uint8_t *scratch;	/* 64 KiB, for wrapped records */
	int fd;
	int cpu;
};

/*
 * mmap 1 + pages pages of a perf event fd (pages must be a power of two).
 * Returns 0 or -errno from mmap (-EPERM when over the mlock limit).
 */
int wp_ring_map(struct wp_ring *r, int fd, unsigned int pages);

/*
 * Use caller-owned memory: a struct perf_event_mmap_page followed (at
 * meta->data_offset) by data_size bytes.  For tests; data_size must be a
 * power of two.
 */
int wp_ring_init_mem(struct wp_ring *r, struct perf_event_mmap_page *meta,
		     uint8_t *data, uint64_t data_size);

/* Unmap (if mapped) and free the scratch buffer; safe on a zeroed ring. */
void wp_ring_release(struct wp_ring *r);

/* Snapshot data_head; returns the number of unread bytes. */
uint64_t wp_ring_begin(struct wp_ring *r);

/*
 * Point *rec at the next complete record: 1 when one was returned, 0 when
 * none is left (an incomplete record stays unread), -EBADMSG when the ring
 * holds a malformed header (size < 8, not a multiple of 8, or larger than
 * the data area).  The record
 * is borrowed: valid until the next call or wp_ring_end().
 */
int wp_ring_read_next(struct wp_ring *r, const struct perf_event_header **rec);

/*
 * Give every record read since wp_ring_begin back to the kernel.  The
 * records were borrowed, never copied: the caller copies what it keeps
 * before this call, after which the kernel may overwrite them.
 */
void wp_ring_end(struct wp_ring *r);

/* Drop everything up to the current head (after a malformed record). */
void wp_ring_skip_all(struct wp_ring *r);

/*
 * The read position, and a way back to it: reading records and then
 * seeking back to where the reading began, without wp_ring_end(), looks
 * at them without consuming them.  pos must lie between the last
 * published tail and the head.
 */
uint64_t wp_ring_tell(const struct wp_ring *r);
void wp_ring_seek(struct wp_ring *r, uint64_t pos);

#endif
