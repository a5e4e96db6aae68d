/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ring.c: the perf mmap ring protocol (head acquire, tail release, wrap). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

#define RING_SCRATCH_SIZE 65536

static int ring_alloc_scratch(struct wp_ring *r)
{
	r->scratch = malloc(RING_SCRATCH_SIZE);
	return r->scratch ? 0 : -ENOMEM;
}

int wp_ring_map(struct wp_ring *r, int fd, unsigned int pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *base;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (!pages || (pages & (pages - 1)))
		return -EINVAL;
	r->map_len = (1 + (size_t)pages) * page;
	base = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int err = -errno;

		r->map_len = 0;
		return err;
	}
	r->map_base = base;
	r->meta = base;
	/* data_offset/data_size exist since Linux 4.1; older kernels leave 0. */
	if (r->meta->data_size) {
		r->data = (uint8_t *)base + r->meta->data_offset;
		r->data_size = r->meta->data_size;
	} else {
		r->data = (uint8_t *)base + page;
		r->data_size = (uint64_t)pages * page;
	}
	r->pos = r->head = __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
	if (ring_alloc_scratch(r)) {
		wp_ring_release(r);
		return -ENOMEM;
	}
	return 0;
}

int wp_ring_init_mem(struct wp_ring *r, struct perf_event_mmap_page *meta,
		     uint8_t *data, uint64_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!data_size || (data_size & (data_size - 1)))
		return -EINVAL;
	r->meta = meta;
	r->data = data;
	r->data_size = data_size;
	r->pos = r->head = meta->data_tail;
	return ring_alloc_scratch(r);
}

void wp_ring_release(struct wp_ring *r)
{
	if (r->map_base)
		munmap(r->map_base, r->map_len);
	free(r->scratch);
	r->map_base = NULL;
	r->scratch = NULL;
	r->meta = NULL;
}

uint64_t wp_ring_begin(struct wp_ring *r)
{
	/* Pairs with the kernel's write barrier before it publishes data_head. */
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	return r->head - r->pos;
}

int wp_ring_read_next(struct wp_ring *r, const struct perf_event_header **rec)
{
	uint64_t avail = r->head - r->pos, mask = r->data_size - 1;
	uint64_t off = r->pos & mask;
	struct perf_event_header hdr;
	size_t first;

	if (avail < sizeof(hdr))
		return 0;
	/* Headers are 8-byte aligned and 8 bytes long: never split. */
	memcpy(&hdr, r->data + off, sizeof(hdr));
	/* A record larger than the ring could never complete: corrupt. */
	if (hdr.size < sizeof(hdr) || (hdr.size & 7) || hdr.size > r->data_size)
		return -EBADMSG;
	if (avail < hdr.size)
		return 0;
	if (off + hdr.size <= r->data_size) {
		*rec = (const struct perf_event_header *)(r->data + off);
	} else {
		first = (size_t)(r->data_size - off);
		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, hdr.size - first);
		*rec = (const struct perf_event_header *)r->scratch;
	}
	r->pos += hdr.size;
	return 1;
}

void wp_ring_end(struct wp_ring *r)
{
	/*
	 * The records read point into the ring (or the scratch buffer): the
	 * caller has copied what it keeps (drain copies each into a block),
	 * and the kernel may now overwrite them.
	 */
	__atomic_store_n(&r->meta->data_tail, r->pos, __ATOMIC_RELEASE);
}

void wp_ring_skip_all(struct wp_ring *r)
{
	r->pos = r->head;
}

uint64_t wp_ring_tell(const struct wp_ring *r)
{
	return r->pos;
}

void wp_ring_seek(struct wp_ring *r, uint64_t pos)
{
	r->pos = pos;
}
