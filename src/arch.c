/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arch.c: the table of supported architectures. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "arch.h"
#include "arch-table.h"

static const struct wp_arch *const arches[] = {
	&wp_arch_x86_64,
};

const struct wp_arch *wp_arch_find(const char *machine)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (machine && !strcmp(machine, arches[i]->machine))
			return arches[i];
	return NULL;
}

const char *wp_arch_host_machine(void)
{
	static char machine[sizeof(((struct utsname *)0)->machine)];
	const char *test = getenv("WALLPROF_TEST_MACHINE");
	struct utsname u;

	/* The tests play another machine: there is no other to run them on. */
	if (test && *test)
		return test;
	if (!machine[0] && !uname(&u))
		memcpy(machine, u.machine, sizeof(machine));
	return machine;
}

const char *wp_arch_supported(void)
{
	return "x86_64";
}
