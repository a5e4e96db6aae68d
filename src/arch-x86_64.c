/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arch-x86_64.c: x86_64 registers for DWARF unwinding. */
#include "arch.h"
#include "arch-table.h"

/* perf's register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
enum {
	PERF_X86_AX, PERF_X86_BX, PERF_X86_CX, PERF_X86_DX, PERF_X86_SI, PERF_X86_DI,
	PERF_X86_BP, PERF_X86_SP, PERF_X86_IP, PERF_X86_FLAGS, PERF_X86_CS, PERF_X86_SS,
	PERF_X86_DS, PERF_X86_ES, PERF_X86_FS, PERF_X86_GS,
	PERF_X86_R8, PERF_X86_R9, PERF_X86_R10, PERF_X86_R11,
	PERF_X86_R12, PERF_X86_R13, PERF_X86_R14, PERF_X86_R15,
};

/*
 * DWARF numbers the x86_64 registers rax, rdx, rcx, rbx, rsi, rdi, rbp,
 * rsp, r8-r15, then the return address (the pc) as 16 (psABI, 3.6.2).
 */
static const int x86_64_dwarf_to_perf[] = {
	PERF_X86_AX, PERF_X86_DX, PERF_X86_CX, PERF_X86_BX, PERF_X86_SI, PERF_X86_DI,
	PERF_X86_BP, PERF_X86_SP,
	PERF_X86_R8, PERF_X86_R9, PERF_X86_R10, PERF_X86_R11,
	PERF_X86_R12, PERF_X86_R13, PERF_X86_R14, PERF_X86_R15,
	PERF_X86_IP,
};

#define BIT(n) (1ULL << (n))

const struct wp_arch wp_arch_x86_64 = {
	.machine = "x86_64",
	/* What the DWARF registers above need, nothing more. */
	.sample_regs_user = BIT(PERF_X86_AX) | BIT(PERF_X86_BX) | BIT(PERF_X86_CX) |
			    BIT(PERF_X86_DX) | BIT(PERF_X86_SI) | BIT(PERF_X86_DI) |
			    BIT(PERF_X86_BP) | BIT(PERF_X86_SP) | BIT(PERF_X86_IP) |
			    BIT(PERF_X86_R8) | BIT(PERF_X86_R9) | BIT(PERF_X86_R10) |
			    BIT(PERF_X86_R11) | BIT(PERF_X86_R12) | BIT(PERF_X86_R13) |
			    BIT(PERF_X86_R14) | BIT(PERF_X86_R15),
	.nr_dwarf_regs = sizeof(x86_64_dwarf_to_perf) / sizeof(x86_64_dwarf_to_perf[0]),
	.dwarf_to_perf = x86_64_dwarf_to_perf,
	.perf_sp = PERF_X86_SP,
	.perf_ip = PERF_X86_IP,
	.dwarf_sp = 7,
	.kernel_irq_entry_prefix = "asm_",	/* asm_common_interrupt, asm_sysvec_*, ... */
	.kernel_syscall_entry_prefix = "entry_SYSCALL",
};
