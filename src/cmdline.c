/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cmdline.c: /proc/PID/cmdline, read now or by the reader thread. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"

/* Finished records waiting for the drain, at most (the rest are dropped). */
#define RESULTS_MAX (8U << 20)
/*
 * Right after an exec the new image's arguments may not be in place yet
 * (the kernel sets them up after it names the process, and on a loaded
 * machine the exec may wait for a CPU in between): an empty read is
 * tried again this many times, 1, 2, 4, ... ms apart (63 ms in all).
 */
#define EMPTY_RETRIES 6

int wp_cmdline_read(pid_t pid, char *buf, size_t size, size_t *len, bool *truncated)
{
	char path[64];
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	*len = 0;
	*truncated = false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while (got < size) {
		n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno == ESRCH ? -ESRCH : -errno;
			break;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	if (!err && got == size) {
		char more;

		*truncated = read(fd, &more, 1) == 1;
	}
	close(fd);
	if (err)
		return err;
	if (!got)
		return -ENODATA;
	*len = got;
	return 0;
}

int wp_cmdline_record(pid_t pid, uint16_t source, uint64_t time, uint64_t exec_time,
		      struct wp_buf *out)
{
	char *buf = malloc(WP_CMDLINE_MAX);
	struct wp_cmdline c = { .pid = (uint32_t)pid, .source = source, .time = time,
				.exec_time = exec_time, .args = buf };
	bool truncated;
	size_t len;
	int err;

	if (!buf)
		return -ENOMEM;
	err = wp_cmdline_read(pid, buf, WP_CMDLINE_MAX, &len, &truncated);
	for (int i = 0; source == WP_CMDLINE_EXEC && err == -ENODATA && i < EMPTY_RETRIES; i++) {
		usleep(1000U << i);
		c.time += 1000000ULL << i;	/* the clock moved at least that far */
		err = wp_cmdline_read(pid, buf, WP_CMDLINE_MAX, &len, &truncated);
	}
	if (!err) {
		c.len = (uint32_t)len;
		c.flags = truncated ? WP_CMDLINE_TRUNCATED : 0;
		err = wp_cmdline_append(out, &c);
	}
	free(buf);
	if (err == -ENODATA || err == -ESRCH || err == -EACCES || err == -EPERM)
		return 0;
	return err ? err : 1;
}

struct request {
	uint32_t pid;
	uint32_t tid;		/* a thread's name to read (wp_cmdline_request_name), or 0 */
	uint64_t exec_time;
};

/*
 * The record of thread tid's name (of process pid), read now: 1 when
 * appended, 0 when the thread is gone, or -errno.
 */
static int task_name_record(uint32_t pid, uint32_t tid, uint64_t time, struct wp_buf *out)
{
	char path[64], comm[32];
	size_t len;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (wp_read_text_file(path, comm, sizeof(comm)))
		return 0;
	len = strcspn(comm, "\n");
	comm[len] = 0;
	if (!len)
		return 0;
	return wp_task_name_append(out, pid, tid, time, comm) ? -ENOMEM : 1;
}

struct wp_cmdline_reader {
	clockid_t clock;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* Under lock. */
	struct request queue[WP_CMDLINE_QUEUE];
	size_t head, len;
	struct wp_buf results;
	uint64_t dropped, gone;
	bool stop;
};

static void *reader_main(void *arg)
{
	struct wp_cmdline_reader *r = arg;
	struct wp_buf one = { 0 };

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct request q;
		int ret;

		while (!r->len && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stop)
			break;
		q = r->queue[r->head];
		r->head = (r->head + 1) % WP_CMDLINE_QUEUE;
		r->len--;
		pthread_mutex_unlock(&r->lock);
		one.len = 0;
		if (q.tid)
			ret = task_name_record(q.pid, q.tid, wp_clock_ns(r->clock), &one);
		else
			ret = wp_cmdline_record((pid_t)q.pid, WP_CMDLINE_EXEC, wp_clock_ns(r->clock),
						q.exec_time, &one);
		pthread_mutex_lock(&r->lock);
		if (ret <= 0 && !q.tid)
			r->gone++;
		else if (r->results.len + one.len > RESULTS_MAX ||
			 wp_buf_append(&r->results, one.data, one.len))
			r->dropped++;
	}
	pthread_mutex_unlock(&r->lock);
	wp_buf_release(&one);
	return NULL;
}

int wp_cmdline_reader_start(clockid_t clock, struct wp_cmdline_reader **out)
{
	struct wp_cmdline_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->clock = clock;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	err = -pthread_create(&r->thread, NULL, reader_main, r);
	if (err) {
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->cond);
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

static void request(struct wp_cmdline_reader *r, struct request q)
{
	pthread_mutex_lock(&r->lock);
	if (r->len == WP_CMDLINE_QUEUE) {
		r->dropped += !q.tid;
	} else {
		r->queue[(r->head + r->len) % WP_CMDLINE_QUEUE] = q;
		r->len++;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
}

void wp_cmdline_request(struct wp_cmdline_reader *r, uint32_t pid, uint64_t exec_time)
{
	request(r, (struct request){ .pid = pid, .exec_time = exec_time });
}

void wp_cmdline_request_name(struct wp_cmdline_reader *r, uint32_t pid, uint32_t tid)
{
	if (pid && tid)
		request(r, (struct request){ .pid = pid, .tid = tid });
}

int wp_cmdline_known(struct wp_cmdline_reader *r, uint32_t pid, char *const argv[])
{
	struct wp_cmdline c = { .pid = pid, .source = WP_CMDLINE_LAUNCH,
				.time = wp_clock_ns(r->clock) };
	struct wp_buf args = { 0 };
	int err = 0;

	for (size_t i = 0; !err && argv[i]; i++)
		err = wp_buf_append(&args, argv[i], strlen(argv[i]) + 1);
	c.args = (const char *)args.data;
	c.len = (uint32_t)(args.len < UINT32_MAX ? args.len : UINT32_MAX);
	pthread_mutex_lock(&r->lock);
	if (!err && c.len)
		err = wp_cmdline_append(&r->results, &c);
	pthread_mutex_unlock(&r->lock);
	wp_buf_release(&args);
	return err;
}

int wp_cmdline_take(struct wp_cmdline_reader *r, struct wp_buf *out)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	if (r->results.len) {
		err = wp_buf_append(out, r->results.data, r->results.len);
		if (!err)
			r->results.len = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

void wp_cmdline_counts(struct wp_cmdline_reader *r, uint64_t *dropped, uint64_t *gone)
{
	pthread_mutex_lock(&r->lock);
	/* Still queued when the recording ends: too late, like those gone. */
	*dropped = r->dropped;
	*gone = r->gone + r->len;
	pthread_mutex_unlock(&r->lock);
}

void wp_cmdline_reader_free(struct wp_cmdline_reader *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	wp_buf_release(&r->results);
	free(r);
}
