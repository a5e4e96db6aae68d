/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-waits.h: what the report harnesses do with the waits of an
 * analysis kept with its timeline: the critical path of one thread over a
 * window, written in the formats that show one, and held to its promise:
 * segments back to back that add up to the window exactly (an input that
 * breaks it aborts, so that the fuzzer keeps it).
 */
#ifndef WALLPROF_FUZZ_WAITS_H
#define WALLPROF_FUZZ_WAITS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "account.h"
#include "analysis.h"
#include "critpath.h"
#include "format.h"
#include "view.h"
#include "waits.h"

/* The path of the pick-th thread (modulo their number) over [start, end]. */
static inline void fuzz_critical_path(const struct wp_analysis *an, const struct wp_view_opts *vo,
				      FILE *out, uint32_t pick, uint64_t start, uint64_t end)
{
	static const char *const shown[] = { "text", "json", "flamegraph", "trace" };
	const struct wp_thread_times *threads;
	struct wp_critpath cp;
	struct wp_waits w;
	struct wp_view v;
	uint64_t at;
	size_t n;

	threads = wp_account_threads(an->account, &n);
	if (!n || wp_waits_init(&w, an))
		return;
	if (!wp_critpath_compute(&w, threads[pick % n].serial, start, end, &cp)) {
		at = cp.start_ns;
		for (size_t i = 0; i < cp.nr_segs; i++) {
			if (cp.segs[i].start_ns != at || cp.segs[i].end_ns < at)
				abort();
			at = cp.segs[i].end_ns;
		}
		if (at != cp.end_ns || cp.start_ns > cp.end_ns)
			abort();
		if (!wp_view_init(&v, an, vo)) {
			v.critpath = &cp;
			v.waits = &w;
			for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
				wp_format_find(shown[i])->write(&v, out);
			wp_view_release(&v);
		}
		wp_critpath_release(&cp);
	}
	wp_waits_release(&w);
}

#endif
