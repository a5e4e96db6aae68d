/* SPDX-License-Identifier: GPL-2.0-or-later */
/* debugimage.c: a debug file with the DWARF one use needs decompressed, the rest left out. */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "debugimage.h"
#include "util.h"

/*
 * Decompressed sections are bounded: a hostile file must not make the
 * report allocate without end.  libc's largest is 6 MB.
 */
#define MAX_SECTION (1ULL << 30)
#define MAX_IMAGE (2ULL << 30)
/* glibc's elf.h names it only from 2.37 (the gABI's value). */
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* No sane file aligns a section to more than a page; more is damage. */
#define MAX_ALIGN 4096

/* Sections each use reads, by their plain names. */
static const char *const names_sections[] = {
	".debug_info", ".debug_abbrev", ".debug_str", ".debug_str_offsets",
	".debug_line_str", ".debug_addr", ".debug_ranges", ".debug_rnglists",
	".debug_aranges", ".debug_types", ".debug_cu_index", ".debug_tu_index",
	".debug_sup",
};

int wp_debug_use_needs(enum wp_debug_use use, const char *section)
{
	char plain[64];
	size_t len;

	/* ".zdebug_x" (GNU compression) is ".debug_x"; ".debug_x.dwo" too. */
	if (!strncmp(section, ".zdebug_", 8))
		snprintf(plain, sizeof(plain), ".%s", section + 2);
	else
		snprintf(plain, sizeof(plain), "%s", section);
	len = strlen(plain);
	if (len > 4 && !strcmp(plain + len - 4, ".dwo"))
		plain[len - 4] = '\0';
	if (use == WP_DEBUG_CFI)
		return !strcmp(plain, ".debug_frame");
	if (!strcmp(plain, ".gnu_debugaltlink"))
		return 1;
	if (use == WP_DEBUG_LINES && !strcmp(plain, ".debug_line"))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(names_sections); i++)
		if (!strcmp(plain, names_sections[i]))
			return 1;
	return 0;
}

/*
 * A section that only DWARF readers look at: the DWARF sections, and the
 * link to a shared dwz file, which only names and lines need.
 */
static bool is_dwarf(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8) ||
	       !strcmp(name, ".gnu_debugaltlink");
}

/* What becomes of one section in the image. */
enum fate {
	COPY,		/* its bytes as they are */
	INFLATE,	/* decompressed (SHF_COMPRESSED, zlib or zstd) */
	LEAVE_OUT,	/* SHT_NOBITS: no bytes */
};

struct plan {
	Elf64_Shdr *shdr;	/* the image's headers, from the file's */
	enum fate *fate;
	size_t nr;
	uint32_t *ch_type;	/* for INFLATE: the compression */
	size_t size;		/* of the whole image */
	bool compressed;	/* a DWARF section is compressed: libdw would inflate it */
	bool needed;		/* something the use needs is there */
};

static void plan_release(struct plan *p)
{
	free(p->shdr);
	free(p->fate);
	free(p->ch_type);
}

/* Where the next piece of align bytes goes; false when the image is too large. */
static bool place(size_t *at, uint64_t size, uint64_t align, uint64_t *off)
{
	if (!align)
		align = 1;
	if (align > MAX_ALIGN || (align & (align - 1)))
		return false;
	*off = ALIGN_UP((uint64_t)*at, align);
	if (size > MAX_IMAGE || *off > MAX_IMAGE - size)
		return false;
	*at = (size_t)(*off + size);
	return true;
}

/* Decide every section's fate and the image's layout. */
static int make_plan(Elf *elf, const uint8_t *file, size_t file_size, enum wp_debug_use use,
		     size_t phnum, struct plan *p)
{
	size_t shnum, shstrndx, at;
	uint64_t off;

	if (elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx) || !shnum)
		return -ENOEXEC;
	p->nr = shnum;
	p->shdr = calloc(shnum, sizeof(*p->shdr));
	p->fate = calloc(shnum, sizeof(*p->fate));
	p->ch_type = calloc(shnum, sizeof(*p->ch_type));
	if (!p->shdr || !p->fate || !p->ch_type)
		return -ENOMEM;
	at = sizeof(Elf64_Ehdr) + phnum * sizeof(Elf64_Phdr);
	for (size_t i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;
		const char *name;

		if (!sh)
			return -EBADMSG;
		p->shdr[i] = *sh;
		sh = &p->shdr[i];
		if (i == 0 || sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL) {
			p->fate[i] = LEAVE_OUT;
			continue;
		}
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (!name)
			return -EBADMSG;
		if (sh->sh_offset > file_size || sh->sh_size > file_size - sh->sh_offset)
			return -EBADMSG;
		if (is_dwarf(name) && !wp_debug_use_needs(use, name)) {
			/* libdw would inflate it all the same: worth an image. */
			if ((sh->sh_flags & SHF_COMPRESSED) || !strncmp(name, ".zdebug_", 8))
				p->compressed = true;
			p->fate[i] = LEAVE_OUT;
			sh->sh_type = SHT_NOBITS;
			sh->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			continue;
		}
		if (strcmp(name, ".gnu_debugaltlink") && is_dwarf(name))
			p->needed = true;
		if (is_dwarf(name) && (sh->sh_flags & SHF_COMPRESSED)) {
			Elf64_Chdr ch;

			if (sh->sh_size < sizeof(ch))
				return -EBADMSG;
			memcpy(&ch, file + sh->sh_offset, sizeof(ch));
			if (ch.ch_size > MAX_SECTION)
				return -EBADMSG;
			if (ch.ch_type == ELFCOMPRESS_ZLIB || ch.ch_type == ELFCOMPRESS_ZSTD) {
				p->fate[i] = INFLATE;
				p->ch_type[i] = ch.ch_type;
				p->compressed = true;
				sh->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
				sh->sh_size = ch.ch_size;
				sh->sh_addralign = ch.ch_addralign;
				if (!place(&at, sh->sh_size, sh->sh_addralign, &off))
					return -EBADMSG;
				sh->sh_offset = off;
				continue;
			}
			/* A compression of another kind: libdw's to refuse. */
		} else if (!strncmp(name, ".zdebug_", 8)) {
			/* libdw decompresses these itself, as before. */
			p->compressed = true;
		}
		p->fate[i] = COPY;
		if (!place(&at, sh->sh_size, sh->sh_addralign, &off))
			return -EBADMSG;
		sh->sh_offset = off;
	}
	if (!place(&at, shnum * sizeof(Elf64_Shdr), 8, &off))
		return -EBADMSG;
	p->size = at;
	return 0;
}

/*
 * The decompressors of one thread.  A helper's are made by the thread
 * that starts it: a thread's first malloc makes it an arena of its own,
 * mapped under the address space's lock, which held up the helper by 2
 * ms before it had inflated a byte.
 */
struct inflaters {
	struct libdeflate_decompressor *zlib;
	ZSTD_DCtx *zstd;
};

/* Make the decompressor of type, when missing: 0 or -ENOMEM. */
static int inflaters_make(struct inflaters *inf, uint32_t type)
{
	if (type == ELFCOMPRESS_ZLIB && !inf->zlib)
		inf->zlib = libdeflate_alloc_decompressor();
	else if (type == ELFCOMPRESS_ZSTD && !inf->zstd)
		inf->zstd = ZSTD_createDCtx();
	return (type == ELFCOMPRESS_ZLIB ? (void *)inf->zlib : (void *)inf->zstd) ? 0 : -ENOMEM;
}

static void inflaters_release(struct inflaters *inf)
{
	if (inf->zlib)
		libdeflate_free_decompressor(inf->zlib);
	ZSTD_freeDCtx(inf->zstd);
}

static int inflate_section(struct inflaters *inf, uint32_t type, const uint8_t *in,
			   size_t in_size, uint8_t *out, size_t out_size)
{
	size_t n = 0;

	if (inflaters_make(inf, type))
		return -ENOMEM;
	if (type == ELFCOMPRESS_ZLIB)
		return libdeflate_zlib_decompress(inf->zlib, in, in_size, out, out_size, &n) ==
			       LIBDEFLATE_SUCCESS && n == out_size ? 0 : -EBADMSG;
	n = ZSTD_decompressDCtx(inf->zstd, out, out_size, in, in_size);
	return !ZSTD_isError(n) && n == out_size ? 0 : -EBADMSG;
}

/* A section to decompress, on a thread of its own. */
struct job {
	struct inflaters inf;	/* made for it: the thread allocates nothing */
	uint32_t type;
	const uint8_t *in;
	size_t in_size;
	uint8_t *out;
	size_t out_size;
	int err;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	j->err = inflate_section(&j->inf, j->type, j->in, j->in_size, j->out, j->out_size);
	return NULL;
}

/*
 * A section worth a thread of its own, decompressed while this thread
 * does the others (libc's .debug_info is 6 MB of its 8).
 */
#define BIG_SECTION ((uint64_t)1 << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/*
 * Populating holds the address space's lock for reading: a piece at a
 * time, so that the other threads' mmap and munmap wait for a piece only.
 */
#define POPULATE_PIECE ((uintptr_t)64 << 10)

/* Make the pages of [at, at + size) of the image writable now. */
static void populate(uint8_t *at, size_t size)
{
	uintptr_t start = (uintptr_t)at & ~(uintptr_t)4095, end = (uintptr_t)at + size;

	for (uintptr_t p = start; p < end; p += POPULATE_PIECE) {
		uintptr_t len = end - p < POPULATE_PIECE ? end - p : POPULATE_PIECE;

		if (madvise((void *)p, len, MADV_POPULATE_WRITE))
			return;
	}
}

/* Write the image that p describes into img. */
static int fill(const struct plan *p, const Elf64_Ehdr *ehdr, Elf *elf, size_t phnum,
		const uint8_t *file, uint8_t *img)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Phdr *ph = elf64_getphdr(elf);
	size_t big = 0;
	struct inflaters inf = { 0 };
	struct job job = { 0 };
	pthread_t helper;
	bool helped = false;
	int err = 0;

	*eh = *ehdr;
	eh->e_phoff = phnum ? sizeof(Elf64_Ehdr) : 0;
	eh->e_phentsize = phnum ? sizeof(Elf64_Phdr) : eh->e_phentsize;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shoff = p->size - p->nr * sizeof(Elf64_Shdr);
	if (phnum) {
		if (!ph)
			return -EBADMSG;
		memcpy(img + eh->e_phoff, ph, phnum * sizeof(*ph));
	}
	for (size_t i = 1; i < p->nr; i++)
		if (p->fate[i] == INFLATE && p->shdr[i].sh_size > p->shdr[big].sh_size)
			big = i;
	if (big && p->shdr[big].sh_size >= BIG_SECTION) {
		const Elf64_Shdr *orig = elf64_getshdr(elf_getscn(elf, big));

		job = (struct job){ { 0 }, p->ch_type[big],
				    file + orig->sh_offset + sizeof(Elf64_Chdr),
				    orig->sh_size - sizeof(Elf64_Chdr), img + p->shdr[big].sh_offset,
				    p->shdr[big].sh_size, 0 };
		helped = !inflaters_make(&job.inf, job.type) &&
			 !pthread_create(&helper, NULL, run_job, &job);
		/*
		 * Its pages made here, ahead of the helper's writes: a fault
		 * per page costs the helper a third of its time otherwise.
		 * Advice only: an older kernel's refusal changes nothing.
		 */
		if (helped)
			populate(job.out, job.out_size);
	}
	for (size_t i = 0; i < p->nr && !err; i++) {
		const Elf64_Shdr *sh = &p->shdr[i];
		Elf64_Shdr *orig = elf64_getshdr(elf_getscn(elf, i));

		if (p->fate[i] == COPY) {
			memcpy(img + sh->sh_offset, file + orig->sh_offset, sh->sh_size);
		} else if (p->fate[i] == INFLATE && !(helped && i == big)) {
			err = inflate_section(&inf, p->ch_type[i],
					      file + orig->sh_offset + sizeof(Elf64_Chdr),
					      orig->sh_size - sizeof(Elf64_Chdr), img + sh->sh_offset,
					      sh->sh_size);
		}
	}
	if (helped) {
		pthread_join(helper, NULL);
		if (!err)
			err = job.err;
	}
	inflaters_release(&inf);
	inflaters_release(&job.inf);
	if (!err)
		memcpy(img + eh->e_shoff, p->shdr, p->nr * sizeof(Elf64_Shdr));
	return err;
}

static int build_image(int fd, enum wp_debug_use use, int *out)
{
	struct plan p = { 0 };
	const uint8_t *file;
	Elf64_Ehdr *ehdr;
	uint8_t *img = MAP_FAILED;
	size_t file_size, phnum;
	int err, mfd = -1;
	Elf *elf;

	*out = -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	ehdr = elf64_getehdr(elf);
	file = (const uint8_t *)elf_rawfile(elf, &file_size);
	if (!ehdr || !file || elf_kind(elf) != ELF_K_ELF ||
	    ehdr->e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
				       ELFDATA2LSB : ELFDATA2MSB) ||
	    elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto out;
	}
	err = make_plan(elf, file, file_size, use, phnum, &p);
	if (err)
		goto out;
	if (!p.needed) {
		err = -ENOENT;
		goto out;
	}
	if (!p.compressed) {
		err = -ENODATA;
		goto out;
	}
	mfd = memfd_create("wallprof-debug", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)p.size)) {
		err = -errno;
		goto out;
	}
	img = mmap(NULL, p.size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (img == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	err = fill(&p, ehdr, elf, phnum, file, img);
	if (!err) {
		*out = mfd;
		mfd = -1;
	}
out:
	if (img != MAP_FAILED)
		munmap(img, p.size);
	if (mfd >= 0)
		close(mfd);
	plan_release(&p);
	elf_end(elf);
	return err;
}

/*
 * Images started before they are asked for (wp_debug_image_prefetch):
 * owned here until wp_debug_image() takes one or the end drops them.
 */
struct prefetch {
	dev_t dev;
	ino_t ino;
	enum wp_debug_use use;
	int fd;		/* the file, opened by wp_debug_image_prefetch */
	int img;	/* the image built, or -1 */
	int err;	/* build_image()'s return */
	pthread_t thread;
	bool taken;
};

static struct {
	pthread_mutex_t lock;
	struct prefetch slot[WP_DEBUG_PREFETCH_MAX];
	unsigned int nr;
} prefetched = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Prefetches started and not yet done (waiting their turn, or building). */
static unsigned int prefetches_running;

/* Prefetches building at once (prefetch_slots), and their turns. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t done;
	unsigned int building;
	bool ending;	/* wp_debug_image_prefetch_end: those still waiting build nothing */
} turns = { .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };

static unsigned int prefetch_slots(void);

static void *prefetch_main(void *arg)
{
	struct prefetch *p = arg;

	pthread_mutex_lock(&turns.lock);
	while (turns.building >= prefetch_slots() && !turns.ending)
		pthread_cond_wait(&turns.done, &turns.lock);
	if (turns.ending) {
		pthread_mutex_unlock(&turns.lock);
		p->err = -ECANCELED;
		__atomic_sub_fetch(&prefetches_running, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	turns.building++;
	pthread_mutex_unlock(&turns.lock);
	p->err = build_image(p->fd, p->use, &p->img);
	pthread_mutex_lock(&turns.lock);
	turns.building--;
	pthread_cond_signal(&turns.done);
	pthread_mutex_unlock(&turns.lock);
	__atomic_sub_fetch(&prefetches_running, 1, __ATOMIC_RELEASE);
	return NULL;
}

bool wp_debug_image_prefetch_busy(void)
{
	return __atomic_load_n(&prefetches_running, __ATOMIC_ACQUIRE) > 0;
}

/* How many files may be decompressed at once: CPUs less one, 1 to the most. */
static unsigned int prefetch_slots(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus <= 2)
		return 1;
	return cpus - 1 < WP_DEBUG_PREFETCH_MAX ? (unsigned int)(cpus - 1) : WP_DEBUG_PREFETCH_MAX;
}

bool wp_debug_image_prefetch(const char *path, enum wp_debug_use use)
{
	struct prefetch *p;
	bool started = false;
	struct stat st;
	int fd;

	pthread_mutex_lock(&prefetched.lock);
	if (prefetched.nr >= WP_DEBUG_PREFETCH_MAX)
		goto out;
	fd = wp_open_regular(path, &st);
	if (fd < 0)
		goto out;
	for (unsigned int i = 0; i < prefetched.nr; i++) {
		p = &prefetched.slot[i];
		if (p->dev == st.st_dev && p->ino == st.st_ino && p->use == use) {
			close(fd);	/* started already */
			goto out;
		}
	}
	p = &prefetched.slot[prefetched.nr];
	*p = (struct prefetch){ .dev = st.st_dev, .ino = st.st_ino, .use = use, .fd = fd,
				.img = -1 };
	__atomic_add_fetch(&prefetches_running, 1, __ATOMIC_RELAXED);
	if (pthread_create(&p->thread, NULL, prefetch_main, p)) {
		__atomic_sub_fetch(&prefetches_running, 1, __ATOMIC_RELAXED);
		close(fd);
	} else {
		prefetched.nr++;
		started = true;
	}
out:
	pthread_mutex_unlock(&prefetched.lock);
	return started;
}

/* The image of the file at fd for use, when one was started: true, with its result. */
static bool prefetched_take(int fd, enum wp_debug_use use, int *out, int *err)
{
	struct prefetch *p = NULL;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	pthread_mutex_lock(&prefetched.lock);
	for (unsigned int i = 0; i < prefetched.nr && !p; i++) {
		struct prefetch *q = &prefetched.slot[i];

		if (!q->taken && q->dev == st.st_dev && q->ino == st.st_ino && q->use == use)
			p = q;
	}
	if (p)
		p->taken = true;
	pthread_mutex_unlock(&prefetched.lock);
	if (!p)
		return false;
	pthread_join(p->thread, NULL);
	close(p->fd);
	if (p->err == -ECANCELED)
		return false;	/* never built: the caller builds it */
	*err = p->err;
	*out = p->err ? -1 : p->img;
	return true;
}

int wp_debug_image(int fd, enum wp_debug_use use, int *out)
{
	int err;

	if (prefetched_take(fd, use, out, &err))
		return err;
	return build_image(fd, use, out);
}

void wp_debug_image_prefetch_end(void)
{
	pthread_mutex_lock(&turns.lock);
	turns.ending = true;
	pthread_cond_broadcast(&turns.done);
	pthread_mutex_unlock(&turns.lock);
	pthread_mutex_lock(&prefetched.lock);
	for (unsigned int i = 0; i < prefetched.nr; i++) {
		struct prefetch *p = &prefetched.slot[i];

		if (p->taken)
			continue;
		pthread_join(p->thread, NULL);
		close(p->fd);
		if (!p->err)
			close(p->img);
	}
	prefetched.nr = 0;
	pthread_mutex_lock(&turns.lock);
	turns.ending = false;
	pthread_mutex_unlock(&turns.lock);
	pthread_mutex_unlock(&prefetched.lock);
}
