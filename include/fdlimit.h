/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdlimit.h: the file descriptors wallprof may hold, and how its caches
 * share them.
 *
 * A report (or a live recording's naming) keeps files open: the mapped
 * files (procmap), one libdwfl session per file being named (symbols) and
 * per process being unwound (unwind), and the debug files of each.  With
 * a low limit on descriptors, opening one more failed and its frames went
 * unnamed, blamed on missing symbols.  So the soft limit is raised to the
 * hard one at start (as perf does; a launched command gets its own limit
 * back), each cache holds at most its share of what is left, letting the
 * least recently used go, and a name lost all the same for lack of
 * descriptors is said to be so (wp_fd_starved).  State: the limits, once.
 */
#ifndef WALLPROF_FDLIMIT_H
#define WALLPROF_FDLIMIT_H

#include <errno.h>
#include <stdbool.h>

/*
 * Raise the soft limit on descriptors to the hard one, remembering the
 * soft limit given, for children (wp_fdlimit_restore).  Returns 0 or
 * -errno (the limit stays as it was).
 */
int wp_fdlimit_raise(void);

/*
 * Give the soft limit found at wp_fdlimit_raise() back, in a child about
 * to execute a command (async-signal-safe): a program that uses select()
 * breaks with descriptors past 1024, which a raised limit lets it open.
 */
void wp_fdlimit_restore(void);

/* The soft limit on descriptors now. */
unsigned int wp_fdlimit(void);

/*
 * A cache's share of the descriptors not open now: what is left beyond a
 * reserve for everything else, divided by parts, and at least min.
 */
unsigned int wp_fdlimit_share(unsigned int parts, unsigned int min);

/* Whether err (negative) says that no descriptor was to be had. */
static inline bool wp_fd_exhausted(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

/*
 * A cache that can give descriptors back when another one is wanted and
 * none is left: fn closes what arg holds but does not need right now,
 * and returns how many it closed.  At most 8 at once, on the thread that
 * opens files for naming (report's, or a live recording's unwinder).
 */
typedef unsigned int (*wp_fd_reclaim_fn)(void *arg);
void wp_fd_reclaim_register(wp_fd_reclaim_fn fn, void *arg);
void wp_fd_reclaim_unregister(wp_fd_reclaim_fn fn, void *arg);

/* Ask every cache to give its descriptors back; how many they closed. */
unsigned int wp_fd_reclaim(void);

/*
 * dup(fd), making room (wp_fd_reclaim) when no descriptor is left; -1
 * with errno set, and the lack of descriptors noted, when it still fails.
 */
int wp_fd_dup(int fd);

/*
 * Note that a descriptor could not be had, however the caches made room:
 * names may be lost for it (wp_fd_starved says how often).
 */
void wp_fd_note_starved(void);
unsigned int wp_fd_starved(void);

#endif
