/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format.h: output formats.  Each reads the analysis model and writes to
 * a FILE; none re-derives a number the accounting already holds.
 */
#ifndef WALLPROF_FORMAT_H
#define WALLPROF_FORMAT_H

#include <stdio.h>

#include "analysis.h"

/* The text report: header, per-process and per-thread times, footer. */
int wp_format_text(const struct wp_analysis *an, FILE *out);

#endif
