/* SPDX-License-Identifier: GPL-2.0-or-later */
/* debuginfod.c: elfutils' debuginfod client, loaded and asked only when DEBUGINFOD_URLS is set. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfod.h"
#include "log.h"
#include "quote.h"

/* libdebuginfod's interface (elfutils/debuginfod.h), called through dlsym. */
struct debuginfod_client;
typedef int (*progress_fn)(struct debuginfod_client *c, long done, long total);
typedef int (*find_fn)(struct debuginfod_client *c, const unsigned char *id, int len,
		       char **path);

static struct {
	bool tried, off;
	void *lib;
	struct debuginfod_client *client;
	find_fn find[2];	/* by enum wp_debuginfod_kind */
	void (*end)(struct debuginfod_client *c);
	/* The request under way, for its one line. */
	const char *what;
	enum wp_debuginfod_kind kind;
	bool said;
} dfd;

/* Called while the client downloads (not for what its cache has): said once a request. */
static int on_progress(struct debuginfod_client *c, long done, long total)
{
	char q[WP_QUOTE_MSG];
	const char *timeout = getenv("DEBUGINFOD_TIMEOUT");

	(void)c;
	(void)done;
	(void)total;
	if (!dfd.said) {
		dfd.said = true;
		wp_info("fetching the %s of '%s' from debuginfod (DEBUGINFOD_TIMEOUT %s s)...",
			dfd.kind == WP_DEBUGINFOD_DEBUGINFO ? "debug file" : "file",
			wp_quote(q, sizeof(q), dfd.what, WP_QUOTE_TEXT),
			timeout && *timeout ? timeout : "90");
	}
	return 0;
}

static void end_client(void)
{
	if (dfd.client)
		dfd.end(dfd.client);
	dfd.client = NULL;
}

/* The client, made on first use: false when debuginfod is off. */
static bool client(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debuginfod_client *(*begin)(void);
	void (*set_progress)(struct debuginfod_client *, progress_fn);

	if (dfd.tried)
		return !dfd.off;
	dfd.tried = true;
	dfd.off = true;
	if (!urls || !*urls)
		return false;
	dfd.lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!dfd.lib) {
		wp_warn("DEBUGINFOD_URLS is set, but elfutils' debuginfod client "
			"(libdebuginfod.so.1) cannot be loaded: %s", dlerror());
		return false;
	}
	*(void **)&begin = dlsym(dfd.lib, "debuginfod_begin");
	*(void **)&set_progress = dlsym(dfd.lib, "debuginfod_set_progressfn");
	*(void **)&dfd.end = dlsym(dfd.lib, "debuginfod_end");
	*(void **)&dfd.find[WP_DEBUGINFOD_DEBUGINFO] = dlsym(dfd.lib, "debuginfod_find_debuginfo");
	*(void **)&dfd.find[WP_DEBUGINFOD_EXECUTABLE] = dlsym(dfd.lib, "debuginfod_find_executable");
	if (!begin || !set_progress || !dfd.end || !dfd.find[0] || !dfd.find[1])
		return false;
	dfd.client = begin();
	if (!dfd.client)
		return false;
	set_progress(dfd.client, on_progress);
	atexit(end_client);
	dfd.off = false;
	return true;
}

int wp_debuginfod_find(enum wp_debuginfod_kind kind, const uint8_t *id, size_t len,
		       const char *what, char **path)
{
	int fd;

	*path = NULL;
	if (!len || len > 64 || !client())
		return -ENOSYS;
	dfd.what = what;
	dfd.kind = kind;
	dfd.said = false;
	fd = dfd.find[kind](dfd.client, id, (int)len, path);
	if (fd >= 0)
		return fd;
	free(*path);
	*path = NULL;
	if (fd != -ENOENT) {
		/* Not "not found": the servers are not there, or failed; do not wait again. */
		wp_warn("debuginfod (DEBUGINFOD_URLS) did not answer (%s); no more files are asked "
			"of it in this run", strerror(-fd));
		dfd.off = true;
		end_client();
	}
	return fd;
}
