/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debuginfo.h: separate debug files, looked up without opening anything
 * that is not a regular file.
 *
 * The places searched derive from the path a recording gives for a mapped
 * file, and the file itself names its debug file (.gnu_debuglink) or a
 * shared one (.gnu_debugaltlink): a FIFO there would hang the report and
 * a device would be opened, which libdw's standard lookup does.  This one
 * looks in the places wallprof-report(1) lists and opens candidates with
 * wp_open_regular() only.
 */
#ifndef WALLPROF_DEBUGINFO_H
#define WALLPROF_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "debugimage.h"

/* Where distributions install debug files. */
#define WP_DEBUGINFO_DIR "/usr/lib/debug"

/*
 * The path of the debug file of the file with build id id (2 bytes or
 * more) under WP_DEBUGINFO_DIR/.build-id, in buf (empty when it does not fit).
 */
void wp_debuginfo_build_id_path(const uint8_t *id, size_t len, char *buf, size_t size);

/*
 * A Dwfl_Callbacks.find_debuginfo.  For a module's debug file: by build
 * id (WP_DEBUGINFO_DIR/.build-id/xx/rest.debug), then by its debuglink
 * name (or the file's name plus ".debug") in the file's directory, in a
 * .debug directory there and under WP_DEBUGINFO_DIR, for the path as given
 * and for its real path.  A candidate is taken only when its build id is
 * the module's, or (for a module without one) its CRC is the debuglink's.
 * For a dwz file (called again with the .gnu_debugaltlink name): by the
 * build id that the link gives, then by the name, beside the file and in
 * the .dwz directories; the build id must match.
 *
 * When the module was given a use (wp_debuginfo_set_use), the descriptor
 * is of the file's image for that use (debugimage.h) when it needs one,
 * and a module that is read for its CFI only gets no file that has none.
 *
 * Returns an open descriptor and sets *debuginfo_file_name (malloc'd),
 * or returns -1 and leaves it alone.
 */
int wp_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
		      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		      GElf_Word debuglink_crc, char **debuginfo_file_name);

/*
 * What else names of the file open at fd (path names it, id is its build
 * id) would come from: the size and modification time of the debug file
 * (in [0]) and of the dwz file (in [1]) that the lookup above finds for
 * it, 0 for none.  Names kept from an earlier report are good while these
 * are the same.
 */
void wp_debuginfo_origin(int fd, const char *path, const uint8_t *id, size_t id_len,
			 uint64_t size[2], uint64_t mtime_ns[2]);

/*
 * When the debug file of the file at path with build id id (2 bytes or
 * more) was put where it is (its status change time, CLOCK_REALTIME ns),
 * looked for by the id, then by the file's name plus ".debug" in the
 * places above; 0 when there is none.  Opens no file but the candidates,
 * not the file itself, so that asking costs no warning for a file gone.
 */
uint64_t wp_debuginfo_installed(const char *path, const uint8_t *id, size_t id_len);

/*
 * What mod's debug information will be read for, so that only that is
 * decompressed (kept in the module's userdata, which nothing else sets).
 */
void wp_debuginfo_set_use(Dwfl_Module *mod, enum wp_debug_use use);

#endif
