/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * synth.h: records for state that existed before recording began.
 *
 * When attaching to running processes the kernel never reports their
 * names, threads or mappings, so they are read from /proc and written as
 * ordinary COMM and MMAP2 records (event id WP_SYNTHESIZED_ID) plus
 * one WP_RECORD_THREAD per thread, timestamped at the snapshot.
 */
#ifndef WALLPROF_SYNTH_H
#define WALLPROF_SYNTH_H

#include <stdint.h>
#include <sys/types.h>

#include "layout.h"
#include "util.h"

/*
 * Append the records of one process (every thread's comm, executable
 * mappings) to out.  Only the thread tid when tid > 0.  Returns the number
 * of records, or -errno (-ESRCH once the process is gone).
 */
int wp_synth_process(const struct wp_sample_format *fmt, pid_t pid, pid_t tid,
		     uint64_t time, struct wp_buf *out);

/*
 * An EXIT record of a thread known to be gone by time (it vanished while
 * being attached to); 1, or -errno.
 */
int wp_synth_exit(const struct wp_sample_format *fmt, pid_t pid, pid_t tid, uint64_t time,
		  struct wp_buf *out);

/*
 * A thread known without /proc: its THREAD record and a COMM record of
 * name comm (cut to 15 bytes; none when comm is empty).  0 or -errno.
 */
int wp_synth_thread(const struct wp_sample_format *fmt, pid_t pid, pid_t tid, const char *comm,
		    uint64_t time, struct wp_buf *out);

/* The same for every process in /proc (system-wide mode). */
int wp_synth_all(const struct wp_sample_format *fmt, uint64_t time,
		 struct wp_buf *out);

#endif
