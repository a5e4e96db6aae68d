/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strpool.h: interned strings with small integer ids.
 *
 * Frame names are interned once and referred to by id everywhere after
 * (stacks, caches, formatters).  Owns every string it holds.
 */
#ifndef WALLPROF_STRPOOL_H
#define WALLPROF_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

struct wp_strpool;

int wp_strpool_new(struct wp_strpool **out);

/* The id of s (added if new); UINT32_MAX when out of memory. */
uint32_t wp_strpool_intern(struct wp_strpool *sp, const char *s);

/* The string of an id, valid until wp_strpool_free. */
const char *wp_strpool_get(const struct wp_strpool *sp, uint32_t id);

size_t wp_strpool_count(const struct wp_strpool *sp);

void wp_strpool_free(struct wp_strpool *sp);

#endif
