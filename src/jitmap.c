/* SPDX-License-Identifier: GPL-2.0-or-later */
/* jitmap.c: names of generated code from perf maps and the JITMAP block. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap.h"
#include "procroot.h"
#include "util.h"

/* A piece of a perf map read at once: lines longer than this are malformed. */
#define PERF_MAP_PIECE (64U << 10)

/* One hexadecimal number (an optional 0x first) and the blanks after it. */
static bool parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || p == end || *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;
	*pp = p;
	*out = v;
	return true;
}

static bool parse_pid(const char **pp, const char *end, uint32_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (p == *pp || p == end || *p != ' ')
		return false;
	*pp = p + 1;
	*out = (uint32_t)v;
	return true;
}

/* The text one entry takes in the JITMAP block. */
static size_t entry_text_bytes(size_t name_len)
{
	return 10 + 1 + 16 + 1 + 16 + 1 + name_len + 1;
}

static int add_entry(struct wp_jitmap *jm, uint32_t pid, uint64_t start, uint64_t size,
		     const char *name, size_t name_len)
{
	struct wp_jit_entry *e;

	if (WP_GROW(jm->v, jm->cap, jm->n + 1) ||
	    WP_GROW(jm->names, jm->names_cap, jm->names_len + name_len + 1))
		return -ENOMEM;
	e = &jm->v[jm->n];
	e->pid = pid;
	e->start = start;
	e->size = size;
	e->seq = jm->next_seq++;
	e->name_off = (uint32_t)jm->names_len;
	memcpy(jm->names + jm->names_len, name, name_len);
	jm->names[jm->names_len + name_len] = '\0';
	jm->names_len += name_len + 1;
	jm->n++;
	jm->text_bytes += entry_text_bytes(name_len);
	jm->sorted = false;
	return 0;
}

/* The name at p, up to end (the line's end): not empty, no NUL. */
static bool line_name(const char *p, const char *end, size_t *len)
{
	if (end > p && end[-1] == '\r')
		end--;
	if (end == p || memchr(p, '\0', (size_t)(end - p)))
		return false;
	*len = (size_t)(end - p);
	return true;
}

static bool in_ranges(const struct wp_jit_range *r, size_t n, uint64_t start, uint64_t size)
{
	for (size_t i = 0; i < n; i++)
		if (start >= r[i].start && start < r[i].end && size <= r[i].end - start)
			return true;
	return false;
}

int wp_jitmap_add_perf_map(struct wp_jitmap *jm, uint32_t pid, const char *text, size_t len,
			   const struct wp_jit_range *ranges, size_t nr_ranges,
			   struct wp_jit_read *st)
{
	const char *p = text, *end = text + len;

	memset(st, 0, sizeof(*st));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		uint64_t start, size;
		size_t name_len;
		int err;

		if (!eol)
			eol = end;
		if (!parse_hex(&q, eol, &start) || !parse_hex(&q, eol, &size) ||
		    !line_name(q, eol, &name_len) || !size || start + size < start) {
			/* The last line may be half written as the map is read. */
			st->malformed += eol != end;
		} else if (ranges && !in_ranges(ranges, nr_ranges, start, size)) {
			st->outside++;
		} else if (jm->text_bytes + entry_text_bytes(name_len) > WP_JITMAP_MAX_TEXT) {
			st->over_limit++;
		} else {
			err = add_entry(jm, pid, start, size, q, name_len);
			if (err)
				return err;
			st->kept++;
		}
		p = eol + 1;
	}
	return 0;
}

/*
 * The perf map of a process in a container: written in its own /tmp,
 * under its pid in its own pid namespace (the last of the NSpid line of
 * its status), and read as it sees it while it lives, never leaving its
 * root (its /tmp may be a link to anywhere: procroot.h).  -1 with errno
 * set when there is none.
 */
static int open_namespaced_map(uint32_t pid)
{
	char status[64], path[128], line[256];
	unsigned long nspid = 0;
	struct stat st;
	FILE *f;
	int fd;

	snprintf(status, sizeof(status), "/proc/%" PRIu32 "/status", pid);
	f = fopen(status, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;

			/* The innermost namespace's pid comes last. */
			for (unsigned long v = strtoul(p, &end, 10); end != p;
			     p = end, v = strtoul(p, &end, 10))
				nspid = v;
			break;
		}
	fclose(f);
	if (!nspid || nspid == pid) {
		errno = ENOENT;
		return -1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%lu.map", nspid);
	fd = wp_procroot_open((pid_t)pid, path, &st);
	if (fd < 0) {
		/* A FIFO or a device there is "not a regular file", as below. */
		errno = -fd;
		return -1;
	}
	return fd;
}

bool wp_jitmap_process_users(uint32_t pid, uint32_t users[2])
{
	char status[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(status, sizeof(status), "/proc/%" PRIu32 "/status", pid);
	f = fopen(status, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "Uid: %" SCNu32 " %" SCNu32, &users[0], &users[1]) == 2;
	fclose(f);
	return found;
}

static void read_add(struct wp_jit_read *st, const struct wp_jit_read *part)
{
	st->kept += part->kept;
	st->outside += part->outside;
	st->malformed += part->malformed;
	st->over_limit += part->over_limit;
}

/*
 * The lines of the map open at fd into jm, a piece at a time (so the
 * memory read takes is a piece, however large the map), up to
 * WP_PERF_MAP_MAX_READ bytes.
 */
static int read_pieces(struct wp_jitmap *jm, uint32_t pid, int fd,
		       const struct wp_jit_range *ranges, size_t nr_ranges, struct wp_jit_read *st)
{
	struct wp_jit_read part;
	char *buf = malloc(PERF_MAP_PIECE);
	size_t have = 0;
	uint64_t total = 0;
	bool skipping = false;	/* the rest of a line too long to be one */
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t want = PERF_MAP_PIECE - have, whole;
		ssize_t n;
		char *nl;

		if (total + want > WP_PERF_MAP_MAX_READ)
			want = (size_t)(WP_PERF_MAP_MAX_READ - total);
		if (!want) {
			/* A byte more says whether there is more. */
			char c;

			st->cut = read(fd, &c, 1) > 0;
			break;
		}
		n = read(fd, buf + have, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		total += (uint64_t)n;
		have += (size_t)n;
		if (skipping) {
			nl = memchr(buf, '\n', have);
			if (!nl) {
				have = 0;
				continue;
			}
			skipping = false;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		/* The whole lines; the last, unfinished one waits for the next piece. */
		for (whole = have; whole && buf[whole - 1] != '\n'; whole--)
			;
		if (!whole && have == PERF_MAP_PIECE) {
			st->malformed++;
			skipping = true;
			have = 0;
			continue;
		}
		err = wp_jitmap_add_perf_map(jm, pid, buf, whole, ranges, nr_ranges, &part);
		if (err)
			break;
		read_add(st, &part);
		have -= whole;
		memmove(buf, buf + whole, have);
	}
	/* The last line, maybe half written as the map is read (not counted malformed). */
	if (!err && have && !skipping) {
		err = wp_jitmap_add_perf_map(jm, pid, buf, have, ranges, nr_ranges, &part);
		if (!err)
			read_add(st, &part);
	}
	free(buf);
	return err;
}

int wp_jitmap_read_perf_map(struct wp_jitmap *jm, uint32_t pid, uint64_t not_before,
			    const uint32_t *owners, size_t nr_owners,
			    const struct wp_jit_range *ranges, size_t nr_ranges,
			    struct wp_jit_read *st)
{
	char path[64];
	struct stat sb;
	bool trusted;
	int fd, err = 0;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
	/* Only a regular file: never block on a FIFO someone left there. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		fd = open_namespaced_map(pid);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	trusted = sb.st_uid == 0;
	for (size_t i = 0; i < nr_owners && !trusted; i++)
		trusted = sb.st_uid == owners[i];
	if (!trusted) {
		st->owner = (uint32_t)sb.st_uid;
		err = -EPERM;
		goto out;
	}
	if ((uint64_t)sb.st_mtim.tv_sec * 1000000000ULL + (uint64_t)sb.st_mtim.tv_nsec < not_before) {
		err = -ESTALE;
		goto out;
	}
	err = read_pieces(jm, pid, fd, ranges, nr_ranges, st);
out:
	close(fd);
	return err;
}

int wp_jitmap_parse(struct wp_jitmap *jm, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t first = jm->n, first_bytes = jm->text_bytes;
	int err;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;
		uint64_t start, size;
		size_t name_len;
		uint32_t pid;

		if (!eol)
			eol = end;
		if (!parse_pid(&q, eol, &pid) || !parse_hex(&q, eol, &start) ||
		    !parse_hex(&q, eol, &size) || !line_name(q, eol, &name_len) ||
		    !size || start + size < start) {
			err = -EBADMSG;
			goto fail;
		}
		err = add_entry(jm, pid, start, size, q, name_len);
		if (err)
			goto fail;
		p = eol + 1;
	}
	return 0;
fail:
	/* All or nothing (the names are only appended). */
	jm->n = first;
	jm->text_bytes = first_bytes;
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct wp_jit_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort by process and start; of entries with the same start, keep the last. */
static void jitmap_sort(struct wp_jitmap *jm)
{
	size_t out = 0;

	if (jm->sorted)
		return;
	if (jm->n)
		qsort(jm->v, jm->n, sizeof(*jm->v), entry_cmp);
	for (size_t i = 0; i < jm->n; i++) {
		if (out && jm->v[out - 1].pid == jm->v[i].pid &&
		    jm->v[out - 1].start == jm->v[i].start)
			out--;
		jm->v[out++] = jm->v[i];
	}
	jm->n = out;
	jm->sorted = true;
}

/* Index of the last entry at or before (pid, addr), or SIZE_MAX. */
static size_t find_floor(const struct wp_jitmap *jm, uint32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = jm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct wp_jit_entry *e = &jm->v[mid];

		if (e->pid < pid || (e->pid == pid && e->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

const char *wp_jitmap_find(struct wp_jitmap *jm, uint32_t pid, uint64_t addr, uint64_t *start)
{
	size_t i;

	jitmap_sort(jm);
	i = find_floor(jm, pid, addr);
	/* An entry nested in a larger one is found first; the larger may still hold addr. */
	for (; i != SIZE_MAX && jm->v[i].pid == pid; i--) {
		const struct wp_jit_entry *e = &jm->v[i];

		if (addr - e->start < e->size) {
			*start = e->start;
			return jm->names + e->name_off;
		}
		/* Entries rarely overlap: look back only a little. */
		if (addr - e->start > (1ULL << 20) || i == 0)
			break;
	}
	return NULL;
}

bool wp_jitmap_has_pid(struct wp_jitmap *jm, uint32_t pid)
{
	size_t i;

	jitmap_sort(jm);
	i = find_floor(jm, pid, UINT64_MAX);
	return i != SIZE_MAX && jm->v[i].pid == pid;
}

int wp_jitmap_format(struct wp_jitmap *jm, char **text, size_t *len)
{
	char *buf, *p;

	*text = NULL;
	*len = 0;
	jitmap_sort(jm);
	buf = malloc(jm->text_bytes + 1);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (size_t i = 0; i < jm->n; i++) {
		const struct wp_jit_entry *e = &jm->v[i];
		const char *name = jm->names + e->name_off;

		p += sprintf(p, "%" PRIu32 " %" PRIx64 " %" PRIx64 " %s\n",
			     e->pid, e->start, e->size, name);
	}
	*text = buf;
	*len = (size_t)(p - buf);
	return 0;
}

void wp_jitmap_release(struct wp_jitmap *jm)
{
	free(jm->v);
	free(jm->names);
	memset(jm, 0, sizeof(*jm));
}
