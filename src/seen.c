/* SPDX-License-Identifier: GPL-2.0-or-later */
/* seen.c: the files, anonymous code, program starts and kernel addresses a recording saw. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashmap.h"
#include "seen.h"
#include "u64map.h"
#include "util.h"

struct wp_seen {
	/* Guards files, anon and program_start against readers on other threads. */
	pthread_mutex_t lock;
	struct wp_mapped_file *files;
	size_t nr_files, cap_files;
	/*
	 * The files by path (the first with it), then each one's next with
	 * the same path + 1 (a container's library and the host's), or 0:
	 * an exec maps some files, and a recording of thousands must not
	 * compare every path.
	 */
	struct wp_hashmap file_by_path;
	uint32_t *same_path_next;
	size_t cap_same_path;
	struct wp_anon_code *anon;	/* sorted by pid, then start */
	size_t nr_anon, cap_anon;
	struct wp_u64map program_start;	/* pid -> time of its FORK or exec */

	pthread_mutex_t kips_lock;
	struct wp_u64map kips;		/* kernel code address -> 0 */
};

/* Whether path is that of file entry (hashmap.h). */
static bool file_has_path(const void *path, uint32_t entry, const void *ctx)
{
	const struct wp_seen *s = ctx;

	return !strcmp(s->files[entry].path, path);
}

int wp_seen_new(struct wp_seen **out)
{
	struct wp_seen *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	wp_hashmap_init(&s->file_by_path, file_has_path, s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->kips_lock, NULL);
	return 0;
}

void wp_seen_free(struct wp_seen *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_files; i++) {
		free(s->files[i].path);
		if (s->files[i].fd >= 0)
			close(s->files[i].fd);
	}
	free(s->files);
	free(s->same_path_next);
	wp_hashmap_release(&s->file_by_path);
	free(s->anon);
	wp_u64map_release(&s->program_start);
	wp_u64map_release(&s->kips);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->kips_lock);
	free(s);
}

void wp_seen_lock(struct wp_seen *s)
{
	pthread_mutex_lock(&s->lock);
}

void wp_seen_unlock(struct wp_seen *s)
{
	pthread_mutex_unlock(&s->lock);
}

const struct wp_mapped_file *wp_seen_files(const struct wp_seen *s, size_t *n)
{
	*n = s->nr_files;
	return s->files;
}

const struct wp_anon_code *wp_seen_anon_code(const struct wp_seen *s, size_t *n)
{
	*n = s->nr_anon;
	return s->anon;
}

bool wp_seen_file_again(struct wp_seen *s, const char *path, const struct wp_mapped_file *f)
{
	uint64_t hash = wp_hashmap_hash(&s->file_by_path, path, strlen(path));
	uint32_t first = wp_hashmap_find(&s->file_by_path, hash, path);

	pthread_mutex_lock(&s->lock);
	for (uint32_t i = first; i != WP_HASHMAP_NONE;
	     i = s->same_path_next[i] ? s->same_path_next[i] - 1 : WP_HASHMAP_NONE) {
		struct wp_mapped_file *o = &s->files[i];

		/* One path, two files: a container's library and the host's. */
		if (o->build_id_size && f->build_id_size &&
		    (o->build_id_size != f->build_id_size ||
		     memcmp(o->build_id, f->build_id, f->build_id_size)))
			continue;
		if (o->pid != f->pid)
			o->pid = UINT32_MAX;	/* shared by several processes */
		if (!o->build_id_size && f->build_id_size) {
			o->build_id_size = f->build_id_size;
			memcpy(o->build_id, f->build_id, f->build_id_size);
		}
		if (!o->ino && f->ino) {
			o->maj = f->maj;
			o->min = f->min;
			o->ino = f->ino;
		}
		pthread_mutex_unlock(&s->lock);
		return true;
	}
	pthread_mutex_unlock(&s->lock);
	return false;
}

int wp_seen_file_open(struct wp_seen *s, const char *path, const uint8_t *id, size_t id_len)
{
	uint64_t hash = wp_hashmap_hash(&s->file_by_path, path, strlen(path));
	int fd = -1;

	pthread_mutex_lock(&s->lock);
	for (uint32_t i = wp_hashmap_find(&s->file_by_path, hash, path); i != WP_HASHMAP_NONE;
	     i = s->same_path_next[i] ? s->same_path_next[i] - 1 : WP_HASHMAP_NONE) {
		const struct wp_mapped_file *f = &s->files[i];

		if (f->fd < 0 || (id_len && (f->build_id_size != id_len ||
					     memcmp(f->build_id, id, id_len))))
			continue;
		fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return fd;
}

int wp_seen_file_add(struct wp_seen *s, const char *path, const struct wp_mapped_file *f)
{
	uint64_t hash = wp_hashmap_hash(&s->file_by_path, path, strlen(path));
	uint32_t first = wp_hashmap_find(&s->file_by_path, hash, path);
	char *copy = strdup(path);
	int err = -ENOMEM;

	pthread_mutex_lock(&s->lock);
	if (copy && s->nr_files < UINT32_MAX - 1 &&
	    !WP_GROW(s->same_path_next, s->cap_same_path, s->nr_files + 1) &&
	    !WP_GROW(s->files, s->cap_files, s->nr_files + 1) &&
	    (first != WP_HASHMAP_NONE ||
	     !wp_hashmap_add(&s->file_by_path, hash, (uint32_t)s->nr_files))) {
		uint32_t at = (uint32_t)s->nr_files;

		s->files[s->nr_files] = *f;
		s->files[s->nr_files++].path = copy;
		s->same_path_next[at] = 0;
		/* After the others of its path: the first stays the map's. */
		if (first != WP_HASHMAP_NONE) {
			uint32_t i = first;

			while (s->same_path_next[i])
				i = s->same_path_next[i] - 1;
			s->same_path_next[i] = at + 1;
		}
		copy = NULL;
		err = 0;
	}
	pthread_mutex_unlock(&s->lock);
	free(copy);
	return err;
}

static int anon_cmp(const void *a, const void *b)
{
	const struct wp_anon_code *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

void wp_seen_anon_add(struct wp_seen *s, const struct wp_anon_code *a)
{
	pthread_mutex_lock(&s->lock);
	/* (JITs map few, large regions: a sorted array will do.) */
	if ((!s->nr_anon || !bsearch(a, s->anon, s->nr_anon, sizeof(*a), anon_cmp)) &&
	    !WP_GROW(s->anon, s->cap_anon, s->nr_anon + 1)) {
		s->anon[s->nr_anon++] = *a;
		qsort(s->anon, s->nr_anon, sizeof(*a), anon_cmp);
	}
	pthread_mutex_unlock(&s->lock);
}

void wp_seen_start(struct wp_seen *s, uint32_t pid, uint64_t time)
{
	pthread_mutex_lock(&s->lock);
	wp_u64map_put(&s->program_start, pid, time);
	pthread_mutex_unlock(&s->lock);
}

void wp_seen_end(struct wp_seen *s, uint32_t pid)
{
	bool jit = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nr_anon && !jit; i++)
		jit = s->anon[i].pid == pid;
	if (!jit)
		wp_u64map_del(&s->program_start, pid);
	pthread_mutex_unlock(&s->lock);
}

uint64_t wp_seen_start_of(struct wp_seen *s, uint32_t pid)
{
	uint64_t t = 0;

	pthread_mutex_lock(&s->lock);
	wp_u64map_get(&s->program_start, pid, &t);
	pthread_mutex_unlock(&s->lock);
	return t;
}

void wp_seen_kernel_lock(struct wp_seen *s)
{
	pthread_mutex_lock(&s->kips_lock);
}

void wp_seen_kernel_unlock(struct wp_seen *s)
{
	pthread_mutex_unlock(&s->kips_lock);
}

void wp_seen_kernel_ip(struct wp_seen *s, uint64_t ip)
{
	if (ip)
		wp_u64map_put(&s->kips, ip, 0);
}

size_t wp_seen_kernel_ips(struct wp_seen *s, uint64_t *out, size_t max)
{
	uint64_t ip, unused;
	size_t n = 0, pos = 0;

	pthread_mutex_lock(&s->kips_lock);
	while (n < max && wp_u64map_next(&s->kips, &pos, &ip, &unused))
		out[n++] = ip;
	pthread_mutex_unlock(&s->kips_lock);
	return n;
}

size_t wp_seen_nr_kernel_ips(struct wp_seen *s)
{
	size_t n;

	pthread_mutex_lock(&s->kips_lock);
	n = s->kips.len;
	pthread_mutex_unlock(&s->kips_lock);
	return n;
}
