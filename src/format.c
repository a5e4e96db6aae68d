/* SPDX-License-Identifier: GPL-2.0-or-later */
/* format.c: the table of output formats. */
#include <string.h>

#include "format.h"

const struct wp_format wp_formats[] = {
	{ "text", wp_format_text, "threads' times, top stacks and wakers", false, false },
	{ "hist", wp_format_hist, "log2 histograms of run and wait lengths", false, false },
	{ "folded", wp_format_folded, "folded stacks for flame graph tools", false, false },
	{ "json", wp_format_json, "everything, for programs", false, false },
	{ "flamegraph", wp_format_flamegraph, "an interactive SVG flame graph, hot/cold", false,
	  false },
	{ "trace", wp_format_trace, "timeline of every thread for Perfetto UI", false, true },
	{ "pprof", wp_format_pprof, "gzipped profile.proto for pprof and fleet profilers", true,
	  false },
	{ "waitgraph", wp_format_waitgraph, "who waited for whom: the wait-for graph and its knots",
	  false, true },
	{ "waitgraph-dot", wp_format_waitgraph_dot, "the wait-for graph for Graphviz", false,
	  true },
	{ "waitgraph-svg", wp_format_waitgraph_svg, "the wait-for graph drawn as SVG", false,
	  true },
	{ "waitgraph-json", wp_format_waitgraph_json, "the wait-for graph as JSON", false, true },
	{ NULL, NULL, NULL, false, false },
};

bool wp_format_can_diff(const struct wp_format *f)
{
	return f->write == wp_format_text || f->write == wp_format_flamegraph;
}

const struct wp_format *wp_format_find(const char *name)
{
	for (const struct wp_format *f = wp_formats; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}
