/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stacks.h: interned stacks of frame tokens (see symbols.h), innermost
 * frame first.  Equal stacks get the same id, so memory grows with the
 * number of distinct stacks, not with the number of samples.
 */
#ifndef WALLPROF_STACKS_H
#define WALLPROF_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct wp_stacks;

int wp_stacks_new(struct wp_stacks **out);

/* The id of this stack (added if new); UINT32_MAX when out of memory. */
uint32_t wp_stacks_intern(struct wp_stacks *st, const uint32_t *frames, unsigned int n);

/* The frames of a stack, innermost first; valid until wp_stacks_free. */
const uint32_t *wp_stacks_get(const struct wp_stacks *st, uint32_t id, unsigned int *n);

size_t wp_stacks_count(const struct wp_stacks *st);

void wp_stacks_free(struct wp_stacks *st);

#endif
