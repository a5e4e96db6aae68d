/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jitmap.h: names of generated code (JIT), per process.
 *
 * Owns a table of (pid, start, size, name) entries and their names.  Fed
 * from perf maps, the /tmp/perf-PID.map files that V8 (--perf-basic-prof),
 * CPython (-X perf), the JVM's perf-map agents and .NET write ("START SIZE
 * name" lines, hexadecimal without 0x), or from the JITMAP block of a data
 * file ("pid START SIZE name" lines, the same with the pid in front).
 * Record keeps the entries inside the processes' anonymous executable
 * mappings and writes them out; report looks frames up in them.  A later
 * entry for the same start replaces an earlier one, as code is recompiled
 * in place.
 */
#ifndef WALLPROF_JITMAP_H
#define WALLPROF_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most bytes of JITMAP text a recording keeps (a bound against huge maps). */
#define WP_JITMAP_MAX_TEXT (64U << 20)

struct wp_jit_entry {
	uint32_t pid;
	uint32_t name_off;	/* into names */
	uint64_t start, size;
	uint64_t seq;		/* order of arrival: the later wins */
};

struct wp_jitmap {
	struct wp_jit_entry *v;
	size_t n, cap;
	char *names;		/* NUL-terminated names, back to back */
	size_t names_len, names_cap;
	size_t text_bytes;	/* the JITMAP text these entries make */
	uint64_t next_seq;
	bool sorted;
};

/* An address range [start, end) whose entries a perf map may give. */
struct wp_jit_range {
	uint64_t start, end;
};

/* What reading one perf map gave. */
struct wp_jit_read {
	size_t kept;		/* entries inside the ranges */
	size_t outside;		/* entries outside them, left out */
	size_t malformed;	/* lines that are not "START SIZE name" */
	size_t over_limit;	/* entries left out for WP_JITMAP_MAX_TEXT */
	bool cut;		/* only the first WP_PERF_MAP_MAX_READ bytes were read */
	uint32_t owner;		/* the map's owner (when refused: -EPERM) */
};

/* The most of a perf map that is read (a map is read a piece at a time). */
#define WP_PERF_MAP_MAX_READ (256U << 20)

/*
 * The real and effective user ids of process pid, from /proc; false
 * when they cannot be read (the process is gone).
 */
bool wp_jitmap_process_users(uint32_t pid, uint32_t users[2]);

/*
 * Add the entries of a perf map's text for process pid, those that lie
 * inside one of ranges (every one when ranges is NULL), while the table's
 * text stays within WP_JITMAP_MAX_TEXT.  Returns 0 or -ENOMEM.
 */
int wp_jitmap_add_perf_map(struct wp_jitmap *jm, uint32_t pid, const char *text, size_t len,
			   const struct wp_jit_range *ranges, size_t nr_ranges,
			   struct wp_jit_read *st);

/*
 * Read /tmp/perf-PID.map into jm as wp_jitmap_add_perf_map() does (for a
 * process in another pid namespace that has none there, the map in its
 * own /tmp under its own pid, through /proc/PID/root), unless
 * it was last written before not_before (CLOCK_REALTIME ns; 0: any time):
 * then it is a map of an earlier process that had the same pid.  As perf
 * does, a map is trusted only when it is a regular file owned by root or
 * by one of the nr_owners users in owners (the process's, or whoever
 * reads it when the process is not known): anyone can make a file of
 * that name in /tmp, and name another user's code with it.  It is read a
 * piece at a time, at most WP_PERF_MAP_MAX_READ bytes (st->cut says when
 * there was more), and a line longer than 64 KiB is malformed.
 * Returns 0, -ENOENT when there is none, -ESTALE when it is older,
 * -EINVAL when it is not a regular file, -EPERM when another user owns it
 * (st->owner), another -errno when it cannot be read (nothing logged).
 */
int wp_jitmap_read_perf_map(struct wp_jitmap *jm, uint32_t pid, uint64_t not_before,
			    const uint32_t *owners, size_t nr_owners,
			    const struct wp_jit_range *ranges, size_t nr_ranges,
			    struct wp_jit_read *st);

/*
 * Parse the JITMAP block's text.  Returns 0, -EBADMSG for a line that is
 * not "pid START SIZE name" (nothing is kept then), -ENOMEM.
 */
int wp_jitmap_parse(struct wp_jitmap *jm, const char *text, size_t len);

/* The JITMAP text of the entries (malloc'ed, the caller frees it). */
int wp_jitmap_format(struct wp_jitmap *jm, char **text, size_t *len);

/* The name of the code of pid at addr, and its start in *start; or NULL. */
const char *wp_jitmap_find(struct wp_jitmap *jm, uint32_t pid, uint64_t addr, uint64_t *start);

/* Whether any entry is of process pid. */
bool wp_jitmap_has_pid(struct wp_jitmap *jm, uint32_t pid);

void wp_jitmap_release(struct wp_jitmap *jm);

#endif
