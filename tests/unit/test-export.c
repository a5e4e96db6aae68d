/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-export.c: what export_clickhouse.c decides without a server: the
 * times of report --from's --since and --until (UTC dates, epoch seconds,
 * spans before now) and the words it refuses, and the file id (a hash of
 * the bytes: equal files one id, a changed byte another).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_clickhouse.h"
#include "tap.h"

static void time_is(const char *s, uint64_t now, uint64_t want)
{
	uint64_t got = 0;
	int err = wp_ch_parse_time(s, now, &got);

	is_int(err, 0, "'%s' is a time", s);
	is_u64(got, want, "'%s' is %llu", s, (unsigned long long)want);
}

static void not_time(const char *s)
{
	uint64_t got = 0;

	is_int(wp_ch_parse_time(s, 1000000, &got), -EINVAL, "'%s' is not a time", s);
}

static void test_times(void)
{
	time_is("1795950000", 0, 1795950000);
	time_is("2026-11-29", 0, 1795910400);
	time_is("2026-11-29 10:00", 0, 1795946400);
	time_is("2026-11-29T10:00", 0, 1795946400);
	time_is("2026-11-29T10:00:07", 0, 1795946407);
	time_is("1970-01-01", 0, 0);
	time_is("-90s", 1000, 910);
	time_is("-2m", 1000, 880);
	time_is("-1h", 7200, 3600);
	time_is("-1d", 100000, 13600);
	not_time("");
	not_time("yesterday");
	not_time("-1");
	not_time("-h");
	not_time("-1y");
	not_time("-12d");	/* before 1970 */
	not_time("2026-11-29 10");
	not_time("2026-11-29x");
	not_time("2026-11-29 10:00:07 UTC");
	not_time("12abc");
}

static int write_file(const char *path, const char *bytes)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(bytes, f);
	return fclose(f);
}

static void test_file_id(void)
{
	char dir[] = "/tmp/wallprof-test-export.XXXXXX", a[64], b[64], c[64];
	char ida[WP_CH_FILE_ID_SIZE], idb[WP_CH_FILE_ID_SIZE], idc[WP_CH_FILE_ID_SIZE];

	if (!mkdtemp(dir)) {
		ok(false, "a temporary directory");
		return;
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(c, sizeof(c), "%s/c", dir);
	ok(!write_file(a, "the same bytes") && !write_file(b, "the same bytes") &&
	   !write_file(c, "the same byteS"), "three files");
	is_int(wp_ch_file_id(a, ida), 0, "file id of a");
	is_int(wp_ch_file_id(b, idb), 0, "file id of b");
	is_int(wp_ch_file_id(c, idc), 0, "file id of c");
	is_int((long long)strlen(ida), 32, "32 hex digits");
	is_int((long long)strspn(ida, "0123456789abcdef"), 32, "... only hex digits");
	ok(!strcmp(ida, idb), "equal bytes, equal ids");
	ok(strcmp(ida, idc) != 0, "a changed byte, another id");
	is_int(wp_ch_file_id("/nonexistent/wallprof", ida), -ENOENT, "no file: -ENOENT");
	unlink(a);
	unlink(b);
	unlink(c);
	rmdir(dir);
}

int main(void)
{
	test_times();
	test_file_id();
	return done_testing();
}
