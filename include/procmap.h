/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procmap.h: the processes of a recording and what they had mapped.
 *
 * Built from MMAP2, COMM (exec), FORK and EXIT records in time order.
 * Owns the file table (one entry per mapped ELF file, shared by every
 * process that maps it, keyed by path and device/inode or build id) and,
 * per process, a sorted list of executable mappings.  A new mapping
 * replaces whatever it overlaps (the kernel reports no munmap); an exec
 * starts an empty address space; a forked process starts with a copy of
 * its parent's.  Processes whose code mappings are alike share one
 * address space (struct wp_addrspace): the workers a server forks keep
 * their parent's until they map something else, and one unwinding
 * session and one cache of unwound stacks serve them all.  A process's
 * address space is let go whenever its mappings change; their ids are
 * never given twice in one model.  An EXIT of a process's main thread marks it
 * exited; a long-running reader lets such processes go
 * (wp_procmap_forget).
 */
#ifndef WALLPROF_PROCMAP_H
#define WALLPROF_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define WP_DSO_NONE UINT32_MAX	/* anonymous or unknown memory */

enum wp_dso_kind {
	WP_DSO_FILE,		/* an ELF file on disk */
	WP_DSO_VDSO,		/* [vdso]: served from our own copy */
	WP_DSO_KERNEL,		/* the kernel: kallsyms */
};

struct wp_dso {
	enum wp_dso_kind kind;
	char *path;		/* as recorded */
	char *short_name;	/* basename */
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id[20];	/* recorded id */
	uint8_t build_id_size;
	/* Its file's id when none was recorded (wp_procmap_dso_build_id): */
	uint8_t file_build_id[20];
	uint8_t file_build_id_size;
	bool file_build_id_read;
	/* Resolved when first needed (procmap_dso_open): */
	bool opened, usable;
	int fd;			/* -1 when unusable or closed: see wp_procmap_dso_fd() */
	char *open_path;	/* the file actually opened */
	bool pinned;		/* fd cannot be opened again (a memfd, a kept copy) */
	bool starved;		/* no descriptor could be had for it: names lost */
	uint64_t open_dev, open_ino;	/* the file opened, to open the same again */
	uint64_t used;		/* when its descriptor was last handed out */
	uint64_t load_vaddr_minus_offset[16];	/* p_vaddr - p_offset per PT_LOAD */
	uint64_t load_offset[16], load_filesz[16];
	unsigned int nr_loads;
};

struct wp_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;
	uint32_t dso;		/* index into the dso table, or WP_DSO_NONE */
	bool exec;
};

/*
 * The code mappings of one process or more, alike (same files at the
 * same addresses).  Owned by the model, held by its processes.
 */
struct wp_addrspace {
	uint64_t id;		/* never given twice in one model (ucache.h's keys) */
	uint64_t hash;		/* of the mappings */
	struct wp_map *maps;	/* a copy of the processes' */
	size_t nr_maps;
	unsigned int refs;	/* processes on it */
	bool tabled;		/* found by its hash (not one that collided) */
	void *unwind_state;	/* owned by the unwinder */
};

struct wp_process {
	uint32_t pid;
	struct wp_map *maps;
	size_t nr_maps, cap_maps;
	struct wp_addrspace *space;	/* NULL until wp_procmap_addrspace; changes let it go */
	/*
	 * From an exec until a sample's user IP is in the maps: execve
	 * keeps the old image's registers while the new one is mapped.
	 */
	bool in_exec;
	/*
	 * The time of its main thread's EXIT (or of a thread's after it),
	 * 0 while it lives: a process model that is told to
	 * (wp_procmap_forget) lets it go some time after, unless a record
	 * shows it alive again.
	 */
	uint64_t exited_ns;
	bool leader_gone;	/* its main thread's EXIT came */
};

struct wp_procmap;

/*
 * same_kernel: the recording was made on the running kernel, so our own
 * [vdso] image stands in for the recorded one.  Dso 0 is the kernel.
 */
int wp_procmap_new(bool same_kernel, struct wp_procmap **out);

/*
 * Another way to a file than its recorded path, for a recorder: fn returns
 * a descriptor (then pm's) of the file dso names as the process that
 * mapped it saw it (a chroot's, another mount namespace's), or -1.  Asked
 * when the recorded path holds no such file, before a kept copy.
 */
typedef int (*wp_procmap_opener_fn)(void *arg, const struct wp_dso *dso);
void wp_procmap_set_opener(struct wp_procmap *pm, wp_procmap_opener_fn fn, void *arg);

/* Feed one record (MMAP2, COMM, FORK, EXIT, BUILD_ID); others are ignored. */
int wp_procmap_record(struct wp_procmap *pm, const struct perf_event_header *rec);

/* The process, created empty if unknown.  NULL only on allocation failure. */
struct wp_process *wp_procmap_process(struct wp_procmap *pm, uint32_t pid);

/* The process if known (a record made it), else NULL: nothing is created. */
struct wp_process *wp_procmap_find(const struct wp_procmap *pm, uint32_t pid);

/*
 * A sample of process p at time: one well after its main thread's exit
 * (WP_PROCMAP_EXIT_GRACE_NS) is of a thread that goes on without it
 * (pthread_exit), and keeps the process.
 */
#define WP_PROCMAP_EXIT_GRACE_NS (100ULL * 1000 * 1000)
void wp_procmap_seen(struct wp_procmap *pm, struct wp_process *p, uint64_t time);

/*
 * Let go of the processes whose main thread exited before time before
 * (their EXIT records fed) and that no record showed alive since (a
 * mapping, an exec, a new thread, a fork reusing the pid): their
 * mappings and unwind_state (released first), so that a model fed for
 * hours holds the processes alive and not every one it has seen.  For a
 * reader of records in time order: nothing of the process's should come
 * after before.  The number let go is added to *forgotten (may be NULL).
 * Dsos stay: other processes share them.  0 or -ENOMEM.
 */
int wp_procmap_forget(struct wp_procmap *pm, uint64_t before, size_t *forgotten);

/* Processes held. */
size_t wp_procmap_nr_processes(const struct wp_procmap *pm);

/* The mapping that contains addr, or NULL. */
const struct wp_map *wp_process_find_map(const struct wp_process *p, uint64_t addr);

struct wp_dso *wp_procmap_dso(struct wp_procmap *pm, uint32_t idx);
size_t wp_procmap_nr_dsos(const struct wp_procmap *pm);

/*
 * Open the file of a dso (once) and check it is the recorded one (build
 * id, else device and inode).  A file that is missing or replaced is
 * reported once as a warning and left unusable.  Returns dso->usable.
 */
bool wp_procmap_dso_open(struct wp_procmap *pm, struct wp_dso *dso);

/*
 * The descriptor of a usable dso's file (after wp_procmap_dso_open()),
 * borrowed until the next call: only so many are kept open at once (a
 * share of the limit on descriptors, fdlimit.h), the least recently used
 * closed, and a closed one is opened again, the same file (device and
 * inode) or none.  -1 when it cannot be had; dso->starved then says
 * whether for lack of descriptors.
 */
int wp_procmap_dso_fd(struct wp_procmap *pm, struct wp_dso *dso);

/*
 * The build id of dso into id (at most size bytes): the recorded one, else
 * the one its file has (a mapping recorded without one, the vDSO), read
 * once.  Its length, or 0 when it has none or its file cannot be had.
 */
size_t wp_procmap_dso_build_id(struct wp_procmap *pm, struct wp_dso *dso, uint8_t *id,
			       size_t size);

/*
 * The build id of the file at path, a mapping recorded without one (as
 * mappings found at attach time are): read from the file as it is now,
 * when it is the recorded one (same device and inode).  Its length, or 0.
 */
size_t wp_procmap_file_build_id(const char *path, uint32_t maj, uint32_t min, uint64_t ino,
				uint8_t *id, size_t size);

/* The ELF address of addr inside map (pc - load bias), or addr. */
uint64_t wp_map_elf_addr(const struct wp_dso *dso, const struct wp_map *map, uint64_t addr);

/*
 * The ELF address of a file offset of dso, seen through a mapping at file
 * offset pgoff (which picks the PT_LOAD), or the offset itself when no
 * PT_LOAD holds it: what wp_map_elf_addr() gives for the same address.
 */
uint64_t wp_dso_elf_addr(const struct wp_dso *dso, uint64_t pgoff, uint64_t offset);

/*
 * Where a code address is, independently of any process's address space,
 * so that it can be named later and elsewhere (symbols.h names places).
 */
enum wp_place_kind {
	WP_PLACE_KERNEL = 0,	/* addr: a kernel address */
	WP_PLACE_FILE = 1,	/* where: dso; addr: file offset looked up; pgoff: its mapping's */
	WP_PLACE_ANON = 2,	/* where: pid; addr: pc, in anonymous (JIT) memory */
	WP_PLACE_UNKNOWN = 3,	/* addr: pc, in no known mapping */
};

struct wp_place {
	uint32_t kind;		/* enum wp_place_kind */
	bool activation;	/* the pc is not a return address (ANON, UNKNOWN) */
	uint32_t where;
	uint64_t addr;
	uint64_t pgoff;
};

/*
 * The place of user address pc of process p (NULL: maps unknown); a
 * return address (!activation) is looked up one byte earlier, as its call.
 */
void wp_process_place(const struct wp_process *p, uint64_t pc, bool activation,
		      struct wp_place *out);

/*
 * The dso of a file named in a recording (added if new), as MMAP2 records
 * name them: its index, or WP_DSO_NONE when out of memory.
 */
uint32_t wp_procmap_dso_intern(struct wp_procmap *pm, const char *path, uint32_t maj,
			       uint32_t min, uint64_t ino, const uint8_t *build_id,
			       uint8_t build_id_size);

/* Load bias of a mapping: address - ELF virtual address. */
uint64_t wp_map_bias(const struct wp_dso *dso, const struct wp_map *map);

/*
 * The address space of process p as its mappings are now, shared with
 * the processes whose mappings are alike; NULL only when out of memory.
 * Held until p's mappings change or p goes.
 */
struct wp_addrspace *wp_procmap_addrspace(struct wp_procmap *pm, struct wp_process *p);

/* Address spaces held (by one process or more). */
size_t wp_procmap_nr_addrspaces(const struct wp_procmap *pm);

/*
 * Called when the last process holding an address space lets it go, so
 * that the owner of its unwind_state can drop it.
 */
typedef void (*wp_procmap_release_fn)(struct wp_addrspace *space, void *arg);
void wp_procmap_set_release(struct wp_procmap *pm, wp_procmap_release_fn fn, void *arg);

/* Files whose build id differs from the recorded one (warned). */
unsigned int wp_procmap_mismatches(const struct wp_procmap *pm);
unsigned int wp_procmap_missing(const struct wp_procmap *pm);
/* Files that could not be opened for lack of descriptors. */
unsigned int wp_procmap_starved(const struct wp_procmap *pm);

void wp_procmap_free(struct wp_procmap *pm);

#endif
