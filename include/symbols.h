/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * symbols.h: names for code addresses.
 *
 * User addresses are resolved per mapped file with a separate symbolizer
 * Dwfl (the module at bias 0, so lookups are by ELF address), shared by
 * every process that maps the file, through .symtab/.dynsym and DWARF
 * (separate debug info found by build id or .gnu_debuglink), and PLT stubs
 * by the relocations of the slots they jump through (plt.h).  An inlined
 * call becomes its own frame.  Kernel addresses are named from
 * the symbols saved in the recording, or /proc/kallsyms.  Results are
 * cached per (file, address), and with a symbol cache also from one report
 * to the next (by the file's build id).  A frame is a
 * token: the interned name's id shifted left by 3, or'ed with WP_FRAME_*.
 */
#ifndef WALLPROF_SYMBOLS_H
#define WALLPROF_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "placenames.h"
#include "procmap.h"
#include "strpool.h"

#define WP_FRAME_INLINED 1U
#define WP_FRAME_KERNEL 2U
#define WP_FRAME_UNNAMED 4U	/* no function name: file+offset or an address */
#define WP_FRAME_NAME(tok) ((tok) >> 3)

/*
 * The name of unnamed code in a mapping of no file (a JIT's without a perf
 * map) starts so, then the mapping's start address and "]": every
 * address of the mapping is that one frame.
 */
#define WP_ANON_FRAME_PREFIX "[anonymous "
#define WP_FRAME_TOKEN(id, flags) (((id) << 3) | (flags))

struct wp_symbols;


/*
 * lines: add " (file:line)" to each frame.  saved_ksyms: the recording's
 * own kernel symbols (its KSYMS text, borrowed for the symbolizer's life),
 * or NULL; without them, same_kernel says whether this kernel's
 * /proc/kallsyms describes the recording.
 */
int wp_symbols_new(struct wp_procmap *pm, struct wp_strpool *pool, bool lines,
		   bool same_kernel, const char *saved_ksyms, struct wp_symbols **out);

/*
 * Append the frames for a user address of process p (innermost first: an
 * address inside inlined code yields several).  activation is false for
 * return addresses, which are looked up one byte earlier.  Returns the
 * number of tokens written (at most max).
 */
unsigned int wp_symbols_user(struct wp_symbols *s, struct wp_process *p, uint64_t pc,
			     bool activation, uint32_t *out, unsigned int max);

/*
 * The frames of a place (procmap.h), as wp_symbols_user() gives them for
 * the address it was made from: at most max tokens.  Code of no file
 * that no perf map names is one frame per mapping (WP_ANON_FRAME_PREFIX).
 */
unsigned int wp_symbols_place(struct wp_symbols *s, const struct wp_place *pl, uint32_t *out,
			      unsigned int max);

/*
 * The frames of a file's place described for saving (placenames.h), as
 * wp_symbols_place() would find them with everything there is to know of
 * each: where the code is (as with lines) and, as with frame info, the
 * function's entry and declaration, when s wants all of it
 * (wp_symbols_want_all()).  At most max; 0 for a place in no file, or in
 * a file that cannot be read (then nothing is known).  The strings are
 * borrowed until the next call.
 */
unsigned int wp_symbols_describe(struct wp_symbols *s, const struct wp_place *pl,
				 struct wp_placename_frame *out, unsigned int max);

/*
 * Let go of what naming the addresses of file dso loaded (its debug
 * information, above all), its symbol cache saved first: when it is
 * needed again, it is loaded again.
 */
void wp_symbols_drop_file(struct wp_symbols *s, uint32_t dso);

/* Make wp_symbols_describe() find where, entries and declarations. */
void wp_symbols_want_all(struct wp_symbols *s);

/*
 * The frames of a place from the n frames saved for it (described where
 * it was recorded), as wp_symbols_place() would give them, without
 * reading any file: at most max tokens.  With nothing saved it names the
 * place as wp_symbols_place() does.
 */
unsigned int wp_symbols_place_saved(struct wp_symbols *s, const struct wp_place *pl,
				    const struct wp_placename_frame *frames, unsigned int n,
				    uint32_t *out, unsigned int max);

/*
 * Whether file dso (procmap.h's index) has a separate debug file that was
 * put there at since_ns (CLOCK_REALTIME) or later (debuginfo.h, by its
 * recorded build id), found without opening the file itself: names saved
 * in a recording made before it was installed are worse than what it
 * gives.  Looked for once per file.
 */
bool wp_symbols_debug_file_since(struct wp_symbols *s, uint32_t dso, uint64_t since_ns);

/* The frame for a kernel address (one token). */
uint32_t wp_symbols_kernel(struct wp_symbols *s, uint64_t addr);

/*
 * Whether a kernel function of this name is the tracing machinery that
 * runs between a tracepoint's call site and perf's probe: the
 * tracepoint's iterator over its probes (called instead of the one probe
 * once a second tracer adds its own), the probes of perf, ftrace and BPF,
 * and perf's software and tracepoint event paths.
 */
bool wp_symbols_tracing_name(const char *name);

/* A pseudo frame such as "[truncated]" (one token). */
uint32_t wp_symbols_marker(struct wp_symbols *s, const char *name);

/*
 * Where an unnamed frame (WP_FRAME_UNNAMED) is: the dso index of its file,
 * WP_DSO_NONE for memory of no known file, WP_SYMBOLS_KERNEL for the
 * kernel.
 */
#define WP_SYMBOLS_KERNEL (UINT32_MAX - 1)
uint32_t wp_symbols_unnamed_where(const struct wp_symbols *s, uint32_t token);

/*
 * Note every new frame token's file, address and source line in fi
 * (borrowed; it must outlive s), for formats that describe frames beyond
 * their names.
 */
struct wp_frameinfo;
void wp_symbols_set_frameinfo(struct wp_symbols *s, struct wp_frameinfo *fi);

/*
 * Keep names of user addresses from one report to the next in the symbol
 * cache (symcache.h) in the directory dirfd, which s then owns.
 */
void wp_symbols_use_cache(struct wp_symbols *s, int dirfd);

/*
 * Name code in anonymous memory from jit (borrowed; it must outlive s):
 * the recording's JITMAP entries.  For a process of which it has none,
 * its perf map (/tmp/perf-PID.map) is read into jit if it is still there.
 */
struct wp_jitmap;
void wp_symbols_use_jitmap(struct wp_symbols *s, struct wp_jitmap *jit);

/* Processes whose JIT code was named from a live perf map, not the recording. */
unsigned int wp_symbols_jit_live(const struct wp_symbols *s);

/* Write what this report added to the symbol cache (silently, as it can). */
void wp_symbols_save_cache(struct wp_symbols *s);

/*
 * A build id, as a recording gives it, or as the file gives it when the
 * recording has its device and inode instead (then not 0).
 */
struct wp_symbols_id {
	uint8_t id[24];
	size_t len;
	uint32_t maj, min;
	uint64_t ino;
};

/*
 * Files with these build ids were mapped: start decompressing their debug
 * files (found by the ids) for the names they may be asked for, unless
 * the symbol cache has them, the largest first, since it takes longest
 * (debugimage.h, wp_debug_image_prefetch).
 */
void wp_symbols_prefetch(struct wp_symbols *s, const struct wp_symbols_id *ids, size_t n);

/*
 * Whether debug files started by wp_symbols_prefetch() are still being
 * decompressed: naming a frame of one of them now would wait for it.
 */
bool wp_symbols_loading(const struct wp_symbols *s);

void wp_symbols_free(struct wp_symbols *s);

#endif
