/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sink.h: where a recording's records go.
 *
 * Owns the interface of every destination of the records: the plain data
 * file (wp_file_sink_open, here), the files of --rotate and
 * --flight-recorder (rotate.h), and the live unwinder in front of any
 * of them (livestage.h).  Record hands a sink, in this order: the
 * records every file begins with (prelude), the records in drain order,
 * with the start of the last drain pass they complete (records: the
 * drain's writer thread, or the caller before the drain's writer is let
 * go), the end of the records (finish), and the end of the recording
 * (end: each file's closing blocks, closing.h, its summary, its name).
 * It never asks which sink it has.  A sink that wraps another owns it.
 */
#ifndef WALLPROF_SINK_H
#define WALLPROF_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datafile.h"

struct wp_closing;
struct wp_sink;

/* What a block of records did to the files (wp_sink_records). */
struct wp_sink_progress {
	uint64_t bytes;		/* of all the files so far; 0 when another thread writes */
	/*
	 * After an error: the bytes of the block the file holds (the plain
	 * file keeps what fits); 0 for sinks whose files hold whole blocks.
	 */
	size_t kept;
};

struct wp_sink_ops {
	/* NULL: started as made (a stage in front of another). */
	int (*start)(struct wp_sink *k, const struct wp_meta *meta);
	int (*prelude)(struct wp_sink *k, const void *buf, size_t len);
	int (*records)(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
		       struct wp_sink_progress *p);
	/* NULL: the sink keeps nothing to write on request. */
	int (*request_dump)(struct wp_sink *k, uint64_t now);
	/* NULL: nothing waits. */
	int (*finish)(struct wp_sink *k, struct wp_summary *whole);
	/* NULL: the writes' own errors and progress say what the files hold. */
	int (*written)(struct wp_sink *k, struct wp_summary *c, uint64_t *until_ns);
	int (*end)(struct wp_sink *k, struct wp_summary *whole, int *write_err);
	unsigned int (*files)(const struct wp_sink *k, const char **first, const char **last);
	uint64_t (*bytes)(const struct wp_sink *k);
	void (*free)(struct wp_sink *k);
};

/* Embedded first in each implementation's own state. */
struct wp_sink {
	const struct wp_sink_ops *ops;
	/* The closing blocks of its files (closing.h), or NULL for none. */
	struct wp_closing *closing;
	/*
	 * Its files say so themselves when a write error cut one short, as
	 * they close (a rotating recording's); else the recording's last line
	 * says it of its one file.
	 */
	bool says_cut;
};

/*
 * The recording's meta (borrowed until wp_sink_free()), before any
 * record: a file's is written (the first file's, rotating).  0 or -errno.
 */
int wp_sink_start(struct wp_sink *k, const struct wp_meta *meta);

/*
 * Records that every file begins with (trace formats, ATTACH), given
 * before any other.  0 or -errno.
 */
int wp_sink_prelude(struct wp_sink *k, const void *buf, size_t len);

/*
 * Whole records in drain order.  round_ns: the start of the last drain
 * pass whose ROUND record buf holds (CLOCK_MONOTONIC; 0 for none): every
 * record dated before it is in buf or was given before.  p may be NULL.
 * 0 or -errno (a write error: the files hold what came before).
 */
int wp_sink_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
		    struct wp_sink_progress *p);

/*
 * Ask for a file of the records kept up to now (CLOCK_MONOTONIC), written
 * once every record dated before now has come: 0, or -EOPNOTSUPP from a
 * sink that keeps none (only the flight recorder does).  Thread safe.
 */
int wp_sink_request_dump(struct wp_sink *k, uint64_t now);

/*
 * Every record is given: write what waits (the live unwinder's queue)
 * and add what the sink counted to whole (raw_samples).  0 or the first
 * error.
 */
int wp_sink_finish(struct wp_sink *k, struct wp_summary *whole);

/*
 * After a write error that came to light on another thread than the
 * records' (a stage in front of the files writes them later): the
 * records the files hold, counted into c as the drain counts them
 * (wp_summary_count's fields only), and the time up to which they hold
 * every record.  0; -ENODATA when there was no such error, or the sink's
 * writes said it themselves (wp_sink_progress).  Thread safe.
 */
int wp_sink_written(struct wp_sink *k, struct wp_summary *c, uint64_t *until_ns);

/*
 * The end of the recording: the files closed, with their closing blocks
 * and a summary whose end, stop reason and counts are whole's.  A write
 * error that cuts the recording short (the closing blocks', the
 * summary's) is said and set in *write_err when it holds none yet (and
 * whole then says so); returns it, or an error that lost nothing of the
 * records (the rename of a complete file).
 */
int wp_sink_end(struct wp_sink *k, struct wp_summary *whole, int *write_err);

/* Files written, and the first and last names (NULL for none); after wp_sink_end(). */
unsigned int wp_sink_files(const struct wp_sink *k, const char **first, const char **last);

/* Bytes of all the files. */
uint64_t wp_sink_bytes(const struct wp_sink *k);

/* Free the sink (and the one it wraps); files not ended are removed.  NULL is fine. */
void wp_sink_free(struct wp_sink *k);

/*
 * The plain sink: one data file at path (-o, as wp_writer_open takes it),
 * closed with closing's blocks (closing.h; NULL: none).  0 or -errno
 * (logged).
 */
int wp_file_sink_open(const char *path, bool force, int compress_level,
		      struct wp_closing *closing, struct wp_sink **out);

#endif
