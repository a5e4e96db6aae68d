/* SPDX-License-Identifier: GPL-2.0-or-later */
/* closing.c: the blocks after a data file's records: build ids, kernel symbols, JIT names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "buildid.h"
#include "closing.h"
#include "seen.h"
#include "jitmap.h"
#include "kallsyms.h"
#include "layout.h"
#include "log.h"
#include "util.h"

/* What another stage adds to every file (the live unwinder's NAMES). */
struct closer {
	wp_closing_fn fn;
	void *arg;
};

/* A file's build id as read from disk, for the inode it had then (0: not read). */
struct read_id {
	uint32_t maj, min;
	uint64_t ino;
	uint8_t size;
	uint8_t id[24];
};

/* A mapped file as the recording saw it, copied out of its lock. */
struct file_copy {
	uint32_t pid, maj, min;
	uint64_t ino;
	uint8_t build_id_size;
	uint8_t build_id[20];
	char *path;
};

struct wp_closing {
	const struct wp_meta *meta;
	struct wp_seen *seen;
	struct closer closers[WP_CLOSING_MAX_STAGES];
	unsigned int nr_closers;
	/* Files after the first say again only what is new (their warnings were said). */
	bool warned_closing;
	/*
	 * /proc/kallsyms as last read for a file's closing blocks, and the
	 * modules it was read with: read again only when they change.
	 */
	struct wp_kallsyms ksyms;
	bool have_ksyms;
	uint64_t ksyms_key;
	/* Anonymous code of the processes that existed at the start. */
	struct wp_anon_code *synth_anon;
	size_t nr_synth_anon, cap_synth_anon;
	/*
	 * The build ids read from the files seen, by their index:
	 * each file of a rotating recording would read every one again.
	 */
	struct read_id *read_ids;
	size_t cap_read_ids;
};

static int anon_pid_cmp(const void *a, const void *b)
{
	const struct wp_anon_code *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void wp_closing_note_existing(struct wp_closing *c, const struct wp_buf *buf)
{
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= buf->len;) {
		const struct perf_event_header *h = (const void *)(buf->data + off);
		struct wp_mmap2 m;

		if (h->size < sizeof(*h) || h->size > buf->len - off)
			break;
		off += h->size;
		if (h->type != PERF_RECORD_MMAP2 || wp_mmap2_parse(h, &m) ||
		    !(m.prot & PROT_EXEC) || !wp_mmap_is_anon(m.filename) ||
		    WP_GROW(c->synth_anon, c->cap_synth_anon, c->nr_synth_anon + 1))
			continue;
		c->synth_anon[c->nr_synth_anon] = (struct wp_anon_code){
			.pid = m.pid, .start = m.addr, .end = m.addr + m.len };
		c->synth_anon[c->nr_synth_anon].users_known =
			wp_jitmap_process_users(m.pid, c->synth_anon[c->nr_synth_anon].users);
		c->nr_synth_anon++;
	}
}

/*
 * The files seen mapped, copied while their lock is held: a copy of
 * memory only.  Reading the files for their build ids (disk, page cache)
 * happens after, so that the drain thread, which takes the lock at each
 * MMAP2, FORK and exec, never waits on it.
 */
static int copy_files(struct wp_closing *c, struct file_copy **out, size_t *nr)
{
	const struct wp_mapped_file *files;
	struct file_copy *copy = NULL;
	size_t n, i;
	int err = 0;

	*out = NULL;
	*nr = 0;
	wp_seen_lock(c->seen);
	files = wp_seen_files(c->seen, &n);
	if (n && !(copy = calloc(n, sizeof(*copy))))
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		const struct wp_mapped_file *f = &files[i];

		copy[i] = (struct file_copy){ .pid = f->pid, .maj = f->maj, .min = f->min,
					      .ino = f->ino, .build_id_size = f->build_id_size };
		memcpy(copy[i].build_id, f->build_id, sizeof(copy[i].build_id));
		if (!(copy[i].path = strdup(f->path)))
			err = -ENOMEM;
	}
	wp_seen_unlock(c->seen);
	if (err) {
		for (size_t j = 0; j < n && copy; j++)
			free(copy[j].path);
		free(copy);
		return err;
	}
	*out = copy;
	*nr = n;
	return 0;
}

/*
 * The build id of file i of the files seen (whose copy is f), read from
 * disk once for the inode it has: 0 when it cannot be read (tried again
 * at the next file).
 */
static int read_build_id(struct wp_closing *c, size_t i, const struct file_copy *f,
			 uint8_t id[24])
{
	struct read_id *known;
	struct stat st;
	int idlen;

	if (i >= c->cap_read_ids) {
		size_t old = c->cap_read_ids;

		if (WP_GROW(c->read_ids, c->cap_read_ids, i + 1))
			return 0;
		memset(c->read_ids + old, 0, (c->cap_read_ids - old) * sizeof(*c->read_ids));
	}
	known = &c->read_ids[i];
	if (known->size && known->ino == f->ino && known->maj == f->maj && known->min == f->min) {
		memcpy(id, known->id, known->size);
		return known->size;
	}
	/* The file may have been replaced: only trust the same inode. */
	if (stat(f->path, &st) || (f->ino && (st.st_ino != f->ino ||
					      major(st.st_dev) != f->maj ||
					      minor(st.st_dev) != f->min)))
		return 0;
	idlen = wp_build_id_read(f->path, id, 24);
	if (idlen <= 0)
		return 0;
	*known = (struct read_id){ .maj = f->maj, .min = f->min, .ino = f->ino,
				   .size = (uint8_t)idlen };
	memcpy(known->id, id, (size_t)idlen);
	return idlen;
}

/*
 * One BUILD_ID record per executable file mapped during the recording (so
 * far, for a rotating recording's file: the drain may be running).
 */
static int write_build_ids(struct wp_closing *c, struct wp_writer *w)
{
	struct wp_buf buf = { 0 };
	struct file_copy *files;
	size_t n;
	int err = copy_files(c, &files, &n);

	for (size_t i = 0; !err && i < n; i++) {
		const struct file_copy *f = &files[i];
		size_t len = sizeof(struct wp_record_build_id) +
			     ALIGN_UP(strlen(f->path) + 1, (size_t)8);
		struct wp_record_build_id *r;
		uint8_t id[24];
		int idlen;

		if (len > UINT16_MAX)
			continue;
		if (f->build_id_size) {
			memcpy(id, f->build_id, f->build_id_size);
			idlen = f->build_id_size;
		} else if ((idlen = read_build_id(c, i, f, id)) <= 0) {
			continue;
		}
		r = wp_buf_reserve(&buf, len);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		memset(r, 0, len);
		r->header.type = WP_RECORD_BUILD_ID;
		r->header.size = (uint16_t)len;
		r->pid = f->pid;
		r->size = (uint8_t)idlen;
		memcpy(r->build_id, id, (size_t)idlen);
		r->maj = f->maj;
		r->min = f->min;
		r->ino = f->ino;
		memcpy(r->filename, f->path, strlen(f->path) + 1);
		buf.len += len;
	}
	for (size_t i = 0; i < n; i++)
		free(files[i].path);
	free(files);
	if (!err)
		err = wp_writer_write_records(w, buf.data, buf.len);
	wp_buf_release(&buf);
	return err;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Save the names of JIT code: the perf map (/tmp/perf-PID.map) of every
 * process that ran code in anonymous memory, read at the end, when the
 * JITs have written what they compiled (after their last mmap too), and
 * cut to the entries inside those regions.  A map older than the program
 * that ran under its pid in the recording is an earlier process's.
 */
static int write_jit_names(struct wp_closing *c, struct wp_writer *w)
{
	/* Kernel file times are coarse (a tick): a map written at once may look older. */
	const uint64_t slack_ns = 50 * 1000000ULL;
	const struct wp_anon_code *drained;
	struct wp_anon_code *all;
	struct wp_jit_range *ranges = NULL;
	struct wp_jitmap jm = { 0 };
	size_t nr_drained, n, over = 0, procs = 0;
	char *text = NULL;
	size_t len;
	int err = 0;

	wp_seen_lock(c->seen);
	drained = wp_seen_anon_code(c->seen, &nr_drained);
	n = nr_drained + c->nr_synth_anon;
	all = n ? malloc(n * sizeof(*all)) : NULL;
	if (all && nr_drained)
		memcpy(all, drained, nr_drained * sizeof(*all));
	wp_seen_unlock(c->seen);
	if (!n)
		return 0;
	ranges = malloc(n * sizeof(*ranges));
	if (!all || !ranges) {
		err = -ENOMEM;
		goto out;
	}
	if (c->nr_synth_anon)
		memcpy(all + nr_drained, c->synth_anon, c->nr_synth_anon * sizeof(*all));
	qsort(all, n, sizeof(*all), anon_pid_cmp);
	for (size_t i = 0, j; i < n && !err; i = j) {
		uint32_t pid = all[i].pid;
		uint64_t since = wp_seen_start_of(c->seen, pid), not_before = 0;
		uint32_t users[2];
		size_t nr_users = 0;
		struct wp_jit_read st;
		int ret;

		for (j = i; j < n && all[j].pid == pid; j++) {
			ranges[j - i] = (struct wp_jit_range){ all[j].start, all[j].end };
			if (all[j].users_known && !nr_users) {
				memcpy(users, all[j].users, sizeof(users));
				nr_users = 2;
			}
		}
		/* Not seen while it ran, but alive now (read before it exits). */
		if (!nr_users && wp_jitmap_process_users(pid, users))
			nr_users = 2;
		if (since > c->meta->start_clock_ns + slack_ns)
			not_before = since - slack_ns - c->meta->start_clock_ns +
				     c->meta->start_realtime_ns;
		ret = wp_jitmap_read_perf_map(&jm, pid, not_before, users, nr_users, ranges, j - i,
					      &st);
		if (ret == -ENOMEM) {
			err = ret;
		} else if (ret == -ESTALE && !c->warned_closing) {
			wp_info("/tmp/perf-%u.map was written before process %u started: "
				"not its JIT names", pid, pid);
		} else if (ret == -EPERM && !c->warned_closing) {
			wp_warn("/tmp/perf-%u.map belongs to user %u, neither root nor process "
				"%u's user%s: its JIT names are not trusted, nor saved", pid,
				st.owner, pid, nr_users ? "" : " (unknown: it was gone)");
		} else if (ret && ret != -ENOENT && ret != -ESTALE && !c->warned_closing) {
			wp_warn("cannot read /tmp/perf-%u.map: %s", pid, strerror(-ret));
		} else if (!ret) {
			procs++;
			over += st.over_limit;
			if (st.cut && !c->warned_closing)
				wp_warn("/tmp/perf-%u.map is larger than %u MiB: only its first %u MiB "
					"were read", pid, WP_PERF_MAP_MAX_READ >> 20,
					WP_PERF_MAP_MAX_READ >> 20);
			wp_debug("/tmp/perf-%u.map: %zu entries kept, %zu outside its anonymous code, "
				 "%zu malformed lines", pid, st.kept, st.outside, st.malformed);
		}
	}
	if (over && !c->warned_closing)
		wp_warn("%zu JIT names were not saved: the recording keeps at most %u MiB of them",
			over, WP_JITMAP_MAX_TEXT >> 20);
	if (!err && jm.n) {
		err = wp_jitmap_format(&jm, &text, &len);
		if (!err)
			err = wp_writer_write_jitmap(w, text, len);
		if (!err)
			wp_debug("saved %zu JIT names of %zu processes", jm.n, procs);
	}
out:
	free(text);
	wp_jitmap_release(&jm);
	free(ranges);
	free(all);
	return err;
}

/*
 * Save the kernel symbols that the recorded stacks use: kernel addresses
 * change at every boot, so /proc/kallsyms at report time may not fit.
 */
static int write_kernel_symbols(struct wp_closing *c, struct wp_writer *w)
{
	size_t n = wp_seen_nr_kernel_ips(c->seen);
	struct wp_buf text = { 0 };
	const struct wp_kallsyms *k = &c->ksyms;
	uint64_t *ips, key;
	long last = -1;
	int err = 0;

	if (!n)
		return 0;
	ips = malloc(n * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	n = wp_seen_kernel_ips(c->seen, ips, n);
	qsort(ips, n, sizeof(*ips), u64_cmp);
	/* Each file of a rotating recording would read it again: some 0.1 s. */
	key = wp_kallsyms_modules_key();
	if (!c->have_ksyms || !key || key != c->ksyms_key) {
		if (c->have_ksyms)
			wp_kallsyms_release(&c->ksyms);
		c->have_ksyms = false;
		err = wp_kallsyms_load(&c->ksyms);
		c->have_ksyms = !err;
		c->ksyms_key = key;
	}
	if (err) {
		free(ips);
		/* Not fatal: report falls back to /proc/kallsyms on this boot. */
		if (err == -EPERM && !c->warned_closing)
			wp_kallsyms_warn_hidden("kernel stacks were recorded without their symbols");
		else
			wp_debug("kernel symbols not saved: %s", strerror(-err));
		return 0;
	}
	for (size_t i = 0; i < n && !err; i++) {
		long idx = wp_kallsyms_find(k, ips[i]);
		char line[320];
		int len;

		if (idx < 0 || idx == last)
			continue;	/* sorted: each symbol once */
		last = idx;
		len = snprintf(line, sizeof(line), "%llx %s\n",
			       (unsigned long long)k->syms[idx].addr, wp_kallsyms_name(k, (size_t)idx));
		if (len > 0 && (size_t)len < sizeof(line))
			err = wp_buf_append(&text, line, (size_t)len);
	}
	if (!err)
		err = wp_writer_write_ksyms(w, (const char *)text.data, text.len);
	wp_buf_release(&text);
	free(ips);
	return err;
}

int wp_closing_new(const struct wp_meta *meta, struct wp_closing **out)
{
	struct wp_closing *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return -ENOMEM;
	c->meta = meta;
	return 0;
}

void wp_closing_set_seen(struct wp_closing *c, struct wp_seen *s)
{
	c->seen = s;
}

int wp_closing_add(struct wp_closing *c, wp_closing_fn fn, void *arg)
{
	if (c->nr_closers >= WP_CLOSING_MAX_STAGES)
		return -ENOSPC;
	c->closers[c->nr_closers++] = (struct closer){ fn, arg };
	return 0;
}

void wp_closing_remove(struct wp_closing *c, wp_closing_fn fn, void *arg)
{
	for (unsigned int i = 0; i < c->nr_closers; i++) {
		if (c->closers[i].fn != fn || c->closers[i].arg != arg)
			continue;
		memmove(&c->closers[i], &c->closers[i + 1],
			(c->nr_closers - i - 1) * sizeof(c->closers[0]));
		c->nr_closers--;
		return;
	}
}

int wp_closing_write(struct wp_closing *c, struct wp_writer *w)
{
	int err = 0;

	wp_writer_closing(w);
	if (c->seen) {
		err = write_build_ids(c, w);
		if (!err)
			err = write_kernel_symbols(c, w);
		if (!err)
			err = write_jit_names(c, w);
	}
	for (unsigned int i = 0; !err && i < c->nr_closers; i++)
		err = c->closers[i].fn(c->closers[i].arg, w);
	c->warned_closing = true;
	return err;
}

void wp_closing_free(struct wp_closing *c)
{
	if (!c)
		return;
	if (c->have_ksyms)
		wp_kallsyms_release(&c->ksyms);
	free(c->synth_anon);
	free(c->read_ids);
	free(c);
}
