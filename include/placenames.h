/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placenames.h: the names of a stack table's places, saved in the file.
 *
 * A live recording (liveunwind.h) names the places its stack table uses
 * at its end, while the files are certainly there, and saves them in a
 * NAMES block (wallprof-data(5)), so that report needs neither the
 * binaries nor their debug information.  For each place of a file, by the
 * file's place id: its chain of frames, innermost first, each with the
 * function's name, where in the source the place is (file:line, for
 * report --lines), and what pprof describes a function with (its entry
 * and its source file and first line).  This is the block's codec: a
 * table filled place by place and encoded, or parsed from a block and
 * looked up.  Strings are stored once.  Owns its strings and frames.
 */
#ifndef WALLPROF_PLACENAMES_H
#define WALLPROF_PLACENAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define WP_PLACENAME_INLINED 1U	/* an inlined call */
#define WP_PLACENAME_UNNAMED 2U	/* no function name: name is file+offset */
#define WP_PLACENAME_FLAGS 3U
#define WP_PLACENAMES_MAX_FRAMES 64

/* One frame of a place, innermost first. */
struct wp_placename_frame {
	const char *name;	/* the function, demangled; without where */
	const char *where;	/* "file:line" of the code in it, or NULL */
	uint32_t flags;		/* WP_PLACENAME_* */
	uint32_t line;		/* the function's first source line, 0: unknown */
	uint64_t entry;		/* its entry, a file (ELF) address (unnamed: the address); 0: unknown */
	const char *src;	/* its source file, or NULL */
};

struct wp_placenames;

int wp_placenames_new(struct wp_placenames **out);

/*
 * Add the n frames (1..WP_PLACENAMES_MAX_FRAMES) of the file's place
 * place, copied.  0, -EINVAL (no frames, too many, a place added before),
 * -ENOMEM.
 */
int wp_placenames_add(struct wp_placenames *pn, uint32_t place,
		      const struct wp_placename_frame *frames, unsigned int n);

/* Append the NAMES block's payload.  0 or -ENOMEM. */
int wp_placenames_encode(const struct wp_placenames *pn, struct wp_buf *out);

/*
 * A table from a NAMES block's payload (len bytes, copied): 0, -EBADMSG
 * when anything in it is out of bounds or malformed (nothing is taken
 * then), -ENOMEM.
 */
int wp_placenames_parse(const void *buf, size_t len, struct wp_placenames **out);

/*
 * The frames of a place: true with *n frames in out (strings borrowed
 * from pn), false when pn has none for it or more than max.
 */
bool wp_placenames_get(const struct wp_placenames *pn, uint32_t place,
		       struct wp_placename_frame *out, unsigned int max, unsigned int *n);

/* Places, frames and distinct strings held. */
size_t wp_placenames_places(const struct wp_placenames *pn);
size_t wp_placenames_frames(const struct wp_placenames *pn);
size_t wp_placenames_strings(const struct wp_placenames *pn);

/* NULL is fine. */
void wp_placenames_free(struct wp_placenames *pn);

#endif
