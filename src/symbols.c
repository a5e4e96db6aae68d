/* SPDX-License-Identifier: GPL-2.0-or-later */
/* symbols.c: function names (with inline frames) for user and kernel addresses. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "buildid.h"
#include "debugimage.h"
#include "debuginfo.h"
#include "fdlimit.h"
#include "frameinfo.h"
#include "jitmap.h"
#include "kallsyms.h"
#include "log.h"
#include "placenames.h"
#include "plt.h"
#include "quote.h"
#include "symbols.h"
#include "symtab.h"
#include "symcache.h"
#include "u64map.h"
#include "util.h"

/*
 * libstdc++'s demangler (C ABI), loaded at the first mangled name: linked
 * in, libstdc++ costs every report most of a millisecond of start-up, and
 * a report of C code never needs it.
 */
typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len, int *status);
static cxa_demangle_fn *cxa_demangle;
static pthread_once_t cxa_demangle_once = PTHREAD_ONCE_INIT;

static void cxa_demangle_load(void)
{
	void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (lib)
		*(void **)&cxa_demangle = dlsym(lib, "__cxa_demangle");
	if (!cxa_demangle)
		wp_debug("C++ names stay mangled: libstdc++'s demangler cannot be loaded");
}

#define MAX_CHAIN 32

struct dso_symbolizer {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool tried;
	uint64_t used;		/* when its session was last used */
	struct wp_u64map cache;	/* ELF address -> offset in chains << 32 | length */
	struct wp_symcache *kept;	/* from and for other reports, or NULL */
	bool kept_tried;
	struct wp_plt *plt;	/* its PLT stubs' names, or NULL */
	struct wp_symtab *symtab;	/* its symbols by address, once asked for */
	bool symtab_tried;
	bool debug_tried;
	uint64_t debug_installed_ns;	/* when its debug file was put there, 0: none */
};

/* A chain being resolved, as the symbol cache keeps it. */
struct resolved {
	struct wp_symcache_frame frames[MAX_CHAIN];
	unsigned int n;		/* 0: unnamed */
};

/* A chain as found in a file, before it is made into tokens. */
struct described {
	struct wp_placename_frame f[MAX_CHAIN];
	char name[MAX_CHAIN][1024];	/* demangled */
	char where[MAX_CHAIN][512];
	unsigned int n;
};

struct wp_symbols {
	struct wp_procmap *pm;
	struct wp_strpool *pool;
	bool lines, same_kernel;
	bool want_all;		/* find the frames' entries and declarations too */
	struct described *described;	/* the chain being found */
	const char *saved_ksyms;	/* borrowed: the recording's KSYMS text */
	char *debuginfo_path;
	Dwfl_Callbacks callbacks;
	struct dso_symbolizer *dsos;
	size_t nr_dsos;			/* allocated, by procmap's dso index */
	uint32_t *chains;		/* of frame tokens, for the caches */
	size_t nr_chains, cap_chains;
	struct wp_kallsyms ksyms;
	uint32_t *ksym_tokens;	/* per symbol, interned on first use; 0 = not yet */
	bool ksyms_loaded;
	struct wp_u64map unnamed;	/* unnamed token -> where (dso index) */
	struct wp_frameinfo *frameinfo;	/* borrowed, or NULL */
	int kept_dir;		/* the symbol cache's directory, or -1 */
	struct wp_jitmap *jit;		/* borrowed: names of JIT code, or NULL */
	/* The mapped files with a debug file by build id (wp_symbols_prefetch). */
	struct wp_symbols_id *with_debug;
	size_t nr_with_debug, cap_with_debug;
	struct wp_u64map jit_tried;	/* pid -> 1: its live perf map was looked for */
	unsigned int jit_live;		/* processes named from a live perf map */
	/*
	 * libdwfl sessions open at once (each holds the file and its debug
	 * file): the least recently used ends beyond max_sessions, keeping
	 * the names found; busy is the one in use, never ended.
	 */
	unsigned int nr_sessions, max_sessions;
	uint64_t tick;
	uint32_t busy;
};

/* End a file's libdwfl session: the names it gave stay in its cache. */
static void session_end(struct wp_symbols *s, struct dso_symbolizer *ds)
{
	dwfl_end(ds->dwfl);
	ds->dwfl = NULL;
	ds->mod = NULL;
	ds->tried = false;
	wp_plt_free(ds->plt);
	ds->plt = NULL;
	wp_symtab_free(ds->symtab);
	ds->symtab = NULL;
	ds->symtab_tried = false;
	s->nr_sessions--;
}

/* The least recently used session that may end, or NULL. */
static struct dso_symbolizer *session_lru(struct wp_symbols *s)
{
	struct dso_symbolizer *best = NULL;

	for (size_t i = 0; i < s->nr_dsos; i++) {
		struct dso_symbolizer *ds = &s->dsos[i];

		if (ds->dwfl && i != s->busy && (!best || ds->used < best->used))
			best = ds;
	}
	return best;
}

/* Another cache needs a descriptor: end every session but the one in use. */
static unsigned int symbols_reclaim(void *arg)
{
	struct wp_symbols *s = arg;
	struct dso_symbolizer *ds;
	unsigned int n = 0;

	while ((ds = session_lru(s))) {
		session_end(s, ds);
		n += 2;
	}
	return n;
}

void wp_symbols_set_frameinfo(struct wp_symbols *s, struct wp_frameinfo *fi)
{
	s->frameinfo = fi;
}

/*
 * Tell the frame info where a new token's code is.  Best effort: without
 * memory for it, a frame is only described by its name.
 */
static void note_frame(struct wp_symbols *s, uint32_t tok, uint32_t key, const struct wp_dso *dso,
		       uint64_t addr, const char *src, int line)
{
	struct wp_dso *d = dso ? wp_procmap_dso(s->pm, key) : NULL;
	uint8_t id[20];
	size_t len;

	if (!s->frameinfo)
		return;
	/* (key is the dso's index: its file's own id is read, and kept, there.) */
	len = d == dso && d ? wp_procmap_dso_build_id(s->pm, d, id, sizeof(id)) : 0;
	wp_frameinfo_note(s->frameinfo, tok, key, dso ? dso->path : "[kernel.kallsyms]",
			  len ? id : NULL, len, addr, src, line > 0 ? (uint32_t)line : 0);
}

int wp_symbols_new(struct wp_procmap *pm, struct wp_strpool *pool, bool lines,
		   bool same_kernel, const char *saved_ksyms, struct wp_symbols **out)
{
	struct wp_symbols *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->described = malloc(sizeof(*s->described));
	if (!s->described) {
		free(s);
		return -ENOMEM;
	}
	s->pm = pm;
	s->pool = pool;
	s->lines = lines;
	s->same_kernel = same_kernel;
	s->saved_ksyms = saved_ksyms;
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = wp_debuginfo_find;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->kept_dir = -1;
	/* Three eighths of the descriptors left, two a session. */
	s->max_sessions = wp_fdlimit_share(8, 8) * 3 / 2;
	s->busy = UINT32_MAX;
	wp_fd_reclaim_register(symbols_reclaim, s);
	*out = s;
	return 0;
}

void wp_symbols_want_all(struct wp_symbols *s)
{
	s->lines = true;
	s->want_all = true;
}

void wp_symbols_use_jitmap(struct wp_symbols *s, struct wp_jitmap *jit)
{
	s->jit = jit;
}

unsigned int wp_symbols_jit_live(const struct wp_symbols *s)
{
	return s->jit_live;
}

/*
 * The name of JIT code at pc in anonymous memory of process pid, from the
 * recording's entries, or else (when it saved none for pid) from the
 * process's perf map if it is still there.
 */
static const char *jit_name(struct wp_symbols *s, uint32_t pid, uint64_t pc)
{
	struct wp_jit_read st;
	uint64_t start;

	if (!s->jit)
		return NULL;
	if (!wp_u64map_get(&s->jit_tried, pid, NULL)) {
		/* Whose the recorded process was is not known: the reader's or root's. */
		uint32_t me = (uint32_t)geteuid();

		wp_u64map_put(&s->jit_tried, pid, 1);
		if (!wp_jitmap_has_pid(s->jit, pid) &&
		    !wp_jitmap_read_perf_map(s->jit, pid, 0, &me, 1, NULL, 0, &st) && st.kept) {
			s->jit_live++;
			wp_debug("JIT names of process %u read from /tmp/perf-%u.map: "
				"the recording has none for it", pid, pid);
		}
	}
	return wp_jitmap_find(s->jit, pid, pc, &start);
}

void wp_symbols_use_cache(struct wp_symbols *s, int dirfd)
{
	if (s->kept_dir >= 0)
		close(s->kept_dir);
	s->kept_dir = dirfd;
}

/* What the dso at idx keeps (zeroed at first), or NULL when out of memory. */
static struct dso_symbolizer *dso_state(struct wp_symbols *s, uint32_t idx)
{
	size_t had = s->nr_dsos;

	if (idx >= had) {
		if (WP_GROW(s->dsos, s->nr_dsos, (size_t)idx + 1))
			return NULL;
		memset(s->dsos + had, 0, (s->nr_dsos - had) * sizeof(*s->dsos));
	}
	return &s->dsos[idx];
}

/* Remember a resolved chain; returns it (or the input on allocation failure). */
static const uint32_t *cache_put(struct wp_symbols *s, uint32_t dso, uint64_t addr,
				 const uint32_t *chain, unsigned int len)
{
	struct dso_symbolizer *ds = dso_state(s, dso);
	uint64_t at = s->nr_chains;

	if (!ds || at + len > UINT32_MAX ||
	    WP_GROW(s->chains, s->cap_chains, s->nr_chains + len) ||
	    wp_u64map_put(&ds->cache, addr, at << 32 | len))
		return chain;
	memcpy(s->chains + at, chain, len * sizeof(*chain));
	s->nr_chains += len;
	return s->chains + at;
}

static uint32_t token(struct wp_symbols *s, const char *name, uint32_t flags)
{
	uint32_t id = wp_strpool_intern(s->pool, name);

	if (id == UINT32_MAX)
		id = wp_strpool_intern(s->pool, "?");
	return WP_FRAME_TOKEN(id, flags);
}

/* A frame without a function name, and where it is. */
static uint32_t unnamed_token(struct wp_symbols *s, const char *text, uint32_t flags,
			      uint32_t where)
{
	uint32_t tok = token(s, text, flags | WP_FRAME_UNNAMED);

	wp_u64map_put(&s->unnamed, tok, where);
	return tok;
}

uint32_t wp_symbols_unnamed_where(const struct wp_symbols *s, uint32_t tok)
{
	uint64_t where;

	return wp_u64map_get(&s->unnamed, tok, &where) ? (uint32_t)where : WP_DSO_NONE;
}

bool wp_symbols_tracing_name(const char *name)
{
	static const char *const prefixes[] = {
		"__traceiter_",		/* a tracepoint's probes, one after the other */
		"__probestub_",
		"__SCT__tp_func_",	/* its static call's trampoline */
		"perf_trace_",		/* perf's probe, perf_trace_run_bpf_submit */
		"perf_tp_event",
		"perf_swevent_",
		"___perf_sw_event",
		"__perf_sw_event",
		"__perf_event_overflow",
		"trace_event_raw_event_",	/* ftrace's probe */
		"trace_event_buffer_",
		"__bpf_trace_",		/* BPF's raw tracepoint probes */
		"bpf_trace_run",
		"trace_call_bpf",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

uint32_t wp_symbols_marker(struct wp_symbols *s, const char *name)
{
	return token(s, name, 0);
}

static Dwfl_Module *dso_module(struct wp_symbols *s, uint32_t idx, struct wp_dso *dso)
{
	struct dso_symbolizer *ds = dso_state(s, idx), *old;
	int fd;

	if (!ds)
		return NULL;
	ds->used = ++s->tick;
	s->busy = idx;
	if (ds->tried)
		return ds->mod;
	ds->tried = true;
	if (!wp_procmap_dso_open(s->pm, dso))
		return NULL;
	/* Room for one more session. */
	while (s->nr_sessions >= s->max_sessions && (old = session_lru(s)))
		session_end(s, old);
	fd = wp_procmap_dso_fd(s->pm, dso);
	fd = fd >= 0 ? wp_fd_dup(fd) : -1;
	if (fd < 0) {
		if (wp_fd_exhausted(-errno))
			dso->starved = true;
		return NULL;
	}
	ds->dwfl = dwfl_begin(&s->callbacks);
	if (!ds->dwfl) {
		close(fd);
		return NULL;
	}
	s->nr_sessions++;
	dwfl_report_begin(ds->dwfl);
	/* At bias 0, module addresses are the file's own ELF addresses. */
	ds->mod = dwfl_report_elf(ds->dwfl, dso->short_name, dso->open_path, fd, 0, true);
	dwfl_report_end(ds->dwfl, NULL, NULL);
	/* Source files are read from the line tables: only when asked for. */
	if (ds->mod) {
		Dwarf_Addr bias;

		wp_debuginfo_set_use(ds->mod, s->lines || s->frameinfo || s->want_all ?
					      WP_DEBUG_LINES : WP_DEBUG_NAMES);
		/* Stubs have no symbols: their names come from the relocations. */
		if (wp_plt_read(dwfl_module_getelf(ds->mod, &bias), &ds->plt))
			wp_debug("no memory for the PLT of '%s'", dso->short_name);
	}
	if (!ds->mod) {
		char q[WP_QUOTE_MSG];

		wp_debug("cannot read symbols of '%s': %s",
			 wp_quote(q, sizeof(q), dso->path, WP_QUOTE_TEXT), dwfl_errmsg(-1));
	}
	return ds->mod;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		name = dwarf_formstring(&attr);
		if (name)
			return name;
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		return dwarf_formstring(&attr);
	return NULL;
}

/* The name to show: C++ and other Itanium-mangled names demangled. */
static void demangled(const char *name, char *buf, size_t size)
{
	char *dem = NULL;
	int status = -1;

	if (name[0] == '_' && name[1] == 'Z') {
		pthread_once(&cxa_demangle_once, cxa_demangle_load);
		if (cxa_demangle)
			dem = cxa_demangle(name, NULL, NULL, &status);
	}
	snprintf(buf, size, "%s", status == 0 && dem ? dem : name);
	free(dem);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "file:line" of the code at addr, for the innermost frame. */
static bool src_line(Dwfl_Module *mod, uint64_t addr, char *buf, size_t size)
{
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	const char *file;
	int lineno = 0;

	if (!line)
		return false;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file)
		return false;
	snprintf(buf, size, "%s:%d", base_name(file), lineno);
	return true;
}

/* "file:line" an inlined DIE was called from: where its caller frame is. */
static bool call_site(Dwarf_Die *cudie, Dwarf_Die *inlined, char *buf, size_t size)
{
	Dwarf_Attribute attr;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	const char *name;
	size_t nfiles;

	if (!dwarf_attr(inlined, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &file))
		return false;
	if (dwarf_attr(inlined, DW_AT_call_line, &attr))
		dwarf_formudata(&attr, &line);
	if (dwarf_getsrcfiles(cudie, &files, &nfiles) || file >= nfiles)
		return false;
	name = dwarf_filesrc(files, file, NULL, NULL);
	if (!name)
		return false;
	snprintf(buf, size, "%s:%llu", base_name(name), (unsigned long long)line);
	return true;
}

/*
 * The source file and first line of the function whose code starts at
 * entry, from its DWARF; an inlined function's caller is named from the
 * symbol table, and gets them here.
 */
static const char *entry_decl(Dwfl_Module *mod, uint64_t entry, int *line)
{
	Dwarf_Die *cudie, *scopes = NULL;
	Dwarf_Addr bias = 0;
	const char *file = NULL;
	int nscopes;

	*line = 0;
	cudie = dwfl_module_addrdie(mod, entry, &bias);
	nscopes = cudie ? dwarf_getscopes(cudie, entry - bias, &scopes) : 0;
	for (int i = 0; i < nscopes; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		file = dwarf_decl_file(&scopes[i]);
		dwarf_decl_line(&scopes[i], line);
		break;
	}
	free(scopes);
	return file;
}

/*
 * Make the token of a named frame of dso idx, note what is known of it,
 * and keep it in r for the symbol cache (r->n counts the frames).
 */
static uint32_t named_frame(struct wp_symbols *s, uint32_t idx, const struct wp_dso *dso,
			    const char *text, uint32_t flags, uint64_t entry, const char *src,
			    int line, struct resolved *r)
{
	uint32_t tok = token(s, text, flags);

	if (r) {
		struct wp_symcache_frame *f = &r->frames[r->n++];

		f->name = wp_strpool_get(s->pool, WP_FRAME_NAME(tok));
		f->flags = flags & WP_FRAME_INLINED ? WP_SYMCACHE_INLINED : 0;
		f->entry = entry;
		f->src = src;
		f->line = line > 0 ? (uint32_t)line : 0;
	}
	note_frame(s, tok, idx, dso, entry, src, line);
	return tok;
}

/* The frame of an address of dso idx that has no name. */
static uint32_t unnamed_frame(struct wp_symbols *s, uint32_t idx, const struct wp_dso *dso,
			      uint64_t addr)
{
	char text[1024];
	uint32_t tok;

	snprintf(text, sizeof(text), "%s+0x%" PRIx64, dso->short_name, addr);
	tok = unnamed_token(s, text, 0, idx);
	note_frame(s, tok, idx, dso, addr, NULL, 0);
	return tok;
}

/*
 * Add a frame to a chain being found: name (demangled unless it is a
 * stub's, which is kept as it is) and where the code is in it (or NULL).
 */
static void add_frame(struct described *d, const char *name, bool mangled, const char *where,
		      uint32_t flags, uint64_t entry, const char *src, int line)
{
	struct wp_placename_frame *f = &d->f[d->n];

	f->name = name;
	if (mangled) {
		demangled(name, d->name[d->n], sizeof(d->name[d->n]));
		f->name = d->name[d->n];
	}
	f->where = NULL;
	if (where) {
		snprintf(d->where[d->n], sizeof(d->where[d->n]), "%s", where);
		f->where = d->where[d->n];
	}
	f->flags = flags;
	f->entry = entry;
	f->src = src;
	f->line = line > 0 ? (uint32_t)line : 0;
	d->n++;
}

/*
 * Find the chain of frames (innermost first) of a file address into d:
 * its length, 0 when the address has no name.  Where the code is comes
 * with lines; entries and declarations for the frame info (or all).
 */
static unsigned int describe_in_file(struct wp_symbols *s, uint32_t idx, struct wp_dso *dso,
				     uint64_t addr, struct described *d);

/*
 * describe_in_file(), and whether an address left unnamed lacked a
 * descriptor on the way (for its file or its debug file): its file's
 * frames are then said to be unnamed for that, not for want of symbols.
 */
static unsigned int describe_user(struct wp_symbols *s, uint32_t idx, struct wp_dso *dso,
				  uint64_t addr, struct described *d)
{
	unsigned int starved = wp_fd_starved();
	unsigned int n = describe_in_file(s, idx, dso, addr, d);

	if (!n && wp_fd_starved() != starved)
		dso->starved = true;
	return n;
}

/*
 * The symbol covering file address addr, with addr's offset in it and
 * its size: from the sorted table (symtab.h), else libdwfl's own search.
 */
static const char *symbol_at(struct wp_symbols *s, uint32_t idx, Dwfl_Module *mod,
			     uint64_t addr, uint64_t *off, uint64_t *size)
{
	struct dso_symbolizer *ds = &s->dsos[idx];
	const char *name;
	uint64_t start;
	GElf_Off o;
	GElf_Sym sym;

	if (!ds->symtab_tried) {
		ds->symtab_tried = true;
		if (wp_symtab_read(mod, &ds->symtab))
			wp_debug("no memory for the symbols of module %s", dwfl_module_info(mod,
				 NULL, NULL, NULL, NULL, NULL, NULL, NULL));
	}
	name = wp_symtab_find(ds->symtab, addr, &start, size);
	if (name) {
		*off = addr - start;
		return name;
	}
	name = dwfl_module_addrinfo(mod, addr, &o, &sym, NULL, NULL, NULL);
	*off = o;
	*size = sym.st_size;
	return name;
}

static unsigned int describe_in_file(struct wp_symbols *s, uint32_t idx, struct wp_dso *dso,
				     uint64_t addr, struct described *d)
{
	char where[512], next_where[512];
	Dwfl_Module *mod = dso_module(s, idx, dso);
	bool info = s->frameinfo || s->want_all;
	Dwarf_Die *cudie, *scopes = NULL;
	bool have_where = false;
	Dwarf_Addr bias = 0;
	uint64_t off, size;
	const char *name;
	int nscopes;

	d->n = 0;
	if (!mod)
		return 0;
	name = wp_plt_name(s->dsos[idx].plt, addr, &off);
	if (name) {
		/* No DWARF or symbol covers a stub, and it has no source line. */
		add_frame(d, name, false, NULL, 0, off, NULL, 0);
		return d->n;
	}
	if (s->lines)
		have_where = src_line(mod, addr, where, sizeof(where));
	cudie = dwfl_module_addrdie(mod, addr, &bias);
	nscopes = cudie ? dwarf_getscopes(cudie, addr - bias, &scopes) : 0;
	for (int i = 0; i < nscopes && d->n < MAX_CHAIN; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Addr entry = 0;
		const char *decl_file = NULL;
		int decl_line = 0;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		name = die_name(&scopes[i]);
		/* The caller's position is this inlined call's call site. */
		bool next = s->lines && tag == DW_TAG_inlined_subroutine &&
			    call_site(cudie, &scopes[i], next_where, sizeof(next_where));
		if (!name) {
			if (tag == DW_TAG_subprogram)
				break;	/* fall back to the symbol table */
			name = "[inlined]";
		}
		if (info) {
			if (dwarf_entrypc(&scopes[i], &entry))
				entry = 0;
			dwarf_decl_line(&scopes[i], &decl_line);
			decl_file = dwarf_decl_file(&scopes[i]);
		}
		add_frame(d, name, true, have_where ? where : NULL,
			  tag == DW_TAG_inlined_subroutine ? WP_PLACENAME_INLINED : 0,
			  entry ? entry + bias : 0, decl_file, decl_line);
		if (tag == DW_TAG_subprogram) {
			free(scopes);
			return d->n;
		}
		have_where = next;
		if (next)
			memcpy(where, next_where, sizeof(where));
	}
	free(scopes);
	/* No DWARF for it: the symbol table, checked against the symbol's size. */
	name = symbol_at(s, idx, mod, addr, &off, &size);
	if (name && (size == 0 || off < size) && d->n < MAX_CHAIN) {
		const char *decl_file = NULL;
		int decl_line = 0;

		if (info)
			decl_file = entry_decl(mod, addr - off, &decl_line);
		add_frame(d, name, true, have_where ? where : NULL, 0, addr - off, decl_file,
			  decl_line);
	}
	return d->n;
}

/*
 * The token of a frame found (or saved) for dso idx, noted, and kept in r
 * for the symbol cache when r is not NULL.
 */
static uint32_t frame_token(struct wp_symbols *s, uint32_t idx, const struct wp_dso *dso,
			    const struct wp_placename_frame *f, struct resolved *r)
{
	const char *shown = f->name;
	char text[1024];
	uint32_t tok;

	if (f->flags & WP_PLACENAME_UNNAMED) {
		tok = unnamed_token(s, f->name, 0, idx);
		note_frame(s, tok, idx, dso, f->entry, NULL, 0);
		return tok;
	}
	if (s->lines && f->where) {
		snprintf(text, sizeof(text), "%s (%s)", f->name, f->where);
		shown = text;
	}
	return named_frame(s, idx, dso, shown,
			   f->flags & WP_PLACENAME_INLINED ? WP_FRAME_INLINED : 0, f->entry,
			   f->src, (int)f->line, r);
}

/*
 * Resolve a file address into its chain of frames (innermost first),
 * kept in r as well (r->n 0 when the address has no name).
 */
static unsigned int resolve_user(struct wp_symbols *s, uint32_t idx, struct wp_dso *dso,
				 uint64_t addr, uint32_t *chain, struct resolved *r)
{
	struct described *d = s->described;

	r->n = 0;
	if (!describe_user(s, idx, dso, addr, d)) {
		chain[0] = unnamed_frame(s, idx, dso, addr);
		return 1;
	}
	for (unsigned int i = 0; i < d->n; i++)
		chain[i] = frame_token(s, idx, dso, &d->f[i], r);
	return d->n;
}

/*
 * The symbol cache of dso idx, opened when first wanted: for a file with
 * a build id that is the recorded one, when the report has a cache.
 */
static struct wp_symcache *kept_of(struct wp_symbols *s, struct dso_symbolizer *ds,
				   struct wp_dso *dso)
{
	struct wp_symcache_origin origin;
	uint8_t id[WP_SYMCACHE_MAX_ID];
	struct stat st;
	size_t id_len;
	int n, fd;

	if (ds->kept_tried)
		return ds->kept;
	ds->kept_tried = true;
	if (s->kept_dir < 0 || dso->kind != WP_DSO_FILE || !dso->usable ||
	    (fd = wp_procmap_dso_fd(s->pm, dso)) < 0 || fstat(fd, &st))
		return NULL;
	if (dso->build_id_size) {
		id_len = dso->build_id_size;
		memcpy(id, dso->build_id, id_len);
	} else {
		n = wp_build_id_read_fd(fd, id, sizeof(id));
		if (n <= 0)
			return NULL;
		id_len = (size_t)n;
	}
	memset(&origin, 0, sizeof(origin));
	origin.size[0] = (uint64_t)st.st_size;
	origin.mtime_ns[0] = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
			     (uint64_t)st.st_mtim.tv_nsec;
	wp_debuginfo_origin(fd, dso->open_path, id, id_len, origin.size + 1,
			    origin.mtime_ns + 1);
	/* What the names hold: source lines, and frames' entries and declarations. */
	wp_symcache_open(s->kept_dir, id, id_len, (s->lines ? 1U : 0U) | (s->frameinfo ? 2U : 0U),
			 &origin, &ds->kept);
	return ds->kept;
}

/*
 * The chain of a file address from the symbol cache, made into tokens the
 * way resolve_user() makes them (so the tokens and the notes come out the
 * same): its length, or 0 when the cache does not have it.
 */
static unsigned int kept_chain(struct wp_symbols *s, struct wp_symcache *kept, uint32_t idx,
			       const struct wp_dso *dso, uint64_t addr, uint32_t *chain)
{
	struct wp_symcache_frame frames[WP_SYMCACHE_MAX_FRAMES];
	unsigned int n;

	if (!kept || !wp_symcache_get(kept, addr, frames, MAX_CHAIN, &n))
		return 0;
	if (!n) {
		chain[0] = unnamed_frame(s, idx, dso, addr);
		return 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		uint32_t tok = token(s, frames[i].name,
				     frames[i].flags & WP_SYMCACHE_INLINED ? WP_FRAME_INLINED : 0);

		note_frame(s, tok, idx, dso, frames[i].entry, frames[i].src, (int)frames[i].line);
		chain[i] = tok;
	}
	return n;
}

/* The mapping of process pid that holds pc, when it has no file. */
static const struct wp_map *anon_map(struct wp_symbols *s, uint32_t pid, uint64_t pc)
{
	const struct wp_process *p = wp_procmap_find(s->pm, pid);
	const struct wp_map *m = p ? wp_process_find_map(p, pc) : NULL;

	return m && m->dso == WP_DSO_NONE ? m : NULL;
}

unsigned int wp_symbols_place(struct wp_symbols *s, const struct wp_place *pl, uint32_t *out,
			      unsigned int max)
{
	const struct wp_map *map;
	uint64_t lookup = pl->addr;
	uint32_t chain[MAX_CHAIN];
	const uint32_t *hit;
	struct dso_symbolizer *ds;
	struct wp_dso *dso = NULL;
	uint64_t cached;
	const char *name;
	unsigned int n;
	char text[64];

	if (!max)
		return 0;
	if (pl->kind == WP_PLACE_KERNEL) {
		out[0] = wp_symbols_kernel(s, pl->addr);
		return 1;
	}
	if (pl->kind == WP_PLACE_FILE)
		dso = wp_procmap_dso(s->pm, pl->where);
	if (pl->kind == WP_PLACE_ANON &&
	    (name = jit_name(s, pl->where, pl->activation ? pl->addr : pl->addr - 1))) {
		out[0] = token(s, name, 0);
		return 1;
	}
	/*
	 * Code of no file and no name (a JIT without a perf map): one frame
	 * per mapping, not per address, so that its stacks add up.
	 */
	if (pl->kind == WP_PLACE_ANON &&
	    (map = anon_map(s, pl->where, pl->activation ? pl->addr : pl->addr - 1))) {
		snprintf(text, sizeof(text), WP_ANON_FRAME_PREFIX "0x%" PRIx64 "]", map->start);
		out[0] = unnamed_token(s, text, 0, WP_DSO_NONE);
		return 1;
	}
	if (!dso) {
		snprintf(text, sizeof(text), "[unknown] 0x%" PRIx64, pl->addr);
		out[0] = unnamed_token(s, text, 0, WP_DSO_NONE);
		return 1;
	}
	if (!dso->opened)
		wp_procmap_dso_open(s->pm, dso);
	if (dso->usable)
		lookup = wp_dso_elf_addr(dso, pl->pgoff, pl->addr);
	ds = dso_state(s, pl->where);
	if (ds && wp_u64map_get(&ds->cache, lookup, &cached)) {
		hit = s->chains + (cached >> 32);
		n = (uint32_t)cached;
	} else {
		struct wp_symcache *kept = ds && dso->usable ? kept_of(s, ds, dso) : NULL;

		n = kept_chain(s, kept, pl->where, dso, lookup, chain);
		if (!n) {
			struct resolved r;

			n = resolve_user(s, pl->where, dso, lookup, chain, &r);
			if (kept)
				wp_symcache_put(kept, lookup, r.frames, r.n);
		}
		hit = cache_put(s, pl->where, lookup, chain, n);
	}
	if (n > max)
		n = max;
	memcpy(out, hit, n * sizeof(*out));
	return n;
}

unsigned int wp_symbols_describe(struct wp_symbols *s, const struct wp_place *pl,
				 struct wp_placename_frame *out, unsigned int max)
{
	struct described *d = s->described;
	struct wp_dso *dso;
	uint64_t lookup;
	unsigned int n;

	if (!max || pl->kind != WP_PLACE_FILE || !(dso = wp_procmap_dso(s->pm, pl->where)) ||
	    !wp_procmap_dso_open(s->pm, dso))
		return 0;
	lookup = wp_dso_elf_addr(dso, pl->pgoff, pl->addr);
	n = describe_user(s, pl->where, dso, lookup, d);
	if (!n) {
		/* Named as unnamed_frame() names it, at the address looked up. */
		snprintf(d->name[0], sizeof(d->name[0]), "%s+0x%" PRIx64, dso->short_name, lookup);
		d->f[0] = (struct wp_placename_frame){ .name = d->name[0], .entry = lookup,
						       .flags = WP_PLACENAME_UNNAMED };
		n = 1;
	}
	if (n > max)
		n = max;
	memcpy(out, d->f, n * sizeof(*out));
	return n;
}

bool wp_symbols_debug_file_since(struct wp_symbols *s, uint32_t idx, uint64_t since_ns)
{
	struct dso_symbolizer *ds = dso_state(s, idx);
	struct wp_dso *dso = wp_procmap_dso(s->pm, idx);

	if (!ds || !dso)
		return false;
	if (!ds->debug_tried) {
		ds->debug_tried = true;
		if (dso->kind == WP_DSO_FILE)
			ds->debug_installed_ns = wp_debuginfo_installed(dso->path, dso->build_id,
									dso->build_id_size);
	}
	return ds->debug_installed_ns && ds->debug_installed_ns >= since_ns;
}

unsigned int wp_symbols_place_saved(struct wp_symbols *s, const struct wp_place *pl,
				    const struct wp_placename_frame *frames, unsigned int n,
				    uint32_t *out, unsigned int max)
{
	const struct wp_dso *dso = NULL;
	uint32_t chain[MAX_CHAIN];

	if (pl->kind == WP_PLACE_FILE)
		dso = wp_procmap_dso(s->pm, pl->where);
	if (!dso || !n || n > MAX_CHAIN)
		return wp_symbols_place(s, pl, out, max);
	/* All of them, as a chain found in the file would be made. */
	for (unsigned int i = 0; i < n; i++)
		chain[i] = frame_token(s, pl->where, dso, &frames[i], NULL);
	if (n > max)
		n = max;
	memcpy(out, chain, n * sizeof(*out));
	return n;
}

unsigned int wp_symbols_user(struct wp_symbols *s, struct wp_process *p, uint64_t pc,
			     bool activation, uint32_t *out, unsigned int max)
{
	struct wp_place pl;

	wp_process_place(p, pc, activation, &pl);
	return wp_symbols_place(s, &pl, out, max);
}

/*
 * The kernel symbols: the copy saved in the recording, else (on the
 * recording's own boot) /proc/kallsyms.
 */
static void load_kallsyms(struct wp_symbols *s)
{
	int err;

	s->ksyms_loaded = true;
	if (s->saved_ksyms) {
		err = wp_kallsyms_parse(&s->ksyms, s->saved_ksyms, strlen(s->saved_ksyms));
	} else if (s->same_kernel) {
		err = wp_kallsyms_load(&s->ksyms);
		if (err == -EPERM)
			wp_kallsyms_warn_hidden("kernel frames are shown as addresses");
	} else {
		return;
	}
	if (!err && s->ksyms.nr)
		s->ksym_tokens = calloc(s->ksyms.nr, sizeof(*s->ksym_tokens));
	if (!s->ksym_tokens)
		wp_kallsyms_release(&s->ksyms);
}

uint32_t wp_symbols_kernel(struct wp_symbols *s, uint64_t addr)
{
	char text[64];
	long i;

	if (!s->ksyms_loaded)
		load_kallsyms(s);
	i = s->ksym_tokens ? wp_kallsyms_find(&s->ksyms, addr) : -1;
	if (i >= 0) {
		if (!s->ksym_tokens[i]) {
			s->ksym_tokens[i] = token(s, wp_kallsyms_name(&s->ksyms, (size_t)i),
						  WP_FRAME_KERNEL);
			note_frame(s, s->ksym_tokens[i], WP_SYMBOLS_KERNEL, NULL,
				   s->ksyms.syms[i].addr, NULL, 0);
		}
		return s->ksym_tokens[i];
	}
	snprintf(text, sizeof(text), "[kernel] 0x%" PRIx64, addr);
	return unnamed_token(s, text, WP_FRAME_KERNEL, WP_SYMBOLS_KERNEL);
}

void wp_symbols_drop_file(struct wp_symbols *s, uint32_t dso)
{
	struct dso_symbolizer *ds;

	if (dso >= s->nr_dsos)
		return;
	ds = &s->dsos[dso];
	if (ds->kept && wp_symcache_save(ds->kept))
		wp_debug("cannot save the symbol cache");
	if (ds->dwfl)
		session_end(s, ds);
	wp_u64map_release(&ds->cache);
	wp_symcache_free(ds->kept);
	wp_plt_free(ds->plt);
	memset(ds, 0, sizeof(*ds));
}

/* Is dso one of the files with a debug file (found by its build id or inode)? */
static bool has_debug_file(const struct wp_symbols *s, const struct wp_dso *dso)
{
	for (size_t i = 0; i < s->nr_with_debug; i++) {
		const struct wp_symbols_id *a = &s->with_debug[i];

		if (dso->build_id_size ? a->len == dso->build_id_size &&
					 !memcmp(a->id, dso->build_id, a->len) :
					 a->ino && a->ino == dso->ino && a->maj == dso->maj &&
					 a->min == dso->min)
			return true;
	}
	return false;
}

/*
 * A file with a debug file to decompress and none of whose names were
 * wanted gets an empty cache file (when it has no sound one): the next
 * report of it does not decompress that debug file ahead for nothing.
 */
static void keep_unwanted(struct wp_symbols *s)
{
	size_t n = wp_procmap_nr_dsos(s->pm);

	for (uint32_t idx = 0; idx < n && s->nr_with_debug; idx++) {
		struct wp_dso *dso = wp_procmap_dso(s->pm, idx);
		struct dso_symbolizer *ds;

		if (!dso || dso->kind != WP_DSO_FILE || !has_debug_file(s, dso))
			continue;
		ds = dso_state(s, idx);
		if (!ds || ds->kept_tried || !wp_procmap_dso_open(s->pm, dso))
			continue;
		kept_of(s, ds, dso);
	}
}

void wp_symbols_save_cache(struct wp_symbols *s)
{
	keep_unwanted(s);
	for (size_t i = 0; i < s->nr_dsos; i++) {
		int err = s->dsos[i].kept ? wp_symcache_save(s->dsos[i].kept) : 0;

		/* A cache that cannot be written only costs the next report time. */
		if (err)
			wp_debug("cannot save the symbol cache: %s", strerror(-err));
	}
}

/* Distinct files with a debug file noted, at most (the rest are not kept empty). */
#define WITH_DEBUG_MAX 256

static void note_debug_file(struct wp_symbols *s, const struct wp_symbols_id *id)
{
	for (size_t i = 0; i < s->nr_with_debug; i++)
		if (s->with_debug[i].len == id->len &&
		    !memcmp(s->with_debug[i].id, id->id, id->len))
			return;
	if (s->nr_with_debug < WITH_DEBUG_MAX &&
	    !WP_GROW(s->with_debug, s->cap_with_debug, s->nr_with_debug + 1))
		s->with_debug[s->nr_with_debug++] = *id;
}

/* A debug file to decompress ahead. */
struct ahead_file {
	char path[PATH_MAX];
	off_t size;
};

static int larger_first(const void *a, const void *b)
{
	const struct ahead_file *x = a, *y = b;

	return (x->size < y->size) - (x->size > y->size);
}

void wp_symbols_prefetch(struct wp_symbols *s, const struct wp_symbols_id *ids, size_t n)
{
	unsigned int kind = (s->lines ? 1U : 0U) | (s->frameinfo ? 2U : 0U);
	enum wp_debug_use use = s->lines || s->frameinfo || s->want_all ? WP_DEBUG_LINES :
									   WP_DEBUG_NAMES;
	struct ahead_file *files = calloc(n ? n : 1, sizeof(*files));
	size_t nr = 0;

	if (!files)
		return;
	for (size_t i = 0; i < n; i++) {
		struct ahead_file *f = &files[nr];
		struct stat st;

		if (ids[i].len < 2 || ids[i].len > WP_SYMCACHE_MAX_ID)
			continue;
		wp_debuginfo_build_id_path(ids[i].id, ids[i].len, f->path, sizeof(f->path));
		if (!f->path[0] || stat(f->path, &st))
			continue;
		note_debug_file(s, &ids[i]);
		if (wp_symcache_present(s->kept_dir, ids[i].id, ids[i].len, kind))
			continue;
		f->size = st.st_size;
		nr++;
	}
	qsort(files, nr, sizeof(*files), larger_first);
	for (size_t i = 0; i < nr; i++) {
		if (!wp_debug_image_prefetch(files[i].path, use))
			continue;
		wp_debug("decompressing '%s' ahead", files[i].path);
	}
	free(files);
}

bool wp_symbols_loading(const struct wp_symbols *s)
{
	(void)s;	/* the images started ahead are the process's */
	return wp_debug_image_prefetch_busy();
}

void wp_symbols_free(struct wp_symbols *s)
{
	if (!s)
		return;
	wp_fd_reclaim_unregister(symbols_reclaim, s);
	wp_debug_image_prefetch_end();
	free(s->with_debug);
	for (size_t i = 0; i < s->nr_dsos; i++) {
		if (s->dsos[i].dwfl)
			dwfl_end(s->dsos[i].dwfl);
		wp_u64map_release(&s->dsos[i].cache);
		wp_symcache_free(s->dsos[i].kept);
		wp_plt_free(s->dsos[i].plt);
		wp_symtab_free(s->dsos[i].symtab);
	}
	if (s->kept_dir >= 0)
		close(s->kept_dir);
	free(s->dsos);
	free(s->described);
	free(s->chains);
	wp_kallsyms_release(&s->ksyms);
	free(s->ksym_tokens);
	wp_u64map_release(&s->unnamed);
	wp_u64map_release(&s->jit_tried);
	free(s);
}
