/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debugimage.h: a debug file as libdw should read it for one use.
 *
 * libdw (0.188) inflates every compressed DWARF section of a file as soon
 * as it opens it, with zlib: for libc's debug file that is 10 MB, most of
 * a small report's time, though naming addresses needs only .debug_info
 * and the sections it refers to, and unwinding needs only .debug_frame.
 * An image is an anonymous in-memory copy of the file in which the DWARF
 * sections the use needs are decompressed here (zlib's with libdeflate,
 * about twice as fast, zstd's with libzstd), the other DWARF sections are
 * left out (made SHT_NOBITS, which libdw skips), and everything else
 * (headers, symbol tables, notes) is copied as it is.  libdwfl opens the
 * image's descriptor as the debug file and reads the same DWARF it would
 * have read, but only the parts the use needs.
 *
 * Only 64-bit ELF files in the host's byte order get an image; a file
 * with no DWARF compressed needs none (libdw maps it and reads only what
 * it uses).  The descriptor returned is the caller's; images started
 * ahead of time (wp_debug_image_prefetch) are owned here until taken.
 */
#ifndef WALLPROF_DEBUGIMAGE_H
#define WALLPROF_DEBUGIMAGE_H

#include <stdbool.h>

enum wp_debug_use {
	WP_DEBUG_NAMES,		/* function names and inline chains */
	WP_DEBUG_LINES,		/* and source files and lines */
	WP_DEBUG_CFI,		/* call frame information (.debug_frame) only */
};

/* Does a use need the section of this name (".debug_*", ".zdebug_*", ".gnu_debugaltlink")? */
int wp_debug_use_needs(enum wp_debug_use use, const char *section);

/*
 * The image of the ELF file open at fd (not closed) for use: a new
 * descriptor (O_CLOEXEC) in *out.  Returns 0; -ENODATA when the file
 * needs no image (no DWARF section is compressed); -ENOENT when it
 * has none of the sections the use needs, so it is of no use; -ENOEXEC
 * when it is not an ELF file this can rewrite (it is then best read as it
 * is); -EBADMSG for a damaged section; -ENOMEM or -errno.
 */
int wp_debug_image(int fd, enum wp_debug_use use, int *out);

/*
 * Start building the image of the file at path for use on a thread of
 * its own, so that a report decompresses the debug files it will want
 * while it reads the recording: wp_debug_image() then takes it when asked
 * for the same file (device and inode) and use.  Up to
 * WP_DEBUG_PREFETCH_MAX files, built no more at once than the machine
 * has CPUs less one (at least one), the others waiting their turn: on two
 * CPUs, decompressing a second file beside the first slowed it, and
 * reports of recordings that never need the second (ld.so's, attaching to
 * a running process) by 10%; and a file asked for later (libc's, mapped
 * after ld.so's) must not be refused because an earlier one came first.
 * A file that cannot be opened is let be.
 * true when it started.
 */
#define WP_DEBUG_PREFETCH_MAX 4
bool wp_debug_image_prefetch(const char *path, enum wp_debug_use use);

/*
 * Whether an image started ahead is still being built: taking it now
 * would wait.
 */
bool wp_debug_image_prefetch_busy(void);

/* Wait for the images started and not taken, and drop them. */
void wp_debug_image_prefetch_end(void);

#endif
