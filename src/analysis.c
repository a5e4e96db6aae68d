/* SPDX-License-Identifier: GPL-2.0-or-later */
/* analysis.c: reader -> order -> account, for the report formatters. */
#include <errno.h>
#include <string.h>

#include "analysis.h"
#include "log.h"
#include "order.h"

struct pipeline {
	struct wp_analysis *an;
	uint64_t last_time;
};

static int deliver(const struct perf_event_header *rec, uint64_t time, void *arg)
{
	struct pipeline *p = arg;

	if (time > p->last_time)
		p->last_time = time;
	p->an->records++;
	return wp_account_record(p->an->account, rec, time);
}

int wp_analysis_run(const char *path, struct wp_analysis *an)
{
	const struct perf_event_header *rec;
	struct wp_sample_format fmt;
	struct pipeline p = { .an = an };
	struct wp_order *order = NULL;
	int err, ret;

	memset(an, 0, sizeof(*an));
	err = wp_reader_open(path, &an->reader);
	if (err)
		return err;
	an->meta = wp_reader_meta(an->reader);
	wp_sample_format_init(&fmt, an->meta->sample_type, an->meta->regs_mask);
	err = wp_account_new(an->meta, &an->account);
	if (!err)
		err = wp_order_new(&fmt, deliver, &p, &order);
	if (err)
		goto out;
	an->start_ns = an->meta->start_clock_ns;
	p.last_time = an->start_ns;
	while ((ret = wp_reader_next(an->reader, &rec)) > 0) {
		err = wp_order_push(order, rec);
		if (err)
			goto out;
	}
	if (ret < 0)
		an->damaged = true;
	err = wp_order_flush(order);
	if (err)
		goto out;
	an->out_of_order = wp_order_late(order);
	if (wp_reader_summary(an->reader)) {
		an->summary = *wp_reader_summary(an->reader);
		an->complete = true;
		an->end_ns = an->summary.end_clock_ns;
	} else {
		an->end_ns = p.last_time;
		if (!an->damaged)
			wp_warn("'%s' has no summary: the recording did not finish; "
				"figures end at its last record", path);
	}
	wp_account_finish(an->account, an->end_ns);
out:
	wp_order_free(order);
	if (err) {
		if (err == -ENOMEM)
			wp_error("out of memory reading '%s'", path);
		wp_analysis_release(an);
	}
	return err;
}

void wp_analysis_release(struct wp_analysis *an)
{
	wp_account_free(an->account);
	wp_reader_close(an->reader);
	memset(an, 0, sizeof(*an));
}
