/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmdline.h: processes' command lines, read off the draining path.
 *
 * Owns the reading of /proc/PID/cmdline and the thread that does it while
 * recording, which also reads the names of wakers (/proc/PID/task/TID/comm).  A read can wait on the process's memory (its mmap lock, a
 * page fault), so the drain thread only asks: a request is a queue push,
 * dropped and counted when WP_CMDLINE_QUEUE requests wait already, so
 * thousands of execs a second cost the drain next to nothing.  The
 * reader hands back finished WP_RECORD_CMDLINE records (layout.h), each
 * dated when it was read: the drain puts them in the file at its next pass.
 */
#ifndef WALLPROF_CMDLINE_H
#define WALLPROF_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "layout.h"
#include "util.h"

/* Requests that may wait for the reader; later ones are dropped. */
#define WP_CMDLINE_QUEUE 4096

/*
 * Read pid's command line into buf (size bytes): *len bytes, each
 * argument NUL-terminated; *truncated when it held more.  Returns 0,
 * -ESRCH when the process is gone, -ENODATA when it has none (a kernel
 * thread, a zombie), or another -errno.
 */
int wp_cmdline_read(pid_t pid, char *buf, size_t size, size_t *len, bool *truncated);

/*
 * Append the record of pid's command line, read now (source as
 * wp_record_cmdline), to out: 1 when appended, 0 when there was none to
 * read, or -errno.
 */
int wp_cmdline_record(pid_t pid, uint16_t source, uint64_t time, uint64_t exec_time,
		      struct wp_buf *out);

struct wp_cmdline_reader;

/* Start the reader thread; times are taken on clock (the events' clock). */
int wp_cmdline_reader_start(clockid_t clock, struct wp_cmdline_reader **out);

/* Ask for pid's command line after its exec at exec_time; never waits for a read. */
void wp_cmdline_request(struct wp_cmdline_reader *r, uint32_t pid, uint64_t exec_time);

/*
 * Ask for the name of thread tid of process pid (a waker's): a
 * WP_RECORD_TASK_NAME record comes with the command lines, unless the
 * thread is gone by then.  Never waits; not counted among the command
 * lines dropped or gone.
 */
void wp_cmdline_request_name(struct wp_cmdline_reader *r, uint32_t pid, uint32_t tid);

/*
 * A command line known without reading it (the launched command's argv):
 * its record, dated now, comes with the read ones.  0 or -ENOMEM.
 */
int wp_cmdline_known(struct wp_cmdline_reader *r, uint32_t pid, char *const argv[]);

/*
 * Move the finished records to out (appended, whole records): 0 or
 * -ENOMEM (they stay for the next call).  Thread safe.
 */
int wp_cmdline_take(struct wp_cmdline_reader *r, struct wp_buf *out);

/* Requests dropped because the queue was full, or that found no process. */
void wp_cmdline_counts(struct wp_cmdline_reader *r, uint64_t *dropped, uint64_t *gone);

/* Stop the thread (requests still waiting are dropped) and free r; NULL is fine. */
void wp_cmdline_reader_free(struct wp_cmdline_reader *r);

#endif
