/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seen.h: the code a recording saw run, as its data files restate it.
 *
 * Owns the executable files mapped (with their build ids, and an open
 * descriptor of a file a container mapped where the host has another),
 * the regions of anonymous code (a JIT's), when each program started,
 * and the kernel code addresses in the recorded stacks.  The drain notes
 * them as it reads the rings (drain.h), one thread; the closing blocks
 * of each file (closing.h) and the end of the recording read them on
 * other threads: the files, regions and starts under one lock, held
 * briefly (a reader copies what it needs and reads files after), the
 * kernel addresses under their own.  The writing thread reads without
 * the lock.
 */
#ifndef WALLPROF_SEEN_H
#define WALLPROF_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file mapped executable during the recording, seen in an MMAP2 record. */
struct wp_mapped_file {
	uint32_t pid;		/* UINT32_MAX: several processes mapped it */
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id_size;	/* non-zero when the kernel gave the id */
	uint8_t build_id[20];
	char *path;
	/*
	 * The file as the process saw it, opened through /proc/PID/root while
	 * the process lived, when the same path on the host is another file
	 * or none (a chroot, another mount namespace); else -1.
	 */
	int fd;
};

/*
 * Code in anonymous memory (a JIT's) seen in MMAP2 records: where, in
 * which process.  A process also has the regions of the one it forked from.
 */
struct wp_anon_code {
	uint32_t pid;
	uint64_t start, end;
	/*
	 * The process's real and effective users, read when the region was
	 * first seen (the process may be gone when its perf map is read),
	 * and whether they could be: its perf map must be theirs or root's.
	 */
	uint32_t users[2];
	bool users_known;
};

struct wp_seen;

/* 0 or -ENOMEM. */
int wp_seen_new(struct wp_seen **out);
/* Frees it all, closing the files' descriptors.  NULL is fine. */
void wp_seen_free(struct wp_seen *s);

/* Around a reader's calls to the next two, on a thread that does not write. */
void wp_seen_lock(struct wp_seen *s);
void wp_seen_unlock(struct wp_seen *s);
const struct wp_mapped_file *wp_seen_files(const struct wp_seen *s, size_t *n);
/* Sorted by process, then start. */
const struct wp_anon_code *wp_seen_anon_code(const struct wp_seen *s, size_t *n);

/*
 * A file mapped at path, as f tells it (pid, build id or device and
 * inode): when it is one already known (the same path and no other build
 * id), what f adds is merged into it and true returned; else false.
 */
bool wp_seen_file_again(struct wp_seen *s, const char *path, const struct wp_mapped_file *f);
/*
 * A file not known yet (wp_seen_file_again said so): kept with a copy of
 * path, and f's descriptor, which it owns from then on.  0, or -ENOMEM:
 * then the descriptor is still the caller's.
 */
int wp_seen_file_add(struct wp_seen *s, const char *path, const struct wp_mapped_file *f);

/* A region of anonymous code, kept once. */
/*
 * A descriptor (the caller's) of the file at path with build id id (none:
 * id_len 0) that wp_seen_file_add kept open, or -1.  Under the lock: any
 * thread.
 */
int wp_seen_file_open(struct wp_seen *s, const char *path, const uint8_t *id, size_t id_len);

void wp_seen_anon_add(struct wp_seen *s, const struct wp_anon_code *a);

/* Program pid started (forked or exec'd) at time. */
void wp_seen_start(struct wp_seen *s, uint32_t pid, uint64_t time);
/*
 * Process pid ended: its start is forgotten unless it ran anonymous code
 * (a JIT's names are looked for by it), so that hours of processes coming
 * and going do not keep one each.
 */
void wp_seen_end(struct wp_seen *s, uint32_t pid);
/*
 * When process pid last started a program during the recording (its FORK
 * or exec, CLOCK_MONOTONIC), or 0 when it did not (or ended and ran no
 * anonymous code): what it mapped and wrote before then belonged to
 * another program.  Takes the lock.
 */
uint64_t wp_seen_start_of(struct wp_seen *s, uint32_t pid);

/*
 * Kernel code addresses: a writer adds them between the lock and unlock
 * (a block's at a time); out of memory, an address is not kept (report
 * then shows it unnamed).
 */
void wp_seen_kernel_lock(struct wp_seen *s);
void wp_seen_kernel_unlock(struct wp_seen *s);
void wp_seen_kernel_ip(struct wp_seen *s, uint64_t ip);
/* How many there are, and up to max of them copied to out (each takes the lock). */
size_t wp_seen_nr_kernel_ips(struct wp_seen *s);
size_t wp_seen_kernel_ips(struct wp_seen *s, uint64_t *out, size_t max);

#endif
