/* SPDX-License-Identifier: GPL-2.0-or-later */
/* convert.c: reader -> order -> liveunwind -> writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert.h"
#include "datafile.h"
#include "log.h"
#include "order.h"
#include "quote.h"
#include "util.h"

/* Records written a block at a time, each followed by a ROUND. */
#define BLOCK_BYTES (1U << 20)

struct conversion {
	struct wp_liveunwind *lu;
	struct wp_writer *w;
	struct wp_buf buf;
};

static int flush(struct conversion *c)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	int err;

	if (!c->buf.len)
		return 0;
	/* Everything before it is in time order: report's queue may release it. */
	err = wp_buf_append(&c->buf, &round, sizeof(round));
	if (!err)
		err = wp_writer_write_records(c->w, c->buf.data, c->buf.len);
	c->buf.len = 0;
	return err;
}

static int deliver(const struct perf_event_header *rec, const struct wp_sample *s,
		   uint64_t time, void *arg)
{
	struct conversion *c = arg;
	int err;

	(void)s;
	err = wp_liveunwind_record(c->lu, rec, time, &c->buf);
	if (!err && c->buf.len >= BLOCK_BYTES)
		err = flush(c);
	return err;
}

/* The names of the table's places, on the machine that converts. */
static int write_names(struct conversion *c)
{
	struct wp_buf names = { 0 };
	int err = wp_liveunwind_names(c->lu, &names);

	if (!err)
		err = wp_writer_write_names(c->w, names.data, names.len);
	wp_buf_release(&names);
	return err;
}

/*
 * The KSYMS and JITMAP blocks, as they are.  A damaged one (or one larger
 * than any recording writes) is left out, as report would ignore it.
 */
static int copy_texts(struct wp_reader *r, struct wp_writer *w, const char *in)
{
	char *text = NULL;
	size_t len;
	int err;

	err = wp_reader_ksyms(r, &text, &len);
	if (err == -EBADMSG) {
		wp_warn("the saved kernel symbols of '%s' are damaged: left out", wp_quoted(in));
		err = 0;
	}
	if (!err && text)
		err = wp_writer_write_ksyms(w, text, len);
	free(text);
	text = NULL;
	if (!err)
		err = wp_reader_jitmap(r, &text, &len);
	if (err == -EBADMSG) {
		wp_warn("the saved JIT names of '%s' are damaged: left out", wp_quoted(in));
		err = 0;
	}
	if (!err && text)
		err = wp_writer_write_jitmap(w, text, len);
	free(text);
	return err;
}

int wp_convert_file(const char *in, const char *out, const struct wp_convert_opts *opts,
		    struct wp_convert_result *res)
{
	struct conversion c = { 0 };
	const struct perf_event_header *rec;
	struct wp_reader *r = NULL;
	struct wp_order *order = NULL;
	struct wp_sample_format fmt;
	struct wp_meta meta;
	struct stat st;
	uint64_t end;
	int err, ret;

	memset(res, 0, sizeof(*res));
	err = wp_reader_open(in, &r);
	if (err)
		return err;
	meta = *wp_reader_meta(r);
	if (meta.flags & WP_META_STACK_TABLE) {
		wp_error("'%s' holds unwound stacks already: it needs no conversion",
			 wp_quoted(in));
		err = -EINVAL;
		goto out;
	}
	if (!stat(in, &st))
		res->in_bytes = (uint64_t)st.st_size;
	wp_sample_format_init(&fmt, meta.sample_type, meta.regs_mask);
	err = wp_liveunwind_new(&meta, &c.lu);
	if (!err)
		err = wp_order_new(&fmt, deliver, &c, (wp_order_release_fn)wp_block_put, &order);
	if (!err)
		err = wp_writer_open(out, opts->force, opts->compress_level, &c.w);
	if (err)
		goto out;
	meta.flags |= WP_META_STACK_TABLE;
	err = wp_writer_write_meta(c.w, &meta);
	if (err)
		goto out;
	end = wp_reader_end_ns(r);
	wp_order_set_span(order, meta.start_clock_ns, end ? end : INT64_MAX);
	while ((ret = wp_reader_next(r, &rec)) > 0) {
		struct wp_block_ref *hold = NULL;

		if (rec->type != WP_RECORD_ROUND)
			hold = wp_reader_block_get(r);
		err = wp_order_push(order, rec, hold, wp_block_bytes(hold));
		if (err)
			goto out;
	}
	if (ret == -ENOMEM) {
		err = ret;
		goto out;
	}
	res->damaged = ret < 0;
	err = wp_order_flush(order);
	if (!err)
		err = flush(&c);
	if (!err)
		err = copy_texts(r, c.w, in);
	if (!err)
		err = write_names(&c);
	if (!err && wp_reader_summary(r))
		err = wp_writer_write_summary(c.w, wp_reader_summary(r));
	if (err)
		goto out;
	res->out_bytes = wp_writer_bytes(c.w);
	res->stats = *wp_liveunwind_stats(c.lu);
	err = wp_writer_commit(c.w);
	c.w = NULL;
out:
	if (err == -EPROTO)
		wp_error("'%s' mixes raw samples with unwound ones: it cannot be converted",
			 wp_quoted(in));
	else if (err == -ENOMEM)
		wp_error("out of memory converting '%s'", wp_quoted(in));
	wp_writer_abort(c.w);
	wp_order_free(order);
	wp_liveunwind_free(c.lu);
	wp_buf_release(&c.buf);
	wp_reader_close(r);
	return err;
}
