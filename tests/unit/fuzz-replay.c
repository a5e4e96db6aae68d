/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-replay.c: a fuzz harness (tests/fuzz/fuzz-*.c) as a unit test, in
 * any build and with any compiler: every file of the tests/fuzz/corpus-*
 * directories (inputs that once found a bug, and small crafted ones) goes
 * through the harness's LLVMFuzzerTestOneInput, as libFuzzer would feed
 * it.  A crash, a sanitizer report (in a --enable-sanitizers build), more
 * than INPUT_SECONDS on one input or a peak above PEAK_MB fails the test,
 * naming the input.
 *
 *	test-fuzz-report [FILE|DIR...]	replay these instead (a reproducer)
 *
 * Set WP_FUZZ_LOG=1 to see what the library logs about each input.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Far above what any input takes, even in a sanitizer build on a busy machine. */
#define INPUT_SECONDS 60
#define TEXT(x) #x
#define NUMBER_TEXT(x) TEXT(x)
/* Recordings of the test workloads need a few hundred, even under ASan. */
#define PEAK_MB 1024

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static char current[4096];

static void fatal(const char *what, const char *path)
{
	printf("Bail out! %s '%s': %s\n", what, path, strerror(errno));
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "Bail out! more than " NUMBER_TEXT(INPUT_SECONDS)
		" seconds on one input: ";

	(void)sig;
	/* Only async-signal-safe calls here. */
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0 ||
	    write(STDOUT_FILENO, current, strlen(current)) < 0 ||
	    write(STDOUT_FILENO, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static long peak_mb(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_maxrss / 1024;
}

/* name: what the test output calls it. */
static void replay_file(const char *path, const char *name)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;
	long peak;

	snprintf(current, sizeof(current), "%s", path);
	f = fopen(path, "rbe");
	if (!f || fstat(fileno(f), &st))
		fatal("cannot open", path);
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		fatal("out of memory for", path);
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		fatal("cannot read", path);
	fclose(f);
	/* Said before: if it crashes, the log ends with its name. */
	diag("replaying %s (%lld bytes)", name, (long long)st.st_size);
	alarm(INPUT_SECONDS);
	LLVMFuzzerTestOneInput(buf, (size_t)st.st_size);
	alarm(0);
	free(buf);
	peak = peak_mb();
	if (!ok(peak <= PEAK_MB, "%s", name))
		diag("peak memory %ld MiB, more than %d MiB", peak, PEAK_MB);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_corpus(const struct dirent *e)
{
	return !strncmp(e->d_name, "corpus", 6);
}

static int is_input(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Every file of dir, in name order, called name/file. */
static void replay_dir(const char *dir, const char *name)
{
	char path[4096], shown[512];
	struct dirent **names;
	int n;

	n = scandir(dir, &names, is_input, by_name);
	if (n < 0)
		fatal("cannot list", dir);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		snprintf(shown, sizeof(shown), "%s/%s", name, names[i]->d_name);
		replay_file(path, shown);
		free(names[i]);
	}
	free(names);
}

static void replay(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		fatal("cannot find", path);
	if (S_ISDIR(st.st_mode))
		replay_dir(path, path);
	else
		replay_file(path, path);
}

int main(int argc, char **argv)
{
	const char *tests = getenv("TESTS_SRCDIR");
	struct dirent **corpora;
	char fuzz[4096];
	int n;

	signal(SIGALRM, on_alarm);
#ifndef UNDER_ASAN
	{
		/* A decompression bomb fails the peak check instead of the machine. */
		struct rlimit as = { 4 * (rlim_t)PEAK_MB << 20, 4 * (rlim_t)PEAK_MB << 20 };

		setrlimit(RLIMIT_AS, &as);
	}
#endif
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			replay(argv[i]);
		return done_testing();
	}
	if (tests)
		snprintf(fuzz, sizeof(fuzz), "%s/fuzz", tests);
	else
		snprintf(fuzz, sizeof(fuzz), "%s/tests/fuzz", WP_SOURCE_DIR);
	n = scandir(fuzz, &corpora, is_corpus, by_name);
	if (n < 0)
		fatal("cannot list", fuzz);
	for (int i = 0; i < n; i++) {
		char dir[4096 + 256];

		snprintf(dir, sizeof(dir), "%s/%s", fuzz, corpora[i]->d_name);
		replay_dir(dir, corpora[i]->d_name);
		free(corpora[i]);
	}
	free(corpora);
	return done_testing();
}
