/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-arch.c: the architecture table and the x86_64 register map. */
#include "arch.h"
#include "tap.h"

int main(void)
{
	const struct wp_arch *a = wp_arch_find("x86_64");
	bool all = true;

	ok(a != NULL, "x86_64 is supported");
	ok(!wp_arch_find("aarch64") && !wp_arch_find("") && !wp_arch_find(NULL),
	   "others are not (yet)");
	if (!a)
		return done_testing();
	is_int(a->nr_dwarf_regs, 17, "x86_64: DWARF registers 0-16");
	for (unsigned int i = 0; i < a->nr_dwarf_regs; i++)
		all &= (a->sample_regs_user >> a->dwarf_to_perf[i]) & 1;
	ok(all, "x86_64: every DWARF register is sampled");
	is_int(__builtin_popcountll(a->sample_regs_user), 17, "x86_64: and nothing more");
	is_int(a->dwarf_to_perf[a->dwarf_sp], a->perf_sp, "x86_64: DWARF 7 is perf's SP");
	is_int(a->dwarf_to_perf[16], a->perf_ip, "x86_64: DWARF 16 (return address) is perf's IP");
	is_u64(a->sample_regs_user, 0xff01ffULL, "x86_64: the mask perf record uses");
	ok(wp_arch_host_machine()[0] != '\0', "the host has a machine name");
	return done_testing();
}
