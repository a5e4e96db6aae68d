/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * waitstack.h: where a thread that is already asleep when the recording
 * begins waits, read without stopping it.
 *
 * A thread blocked since before an attach (a server's idle worker, a
 * backend waiting for its client) makes no switch-out until it wakes, so
 * its wait has no stack of the recording's.  The kernel tells, for a
 * thread asleep in a system call, its user stack and instruction
 * pointers (/proc/TID/syscall, which needs the right to trace it), and
 * its stack memory can be copied (process_vm_readv, the same right):
 * with these the report unwinds the wait like a switch-out sample's.
 * The thread may wake meanwhile; the copy is then of the moment read,
 * which the report dates at the recording's start.
 */
#ifndef WALLPROF_WAITSTACK_H
#define WALLPROF_WAITSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct wp_wait_stack {
	char state;		/* /proc/TID/stat's: S, D, I (asleep), R, T, ... */
	int cpu;		/* the CPU it last ran on, or -1 */
	uint64_t sp, pc;	/* at its system call; 0 when not in one */
	size_t len;		/* bytes of its stack copied from sp */
};

/* Whether a /proc state letter is a thread off its CPU, waiting. */
static inline int wp_wait_state_asleep(char state)
{
	return state == 'S' || state == 'D' || state == 'I';
}

/*
 * Read how thread tid of process pid waits: its state and CPU, and when
 * it is asleep in a system call, its stack and instruction pointers and
 * up to cap bytes of its stack from sp into stack.  0 (out->len 0 when no
 * stack could be had: not asleep in a system call, or no right to read
 * it), or -errno when the thread cannot be read at all (-ESRCH: gone).
 */
int wp_wait_stack_read(pid_t pid, pid_t tid, uint8_t *stack, size_t cap,
		       struct wp_wait_stack *out);

#endif
