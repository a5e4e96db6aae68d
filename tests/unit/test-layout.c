/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-layout.c: decoding and trimming of perf sample records and sample_id
 * trailers (src/layout.c), on records built here byte by byte in the order
 * linux/perf_event.h documents for PERF_RECORD_SAMPLE:
 *
 *	{ u64 id; }			IDENTIFIER
 *	{ u64 ip; }			IP
 *	{ u32 pid, tid; }		TID
 *	{ u64 time; }			TIME
 *	{ u32 cpu, res; }		CPU
 *	{ u64 period; }			PERIOD
 *	{ u64 nr; u64 ips[nr]; }	CALLCHAIN
 *	{ u64 abi; u64 regs[weight(mask)]; }	REGS_USER (no regs when abi 0)
 *	{ u64 size; char data[size]; u64 dyn_size; }	STACK_USER (size 0: no more)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datafile.h"
#include "layout.h"
#include "util.h"
#include "tap.h"

#define FULL_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
		   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define REGS_MASK 0xff01ffULL		/* 17 registers */
#define NR_REGS 17
#define MAX_RECORD 65528U

/* What goes into a synthetic sample. */
struct sample_spec {
	uint64_t id, ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr_callchain;
	uint64_t regs_abi;		/* 0: no regs array */
	uint64_t stack_size;		/* 0: no data and no dyn_size */
	uint64_t stack_dyn_size;
	size_t trailing;		/* extra bytes after the stack (later fields) */
};

static const struct sample_spec default_spec = {
	.id = 0xabcdef0123456789ULL,
	.ip = 0x7f1234567890ULL,
	.pid = 4242,
	.tid = 4243,
	.time = 123456789012345ULL,
	.cpu = 7,
	.period = 1000000,
	.nr_callchain = 5,
	.regs_abi = PERF_SAMPLE_REGS_ABI_64,
	.stack_size = 8192,
	.stack_dyn_size = 1234,
};

/* Buffers for records: u64 arrays keep them 8-aligned. */
static uint64_t rec_buf[MAX_RECORD / 8], out_buf[MAX_RECORD / 8];

static void fatal(const char *what)
{
	fprintf(stderr, "test-layout: %s\n", what);
	printf("Bail out! %s\n", what);
	exit(1);
}

static uint64_t callchain_value(uint64_t i)
{
	return i == 0 ? PERF_CONTEXT_USER : 0x400000 + i * 0x111;
}

static uint64_t reg_value(unsigned int i)
{
	return 0x7ffd00000000ULL + i * 0x1001;
}

static uint8_t stack_byte(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) + 1);
}

/* Append n bytes at *p. */
static void put(uint8_t **p, const void *v, size_t n)
{
	memcpy(*p, v, n);
	*p += n;
}

static void put_u64(uint8_t **p, uint64_t v)
{
	put(p, &v, 8);
}

static void put_u32_pair(uint8_t **p, uint32_t a, uint32_t b)
{
	put(p, &a, 4);
	put(p, &b, 4);
}

/* Build a PERF_RECORD_SAMPLE for sample_type into buf; returns its size. */
static size_t build_sample(const struct sample_spec *s, uint64_t sample_type,
			   unsigned int nr_regs, void *buf)
{
	struct perf_event_header h = {
		.type = PERF_RECORD_SAMPLE,
		.misc = PERF_RECORD_MISC_USER,
	};
	uint8_t *start = buf, *p = start + sizeof(h);
	size_t need = sizeof(h) + 8 * 8 + s->nr_callchain * 8 + (1 + nr_regs) * 8 +
		      16 + s->stack_size + s->trailing;

	if (need > MAX_RECORD)
		fatal("test bug: sample too large");
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		put_u64(&p, s->id);
	if (sample_type & PERF_SAMPLE_IP)
		put_u64(&p, s->ip);
	if (sample_type & PERF_SAMPLE_TID)
		put_u32_pair(&p, s->pid, s->tid);
	if (sample_type & PERF_SAMPLE_TIME)
		put_u64(&p, s->time);
	if (sample_type & PERF_SAMPLE_CPU)
		put_u32_pair(&p, s->cpu, 0);
	if (sample_type & PERF_SAMPLE_PERIOD)
		put_u64(&p, s->period);
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		put_u64(&p, s->nr_callchain);
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			put_u64(&p, callchain_value(i));
	}
	if (sample_type & PERF_SAMPLE_REGS_USER) {
		put_u64(&p, s->regs_abi);
		for (unsigned int i = 0; s->regs_abi && i < nr_regs; i++)
			put_u64(&p, reg_value(i));
	}
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		put_u64(&p, s->stack_size);
		for (size_t i = 0; i < s->stack_size; i++)
			*p++ = stack_byte(i);
		if (s->stack_size)
			put_u64(&p, s->stack_dyn_size);
	}
	for (size_t i = 0; i < s->trailing; i++)
		*p++ = (uint8_t)(0xe0 + i);
	h.size = (uint16_t)(p - start);
	memcpy(start, &h, sizeof(h));
	return h.size;
}

static struct wp_sample_format full_format(void)
{
	struct wp_sample_format fmt;

	wp_sample_format_init(&fmt, FULL_TYPE, REGS_MASK);
	return fmt;
}

/* Are the fixed fields of s those of spec? */
static bool fixed_fields_match(const struct wp_sample *s, const struct sample_spec *spec)
{
	return s->id == spec->id && s->ip == spec->ip && s->pid == spec->pid &&
	       s->tid == spec->tid && s->time == spec->time && s->cpu == spec->cpu &&
	       s->period == spec->period;
}

static bool callchain_matches(const struct wp_sample *s, uint64_t nr)
{
	if (s->nr_callchain != nr || (nr && !s->callchain))
		return false;
	for (uint64_t i = 0; i < nr; i++)
		if (s->callchain[i] != callchain_value(i))
			return false;
	return true;
}

static bool regs_match(const struct wp_sample *s, unsigned int nr)
{
	if (!s->regs)
		return false;
	for (unsigned int i = 0; i < nr; i++)
		if (s->regs[i] != reg_value(i))
			return false;
	return true;
}

static bool stack_matches(const struct wp_sample *s, size_t n)
{
	if (!s->stack)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->stack[i] != stack_byte(i))
			return false;
	return true;
}

/* A malloc'd copy of exactly size bytes, header.size set to size. */
static struct perf_event_header *exact_copy(const void *rec, size_t size)
{
	struct perf_event_header *h = malloc(size ? size : 1);

	if (!h)
		fatal("out of memory");
	memcpy(h, rec, size);
	if (size >= sizeof(*h))
		h->size = (uint16_t)size;
	return h;
}

static void test_format_init(void)
{
	struct wp_sample_format fmt = full_format();

	is_u64(fmt.sample_type, FULL_TYPE, "format: sample_type kept");
	is_u64(fmt.regs_mask, REGS_MASK, "format: regs_mask kept");
	is_int(fmt.nr_regs, NR_REGS, "format: 0xff01ff means 17 registers");
	wp_sample_format_init(&fmt, FULL_TYPE & ~(uint64_t)PERF_SAMPLE_REGS_USER, REGS_MASK);
	ok(fmt.regs_mask == 0 && fmt.nr_regs == 0,
	   "format: no REGS_USER in sample_type means no registers");
}

static void test_parse_every_field(void)
{
	struct wp_sample_format fmt = full_format();
	struct wp_sample s;
	size_t size = build_sample(&default_spec, FULL_TYPE, NR_REGS, rec_buf);
	const uint8_t *rec = (const uint8_t *)rec_buf;
	/* header, 6 fixed u64, nr + 5 ips, abi + 17 regs, stack size field */
	size_t stack_off = 8 + 6 * 8 + 6 * 8 + 18 * 8 + 8;

	is_u64(size, stack_off + 8192 + 8, "parse: the sample is %zu bytes", size);
	is_int(wp_sample_parse(&fmt, (const struct perf_event_header *)rec_buf, &s), 0,
	       "parse: a full sample parses");
	is_u64(s.id, default_spec.id, "parse: id");
	is_u64(s.ip, default_spec.ip, "parse: ip");
	is_u64(s.pid, default_spec.pid, "parse: pid");
	is_u64(s.tid, default_spec.tid, "parse: tid");
	is_u64(s.time, default_spec.time, "parse: time");
	is_u64(s.cpu, default_spec.cpu, "parse: cpu");
	is_u64(s.period, default_spec.period, "parse: period");
	is_u64(s.nr_callchain, 5, "parse: callchain length");
	ok(callchain_matches(&s, 5), "parse: callchain entries, in order");
	ok((const uint8_t *)s.callchain == rec + 8 + 7 * 8,
	   "parse: callchain points into the record after nr");
	is_u64(s.regs_abi, PERF_SAMPLE_REGS_ABI_64, "parse: regs abi");
	ok(regs_match(&s, NR_REGS), "parse: all 17 register values");
	ok((const uint8_t *)s.regs == rec + 8 + 12 * 8 + 8,
	   "parse: regs point into the record after abi");
	is_u64(s.stack_size, 8192, "parse: stack size");
	is_u64(s.stack_dyn_size, 1234, "parse: stack dyn_size");
	ok(s.stack == rec + stack_off, "parse: stack points at the stack data");
	ok(stack_matches(&s, 8192), "parse: stack bytes");
}

/* The encoder writes what the parser reads: byte for byte as the kernel would. */
static void test_sample_append_round_trip(void)
{
	struct wp_sample_format fmt = full_format();
	struct wp_sample s, again;
	struct wp_buf out = { 0 };
	size_t size = build_sample(&default_spec, FULL_TYPE, NR_REGS, rec_buf);
	const struct perf_event_header *h = (const void *)rec_buf;

	is_int(wp_sample_parse(&fmt, h, &s), 0, "append: the kernel-made sample parses");
	is_int(wp_sample_append(&fmt, h->misc, &s, &out), 0, "append: it encodes again");
	is_u64(out.len, size, "append: to as many bytes (%zu)", out.len);
	/* (Past the bytes the kernel filled the copy is zeroes: the kernel's are unspecified.) */
	ok(out.len == size && !memcmp(out.data, rec_buf, (size_t)(s.stack - (const uint8_t *)h) +
				      (size_t)s.stack_dyn_size) &&
	   !memcmp(out.data + size - 8, (const uint8_t *)rec_buf + size - 8, 8),
	   "append: the same bytes, the stack copy's filled part and its size");
	is_int(wp_sample_parse(&fmt, (const void *)out.data, &again), 0, "append: which parse");
	s.stack_size = 70000;
	out.len = 0;
	is_int(wp_sample_append(&fmt, 0, &s, &out), -E2BIG, "append: no record past 64 KiB");
	is_u64(out.len, 0, "append: and nothing written then");
	wp_buf_release(&out);
}

/* Trim a sample with dyn_size dyn out of an 8192-byte stack copy and check it. */
static void check_trim(uint64_t dyn)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct wp_sample before, after;
	const struct perf_event_header *out = (const void *)out_buf;
	uint64_t keep = dyn ? (dyn + 7) & ~7ULL : 8, size_field, dyn_field;
	size_t size, trimmed, stack_field;
	const uint8_t *o = (const uint8_t *)out_buf;

	spec.stack_dyn_size = dyn;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	wp_sample_parse(&fmt, (const void *)rec_buf, &before);
	stack_field = (size_t)(before.stack - (const uint8_t *)rec_buf) - 8;
	memset(out_buf, 0xcc, sizeof(out_buf));

	trimmed = wp_sample_copy_trimmed(&fmt, (const void *)rec_buf, out_buf);
	is_u64(trimmed, size - 8192 + keep,
	       "trim dyn %llu: keeps %llu stack bytes", (unsigned long long)dyn,
	       (unsigned long long)keep);
	is_u64(out->size, trimmed, "trim dyn %llu: header.size rewritten",
	       (unsigned long long)dyn);
	ok(out->type == PERF_RECORD_SAMPLE && out->misc == PERF_RECORD_MISC_USER,
	   "trim dyn %llu: header type and misc kept", (unsigned long long)dyn);
	is_mem(o + 8, (const uint8_t *)rec_buf + 8, stack_field - 8,
	       "trim dyn %llu: every field before the stack copied as is",
	       (unsigned long long)dyn);
	memcpy(&size_field, o + stack_field, 8);
	memcpy(&dyn_field, o + stack_field + 8 + keep, 8);
	is_u64(size_field, keep, "trim dyn %llu: stack size field is the kept size",
	       (unsigned long long)dyn);
	is_u64(dyn_field, dyn, "trim dyn %llu: dyn_size kept", (unsigned long long)dyn);

	is_int(wp_sample_parse(&fmt, out, &after), 0, "trim dyn %llu: trimmed sample parses",
	       (unsigned long long)dyn);
	ok(fixed_fields_match(&after, &spec) && callchain_matches(&after, spec.nr_callchain) &&
	   after.regs_abi == spec.regs_abi && regs_match(&after, NR_REGS),
	   "trim dyn %llu: same id, ip, pid, tid, time, cpu, period, callchain, regs",
	   (unsigned long long)dyn);
	ok(after.stack_size == keep && after.stack_dyn_size == dyn,
	   "trim dyn %llu: parsed stack size %llu, dyn_size %llu", (unsigned long long)dyn,
	   (unsigned long long)after.stack_size, (unsigned long long)after.stack_dyn_size);
	ok(after.stack && memcmp(after.stack, before.stack, keep) == 0,
	   "trim dyn %llu: the first %llu stack bytes are the original ones",
	   (unsigned long long)dyn, (unsigned long long)keep);
}

static void test_trim_stack(void)
{
	check_trim(1234);	/* rounded up to 1240 */
	check_trim(8);
	check_trim(1);
	check_trim(0);		/* keeps one word so dyn_size stays */
	check_trim(8184);	/* the largest real trim: 8 bytes */
}

/* Fields after the stack (e.g. WEIGHT) survive the trim, after dyn_size. */
static void test_trim_keeps_later_fields(void)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	size_t size, trimmed;
	const uint8_t *o = (const uint8_t *)out_buf;

	spec.stack_size = 512;
	spec.stack_dyn_size = 100;
	spec.trailing = 16;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	trimmed = wp_sample_copy_trimmed(&fmt, (const void *)rec_buf, out_buf);
	is_u64(trimmed, size - 512 + 104, "trim with later fields: 104 stack bytes kept");
	is_mem(o + trimmed - 16, (const uint8_t *)rec_buf + size - 16, 16,
	       "trim with later fields: the 16 bytes after dyn_size follow it");
}

/* Copies that must be byte-identical to the source. */
static void check_copied_unchanged(const struct wp_sample_format *fmt, size_t size,
				   const char *what)
{
	size_t n;

	memset(out_buf, 0xcc, sizeof(out_buf));
	n = wp_sample_copy_trimmed(fmt, (const void *)rec_buf, out_buf);
	is_u64(n, size, "%s: copy has the same size", what);
	is_mem(out_buf, rec_buf, size, "%s: copy is byte-identical", what);
}

static void test_copy_unchanged(void)
{
	struct wp_sample_format fmt = full_format(), no_stack;
	struct sample_spec spec = default_spec;
	uint64_t type_no_stack = FULL_TYPE & ~(uint64_t)PERF_SAMPLE_STACK_USER;
	struct wp_sample s;
	size_t size;

	spec.stack_dyn_size = spec.stack_size;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	check_copied_unchanged(&fmt, size, "dyn_size == size");

	spec.stack_dyn_size = spec.stack_size - 3;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	check_copied_unchanged(&fmt, size, "dyn_size rounds up to size");

	spec = default_spec;
	spec.stack_size = 0;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	check_copied_unchanged(&fmt, size, "stack size 0");
	ok(wp_sample_parse(&fmt, (const void *)rec_buf, &s) == 0 && s.stack_size == 0 &&
	   s.stack_dyn_size == 0 && !s.stack,
	   "stack size 0: parses with no stack and no dyn_size field");

	wp_sample_format_init(&no_stack, type_no_stack, REGS_MASK);
	size = build_sample(&default_spec, type_no_stack, NR_REGS, rec_buf);
	check_copied_unchanged(&no_stack, size, "no STACK_USER");
	ok(wp_sample_parse(&no_stack, (const void *)rec_buf, &s) == 0 &&
	   fixed_fields_match(&s, &default_spec) && regs_match(&s, NR_REGS) && !s.stack,
	   "no STACK_USER: parses, no stack");

	/* A malformed sample (dyn_size > size) is copied as it is. */
	spec = default_spec;
	spec.stack_dyn_size = spec.stack_size + 8;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	check_copied_unchanged(&fmt, size, "dyn_size > size (malformed)");
}

static void test_regs_abi_none(void)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct wp_sample s;
	size_t size, trimmed;

	spec.regs_abi = PERF_SAMPLE_REGS_ABI_NONE;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	is_u64(size, 8 + 6 * 8 + 6 * 8 + 8 + 8 + 8192 + 8,
	       "regs abi 0: no register array in the record");
	is_int(wp_sample_parse(&fmt, (const void *)rec_buf, &s), 0, "regs abi 0: parses");
	ok(s.regs_abi == 0 && s.regs == NULL, "regs abi 0: no regs");
	ok(fixed_fields_match(&s, &spec) && callchain_matches(&s, 5),
	   "regs abi 0: fields before regs intact");
	ok(s.stack_size == 8192 && s.stack_dyn_size == 1234 && stack_matches(&s, 1234),
	   "regs abi 0: the stack right after abi is found");
	trimmed = wp_sample_copy_trimmed(&fmt, (const void *)rec_buf, out_buf);
	ok(trimmed == size - 8192 + 1240 &&
	   wp_sample_parse(&fmt, (const void *)out_buf, &s) == 0 && s.stack_dyn_size == 1234 &&
	   stack_matches(&s, 1234),
	   "regs abi 0: trims and still parses");
}

static void test_empty_callchain(void)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct wp_sample s;

	spec.nr_callchain = 0;
	build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	ok(wp_sample_parse(&fmt, (const void *)rec_buf, &s) == 0 && s.nr_callchain == 0 &&
	   regs_match(&s, NR_REGS) && s.stack_dyn_size == 1234,
	   "callchain nr 0: parses, later fields found");
}

/* Every cut of a sample short of its end is refused (exact-size buffers). */
static void test_truncated_samples(void)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct wp_sample s;
	unsigned int accepted = 0, cuts = 0, changed_copies = 0;
	size_t size;

	spec.stack_size = 256;
	spec.stack_dyn_size = 40;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	for (size_t cut = 8; cut < size; cut += 8) {
		struct perf_event_header *h = exact_copy(rec_buf, cut);

		cuts++;
		if (wp_sample_parse(&fmt, h, &s) != -EBADMSG)
			accepted++;
		if (wp_sample_copy_trimmed(&fmt, h, out_buf) != cut ||
		    memcmp(out_buf, h, cut) != 0)
			changed_copies++;
		free(h);
	}
	is_int(accepted, 0, "truncated: all %u cuts give -EBADMSG", cuts);
	is_int(changed_copies, 0, "truncated: copy_trimmed copies them unchanged");

	rec_buf[0] = 0;		/* header.size 0 */
	is_int(wp_sample_parse(&fmt, (const void *)rec_buf, &s), -EBADMSG,
	       "truncated: header.size 0 gives -EBADMSG");

	/* Build with nr 0 and patch nr, so the buffer holds no such callchain. */
	for (int i = 0; i < 2; i++) {
		static const uint64_t claims[] = { 1000, 0x10000 };
		struct sample_spec small = default_spec;
		struct perf_event_header *h;

		small.nr_callchain = 0;
		small.stack_size = 0;
		size = build_sample(&small, FULL_TYPE, NR_REGS, rec_buf);
		memcpy((uint8_t *)rec_buf + 8 + 6 * 8, &claims[i], 8);
		h = exact_copy(rec_buf, size);
		is_int(wp_sample_parse(&fmt, h, &s), -EBADMSG,
		       "truncated: a callchain of %llu entries, beyond the record, gives -EBADMSG",
		       (unsigned long long)claims[i]);
		free(h);
	}

	spec = default_spec;
	spec.stack_dyn_size = spec.stack_size + 1;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	is_int(wp_sample_parse(&fmt, (const void *)rec_buf, &s), -EBADMSG,
	       "malformed: dyn_size > size gives -EBADMSG");

	{
		struct sample_spec small = default_spec;
		struct perf_event_header *h;
		uint64_t claim = 0x7fffffff;	/* a stack bigger than the record */
		size_t field;

		small.stack_size = 64;
		size = build_sample(&small, FULL_TYPE, NR_REGS, rec_buf);
		field = size - 8 - 64 - 8;
		memcpy((uint8_t *)rec_buf + field, &claim, 8);
		h = exact_copy(rec_buf, size);
		is_int(wp_sample_parse(&fmt, h, &s), -EBADMSG,
		       "malformed: a stack size beyond the record gives -EBADMSG");
		ok(wp_sample_copy_trimmed(&fmt, h, out_buf) == size &&
		   memcmp(out_buf, h, size) == 0,
		   "malformed: and copy_trimmed copies it unchanged");
		free(h);
	}
}

/*
 * Sizes and counts that do not fit 32 bits.  On a host with a 32-bit
 * size_t, a stack size of 2^32 + 64 narrowed to size_t is 64, exactly the
 * bytes that follow: every such size must be refused before any narrowing.
 */
/* Scrubbing keeps every field but the user registers and stack, and the size. */
static void test_scrub_user(void)
{
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct wp_sample after;
	size_t size;
	bool zero = true;

	static const uint64_t chain[5] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000000ULL, 0xffffffff81000100ULL,
		PERF_CONTEXT_USER, 0x400123,
	};

	spec.stack_dyn_size = 4096;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	/* A kernel part, then a user one (-g fp): only the kernel's stays. */
	memcpy((uint8_t *)rec_buf + 8 + 7 * 8, chain, sizeof(chain));
	is_int(wp_sample_scrub_user(&fmt, (void *)rec_buf), 0, "scrub: returns 0");
	{
		struct perf_event_header h;

		memcpy(&h, rec_buf, sizeof(h));
		is_u64(h.size, size, "scrub: size kept");
	}
	is_int(wp_sample_parse(&fmt, (const void *)rec_buf, &after), 0, "scrub: still parses");
	ok(fixed_fields_match(&after, &spec) && after.regs_abi == spec.regs_abi,
	   "scrub: same id, ip, pid, tid, time, cpu, period, regs abi");
	ok(after.nr_callchain == 5 && after.callchain[0] == chain[0] &&
	   after.callchain[1] == chain[1] && after.callchain[2] == chain[2] &&
	   after.callchain[3] == chain[3] && after.callchain[4] == (uint64_t)PERF_CONTEXT_USER,
	   "scrub: the callchain keeps its kernel frames; its user address is a marker");
	for (unsigned int i = 0; i < NR_REGS; i++)
		zero = zero && after.regs[i] == 0;
	for (uint64_t i = 0; i < after.stack_size; i++)
		zero = zero && after.stack[i] == 0;
	ok(zero, "scrub: every register and stack byte is zero");
	ok(after.stack_size == 8192 && after.stack_dyn_size == 0,
	   "scrub: the copy keeps its size, and none of it counts");
	{
		struct perf_event_header *h = exact_copy(rec_buf, size - 8);

		is_int(wp_sample_scrub_user(&fmt, h), -EBADMSG, "scrub: a cut sample is refused");
		free(h);
	}
}

static void test_huge_sizes(void)
{
	static const struct {
		uint64_t size, dyn;
	} claims[] = {
		{ 0x100000000ULL + 64, 40 },		/* 64 when cut to 32 bits */
		{ 0x100000000ULL + 64, 0x100000000ULL },	/* and a dyn_size to match */
		{ 0x100000008ULL, 8 },
		{ 0xffffffffffffffc0ULL, 40 },		/* wraps when 8 is added */
		{ 1ULL << 63, 40 },
	};
	struct wp_sample_format fmt = full_format();
	struct sample_spec spec = default_spec;
	struct perf_event_header *h;
	struct wp_sample s;
	size_t size, field;

	spec.stack_size = 64;
	spec.stack_dyn_size = 40;
	for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
		field = size - 8 - 64 - 8;
		memcpy((uint8_t *)rec_buf + field, &claims[i].size, 8);
		memcpy((uint8_t *)rec_buf + size - 8, &claims[i].dyn, 8);
		h = exact_copy(rec_buf, size);
		is_int(wp_sample_parse(&fmt, h, &s), -EBADMSG,
		       "huge: stack size 0x%llx (64 bytes there), dyn_size 0x%llx: -EBADMSG",
		       (unsigned long long)claims[i].size, (unsigned long long)claims[i].dyn);
		ok(wp_sample_copy_trimmed(&fmt, h, out_buf) == size &&
		   memcmp(out_buf, h, size) == 0,
		   "huge: stack size 0x%llx: copy_trimmed copies it unchanged",
		   (unsigned long long)claims[i].size);
		free(h);
	}

	/* dyn_size beyond 32 bits and beyond size. */
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	{
		uint64_t dyn = 0x100000000ULL + 40;

		memcpy((uint8_t *)rec_buf + size - 8, &dyn, 8);
	}
	h = exact_copy(rec_buf, size);
	is_int(wp_sample_parse(&fmt, h, &s), -EBADMSG,
	       "huge: dyn_size 0x100000028 > size 64: -EBADMSG");
	ok(wp_sample_copy_trimmed(&fmt, h, out_buf) == size && memcmp(out_buf, h, size) == 0,
	   "huge: and copy_trimmed copies it unchanged");
	free(h);

	/* A callchain count whose byte size wraps even in 64 bits. */
	spec.nr_callchain = 0;
	size = build_sample(&spec, FULL_TYPE, NR_REGS, rec_buf);
	{
		uint64_t nr = 0x2000000000000001ULL;	/* 8 bytes, times 8, mod 2^64 */

		memcpy((uint8_t *)rec_buf + 8 + 6 * 8, &nr, 8);
	}
	h = exact_copy(rec_buf, size);
	is_int(wp_sample_parse(&fmt, h, &s), -EBADMSG,
	       "huge: a callchain of 2^61 + 1 entries gives -EBADMSG");
	free(h);
}

/* sample_id trailers of non-sample records. */
static void test_sample_id_size(void)
{
	struct wp_sample_format fmt;

	wp_sample_format_init(&fmt, FULL_TYPE, REGS_MASK);
	is_u64(wp_sample_id_size(&fmt), 32,
	       "sample_id size: IDENTIFIER|TID|TIME|CPU (IP, PERIOD... ignored) is 32");
	wp_sample_format_init(&fmt, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
				    PERF_SAMPLE_IDENTIFIER, 0);
	is_u64(wp_sample_id_size(&fmt), 48, "sample_id size: all six fields is 48");
	wp_sample_format_init(&fmt, PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, 0);
	is_u64(wp_sample_id_size(&fmt), 0, "sample_id size: none of its fields is 0");
}

/* A PERF_RECORD_COMM: pid, tid, comm[16], then the sample_id trailer. */
struct comm_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[16];
	uint8_t trailer[48];
};

static void test_sample_id_round_trip(void)
{
	struct wp_sample_format fmt = full_format();
	struct wp_sample_id id = {
		.pid = 100, .tid = 101, .time = 99887766554433ULL, .cpu = 3,
		.id = 0x5566778899aabbccULL,
	}, got;
	struct comm_record c = {
		.header = { .type = PERF_RECORD_COMM, .size = 8 + 8 + 16 + 32 },
		.pid = 100, .tid = 101, .comm = "worker",
	};
	uint8_t *t = c.trailer;
	uint32_t u32;
	uint64_t u64;
	struct perf_event_header *h;

	memset(c.trailer, 0xcc, sizeof(c.trailer));
	wp_sample_id_write(&fmt, &id, c.trailer);
	ok(c.trailer[32] == 0xcc, "sample_id write: writes exactly wp_sample_id_size bytes");
	memcpy(&u32, t, 4);
	ok(u32 == 100, "sample_id write: pid first");
	memcpy(&u32, t + 4, 4);
	ok(u32 == 101, "sample_id write: then tid");
	memcpy(&u64, t + 8, 8);
	ok(u64 == id.time, "sample_id write: then time");
	memcpy(&u32, t + 16, 4);
	ok(u32 == 3, "sample_id write: then cpu");
	memcpy(&u32, t + 20, 4);
	ok(u32 == 0, "sample_id write: then a zero reserved word");
	memcpy(&u64, t + 24, 8);
	ok(u64 == id.id, "sample_id write: then the identifier, last");

	h = exact_copy(&c, c.header.size);
	is_int(wp_sample_id_parse(&fmt, h, &got), 0, "sample_id parse: COMM trailer parses");
	ok(got.pid == id.pid && got.tid == id.tid && got.time == id.time &&
	   got.cpu == id.cpu && got.id == id.id,
	   "sample_id parse: pid, tid, time, cpu, id round-trip");
	free(h);

	h = exact_copy(&c, 8 + 16);	/* header + 16 bytes: shorter than a trailer */
	is_int(wp_sample_id_parse(&fmt, h, &got), -EBADMSG,
	       "sample_id parse: a record shorter than the trailer gives -EBADMSG");
	free(h);
}

/* With ID and STREAM_ID, the id appears twice and stream_id is written 0. */
static void test_sample_id_all_fields(void)
{
	struct wp_sample_format fmt;
	struct wp_sample_id id = {
		.pid = 1, .tid = 2, .time = 3, .cpu = 4, .id = 0x1234,
	}, got;
	uint64_t rec[1 + 6], want[6];
	uint8_t *p = (uint8_t *)want;
	struct perf_event_header h = { .type = PERF_RECORD_EXIT, .size = sizeof(rec) };

	put_u32_pair(&p, 1, 2);
	put_u64(&p, 3);
	put_u64(&p, 0x1234);
	put_u64(&p, 0);
	put_u32_pair(&p, 4, 0);
	put_u64(&p, 0x1234);

	wp_sample_format_init(&fmt, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
				    PERF_SAMPLE_IDENTIFIER, 0);
	memcpy(rec, &h, sizeof(h));
	wp_sample_id_write(&fmt, &id, rec + 1);
	is_mem(rec + 1, want, sizeof(want),
	       "sample_id all fields: tid, time, id, stream_id 0, cpu, identifier");
	ok(wp_sample_id_parse(&fmt, (const void *)rec, &got) == 0 && got.pid == 1 &&
	   got.tid == 2 && got.time == 3 && got.cpu == 4 && got.id == 0x1234,
	   "sample_id all fields: round-trip");
}

static void test_record_type_names(void)
{
	is_str(wp_record_type_name(PERF_RECORD_SAMPLE), "SAMPLE", "type name: SAMPLE");
	is_str(wp_record_type_name(PERF_RECORD_MMAP2), "MMAP2", "type name: MMAP2");
	is_str(wp_record_type_name(PERF_RECORD_SWITCH), "SWITCH", "type name: SWITCH");
	is_str(wp_record_type_name(PERF_RECORD_LOST), "LOST", "type name: LOST");
	is_str(wp_record_type_name(WP_RECORD_ROUND), "ROUND", "type name: ROUND (100)");
	is_str(wp_record_type_name(WP_RECORD_THREAD), "THREAD", "type name: THREAD");
	is_str(wp_record_type_name(WP_RECORD_CMDLINE), "CMDLINE", "type name: CMDLINE");
	is_str(wp_record_type_name(0), "UNKNOWN", "type name: 0 is unknown");
	is_str(wp_record_type_name(99), "UNKNOWN", "type name: 99 is unknown");
	is_str(wp_record_type_name(0xffffffffU), "UNKNOWN", "type name: 2^32-1 is unknown");
	is_str(wp_record_type_name(WP_RECORD_THREAD_CLOCK), "THREAD_CLOCK",
	       "type name: THREAD_CLOCK");
	ok(wp_record_kind_of(PERF_RECORD_FORK) &&
	   (wp_record_kind_of(PERF_RECORD_FORK)->flags & WP_KIND_STATE),
	   "kind: FORK tells what lives");
	ok(wp_record_kind_of(WP_RECORD_ATTACH) &&
	   (wp_record_kind_of(WP_RECORD_ATTACH)->flags & WP_KIND_PRELUDE),
	   "kind: ATTACH begins every file");
	ok(!wp_record_kind_of(99), "kind: 99 is none");
	ok(!wp_record_kind_has(PERF_RECORD_MMAP, WP_KIND_STATE) &&
	   wp_record_kind_has(PERF_RECORD_MMAP2, WP_KIND_STATE),
	   "kind: MMAP2 tells what lives, MMAP (never asked for) not");
	ok(wp_record_kind_has(PERF_RECORD_SWITCH_CPU_WIDE, WP_KIND_SWITCH) &&
	   !wp_record_kind_has(PERF_RECORD_SWITCH, WP_KIND_STATE),
	   "kind: switches are switches, not state");
	ok(wp_record_kind_has(PERF_RECORD_SAMPLE, WP_KIND_SAMPLE) &&
	   wp_record_kind_has(WP_RECORD_STACK_SAMPLE, WP_KIND_SAMPLE) &&
	   !wp_record_kind_has(WP_RECORD_STACK, WP_KIND_SAMPLE),
	   "kind: both sample types have an event id");
	ok(wp_record_is_own(WP_RECORD_ROUND) && wp_record_is_own(WP_RECORD_TASK_NAME) &&
	   wp_record_is_own(200) && !wp_record_is_own(99) &&
	   !wp_record_is_own(PERF_RECORD_SWITCH), "own: wallprof's types and range only");
	ok(wp_record_kind_of(WP_RECORD_ROUND)->count == WP_COUNT_NOTHING &&
	   wp_record_kind_of(WP_RECORD_CMDLINE)->count == WP_COUNT_SYNTHESIZED &&
	   wp_record_kind_of(PERF_RECORD_LOST)->count == WP_COUNT_LOST,
	   "count: ROUND is nothing, CMDLINE synthesized, LOST a loss");
	/* Every timed own kind has its reader; no kernel kind has one. */
	{
		bool fine = true;

		for (uint32_t t = 0; t < 128; t++) {
			const struct wp_record_kind *k = wp_record_kind_of(t);

			if (k && (k->clock == WP_TIME_FIELD) != (k->time != NULL))
				fine = false;
			if (k && (k->flags & WP_KIND_OWN) && k->clock == WP_TIME_SAMPLE_ID)
				fine = false;
		}
		ok(fine, "kinds: a time reader exactly where the time is a field");
	}
}

/* A later version's own record has no time; the round counts as nothing. */
static void test_record_unknown_own(void)
{
	struct wp_sample_format f;
	struct wp_summary c = { 0 };
	uint64_t rec[4] = { 0 };
	struct perf_event_header *h = (void *)rec;

	wp_sample_format_init(&f, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0);
	h->type = 150;
	h->size = sizeof(rec);
	rec[3] = 777;	/* where a sample_id's time would be */
	is_u64(wp_record_time(&f, h), 0, "unknown own type: no time");
	wp_summary_count(&c, h, -1);
	h->type = WP_RECORD_ROUND;
	h->size = sizeof(*h);
	wp_summary_count(&c, h, -1);
	is_u64(c.records, 1, "summary: an unknown type is a record, a ROUND none");
}

/* THREAD_CLOCK: appended, parsed back, timed by its own field; bad misc refused. */
static void test_thread_clock(void)
{
	struct wp_buf b = { 0 };
	struct wp_record_thread_clock tc;
	struct wp_sample_format f;

	wp_sample_format_init(&f, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, 0);
	ok(!wp_thread_clock_append(&b, WP_CLOCK_EXIT, 10, 11, 12345, 7, 8, 9),
	   "thread clock: appended");
	ok(b.len == sizeof(tc) && !wp_thread_clock_parse((const void *)b.data, &tc) &&
	   tc.pid == 10 && tc.tid == 11 && tc.time == 12345 && tc.on_cpu_ns == 7 &&
	   tc.runq_ns == 8 && tc.slices == 9 && tc.header.misc == WP_CLOCK_EXIT,
	   "thread clock: every field back");
	is_u64(wp_record_time(&f, (const void *)b.data), 12345, "thread clock: its time");
	((struct perf_event_header *)b.data)->misc = 9;
	ok(wp_thread_clock_parse((const void *)b.data, &tc) == -EBADMSG,
	   "thread clock: an unknown misc is refused");
	((struct perf_event_header *)b.data)->misc = WP_CLOCK_START;
	((struct perf_event_header *)b.data)->size = 40;
	ok(wp_thread_clock_parse((const void *)b.data, &tc) == -EBADMSG,
	   "thread clock: a short record is refused");
	wp_buf_release(&b);
}

/* Kernel and user frames are told apart by markers and cpumode, never by address. */
static void test_callchain_walk(void)
{
	const uint64_t chain[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, 0x1000, 0x2000,
		(uint64_t)PERF_CONTEXT_USER, 0xffffffff81000000ULL, 0x3000,
	};
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	struct wp_sample s = { .callchain = chain, .nr_callchain = 6 };
	struct wp_callchain_walk w;
	uint64_t ip, got[6];
	bool kernel, kinds[6];
	unsigned int n = 0;

	h.misc = PERF_RECORD_MISC_USER;
	wp_callchain_walk_init(&w, &h, &s);
	while (n < 6 && wp_callchain_walk_next(&w, &ip, &kernel)) {
		got[n] = ip;
		kinds[n++] = kernel;
	}
	is_int(n, 4, "walk: four addresses, the markers hidden");
	ok(n == 4 && got[0] == 0x1000 && kinds[0] && got[1] == 0x2000 && kinds[1],
	   "walk: low addresses after PERF_CONTEXT_KERNEL are kernel ones");
	ok(n == 4 && got[2] == 0xffffffff81000000ULL && !kinds[2] && !kinds[3],
	   "walk: a high address after PERF_CONTEXT_USER is a user one");
	/* No marker: the sample's cpumode says. */
	s.nr_callchain = 1;
	s.callchain = chain + 1;
	h.misc = PERF_RECORD_MISC_KERNEL;
	wp_callchain_walk_init(&w, &h, &s);
	ok(wp_callchain_walk_next(&w, &ip, &kernel) && kernel, "walk: no marker, kernel cpumode");
	h.misc = PERF_RECORD_MISC_USER;
	wp_callchain_walk_init(&w, &h, &s);
	ok(wp_callchain_walk_next(&w, &ip, &kernel) && !kernel, "walk: no marker, user cpumode");
	ok(!wp_callchain_walk_next(&w, &ip, &kernel), "walk: then the end");
	h.misc = PERF_RECORD_MISC_GUEST_KERNEL;
	ok(wp_sample_in_kernel(&h), "cpumode: a guest kernel sample is a kernel one");
	h.misc = PERF_RECORD_MISC_GUEST_USER;
	ok(!wp_sample_in_kernel(&h), "cpumode: a guest user sample is not");
}

/* The stack table's records: encoded, read back, and their corrupt forms refused. */
static void test_stack_table_records(void)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct wp_dso_def dso = { .dso = 7, .maj = 8, .min = 1, .ino = 123456789012ULL,
				  .build_id_size = 20, .build_id = bid,
				  .filename = "/usr/lib/libc.so.6" }, gd;
	struct wp_place_def pl = { .place = 3, .kind = 1, .flags = 0, .where = 7,
				   .addr = 0x1234567, .pgoff = 0x26000 }, gp;
	const uint32_t places[5] = { 3, 0xffffffffU, 9, 10, 11 };
	struct wp_stack_def st = { .stack = 42, .flags = 5, .ip = 3, .nr_chain = 2, .nr_user = 3,
				   .needed = 70000 }, gs;
	struct wp_stack_sample ss = { .misc = PERF_RECORD_MISC_USER, .time = 1ULL << 62,
				      .id = 0xfedcba9876543210ULL, .pid = 100, .tid = 101,
				      .cpu = 3, .stack = 42, .thread = 555,
				      .flags = WP_STACK_SAMPLE_IRQ }, gss;
	struct wp_buf b = { 0 };
	struct perf_event_header *h;
	size_t off = 0;

	ok(!wp_dso_def_append(&b, &dso) && !wp_place_def_append(&b, &pl) &&
	   !wp_stack_def_append(&b, &st, places) && !wp_stack_sample_append(&b, &ss),
	   "stack table: four records encoded");
	h = (void *)(b.data + off);
	ok(h->type == WP_RECORD_DSO && h->size % 8 == 0 && !wp_dso_def_parse(h, &gd) &&
	   gd.dso == 7 && gd.maj == 8 && gd.min == 1 && gd.ino == 123456789012ULL &&
	   gd.build_id_size == 20 && !memcmp(gd.build_id, bid, 20) &&
	   !strcmp(gd.filename, "/usr/lib/libc.so.6"), "DSO: every field read back");
	is_str(wp_record_type_name(h->type), "DSO", "DSO: its type name");
	off += h->size;
	h = (void *)(b.data + off);
	ok(h->type == WP_RECORD_PLACE && h->size == sizeof(struct wp_record_place) &&
	   !wp_place_def_parse(h, &gp) && gp.place == 3 && gp.kind == 1 && gp.flags == 0 &&
	   gp.where == 7 && gp.addr == 0x1234567 && gp.pgoff == 0x26000,
	   "PLACE: every field read back");
	off += h->size;
	h = (void *)(b.data + off);
	ok(h->type == WP_RECORD_STACK && h->size % 8 == 0 && !wp_stack_def_parse(h, &gs) &&
	   gs.stack == 42 && gs.flags == 5 && gs.ip == 3 && gs.nr_chain == 2 &&
	   gs.nr_user == 3 && gs.needed == 70000 && wp_stack_def_place(&gs, 0) == 3 &&
	   wp_stack_def_place(&gs, 1) == 0xffffffffU && wp_stack_def_place(&gs, 4) == 11,
	   "STACK: every field and place read back");
	/* More places than the record holds. */
	((struct wp_record_stack *)h)->nr_user = 5;
	is_int(wp_stack_def_parse(h, &gs), -EBADMSG, "STACK: more places than bytes is refused");
	((struct wp_record_stack *)h)->nr_user = 3;
	h->size = sizeof(struct wp_record_stack) - 8;
	is_int(wp_stack_def_parse(h, &gs), -EBADMSG, "STACK: shorter than its fixed part");
	h->size = (uint16_t)ALIGN_UP(sizeof(struct wp_record_stack) + 5 * 4, (size_t)8);
	off += h->size;
	h = (void *)(b.data + off);
	ok(h->type == WP_RECORD_STACK_SAMPLE && h->size == 48 && !wp_stack_sample_parse(h, &gss) &&
	   gss.misc == PERF_RECORD_MISC_USER && gss.time == 1ULL << 62 &&
	   gss.id == 0xfedcba9876543210ULL && gss.pid == 100 && gss.tid == 101 && gss.cpu == 3 &&
	   gss.stack == 42 && gss.thread == 555 && gss.flags == WP_STACK_SAMPLE_IRQ,
	   "STACK_SAMPLE: every field read back");
	h->size = 40;
	is_int(wp_stack_sample_parse(h, &gss), -EBADMSG, "STACK_SAMPLE: a short one is refused");
	h->type = WP_RECORD_PLACE;
	is_int(wp_place_def_parse(h, &gp), 0, "PLACE: 40 bytes of another layout still parse");
	h->size = 32;
	is_int(wp_place_def_parse(h, &gp), -EBADMSG, "PLACE: a short one is refused");
	/* A DSO whose name runs to the end of the record without its NUL. */
	h = (void *)b.data;
	memset((uint8_t *)h + sizeof(struct wp_record_dso), 'x',
	       h->size - sizeof(struct wp_record_dso));
	is_int(wp_dso_def_parse(h, &gd), -EBADMSG, "DSO: a name without its NUL is refused");
	h->type = WP_RECORD_BUILD_ID;
	is_int(wp_dso_def_parse(h, &gd), -EBADMSG, "DSO: another type is refused");
	wp_buf_release(&b);
}

static void test_record_next(void)
{
	uint64_t buf[4] = { 0 };
	struct perf_event_header *a = (void *)&buf[0], *b = (void *)&buf[1];
	size_t off = 0;

	a->type = 1;
	a->size = 8;
	b->type = 2;
	b->size = 24;	/* whole */
	ok(wp_record_next(buf, sizeof(buf), &off) == a && off == 8, "the first record");
	ok(wp_record_next(buf, sizeof(buf), &off) == b && off == 32, "the second, whole");
	ok(!wp_record_next(buf, sizeof(buf), &off), "then the end");
	off = 8;
	b->size = 32;	/* past the buffer */
	ok(!wp_record_next(buf, sizeof(buf), &off) && off == 8, "a record past the end: none");
	b->size = 4;	/* smaller than a header */
	ok(!wp_record_next(buf, sizeof(buf), &off) && off == 8, "a record under a header: none");
}

int main(void)
{
	test_stack_table_records();
	test_callchain_walk();
	test_format_init();
	test_parse_every_field();
	test_sample_append_round_trip();
	test_trim_stack();
	test_trim_keeps_later_fields();
	test_copy_unchanged();
	test_regs_abi_none();
	test_empty_callchain();
	test_truncated_samples();
	test_huge_sizes();
	test_scrub_user();
	test_sample_id_size();
	test_sample_id_round_trip();
	test_sample_id_all_fields();
	test_record_type_names();
	test_thread_clock();
	test_record_next();
	test_record_unknown_own();
	return done_testing();
}
