/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format.h: output formats.  Each reads the analysis model and writes to
 * a FILE; none re-derives a number the accounting already holds.
 *
 * wp_formats (format.c) is the one list of them: report's --format, its
 * --help and its errors read it, and the completion and the man page test
 * read it through `wallprof report --format help`.  A new format is a
 * src/format_<name>.c, a row there, and its section in wallprof-report(1).
 */
#ifndef WALLPROF_FORMAT_H
#define WALLPROF_FORMAT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis.h"
#include "view.h"

struct wp_buf;

/* The text report: header, per-process and per-thread times, top stacks, footer. */
int wp_format_text(struct wp_view *v, FILE *out);

/* Folded stacks: "root;outer;...;leaf weight" lines. */
int wp_format_folded(struct wp_view *v, FILE *out);

/*
 * One frame of a folded line, appended to b after a ';' (when b is not
 * empty), quoted, with FlameGraph's _[k] or _[i] by the token's
 * WP_FRAME_KERNEL and WP_FRAME_INLINED bits: the folded format's own,
 * for folded lines made elsewhere (report --from).  The stack_frame form
 * is for a stack's frames (it renames the off-CPU pseudo-frames).
 */
void wp_folded_frame(struct wp_buf *b, const char *name, uint32_t token);
void wp_folded_stack_frame(struct wp_buf *b, const char *name, uint32_t token);

/* log2 histograms of on-CPU slices, off-CPU intervals and preemption waits. */
int wp_format_hist(struct wp_view *v, FILE *out);

/* JSON: header, threads, top stacks (schema in wallprof-report(1)). */
int wp_format_json(struct wp_view *v, FILE *out);

/* An interactive SVG flame graph, hot/cold in wall mode, script inside. */
int wp_format_flamegraph(struct wp_view *v, FILE *out);

/* With v->base (--diff): the functions whose share of the time grew and shrank most. */
int wp_format_text_diff(struct wp_view *v, FILE *out);
/*
 * Chrome trace-event JSON (Perfetto UI, chrome://tracing): every period of
 * every shown thread, from a second pass over v->an's recording.
 */
int wp_format_trace(struct wp_view *v, FILE *out);
/* pprof's profile.proto, gzipped: samples per stack, thread and kind of time. */
int wp_format_pprof(struct wp_view *v, FILE *out);

/*
 * The wait-for graph (waitgraph.h): as text, DOT, an SVG drawn by wallprof
 * and JSON; from a second look at the timeline the analysis kept.
 */
int wp_format_waitgraph(struct wp_view *v, FILE *out);
int wp_format_waitgraph_dot(struct wp_view *v, FILE *out);
int wp_format_waitgraph_svg(struct wp_view *v, FILE *out);
int wp_format_waitgraph_json(struct wp_view *v, FILE *out);

/*
 * --critical-path (critpath.h, v->critpath): the path by thread, state
 * and stack, in time order (text); and its JSON member (in --format json).
 */
int wp_format_critpath_text(struct wp_view *v, FILE *out);
void wp_format_critpath_json(const struct wp_view *v, FILE *out);

/* JSON helpers of these: a stack's frames, and a waker's fields (waits.h). */
struct wp_waits;
void wp_json_frames(FILE *out, const struct wp_analysis *an, uint32_t stack);
void wp_json_waker(FILE *out, const struct wp_waits *w, uint32_t waker);

/* An output format: the word --format takes, its writer, one line for --help. */
struct wp_format {
	const char *name;
	int (*write)(struct wp_view *v, FILE *out);
	const char *help;
	bool frame_info;	/* needs wp_analysis_opts.frame_info */
	bool timeline;		/* needs wp_analysis_opts.keep_timeline */
};

/* Every format, the default (text) first; a row with a NULL name ends it. */
extern const struct wp_format wp_formats[];

/* The format called name, or NULL. */
const struct wp_format *wp_format_find(const char *name);

/* Whether a format compares two recordings (--diff): text and flamegraph. */
bool wp_format_can_diff(const struct wp_format *f);

#endif
