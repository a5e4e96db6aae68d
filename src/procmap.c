/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procmap.c: processes, their executable mappings, and the mapped files. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xxhash.h>

#include "buildid.h"
#include "debuginfod.h"
#include "fdlimit.h"
#include "filecache.h"
#include "layout.h"
#include "log.h"
#include "procmap.h"
#include "quote.h"
#include "u64map.h"
#include "util.h"

struct wp_procmap {
	struct wp_dso **dsos;
	size_t nr_dsos, cap_dsos;
	struct wp_u64map procs;		/* pid -> its struct wp_process * (owned) */
	wp_procmap_release_fn release;
	void *release_arg;
	bool same_kernel;
	int vdso_fd;			/* our own [vdso] image, -1 until made */
	unsigned int mismatches, missing, starved;
	/* Descriptors of dsos kept open (see wp_procmap_dso_fd). */
	unsigned int nr_open, max_open;
	uint64_t tick;
	struct wp_dso *busy;		/* the one handed out last: never closed */
	struct wp_u64map spaces;	/* hash of the mappings -> struct wp_addrspace * */
	size_t nr_spaces;		/* held, tabled or not */
	uint64_t space_ids;		/* given so far */
	size_t nr_exited;		/* processes with exited_ns set */
	wp_procmap_opener_fn opener;	/* or NULL */
	void *opener_arg;
};

/* Close the descriptor of a dso that can open its file again. */
static void dso_close(struct wp_procmap *pm, struct wp_dso *d)
{
	close(d->fd);
	d->fd = -1;
	pm->nr_open--;
}

/* The least recently used dso whose descriptor may be closed, or NULL. */
static struct wp_dso *dso_lru(const struct wp_procmap *pm)
{
	struct wp_dso *best = NULL;

	for (size_t i = 1; i < pm->nr_dsos; i++) {
		struct wp_dso *d = pm->dsos[i];

		if (d->fd >= 0 && !d->pinned && d != pm->busy && (!best || d->used < best->used))
			best = d;
	}
	return best;
}

/* Keep no more than max_open descriptors of dsos (the pinned ones aside). */
static void dso_trim(struct wp_procmap *pm)
{
	struct wp_dso *d;

	while (pm->nr_open > pm->max_open && (d = dso_lru(pm)))
		dso_close(pm, d);
}

/* Another cache needs a descriptor: give back all but the one in use. */
static unsigned int procmap_reclaim(void *arg)
{
	struct wp_procmap *pm = arg;
	unsigned int n = 0;
	struct wp_dso *d;

	while ((d = dso_lru(pm))) {
		dso_close(pm, d);
		n++;
	}
	return n;
}

void wp_procmap_set_opener(struct wp_procmap *pm, wp_procmap_opener_fn fn, void *arg)
{
	pm->opener = fn;
	pm->opener_arg = arg;
}

int wp_procmap_new(bool same_kernel, struct wp_procmap **out)
{
	struct wp_procmap *pm = calloc(1, sizeof(*pm));
	struct wp_dso *k;

	*out = NULL;
	if (!pm)
		return -ENOMEM;
	pm->same_kernel = same_kernel;
	pm->vdso_fd = -1;
	/* A quarter of what is left: libdwfl's sessions hold the rest. */
	pm->max_open = wp_fdlimit_share(4, 4);
	k = calloc(1, sizeof(*k));
	if (!k || WP_GROW(pm->dsos, pm->cap_dsos, 1)) {
		free(k);
		wp_procmap_free(pm);
		return -ENOMEM;
	}
	k->kind = WP_DSO_KERNEL;
	k->path = strdup("[kernel.kallsyms]");
	k->short_name = strdup("[kernel]");
	k->fd = -1;
	pm->dsos[pm->nr_dsos++] = k;
	if (!k->path || !k->short_name) {
		wp_procmap_free(pm);
		return -ENOMEM;
	}
	wp_fd_reclaim_register(procmap_reclaim, pm);
	*out = pm;
	return 0;
}

void wp_procmap_set_release(struct wp_procmap *pm, wp_procmap_release_fn fn, void *arg)
{
	pm->release = fn;
	pm->release_arg = arg;
}

struct wp_process *wp_procmap_find(const struct wp_procmap *pm, uint32_t pid)
{
	uint64_t found;

	return wp_u64map_get(&pm->procs, pid, &found) ? (struct wp_process *)(uintptr_t)found : NULL;
}

size_t wp_procmap_nr_processes(const struct wp_procmap *pm)
{
	return pm->procs.len;
}

/* A record shows the process alive (again): it is not let go. */
static void process_alive(struct wp_procmap *pm, struct wp_process *p)
{
	if (p->exited_ns) {
		p->exited_ns = 0;
		pm->nr_exited--;
	}
}

struct wp_process *wp_procmap_process(struct wp_procmap *pm, uint32_t pid)
{
	struct wp_process *p;
	uint64_t found;

	if (wp_u64map_get(&pm->procs, pid, &found))
		return (struct wp_process *)(uintptr_t)found;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	if (wp_u64map_put(&pm->procs, pid, (uintptr_t)p)) {
		free(p);
		return NULL;
	}
	return p;
}

/* Process p no longer holds its address space: the last one out frees it. */
static void space_leave(struct wp_procmap *pm, struct wp_process *p)
{
	struct wp_addrspace *sp = p->space;

	p->space = NULL;
	if (!sp || --sp->refs)
		return;
	if (pm->release && sp->unwind_state)
		pm->release(sp, pm->release_arg);
	if (sp->tabled)
		wp_u64map_del(&pm->spaces, sp->hash);
	pm->nr_spaces--;
	free(sp->maps);
	free(sp);
}

static uint64_t maps_hash(const struct wp_map *maps, size_t n)
{
	uint64_t h = n;

	/* Field by field: the structures' padding holds anything. */
	for (size_t i = 0; i < n; i++) {
		uint64_t f[4] = { maps[i].start, maps[i].end, maps[i].pgoff, maps[i].dso };

		h = XXH3_64bits_withSeed(f, sizeof(f), h);
	}
	return h;
}

static bool maps_alike(const struct wp_map *a, const struct wp_map *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end ||
		    a[i].pgoff != b[i].pgoff || a[i].dso != b[i].dso)
			return false;
	return true;
}

struct wp_addrspace *wp_procmap_addrspace(struct wp_procmap *pm, struct wp_process *p)
{
	struct wp_addrspace *sp;
	uint64_t hash, found;

	if (p->space)
		return p->space;
	hash = maps_hash(p->maps, p->nr_maps);
	if (wp_u64map_get(&pm->spaces, hash, &found)) {
		sp = (struct wp_addrspace *)(uintptr_t)found;
		if (sp->nr_maps == p->nr_maps && maps_alike(sp->maps, p->maps, p->nr_maps)) {
			sp->refs++;
			p->space = sp;
			return sp;
		}
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	if (p->nr_maps && !(sp->maps = malloc(p->nr_maps * sizeof(*sp->maps)))) {
		free(sp);
		return NULL;
	}
	if (p->nr_maps)
		memcpy(sp->maps, p->maps, p->nr_maps * sizeof(*sp->maps));
	sp->nr_maps = p->nr_maps;
	sp->hash = hash;
	/* Unique in the model: a space let go and a new one alike must not share a key. */
	sp->id = ++pm->space_ids;
	sp->refs = 1;
	/* One whose hash another holds (a collision) serves its process alone. */
	sp->tabled = !wp_u64map_get(&pm->spaces, hash, &found) &&
		     !wp_u64map_put(&pm->spaces, hash, (uintptr_t)sp);
	pm->nr_spaces++;
	p->space = sp;
	return sp;
}

size_t wp_procmap_nr_addrspaces(const struct wp_procmap *pm)
{
	return pm->nr_spaces;
}

static void process_changed(struct wp_procmap *pm, struct wp_process *p)
{
	process_alive(pm, p);
	space_leave(pm, p);
}

static void process_clear(struct wp_procmap *pm, struct wp_process *p)
{
	p->nr_maps = 0;
	process_changed(pm, p);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Find or add the dso for a mapped file. */
static uint32_t dso_lookup(struct wp_procmap *pm, const char *path, uint32_t maj,
			   uint32_t min, uint64_t ino, const uint8_t *bid, uint8_t bid_size)
{
	struct wp_dso *d;

	for (size_t i = pm->nr_dsos; i-- > 1;) {
		d = pm->dsos[i];
		if (strcmp(d->path, path))
			continue;
		/* The same path with another identity is a replaced file. */
		if (ino && d->ino && (d->ino != ino || d->maj != maj || d->min != min))
			continue;
		if (bid_size && d->build_id_size &&
		    (bid_size != d->build_id_size || memcmp(bid, d->build_id, bid_size)))
			continue;
		if (ino && !d->ino) {
			d->ino = ino;
			d->maj = maj;
			d->min = min;
		}
		if (bid_size && !d->build_id_size) {
			memcpy(d->build_id, bid, bid_size);
			d->build_id_size = bid_size;
		}
		return (uint32_t)i;
	}
	if (WP_GROW(pm->dsos, pm->cap_dsos, pm->nr_dsos + 1))
		return WP_DSO_NONE;
	d = calloc(1, sizeof(*d));
	if (!d)
		return WP_DSO_NONE;
	d->kind = !strcmp(path, "[vdso]") ? WP_DSO_VDSO : WP_DSO_FILE;
	d->path = strdup(path);
	d->short_name = d->path ? strdup(base_name(path)) : NULL;
	d->fd = -1;
	d->maj = maj;
	d->min = min;
	d->ino = ino;
	if (bid_size) {
		memcpy(d->build_id, bid, bid_size);
		d->build_id_size = bid_size;
	}
	if (!d->path || !d->short_name) {
		free(d->path);
		free(d->short_name);
		free(d);
		return WP_DSO_NONE;
	}
	pm->dsos[pm->nr_dsos] = d;
	return (uint32_t)pm->nr_dsos++;
}

/* Insert a mapping, cutting away whatever part of older ones it covers. */
static int process_map(struct wp_procmap *pm, struct wp_process *p, const struct wp_map *m)
{
	struct wp_map *out;
	size_t n = 0, cap = p->nr_maps + 2;

	out = malloc(cap * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_maps; i++) {
		struct wp_map o = p->maps[i];

		if (o.end <= m->start || o.start >= m->end) {
			out[n++] = o;
			continue;
		}
		if (o.start < m->start) {
			struct wp_map left = o;

			left.end = m->start;
			out[n++] = left;
		}
		if (o.end > m->end) {
			struct wp_map right = o;

			right.pgoff += m->end - o.start;
			right.start = m->end;
			out[n++] = right;
		}
	}
	out[n++] = *m;
	/* Keep the list sorted by start address for binary search. */
	for (size_t i = n - 1; i > 0 && out[i - 1].start > out[i].start; i--) {
		struct wp_map tmp = out[i];

		out[i] = out[i - 1];
		out[i - 1] = tmp;
	}
	free(p->maps);
	p->maps = out;
	p->nr_maps = n;
	p->cap_maps = cap;
	process_changed(pm, p);
	return 0;
}

static int record_mmap2(struct wp_procmap *pm, const struct perf_event_header *rec)
{
	struct wp_process *p;
	struct wp_mmap2 mm;
	struct wp_map m;
	const char *name;

	if (wp_mmap2_parse(rec, &mm))
		return 0;
	name = mm.filename;
	if (!(mm.prot & PROT_EXEC))
		return 0;	/* only code is unwound and named */
	p = wp_procmap_process(pm, mm.pid);
	if (!p)
		return -ENOMEM;
	m.start = mm.addr;
	m.end = mm.addr + mm.len;
	m.pgoff = mm.pgoff;
	m.exec = true;
	m.dso = WP_DSO_NONE;
	/* Anonymous code, a JIT's (also in a memfd), has no file to open. */
	if ((name[0] == '/' && !wp_mmap_is_anon(name)) || !strcmp(name, "[vdso]"))
		m.dso = dso_lookup(pm, name, mm.maj, mm.min, mm.ino, mm.build_id, mm.build_id_size);
	return process_map(pm, p, &m);
}

static int record_fork(struct wp_procmap *pm, const struct perf_event_header *rec)
{
	struct wp_process *child, *parent;
	struct wp_task_event te;

	if (wp_task_event_parse(rec, &te))
		return 0;
	if (te.pid == te.ppid) {
		/* A new thread shares its process' maps, and shows it alive. */
		child = wp_procmap_find(pm, te.pid);
		if (child)
			process_alive(pm, child);
		return 0;
	}
	parent = wp_procmap_process(pm, te.ppid);
	child = wp_procmap_process(pm, te.pid);
	if (!parent || !child)
		return -ENOMEM;
	free(child->maps);
	child->maps = NULL;
	child->nr_maps = child->cap_maps = 0;
	child->leader_gone = false;	/* a new process, maybe on a pid let go or reused */
	if (parent->nr_maps) {
		child->maps = malloc(parent->nr_maps * sizeof(*child->maps));
		if (!child->maps)
			return -ENOMEM;
		memcpy(child->maps, parent->maps, parent->nr_maps * sizeof(*child->maps));
		child->nr_maps = child->cap_maps = parent->nr_maps;
	}
	process_changed(pm, child);
	return 0;
}

/*
 * The main thread's exit marks the process, and so does every exit of a
 * thread after it: an exit_group's threads all go within a moment of
 * each other, the last one's exit is the process's.  One whose main
 * thread calls pthread_exit while others go on is shown alive again by
 * their records (new threads, mappings, samples: wp_procmap_seen), and
 * marked again by their exits.  Only processes already known are marked:
 * an unknown one has nothing to let go.
 */
static void record_exit(struct wp_procmap *pm, const struct perf_event_header *rec)
{
	struct wp_task_event te;
	struct wp_process *p;

	if (wp_task_event_parse(rec, &te) || !(p = wp_procmap_find(pm, te.pid)))
		return;
	if (te.pid == te.tid)
		p->leader_gone = true;
	if (!p->leader_gone)
		return;
	if (!p->exited_ns)
		pm->nr_exited++;
	/* Time 0 would read as alive: a recording starts well after boot. */
	p->exited_ns = te.time ? te.time : 1;
}

void wp_procmap_seen(struct wp_procmap *pm, struct wp_process *p, uint64_t time)
{
	if (p->exited_ns && time > p->exited_ns + WP_PROCMAP_EXIT_GRACE_NS)
		process_alive(pm, p);
}

static void process_free(struct wp_procmap *pm, struct wp_process *p)
{
	space_leave(pm, p);
	free(p->maps);
	free(p);
}

int wp_procmap_forget(struct wp_procmap *pm, uint64_t before, size_t *forgotten)
{
	uint64_t pid, found, *gone;
	size_t pos = 0, n = 0;

	if (!pm->nr_exited)
		return 0;
	gone = malloc(pm->nr_exited * sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	/* Collected first: a deletion moves entries the walk has yet to see. */
	while (n < pm->nr_exited && wp_u64map_next(&pm->procs, &pos, &pid, &found)) {
		const struct wp_process *p = (const struct wp_process *)(uintptr_t)found;

		if (p->exited_ns && p->exited_ns < before)
			gone[n++] = pid;
	}
	for (size_t i = 0; i < n; i++) {
		struct wp_process *p = wp_procmap_find(pm, (uint32_t)gone[i]);

		wp_u64map_del(&pm->procs, gone[i]);
		pm->nr_exited--;
		process_free(pm, p);
	}
	free(gone);
	if (forgotten)
		*forgotten += n;
	return 0;
}

static void record_build_id(struct wp_procmap *pm, const struct perf_event_header *rec)
{
	struct wp_build_id b;

	if (wp_build_id_parse(rec, &b) || !b.size)
		return;
	for (size_t i = 1; i < pm->nr_dsos; i++) {
		struct wp_dso *d = pm->dsos[i];

		if (strcmp(d->path, b.filename) || d->build_id_size)
			continue;
		if (b.ino && d->ino && b.ino != d->ino)
			continue;
		d->build_id_size = b.size <= 20 ? b.size : 20;
		memcpy(d->build_id, b.build_id, d->build_id_size);
	}
}

int wp_procmap_record(struct wp_procmap *pm, const struct perf_event_header *rec)
{
	struct wp_process *p;
	struct wp_comm c;

	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		return record_mmap2(pm, rec);
	case PERF_RECORD_COMM:
		if (wp_comm_parse(rec, &c) || !c.exec)
			return 0;
		p = wp_procmap_process(pm, c.pid);
		if (!p)
			return -ENOMEM;
		/* A new program: its old mappings are gone; the exec'ing thread leads. */
		process_clear(pm, p);
		p->in_exec = true;
		p->leader_gone = false;
		return 0;
	case PERF_RECORD_FORK:
		return record_fork(pm, rec);
	case PERF_RECORD_EXIT:
		record_exit(pm, rec);
		return 0;
	case WP_RECORD_BUILD_ID:
		record_build_id(pm, rec);
		return 0;
	}
	return 0;
}

const struct wp_map *wp_process_find_map(const struct wp_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct wp_map *m = &p->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

struct wp_dso *wp_procmap_dso(struct wp_procmap *pm, uint32_t idx)
{
	return idx < pm->nr_dsos ? pm->dsos[idx] : NULL;
}

size_t wp_procmap_nr_dsos(const struct wp_procmap *pm)
{
	return pm->nr_dsos;
}

/* Our own [vdso] image in a memfd, once. */
static int vdso_fd(struct wp_procmap *pm)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	char line[512];
	size_t size = 0;
	FILE *f;

	if (pm->vdso_fd >= 0 || !base)
		return pm->vdso_fd;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &s, &e) == 2 && s == base)
			size = e - s;
	}
	fclose(f);
	if (!size)
		return -1;
	pm->vdso_fd = memfd_create("wallprof-vdso", MFD_CLOEXEC);
	if (pm->vdso_fd >= 0 && write(pm->vdso_fd, (const void *)base, size) != (ssize_t)size) {
		close(pm->vdso_fd);
		pm->vdso_fd = -1;
	}
	return pm->vdso_fd;
}

static void dso_read_loads(struct wp_dso *d)
{
	size_t nphdr;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &nphdr)) {
		for (size_t i = 0; i < nphdr && d->nr_loads < 16; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			d->load_offset[d->nr_loads] = ph.p_offset;
			d->load_filesz[d->nr_loads] = ph.p_filesz;
			d->load_vaddr_minus_offset[d->nr_loads] = ph.p_vaddr - ph.p_offset;
			d->nr_loads++;
		}
	}
	elf_end(elf);
}

static void hex_id(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * n] = '\0';
}

/* Whether the file open at fd is the recorded one: by build id, else inode. */
static bool dso_is_recorded(const struct wp_dso *d, int fd, char got[41])
{
	uint8_t id[20];
	struct stat st;
	int n;

	strcpy(got, "none");
	if (d->build_id_size) {
		n = wp_build_id_read_fd(fd, id, sizeof(id));
		if (n > 0)
			hex_id(id, (size_t)n, got);
		return n == d->build_id_size && !memcmp(id, d->build_id, (size_t)n);
	}
	return !d->ino || (!fstat(fd, &st) && st.st_ino == d->ino &&
			   major(st.st_dev) == d->maj && minor(st.st_dev) == d->min);
}

/*
 * Take fd (closed unless taken) as d's file, opened by its descriptor, when
 * it is the recorded one.
 */
static bool dso_take(struct wp_dso *d, int fd)
{
	char got[41];

	if (!dso_is_recorded(d, fd, got) ||
	    asprintf(&d->open_path, "/proc/self/fd/%d", fd) < 0) {
		d->open_path = NULL;
		close(fd);
		return false;
	}
	d->fd = fd;
	return true;
}

/*
 * The copy record kept of a file mapped in a chroot or another mount
 * namespace (filecache.h), when the recorded path does not hold it.
 */
static bool dso_open_copy(struct wp_dso *d)
{
	int fd;

	if (!d->build_id_size)
		return false;
	fd = wp_filecache_open(d->build_id, d->build_id_size, NULL);
	return fd >= 0 && dso_take(d, fd);
}

/* The file as the process that mapped it saw it, from the recorder's opener. */
static bool dso_open_other(struct wp_procmap *pm, struct wp_dso *d)
{
	int fd;

	if (!pm->opener || (fd = pm->opener(pm->opener_arg, d)) < 0)
		return false;
	return dso_take(d, fd);
}

/*
 * The recorded file by its build id from debuginfod (when DEBUGINFOD_URLS
 * names servers), when neither the recorded path nor a kept copy holds it.
 */
static bool dso_fetch(struct wp_dso *d)
{
	char got[41], *path;
	int fd;

	if (d->kind != WP_DSO_FILE || !d->build_id_size)
		return false;
	fd = wp_debuginfod_find(WP_DEBUGINFOD_EXECUTABLE, d->build_id, d->build_id_size, d->path,
				&path);
	if (fd < 0)
		return false;
	if (!dso_is_recorded(d, fd, got)) {
		close(fd);
		free(path);
		return false;
	}
	d->fd = fd;
	d->open_path = path;
	return true;
}

size_t wp_procmap_file_build_id(const char *path, uint32_t maj, uint32_t min, uint64_t ino,
				uint8_t *id, size_t size)
{
	struct stat st;
	int fd = wp_open_regular(path, &st), n = 0;

	if (fd < 0)
		return 0;
	if (ino && st.st_ino == ino && major(st.st_dev) == maj && minor(st.st_dev) == min)
		n = wp_build_id_read_fd(fd, id, size);
	close(fd);
	return n > 0 ? (size_t)n : 0;
}

bool wp_procmap_dso_open(struct wp_procmap *pm, struct wp_dso *d)
{
	char q[WP_QUOTE_MSG];
	struct stat st;
	int n;

	if (d->opened)
		return d->usable;
	d->opened = true;
	if (d->kind == WP_DSO_KERNEL)
		return false;
	if (d->kind == WP_DSO_VDSO) {
		int fd = pm->same_kernel ? vdso_fd(pm) : -1;

		if (fd < 0)
			return false;
		d->fd = dup(fd);
		if (asprintf(&d->open_path, "/proc/self/fd/%d", d->fd) < 0)
			d->open_path = NULL;
		if (!d->open_path)
			goto unusable;
		goto usable;
	}
	/*
	 * The recorded path first; when it does not hold the file, the
	 * recorder's way to it (as its process saw it), a kept copy, then
	 * debuginfod.
	 */
	n = wp_open_regular(d->path, &st);
	if (wp_fd_exhausted(n) && wp_fd_reclaim())
		n = wp_open_regular(d->path, &st);
	if (wp_fd_exhausted(n)) {
		/* Not missing: a report with more descriptors names its frames. */
		d->starved = true;
		pm->starved++;
		wp_fd_note_starved();
		return false;
	}
	if (n >= 0) {
		char got[41], want[41];

		d->fd = n;
		if (dso_is_recorded(d, d->fd, got)) {
			d->open_path = strdup(d->path);
			if (!d->open_path)
				goto unusable;
			goto usable;
		}
		close(d->fd);
		d->fd = -1;
		if (dso_open_other(pm, d) || dso_open_copy(d) || dso_fetch(d))
			goto usable;
		pm->mismatches++;
		if (d->build_id_size) {
			hex_id(d->build_id, d->build_id_size, want);
			wp_warn("'%s' has changed since it was recorded (build id %s, recorded %s); "
				"its frames are shown as addresses",
				wp_quote(q, sizeof(q), d->path, WP_QUOTE_TEXT), got, want);
		} else {
			wp_warn("'%s' is not the file that was recorded (another inode); "
				"its frames are shown as addresses",
				wp_quote(q, sizeof(q), d->path, WP_QUOTE_TEXT));
		}
		return false;
	}
	if (dso_open_other(pm, d) || dso_open_copy(d) || dso_fetch(d))
		goto usable;
	/* The recording names the path: a FIFO or a device counts as missing. */
	pm->missing++;
	if (n == -EINVAL)
		wp_warn("'%s' is %s, not a regular file; its frames are shown as "
			"addresses", wp_quote(q, sizeof(q), d->path, WP_QUOTE_TEXT),
			wp_file_kind(st.st_mode));
	else
		wp_warn("cannot open '%s' (%s); its frames are shown as addresses",
			wp_quote(q, sizeof(q), d->path, WP_QUOTE_TEXT), strerror(-n));
	return false;
usable:
	dso_read_loads(d);
	if (!d->nr_loads || fstat(d->fd, &st))
		goto unusable;
	d->usable = true;
	d->open_dev = st.st_dev;
	d->open_ino = st.st_ino;
	/* A memfd or a kept copy is opened by its descriptor: it cannot be again. */
	d->pinned = !strncmp(d->open_path, "/proc/self/fd/", 14);
	d->used = ++pm->tick;
	pm->busy = d;
	if (!d->pinned) {
		pm->nr_open++;
		dso_trim(pm);
	}
	return true;
unusable:
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	return false;
}

/* p_vaddr - p_offset of the PT_LOAD whose file range holds a mapping's offset, or 0. */
static uint64_t load_delta(const struct wp_dso *dso, uint64_t pgoff)
{
	for (unsigned int i = 0; dso && i < dso->nr_loads; i++) {
		uint64_t off = dso->load_offset[i] & ~4095ULL;

		if (pgoff >= off && pgoff < dso->load_offset[i] + dso->load_filesz[i])
			return dso->load_vaddr_minus_offset[i];
	}
	return 0;
}

uint64_t wp_map_bias(const struct wp_dso *dso, const struct wp_map *map)
{
	return map->start - map->pgoff - load_delta(dso, map->pgoff);
}

uint64_t wp_dso_elf_addr(const struct wp_dso *dso, uint64_t pgoff, uint64_t offset)
{
	return offset + load_delta(dso, pgoff);
}

void wp_process_place(const struct wp_process *p, uint64_t pc, bool activation,
		      struct wp_place *out)
{
	uint64_t lookup = activation ? pc : pc - 1;
	const struct wp_map *m = p ? wp_process_find_map(p, lookup) : NULL;

	memset(out, 0, sizeof(*out));
	out->activation = activation;
	out->addr = pc;
	if (!m) {
		out->kind = WP_PLACE_UNKNOWN;
	} else if (m->dso == WP_DSO_NONE) {
		out->kind = WP_PLACE_ANON;
		out->where = p->pid;
	} else {
		out->kind = WP_PLACE_FILE;
		out->where = m->dso;
		out->addr = lookup - m->start + m->pgoff;
		out->pgoff = m->pgoff;
	}
}

uint32_t wp_procmap_dso_intern(struct wp_procmap *pm, const char *path, uint32_t maj,
			       uint32_t min, uint64_t ino, const uint8_t *build_id,
			       uint8_t build_id_size)
{
	return dso_lookup(pm, path, maj, min, ino, build_id,
			  build_id_size <= 20 ? build_id_size : 20);
}

uint64_t wp_map_elf_addr(const struct wp_dso *dso, const struct wp_map *map, uint64_t addr)
{
	return addr - wp_map_bias(dso, map);
}

unsigned int wp_procmap_mismatches(const struct wp_procmap *pm)
{
	return pm->mismatches;
}

unsigned int wp_procmap_missing(const struct wp_procmap *pm)
{
	return pm->missing;
}

unsigned int wp_procmap_starved(const struct wp_procmap *pm)
{
	return pm->starved;
}

int wp_procmap_dso_fd(struct wp_procmap *pm, struct wp_dso *d)
{
	struct stat st;
	int fd;

	if (!d->usable)
		return -1;
	d->used = ++pm->tick;
	pm->busy = d;
	if (d->fd >= 0)
		return d->fd;
	fd = wp_open_regular(d->open_path, &st);
	if (wp_fd_exhausted(fd) && wp_fd_reclaim())
		fd = wp_open_regular(d->open_path, &st);
	if (wp_fd_exhausted(fd)) {
		if (!d->starved)
			pm->starved++;
		d->starved = true;
		wp_fd_note_starved();
		return -1;
	}
	if (fd >= 0 && (st.st_dev != d->open_dev || st.st_ino != d->open_ino)) {
		char q[WP_QUOTE_MSG];

		/* Replaced while the report ran: not the file whose loads were read. */
		wp_warn("'%s' was replaced during the report; its frames from now on are shown "
			"as addresses", wp_quote(q, sizeof(q), d->open_path, WP_QUOTE_TEXT));
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		d->usable = false;
		return -1;
	}
	d->fd = fd;
	pm->nr_open++;
	dso_trim(pm);
	return fd;
}

size_t wp_procmap_dso_build_id(struct wp_procmap *pm, struct wp_dso *dso, uint8_t *id,
			       size_t size)
{
	int fd, n;

	if (dso->build_id_size) {
		if (dso->build_id_size > size)
			return 0;
		memcpy(id, dso->build_id, dso->build_id_size);
		return dso->build_id_size;
	}
	if (!dso->file_build_id_read) {
		dso->file_build_id_read = true;
		if (wp_procmap_dso_open(pm, dso) && (fd = wp_procmap_dso_fd(pm, dso)) >= 0 &&
		    (n = wp_build_id_read_fd(fd, dso->file_build_id, sizeof(dso->file_build_id))) > 0)
			dso->file_build_id_size = (uint8_t)n;
	}
	if (!dso->file_build_id_size || dso->file_build_id_size > size)
		return 0;
	memcpy(id, dso->file_build_id, dso->file_build_id_size);
	return dso->file_build_id_size;
}

void wp_procmap_free(struct wp_procmap *pm)
{
	uint64_t pid, found;
	size_t pos = 0;

	if (!pm)
		return;
	wp_fd_reclaim_unregister(procmap_reclaim, pm);
	while (wp_u64map_next(&pm->procs, &pos, &pid, &found))
		process_free(pm, (struct wp_process *)(uintptr_t)found);
	for (size_t i = 0; pm->dsos && i < pm->nr_dsos; i++) {
		struct wp_dso *d = pm->dsos[i];

		if (d->fd >= 0)
			close(d->fd);
		free(d->path);
		free(d->short_name);
		free(d->open_path);
		free(d);
	}
	if (pm->vdso_fd >= 0)
		close(pm->vdso_fd);
	wp_u64map_release(&pm->procs);
	wp_u64map_release(&pm->spaces);
	free(pm->dsos);
	free(pm);
}
