/* SPDX-License-Identifier: GPL-2.0-or-later */
/* placenames.c: the NAMES block: places' chains of frames, and their strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placenames.h"
#include "strpool.h"
#include "u64map.h"

#define NO_STRING UINT32_MAX

/* The block's layout (wallprof-data(5)): a header, places, frames, strings. */
struct names_header {
	uint32_t nr_places;
	uint32_t nr_frames;
	uint32_t nr_strings;
	uint32_t reserved;
	uint64_t strings_size;
};

struct names_place {
	uint32_t place;		/* the file's place id */
	uint32_t first;		/* its first frame; it has those up to the next place's */
};

struct names_frame {
	uint32_t flags;
	uint32_t name, where, src;	/* string indexes, or NO_STRING (not name) */
	uint32_t line;
	uint32_t reserved;
	uint64_t entry;
};

struct wp_placenames {
	struct names_place *places;
	size_t nr_places, cap_places;
	struct names_frame *frames;
	size_t nr_frames, cap_frames;
	struct wp_u64map index;		/* place -> its index in places */
	struct wp_strpool *pool;	/* strings being added, or NULL */
	char *strings;			/* strings parsed, NUL-separated */
	uint32_t *string_at;		/* where each parsed string starts */
	size_t nr_strings;
};

int wp_placenames_new(struct wp_placenames **out)
{
	struct wp_placenames *pn = calloc(1, sizeof(*pn));
	int err;

	*out = NULL;
	if (!pn)
		return -ENOMEM;
	err = wp_strpool_new(&pn->pool);
	if (err) {
		free(pn);
		return err;
	}
	*out = pn;
	return 0;
}

static const char *string_of(const struct wp_placenames *pn, uint32_t id)
{
	if (id == NO_STRING)
		return NULL;
	return pn->pool ? wp_strpool_get(pn->pool, id) : pn->strings + pn->string_at[id];
}

static int intern(struct wp_placenames *pn, const char *s, uint32_t *id)
{
	*id = NO_STRING;
	if (!s)
		return 0;
	*id = wp_strpool_intern(pn->pool, s);
	return *id == NO_STRING ? -ENOMEM : 0;
}

int wp_placenames_add(struct wp_placenames *pn, uint32_t place,
		      const struct wp_placename_frame *frames, unsigned int n)
{
	size_t at = pn->nr_frames;
	int err = 0;

	if (!pn->pool || !n || n > WP_PLACENAMES_MAX_FRAMES || !frames[0].name ||
	    wp_u64map_get(&pn->index, place, NULL) || at + n > UINT32_MAX)
		return -EINVAL;
	if (WP_GROW(pn->frames, pn->cap_frames, at + n) ||
	    WP_GROW(pn->places, pn->cap_places, pn->nr_places + 1))
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		struct names_frame *f = &pn->frames[at + i];

		if (!frames[i].name)
			return -EINVAL;
		memset(f, 0, sizeof(*f));
		f->flags = frames[i].flags & WP_PLACENAME_FLAGS;
		f->line = frames[i].line;
		f->entry = frames[i].entry;
		err = intern(pn, frames[i].name, &f->name);
		if (!err)
			err = intern(pn, frames[i].where, &f->where);
		if (!err)
			err = intern(pn, frames[i].src, &f->src);
		if (err)
			return err;
	}
	if (wp_u64map_put(&pn->index, place, pn->nr_places))
		return -ENOMEM;
	pn->places[pn->nr_places++] = (struct names_place){ .place = place, .first = (uint32_t)at };
	pn->nr_frames += n;
	return 0;
}

int wp_placenames_encode(const struct wp_placenames *pn, struct wp_buf *out)
{
	struct names_header h = {
		.nr_places = (uint32_t)pn->nr_places,
		.nr_frames = (uint32_t)pn->nr_frames,
		.nr_strings = (uint32_t)wp_placenames_strings(pn),
	};
	size_t pad;
	int err;

	for (uint32_t i = 0; i < h.nr_strings; i++)
		h.strings_size += strlen(string_of(pn, i)) + 1;
	err = wp_buf_append(out, &h, sizeof(h));
	if (!err)
		err = wp_buf_append(out, pn->places, pn->nr_places * sizeof(*pn->places));
	if (!err)
		err = wp_buf_append(out, pn->frames, pn->nr_frames * sizeof(*pn->frames));
	for (uint32_t i = 0; !err && i < h.nr_strings; i++) {
		const char *s = string_of(pn, i);

		err = wp_buf_append(out, s, strlen(s) + 1);
	}
	/* The block's payload ends on an 8-byte boundary, as every part of the file. */
	pad = (8 - h.strings_size % 8) % 8;
	if (!err && pad)
		err = wp_buf_append(out, "\0\0\0\0\0\0\0", pad);
	return err;
}

static bool string_ok(const struct wp_placenames *pn, uint32_t id, bool needed)
{
	return id == NO_STRING ? !needed : id < pn->nr_strings;
}

int wp_placenames_parse(const void *buf, size_t len, struct wp_placenames **out)
{
	const uint8_t *p = buf;
	struct wp_placenames *pn;
	struct names_header h;
	size_t places_at, frames_at, strings_at, pos;
	int err = -EBADMSG;

	*out = NULL;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	places_at = sizeof(h);
	frames_at = places_at + (size_t)h.nr_places * sizeof(struct names_place);
	strings_at = frames_at + (size_t)h.nr_frames * sizeof(struct names_frame);
	/* Every count is bounded by the bytes that would hold it. */
	if (h.nr_places > len / sizeof(struct names_place) ||
	    h.nr_frames > len / sizeof(struct names_frame) || strings_at > len ||
	    h.strings_size > len - strings_at || h.nr_strings > h.strings_size ||
	    (h.nr_places && !h.nr_frames))
		return -EBADMSG;
	pn = calloc(1, sizeof(*pn));
	if (!pn)
		return -ENOMEM;
	pn->nr_places = h.nr_places;
	pn->nr_frames = h.nr_frames;
	pn->nr_strings = h.nr_strings;
	pn->places = malloc(pn->nr_places * sizeof(*pn->places) + 1);
	pn->frames = malloc(pn->nr_frames * sizeof(*pn->frames) + 1);
	pn->strings = malloc(h.strings_size + 1);
	pn->string_at = malloc(pn->nr_strings * sizeof(*pn->string_at) + 1);
	if (!pn->places || !pn->frames || !pn->strings || !pn->string_at) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(pn->places, p + places_at, pn->nr_places * sizeof(*pn->places));
	memcpy(pn->frames, p + frames_at, pn->nr_frames * sizeof(*pn->frames));
	memcpy(pn->strings, p + strings_at, h.strings_size);
	/* Strings: exactly nr_strings of them, each ended by a NUL. */
	pos = 0;
	for (size_t i = 0; i < pn->nr_strings; i++) {
		const char *end = memchr(pn->strings + pos, '\0', h.strings_size - pos);

		if (!end)
			goto out;
		pn->string_at[i] = (uint32_t)pos;
		pos = (size_t)(end - pn->strings) + 1;
	}
	if (pos != h.strings_size)
		goto out;
	for (size_t i = 0; i < pn->nr_frames; i++) {
		const struct names_frame *f = &pn->frames[i];

		if ((f->flags & ~WP_PLACENAME_FLAGS) || !string_ok(pn, f->name, true) ||
		    !string_ok(pn, f->where, false) || !string_ok(pn, f->src, false))
			goto out;
	}
	/* Each place has at least one frame, at most the most a chain may have. */
	for (size_t i = 0; i < pn->nr_places; i++) {
		uint32_t end = i + 1 < pn->nr_places ? pn->places[i + 1].first
						     : (uint32_t)pn->nr_frames;

		if ((!i && pn->places[i].first) || end <= pn->places[i].first ||
		    end > pn->nr_frames || end - pn->places[i].first > WP_PLACENAMES_MAX_FRAMES)
			goto out;
		if (wp_u64map_get(&pn->index, pn->places[i].place, NULL))
			goto out;
		if (wp_u64map_put(&pn->index, pn->places[i].place, i)) {
			err = -ENOMEM;
			goto out;
		}
	}
	*out = pn;
	return 0;
out:
	wp_placenames_free(pn);
	return err;
}

bool wp_placenames_get(const struct wp_placenames *pn, uint32_t place,
		       struct wp_placename_frame *out, unsigned int max, unsigned int *n)
{
	uint64_t i;
	size_t first, end;

	if (!wp_u64map_get(&pn->index, place, &i))
		return false;
	first = pn->places[i].first;
	end = i + 1 < pn->nr_places ? pn->places[i + 1].first : pn->nr_frames;
	if (end - first > max)
		return false;
	*n = (unsigned int)(end - first);
	for (size_t k = first; k < end; k++) {
		const struct names_frame *f = &pn->frames[k];

		out[k - first] = (struct wp_placename_frame){
			.name = string_of(pn, f->name), .where = string_of(pn, f->where),
			.flags = f->flags, .line = f->line, .entry = f->entry,
			.src = string_of(pn, f->src),
		};
	}
	return true;
}

size_t wp_placenames_places(const struct wp_placenames *pn)
{
	return pn->nr_places;
}

size_t wp_placenames_frames(const struct wp_placenames *pn)
{
	return pn->nr_frames;
}

size_t wp_placenames_strings(const struct wp_placenames *pn)
{
	return pn->pool ? wp_strpool_count(pn->pool) : pn->nr_strings;
}

void wp_placenames_free(struct wp_placenames *pn)
{
	if (!pn)
		return;
	free(pn->places);
	free(pn->frames);
	wp_u64map_release(&pn->index);
	wp_strpool_free(pn->pool);
	free(pn->strings);
	free(pn->string_at);
	free(pn);
}
