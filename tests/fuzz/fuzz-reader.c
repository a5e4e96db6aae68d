/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-reader.c: the data file decoder on any bytes: the file reader
 * (src/datafile.c), then every record it hands out parsed and printed by
 * the dump (src/layout.c, src/dump.c).  Whatever the bytes, it must end
 * with an error or a dump: no crash, no leak, no unbounded time or memory.
 */
#include "datafile.h"
#include "dump.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *out = fuzz_sink();
	const char *path = fuzz_file(data, size);
	struct wp_reader *r;

	if (wp_reader_open(path, &r))
		return 0;
	wp_dump_reader(r, path, out);
	wp_reader_close(r);
	return 0;
}
