/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h: the one path by which library code reports problems.
 *
 * Library modules report through wp_error()/wp_warn()/wp_info()/wp_debug()
 * and the command layer decides where those lines go (wp_log_set_sink).
 * The one other thing they write to stderr is the progress line of record
 * (session.c) and report (analysis.c), redrawn in place on a terminal.  A function that logs an error
 * also returns a negative errno so that callers only propagate it.
 */
#ifndef WALLPROF_LOG_H
#define WALLPROF_LOG_H

#include <stdbool.h>

enum wp_log_level {
	WP_LOG_ERROR,
	WP_LOG_WARN,
	WP_LOG_INFO,
	WP_LOG_DEBUG,
};

typedef void (*wp_log_sink_fn)(enum wp_log_level level, const char *msg);

/* Install the sink; NULL restores the default (stderr, "wallprof: ..."). */
void wp_log_set_sink(wp_log_sink_fn sink);

/* Messages above this level are dropped (default WP_LOG_INFO). */
void wp_log_set_level(enum wp_log_level max);

/* The level set by wp_log_set_level, to put it back after a quieter stretch. */
enum wp_log_level wp_log_get_level(void);

void wp_log(enum wp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define wp_error(...) wp_log(WP_LOG_ERROR, __VA_ARGS__)
#define wp_warn(...)  wp_log(WP_LOG_WARN, __VA_ARGS__)
#define wp_info(...)  wp_log(WP_LOG_INFO, __VA_ARGS__)
#define wp_debug(...) wp_log(WP_LOG_DEBUG, __VA_ARGS__)

/* Number of errors logged so far (lets a command pick its exit status). */
unsigned int wp_log_error_count(void);

#endif
