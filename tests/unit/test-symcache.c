/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-symcache.c: the symbol cache's files: round trips, the directory's
 * rules, damaged and hostile files (every bit flipped, every length cut,
 * payloads with a valid checksum and bad bounds), symbolic links, another
 * owner's files, and reports saving and reading one file at the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>

#include "symcache.h"
#include "tap.h"
#include "util.h"

static const uint8_t id[20] = { 0x93, 0xac, 0x61, 0xec, 0x5a, 0x8e, 0xb1, 0x39, 0x6f, 0xbd,
				0x35, 0x0e, 0x31, 0x69, 0xa5, 0x58, 0x52, 0x8a, 0x40, 0x01 };
static const struct wp_symcache_origin origin = { { 1000, 2000, 0 }, { 11, 22, 0 } };
static char dir[256], file[320];
static int dirfd = -1;

/* The chain that every test puts at addr: 0..3 frames, some inlined, some with a source. */
static unsigned int chain_of(uint64_t addr, struct wp_symcache_frame *f, char names[][64])
{
	unsigned int n = (unsigned int)(addr % 4);

	for (unsigned int i = 0; i < n; i++) {
		snprintf(names[i], 64, "fn_%llx_%u", (unsigned long long)addr, i);
		f[i].name = names[i];
		f[i].flags = i + 1 < n ? WP_SYMCACHE_INLINED : 0;
		f[i].line = (uint32_t)(addr + i);
		f[i].entry = addr - i;
		f[i].src = i % 2 ? "file.c" : NULL;
	}
	return n;
}

/* Does the cache hold addr's chain, exactly? */
static bool holds(const struct wp_symcache *c, uint64_t addr)
{
	struct wp_symcache_frame want[4], got[WP_SYMCACHE_MAX_FRAMES];
	char names[4][64];
	unsigned int n = chain_of(addr, want, names), m;

	if (!wp_symcache_get(c, addr, got, WP_SYMCACHE_MAX_FRAMES, &m) || m != n)
		return false;
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(got[i].name, want[i].name) || got[i].flags != want[i].flags ||
		    got[i].line != want[i].line || got[i].entry != want[i].entry ||
		    !got[i].src != !want[i].src || (got[i].src && strcmp(got[i].src, want[i].src)))
			return false;
	return true;
}

static int put(struct wp_symcache *c, uint64_t addr)
{
	struct wp_symcache_frame f[4];
	char names[4][64];

	return wp_symcache_put(c, addr, f, chain_of(addr, f, names));
}

static struct wp_symcache *open_cache(unsigned int kind, const struct wp_symcache_origin *o)
{
	struct wp_symcache *c = NULL;

	if (wp_symcache_open(dirfd, id, sizeof(id), kind, o, &c))
		return NULL;
	return c;
}

/* How many of the addresses [from, to) the cache file holds now (-1: none could be opened). */
static int count_held(uint64_t from, uint64_t to)
{
	struct wp_symcache *c = open_cache(0, &origin);
	int n = 0;

	if (!c)
		return -1;
	for (uint64_t a = from; a < to; a++)
		n += holds(c, a);
	wp_symcache_free(c);
	return n;
}

static size_t read_file(const char *path, uint8_t **out)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	size_t n = 0;

	*out = NULL;
	if (fd >= 0 && !fstat(fd, &st)) {
		*out = malloc((size_t)st.st_size + 1);
		if (*out && !wp_read_exact(fd, *out, (size_t)st.st_size))
			n = (size_t)st.st_size;
	}
	if (fd >= 0)
		close(fd);
	return n;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0) {
		if (wp_write_all(fd, p, n))
			perror("write");
		close(fd);
	}
}

static void test_dir(void)
{
	char path[300];
	struct stat st;
	int fd;

	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("WALLPROF_NO_CACHE");
	dirfd = wp_symcache_dir_open();
	ok(dirfd >= 0, "the cache directory is made under XDG_CACHE_HOME");
	snprintf(path, sizeof(path), "%s/wallprof", dir);
	ok(!stat(path, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	   "as wallprof/, mode 0700");
	setenv("WALLPROF_NO_CACHE", "1", 1);
	is_int(wp_symcache_dir_open(), -ECANCELED, "WALLPROF_NO_CACHE=1 turns it off");
	setenv("WALLPROF_NO_CACHE", "", 1);
	fd = wp_symcache_dir_open();
	ok(fd >= 0, "an empty WALLPROF_NO_CACHE does not");
	if (fd >= 0)
		close(fd);
	setenv("XDG_CACHE_HOME", "relative/path", 1);
	unsetenv("HOME");
	is_int(wp_symcache_dir_open(), -ENOENT, "a relative XDG_CACHE_HOME and no HOME: no cache");
	setenv("HOME", dir, 1);
	fd = wp_symcache_dir_open();
	ok(fd >= 0, "a relative XDG_CACHE_HOME is ignored for HOME/.cache");
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/.cache/wallprof", dir);
	ok(!stat(path, &st) && S_ISDIR(st.st_mode), "which is made");

	/* Others may write it: not used.  A link in its place: not followed. */
	snprintf(path, sizeof(path), "%s/other", dir);
	mkdir(path, 0700);
	setenv("XDG_CACHE_HOME", path, 1);
	snprintf(path, sizeof(path), "%s/other/wallprof", dir);
	mkdir(path, 0700);
	chmod(path, 0777);
	is_int(wp_symcache_dir_open(), -EPERM, "a cache directory that others may write is not used");
	rmdir(path);
	if (symlink(dir, path))
		perror("symlink");
	fd = wp_symcache_dir_open();
	ok(fd < 0, "a symbolic link in place of the cache directory is not followed (%d)", fd);
	if (fd >= 0)
		close(fd);
	/* Another user's directory: nothing is made in it. */
	if (geteuid() == 0) {
		snprintf(path, sizeof(path), "%s/theirs", dir);
		mkdir(path, 0755);
		if (chown(path, 65534, 65534))
			perror("chown");
		setenv("XDG_CACHE_HOME", path, 1);
		is_int(wp_symcache_dir_open(), -EPERM, "another user's cache directory is not used");
		snprintf(path, sizeof(path), "%s/theirs/wallprof", dir);
		ok(access(path, F_OK), "and nothing is made in it");
		snprintf(path, sizeof(path), "%s/theirs/cache", dir);
		setenv("XDG_CACHE_HOME", path, 1);
		is_int(wp_symcache_dir_open(), -EPERM, "nor one to be made in another user's directory");
		ok(access(path, F_OK), "which is not made");
	} else {
		skip("other users' directories need root to make");
	}
	setenv("XDG_CACHE_HOME", dir, 1);
}

static void test_round_trip(void)
{
	struct wp_symcache_origin other = origin;
	struct wp_symcache_frame f[WP_SYMCACHE_MAX_FRAMES + 1], got[WP_SYMCACHE_MAX_FRAMES];
	struct wp_symcache *c = open_cache(0, &origin);
	char longname[5000];
	unsigned int n;
	bool all = true;

	ok(c != NULL, "open an empty cache");
	if (!c)
		return;
	ok(!wp_symcache_get(c, 4, got, WP_SYMCACHE_MAX_FRAMES, &n), "it holds nothing");
	for (uint64_t a = 0; a < 200; a++)
		all &= !put(c, a);
	ok(all, "put 200 addresses (0 to 3 frames each, 0 = no name)");
	ok(holds(c, 0) && holds(c, 1) && holds(c, 7) && holds(c, 199), "they are there at once");
	is_int(put(c, 7), -EINVAL, "an address is put once");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	f[0] = (struct wp_symcache_frame){ .name = longname };
	is_int(wp_symcache_put(c, 1000, f, 1), -EINVAL, "a name too long is refused");
	f[0].name = "";
	is_int(wp_symcache_put(c, 1000, f, 1), -EINVAL, "an empty name is refused");
	for (unsigned int i = 0; i <= WP_SYMCACHE_MAX_FRAMES; i++)
		f[i] = (struct wp_symcache_frame){ .name = "f" };
	is_int(wp_symcache_put(c, 1000, f, WP_SYMCACHE_MAX_FRAMES + 1), -EINVAL,
	       "more frames than a chain may have are refused");
	is_int(wp_symcache_save(c), 0, "save");
	wp_symcache_free(c);
	snprintf(file, sizeof(file), "%s/wallprof/93ac61ec5a8eb1396fbd350e3169a558528a4001.0.sym",
		 dir);
	ok(!access(file, R_OK), "as <build id>.<kind>.sym");
	is_int(count_held(0, 200), 200, "all 200 read back from the file");
	c = open_cache(1, &origin);
	ok(c && !holds(c, 7), "another kind of report has a file of its own");
	wp_symcache_free(c);
	other.mtime_ns[1]++;
	c = open_cache(0, &other);
	ok(c && !holds(c, 7), "a changed debug file makes the file count for nothing");
	wp_symcache_free(c);
	c = open_cache(0, &origin);
	ok(c && holds(c, 7) && !put(c, 500) && !wp_symcache_save(c), "add to it and save again");
	wp_symcache_free(c);
	is_int(count_held(0, 200) + count_held(500, 501), 201, "the file holds old and new");
}

/*
 * A cache nothing was put in is written when there was no file (that no
 * names were wanted is worth keeping), and not again once read.
 */
static void test_empty_file(void)
{
	struct wp_symcache *c;
	struct stat st;

	unlink(file);
	c = open_cache(0, &origin);
	ok(c && !wp_symcache_save(c), "empty: saved");
	wp_symcache_free(c);
	ok(!stat(file, &st) && wp_symcache_present(dirfd, id, sizeof(id), 0),
	   "empty: a file is there, which says the build id is known");
	is_int(count_held(0, 40), 0, "empty: it holds no address");
	utimensat(AT_FDCWD, file, (struct timespec[]){ { 1, 0 }, { 1, 0 } }, 0);
	c = open_cache(0, &origin);
	ok(c && !wp_symcache_save(c), "empty: opened and saved again");
	wp_symcache_free(c);
	ok(!stat(file, &st) && st.st_mtime == 1, "empty: once read, not written again");
	unlink(file);
}

/* Save a cache of addresses [0, 40) whose file the tests then damage. */
static size_t good_file(uint8_t **bytes)
{
	struct wp_symcache *c;

	unlink(file);
	c = open_cache(0, &origin);
	for (uint64_t a = 0; c && a < 40; a++)
		put(c, a);
	if (c)
		wp_symcache_save(c);
	wp_symcache_free(c);
	return read_file(file, bytes);
}

static void test_damage(void)
{
	uint8_t *good, *bad;
	size_t n = good_file(&good);
	int loaded = 0;

	ok(n > 160, "a file of 40 addresses (%zu bytes)", n);
	if (n <= 160)
		return;
	bad = malloc(n);
	/* Every bit of the file flipped, one at a time. */
	for (size_t i = 0; i < n * 8; i++) {
		memcpy(bad, good, n);
		bad[i / 8] ^= (uint8_t)(1U << (i % 8));
		write_file(file, bad, n);
		loaded += count_held(0, 40) > 0;
	}
	is_int(loaded, 0, "a file with any bit flipped is passed over");
	/* Cut at every length. */
	loaded = 0;
	for (size_t len = 0; len < n; len++) {
		write_file(file, good, len);
		loaded += count_held(0, 40) > 0;
	}
	is_int(loaded, 0, "a file cut short at any length is passed over");
	/* Longer than it says. */
	memcpy(bad, good, n);
	write_file(file, bad, n);
	{
		int fd = open(file, O_WRONLY | O_APPEND);

		if (fd >= 0) {
			if (wp_write_all(fd, "junk", 4))
				perror("write");
			close(fd);
		}
	}
	is_int(count_held(0, 40), 0, "a file with bytes after its end is passed over");
	free(bad);
	free(good);
	/* A damaged file is replaced by the next save. */
	{
		struct wp_symcache *c = open_cache(0, &origin);

		ok(c && !put(c, 3) && !wp_symcache_save(c), "save over a damaged file");
		wp_symcache_free(c);
		is_int(count_held(0, 40), 1, "the new file is whole and holds what was saved");
	}
}

/* The header's offsets (symcache.c's layout): entries and size, and the checksum last. */
#define H_NR_ENTRIES 136
#define H_PAYLOAD 144
#define H_CHECKSUM 152
#define H_SIZE 160

/* Write a file with this payload, a header that agrees, and a right checksum. */
static void forge(const uint8_t *head, const uint8_t *payload, size_t size, uint64_t nr)
{
	uint8_t *f = malloc(H_SIZE + size);
	uint64_t sum = 0, sz = size;

	memcpy(f, head, H_SIZE);
	memcpy(f + H_NR_ENTRIES, &nr, 8);
	memcpy(f + H_PAYLOAD, &sz, 8);
	memcpy(f + H_CHECKSUM, &sum, 8);
	sum = XXH3_64bits_withSeed(payload, size, XXH3_64bits(f, H_SIZE));
	memcpy(f + H_CHECKSUM, &sum, 8);
	memcpy(f + H_SIZE, payload, size);
	write_file(file, f, H_SIZE + size);
	free(f);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/*
 * One entry at p: addr, nr_frames said, one frame named name with
 * name_len and src_len said (the source's bytes are never there); its size.
 */
static size_t entry(uint8_t *p, uint64_t addr, uint32_t nr_frames, uint32_t flags,
		    const char *name, uint32_t name_len, uint32_t src_len)
{
	size_t at = 16;

	memset(p, 0, 128);
	put_u64(p, addr);
	put_u32(p + 8, nr_frames);
	put_u32(p + at, flags);
	put_u32(p + at + 4, 7);
	put_u64(p + at + 8, 0x1000);
	put_u32(p + at + 16, name_len);
	put_u32(p + at + 20, src_len);
	at += 24;
	memcpy(p + at, name, strlen(name) + 1);
	at += strlen(name) + 1;
	return ALIGN_UP(at, (size_t)8);
}

static void test_forged(void)
{
	uint8_t *good, payload[256];
	size_t n = good_file(&good), len;

	if (n < H_SIZE)
		return;
	/* The checksum is right: only the entries' own checks stand. */
	len = entry(payload, 5, 1, 0, "fine", 4, 0);
	forge(good, payload, len, 1);
	{
		struct wp_symcache *c = open_cache(0, &origin);
		struct wp_symcache_frame f[WP_SYMCACHE_MAX_FRAMES];
		unsigned int m = 0;

		ok(c && wp_symcache_get(c, 5, f, WP_SYMCACHE_MAX_FRAMES, &m) && m == 1 &&
		   !strcmp(f[0].name, "fine") && f[0].line == 7, "a sound forged entry reads back");
		wp_symcache_free(c);
	}
	struct {
		const char *what;
		uint32_t nr_frames, flags, name_len, src_len;
		uint64_t entries;
	} cases[] = {
		{ "more frames than a chain may have", 65, 0, 4, 0, 1 },
		{ "frames past the end", 3, 0, 4, 0, 1 },
		{ "a name past the end", 1, 0, 4000, 0, 1 },
		{ "a name longer than any", 1, 0, 5000, 0, 1 },
		{ "an empty name", 1, 0, 0, 0, 1 },
		{ "a name without its NUL", 1, 0, 3, 0, 1 },
		{ "a source past the end", 1, 0, 4, 200, 1 },
		{ "unknown flags", 1, 0x80, 4, 0, 1 },
		{ "more entries than there are", 1, 0, 4, 0, 2 },
		{ "fewer entries than there are", 1, 0, 4, 0, 0 },
		{ "a count of entries beyond any", 1, 0, 4, 0, 1ULL << 40 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		len = entry(payload, 5, cases[i].nr_frames, cases[i].flags, "fine",
			    cases[i].name_len, cases[i].src_len);
		forge(good, payload, len, cases[i].entries);
		is_int(count_held(5, 6) + count_held(0, 5), 0, "a forged file with %s is passed over",
		       cases[i].what);
	}
	/* The same address twice. */
	len = entry(payload, 5, 1, 0, "fine", 4, 0);
	memcpy(payload + len, payload, len);
	forge(good, payload, 2 * len, 2);
	{
		struct wp_symcache *c = open_cache(0, &origin);
		struct wp_symcache_frame f[WP_SYMCACHE_MAX_FRAMES];
		unsigned int m;

		ok(c && !wp_symcache_get(c, 5, f, WP_SYMCACHE_MAX_FRAMES, &m),
		   "a forged file with an address twice is passed over");
		wp_symcache_free(c);
	}
	free(good);
}

static void test_links_and_owners(void)
{
	char target[320];
	uint8_t *good, *after;
	size_t n = good_file(&good), m;

	/* A link to a good file, in place of the cache file: neither read nor written through. */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	write_file(target, good, n);
	unlink(file);
	if (symlink(target, file))
		perror("symlink");
	is_int(count_held(0, 40), 0, "a symbolic link in place of a cache file is not read");
	{
		struct wp_symcache *c = open_cache(0, &origin);

		ok(c && !put(c, 41) && !wp_symcache_save(c), "save where the link is");
		wp_symcache_free(c);
	}
	m = read_file(target, &after);
	ok(m == n && !memcmp(good, after, n), "the link's target is left as it was");
	free(after);
	ok(count_held(41, 42) == 1, "the link was replaced by a file of the cache's own");
	if (geteuid() == 0) {
		write_file(file, good, n);
		if (chown(file, 65534, 65534))
			perror("chown");
		is_int(count_held(0, 40), 0, "a file of another owner is not read");
	} else {
		skip("another owner's file needs root to make");
	}
	free(good);
}

/*
 * Reports at the same time: each reads the file, checks every chain it
 * finds, adds addresses of its own and saves.  A reader sees a whole file
 * or none; a save may lose another's additions, never make a bad file.
 */
static void test_concurrent(void)
{
	enum { WRITERS = 4, ROUNDS = 60 };
	pid_t pids[WRITERS];
	int bad = 0, status;

	unlink(file);
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		if (pids[w] == 0) {
			int wrong = 0;

			for (int r = 0; r < ROUNDS; r++) {
				struct wp_symcache *c = open_cache(0, &origin);
				struct wp_symcache_frame f[WP_SYMCACHE_MAX_FRAMES];
				unsigned int m;

				if (!c)
					_exit(2);
				for (uint64_t a = 0; a < 4000; a++)
					if (wp_symcache_get(c, a, f, WP_SYMCACHE_MAX_FRAMES, &m) &&
					    !holds(c, a))
						wrong++;
				for (uint64_t a = 0; a < 10; a++)
					put(c, (uint64_t)w * 1000 + (uint64_t)r * 10 + a);
				if (wp_symcache_save(c))
					wrong++;
				wp_symcache_free(c);
			}
			_exit(wrong ? 1 : 0);
		}
	}
	for (int w = 0; w < WRITERS; w++)
		if (pids[w] < 0 || waitpid(pids[w], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad++;
	is_int(bad, 0, "%d reports saving and reading one cache file %d times each: "
	       "every chain read is whole", WRITERS, ROUNDS);
	ok(count_held(0, 4000) > 0, "the file is whole after them");
	{
		char cmd[400];
		int left;

		snprintf(cmd, sizeof(cmd), "ls -a %s/wallprof | grep -c '\\.tmp$' >/dev/null", dir);
		left = system(cmd);
		ok(left != 0, "no temporary file is left behind");
	}
}

int main(void)
{
	char tmpl[] = "/tmp/wallprof-test-symcache-XXXXXX";
	char cmd[300];

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(dir, sizeof(dir), "%s", tmpl);
	test_dir();
	if (dirfd >= 0) {
		test_round_trip();
		test_empty_file();
		test_damage();
		test_forged();
		test_links_and_owners();
		test_concurrent();
		close(dirfd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		perror("rm");
	return done_testing();
}
