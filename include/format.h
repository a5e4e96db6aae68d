/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format.h: output formats.  Each reads the analysis model and writes to
 * a FILE; none re-derives a number the accounting already holds.
 */
#ifndef WALLPROF_FORMAT_H
#define WALLPROF_FORMAT_H

#include <stdio.h>

#include "analysis.h"
#include "view.h"

/* The text report: header, per-process and per-thread times, top stacks, footer. */
int wp_format_text(struct wp_view *v, FILE *out);

/* Folded stacks: "root;outer;...;leaf weight" lines. */
int wp_format_folded(struct wp_view *v, FILE *out);

/* log2 histograms of on-CPU slices, off-CPU intervals and preemption waits. */
int wp_format_hist(struct wp_view *v, FILE *out);

/* JSON: header, threads, top stacks (schema in wallprof-report(1)). */
int wp_format_json(struct wp_view *v, FILE *out);

#endif
