/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump.h: `wallprof report --dump`: every record of a data file, one line
 * each, so a recording can be checked before any analysis.
 */
#ifndef WALLPROF_DUMP_H
#define WALLPROF_DUMP_H

#include <stdio.h>

/*
 * Print the header and every record of the file at path to out.  Returns
 * 0, or -errno after logging what went wrong (records before a corrupt
 * block are still printed).
 */
int wp_dump_file(const char *path, FILE *out);

#endif
