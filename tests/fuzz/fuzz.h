/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz.h: what the fuzz harnesses share: the input bytes as a data file,
 * a sink for the output, and quiet logs.
 *
 * A harness defines LLVMFuzzerTestOneInput().  Built with clang and
 * --enable-fuzzers, libFuzzer calls it (tests/fuzz/run.sh); in every build,
 * tests/unit/fuzz-replay.c calls it on each file of tests/fuzz/corpus*.
 * Nothing here may keep state from one input to the next, beyond the file
 * and the sink, which are reused.
 */
#ifndef WALLPROF_FUZZ_H
#define WALLPROF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_no_log(enum wp_log_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* Where the output goes: formatted in full, then thrown away. */
static FILE *fuzz_sink(void)
{
	static FILE *devnull;

	if (!devnull) {
		devnull = fopen("/dev/null", "we");
		if (!devnull)
			abort();
		/* Messages are formatted and quoted all the same, only dropped. */
		if (!getenv("WP_FUZZ_LOG"))
			wp_log_set_sink(fuzz_no_log);
	}
	return devnull;
}

/*
 * The input as a regular file, by a path the library opens as it would a
 * recording: one memory file, rewritten for every input.
 */
static const char *fuzz_file(const uint8_t *data, size_t size)
{
	static char path[32];
	static int fd = -1;
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("wallprof-fuzz", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0))
		abort();
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	return path;
}

#endif
