/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stacktable.c: a file's DSO, PLACE and STACK records, in the reader's terms. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "stacktable.h"
#include "u64map.h"
#include "util.h"

/* A stack's words: flags, ip, needed (two words), nr_chain, nr_user, places. */
#define HEAD_WORDS 6

struct wp_stacktable {
	struct wp_procmap *pm;		/* borrowed */
	struct wp_resolver *r;		/* borrowed */
	struct wp_u64map dsos;		/* file's dso -> procmap dso */
	struct wp_u64map places;	/* file's place -> resolver place */
	struct wp_u64map stacks;	/* file's stack -> offset in words */
	const struct wp_placenames *names;	/* borrowed, or NULL */
	struct wp_u64map named;		/* resolver place -> file's place, with names */
	struct wp_u64map named_files;	/* procmap dso -> 1: it has places named */
	uint32_t *words;
	size_t nr_words, cap_words;
	struct wp_placename_frame frames[WP_PLACENAMES_MAX_FRAMES];	/* scratch */
};

int wp_stacktable_new(struct wp_procmap *pm, struct wp_resolver *r, struct wp_stacktable **out)
{
	struct wp_stacktable *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t)
		return -ENOMEM;
	t->pm = pm;
	t->r = r;
	return 0;
}

void wp_stacktable_use_names(struct wp_stacktable *t, const struct wp_placenames *pn)
{
	t->names = pn;
}

bool wp_stacktable_names(const struct wp_stacktable *t, uint32_t place,
			 struct wp_placename_frame *out, unsigned int max, unsigned int *n)
{
	uint64_t file_place;

	return wp_u64map_get(&t->named, place, &file_place) &&
	       wp_placenames_get(t->names, (uint32_t)file_place, out, max, n);
}

bool wp_stacktable_named_file(const struct wp_stacktable *t, uint32_t dso)
{
	return wp_u64map_get(&t->named_files, dso, NULL);
}

bool wp_stacktable_is_def(const struct perf_event_header *rec)
{
	return rec->type == WP_RECORD_DSO || rec->type == WP_RECORD_PLACE ||
	       rec->type == WP_RECORD_STACK;
}

static int define_dso(struct wp_stacktable *t, const struct perf_event_header *rec)
{
	struct wp_dso_def d;
	uint32_t idx;

	if (wp_dso_def_parse(rec, &d))
		return -EBADMSG;
	idx = wp_procmap_dso_intern(t->pm, d.filename, d.maj, d.min, d.ino, d.build_id,
				    d.build_id_size);
	if (idx == WP_DSO_NONE)
		return -ENOMEM;
	return wp_u64map_put(&t->dsos, d.dso, idx);
}

static int define_place(struct wp_stacktable *t, const struct perf_event_header *rec)
{
	struct wp_place_def d;
	struct wp_place pl = { .kind = WP_PLACE_UNKNOWN };
	uint64_t dso = WP_DSO_NONE;
	unsigned int n;
	uint32_t id;

	if (wp_place_def_parse(rec, &d))
		return -EBADMSG;
	if (d.kind <= WP_PLACE_UNKNOWN)
		pl.kind = d.kind;
	pl.activation = d.flags & WP_PLACE_ACTIVATION;
	pl.where = d.where;
	pl.addr = d.addr;
	pl.pgoff = d.pgoff;
	if (pl.kind == WP_PLACE_FILE) {
		/* A file the table never named: the frame shows as an address. */
		wp_u64map_get(&t->dsos, d.where, &dso);
		pl.where = (uint32_t)dso;
	}
	id = wp_resolver_intern(t->r, &pl);
	if (id == WP_NO_PLACE)
		return -ENOMEM;
	if (pl.kind == WP_PLACE_FILE && dso != WP_DSO_NONE && t->names &&
	    wp_placenames_get(t->names, d.place, t->frames, WP_PLACENAMES_MAX_FRAMES, &n)) {
		if (wp_u64map_put(&t->named, id, d.place) ||
		    wp_u64map_put(&t->named_files, dso, 1))
			return -ENOMEM;
	}
	return wp_u64map_put(&t->places, d.place, id);
}

static int define_stack(struct wp_stacktable *t, const struct perf_event_header *rec)
{
	struct wp_stack_def d;
	size_t n, at = t->nr_words;
	uint64_t id;

	if (wp_stack_def_parse(rec, &d))
		return -EBADMSG;
	if (d.nr_chain > WP_SSTACK_CHAIN || d.nr_user > WP_MAX_FRAMES)
		return -EBADMSG;
	n = (size_t)d.nr_chain + d.nr_user;
	if (WP_GROW(t->words, t->cap_words, at + HEAD_WORDS + n))
		return -ENOMEM;
	id = WP_NO_PLACE;
	if (d.ip != WP_NO_PLACE)
		wp_u64map_get(&t->places, d.ip, &id);
	t->words[at] = d.flags & WP_SSTACK_FLAGS;
	t->words[at + 1] = (uint32_t)id;
	t->words[at + 2] = (uint32_t)d.needed;
	t->words[at + 3] = (uint32_t)(d.needed >> 32);
	t->words[at + 4] = d.nr_chain;
	t->words[at + 5] = d.nr_user;
	for (size_t i = 0; i < n; i++) {
		id = WP_NO_PLACE;
		wp_u64map_get(&t->places, wp_stack_def_place(&d, (unsigned int)i), &id);
		t->words[at + HEAD_WORDS + i] = (uint32_t)id;
	}
	if (wp_u64map_put(&t->stacks, d.stack, at))
		return -ENOMEM;
	t->nr_words += HEAD_WORDS + n;
	return 0;
}

int wp_stacktable_define(struct wp_stacktable *t, const struct perf_event_header *rec)
{
	switch (rec->type) {
	case WP_RECORD_DSO:
		return define_dso(t, rec);
	case WP_RECORD_PLACE:
		return define_place(t, rec);
	case WP_RECORD_STACK:
		return define_stack(t, rec);
	}
	return -EBADMSG;
}

bool wp_stacktable_get(const struct wp_stacktable *t, uint32_t id, struct wp_sample_stack *out)
{
	const uint32_t *w;
	uint64_t at;

	if (!wp_u64map_get(&t->stacks, id, &at))
		return false;
	w = t->words + at;
	out->flags = w[0];
	out->ip = w[1];
	out->needed = w[2] | (uint64_t)w[3] << 32;
	out->nr_chain = w[4];
	out->nr_user = w[5];
	memcpy(out->chain, w + HEAD_WORDS, out->nr_chain * sizeof(*w));
	memcpy(out->user, w + HEAD_WORDS + out->nr_chain, out->nr_user * sizeof(*w));
	return true;
}

uint64_t wp_stacktable_count(const struct wp_stacktable *t)
{
	return t->stacks.len;
}

void wp_stacktable_free(struct wp_stacktable *t)
{
	if (!t)
		return;
	wp_u64map_release(&t->dsos);
	wp_u64map_release(&t->places);
	wp_u64map_release(&t->stacks);
	wp_u64map_release(&t->named);
	wp_u64map_release(&t->named_files);
	free(t->words);
	free(t);
}
