/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h: a tiny Test Anything Protocol harness for the unit tests.
 *
 *	int main(void)
 *	{
 *		plan(3);
 *		ok(1 + 1 == 2, "addition");
 *		is_int(f(), 0, "f succeeds");
 *		is_u64(g(), 42, "g is 42");
 *		return done_testing();
 *	}
 *
 * skip("why") counts a check that cannot run here as a skip, with its reason.
 * plan() may be left out: done_testing() then prints the plan ("1..N") at
 * the end, which TAP allows.
 * Every check prints "ok N - name" or "not ok N - name" (with the values
 * on a "#" diagnostic line when they differ) and returns whether it passed.
 * done_testing() returns the exit status: 0 when every planned check ran
 * and passed, 1 otherwise.
 */
#ifndef WALLPROF_TAP_H
#define WALLPROF_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned int tap_planned, tap_run, tap_failed;
static bool tap_have_plan;

static inline void plan(unsigned int n)
{
	tap_planned = n;
	tap_have_plan = true;
	printf("1..%u\n", n);
	fflush(stdout);
}

static inline bool tap_vresult(bool pass, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static inline bool tap_vresult(bool pass, const char *fmt, va_list ap)
{
	tap_run++;
	if (!pass)
		tap_failed++;
	printf("%sok %u - ", pass ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

static inline bool ok(bool pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pass = tap_vresult(pass, fmt, ap);
	va_end(ap);
	return pass;
}

/*
 * A check that cannot run here, with the reason: counted as a skip by the
 * TAP driver (and listed by tools/check), never as a pass.
 */
static inline void skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void skip(const char *fmt, ...)
{
	va_list ap;

	tap_run++;
	printf("ok %u # SKIP ", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* A "#" line: ignored by TAP consumers, shown to people. */
static inline void diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline bool is_int(long long got, long long want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool is_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;
	bool pass;

	va_start(ap, fmt);
	pass = tap_vresult(got == want, fmt, ap);
	va_end(ap);
	if (!pass)
		diag("     got: %lld\n#   wanted: %lld", got, want);
	return pass;
}

static inline bool is_u64(uint64_t got, uint64_t want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool is_u64(uint64_t got, uint64_t want, const char *fmt, ...)
{
	va_list ap;
	bool pass;

	va_start(ap, fmt);
	pass = tap_vresult(got == want, fmt, ap);
	va_end(ap);
	if (!pass)
		diag("     got: %" PRIu64 " (0x%" PRIx64 ")\n#   wanted: %" PRIu64
		     " (0x%" PRIx64 ")", got, got, want, want);
	return pass;
}

static inline bool is_str(const char *got, const char *want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool is_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	bool pass;

	pass = got && want ? strcmp(got, want) == 0 : got == want;
	va_start(ap, fmt);
	pass = tap_vresult(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		diag("     got: '%s'\n#   wanted: '%s'", got ? got : "(null)",
		     want ? want : "(null)");
	return pass;
}

/* Byte-for-byte comparison of two buffers of len bytes. */
static inline bool is_mem(const void *got, const void *want, size_t len,
			  const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline bool is_mem(const void *got, const void *want, size_t len,
			  const char *fmt, ...)
{
	const unsigned char *g = got, *w = want;
	size_t i = 0;
	va_list ap;
	bool pass;

	if (got && want)
		while (i < len && g[i] == w[i])
			i++;
	pass = got && want && i == len;
	va_start(ap, fmt);
	pass = tap_vresult(pass, fmt, ap);
	va_end(ap);
	if (!pass && got && want)
		diag("first difference at byte %zu of %zu: got 0x%02x, wanted 0x%02x",
		     i, len, g[i], w[i]);
	else if (!pass)
		diag("NULL buffer");
	return pass;
}

/* The exit status: 0 only when all planned checks ran and passed. */
static inline int done_testing(void)
{
	if (!tap_have_plan) {
		printf("1..%u\n", tap_run);
		fflush(stdout);
	} else if (tap_run != tap_planned) {
		diag("planned %u checks but ran %u", tap_planned, tap_run);
		return 1;
	}
	if (tap_failed)
		diag("failed %u of %u checks", tap_failed, tap_run);
	return tap_failed ? 1 : 0;
}

#endif
