/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pkgowner.c: the package of a file, from dpkg's file lists. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pkgowner.h"

#define DPKG_INFO "/var/lib/dpkg/info"

/* Since the /usr merge, /lib/x is /usr/lib/x; packages list either. */
static const char *const merged[] = { "/lib/", "/lib64/", "/bin/", "/sbin/" };

/* Whether a line of a .list file names path, in either spelling. */
static bool same_file(const char *line, const char *path)
{
	if (!strcmp(line, path))
		return true;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++) {
		size_t len = strlen(merged[i]);

		if (!strncmp(path, "/usr", 4) && !strncmp(path + 4, merged[i], len) &&
		    !strcmp(line, path + 4))
			return true;
		if (!strncmp(line, "/usr", 4) && !strncmp(line + 4, merged[i], len) &&
		    !strcmp(line + 4, path))
			return true;
	}
	return false;
}

void wp_package_owners(const char *const *paths, size_t n, char (*owners)[WP_PACKAGE_NAME_MAX])
{
	size_t left = n;
	struct dirent *de;
	DIR *d;

	for (size_t i = 0; i < n; i++)
		owners[i][0] = '\0';
	d = n ? opendir(DPKG_INFO) : NULL;
	if (!d)
		return;
	while (left && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char file[512], line[4096];
		FILE *f;

		if (len < 6 || strcmp(de->d_name + len - 5, ".list"))
			continue;
		snprintf(file, sizeof(file), DPKG_INFO "/%s", de->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		while (left && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			for (size_t i = 0; i < n; i++) {
				if (owners[i][0] || !same_file(line, paths[i]))
					continue;
				/* "liblzma5:amd64.list" -> "liblzma5" ("python3.11.list" too) */
				snprintf(owners[i], WP_PACKAGE_NAME_MAX, "%.*s",
					 (int)strcspn(de->d_name, ":"), de->d_name);
				owners[i][strcspn(owners[i], ":")] = '\0';
				if (strlen(owners[i]) > 5 &&
				    !strcmp(owners[i] + strlen(owners[i]) - 5, ".list"))
					owners[i][strlen(owners[i]) - 5] = '\0';
				left--;
			}
		}
		fclose(f);
	}
	closedir(d);
}
