/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sink.c: where a recording's records go; the plain data file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "closing.h"
#include "log.h"
#include "sink.h"
#include "util.h"

int wp_sink_start(struct wp_sink *k, const struct wp_meta *meta)
{
	return k->ops->start ? k->ops->start(k, meta) : 0;
}

int wp_sink_prelude(struct wp_sink *k, const void *buf, size_t len)
{
	return k->ops->prelude(k, buf, len);
}

int wp_sink_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
		    struct wp_sink_progress *p)
{
	struct wp_sink_progress ignored;

	if (!p)
		p = &ignored;
	*p = (struct wp_sink_progress){ 0 };
	return k->ops->records(k, buf, len, round_ns, p);
}

int wp_sink_request_dump(struct wp_sink *k, uint64_t now)
{
	return k->ops->request_dump ? k->ops->request_dump(k, now) : -EOPNOTSUPP;
}

int wp_sink_finish(struct wp_sink *k, struct wp_summary *whole)
{
	return k->ops->finish ? k->ops->finish(k, whole) : 0;
}

int wp_sink_written(struct wp_sink *k, struct wp_summary *c, uint64_t *until_ns)
{
	return k->ops->written ? k->ops->written(k, c, until_ns) : -ENODATA;
}

int wp_sink_end(struct wp_sink *k, struct wp_summary *whole, int *write_err)
{
	return k->ops->end(k, whole, write_err);
}

unsigned int wp_sink_files(const struct wp_sink *k, const char **first, const char **last)
{
	return k->ops->files(k, first, last);
}

uint64_t wp_sink_bytes(const struct wp_sink *k)
{
	return k->ops->bytes(k);
}

void wp_sink_free(struct wp_sink *k)
{
	if (k)
		k->ops->free(k);
}

/* The plain sink: one file, written as the records come. */
struct file_sink {
	struct wp_sink sink;
	struct wp_writer *w;		/* until committed */
	const char *path;		/* -o, borrowed */
	char *where;			/* the committed file's name */
	uint64_t bytes;			/* once committed */
};

static struct file_sink *file_of(const struct wp_sink *k)
{
	return (struct file_sink *)k;
}

static int file_start(struct wp_sink *k, const struct wp_meta *meta)
{
	return wp_writer_write_meta(file_of(k)->w, meta);
}

static int file_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
			struct wp_sink_progress *p)
{
	struct file_sink *f = file_of(k);
	int err;

	(void)round_ns;		/* one file: every record goes in */
	err = wp_writer_write_records(f->w, buf, len);
	p->kept = wp_writer_kept(f->w);
	p->bytes = wp_writer_bytes(f->w);
	return err;
}

static int file_prelude(struct wp_sink *k, const void *buf, size_t len)
{
	return wp_writer_write_records(file_of(k)->w, buf, len);
}

static int file_end(struct wp_sink *k, struct wp_summary *whole, int *write_err)
{
	struct file_sink *f = file_of(k);
	int err = 0;

	if (k->closing)
		err = wp_closing_write(k->closing, f->w);
	else
		wp_writer_closing(f->w);
	if (err && !*write_err) {
		if (!wp_writer_error(f->w))
			wp_error("cannot save the build IDs, kernel and JIT symbols: %s",
				 strerror(-err));
		*write_err = err;
		/* The recording ends where the error cut it: here. */
		whole->stop_reason = WP_STOP_ERROR;
		whole->cut_short_errno = (uint32_t)-err;
	}
	/* Without its summary the file still reads, as a recording that did not finish. */
	err = wp_writer_write_summary(f->w, whole);
	if (err && !*write_err)
		*write_err = err;
	/* Commit first, then talk: from here on the data is never deleted. */
	f->bytes = wp_writer_bytes(f->w);
	err = wp_writer_commit_where(f->w, &f->where);
	f->w = NULL;
	return err;
}

static unsigned int file_files(const struct wp_sink *k, const char **first, const char **last)
{
	const struct file_sink *f = file_of(k);

	/* A file that could not be renamed is still said where it was asked for. */
	*first = *last = f->where ? f->where : f->path;
	return 1;
}

static uint64_t file_bytes(const struct wp_sink *k)
{
	const struct file_sink *f = file_of(k);

	return f->w ? wp_writer_bytes(f->w) : f->bytes;
}

static void file_free(struct wp_sink *k)
{
	struct file_sink *f = file_of(k);

	wp_writer_abort(f->w);
	free(f->where);
	free(f);
}

static const struct wp_sink_ops file_ops = {
	.start = file_start,
	.prelude = file_prelude,
	.records = file_records,
	.end = file_end,
	.files = file_files,
	.bytes = file_bytes,
	.free = file_free,
};

int wp_file_sink_open(const char *path, bool force, int compress_level,
		      struct wp_closing *closing, struct wp_sink **out)
{
	struct file_sink *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	err = wp_writer_open(path, force, compress_level, &f->w);
	if (err) {
		free(f);
		return err;
	}
	f->sink = (struct wp_sink){ .ops = &file_ops, .closing = closing };
	f->path = path;
	*out = &f->sink;
	return 0;
}
