/* SPDX-License-Identifier: GPL-2.0-or-later */
/* deferred.c: deliveries to the ledger held back, in their order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deferred.h"
#include "util.h"

/*
 * A delivery in the buffer: this head, then its callchain and user places
 * (padded to 8 bytes), then the record's bytes (a multiple of 8).
 */
struct head {
	struct wp_deferred_item it;
	uint32_t flags, ip;	/* of the stack */
	uint64_t needed;
	uint32_t nr_chain, nr_user;
	uint32_t rec_size;
	uint32_t reserved;
};

struct wp_deferred {
	uint8_t *buf;
	size_t cap;
	size_t end;		/* bytes written */
	size_t pos;		/* bytes taken */
};

int wp_deferred_new(struct wp_deferred **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void wp_deferred_free(struct wp_deferred *d)
{
	if (!d)
		return;
	free(d->buf);
	free(d);
}

bool wp_deferred_empty(const struct wp_deferred *d)
{
	return d->pos == d->end;
}

size_t wp_deferred_bytes(const struct wp_deferred *d)
{
	return d->end - d->pos;
}

int wp_deferred_push(struct wp_deferred *d, const struct wp_deferred_item *it,
		     const struct wp_sample_stack *ss, const struct perf_event_header *rec)
{
	struct head h = { .it = *it };
	size_t places, need;
	uint8_t *at;

	if (ss) {
		h.flags = ss->flags;
		h.ip = ss->ip;
		h.needed = ss->needed;
		h.nr_chain = ss->nr_chain;
		h.nr_user = ss->nr_user;
	}
	if (rec)
		h.rec_size = ALIGN_UP((uint32_t)rec->size, 8U);
	places = ALIGN_UP(((size_t)h.nr_chain + h.nr_user) * sizeof(uint32_t), (size_t)8);
	need = sizeof(h) + places + h.rec_size;
	/* Emptied: start over at the front rather than grow. */
	if (d->pos == d->end)
		d->pos = d->end = 0;
	if (d->cap - d->end < need) {
		size_t cap = d->cap ? d->cap : 64 << 10;
		uint8_t *buf;

		while (cap - d->end < need)
			cap *= 2;
		buf = realloc(d->buf, cap);
		if (!buf)
			return -ENOMEM;
		d->buf = buf;
		d->cap = cap;
	}
	at = d->buf + d->end;
	memcpy(at, &h, sizeof(h));
	at += sizeof(h);
	if (ss) {
		memcpy(at, ss->chain, h.nr_chain * sizeof(uint32_t));
		memcpy(at + h.nr_chain * sizeof(uint32_t), ss->user, h.nr_user * sizeof(uint32_t));
	}
	at += places;
	if (rec) {
		memset(at + rec->size, 0, h.rec_size - rec->size);
		memcpy(at, rec, rec->size);
	}
	d->end += need;
	return 0;
}

bool wp_deferred_pop(struct wp_deferred *d, struct wp_deferred_item *it,
		     struct wp_sample_stack *ss, const struct perf_event_header **rec)
{
	const uint8_t *at;
	struct head h;
	size_t places;

	if (d->pos == d->end)
		return false;
	at = d->buf + d->pos;
	memcpy(&h, at, sizeof(h));
	at += sizeof(h);
	places = ALIGN_UP(((size_t)h.nr_chain + h.nr_user) * sizeof(uint32_t), (size_t)8);
	*it = h.it;
	if (ss) {
		ss->flags = h.flags;
		ss->ip = h.ip;
		ss->needed = h.needed;
		ss->nr_chain = h.nr_chain;
		ss->nr_user = h.nr_user;
		memcpy(ss->chain, at, h.nr_chain * sizeof(uint32_t));
		memcpy(ss->user, at + h.nr_chain * sizeof(uint32_t), h.nr_user * sizeof(uint32_t));
	}
	at += places;
	*rec = h.rec_size ? (const struct perf_event_header *)at : NULL;
	d->pos += sizeof(h) + places + h.rec_size;
	return true;
}
