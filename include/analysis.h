/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis.h: read a recording through the whole report pipeline
 * (reader -> time order -> accounting) into a model the formatters read.
 */
#ifndef WALLPROF_ANALYSIS_H
#define WALLPROF_ANALYSIS_H

#include <stdbool.h>
#include <stdint.h>

#include "account.h"
#include "datafile.h"

struct wp_analysis {
	struct wp_reader *reader;	/* owns meta */
	const struct wp_meta *meta;
	struct wp_account *account;
	struct wp_summary summary;	/* zeroed when the file has none */
	bool complete;			/* the file has its summary */
	bool damaged;			/* a corrupt block ended reading early */
	uint64_t start_ns, end_ns;	/* the recording window */
	uint64_t records;
	uint64_t out_of_order;		/* records older than one already seen */
};

/*
 * Run the pipeline over the file at path.  A damaged or incomplete file
 * still yields the figures up to the damage (and says so through
 * complete/damaged); errors that leave nothing to report return -errno,
 * logged.
 */
int wp_analysis_run(const char *path, struct wp_analysis *an);

void wp_analysis_release(struct wp_analysis *an);

#endif
