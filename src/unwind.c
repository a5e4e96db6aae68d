/* SPDX-License-Identifier: GPL-2.0-or-later */
/* unwind.c: DWARF CFI unwinding of perf samples with a Dwfl per process. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include "datafile.h"
#include "debuginfo.h"
#include "fdlimit.h"
#include "log.h"
#include "unwind.h"

/*
 * An address space's Dwfl maps and parses the files of its modules: some
 * hundred kilobytes each.  One serves every process whose code mappings
 * are alike (a server's forked workers; procmap.h).  Recordings of
 * thousands of short processes would keep them all, so only the
 * LIVE_SPACES used last are kept; another is rebuilt when one of its
 * processes is sampled again (the unwound stacks cache spares most of
 * that).
 */
#define LIVE_SPACES 64
/* Room a sample's other fields take at most beside its stack copy. */
#define UNWIND_RECORD_SLACK 8192

struct space_unwind {
	Dwfl *dwfl;
	unsigned int nr_modules;	/* reported, each holding a descriptor or two */
	bool attached;
	struct wp_addrspace *space;
	struct space_unwind *prev, *next;	/* used last first */
};

struct wp_unwinder {
	struct wp_procmap *pm;
	const struct wp_arch *arch;
	Elf *self_elf;		/* tells libdwfl the architecture */
	int self_fd;
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	struct space_unwind *live, *live_tail;	/* used last first */
	unsigned int nr_live;
	/*
	 * Descriptors the live address spaces' sessions hold, counting two a
	 * module (its file and its debug file), and the most they may.
	 */
	unsigned int fds, max_fds;
	/* The sample being unwound. */
	const struct wp_sample_format *fmt;
	const struct wp_sample *cur;
	struct wp_process *proc;
	struct wp_addrspace *space;	/* proc's */
	struct wp_ustack *out;
	uint64_t sp;
	uint64_t last_sp;
	bool out_of_stack;
	bool unreadable;	/* out of a copy the kernel cut short */
	uint64_t deepest_read;	/* highest address read (or attempted) */
};

/* Register bit (perf's numbering) of sample s, which holds the registers of fmt's mask. */
static bool sample_reg(const struct wp_sample_format *fmt, const struct wp_sample *s, int bit,
		       uint64_t *val)
{
	uint64_t mask = fmt->regs_mask;

	if (!(mask & (1ULL << bit)) || !s->regs)
		return false;
	*val = s->regs[__builtin_popcountll(mask & ((1ULL << bit) - 1))];
	return true;
}

static bool perf_reg(const struct wp_unwinder *u, int bit, uint64_t *val)
{
	return sample_reg(u->fmt, u->cur, bit, val);
}

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct wp_unwinder *u = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct wp_unwinder *u = dwfl_arg;
	const struct wp_sample *s = u->cur;

	(void)dwfl;
	if (addr + 8 > u->deepest_read)
		u->deepest_read = addr + 8;
	if (addr >= u->sp && addr + 8 >= addr && addr + 8 <= u->sp + s->stack_dyn_size) {
		memcpy(result, s->stack + (addr - u->sp), 8);
		if (u->out->nr_reads < WP_UCACHE_MAX_READS)
			u->out->read_off[u->out->nr_reads] = (uint32_t)(addr - u->sp);
		u->out->nr_reads++;
		return true;
	}
	/* Above the copy: the stack went on further than we copied. */
	if (addr >= u->sp + s->stack_dyn_size && addr - u->sp < (1ULL << 24)) {
		u->out_of_stack = true;
		/*
		 * A copy shorter than asked for ended at a page the kernel
		 * could not read without faulting (one being faulted in, as
		 * the sample interrupted that fault): no larger copy helps.
		 * The kernel also shortens a copy that would overflow the
		 * record's 16-bit size, which only a request near the most
		 * it copies meets.
		 */
		if (s->stack_dyn_size < u->fmt->stack_request &&
		    u->fmt->stack_request + UNWIND_RECORD_SLACK <= WP_STACK_COPY_MAX)
			u->unreadable = true;
	}
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct wp_unwinder *u = thread_arg;
	const struct wp_arch *a = u->arch;
	Dwarf_Word regs[WP_ARCH_MAX_DWARF_REGS];
	uint64_t v;

	for (unsigned int i = 0; i < a->nr_dwarf_regs; i++) {
		if (!perf_reg(u, a->dwarf_to_perf[i], &v))
			return false;
		regs[i] = v;
	}
	if (!dwfl_thread_state_registers(thread, 0, a->nr_dwarf_regs, regs))
		return false;
	if (!perf_reg(u, a->perf_ip, &v))
		return false;
	dwfl_thread_state_register_pc(thread, v);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void live_unlink(struct wp_unwinder *u, struct space_unwind *su)
{
	if (su->prev)
		su->prev->next = su->next;
	else
		u->live = su->next;
	if (su->next)
		su->next->prev = su->prev;
	else
		u->live_tail = su->prev;
	su->prev = su->next = NULL;
}

static void live_push(struct wp_unwinder *u, struct space_unwind *su)
{
	su->prev = NULL;
	su->next = u->live;
	if (u->live)
		u->live->prev = su;
	else
		u->live_tail = su;
	u->live = su;
}

static void release_space(struct wp_addrspace *sp, void *arg)
{
	struct wp_unwinder *u = arg;
	struct space_unwind *su = sp->unwind_state;

	if (su) {
		live_unlink(u, su);
		u->nr_live--;
		u->fds -= 2 * su->nr_modules;
		dwfl_end(su->dwfl);
		free(su);
	}
	sp->unwind_state = NULL;
	/* The space may be let go next (its last process gone): hold no pointer to it. */
	if (u->space == sp)
		u->space = NULL;
}

/* The least recently used live address space but the one in use, or NULL. */
static struct space_unwind *space_lru(const struct wp_unwinder *u)
{
	struct space_unwind *su = u->live_tail;

	/* Compared, never followed: a space without a session goes unannounced. */
	if (su && su->space == u->space)
		su = su->prev;
	return su;
}

/* Another cache needs a descriptor: every session but the one in use goes. */
static unsigned int unwind_reclaim(void *arg)
{
	struct wp_unwinder *u = arg;
	struct space_unwind *su;
	unsigned int n = 0;

	while ((su = space_lru(u))) {
		n += 2 * su->nr_modules;
		release_space(su->space, u);
	}
	return n;
}

int wp_unwinder_new(struct wp_procmap *pm, const struct wp_arch *arch,
		    struct wp_unwinder **out)
{
	struct wp_unwinder *u = calloc(1, sizeof(*u));

	*out = NULL;
	if (!u)
		return -ENOMEM;
	u->pm = pm;
	u->arch = arch;
	/*
	 * Modules are reported with their descriptors and debug files found
	 * by wp_debuginfo_find, so libdw's own debuginfod lookups never run:
	 * debuginfod is asked through debuginfod.h, only with DEBUGINFOD_URLS.
	 */
	u->callbacks.find_elf = dwfl_build_id_find_elf;
	u->callbacks.find_debuginfo = wp_debuginfo_find;
	u->callbacks.debuginfo_path = &u->debuginfo_path;
	elf_version(EV_CURRENT);
	u->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (u->self_fd >= 0)
		u->self_elf = elf_begin(u->self_fd, ELF_C_READ_MMAP, NULL);
	/* Three eighths of the descriptors left (procmap.c and symbols.c share the rest). */
	u->max_fds = wp_fdlimit_share(8, 8) * 3;
	wp_procmap_set_release(pm, release_space, u);
	wp_fd_reclaim_register(unwind_reclaim, u);
	*out = u;
	return 0;
}

static struct space_unwind *space_state(struct wp_unwinder *u, struct wp_addrspace *sp)
{
	struct space_unwind *su = sp->unwind_state;

	if (su) {
		live_unlink(u, su);
		live_push(u, su);
		return su;
	}
	if (u->nr_live >= LIVE_SPACES)
		release_space(u->live_tail->space, u);
	su = calloc(1, sizeof(*su));
	if (!su)
		return NULL;
	su->dwfl = dwfl_begin(&u->callbacks);
	if (!su->dwfl) {
		free(su);
		return NULL;
	}
	su->space = sp;
	sp->unwind_state = su;
	live_push(u, su);
	u->nr_live++;
	return su;
}

/* Make sure the ELF file mapped at addr is a module of the process' Dwfl. */
static void report_module_at(struct wp_unwinder *u, struct space_unwind *su, uint64_t addr)
{
	const struct wp_map *m;
	struct space_unwind *old;
	struct wp_dso *dso;
	Dwfl_Module *mod;
	char name[256];
	uint64_t bias;
	int fd;

	if (dwfl_addrmodule(su->dwfl, addr))
		return;
	m = wp_process_find_map(u->proc, addr);
	if (!m || m->dso == WP_DSO_NONE)
		return;
	dso = wp_procmap_dso(u->pm, m->dso);
	if (!dso || !wp_procmap_dso_open(u->pm, dso))
		return;
	bias = wp_map_bias(dso, m);
	/* Room for its descriptors: the least recently unwound address spaces go. */
	while (u->fds + 2 > u->max_fds && (old = space_lru(u)))
		release_space(old->space, u);
	fd = wp_procmap_dso_fd(u->pm, dso);
	fd = fd >= 0 ? wp_fd_dup(fd) : -1;
	if (fd < 0) {
		if (wp_fd_exhausted(-errno))
			dso->starved = true;
		return;
	}
	snprintf(name, sizeof(name), "%s@%llx", dso->short_name, (unsigned long long)bias);
	dwfl_report_begin_add(su->dwfl);
	/* libdwfl owns fd from here on, even when reporting fails. */
	mod = dwfl_report_elf(su->dwfl, name, dso->open_path, fd, bias, true);
	dwfl_report_end(su->dwfl, NULL, NULL);
	if (!mod) {
		wp_debug("cannot use '%s' for unwinding: %s", dso->path, dwfl_errmsg(-1));
		return;
	}
	su->nr_modules++;
	u->fds += 2;
	/*
	 * Where .eh_frame has no answer (a PC it does not cover, a frame
	 * beyond the stack copy), libdwfl tries the debug file's .debug_frame:
	 * only that is worth decompressing for it.
	 */
	wp_debuginfo_set_use(mod, WP_DEBUG_CFI);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct wp_unwinder *u = arg;
	struct space_unwind *su = u->space->unwind_state;
	struct wp_ustack *out = u->out;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool isact = true;

	const struct wp_map *m;
	struct wp_dso *dso = NULL;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	/*
	 * A caller outside any code mapping is a guess gone wrong (libdwfl
	 * falls back to frame pointers where it has no CFI): end the stack.
	 */
	m = wp_process_find_map(u->proc, out->n == 0 ? pc : pc - 1);
	if (!m && out->n)
		return DWARF_CB_ABORT;
	if (m && m->dso != WP_DSO_NONE)
		dso = wp_procmap_dso(u->pm, m->dso);
	/* The caller's module must exist before libdwfl steps into it. */
	report_module_at(u, su, out->n == 0 ? pc : pc - 1);
	if (!dwfl_frame_pc(state, &pc, &isact))
		isact = out->n == 0;
	/*
	 * The stack only grows towards callers: a caller below its callee is
	 * a loop, and so is one at the same PC and SP (no progress).  A
	 * direct recursion repeats the PC at rising SPs and goes on.
	 */
	if (dwfl_frame_reg(state, (unsigned int)u->arch->dwarf_sp, &sp) == 0) {
		if (out->n && (sp < u->last_sp ||
			       (sp == u->last_sp && pc == out->pc[out->n - 1])))
			return DWARF_CB_ABORT;
		u->last_sp = sp;
	}
	out->pc[out->n] = pc;
	out->activation[out->n] = isact;
	out->n++;
	if (out->n == WP_MAX_FRAMES) {
		out->too_deep = true;
		return DWARF_CB_ABORT;
	}
	/*
	 * A file that is missing or not the recorded one has no trustworthy
	 * CFI: keep its frame, but do not guess its callers.  (Anonymous code,
	 * a JIT's, may still be walked by frame pointers.)
	 */
	if (dso && dso->opened && !dso->usable)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

bool wp_unwind_user_ip(const struct wp_unwinder *u, const struct wp_sample_format *fmt,
		       const struct wp_sample *s, uint64_t *ip)
{
	return s->regs_abi == PERF_SAMPLE_REGS_ABI_64 && sample_reg(fmt, s, u->arch->perf_ip, ip);
}

void wp_unwind_sample(struct wp_unwinder *u, const struct wp_sample_format *fmt,
		      const struct wp_sample *s, struct wp_ustack *out)
{
	struct space_unwind *su;
	uint64_t ip;

	memset(out, 0, offsetof(struct wp_ustack, n));
	out->n = 0;
	out->truncated = false;
	out->unreadable = false;
	out->too_deep = false;
	out->failed = true;
	out->needed = 0;
	out->nr_reads = 0;
	u->fmt = fmt;
	u->cur = s;
	u->out = out;
	if (s->regs_abi != PERF_SAMPLE_REGS_ABI_64 || !s->regs)
		return;		/* a kernel thread, or a task past its exit */
	if (!perf_reg(u, u->arch->perf_sp, &u->sp) || !perf_reg(u, u->arch->perf_ip, &ip))
		return;
	u->proc = wp_procmap_find(u->pm, s->pid);
	if (!u->proc)
		return;
	u->space = wp_procmap_addrspace(u->pm, u->proc);
	if (!u->space)
		return;
	su = space_state(u, u->space);
	if (!su)
		return;
	report_module_at(u, su, ip);
	/*
	 * The pid is libdwfl's alone: the thread callbacks serve the sample
	 * being unwound, whichever of the space's processes it is of.
	 */
	if (!su->attached) {
		if (!dwfl_attach_state(su->dwfl, u->self_elf, (pid_t)s->pid, &thread_callbacks, u)) {
			wp_debug("cannot attach unwinder for process %u: %s", s->pid, dwfl_errmsg(-1));
			return;
		}
		su->attached = true;
	}
	u->out_of_stack = false;
	u->unreadable = false;
	u->deepest_read = 0;
	u->last_sp = 0;
	dwfl_errno();	/* clear the sticky error */
	dwfl_getthread_frames(su->dwfl, (pid_t)s->tid, frame_cb, u);
	if (out->n)
		out->failed = false;
	if (u->out_of_stack) {
		out->truncated = true;
		out->unreadable = u->unreadable;
		out->needed = u->deepest_read > u->sp ? u->deepest_read - u->sp : 0;
	}
}

void wp_unwinder_free(struct wp_unwinder *u)
{
	if (!u)
		return;
	wp_fd_reclaim_unregister(unwind_reclaim, u);
	/* The process map outlives us: leave it no state and no callback. */
	while (u->live)
		release_space(u->live->space, u);
	wp_procmap_set_release(u->pm, NULL, NULL);
	if (u->self_elf)
		elf_end(u->self_elf);
	if (u->self_fd >= 0)
		close(u->self_fd);
	free(u);
}
