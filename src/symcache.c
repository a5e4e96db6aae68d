/* SPDX-License-Identifier: GPL-2.0-or-later */
/* symcache.c: per-build-id files of named addresses, written atomically, read only whole. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "symcache.h"
#include "u64map.h"
#include "util.h"

#define MAGIC "WPSYMC\r\n"
/*
 * Bumped whenever what a file holds changes meaning: its layout, or the
 * way the symbolizer makes names (a file of another version is ignored).
 */
#define FORMAT_VERSION 2	/* 2: PLT stubs named (name@plt) */
/* Bounds on a file, read or written: far above any real one. */
#define MAX_FILE ((size_t)64 << 20)
#define MAX_ENTRIES (1U << 20)
#define MAX_TEXT 4096

struct header {
	char magic[8];
	uint32_t version;
	uint32_t kind;
	uint32_t id_len;
	uint32_t pad;
	uint8_t id[WP_SYMCACHE_MAX_ID];
	struct wp_symcache_origin origin;
	uint64_t nr_entries;
	uint64_t payload_size;
	uint64_t checksum;	/* XXH3 of the header (this field 0) and the payload */
};

/*
 * An entry: its address and frame count, then each frame's fixed part and
 * its name and source (each NUL-terminated), padded to 8 bytes.
 */
struct entry_head {
	uint64_t addr;
	uint32_t nr_frames;
	uint32_t pad;
};

struct frame_head {
	uint32_t flags;
	uint32_t line;
	uint64_t entry;
	uint32_t name_len;	/* without its NUL */
	uint32_t src_len;	/* with its NUL; 0: no source */
};

struct wp_symcache {
	int dirfd;		/* borrowed */
	char name[2 * WP_SYMCACHE_MAX_ID + 16];
	struct header head;	/* what this cache's file is (nr_entries etc. unset) */
	struct wp_buf entries;	/* read ones, then added ones */
	size_t nr_entries;
	size_t added_at;	/* where the added entries start */
	size_t nr_added;
	bool read;		/* from a whole file of the same origin */
	struct wp_u64map at;	/* address -> offset in entries */
};

int wp_symcache_dir_open(void)
{
	const char *off = getenv("WALLPROF_NO_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char base[PATH_MAX];
	struct stat st;
	int bfd, fd, n;

	if (off && *off)
		return -ECANCELED;
	/* The XDG base directory rules: a relative value is to be ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(base, sizeof(base), "%s", xdg);
	else if (home && home[0] == '/')
		n = snprintf(base, sizeof(base), "%s/.cache", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= sizeof(base))
		return -ENAMETOOLONG;
	/*
	 * Nothing is made in another user's directory: root reporting with a
	 * user's HOME would leave there a directory the user cannot use.
	 */
	if (stat(base, &st) && errno == ENOENT) {
		char *slash = strrchr(base, '/');

		*slash = '\0';
		n = stat(slash == base ? "/" : base, &st);
		*slash = '/';
		if (n || st.st_uid != geteuid())
			return -EPERM;
		if (mkdir(base, 0700) && errno != EEXIST)
			return -errno;
	}
	/* The base may be a link the user made; wallprof's own directory may not. */
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	if (fstat(bfd, &st) || st.st_uid != geteuid()) {
		close(bfd);
		return -EPERM;
	}
	if (mkdirat(bfd, "wallprof", 0700) && errno != EEXIST) {
		n = -errno;
		close(bfd);
		return n;
	}
	fd = openat(bfd, "wallprof", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	n = fd < 0 ? -errno : 0;
	close(bfd);
	if (n)
		return n;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Check one entry at data[off, size): its length, or 0 when it is damaged. */
static size_t check_entry(const uint8_t *data, size_t size, size_t off)
{
	struct entry_head eh;
	size_t at = off;

	if (size - at < sizeof(eh))
		return 0;
	memcpy(&eh, data + at, sizeof(eh));
	at += sizeof(eh);
	if (eh.nr_frames > WP_SYMCACHE_MAX_FRAMES || eh.pad)
		return 0;
	for (uint32_t i = 0; i < eh.nr_frames; i++) {
		struct frame_head fh;
		size_t text;

		if (size - at < sizeof(fh))
			return 0;
		memcpy(&fh, data + at, sizeof(fh));
		at += sizeof(fh);
		if ((fh.flags & ~WP_SYMCACHE_INLINED) || !fh.name_len || fh.name_len > MAX_TEXT ||
		    fh.src_len > MAX_TEXT + 1)
			return 0;
		text = (size_t)fh.name_len + 1 + fh.src_len;
		if (size - at < text)
			return 0;
		/* Each string is whole: no NUL inside, one at its end. */
		if (memchr(data + at, '\0', fh.name_len) || data[at + fh.name_len])
			return 0;
		at += fh.name_len + 1;
		if (fh.src_len && (memchr(data + at, '\0', fh.src_len - 1) ||
				   data[at + fh.src_len - 1]))
			return 0;
		at += fh.src_len;
		at = ALIGN_UP(at, (size_t)8);
		if (at > size)
			return 0;
	}
	return at - off;
}

/* Index entries[from, len): false (and nothing kept) when any is damaged or repeated. */
static bool index_entries(struct wp_symcache *c, size_t from, uint64_t nr)
{
	size_t off = from, len;

	for (uint64_t i = 0; i < nr; i++) {
		struct entry_head eh;

		len = check_entry(c->entries.data, c->entries.len, off);
		if (!len)
			return false;
		memcpy(&eh, c->entries.data + off, sizeof(eh));
		if (wp_u64map_get(&c->at, eh.addr, NULL) || wp_u64map_put(&c->at, eh.addr, off))
			return false;
		off += len;
	}
	return off == c->entries.len;
}

/* Read the file whole: false when it is missing, foreign, damaged or from other files. */
static bool load(struct wp_symcache *c)
{
	struct header h;
	struct stat st;
	uint64_t sum;
	size_t size;
	uint8_t *p;
	int fd;

	fd = openat(c->dirfd, c->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < sizeof(h) || (uint64_t)st.st_size > MAX_FILE ||
	    wp_read_exact(fd, &h, sizeof(h)))
		goto no;
	size = (size_t)st.st_size - sizeof(h);
	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) || h.version != FORMAT_VERSION ||
	    h.kind != c->head.kind || h.id_len != c->head.id_len ||
	    memcmp(h.id, c->head.id, sizeof(h.id)) ||
	    memcmp(&h.origin, &c->head.origin, sizeof(h.origin)) || h.pad ||
	    h.payload_size != size || h.nr_entries > MAX_ENTRIES)
		goto no;
	p = wp_buf_reserve(&c->entries, size);
	if (!p || wp_read_exact(fd, p, size))
		goto no;
	c->entries.len = size;
	sum = h.checksum;
	h.checksum = 0;
	if (XXH3_64bits_withSeed(p, size, XXH3_64bits(&h, sizeof(h))) != sum ||
	    !index_entries(c, 0, h.nr_entries))
		goto no;
	c->nr_entries = (size_t)h.nr_entries;
	close(fd);
	return true;
no:
	close(fd);
	c->entries.len = 0;
	wp_u64map_release(&c->at);
	return false;
}

/* The cache file's name: the build id in hex, then ".KIND.sym". */
static void cache_name(const uint8_t *id, size_t id_len, unsigned int kind, char *buf,
		       size_t size)
{
	int n = 0;

	for (size_t i = 0; i < id_len && n >= 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - (size_t)n, "%02x", id[i]);
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ".%u.sym", kind);
}

bool wp_symcache_present(int dirfd, const uint8_t *id, size_t id_len, unsigned int kind)
{
	char name[2 * WP_SYMCACHE_MAX_ID + 16];

	if (dirfd < 0 || !id_len || id_len > WP_SYMCACHE_MAX_ID)
		return false;
	cache_name(id, id_len, kind, name, sizeof(name));
	return !faccessat(dirfd, name, F_OK, AT_EACCESS);
}

int wp_symcache_open(int dirfd, const uint8_t *id, size_t id_len, unsigned int kind,
		     const struct wp_symcache_origin *origin, struct wp_symcache **out)
{
	struct wp_symcache *c;

	*out = NULL;
	if (!id_len || id_len > WP_SYMCACHE_MAX_ID)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dirfd = dirfd;
	memcpy(c->head.magic, MAGIC, sizeof(c->head.magic));
	c->head.version = FORMAT_VERSION;
	c->head.kind = kind;
	c->head.id_len = (uint32_t)id_len;
	memcpy(c->head.id, id, id_len);
	c->head.origin = *origin;
	cache_name(id, id_len, kind, c->name, sizeof(c->name));
	c->read = load(c);
	c->added_at = c->entries.len;
	*out = c;
	return 0;
}

bool wp_symcache_get(const struct wp_symcache *c, uint64_t addr, struct wp_symcache_frame *out,
		     unsigned int max, unsigned int *n)
{
	struct entry_head eh;
	const uint8_t *p;
	uint64_t off;
	size_t at;

	if (!c || !wp_u64map_get(&c->at, addr, &off))
		return false;
	p = c->entries.data;
	/* Checked when read or added: only decoded here. */
	memcpy(&eh, p + off, sizeof(eh));
	if (eh.nr_frames > max)
		return false;
	at = (size_t)off + sizeof(eh);
	for (uint32_t i = 0; i < eh.nr_frames; i++) {
		struct frame_head fh;

		memcpy(&fh, p + at, sizeof(fh));
		at += sizeof(fh);
		out[i].flags = fh.flags;
		out[i].line = fh.line;
		out[i].entry = fh.entry;
		out[i].name = (const char *)p + at;
		at += fh.name_len + 1;
		out[i].src = fh.src_len ? (const char *)p + at : NULL;
		at = ALIGN_UP(at + fh.src_len, (size_t)8);
	}
	*n = eh.nr_frames;
	return true;
}

int wp_symcache_put(struct wp_symcache *c, uint64_t addr, const struct wp_symcache_frame *frames,
		    unsigned int n)
{
	struct entry_head eh = { .addr = addr, .nr_frames = n };
	size_t start = c->entries.len, len = sizeof(eh);
	uint8_t *p;

	if (n > WP_SYMCACHE_MAX_FRAMES || wp_u64map_get(&c->at, addr, NULL))
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		size_t name = strlen(frames[i].name), src = frames[i].src ? strlen(frames[i].src) : 0;

		if (!name || name > MAX_TEXT || src > MAX_TEXT || (frames[i].flags & ~WP_SYMCACHE_INLINED))
			return -EINVAL;
		len += ALIGN_UP(sizeof(struct frame_head) + name + 1 + (frames[i].src ? src + 1 : 0),
				(size_t)8);
	}
	if (c->entries.len + len > MAX_FILE)
		return -EINVAL;
	p = wp_buf_reserve(&c->entries, len);
	if (!p)
		return -ENOMEM;
	memset(p, 0, len);
	memcpy(p, &eh, sizeof(eh));
	p += sizeof(eh);
	for (unsigned int i = 0; i < n; i++) {
		struct frame_head fh = {
			.flags = frames[i].flags, .line = frames[i].line, .entry = frames[i].entry,
			.name_len = (uint32_t)strlen(frames[i].name),
			.src_len = frames[i].src ? (uint32_t)strlen(frames[i].src) + 1 : 0,
		};
		uint8_t *f = p;

		memcpy(p, &fh, sizeof(fh));
		p += sizeof(fh);
		memcpy(p, frames[i].name, fh.name_len);
		p += fh.name_len + 1;
		if (fh.src_len)
			memcpy(p, frames[i].src, fh.src_len - 1);
		p += fh.src_len;
		p = f + ALIGN_UP((size_t)(p - f), (size_t)8);
	}
	if (wp_u64map_put(&c->at, addr, start))
		return -ENOMEM;
	c->entries.len += len;
	c->nr_entries++;
	c->nr_added++;
	return 0;
}

int wp_symcache_save(struct wp_symcache *c)
{
	static unsigned int seq;
	struct header h = c->head;
	const uint8_t *payload = c->entries.data;
	size_t size = c->entries.len;
	char tmp[sizeof(c->name) + 48];
	int fd, err = 0;

	/* An empty file is written too: it says no names were wanted. */
	if (!c->nr_added && c->read)
		return 0;
	h.nr_entries = c->nr_entries;
	/* Too many for one file: only this report's go in. */
	if (h.nr_entries > MAX_ENTRIES) {
		payload += c->added_at;
		size -= c->added_at;
		h.nr_entries = c->nr_added;
		if (h.nr_entries > MAX_ENTRIES)
			return -E2BIG;
	}
	h.payload_size = size;
	h.checksum = 0;
	h.checksum = XXH3_64bits_withSeed(payload, size, XXH3_64bits(&h, sizeof(h)));
	snprintf(tmp, sizeof(tmp), ".%s.%ld.%u.tmp", c->name, (long)getpid(), seq++);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (wp_write_all(fd, &h, sizeof(h)) || wp_write_all(fd, payload, size))
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	/* The whole file, or none: a reader never sees a part. */
	if (!err && renameat(c->dirfd, tmp, c->dirfd, c->name))
		err = -errno;
	if (err) {
		unlinkat(c->dirfd, tmp, 0);
	} else {
		c->nr_added = 0;
		c->read = true;
	}
	return err;
}

void wp_symcache_free(struct wp_symcache *c)
{
	if (!c)
		return;
	wp_buf_release(&c->entries);
	wp_u64map_release(&c->at);
	free(c);
}
