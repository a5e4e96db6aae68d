/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-seen.c: what a recording saw run: files, anonymous code, starts, kernel addresses. */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "seen.h"
#include "tap.h"

int main(void)
{
	struct wp_seen *s;
	const struct wp_mapped_file *files;
	const struct wp_anon_code *anon;
	struct wp_mapped_file f = { .pid = 10, .maj = 8, .min = 1, .ino = 42, .fd = -1 };
	struct wp_mapped_file host = { .pid = 11, .build_id_size = 2, .build_id = { 1, 2 }, .fd = -1 };
	struct wp_mapped_file guest = { .pid = 12, .build_id_size = 2, .build_id = { 3, 4 } };
	uint64_t ips[4];
	size_t n;

	if (wp_seen_new(&s)) {
		ok(false, "wp_seen_new");
		return done_testing();
	}
	/* Files: one entry per file, merged when mapped again. */
	ok(!wp_seen_file_again(s, "/usr/lib/libc.so.6", &f), "a path not seen: not known");
	is_int(wp_seen_file_add(s, "/usr/lib/libc.so.6", &f), 0, "kept");
	f.pid = 11;
	f.build_id_size = 2;
	f.build_id[0] = 1;
	f.build_id[1] = 2;
	ok(wp_seen_file_again(s, "/usr/lib/libc.so.6", &f), "mapped again by another process: known");
	files = wp_seen_files(s, &n);
	is_u64(n, 1, "still one file");
	ok(files[0].pid == UINT32_MAX, "shared by several processes");
	ok(files[0].build_id_size == 2 && files[0].build_id[1] == 2, "its build id learned late");
	ok(files[0].ino == 42 && files[0].path != f.path, "its inode kept, its path a copy");
	/* One path, another build id: a container's file beside the host's. */
	ok(wp_seen_file_again(s, "/usr/lib/libc.so.6", &host), "the host's build id: the same file");
	guest.fd = open("/dev/null", O_RDONLY);
	ok(!wp_seen_file_again(s, "/usr/lib/libc.so.6", &guest), "another build id: another file");
	is_int(wp_seen_file_add(s, "/usr/lib/libc.so.6", &guest), 0, "kept beside it");
	ok(wp_seen_file_again(s, "/usr/lib/libc.so.6", &guest), "found again by its build id");
	files = wp_seen_files(s, &n);
	ok(n == 2 && files[1].build_id[0] == 3 && files[1].fd == guest.fd,
	   "two files of one path, the second with its descriptor");
	/* The guest's file, for the live unwinder: a descriptor of its own. */
	{
		int fd = wp_seen_file_open(s, "/usr/lib/libc.so.6", (const uint8_t[]){ 3, 4 }, 2);
		struct stat a, b;

		ok(fd >= 0 && fd != guest.fd && !fstat(fd, &a) && !fstat(guest.fd, &b) &&
		   a.st_ino == b.st_ino, "the guest's file by its build id: a duplicate");
		if (fd >= 0)
			close(fd);
		is_int(wp_seen_file_open(s, "/usr/lib/libc.so.6", (const uint8_t[]){ 1, 2 }, 2), -1,
		       "the host's build id: none (the host's path holds it)");
		is_int(wp_seen_file_open(s, "/usr/lib/other.so", NULL, 0), -1, "another path: none");
		fd = wp_seen_file_open(s, "/usr/lib/libc.so.6", NULL, 0);
		ok(fd >= 0, "no build id asked: the one held open");
		if (fd >= 0)
			close(fd);
	}

	/* Anonymous code: once each, by process then start. */
	wp_seen_anon_add(s, &(struct wp_anon_code){ .pid = 7, .start = 0x2000, .end = 0x3000 });
	wp_seen_anon_add(s, &(struct wp_anon_code){ .pid = 5, .start = 0x1000, .end = 0x2000 });
	wp_seen_anon_add(s, &(struct wp_anon_code){ .pid = 7, .start = 0x1000, .end = 0x2000 });
	wp_seen_anon_add(s, &(struct wp_anon_code){ .pid = 7, .start = 0x2000, .end = 0x3000 });
	anon = wp_seen_anon_code(s, &n);
	ok(n == 3 && anon[0].pid == 5 && anon[1].pid == 7 && anon[1].start == 0x1000 &&
	   anon[2].start == 0x2000, "three regions, sorted, the one added twice once");

	/* Program starts: forgotten at the end, unless the process ran anonymous code. */
	wp_seen_start(s, 7, 1000);
	wp_seen_start(s, 8, 2000);
	is_u64(wp_seen_start_of(s, 8), 2000, "a start");
	wp_seen_start(s, 8, 3000);
	is_u64(wp_seen_start_of(s, 8), 3000, "an exec: the latest");
	wp_seen_end(s, 8);
	wp_seen_end(s, 7);
	is_u64(wp_seen_start_of(s, 8), 0, "ended: forgotten");
	is_u64(wp_seen_start_of(s, 7), 1000, "ended with a JIT's code: kept for its names");
	is_u64(wp_seen_start_of(s, 9), 0, "never started: 0");

	/* Kernel addresses: once each, 0 never. */
	wp_seen_kernel_lock(s);
	wp_seen_kernel_ip(s, 0xffffffff81000000ULL);
	wp_seen_kernel_ip(s, 0);
	wp_seen_kernel_ip(s, 0xffffffff81000010ULL);
	wp_seen_kernel_ip(s, 0xffffffff81000000ULL);
	wp_seen_kernel_unlock(s);
	is_u64(wp_seen_nr_kernel_ips(s), 2, "two kernel addresses");
	n = wp_seen_kernel_ips(s, ips, 1);
	is_u64(n, 1, "copied up to the room given");
	n = wp_seen_kernel_ips(s, ips, 4);
	ok(n == 2 && ips[0] != ips[1] && ips[0] >> 32 == 0xffffffffULL, "both copied");
	wp_seen_free(s);	/* closes guest's descriptor: ASan and valgrind see no leak */
	wp_seen_free(NULL);
	return done_testing();
}
