// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * waitstack.c: where a thread asleep at the recording's start waits
 * (waitstack.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "util.h"
#include "waitstack.h"

/* State and last CPU from /proc/PID/task/TID/stat (after the name's last ')'). */
static int read_stat(pid_t pid, pid_t tid, struct wp_wait_stack *out)
{
	char path[64], buf[1024], *p;
	long cpu = -1;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	err = wp_read_text_file(path, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	out->state = p[2];
	/* Field 39 is the CPU; the state is field 3. */
	p += 2;
	for (int field = 3; p && field < 39; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		cpu = strtol(p, NULL, 10);
	out->cpu = cpu >= 0 && cpu < 65536 ? (int)cpu : -1;
	return 0;
}

/*
 * The stack and instruction pointers of a thread asleep in a system call
 * ("NR ARG1 .. ARG6 SP PC"; "-1 SP PC" outside one, "running" when it
 * runs): 0, or -errno.
 */
static int read_syscall(pid_t pid, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[256];
	unsigned long long v[9];
	long nr;
	int err, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	err = wp_read_text_file(path, buf, sizeof(buf));
	if (err)
		return err;
	nr = strtol(buf, NULL, 10);
	if (nr < 0 || !strncmp(buf, "running", 7))
		return -EAGAIN;
	n = sscanf(buf, "%*d %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	if (n != 8 || !v[6] || !v[7])
		return -EINVAL;
	*sp = v[6];
	*pc = v[7];
	return 0;
}

int wp_wait_stack_read(pid_t pid, pid_t tid, uint8_t *stack, size_t cap,
		       struct wp_wait_stack *out)
{
	struct iovec local, remote;
	ssize_t n;
	int err;

	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	err = read_stat(pid, tid, out);
	if (err || !wp_wait_state_asleep(out->state))
		return err;
	if (!cap || read_syscall(pid, tid, &out->sp, &out->pc)) {
		out->sp = out->pc = 0;
		return 0;
	}
	/*
	 * The stack from sp up, as a sample's copy: the memory of the
	 * thread's process (its threads share it), to the end of its
	 * mapping at most, which a short read stops at.
	 */
	local = (struct iovec){ .iov_base = stack, .iov_len = cap };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)out->sp, .iov_len = cap };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && cap > 4096) {
		/* Across the stack's end: what lies before it. */
		size_t first = 4096 - (size_t)(out->sp & 4095);

		local.iov_len = remote.iov_len = first;
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	}
	out->len = n > 0 ? (size_t)n : 0;
	return 0;
}
