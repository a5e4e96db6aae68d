/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jit: runs generated machine code, as a JIT does, for SECONDS (default 1):
 * jit_caller -> jit_spin_loop, the loop living in an anonymous executable
 * page and named only by /tmp/perf-PID.map, which the program writes the
 * way V8 and CPython do.  The generated function keeps a frame pointer,
 * like V8's code, so that an unwinder without CFI for it can still find
 * its caller.  With "unlink", the map is removed before exiting (a
 * recording then has no names to save).  Reports where the code was.
 * x86_64 only: elsewhere it says so and exits 77.
 * usage: jit [SECONDS [unlink]]
 */
#include <sys/mman.h>
#include <unistd.h>

#include "wl.h"

typedef unsigned long long (*jit_fn)(unsigned long long iterations);

#if defined(__x86_64__)
/*
 *	push %rbp; mov %rsp,%rbp
 *	xor %eax,%eax
 * 1:	add %rdi,%rax; imul %rax,%rax; dec %rdi; jnz 1b
 *	pop %rbp; ret
 */
static const unsigned char jit_code[] = {
	0x55, 0x48, 0x89, 0xe5,
	0x31, 0xc0,
	0x48, 0x01, 0xf8, 0x48, 0x0f, 0xaf, 0xc0, 0x48, 0xff, 0xcf, 0x75, 0xf4,
	0x5d, 0xc3,
};
#endif

static volatile unsigned long long jit_sink;

__attribute__((noinline)) static void jit_caller(jit_fn fn, double until)
{
	unsigned long long x = 0;

	while (wl_now() < until)
		x += fn(200000);
	jit_sink = x;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	double seconds = wl_arg(argc, argv, 1, 1.0);
	long page = sysconf(_SC_PAGESIZE);
	char path[64], extra[64];
	FILE *map;
	void *mem;

	mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, jit_code, sizeof(jit_code));
	/* Executable from here: the kernel reports the mapping (//anon). */
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_spin_loop\n", (unsigned long)mem, sizeof(jit_code));
	if (fclose(map))
		return 1;
	jit_caller((jit_fn)mem, wl_now() + seconds);
	if (argc > 2 && !strcmp(argv[2], "unlink"))
		unlink(path);
	snprintf(extra, sizeof(extra), "code %lx size %zx", (unsigned long)mem, sizeof(jit_code));
	wl_report("main", extra);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "jit: generated code is x86_64 only\n");
	return 77;
#endif
}
