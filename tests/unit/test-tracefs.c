/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-tracefs.c: parsing trace event format files, reading their fields. */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "tracefs.h"

/* sched_waking's format as Linux 6.x writes it. */
static const char waking[] =
	"name: sched_waking\n"
	"ID: 375\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid\n";

int main(void)
{
	struct wp_trace_format f;
	const struct wp_trace_field *pid, *comm;
	uint8_t raw[40] = { 0 };
	int32_t v = -7, p = 4242;
	int64_t x = 0;

	is_int(wp_trace_format_parse(waking, &f), 0, "sched_waking's format parses");
	ok(!strcmp(f.name, "sched_waking") && f.id == 375, "its name and id");
	is_int(f.nr_fields, 8, "its eight fields");
	pid = wp_trace_field(&f, "pid");
	comm = wp_trace_field(&f, "comm");
	ok(pid && pid->offset == 24 && pid->size == 4 && pid->is_signed, "pid: offset 24, 4 bytes, signed");
	ok(comm && comm->offset == 8 && comm->size == 16, "comm[16]: the name without its brackets");
	ok(wp_trace_field(&f, "common_flags") && !wp_trace_field(&f, "REC"), "only the fields are fields");
	memcpy(raw + 24, &p, 4);
	ok(wp_trace_field_int(pid, raw, sizeof(raw), &x) && x == 4242, "pid read from raw data");
	memcpy(raw + 24, &v, 4);
	ok(wp_trace_field_int(pid, raw, sizeof(raw), &x) && x == -7, "a signed field is sign-extended");
	ok(!wp_trace_field_int(pid, raw, 26, &x), "a field past the end of the raw data is refused");
	ok(!wp_trace_field_int(comm, raw, sizeof(raw), &x), "a 16-byte field is not an integer");
	is_int(wp_trace_format_parse("name: x\nID: 1\n", &f), -EBADMSG, "no fields: not a format");
	is_int(wp_trace_format_parse("garbage\n\tfield:int;", &f), -EBADMSG, "garbage: not a format");
	return done_testing();
}
