/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stackfault: most of the time goes to page faults on the stack itself.
 * A frame of SF_PAGES pages gives them back to the kernel (MADV_DONTNEED)
 * and touches them again, lowest first: while the kernel faults one in, a
 * sample's copy of the user stack can only reach up to that page.
 * main -> sf_frame -> sf_touch.
 * usage: stackfault [SECONDS]   (default 1)
 */
#include <stdint.h>
#include <sys/mman.h>

#include "wl.h"

#define SF_PAGE 4096
#define SF_PAGES 3

__attribute__((noinline)) static void sf_touch(volatile char *pages, size_t len)
{
	for (size_t i = 0; i < len; i += SF_PAGE)
		pages[i] = 1;
}

__attribute__((noinline)) static void sf_frame(double until)
{
	char frame[(SF_PAGES + 1) * SF_PAGE];
	char *pages = (char *)(((uintptr_t)frame + SF_PAGE - 1) & ~(uintptr_t)(SF_PAGE - 1));

	while (wl_now() < until) {
		if (madvise(pages, SF_PAGES * SF_PAGE, MADV_DONTNEED))
			_exit(1);
		sf_touch(pages, SF_PAGES * SF_PAGE);
	}
	/* The frame stays live until here. */
	__asm__ volatile("" : : "r"(frame) : "memory");
}

int main(int argc, char **argv)
{
	sf_frame(wl_now() + wl_arg(argc, argv, 1, 1.0));
	wl_report("main", NULL);
	return 0;
}
