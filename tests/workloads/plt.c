/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plt: calls libc's strnlen with a length of 0, a few instructions,
 * through the PLT for SECONDS (default 1), so that a good share of
 * samples land in the strnlen@plt stub itself; strchr's address is taken too, which gives it a .plt.got
 * stub in a PIE.  Built several ways (PIE or not, lazy or BIND_NOW, IBT's
 * .plt.sec) for test-plt, which names every stub of each build.
 * usage: plt [SECONDS]
 */
#include "wl.h"

char *(*volatile plt_strchr)(const char *, int) = strchr;
static volatile size_t plt_sink;

__attribute__((noinline)) static size_t plt_loop(const char *s, double until)
{
	size_t sum = 0;

	while (wl_now() < until) {
		for (int i = 0; i < 100000; i++) {
			size_t none = 0;

			/* A length the compiler cannot know, so strnlen is a call. */
			__asm__ volatile("" : "+r"(none), "+r"(s));
			sum += strnlen(s, none) + (size_t)i;
		}
	}
	return sum + strlen(s) + (size_t)(strchr(s, 'x') != NULL);
}

int main(int argc, char **argv)
{
	double seconds = wl_arg(argc, argv, 1, 1.0);

	plt_sink = plt_loop("abc", wl_now() + seconds) + (plt_strchr != NULL);
	return 0;
}
