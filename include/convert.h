/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * convert.h: a raw recording rewritten with its stacks unwound.
 *
 *	reader -> time order -> liveunwind -> writer
 *
 * The output holds the same meta (flagged WP_META_STACK_TABLE, so format
 * version 2), every record but the samples unchanged, a stack table and
 * samples that reference it, and the input's kernel symbols, JIT names
 * and summary.  Owns every stage.
 */
#ifndef WALLPROF_CONVERT_H
#define WALLPROF_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "liveunwind.h"

struct wp_convert_opts {
	bool force;		/* replace an existing output file */
	int compress_level;	/* as wp_writer_open's */
};

struct wp_convert_result {
	uint64_t in_bytes, out_bytes;
	struct wp_liveunwind_stats stats;
	bool damaged;		/* the input ended in a damaged block: converted up to it */
};

/*
 * Convert the recording at in into a new file at out.  Returns 0 or
 * -errno (logged, one line; the output is then not left behind).
 */
int wp_convert_file(const char *in, const char *out, const struct wp_convert_opts *opts,
		    struct wp_convert_result *res);

#endif
