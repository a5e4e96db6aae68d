/* SPDX-License-Identifier: GPL-2.0-or-later */
/* synth.c: COMM, MMAP2 and THREAD records made from /proc at attach time. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cmdline.h"
#include "synth.h"
#include "target.h"

/* Append header + body + sample_id, padding the body to 8 bytes. */
static int synth_emit(const struct wp_sample_format *fmt, struct wp_buf *out,
		      uint32_t type, uint16_t misc, const void *body, size_t body_len,
		      pid_t pid, pid_t tid, uint64_t time)
{
	size_t padded = ALIGN_UP(body_len, (size_t)8);
	size_t total = sizeof(struct perf_event_header) + padded + wp_sample_id_size(fmt);
	struct wp_sample_id sid = {
		.pid = (uint32_t)pid, .tid = (uint32_t)tid, .time = time,
		.cpu = UINT32_MAX, .id = WP_SYNTHESIZED_ID,
	};
	struct perf_event_header hdr = {
		.type = type, .misc = misc,
		.size = (uint16_t)total,
	};
	uint8_t *p;

	if (total > UINT16_MAX)
		return -E2BIG;
	p = wp_buf_reserve(out, total);
	if (!p)
		return -ENOMEM;
	memset(p, 0, total);
	memcpy(p, &hdr, sizeof(hdr));
	memcpy(p + sizeof(hdr), body, body_len);
	wp_sample_id_write(fmt, &sid, p + sizeof(hdr) + padded);
	out->len += total;
	return 0;
}

int wp_synth_thread(const struct wp_sample_format *fmt, pid_t pid, pid_t tid, const char *comm,
		    uint64_t time, struct wp_buf *out)
{
	struct wp_record_thread th = {
		.header = { .type = WP_RECORD_THREAD, .size = sizeof(th) },
		.pid = (uint32_t)pid, .tid = (uint32_t)tid, .time = time,
	};
	char name[16];
	struct wp_comm c = { .pid = (uint32_t)pid, .tid = (uint32_t)tid, .comm = name };
	uint8_t body[32];
	size_t n;
	int err;

	snprintf(name, sizeof(name), "%s", comm);
	c.len = strlen(name);
	n = wp_comm_body(&c, body, sizeof(body));
	err = wp_buf_append(out, &th, sizeof(th));
	if (!err && c.len)
		err = synth_emit(fmt, out, PERF_RECORD_COMM, 0, body, n, pid, tid, time);
	return err;
}

/*
 * Whether thread tid of pid has exited and waits to be reaped (a zombie):
 * /proc lists it, but it runs no more, and its EXIT record, when it came
 * after the events were enabled, is in the rings.  Taken for a thread that
 * exists, it would be blocked from the start to the end of the recording.
 */
static bool thread_exited(pid_t pid, pid_t tid)
{
	char path[64], stat[512];
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (wp_read_text_file(path, stat, sizeof(stat)))
		return false;
	paren = strrchr(stat, ')');
	return paren && (paren[1] == ' ') && (paren[2] == 'Z' || paren[2] == 'X');
}

static int synth_comm(const struct wp_sample_format *fmt, pid_t pid, pid_t tid,
		      uint64_t time, struct wp_buf *out)
{
	char path[64], name[64] = "";
	int err;

	if (thread_exited(pid, tid))
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	err = wp_read_text_file(path, name, sizeof(name));
	if (err)
		return err;
	name[strcspn(name, "\n")] = '\0';
	return wp_synth_thread(fmt, pid, tid, name, time, out);
}

static int synth_maps(const struct wp_sample_format *fmt, pid_t pid, pid_t live_tid,
		      uint64_t time, struct wp_buf *out, int *count)
{
	char path[64], name[4096], *line = NULL;
	/* The body of the largest record: the fixed part and a whole path. */
	uint8_t *body;
	size_t cap = 0, body_max = 64 + sizeof(name) + 8;
	int err = 0;
	FILE *f;

	/* A zombie main thread has no maps: read them through a live thread. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", pid, live_tid > 0 ? live_tid : pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	body = malloc(body_max);
	if (!body) {
		fclose(f);
		return -ENOMEM;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		struct wp_mmap2 m;
		char perms[8];
		int name_at = 0;
		size_t len;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &pgoff, &maj, &min, &ino, &name_at) < 7)
			continue;
		/* Only code matters for unwinding and symbols. */
		if (perms[2] != 'x')
			continue;
		snprintf(name, sizeof(name), "%s", name_at ? line + name_at : "");
		name[strcspn(name, "\n")] = '\0';
		m = (struct wp_mmap2){
			.pid = (uint32_t)pid, .tid = (uint32_t)pid,
			.addr = start, .len = end - start, .pgoff = pgoff,
			.maj = maj, .min = min, .ino = ino,
			.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
				PROT_EXEC,
			.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE,
			.filename = name[0] ? name : "//anon",
		};
		len = wp_mmap2_body(&m, body, body_max);
		err = len ? synth_emit(fmt, out, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, len,
				       pid, pid, time) : -E2BIG;
		if (!err)
			(*count)++;
	}
	free(line);
	free(body);
	fclose(f);
	return err;
}

int wp_synth_process(const struct wp_sample_format *fmt, pid_t pid, pid_t tid,
		     uint64_t time, struct wp_buf *out)
{
	char path[64];
	struct dirent *de;
	int count = 0, err = 0;
	DIR *d;

	if (tid > 0) {
		err = synth_comm(fmt, pid, tid, time, out);
		if (err)
			return err == -ENOENT || err == -ESRCH ? -ESRCH : err;
		count++;
	} else {
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = opendir(path);
		if (!d)
			return errno == ENOENT ? -ESRCH : -errno;
		while ((de = readdir(d))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			/* A thread that exits meanwhile, or has, is simply not listed. */
			if (!synth_comm(fmt, pid, (pid_t)strtol(de->d_name, NULL, 10), time, out))
				count++;
		}
		closedir(d);
	}
	/* Gone since, or a kernel thread's: no command line, and no matter. */
	if (wp_cmdline_record(pid, WP_CMDLINE_ATTACH, time, 0, out) > 0)
		count++;
	err = synth_maps(fmt, pid, wp_live_thread(pid), time, out, &count);
	if (err == -ENOENT)
		err = -ESRCH;
	/* Kernel threads have no maps; their comm is still worth having. */
	return err && err != -ESRCH ? err : count;
}

int wp_synth_exit(const struct wp_sample_format *fmt, pid_t pid, pid_t tid, uint64_t time,
		  struct wp_buf *out)
{
	struct wp_task_event te = {
		.pid = (uint32_t)pid, .ppid = (uint32_t)pid,
		.tid = (uint32_t)tid, .ptid = (uint32_t)tid, .time = time,
	};
	int err = synth_emit(fmt, out, PERF_RECORD_EXIT, 0, &te, sizeof(te), pid, tid, time);

	return err ? err : 1;
}

int wp_synth_all(const struct wp_sample_format *fmt, uint64_t time,
		 struct wp_buf *out)
{
	struct dirent *de;
	int total = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		n = wp_synth_process(fmt, (pid_t)strtol(de->d_name, NULL, 10), 0, time, out);
		if (n == -ENOMEM) {
			closedir(d);
			return n;
		}
		if (n > 0)
			total += n;
	}
	closedir(d);
	return total;
}
