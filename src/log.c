/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.c: message sink for the library; the command layer chooses the output. */
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>

#include "log.h"
#include "quote.h"

static void default_sink(enum wp_log_level level, const char *msg)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };

	fprintf(stderr, "wallprof: %s%s\n", prefix[level], msg);
}

static wp_log_sink_fn log_sink = default_sink;
static enum wp_log_level log_max = WP_LOG_INFO;
static unsigned int log_errors;
/* Drain and writer threads log too; keep lines whole. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void wp_log_set_sink(wp_log_sink_fn sink)
{
	log_sink = sink ? sink : default_sink;
}

void wp_log_set_level(enum wp_log_level max)
{
	log_max = max;
}

enum wp_log_level wp_log_get_level(void)
{
	return log_max;
}

unsigned int wp_log_error_count(void)
{
	return log_errors;
}

void wp_log(enum wp_log_level level, const char *fmt, ...)
{
	char msg[1024], safe[WP_QUOTE_SIZE(sizeof(msg))];
	va_list ap;

	if (level == WP_LOG_ERROR)
		__atomic_add_fetch(&log_errors, 1, __ATOMIC_RELAXED);
	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/*
	 * Callers quote the names they print; this catches any that slipped
	 * through (a path in a libdw message, say), so that no message can
	 * carry a control sequence to the terminal.
	 */
	wp_quote(safe, sizeof(safe), msg, WP_QUOTE_MESSAGE);
	pthread_mutex_lock(&log_lock);
	log_sink(level, safe);
	pthread_mutex_unlock(&log_lock);
}
