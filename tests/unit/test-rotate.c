/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-rotate.c: the names of a rotating recording's files (rotate.h). */
#include <stdlib.h>

#include "rotate.h"
#include "tap.h"

static void name_is(const char *path, unsigned int n, const char *want)
{
	char *got = wp_rotate_name(path, n);

	ok(got && !strcmp(got, want), "'%s' file %u is '%s' (got '%s')", path, n, want,
	   got ? got : "(null)");
	free(got);
}

int main(void)
{
	name_is("out.data", 1, "out.0001.data");
	name_is("out.data", 42, "out.0042.data");
	name_is("out.data", 12345, "out.12345.data");
	name_is("prof", 2, "prof.0002");
	name_is("/var/lib/wp/host.wallprof.data", 3, "/var/lib/wp/host.wallprof.0003.data");
	/* A dot in a directory's name is not the file's extension. */
	name_is("/tmp/x.d/prof", 1, "/tmp/x.d/prof.0001");
	/* Nor is the dot of a hidden file's name. */
	name_is(".prof", 1, ".prof.0001");
	name_is("dir/.prof.data", 1, "dir/.prof.0001.data");
	return done_testing();
}
