/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export_clickhouse.h: recordings into ClickHouse, over its HTTP interface.
 *
 * Owns the connection to one server (a libcurl handle), the tables'
 * schema (wallprof-export(1) documents it), the identity of a file (a
 * hash of its bytes) and the rows made from an analysis: the ledger of
 * every thread, every stack weight by kind (and, for blocked time, by
 * waker), and the stacks themselves, keyed by a hash of their frames
 * that is the same on every host.  It reads the model that the report's
 * formats read (analysis.h, view.h) and derives nothing of its own.
 *
 * A file goes in at most once: its rows carry its id, each table's rows
 * of a file are one INSERT (one block, which ClickHouse writes whole or
 * not at all), a table that holds them already is skipped, and the
 * files table, written last, says the file is complete.  Stacks already
 * in the server are not sent again.
 */
#ifndef WALLPROF_EXPORT_CLICKHOUSE_H
#define WALLPROF_EXPORT_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "view.h"

/* The id of a file: 32 hex digits of a 128-bit hash of its bytes, and a NUL. */
#define WP_CH_FILE_ID_SIZE 33

/* At most this many --label pairs, each key and value at most WP_CH_LABEL_MAX bytes. */
#define WP_CH_LABELS_MAX 64
#define WP_CH_LABEL_MAX 256

struct wp_ch_label {
	const char *key, *value;
};

/* What every row of one export says besides the recording's own figures. */
struct wp_ch_source {
	const char *host;		/* NULL: the recording's host name */
	const struct wp_ch_label *labels;
	size_t nr_labels;
	const char *path;		/* the file, as named to export */
	char file_id[WP_CH_FILE_ID_SIZE];
};

struct wp_ch;

/*
 * A connection to the server at url (http:// or https://, with its
 * port, and ?database=NAME or a user and password if needed); nothing
 * is sent yet.  -EINVAL (logged) for a URL that is no HTTP URL.
 */
int wp_ch_open(const char *url, struct wp_ch **out);
void wp_ch_close(struct wp_ch *ch);

/*
 * Send one statement (no result expected, or a result into *result,
 * NUL-terminated, owned by the caller when result is non-NULL); body,
 * when not NULL, is sent after it (the rows of an INSERT ... FORMAT).
 * The server's refusal is logged in one sentence; -EIO, -ECONNREFUSED.
 */
int wp_ch_query(struct wp_ch *ch, const char *sql, const char *body, size_t body_len,
		char **result);

/* CREATE TABLE IF NOT EXISTS for every table; 0 or as wp_ch_query. */
int wp_ch_create_tables(struct wp_ch *ch);

/* The id of the file at path (a read of all of it); 0 or -errno, logged. */
int wp_ch_file_id(const char *path, char id[WP_CH_FILE_ID_SIZE]);

/*
 * Whether the server holds the file complete already (*done), asked
 * before a file is analysed, which is the slow part.
 */
int wp_ch_file_done(struct wp_ch *ch, const char *file_id, bool *done);

/*
 * The rows of an analysis, made with frame_info (files and build ids of
 * frames), into the server.  *rows: the thread and stack rows added (0
 * when the server had the file already).
 */
int wp_ch_export(struct wp_ch *ch, const struct wp_analysis *an, const struct wp_ch_source *src,
		 uint64_t *rows);

/* Which rows report --from reads: all, or those of these hosts, labels and times. */
struct wp_ch_filter {
	const char *const *hosts;	/* any of them */
	size_t nr_hosts;
	const struct wp_ch_label *labels;	/* all of them */
	size_t nr_labels;
	/*
	 * Wall clock, UTC seconds, 0: open.  A file's rows are read when the
	 * file's time meets [since, until): rows are a file's, not a moment's.
	 */
	uint64_t since_s, until_s;
};

/*
 * A time of --since or --until as UTC seconds: seconds since the epoch,
 * YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS] or with a T (UTC), or -N followed by
 * s, m, h or d (before now_s).  -EINVAL when it is none of these.
 */
int wp_ch_parse_time(const char *s, uint64_t now_s, uint64_t *out_s);

/*
 * report --from --format folded: the folded stacks of the rows that f
 * selects, of the kinds of time that mode weighs, added up by the server
 * (GROUP BY thread name, stack, kind and whether the time is estimated;
 * with wakers, blocked time also by waker) and written as the folded
 * format writes a file's: the same frames, quoting, markers and order,
 * weights in units of unit_ns.
 */
int wp_ch_folded(struct wp_ch *ch, const struct wp_ch_filter *f, enum wp_mode mode,
		 uint64_t unit_ns, bool thread_root, bool wakers, FILE *out);

/* The tables' names, for messages and the test. */
extern const char *const wp_ch_tables[];

#endif
