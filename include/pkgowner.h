/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pkgowner.h: which installed Debian package ships a file, from dpkg's
 * database (/var/lib/dpkg/info/PACKAGE.list), so that a report can say
 * which debug package would name a library's frames.
 */
#ifndef WALLPROF_PKGOWNER_H
#define WALLPROF_PKGOWNER_H

#include <stddef.h>

#define WP_PACKAGE_NAME_MAX 128

/*
 * For each of the n paths, the package that ships it (without its
 * ":arch"), or "" when none does or there is no dpkg database.  The
 * /usr-merged and unmerged spellings of a path count as one.  One pass
 * over the database whatever n is.
 */
void wp_package_owners(const char *const *paths, size_t n, char (*owners)[WP_PACKAGE_NAME_MAX]);

#endif
