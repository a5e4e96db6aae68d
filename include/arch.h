/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arch.h: what DWARF unwinding and the kernel's symbols tell of each
 * architecture.
 *
 * perf numbers the user registers of a sample its own way per
 * architecture (asm/perf_regs.h), DWARF another; the unwinder maps one to
 * the other and needs the stack and instruction pointers.  Each supported
 * architecture is one file (arch-<name>.c) holding one struct wp_arch;
 * recording picks the host's, report the one named by the machine
 * recorded in the file.  Adding an architecture is one new file, an entry
 * in arch.c's table, and its tests.
 */
#ifndef WALLPROF_ARCH_H
#define WALLPROF_ARCH_H

#include <stdint.h>

#define WP_ARCH_MAX_DWARF_REGS 64

struct wp_arch {
	const char *machine;		/* as uname -m says it */
	uint64_t sample_regs_user;	/* perf registers a sample must carry */
	unsigned int nr_dwarf_regs;	/* DWARF registers 0..n-1 handed to libdwfl */
	const int *dwarf_to_perf;	/* DWARF register i is perf register [i] */
	int perf_sp, perf_ip;		/* perf numbers of SP and IP */
	int dwarf_sp;			/* DWARF number of SP */
	/*
	 * Prefixes of kernel symbols: an interrupt's or exception's entry
	 * from the interrupted context (below it on a stack is only what it
	 * interrupted), and the system call's entry.
	 */
	const char *kernel_irq_entry_prefix;
	const char *kernel_syscall_entry_prefix;
};

/* The architecture of that machine name, or NULL when not supported. */
const struct wp_arch *wp_arch_find(const char *machine);

/*
 * This host's machine name (uname -m), "" if unknown; the tests set
 * WALLPROF_TEST_MACHINE to play another.
 */
const char *wp_arch_host_machine(void);

/* The machine names supported, for messages: "x86_64". */
const char *wp_arch_supported(void);

#endif
