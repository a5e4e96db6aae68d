/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-procroot.c: opening a file as a process sees it (src/procroot.c),
 * with openat2 and with the fallback for kernels without it
 * (WALLPROF_TEST_NO_OPENAT2), on this process's own root: a regular file
 * opens; a directory, a FIFO (without blocking) and a missing file do
 * not; a /proc magic link on the way is refused; the fallback refuses any
 * link and any "..".  Leaving a root is container-escape.sh's to test
 * (it needs a chroot).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procroot.h"
#include "tap.h"

static char dir[] = "/tmp/wallprof-procroot-XXXXXX";

static int try(const char *rel, struct stat *st)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return wp_procroot_open(getpid(), path, st);
}

static void run(const char *how)
{
	struct stat st;
	char buf[8] = "";
	int fd;

	fd = try("a/lib.so", &st);
	ok(fd >= 0 && S_ISREG(st.st_mode) && read(fd, buf, 4) == 4 && !memcmp(buf, "ELF!", 4),
	   "%s: a regular file opens, for reading", how);
	if (fd >= 0)
		close(fd);
	is_int(try("a", &st), -EINVAL, "%s: a directory is not opened", how);
	is_int(try("fifo", &st), -EINVAL, "%s: a FIFO is not opened (nor waited on)", how);
	is_int(try("a/none.so", &st), -ENOENT, "%s: a missing file is -ENOENT", how);
	is_int(wp_procroot_open(getpid(), "/proc/self/root/etc/hostname", &st), -ELOOP,
	       "%s: a /proc magic link on the way is refused", how);
	is_int(wp_procroot_open(getpid(), "relative", &st), -EINVAL,
	       "%s: a relative path is refused", how);
}

int main(void)
{
	char path[256];
	FILE *f;
	struct stat st;
	int fd;

	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/a", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/a/lib.so", dir);
	f = fopen(path, "w");
	if (!f || fputs("ELF!", f) < 0 || fclose(f))
		return 99;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (mkfifo(path, 0600))
		return 99;
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink("a", path))
		return 99;

	run("openat2");
	fd = try("link/lib.so", &st);
	ok(fd >= 0, "openat2: a link inside the root is followed");
	if (fd >= 0)
		close(fd);

	setenv("WALLPROF_TEST_NO_OPENAT2", "1", 1);
	run("no openat2");
	is_int(try("link/lib.so", &st), -ELOOP, "no openat2: a link on the way is refused");
	is_int(try("a/../a/lib.so", &st), -EXDEV, "no openat2: '..' is refused");

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		return 99;
	return done_testing();
}
