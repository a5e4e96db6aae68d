/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mapswap: what a watched program in a container can do to the recorder
 * that copies the files it maps.  Maps the first page of each FILE as
 * code (as the loader maps a library), then, with --swap DIR TARGET,
 * moves the directory DIR aside (to DIR.old) and puts a symbolic link to
 * TARGET in its place, and sleeps SECONDS.  A recorder that opens the
 * mapped paths through /proc/PID/root after the swap follows the link: an
 * absolute TARGET from its own root.  Prints "mapped N" once done.
 * usage: mapswap SECONDS [--swap DIR TARGET] FILE...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir = NULL, *target = NULL;
	struct timespec ts;
	double seconds;
	int i = 2, n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: mapswap SECONDS [--swap DIR TARGET] FILE...\n");
		return 2;
	}
	seconds = strtod(argv[1], NULL);
	if (!strcmp(argv[i], "--swap") && argc > i + 2) {
		dir = argv[i + 1];
		target = argv[i + 2];
		i += 3;
	}
	for (; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
				      MAP_FAILED) {
			perror(argv[i]);
			return 1;
		}
		close(fd);
		n++;
	}
	if (dir) {
		char old[4096];

		snprintf(old, sizeof(old), "%s.old", dir);
		if (rename(dir, old) || symlink(target, dir)) {
			perror(dir);
			return 1;
		}
	}
	printf("mapped %d\n", n);
	fflush(stdout);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	return 0;
}
