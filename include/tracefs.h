/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracefs.h: the kernel's trace events as perf_event_open wants them: where
 * tracefs is (mounted at /sys/kernel/tracing when root may and it is not),
 * an event's id, and the layout of its fields, read from its "format" file
 * and never assumed.  The format text is kept as read, so that a recording
 * can carry it and a report parse it on another kernel.
 */
#ifndef WALLPROF_TRACEFS_H
#define WALLPROF_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WP_TRACE_MAX_FIELDS 32

struct wp_trace_field {
	char name[64];
	uint32_t offset, size;	/* in the event's raw data */
	bool is_signed;
};

struct wp_trace_format {
	char name[64];		/* "sched_waking" */
	uint64_t id;		/* for PERF_TYPE_TRACEPOINT's config */
	struct wp_trace_field fields[WP_TRACE_MAX_FIELDS];
	unsigned int nr_fields;
};

/*
 * Find tracefs: a path in buf.  When it is not mounted and may_mount is
 * true (root), mount it at /sys/kernel/tracing and set *mounted.  -ENOENT
 * when the kernel has none, -EACCES/-EPERM when it cannot be read or
 * mounted.
 */
int wp_tracefs_find(char *buf, size_t size, bool may_mount, bool *mounted);

/*
 * Read SYSTEM/NAME's format file under tracefs into a malloc'ed string
 * (*text, the caller frees it).  0 or -errno.
 */
int wp_trace_format_read(const char *tracefs, const char *system, const char *name,
			 char **text);

/* Parse a format file's text.  0, or -EBADMSG when it is not one. */
int wp_trace_format_parse(const char *text, struct wp_trace_format *out);

/* The field called name, or NULL. */
const struct wp_trace_field *wp_trace_field(const struct wp_trace_format *f, const char *name);

/*
 * An integer field of raw data (of raw_size bytes), sign-extended when the
 * field is signed; false when the field does not fit in the data or is
 * wider than 8 bytes.
 */
bool wp_trace_field_int(const struct wp_trace_field *f, const void *raw, size_t raw_size,
			int64_t *out);

#endif
