/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracefs.c: finding tracefs, and trace event formats. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "tracefs.h"

#define TRACEFS_MAGIC_NUMBER 0x74726163	/* linux/magic.h's TRACEFS_MAGIC */

static bool is_tracefs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && (unsigned long)st.f_type == TRACEFS_MAGIC_NUMBER;
}

int wp_tracefs_find(char *buf, size_t size, bool may_mount, bool *mounted)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct statfs st;

	*mounted = false;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (is_tracefs(where[i])) {
			snprintf(buf, size, "%s", where[i]);
			return access(where[i], R_OK | X_OK) ? -EACCES : 0;
		}
	}
	/* The kernel offers the mount point when it has tracefs at all. */
	if (statfs("/sys/kernel/tracing", &st))
		return -ENOENT;
	if (!may_mount)
		return -EPERM;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return errno == ENODEV ? -ENOENT : -errno;
	*mounted = true;
	snprintf(buf, size, "/sys/kernel/tracing");
	return 0;
}

int wp_trace_format_read(const char *tracefs, const char *system, const char *name,
			 char **text)
{
	char path[512], *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, err = 0;

	*text = NULL;
	if (strchr(system, '/') || strchr(name, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracefs, system, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A format file is a page or two; its size is not known ahead (tracefs says 0). */
	for (;;) {
		if (cap - len < 4096) {
			char *nb;

			if (cap > (1 << 20)) {
				err = -EFBIG;
				break;
			}
			nb = realloc(buf, cap + 8192);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap += 8192;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

/* "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;" */
static int parse_field(const char *line, struct wp_trace_field *f)
{
	const char *decl = line + strlen("field:"), *semi = strchr(decl, ';'), *p;
	const char *name_end, *name;
	unsigned int off, size, sign;

	if (!semi)
		return -EBADMSG;
	p = strstr(semi, "offset:");
	if (!p || sscanf(p, "offset:%u;", &off) != 1)
		return -EBADMSG;
	p = strstr(semi, "size:");
	if (!p || sscanf(p, "size:%u;", &size) != 1)
		return -EBADMSG;
	p = strstr(semi, "signed:");
	if (!p || sscanf(p, "signed:%u;", &sign) != 1)
		sign = 0;
	/* The name is the declaration's last word, before any "[N]". */
	name_end = semi;
	for (p = decl; p < semi; p++)
		if (*p == '[') {
			name_end = p;
			break;
		}
	while (name_end > decl && name_end[-1] == ' ')
		name_end--;
	name = name_end;
	while (name > decl && name[-1] != ' ' && name[-1] != '*')
		name--;
	if (name == name_end || (size_t)(name_end - name) >= sizeof(f->name))
		return -EBADMSG;
	memcpy(f->name, name, (size_t)(name_end - name));
	f->name[name_end - name] = '\0';
	f->offset = off;
	f->size = size;
	f->is_signed = sign;
	return 0;
}

int wp_trace_format_parse(const char *text, struct wp_trace_format *out)
{
	const char *line = text;
	bool have_name = false, have_id = false;

	memset(out, 0, sizeof(*out));
	while (line && *line) {
		const char *end = strchr(line, '\n');
		char buf[512];
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *p;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		for (p = buf; *p == ' ' || *p == '\t'; p++)
			;
		if (!strncmp(p, "name: ", 6)) {
			snprintf(out->name, sizeof(out->name), "%s", p + 6);
			have_name = true;
		} else if (!strncmp(p, "ID: ", 4)) {
			char *e;

			out->id = strtoull(p + 4, &e, 10);
			have_id = e != p + 4;
		} else if (!strncmp(p, "field:", 6)) {
			if (out->nr_fields == WP_TRACE_MAX_FIELDS ||
			    parse_field(p, &out->fields[out->nr_fields]))
				return -EBADMSG;
			out->nr_fields++;
		}
		line = end ? end + 1 : NULL;
	}
	return have_name && have_id && out->nr_fields ? 0 : -EBADMSG;
}

const struct wp_trace_field *wp_trace_field(const struct wp_trace_format *f, const char *name)
{
	for (unsigned int i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}

bool wp_trace_field_int(const struct wp_trace_field *f, const void *raw, size_t raw_size,
			int64_t *out)
{
	uint64_t v = 0;

	if (!f || f->size == 0 || f->size > 8 || f->offset > raw_size ||
	    raw_size - f->offset < f->size)
		return false;
	/* The recording's byte order is the reader's (datafile.c checks it). */
	memcpy(&v, (const uint8_t *)raw + f->offset, f->size);
	if (f->is_signed && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ULL << (f->size * 8);
	*out = (int64_t)v;
	return true;
}
