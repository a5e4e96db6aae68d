/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump.h: `wallprof report --dump`: every record of a data file, one line
 * each, so a recording can be checked before any analysis.
 */
#ifndef WALLPROF_DUMP_H
#define WALLPROF_DUMP_H

#include <stdio.h>

struct wp_reader;

/*
 * Print the header and every record of an open data file (path names it in
 * messages) to out.  Returns 0, or -errno after logging what went wrong
 * (records before a corrupt block are still printed).  r stays the
 * caller's.
 */
int wp_dump_reader(struct wp_reader *r, const char *path, FILE *out);

#endif
