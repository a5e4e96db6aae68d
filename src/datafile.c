/* SPDX-License-Identifier: GPL-2.0-or-later */
/* datafile.c: wallprof.data writer and reader (layout in wallprof-data(5)). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "datafile.h"
#include "jitmap.h"
#include "layout.h"
#include "log.h"
#include "quote.h"
#include "util.h"

struct wp_file_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint64_t meta_size;
};

struct wp_tlv {
	uint32_t tag;
	uint32_t size;		/* payload bytes, before padding to 8 */
};

enum wp_meta_tag {
	WP_TAG_CLOCK = 1,
	WP_TAG_HOSTNAME = 2,
	WP_TAG_OS_RELEASE = 3,
	WP_TAG_MACHINE = 4,
	WP_TAG_CMDLINE = 5,
	WP_TAG_SAMPLE_FORMAT = 6,
	WP_TAG_SYSTEM = 7,
	WP_TAG_TARGET = 8,
	WP_TAG_EVENT = 9,
	WP_TAG_BOOT_ID = 10,
	WP_TAG_SWITCH_STACKS = 11,
};

struct wp_tag_clock {
	int32_t clockid;
	uint32_t reserved;
	uint64_t start_clock_ns;
	uint64_t start_realtime_ns;
};

struct wp_tag_sample_format {
	uint64_t sample_type;
	uint64_t regs_mask;
	uint32_t stack_size;
	uint32_t callgraph;
	uint64_t sample_period_ns;
};

struct wp_tag_system {
	uint32_t nr_cpus;
	uint32_t page_size;
};

struct wp_tag_target {
	uint32_t mode;
	uint32_t reserved;
	uint64_t flags;
};

/* Switch-out stacks gated per CPU (record --switch-stacks=RATE). */
struct wp_tag_switch_stacks {
	uint64_t budget;	/* stacks a second per CPU */
	uint64_t reserved;
};

struct wp_tag_event {
	char name[32];
	uint32_t role;
	uint32_t attr_size;
	uint32_t nr_ids;
	uint32_t reserved;
	/* attr_size bytes of perf_event_attr, padded to 8, then u64 ids[] */
};

enum wp_block_type {
	WP_BLOCK_RECORDS = 1,
	WP_BLOCK_SUMMARY = 2,
	WP_BLOCK_KSYMS = 3,	/* "hexaddr name" lines: kernel symbols in use */
	WP_BLOCK_JITMAP = 4,	/* "pid hexstart hexsize name" lines: JIT code names */
	WP_BLOCK_NAMES = 5,	/* names of the stack table's places (placenames.h) */
};

#define WP_BLOCK_ZSTD 1U

struct wp_block_header {
	uint32_t type;
	uint32_t flags;
	uint64_t size;		/* stored payload bytes, before padding to 8 */
	uint64_t raw_size;	/* payload bytes after decompression */
};

/* ---- writer ---- */

struct wp_writer {
	int fd;
	int level;
	char *path;
	char *tmp_path;
	bool force;
	uint64_t bytes;
	int err;		/* the first failed write (logged), or 0 */
	uint64_t *blocks;	/* where each block begins, to drop the last ones */
	size_t nr_blocks, cap_blocks;
	ZSTD_CCtx *cctx;
	void *cbuf;
	size_t cbuf_size;
	size_t kept;		/* of the last records written (wp_writer_kept) */
	bool closing;		/* the closing blocks may use the reserve */
};

/*
 * Room on the file system that records leave for the blocks that close
 * the file: a summary of 144 bytes, the build ids (some 100 bytes a
 * file), the kernel symbols in use (1 KiB compressed, 2.3 KiB not, for a
 * spinning program), the JIT names.  Without it, a full disk would leave
 * no room for them but by dropping records again (which
 * wp_writer_write_summary() still does when they need more).  Small: on a
 * disk of 100 KiB it is 8% of what was there.
 */
#define CLOSING_RESERVE (8U << 10)
/*
 * The size of a records block once space runs low: what a full disk
 * costs is then at most this much, before the failing one is split.
 */
#define LOW_SPACE_BLOCK (64U << 10)

static const uint8_t zero_pad[8];

/* Note a failure; only the first one is logged (later ones follow from it). */
static int writer_failed(struct wp_writer *w, int err)
{
	if (!w->err) {
		w->err = err;
		wp_error("cannot write '%s': %s", wp_quoted(w->path), strerror(-err));
	}
	return err;
}

/* Write the buffers whole, retrying short writes and EINTR. */
static int writer_putv(struct wp_writer *w, struct iovec *iov, int n)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	while (n) {
		ssize_t done = writev(w->fd, iov, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			return writer_failed(w, -errno);
		while (n && (size_t)done >= iov->iov_len) {
			done -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (uint8_t *)iov->iov_base + done;
			iov->iov_len -= (size_t)done;
		}
	}
	w->bytes += total;
	return 0;
}

static int writer_put(struct wp_writer *w, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return writer_putv(w, &iov, 1);
}

static int writer_pad(struct wp_writer *w, size_t len)
{
	size_t pad = ALIGN_UP(len, (size_t)8) - len;

	return pad ? writer_put(w, zero_pad, pad) : 0;
}

/* Cut the file back to offset at: what a failed block left is dropped. */
static void writer_cut(struct wp_writer *w, uint64_t at)
{
	if (ftruncate(w->fd, (off_t)at) || lseek(w->fd, (off_t)at, SEEK_SET) < 0)
		wp_debug("cannot cut '%s' back to %llu bytes: %s", wp_quoted(w->tmp_path),
			 (unsigned long long)at, strerror(errno));
	w->bytes = at;
}

/*
 * The name a file of an unfinished recording of path has: ".NAME" plus
 * TMP_SUFFIX and six characters from mkostemp, in the same directory.
 */
#define TMP_SUFFIX ".wallprof-"

static bool is_tmp_name(const char *name, const char *base)
{
	size_t blen = strlen(base), slen = strlen(TMP_SUFFIX);

	return name[0] == '.' && !strncmp(name + 1, base, blen) &&
	       !strncmp(name + 1 + blen, TMP_SUFFIX, slen) && strlen(name + 1 + blen + slen) == 6;
}

/* Whether a wallprof writes to the file now: it holds a lock on it. */
static bool tmp_in_use(const char *path)
{
	struct stat st;
	int fd = wp_open_regular(path, &st);
	bool busy;

	if (fd < 0)
		return false;
	busy = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

int wp_writer_find_unfinished(const char *path, char **found, bool *running)
{
	char *dcopy = strdup(path), *bcopy = strdup(path), *best = NULL;
	const char *dir, *base;
	struct timespec newest = { 0 };
	struct dirent *de;
	DIR *d = NULL;
	int err = -ENOENT;

	*found = NULL;
	*running = false;
	if (!dcopy || !bcopy) {
		err = -ENOMEM;
		goto out;
	}
	dir = dirname(dcopy);
	base = basename(bcopy);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct stat st;

		if (!is_tmp_name(de->d_name, base) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (best && (st.st_mtim.tv_sec < newest.tv_sec ||
			     (st.st_mtim.tv_sec == newest.tv_sec &&
			      st.st_mtim.tv_nsec <= newest.tv_nsec)))
			continue;
		free(best);
		/* As the path was given: no "./" before a name without a directory. */
		if (asprintf(&best, "%s%s%s", strchr(path, '/') ? dir : "",
			     strchr(path, '/') ? "/" : "", de->d_name) < 0) {
			best = NULL;
			err = -ENOMEM;
			goto out;
		}
		newest = st.st_mtim;
	}
	if (best) {
		*running = tmp_in_use(best);
		*found = best;
		best = NULL;
		err = 0;
	}
out:
	if (d)
		closedir(d);
	free(best);
	free(dcopy);
	free(bcopy);
	return err;
}

/*
 * Whether the recording can end up at path, checked before it starts:
 * only a regular file is ever replaced (a device node or a FIFO turned
 * into a data file would break whatever uses it), and only when the
 * rename at the end will be allowed.
 */
int wp_writer_check_name(const char *path)
{
	size_t len = strlen(path);

	/*
	 * An empty name, or one ending in '/', names no file in a directory:
	 * the temporary file would be made under a name nobody asked for
	 * ("..wallprof-XXXXXX") and the rename at the end would fail.
	 */
	if (!len) {
		wp_error("the data file's name is empty; give -o a file name");
		return -EINVAL;
	}
	if (path[len - 1] == '/') {
		wp_error("'%s' ends in '/', which names a directory; wallprof writes its "
			 "data only to regular files (give -o a file name)", wp_quoted(path));
		return -EINVAL;
	}
	return 0;
}

static int check_target(const char *path, bool force)
{
	char *dcopy;
	struct stat st, dst;
	uid_t uid = geteuid();
	int err = wp_writer_check_name(path);

	if (err || lstat(path, &st))
		return err;
	if (!S_ISREG(st.st_mode)) {
		wp_error("'%s' is %s; wallprof writes its data only to regular files "
			 "(choose another name with -o)", wp_quoted(path),
			 S_ISLNK(st.st_mode) ? "a symbolic link" : wp_file_kind(st.st_mode));
		return -EINVAL;
	}
	if (!force) {
		wp_error("'%s' exists; use -f to overwrite it or -o to choose another name",
			 wp_quoted(path));
		return -EEXIST;
	}
	/*
	 * In a sticky directory (/tmp) only the owner of a file or of the
	 * directory may replace it (or a process with CAP_FOWNER, as root
	 * usually has: if it does not, the data is kept at the end anyway).
	 */
	dcopy = strdup(path);
	if (!dcopy)
		return -ENOMEM;
	if (!stat(dirname(dcopy), &dst) && (dst.st_mode & S_ISVTX) && uid &&
	    st.st_uid != uid && dst.st_uid != uid) {
		wp_error("cannot replace '%s': it belongs to another user, in a directory with "
			 "the sticky bit; choose another name with -o", wp_quoted(path));
		err = -EPERM;
	}
	free(dcopy);
	return err;
}

int wp_writer_open(const char *path, bool force, int compress_level,
		   struct wp_writer **out)
{
	struct wp_writer *w;
	char *dircopy = NULL, *left = NULL;
	bool running;
	int err, fd;

	*out = NULL;
	err = check_target(path, force);
	if (err)
		return err;
	err = wp_writer_find_unfinished(path, &left, &running);
	if (!err && running && !force) {
		wp_error("another wallprof is recording to '%s' now (into '%s'); "
			 "choose another name with -o", wp_quoted(path), wp_quoted(left));
		free(left);
		return -EBUSY;
	}
	if (!err && !running)
		wp_warn("'%s' holds an unfinished recording of '%s' (its wallprof was killed); "
			"'wallprof report -i %s' reads it", wp_quoted(left), wp_quoted(path),
			wp_quoted(left));
	free(left);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->force = force;
	w->level = compress_level;
	w->path = strdup(path);
	dircopy = strdup(path);
	if (!w->path || !dircopy) {
		err = -ENOMEM;
		goto out_free;
	}
	/* In the same directory, named as the path was given (no "./" added). */
	if (asprintf(&w->tmp_path, "%s%s.%s" TMP_SUFFIX "XXXXXX",
		     strchr(path, '/') ? dirname(dircopy) : "", strchr(path, '/') ? "/" : "",
		     basename(w->path)) < 0) {
		w->tmp_path = NULL;
		err = -ENOMEM;
		goto out_free;
	}
	w->fd = mkostemp(w->tmp_path, O_CLOEXEC);
	if (w->fd < 0) {
		err = -errno;
		wp_error("cannot create '%s': %s", wp_quoted(path), strerror(-err));
		goto out_free;
	}
	/*
	 * Never on descriptors 0-2: with standard error closed, messages
	 * would be written into the data.
	 */
	if (w->fd <= STDERR_FILENO) {
		fd = fcntl(w->fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		if (fd < 0) {
			err = -errno;
			wp_error("cannot create '%s': %s", wp_quoted(path), strerror(-err));
			goto out_free;
		}
		close(w->fd);
		w->fd = fd;
	}
	/* Tells a recording in progress from one whose wallprof was killed. */
	if (flock(w->fd, LOCK_EX | LOCK_NB))
		wp_debug("cannot lock '%s': %s", wp_quoted(w->tmp_path), strerror(errno));
	if (compress_level > 0) {
		w->cctx = ZSTD_createCCtx();
		if (!w->cctx) {
			err = -ENOMEM;
			goto out_free;
		}
		/* A checksum per frame: a damaged block is an error, not wrong data. */
		if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel,
							compress_level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1))) {
			wp_error("zstd rejects compression level %d", compress_level);
			err = -EINVAL;
			goto out_free;
		}
	}
	free(dircopy);
	*out = w;
	return 0;

out_free:
	free(dircopy);
	wp_writer_abort(w);
	return err;
}

static int writer_put_tlv(struct wp_writer *w, uint32_t tag, const void *a,
			  size_t alen, const void *b, size_t blen)
{
	struct wp_tlv t = { .tag = tag, .size = (uint32_t)(alen + blen) };
	int err;

	err = writer_put(w, &t, sizeof(t));
	if (!err && alen)
		err = writer_put(w, a, alen);
	if (!err && blen)
		err = writer_put(w, b, blen);
	if (!err)
		err = writer_pad(w, alen + blen);
	return err;
}

static size_t tlv_len(size_t payload)
{
	return sizeof(struct wp_tlv) + ALIGN_UP(payload, (size_t)8);
}

/* The attr bytes to store: its own size, bounded by what we hold. */
static size_t attr_len(const struct wp_event_desc *e)
{
	return e->attr.size && e->attr.size <= sizeof(e->attr) ? e->attr.size : sizeof(e->attr);
}

static size_t event_payload_len(const struct wp_event_desc *e)
{
	return sizeof(struct wp_tag_event) + ALIGN_UP(attr_len(e), (size_t)8) +
	       (size_t)e->nr_ids * 8;
}

static size_t cmdline_len(const struct wp_meta *m)
{
	size_t n = 0;

	for (uint32_t i = 0; i < m->argc; i++)
		n += strlen(m->argv[i]) + 1;
	return n;
}

int wp_writer_write_meta(struct wp_writer *w, const struct wp_meta *m)
{
	struct wp_tag_clock clk = {
		.clockid = m->clockid,
		.start_clock_ns = m->start_clock_ns,
		.start_realtime_ns = m->start_realtime_ns,
	};
	struct wp_tag_sample_format sf = {
		.sample_type = m->sample_type,
		.regs_mask = m->regs_mask,
		.stack_size = m->stack_size,
		.callgraph = m->callgraph,
		.sample_period_ns = m->sample_period_ns,
	};
	struct wp_tag_system sys = { .nr_cpus = m->nr_cpus, .page_size = m->page_size };
	struct wp_tag_target tgt = { .mode = m->target_mode, .flags = m->flags };
	struct wp_tag_switch_stacks sws = { .budget = m->switch_stack_budget };
	struct wp_file_header fh = {
		.magic = WP_FILE_MAGIC,
		.version = m->flags & WP_META_STACK_TABLE ? WP_FILE_VERSION : WP_FILE_VERSION_RAW,
		.byte_order = WP_FILE_BYTE_ORDER,
	};
	size_t cmd_len = cmdline_len(m);
	int err;

	fh.meta_size = tlv_len(sizeof(clk)) + tlv_len(strlen(m->hostname) + 1) +
		       tlv_len(strlen(m->os_release) + 1) + tlv_len(strlen(m->machine) + 1) +
		       tlv_len(cmd_len) + tlv_len(sizeof(sf)) + tlv_len(sizeof(sys)) +
		       tlv_len(sizeof(tgt)) + tlv_len(strlen(m->boot_id) + 1);
	if (sws.budget)
		fh.meta_size += tlv_len(sizeof(sws));
	for (uint32_t i = 0; i < m->nr_events; i++)
		fh.meta_size += tlv_len(event_payload_len(&m->events[i]));

	err = writer_put(w, &fh, sizeof(fh));
	if (!err)
		err = writer_put_tlv(w, WP_TAG_CLOCK, &clk, sizeof(clk), NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_HOSTNAME, m->hostname,
				     strlen(m->hostname) + 1, NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_OS_RELEASE, m->os_release,
				     strlen(m->os_release) + 1, NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_MACHINE, m->machine,
				     strlen(m->machine) + 1, NULL, 0);
	if (!err) {
		struct wp_tlv t = { .tag = WP_TAG_CMDLINE, .size = (uint32_t)cmd_len };

		err = writer_put(w, &t, sizeof(t));
		for (uint32_t i = 0; !err && i < m->argc; i++)
			err = writer_put(w, m->argv[i], strlen(m->argv[i]) + 1);
		if (!err)
			err = writer_pad(w, cmd_len);
	}
	if (!err)
		err = writer_put_tlv(w, WP_TAG_SAMPLE_FORMAT, &sf, sizeof(sf), NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_SYSTEM, &sys, sizeof(sys), NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_TARGET, &tgt, sizeof(tgt), NULL, 0);
	if (!err)
		err = writer_put_tlv(w, WP_TAG_BOOT_ID, m->boot_id, strlen(m->boot_id) + 1,
				     NULL, 0);
	if (!err && sws.budget)
		err = writer_put_tlv(w, WP_TAG_SWITCH_STACKS, &sws, sizeof(sws), NULL, 0);
	for (uint32_t i = 0; !err && i < m->nr_events; i++) {
		const struct wp_event_desc *e = &m->events[i];
		struct wp_tag_event te = {
			.role = e->role,
			.attr_size = (uint32_t)attr_len(e),
			.nr_ids = e->nr_ids,
		};
		struct wp_tlv t = { .tag = WP_TAG_EVENT,
				    .size = (uint32_t)event_payload_len(e) };

		memcpy(te.name, e->name, sizeof(te.name));
		te.name[sizeof(te.name) - 1] = '\0';
		err = writer_put(w, &t, sizeof(t));
		if (!err)
			err = writer_put(w, &te, sizeof(te));
		if (!err)
			err = writer_put(w, &e->attr, attr_len(e));
		if (!err)
			err = writer_pad(w, attr_len(e));
		if (!err && e->nr_ids)
			err = writer_put(w, e->ids, (size_t)e->nr_ids * 8);
	}
	return err;
}

static int writer_put_payload(struct wp_writer *w, const struct wp_block_header *hdr,
			      const void *payload);

static int writer_put_block(struct wp_writer *w, uint32_t type, const void *buf,
			    size_t len)
{
	struct wp_block_header bh = { .type = type, .size = len, .raw_size = len };
	const void *payload = buf;

	if (w->cctx && type != WP_BLOCK_SUMMARY) {
		size_t bound = ZSTD_compressBound(len), n;

		if (bound > w->cbuf_size) {
			void *nb = realloc(w->cbuf, bound);

			if (!nb)
				return writer_failed(w, -ENOMEM);
			w->cbuf = nb;
			w->cbuf_size = bound;
		}
		n = ZSTD_compress2(w->cctx, w->cbuf, w->cbuf_size, buf, len);
		if (ZSTD_isError(n)) {
			wp_error("zstd compression failed: %s", ZSTD_getErrorName(n));
			if (!w->err)
				w->err = -EIO;
			return -EIO;
		}
		/* Keep a block raw when compressing does not pay. */
		if (n < len) {
			bh.flags = WP_BLOCK_ZSTD;
			bh.size = n;
			payload = w->cbuf;
		}
	}
	return writer_put_payload(w, &bh, payload);
}

/*
 * The bytes records may still take on the file system, leaving the
 * closing reserve; false when the file system does not say.  Root may
 * write into the blocks kept for it, as the kernel lets it.
 */
static bool writer_room(const struct wp_writer *w, uint64_t *room)
{
	struct statvfs sv;
	uint64_t free_bytes;

	if (fstatvfs(w->fd, &sv) || !sv.f_frsize || !sv.f_blocks)
		return false;
	free_bytes = (uint64_t)(geteuid() ? sv.f_bavail : sv.f_bfree) * sv.f_frsize;
	*room = free_bytes > CLOSING_RESERVE ? free_bytes - CLOSING_RESERVE : 0;
	return true;
}

/* Append a block whose header and payload are ready. */
static int writer_put_payload(struct wp_writer *w, const struct wp_block_header *hdr,
			      const void *payload)
{
	struct wp_block_header bh = *hdr;
	uint64_t start = w->bytes, room;
	struct iovec iov[3];
	int err;

	/* Records stop short of the closing reserve, as if the disk were full there. */
	if (bh.type == WP_BLOCK_RECORDS && !w->closing && writer_room(w, &room) &&
	    sizeof(bh) + ALIGN_UP(bh.size, (uint64_t)8) > room)
		return writer_failed(w, -ENOSPC);
	/* One call per block: a recorder killed meanwhile seldom leaves half of one. */
	iov[0] = (struct iovec){ .iov_base = &bh, .iov_len = sizeof(bh) };
	iov[1] = (struct iovec){ .iov_base = (void *)payload, .iov_len = bh.size };
	iov[2] = (struct iovec){ .iov_base = (void *)zero_pad,
				 .iov_len = ALIGN_UP(bh.size, (uint64_t)8) - bh.size };
	err = writer_putv(w, iov, iov[2].iov_len ? 3 : 2);
	if (err) {
		/* The file stays whole up to its last complete block. */
		writer_cut(w, start);
		return err;
	}
	/* Without room, fewer blocks can be dropped one by one: no harm. */
	if (WP_GROW(w->blocks, w->cap_blocks, w->nr_blocks + 1))
		return 0;
	w->blocks[w->nr_blocks++] = start;
	return 0;
}

static bool is_space_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

/* The bytes of the whole records at the start of buf that fit in max (one at least). */
static size_t records_prefix(const uint8_t *buf, size_t len, size_t max)
{
	size_t n = 0;

	while (n + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(buf + n);

		if (h->size < sizeof(*h) || h->size > len - n || (n && n + h->size > max))
			break;
		n += h->size;
	}
	return n ? n : len;
}

int wp_writer_write_records(struct wp_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t done = 0, piece = len;
	uint64_t room;
	int err, first = 0;

	w->kept = 0;
	if (!len)
		return 0;
	/*
	 * Low on space: small blocks, so that the one that fails, and any
	 * dropped later to make room for the summary, cost little.
	 */
	if (!w->closing && writer_room(w, &room) && room < 4 * (uint64_t)len)
		piece = LOW_SPACE_BLOCK;
	/*
	 * A block that does not fit is split, halving until a part fits or
	 * a single record does not: every record that fits is kept.
	 */
	while (done < len) {
		size_t n = records_prefix(p + done, len - done, piece);

		err = writer_put_block(w, WP_BLOCK_RECORDS, p + done, n);
		if (!err) {
			done += n;
			w->kept = done;
			continue;
		}
		if (!is_space_error(err))
			return err;
		if (!first)
			first = err;
		if (records_prefix(p + done, len - done, 1) >= n)
			break;	/* not even one record fits */
		piece = n / 2;
	}
	return first;
}

size_t wp_writer_kept(const struct wp_writer *w)
{
	return w->kept;
}

void wp_writer_closing(struct wp_writer *w)
{
	w->closing = true;
}

int wp_writer_write_records_zstd(struct wp_writer *w, const void *frame, size_t len,
				 size_t raw_len)
{
	struct wp_block_header bh = {
		.type = WP_BLOCK_RECORDS, .flags = WP_BLOCK_ZSTD, .size = len, .raw_size = raw_len,
	};

	if (!w->cctx || !len || raw_len > WP_BLOCK_MAX_SIZE || len > WP_BLOCK_MAX_SIZE)
		return -EINVAL;
	return writer_put_payload(w, &bh, frame);
}

int wp_writer_write_ksyms(struct wp_writer *w, const char *text, size_t len)
{
	if (!len)
		return 0;
	return writer_put_block(w, WP_BLOCK_KSYMS, text, len);
}

int wp_writer_write_jitmap(struct wp_writer *w, const char *text, size_t len)
{
	if (!len)
		return 0;
	return writer_put_block(w, WP_BLOCK_JITMAP, text, len);
}

int wp_writer_write_names(struct wp_writer *w, const void *buf, size_t len)
{
	if (!len)
		return 0;
	return writer_put_block(w, WP_BLOCK_NAMES, buf, len);
}

int wp_writer_write_summary(struct wp_writer *w, const struct wp_summary *s)
{
	int err = writer_put_block(w, WP_BLOCK_SUMMARY, s, sizeof(*s));
	unsigned int dropped = 0;

	/* A file that reads to its end is worth more than its last block. */
	while (err && is_space_error(err) && w->nr_blocks) {
		writer_cut(w, w->blocks[--w->nr_blocks]);
		dropped++;
		err = writer_put_block(w, WP_BLOCK_SUMMARY, s, sizeof(*s));
	}
	if (!err && dropped)
		wp_warn("dropped the last %u blocks of records of '%s' to make room for its "
			"summary", dropped, wp_quoted(w->path));
	return err;
}

int wp_writer_error(const struct wp_writer *w)
{
	return w->err;
}

/*
 * Keep the data of a file that cannot have its final name: under the
 * temporary name without the leading dot, visible next to where it was
 * meant to be, or else under the temporary name.  Returns that name.
 */
static char *writer_keep(struct wp_writer *w)
{
	char *slash = strrchr(w->tmp_path, '/'), *kept;
	size_t at = slash ? (size_t)(slash - w->tmp_path) + 1 : 0;

	kept = malloc(strlen(w->tmp_path));
	if (kept) {
		memcpy(kept, w->tmp_path, at);
		strcpy(kept + at, w->tmp_path + at + 1);	/* without the '.' */
		/* link() replaces nothing that may be there meanwhile. */
		if (!link(w->tmp_path, kept)) {
			unlink(w->tmp_path);
			return kept;
		}
		free(kept);
	}
	kept = w->tmp_path;
	w->tmp_path = NULL;
	return kept;
}

int wp_writer_commit_where(struct wp_writer *w, char **where)
{
	char *kept = NULL;
	struct stat st;
	int err = 0;

	if (where)
		*where = NULL;
	if (fsync(w->fd) && errno != EINVAL) {
		err = -errno;
		kept = writer_keep(w);
		wp_error("cannot write '%s': %s; the recording, which may be incomplete, "
			 "is kept as '%s'", wp_quoted(w->path), strerror(-err), wp_quoted(kept));
		goto out;
	}
	/* The check made at the start, again: something may have appeared since. */
	if (!lstat(w->path, &st) && !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		kept = writer_keep(w);
		wp_error("'%s' became %s during the recording and is left as it is; the "
			 "recording is kept as '%s'", wp_quoted(w->path),
			 S_ISLNK(st.st_mode) ? "a symbolic link" : wp_file_kind(st.st_mode),
			 wp_quoted(kept));
		goto out;
	}
	if (!w->force && !link(w->tmp_path, w->path)) {
		/* link() refuses to replace a file created meanwhile. */
		unlink(w->tmp_path);
	} else if (!w->force) {
		err = -errno;
		kept = writer_keep(w);
		if (err == -EEXIST)
			wp_error("'%s' appeared during the recording and is left as it is; "
				 "the recording is kept as '%s'", wp_quoted(w->path),
				 wp_quoted(kept));
		else
			wp_error("cannot create '%s': %s; the recording is kept as '%s'",
				 wp_quoted(w->path), strerror(-err), wp_quoted(kept));
		goto out;
	} else if (rename(w->tmp_path, w->path)) {
		err = -errno;
		kept = writer_keep(w);
		wp_error("cannot replace '%s': %s; the recording is kept as '%s'",
			 wp_quoted(w->path), strerror(-err), wp_quoted(kept));
		goto out;
	}
	if (where)
		*where = strdup(w->path);
out:
	if (where && kept) {
		*where = kept;
		kept = NULL;
	}
	free(kept);
	/* Committed or kept: nothing is removed from here on. */
	free(w->tmp_path);
	w->tmp_path = NULL;
	wp_writer_abort(w);
	return err;
}

int wp_writer_commit(struct wp_writer *w)
{
	return wp_writer_commit_where(w, NULL);
}

void wp_writer_abort(struct wp_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp_path)
		unlink(w->tmp_path);
	ZSTD_freeCCtx(w->cctx);
	free(w->blocks);
	free(w->cbuf);
	free(w->tmp_path);
	free(w->path);
	free(w);
}

uint64_t wp_writer_bytes(const struct wp_writer *w)
{
	return w->bytes;
}

const char *wp_writer_path(const struct wp_writer *w)
{
	return w->path;
}

/* ---- reader ---- */

/*
 * The records a file may hold: recordings have under 0.2 per byte of file
 * (compressed or not), so this is a bound no recording meets, on the work
 * a file can ask for.
 */
#define RECORDS_PER_BYTE 8
#define RECORDS_SLACK (1U << 16)

/* A block read ahead (see load_block). */
struct loaded {
	int status;		/* 1 a block, 0 end of file, -EBADMSG (what), -ENOMEM */
	const char *what;	/* why the block is bad */
	uint64_t offset;	/* of the block */
	uint64_t next;		/* of the block after it */
	struct wp_block_header bh;
	struct wp_block_ref *block;	/* its payload, held once */
};

/*
 * Most of reading a recording is decompressing its blocks: a thread of
 * its own does that for the next block while the reader's consumer works
 * through the current one.  One block ahead, in a slot it fills and the
 * reader empties; it stops at the end of the file or at a bad block.
 */
struct loader {
	pthread_t thread;
	bool tried;		/* to start it */
	bool running;		/* its thread is there, and loads */
	bool sync_made;		/* lock and changed are initialised */
	pthread_mutex_t lock;
	pthread_cond_t changed;	/* the slot was filled or emptied, or stop */
	bool full, stop;
	struct loaded slot;
	/* The loader's own. */
	uint64_t offset;	/* of the next block to load */
	void *zbuf;
	size_t zbuf_cap;
	ZSTD_DCtx *dctx;
};

struct wp_reader {
	int fd;
	char *path;
	struct wp_meta meta;
	struct wp_summary summary;
	bool have_summary;
	bool failed;
	uint64_t offset;	/* file offset of the next block */
	uint64_t file_size;
	uint64_t block_offset;
	struct wp_block_ref *cur;	/* decoded payload of the current block */
	uint8_t *block;		/* cur->data */
	size_t block_len, block_pos;
	ZSTD_DCtx *dctx;
	struct loader loader;
	uint64_t ksyms_offset;	/* of the KSYMS block, 0 if none */
	uint64_t jitmap_offset;	/* of the JITMAP block, 0 if none */
	uint64_t names_offset;	/* of the NAMES block, 0 if none */
	uint64_t end_ns;	/* the SUMMARY block's end_clock_ns, 0 if none */
	uint64_t records;	/* read so far, for the bound on them */
};

uint64_t wp_meta_switch_stack_rate(const struct wp_meta *m)
{
	if (m->switch_stack_budget)
		return m->switch_stack_budget;
	for (uint32_t i = 0; i < m->nr_events; i++)
		if (m->events[i].role == WP_EVENT_SWITCH_OUT && m->events[i].attr.freq)
			return m->events[i].attr.sample_freq;
	return 0;
}

bool wp_event_other_wakers(const struct wp_event_desc *e)
{
	return e->role == WP_EVENT_WAKEUP && e->attr.exclude_callchain_user &&
	       !e->attr.sample_stack_user && !e->attr.exclude_callchain_kernel;
}

void wp_meta_release(struct wp_meta *m)
{
	if (m->argv) {
		for (uint32_t i = 0; i < m->argc; i++)
			free(m->argv[i]);
		free(m->argv);
	}
	for (uint32_t i = 0; i < m->nr_events && m->events; i++)
		free(m->events[i].ids);
	free(m->events);
	memset(m, 0, sizeof(*m));
}

static void copy_str(char *dst, size_t dsize, const uint8_t *p, size_t len)
{
	size_t n = strnlen((const char *)p, len);

	if (n >= dsize)
		n = dsize - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

static int parse_cmdline(struct wp_meta *m, const uint8_t *p, size_t len)
{
	size_t i, start = 0;
	uint32_t n = 0;

	for (i = 0; i < len; i++)
		n += p[i] == '\0';
	m->argv = calloc(n + 1, sizeof(*m->argv));
	if (!m->argv)
		return -ENOMEM;
	for (i = 0; i < len && m->argc < n; i++) {
		if (p[i])
			continue;
		m->argv[m->argc] = strndup((const char *)p + start, i - start);
		if (!m->argv[m->argc])
			return -ENOMEM;
		m->argc++;
		start = i + 1;
	}
	return 0;
}

static int parse_event(struct wp_meta *m, const uint8_t *p, size_t len)
{
	struct wp_event_desc *e, *events;
	struct wp_tag_event te;
	uint64_t attr_len;

	if (len < sizeof(te))
		return -EBADMSG;
	memcpy(&te, p, sizeof(te));
	/* In 64 bits: with a 32-bit size_t, an attr_size near 4 GiB would wrap. */
	attr_len = ALIGN_UP((uint64_t)te.attr_size, (uint64_t)8);
	if (te.attr_size < PERF_ATTR_SIZE_VER0 || te.nr_ids > (1U << 24) ||
	    sizeof(te) + attr_len + (uint64_t)te.nr_ids * 8 > len)
		return -EBADMSG;
	events = realloc(m->events, (m->nr_events + 1) * sizeof(*events));
	if (!events)
		return -ENOMEM;
	m->events = events;
	e = &events[m->nr_events];
	memset(e, 0, sizeof(*e));
	memcpy(e->name, te.name, sizeof(e->name));
	e->name[sizeof(e->name) - 1] = '\0';
	e->role = te.role;
	/* A newer, larger attr is cut to what this build knows. */
	memcpy(&e->attr, p + sizeof(te),
	       te.attr_size < sizeof(e->attr) ? te.attr_size : sizeof(e->attr));
	if (te.nr_ids) {
		e->ids = malloc((size_t)te.nr_ids * 8);
		if (!e->ids)
			return -ENOMEM;
		memcpy(e->ids, p + sizeof(te) + (size_t)attr_len, (size_t)te.nr_ids * 8);
	}
	e->nr_ids = te.nr_ids;
	m->nr_events++;
	return 0;
}

static int parse_meta(struct wp_meta *m, const uint8_t *buf, size_t len)
{
	bool have_clock = false, have_format = false;
	size_t off = 0;
	int err = 0;

	while (!err && off + sizeof(struct wp_tlv) <= len) {
		struct wp_tlv t;
		const uint8_t *p;

		memcpy(&t, buf + off, sizeof(t));
		off += sizeof(t);
		/* The payload and its padding lie inside the meta (in 64 bits). */
		if (ALIGN_UP((uint64_t)t.size, (uint64_t)8) > len - off)
			return -EBADMSG;
		p = buf + off;
		off += ALIGN_UP((size_t)t.size, (size_t)8);
		switch (t.tag) {
		case WP_TAG_CLOCK: {
			struct wp_tag_clock c;

			if (t.size < sizeof(c))
				return -EBADMSG;
			memcpy(&c, p, sizeof(c));
			m->clockid = c.clockid;
			m->start_clock_ns = c.start_clock_ns;
			m->start_realtime_ns = c.start_realtime_ns;
			have_clock = true;
			break;
		}
		case WP_TAG_HOSTNAME:
			copy_str(m->hostname, sizeof(m->hostname), p, t.size);
			break;
		case WP_TAG_OS_RELEASE:
			copy_str(m->os_release, sizeof(m->os_release), p, t.size);
			break;
		case WP_TAG_MACHINE:
			copy_str(m->machine, sizeof(m->machine), p, t.size);
			break;
		case WP_TAG_BOOT_ID:
			copy_str(m->boot_id, sizeof(m->boot_id), p, t.size);
			break;
		case WP_TAG_SWITCH_STACKS: {
			struct wp_tag_switch_stacks sw;

			if (t.size < sizeof(sw))
				return -EBADMSG;
			memcpy(&sw, p, sizeof(sw));
			m->switch_stack_budget = sw.budget;
			break;
		}
		case WP_TAG_CMDLINE:
			if (!m->argv)
				err = parse_cmdline(m, p, t.size);
			break;
		case WP_TAG_SAMPLE_FORMAT: {
			struct wp_tag_sample_format sf;

			if (t.size < sizeof(sf))
				return -EBADMSG;
			memcpy(&sf, p, sizeof(sf));
			m->sample_type = sf.sample_type;
			m->regs_mask = sf.regs_mask;
			m->stack_size = sf.stack_size;
			m->callgraph = sf.callgraph;
			m->sample_period_ns = sf.sample_period_ns;
			have_format = true;
			break;
		}
		case WP_TAG_SYSTEM: {
			struct wp_tag_system s;

			if (t.size < sizeof(s))
				return -EBADMSG;
			memcpy(&s, p, sizeof(s));
			m->nr_cpus = s.nr_cpus;
			m->page_size = s.page_size;
			break;
		}
		case WP_TAG_TARGET: {
			struct wp_tag_target tg;

			if (t.size < sizeof(tg))
				return -EBADMSG;
			memcpy(&tg, p, sizeof(tg));
			m->target_mode = tg.mode;
			m->flags = tg.flags;
			break;
		}
		case WP_TAG_EVENT:
			err = parse_event(m, p, t.size);
			break;
		default:
			/* Unknown tags are skipped: newer writers may add some. */
			break;
		}
	}
	if (err)
		return err;
	if (off != len || !have_clock || !have_format)
		return -EBADMSG;
	return 0;
}

/* The end time in a SUMMARY block's payload, or 0. */
static uint64_t reader_summary_end(struct wp_reader *r, const struct wp_block_header *bh,
				   uint64_t off)
{
	uint8_t z[512], raw[512];
	uint64_t end;

	if (bh->size > sizeof(z) || bh->raw_size > sizeof(raw) || bh->raw_size < sizeof(end) ||
	    pread(r->fd, z, bh->size, (off_t)(off + sizeof(*bh))) != (ssize_t)bh->size)
		return 0;
	if (bh->flags == WP_BLOCK_ZSTD) {
		size_t n = ZSTD_decompressDCtx(r->dctx, raw, bh->raw_size, z, bh->size);

		if (ZSTD_isError(n) || n != bh->raw_size)
			return 0;
		memcpy(&end, raw, sizeof(end));
	} else if (!bh->flags && bh->size == bh->raw_size) {
		memcpy(&end, z, sizeof(end));
	} else {
		return 0;
	}
	return end;
}

/*
 * Walk the block headers (not the payloads) for the KSYMS, JITMAP and
 * NAMES blocks, written last but needed before the first frame is named,
 * and for the end time in the SUMMARY block, which bounds the times of the
 * records.  A damaged chain simply ends the search; reading proper
 * reports it.
 */
static void reader_find_late_blocks(struct wp_reader *r)
{
	uint64_t off = r->offset;
	struct wp_block_header bh;

	while (off <= r->file_size && r->file_size - off >= sizeof(bh)) {
		if (pread(r->fd, &bh, sizeof(bh), (off_t)off) != (ssize_t)sizeof(bh) ||
		    bh.size > WP_BLOCK_MAX_SIZE || bh.raw_size > WP_BLOCK_MAX_SIZE)
			return;
		if (bh.type == WP_BLOCK_KSYMS && !r->ksyms_offset)
			r->ksyms_offset = off;
		if (bh.type == WP_BLOCK_JITMAP && !r->jitmap_offset)
			r->jitmap_offset = off;
		if (bh.type == WP_BLOCK_NAMES && !r->names_offset)
			r->names_offset = off;
		if (bh.size > r->file_size - off - sizeof(bh))
			return;
		if (bh.type == WP_BLOCK_SUMMARY) {
			r->end_ns = reader_summary_end(r, &bh, off);
			return;
		}
		off += sizeof(bh) + ALIGN_UP(bh.size, (uint64_t)8);
	}
}

/*
 * The most each text block may decode to: what record writes at most
 * (the kernel symbols in use are a part of a kallsyms of some 10 MiB;
 * the JIT names are cut at WP_JITMAP_MAX_TEXT), so that a file cannot
 * make a reader decode gigabytes of "symbols".  Each is decoded once
 * (only the first block of a type counts), so a reader decodes at most
 * their sum.
 */
#define KSYMS_MAX_TEXT (64U << 20)
#define NAMES_MAX_TEXT WP_BLOCK_MAX_SIZE

static uint64_t text_block_max(uint32_t type)
{
	switch (type) {
	case WP_BLOCK_KSYMS:
		return KSYMS_MAX_TEXT;
	case WP_BLOCK_JITMAP:
		return WP_JITMAP_MAX_TEXT;
	default:
		return NAMES_MAX_TEXT;
	}
}

/* The text payload of the block of this type at offset (0: none). */
static int reader_text_block(struct wp_reader *r, uint64_t offset, uint32_t type,
			     char **text, size_t *len)
{
	struct wp_block_header bh;
	void *z = NULL;
	char *raw;
	int err = -EBADMSG;

	*text = NULL;
	*len = 0;
	if (!offset)
		return 0;
	/*
	 * Read again, so checked again: the file may have changed since it
	 * was opened, and nothing unchecked is handed to malloc or narrowed.
	 */
	if (pread(r->fd, &bh, sizeof(bh), (off_t)offset) != (ssize_t)sizeof(bh) ||
	    bh.type != type || bh.size > WP_BLOCK_MAX_SIZE ||
	    bh.raw_size > text_block_max(type) ||
	    r->file_size - offset - sizeof(bh) < bh.size)
		return -EBADMSG;
	raw = malloc(bh.raw_size + 1);
	z = malloc(bh.size + 1);
	if (!raw || !z) {
		err = -ENOMEM;
		goto out;
	}
	if (pread(r->fd, z, bh.size, (off_t)(offset + sizeof(bh))) != (ssize_t)bh.size)
		goto out;
	if (bh.flags & WP_BLOCK_ZSTD) {
		size_t n = ZSTD_decompressDCtx(r->dctx, raw, bh.raw_size, z, bh.size);

		if (ZSTD_isError(n) || n != bh.raw_size)
			goto out;
	} else if (bh.flags || bh.size != bh.raw_size) {
		goto out;
	} else {
		memcpy(raw, z, bh.size);
	}
	raw[bh.raw_size] = '\0';
	*text = raw;
	*len = bh.raw_size;
	raw = NULL;
	err = 0;
out:
	free(raw);
	free(z);
	return err;
}

int wp_reader_ksyms(struct wp_reader *r, char **text, size_t *len)
{
	return reader_text_block(r, r->ksyms_offset, WP_BLOCK_KSYMS, text, len);
}

int wp_reader_jitmap(struct wp_reader *r, char **text, size_t *len)
{
	return reader_text_block(r, r->jitmap_offset, WP_BLOCK_JITMAP, text, len);
}

int wp_reader_names(struct wp_reader *r, char **buf, size_t *len)
{
	return reader_text_block(r, r->names_offset, WP_BLOCK_NAMES, buf, len);
}

int wp_reader_open(const char *path, struct wp_reader **out)
{
	struct wp_file_header fh;
	struct wp_reader *r;
	char q[WP_QUOTE_MSG];
	uint8_t *meta = NULL;
	struct stat st;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* Only messages use the name: quoted, since it can hold any byte. */
	r->path = strdup(wp_quote(q, sizeof(q), path, WP_QUOTE_TEXT));
	if (!r->path) {
		free(r);
		return -ENOMEM;
	}
	/* Not even opened unless regular: a FIFO's open would block. */
	r->fd = wp_open_regular(path, &st);
	if (r->fd < 0) {
		err = r->fd;
		if (err == -EINVAL)
			wp_error("'%s' is %s, not a regular file", r->path,
				 wp_file_kind(st.st_mode));
		else
			wp_error("cannot open '%s': %s", r->path, strerror(-err));
		goto out_close;
	}
	r->file_size = (uint64_t)st.st_size;
	if (r->file_size < sizeof(fh) || wp_read_exact(r->fd, &fh, sizeof(fh)) ||
	    memcmp(fh.magic, WP_FILE_MAGIC, 8)) {
		err = -EBADMSG;
		wp_error("'%s' is not a wallprof data file", r->path);
		goto out_close;
	}
	if (fh.byte_order != WP_FILE_BYTE_ORDER) {
		err = -EBADMSG;
		wp_error("'%s' was recorded on a machine of the other byte order", r->path);
		goto out_close;
	}
	if (fh.version > WP_FILE_VERSION || fh.version == 0) {
		err = -EPROTO;
		wp_error("'%s' has file format version %u; this wallprof reads versions 1 to %d",
			 r->path, fh.version, WP_FILE_VERSION);
		goto out_close;
	}
	if (fh.meta_size > r->file_size - sizeof(fh) || fh.meta_size > (64U << 20)) {
		err = -EBADMSG;
		wp_error("'%s' is truncated or corrupt (bad header size)", r->path);
		goto out_close;
	}
	meta = malloc(fh.meta_size ? fh.meta_size : 1);
	if (!meta) {
		err = -ENOMEM;
		goto out_close;
	}
	err = wp_read_exact(r->fd, meta, fh.meta_size);
	if (!err)
		err = parse_meta(&r->meta, meta, fh.meta_size);
	if (err) {
		if (err != -ENOMEM)
			wp_error("'%s' has a corrupt header", r->path);
		err = err == -ENOMEM ? err : -EBADMSG;
		goto out_close;
	}
	free(meta);
	r->offset = sizeof(fh) + fh.meta_size;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		err = -ENOMEM;
		goto out_close;
	}
	reader_find_late_blocks(r);
	*out = r;
	return 0;

out_close:
	free(meta);
	wp_reader_close(r);
	return err;
}

const struct wp_meta *wp_reader_meta(const struct wp_reader *r)
{
	return &r->meta;
}

static int reader_fail(struct wp_reader *r, const char *what)
{
	if (!r->failed)
		wp_error("'%s': %s at offset %llu; the rest of the file is skipped",
			 r->path, what, (unsigned long long)r->block_offset);
	r->failed = true;
	return -EBADMSG;
}

static int grow(void **buf, size_t *cap, size_t want)
{
	void *nb;

	if (want <= *cap)
		return 0;
	nb = realloc(*buf, want);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = want;
	return 0;
}

struct wp_block_ref {
	unsigned int refs;
	size_t cap;
	uint8_t data[];
};

/* A buffer of at least size bytes, held once. */
static struct wp_block_ref *block_new(size_t size)
{
	size_t cap = size > (4U << 20) ? size : (4U << 20);
	struct wp_block_ref *b = malloc(sizeof(*b) + cap);

	if (b) {
		b->refs = 1;
		b->cap = cap;
	}
	return b;
}

struct wp_block_ref *wp_reader_block_get(struct wp_reader *r)
{
	if (r->cur)
		r->cur->refs++;
	return r->cur;
}

void wp_block_put(struct wp_block_ref *b)
{
	if (b && !--b->refs)
		free(b);
}

size_t wp_block_bytes(const struct wp_block_ref *b)
{
	return b ? sizeof(*b) + b->cap : 0;
}

/*
 * Read and decompress the block at ld->offset into a new buffer: what
 * the loader does, on its thread or (when it has none) on the reader's.
 * Touches nothing of the reader's but the file and the sizes.
 */
static void load_block(const struct wp_reader *r, struct loader *ld, struct loaded *out)
{
	struct wp_block_header bh;
	size_t padded;

	memset(out, 0, sizeof(*out));
	out->offset = ld->offset;
	out->status = -EBADMSG;
	if (ld->offset == r->file_size) {
		out->status = 0;
		return;
	}
	if (r->file_size - ld->offset < sizeof(bh)) {
		out->what = "truncated block header";
		return;
	}
	if (pread(r->fd, &bh, sizeof(bh), (off_t)ld->offset) != (ssize_t)sizeof(bh)) {
		out->what = "unreadable block header";
		return;
	}
	if (bh.size > WP_BLOCK_MAX_SIZE || bh.raw_size > WP_BLOCK_MAX_SIZE) {
		out->what = "block of impossible size";
		return;
	}
	padded = ALIGN_UP((size_t)bh.size, (size_t)8);
	if (r->file_size - ld->offset - sizeof(bh) < padded) {
		out->what = "truncated block";
		return;
	}
	/*
	 * Only records and the summary are read in sequence.  The symbol and
	 * name blocks are read once each, by offset (reader_text_block): a
	 * file repeating them would otherwise have each decoded again here,
	 * up to WP_BLOCK_MAX_SIZE apiece, for nothing.
	 */
	if (bh.type != WP_BLOCK_RECORDS && bh.type != WP_BLOCK_SUMMARY) {
		ld->offset += sizeof(bh) + padded;
		out->next = ld->offset;
		out->bh = bh;
		out->bh.raw_size = 0;
		out->status = 1;
		return;
	}
	if (!ld->dctx)
		ld->dctx = ZSTD_createDCtx();
	out->block = block_new(bh.raw_size + 1);
	if (grow(&ld->zbuf, &ld->zbuf_cap, bh.size + 1) || !out->block || !ld->dctx) {
		out->status = -ENOMEM;
		return;
	}
	if (pread(r->fd, ld->zbuf, bh.size, (off_t)(ld->offset + sizeof(bh))) != (ssize_t)bh.size) {
		out->what = "unreadable block";
		return;
	}
	ld->offset += sizeof(bh) + padded;
	out->next = ld->offset;
	if (bh.flags & WP_BLOCK_ZSTD) {
		size_t n = ZSTD_decompressDCtx(ld->dctx, out->block->data, bh.raw_size,
					       ld->zbuf, bh.size);

		if (ZSTD_isError(n) || n != bh.raw_size) {
			out->what = "corrupt compressed block";
			return;
		}
	} else if (bh.flags) {
		out->what = "block with unknown flags";
		return;
	} else {
		if (bh.raw_size != bh.size) {
			out->what = "block with inconsistent sizes";
			return;
		}
		memcpy(out->block->data, ld->zbuf, bh.size);
	}
	out->bh = bh;
	out->status = 1;
}

/* The loader's thread: one block ahead of the reader, until the end or a bad block. */
static void *loader_main(void *arg)
{
	struct wp_reader *r = arg;
	struct loader *ld = &r->loader;
	struct loaded next;

	for (;;) {
		load_block(r, ld, &next);
		pthread_mutex_lock(&ld->lock);
		while (ld->full && !ld->stop)
			pthread_cond_wait(&ld->changed, &ld->lock);
		if (ld->stop) {
			pthread_mutex_unlock(&ld->lock);
			wp_block_put(next.block);
			return NULL;
		}
		ld->slot = next;
		ld->full = true;
		pthread_cond_broadcast(&ld->changed);
		pthread_mutex_unlock(&ld->lock);
		if (next.status <= 0)
			return NULL;
	}
}

/*
 * The next block from the loader: its thread's, or loaded here when it
 * has none (it could not start, or it stopped at the end of the file or
 * at a bad block, which loading again finds the same way).
 */
static void take_block(struct wp_reader *r, struct loaded *out)
{
	struct loader *ld = &r->loader;

	if (!ld->tried) {
		ld->tried = true;
		ld->offset = r->offset;
		if (pthread_mutex_init(&ld->lock, NULL) == 0) {
			if (pthread_cond_init(&ld->changed, NULL) == 0) {
				ld->sync_made = true;
				ld->running = !pthread_create(&ld->thread, NULL, loader_main, r);
			} else {
				pthread_mutex_destroy(&ld->lock);
			}
		}
	}
	if (!ld->running) {
		load_block(r, ld, out);
		return;
	}
	pthread_mutex_lock(&ld->lock);
	while (!ld->full)
		pthread_cond_wait(&ld->changed, &ld->lock);
	*out = ld->slot;
	ld->full = false;
	pthread_cond_broadcast(&ld->changed);
	pthread_mutex_unlock(&ld->lock);
	if (out->status <= 0) {
		/* Its last: the thread is done. */
		pthread_join(ld->thread, NULL);
		ld->running = false;
	}
}

static void loader_stop(struct wp_reader *r)
{
	struct loader *ld = &r->loader;

	if (ld->running) {
		pthread_mutex_lock(&ld->lock);
		ld->stop = true;
		pthread_cond_broadcast(&ld->changed);
		pthread_mutex_unlock(&ld->lock);
		pthread_join(ld->thread, NULL);
		if (ld->full)
			wp_block_put(ld->slot.block);
		ld->running = false;
	}
	if (ld->sync_made) {
		pthread_mutex_destroy(&ld->lock);
		pthread_cond_destroy(&ld->changed);
		ld->sync_made = false;
	}
	free(ld->zbuf);
	ld->zbuf = NULL;
	ZSTD_freeDCtx(ld->dctx);
	ld->dctx = NULL;
}

/* Load the next block; 1 loaded, 0 end of file, <0 error. */
static int reader_load_block(struct wp_reader *r)
{
	struct loaded lb;

	for (;;) {
		take_block(r, &lb);
		r->block_offset = lb.offset;
		if (lb.status <= 0) {
			wp_block_put(lb.block);
			if (lb.status == -EBADMSG)
				return reader_fail(r, lb.what);
			if (lb.status == -ENOMEM) {
				wp_block_put(r->cur);
				r->cur = NULL;
				r->block = NULL;
			}
			return lb.status;
		}
		r->offset = lb.next;
		if (!lb.block)
			continue;	/* a block skipped unread (see load_block) */
		wp_block_put(r->cur);
		r->cur = lb.block;
		r->block = lb.block->data;
		r->block_len = lb.bh.raw_size;
		r->block_pos = 0;

		if (lb.bh.type == WP_BLOCK_RECORDS)
			return 1;
		if (lb.bh.type == WP_BLOCK_SUMMARY) {
			memset(&r->summary, 0, sizeof(r->summary));
			memcpy(&r->summary, r->block,
			       r->block_len < sizeof(r->summary) ? r->block_len
								 : sizeof(r->summary));
			r->have_summary = true;
			r->block_len = 0;
		}
		/* Unknown block types are skipped for forward compatibility. */
	}
}

int wp_reader_next(struct wp_reader *r, const struct perf_event_header **rec)
{
	struct perf_event_header *h;
	int err;

	if (r->failed)
		return -EBADMSG;
	while (r->block_pos >= r->block_len) {
		err = reader_load_block(r);
		if (err <= 0)
			return err;
	}
	if (r->block_len - r->block_pos < sizeof(*h))
		return reader_fail(r, "truncated record");
	h = (struct perf_event_header *)(r->block + r->block_pos);
	if (h->size < sizeof(*h) || (h->size & 7) || h->size > r->block_len - r->block_pos)
		return reader_fail(r, "malformed record");
	/*
	 * zstd packs megabytes of repeated bytes into a few: a small file
	 * could hold billions of records, and as much work.  Recordings hold
	 * under one record per byte of file; far more is no recording.
	 */
	if (++r->records > RECORDS_PER_BYTE * r->offset + RECORDS_SLACK)
		return reader_fail(r, "far more records than a file of this size holds "
				   "(a decompression bomb)");
	r->block_pos += h->size;
	*rec = h;
	return 1;
}

const struct wp_summary *wp_reader_summary(const struct wp_reader *r)
{
	return r->have_summary ? &r->summary : NULL;
}

uint64_t wp_reader_end_ns(const struct wp_reader *r)
{
	return r->end_ns;
}

uint64_t wp_reader_block_offset(const struct wp_reader *r)
{
	return r->block_offset;
}

void wp_reader_ahead(const struct wp_reader *r,
		     void (*fn)(const struct perf_event_header *rec, void *arg), void *arg)
{
	size_t pos = r->block_pos;

	while (!r->failed && r->block_len - pos >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h = (const void *)(r->block + pos);

		if (h->size < sizeof(*h) || (h->size & 7) || h->size > r->block_len - pos)
			return;
		fn(h, arg);
		pos += h->size;
	}
}

void wp_reader_close(struct wp_reader *r)
{
	if (!r)
		return;
	loader_stop(r);
	if (r->fd >= 0)
		close(r->fd);
	wp_meta_release(&r->meta);
	ZSTD_freeDCtx(r->dctx);
	wp_block_put(r->cur);
	free(r->path);
	free(r);
}

void wp_summary_take_counts(struct wp_summary *to, const struct wp_summary *from)
{
	to->records = from->records;
	to->samples = from->samples;
	to->switch_samples = from->switch_samples;
	to->switches = from->switches;
	to->wakeups = from->wakeups;
	to->lost_records = from->lost_records;
	to->lost_samples = from->lost_samples;
	to->throttles = from->throttles;
}

void wp_summary_add_counts(struct wp_summary *to, const struct wp_summary *from)
{
	to->records += from->records;
	to->samples += from->samples;
	to->switch_samples += from->switch_samples;
	to->switches += from->switches;
	to->wakeups += from->wakeups;
	to->lost_records += from->lost_records;
	to->lost_samples += from->lost_samples;
	to->throttles += from->throttles;
	to->synthesized += from->synthesized;
}

void wp_summary_count(struct wp_summary *c, const struct perf_event_header *h, int role)
{
	const struct wp_record_kind *k = wp_record_kind_of(h->type);
	uint64_t id, lost;

	if (k && k->count == WP_COUNT_NOTHING)
		return;
	c->records++;
	switch (k ? k->count : WP_COUNT_RECORD) {
	case WP_COUNT_SAMPLE:
		switch (role) {
		case WP_EVENT_SWITCH_OUT:
			c->switch_samples++;
			break;
		case WP_EVENT_WAKEUP:
		case WP_EVENT_WAKEUP_NEW:
		case WP_EVENT_ENQUEUED:
			c->wakeups++;
			break;
		case WP_EVENT_SCHED_SWITCH:
			break;
		default:
			c->samples++;
		}
		break;
	case WP_COUNT_SWITCH:
		c->switches++;
		break;
	case WP_COUNT_LOST:
		if (!wp_lost_parse(h, &id, &lost))
			c->lost_records += lost;
		break;
	case WP_COUNT_LOST_SAMPLES:
		if (!wp_lost_parse(h, &id, &lost))
			c->lost_samples += lost;
		break;
	case WP_COUNT_THROTTLE:
		c->throttles++;
		break;
	case WP_COUNT_SYNTHESIZED:
		c->synthesized++;
		break;
	}
}
