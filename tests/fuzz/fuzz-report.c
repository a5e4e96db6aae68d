/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-report.c: the report pipeline on any bytes: the analysis of a data
 * file (time order, process maps, unwinding, symbols, accounting; see
 * analysis.h), then every output format to nowhere, unfiltered and once
 * more through a view of filters.  Whatever the bytes, it must end with an
 * error or the reports: no crash, no leak, no unbounded time or memory.
 *
 * The report options come from the input's last byte, so the fuzzer can
 * reach them and a corpus file always replays the same way; in a real
 * recording that byte is the summary's last, zero.
 */
#include <stdbool.h>

#include "analysis.h"
#include "format.h"
#include "fuzz.h"
#include "fuzz-waits.h"
#include "view.h"

static void format_all(const struct wp_analysis *an, const struct wp_view_opts *vo, FILE *out)
{
	struct wp_view v;

	if (wp_view_init(&v, an, vo))
		return;
	for (const struct wp_format *f = wp_formats; f->name; f++)
		f->write(&v, out);
	wp_view_release(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wp_view_opts plain = { .mode = WP_MODE_WALL, .sort = WP_SORT_WALL, .top = 10,
				      .unit_ns = 1000, .thread_root = true };
	struct wp_view_opts vo = plain;
	struct wp_analysis_opts ao = { 0 };
	uint8_t knobs = size ? data[size - 1] : 0;
	FILE *out = fuzz_sink();
	const char *path = fuzz_file(data, size);
	const struct wp_thread_times *threads;
	struct wp_analysis an;
	size_t nr_threads;
	pid_t pid;

	ao.lines = knobs & 1;
	ao.no_kernel = knobs & 2;
	ao.no_user = knobs & 4;
	if (knobs & 8) {
		ao.has_window = true;
		ao.window_start_s = 0.01;
		ao.window_end_s = 0.1;
	}
	ao.min_block_ns = knobs & 16 ? 100000 : 0;
	ao.frame_info = true;	/* every format is written, pprof among them */
	ao.keep_timeline = true;	/* the trace, the wait-for graph, the critical path */
	ao.no_cache = true;	/* the pipeline is fuzzed here, and no home written */
	if (wp_analysis_run(path, &ao, &an))
		return 0;
	format_all(&an, &plain, out);
	/* The last thread (the newest, as a path often follows), over its whole window. */
	fuzz_critical_path(&an, &plain, out, UINT32_MAX, 0, UINT64_MAX);

	vo.mode = (enum wp_mode)(knobs % 6);
	vo.sort = (enum wp_sort)((knobs >> 3) % 7);
	vo.wakers = knobs & 2;
	vo.waker_comm = knobs & 4 ? "\\[timer\\]|w.*" : NULL;
	vo.top = 1 + knobs % 3;
	vo.unit_ns = knobs & 32 ? 1 : 1000000;
	vo.thread_root = knobs & 64;
	vo.per_thread = true;
	vo.comm = knobs & 128 ? "^s" : "";
	vo.by = (enum wp_group_by)((knobs >> 1) % 3);
	vo.rows = knobs & 1 ? 2 : 0;	/* a cut table, or all of it */
	vo.mode_given = knobs & 16;	/* -a recordings: with the defaults or not */
	vo.grep = knobs & 32 ? "\\[k\\]|_" : NULL;
	/* The last thread's process: one that the filter finds. */
	threads = wp_account_threads(an.account, &nr_threads);
	if (nr_threads && knobs & 64) {
		pid = (pid_t)threads[nr_threads - 1].pid;
		vo.pids = &pid;
		vo.nr_pids = 1;
	}
	format_all(&an, &vo, out);
	wp_analysis_release(&an);
	return 0;
}
