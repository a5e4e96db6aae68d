/* SPDX-License-Identifier: GPL-2.0-or-later */
/* layout.c: field offsets of perf records and of wallprof's own, decoded and encoded. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "layout.h"
#include "util.h"

void wp_sample_format_init(struct wp_sample_format *fmt, uint64_t sample_type,
			   uint64_t regs_mask)
{
	fmt->sample_type = sample_type;
	fmt->regs_mask = (sample_type & PERF_SAMPLE_REGS_USER) ? regs_mask : 0;
	fmt->nr_regs = (unsigned int)__builtin_popcountll(fmt->regs_mask);
	fmt->stack_request = 0;
}

/* A bounds-checked cursor over one record. */
struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

/*
 * n is 64-bit, as the lengths read from a record are: it is compared with
 * what is left before anything narrows it to size_t (32 bits on some
 * hosts, where a size of 2^32 + 8 would otherwise pass as 8).
 */
static const void *take(struct cursor *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || (uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += (size_t)n;
	return p;
}

static uint64_t take_u64(struct cursor *c)
{
	const void *p = take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static void take_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b)
{
	const void *p = take(c, 8);

	if (p) {
		memcpy(a, p, 4);
		memcpy(b, (const uint8_t *)p + 4, 4);
	} else {
		*a = *b = 0;
	}
}

/*
 * Walk a sample up to (not including) the user stack.  Leaves the cursor
 * on the stack field when PERF_SAMPLE_STACK_USER is set.
 */
static void parse_until_stack(const struct wp_sample_format *fmt,
			      struct cursor *c, struct wp_sample *s)
{
	uint64_t t = fmt->sample_type;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = take_u64(c);
	if (t & PERF_SAMPLE_IP)
		s->ip = take_u64(c);
	if (t & PERF_SAMPLE_TID)
		take_u32_pair(c, &s->pid, &s->tid);
	if (t & PERF_SAMPLE_TIME)
		s->time = take_u64(c);
	if (t & PERF_SAMPLE_ADDR)
		take_u64(c);
	if (t & PERF_SAMPLE_ID)
		s->id = take_u64(c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(c);
	if (t & PERF_SAMPLE_CPU)
		take_u32_pair(c, &s->cpu, &res);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take_u64(c);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->nr_callchain = take_u64(c);
		if (s->nr_callchain > 0xffff)
			c->bad = true;
		else
			s->callchain = take(c, s->nr_callchain * 8);	/* < 2^19 */
	}
	if (t & PERF_SAMPLE_RAW) {
		const void *p = take(c, 4);
		uint32_t sz = 0;

		if (p)
			memcpy(&sz, p, 4);
		/* u32 size + data is padded so the next field is 8-aligned. */
		s->raw = take(c, sz);
		s->raw_size = s->raw ? sz : 0;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = take_u64(c);
		if (s->regs_abi)
			s->regs = take(c, (uint64_t)fmt->nr_regs * 8);
	}
}

int wp_sample_parse(const struct wp_sample_format *fmt,
		    const struct perf_event_header *hdr, struct wp_sample *out)
{
	struct cursor c = {
		.p = (const uint8_t *)(hdr + 1),
		.end = (const uint8_t *)hdr + hdr->size,
	};

	if (hdr->size < sizeof(*hdr))
		return -EBADMSG;
	parse_until_stack(fmt, &c, out);
	if (fmt->sample_type & PERF_SAMPLE_STACK_USER) {
		out->stack_size = take_u64(&c);
		if (out->stack_size) {
			out->stack = take(&c, out->stack_size);
			out->stack_dyn_size = take_u64(&c);
			if (out->stack_dyn_size > out->stack_size)
				c.bad = true;
		}
	}
	return c.bad ? -EBADMSG : 0;
}

static void put_u64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

static void put_u32_pair(uint8_t **p, uint32_t a, uint32_t b)
{
	memcpy(*p, &a, 4);
	memcpy(*p + 4, &b, 4);
	*p += 8;
}

int wp_sample_append(const struct wp_sample_format *fmt, uint16_t misc,
		     const struct wp_sample *s, struct wp_buf *out)
{
	uint64_t t = fmt->sample_type;
	size_t raw = (size_t)s->raw_size, size = sizeof(struct perf_event_header);
	struct perf_event_header *h;
	uint8_t *p;

	/* The kernel pads u32 size + data to 8 bytes: so does raw_size. */
	if ((t & PERF_SAMPLE_RAW) && (raw + 4) % 8)
		return -EINVAL;
	size += 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
		     !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ADDR) +
		     !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) +
		     !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_PERIOD));
	if (t & PERF_SAMPLE_CALLCHAIN)
		size += 8 + 8 * (size_t)s->nr_callchain;
	if (t & PERF_SAMPLE_RAW)
		size += 4 + raw;
	if (t & PERF_SAMPLE_REGS_USER)
		size += 8 + (s->regs_abi ? 8 * (size_t)fmt->nr_regs : 0);
	if (t & PERF_SAMPLE_STACK_USER)
		size += 8 + (s->stack_size ? (size_t)s->stack_size + 8 : 0);
	if (s->nr_callchain > 0xffff || s->stack_size > 0xffff || s->stack_dyn_size > s->stack_size ||
	    size > 0xffff)
		return -E2BIG;
	h = wp_buf_reserve(out, size);
	if (!h)
		return -ENOMEM;
	memset(h, 0, size);
	*h = (struct perf_event_header){ .type = PERF_RECORD_SAMPLE, .misc = misc,
					 .size = (uint16_t)size };
	p = (uint8_t *)(h + 1);
	if (t & PERF_SAMPLE_IDENTIFIER)
		put_u64(&p, s->id);
	if (t & PERF_SAMPLE_IP)
		put_u64(&p, s->ip);
	if (t & PERF_SAMPLE_TID)
		put_u32_pair(&p, s->pid, s->tid);
	if (t & PERF_SAMPLE_TIME)
		put_u64(&p, s->time);
	if (t & PERF_SAMPLE_ADDR)
		put_u64(&p, 0);
	if (t & PERF_SAMPLE_ID)
		put_u64(&p, s->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		put_u64(&p, s->id);
	if (t & PERF_SAMPLE_CPU)
		put_u32_pair(&p, s->cpu, 0);
	if (t & PERF_SAMPLE_PERIOD)
		put_u64(&p, s->period);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		put_u64(&p, s->nr_callchain);
		if (s->nr_callchain)
			memcpy(p, s->callchain, 8 * (size_t)s->nr_callchain);
		p += 8 * (size_t)s->nr_callchain;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t sz = (uint32_t)raw;

		memcpy(p, &sz, 4);
		if (raw)
			memcpy(p + 4, s->raw, raw);
		p += 4 + raw;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		put_u64(&p, s->regs_abi);
		if (s->regs_abi) {
			if (s->regs)
				memcpy(p, s->regs, 8 * (size_t)fmt->nr_regs);
			p += 8 * (size_t)fmt->nr_regs;
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		put_u64(&p, s->stack_size);
		if (s->stack_size) {
			if (s->stack_dyn_size)
				memcpy(p, s->stack, (size_t)s->stack_dyn_size);
			p += s->stack_size;
			put_u64(&p, s->stack_dyn_size);
		}
	}
	out->len += size;
	return 0;
}

/* Where a sample's TID and TIME fields are, when it has them (the fields before are 8 bytes each). */
static size_t sample_tid_offset(const struct wp_sample_format *fmt)
{
	uint64_t t = fmt->sample_type;

	return sizeof(struct perf_event_header) + ((t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) +
	       ((t & PERF_SAMPLE_IP) ? 8 : 0);
}

static size_t sample_time_offset(const struct wp_sample_format *fmt)
{
	return sample_tid_offset(fmt) + ((fmt->sample_type & PERF_SAMPLE_TID) ? 8 : 0);
}

int wp_sample_time(const struct wp_sample_format *fmt, const struct perf_event_header *hdr,
		   uint64_t *time)
{
	size_t off = sample_time_offset(fmt);

	if (!(fmt->sample_type & PERF_SAMPLE_TIME) || hdr->size < off + 8)
		return -EBADMSG;
	memcpy(time, (const uint8_t *)hdr + off, 8);
	return 0;
}

int wp_sample_thread(const struct wp_sample_format *fmt, const struct perf_event_header *hdr,
		     uint32_t *pid, uint32_t *tid)
{
	size_t off = sample_tid_offset(fmt);

	if (!(fmt->sample_type & PERF_SAMPLE_TID) || hdr->size < off + 8)
		return -EBADMSG;
	memcpy(pid, (const uint8_t *)hdr + off, 4);
	memcpy(tid, (const uint8_t *)hdr + off + 4, 4);
	return 0;
}

int wp_sample_set_time(const struct wp_sample_format *fmt, struct perf_event_header *hdr,
		       uint64_t time)
{
	size_t off = sample_time_offset(fmt);

	if (!(fmt->sample_type & PERF_SAMPLE_TIME) || hdr->size < off + 8)
		return -EBADMSG;
	memcpy((uint8_t *)hdr + off, &time, 8);
	return 0;
}

size_t wp_sample_id_size(const struct wp_sample_format *fmt)
{
	uint64_t t = fmt->sample_type;
	size_t n = 0;

	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

int wp_sample_id_parse(const struct wp_sample_format *fmt,
		       const struct perf_event_header *hdr,
		       struct wp_sample_id *out)
{
	size_t n = wp_sample_id_size(fmt);
	uint64_t t = fmt->sample_type;
	struct cursor c;
	uint32_t res;

	memset(out, 0, sizeof(*out));
	if (hdr->size < sizeof(*hdr) + n)
		return -EBADMSG;
	c.end = (const uint8_t *)hdr + hdr->size;
	c.p = c.end - n;
	c.bad = false;
	if (t & PERF_SAMPLE_TID)
		take_u32_pair(&c, &out->pid, &out->tid);
	if (t & PERF_SAMPLE_TIME)
		out->time = take_u64(&c);
	if (t & PERF_SAMPLE_ID)
		out->id = take_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c);
	if (t & PERF_SAMPLE_CPU)
		take_u32_pair(&c, &out->cpu, &res);
	if (t & PERF_SAMPLE_IDENTIFIER)
		out->id = take_u64(&c);
	return 0;
}

void wp_sample_id_write(const struct wp_sample_format *fmt,
			const struct wp_sample_id *id, void *dst)
{
	uint64_t t = fmt->sample_type, zero = 0;
	uint32_t res = 0;
	uint8_t *p = dst;

#define PUT(v) do { memcpy(p, &(v), sizeof(v)); p += sizeof(v); } while (0)
	if (t & PERF_SAMPLE_TID) {
		PUT(id->pid);
		PUT(id->tid);
	}
	if (t & PERF_SAMPLE_TIME)
		PUT(id->time);
	if (t & PERF_SAMPLE_ID)
		PUT(id->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		PUT(zero);
	if (t & PERF_SAMPLE_CPU) {
		PUT(id->cpu);
		PUT(res);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		PUT(id->id);
#undef PUT
}

size_t wp_sample_copy_trimmed(const struct wp_sample_format *fmt,
			      const struct perf_event_header *hdr, void *dst)
{
	const uint8_t *src = (const uint8_t *)hdr;
	struct cursor c = {
		.p = src + sizeof(*hdr),
		.end = src + hdr->size,
	};
	struct perf_event_header *out = dst;
	uint64_t size, dyn, keep;
	const uint8_t *stack_field, *after;
	struct wp_sample s;
	uint8_t *p;

	if (!(fmt->sample_type & PERF_SAMPLE_STACK_USER) || hdr->size < sizeof(*hdr))
		goto copy_whole;
	parse_until_stack(fmt, &c, &s);
	stack_field = c.p;
	size = take_u64(&c);
	if (c.bad || size == 0)
		goto copy_whole;
	take(&c, size);
	dyn = take_u64(&c);
	if (c.bad || dyn > size)
		goto copy_whole;
	/* size 0 would also drop the dyn_size field; keep at least one word. */
	keep = dyn ? ((dyn + 7) & ~7ULL) : 8;
	if (keep >= size)
		goto copy_whole;
	after = c.p;

	/* header .. size field, then the kept bytes, dyn_size, the rest. */
	p = dst;
	memcpy(p, src, (size_t)(stack_field - src));
	p += stack_field - src;
	memcpy(p, &keep, 8);
	p += 8;
	/* keep < size, which take() found inside the record. */
	memcpy(p, stack_field + 8, (size_t)keep);
	p += keep;
	memcpy(p, &dyn, 8);
	p += 8;
	memcpy(p, after, (size_t)(c.end - after));
	p += c.end - after;
	out->size = (uint16_t)(p - (uint8_t *)dst);
	return out->size;

copy_whole:
	memcpy(dst, src, hdr->size);
	return hdr->size;
}

int wp_sample_scrub_user(const struct wp_sample_format *fmt, struct perf_event_header *hdr)
{
	uint8_t *base = (uint8_t *)hdr;
	struct wp_sample s;
	uint64_t zero = 0;

	if (wp_sample_parse(fmt, hdr, &s))
		return -EBADMSG;
	/* The parsed pointers point into hdr: the same bytes, writable. */
	if (s.regs)
		memset(base + ((const uint8_t *)s.regs - base), 0, (size_t)fmt->nr_regs * 8);
	if (s.stack) {
		uint8_t *stack = base + (s.stack - (const uint8_t *)base);

		memset(stack, 0, (size_t)s.stack_size);
		memcpy(stack + s.stack_size, &zero, 8);	/* dyn_size */
	}
	/*
	 * A callchain's user part (-g fp): each address becomes the user
	 * context marker again, which every walk passes over, so that the
	 * record keeps its size and its kernel frames.
	 */
	if (s.nr_callchain) {
		uint8_t *chain = base + ((const uint8_t *)s.callchain - base);
		uint64_t marker = (uint64_t)PERF_CONTEXT_USER, v;
		bool user = false;

		for (uint64_t i = 0; i < s.nr_callchain; i++) {
			memcpy(&v, chain + i * 8, 8);
			if (v >= (uint64_t)PERF_CONTEXT_MAX) {
				user = v == (uint64_t)PERF_CONTEXT_USER ||
				       v == (uint64_t)PERF_CONTEXT_GUEST_USER;
				continue;
			}
			if (user)
				memcpy(chain + i * 8, &marker, 8);
		}
	}
	return 0;
}

int wp_sample_event_id(const struct wp_sample_format *fmt,
		       const struct perf_event_header *hdr, uint64_t *id)
{
	struct wp_sample s;

	if (fmt->sample_type & PERF_SAMPLE_IDENTIFIER) {
		if (hdr->size < sizeof(*hdr) + 8)
			return -EBADMSG;
		memcpy(id, hdr + 1, 8);
		return 0;
	}
	if (wp_sample_parse(fmt, hdr, &s))
		return -EBADMSG;
	*id = s.id;
	return 0;
}

int wp_sample_set_event_id(const struct wp_sample_format *fmt, struct perf_event_header *hdr,
			   uint64_t id)
{
	if (!(fmt->sample_type & PERF_SAMPLE_IDENTIFIER) || hdr->size < sizeof(*hdr) + 8)
		return -EBADMSG;
	memcpy(hdr + 1, &id, 8);
	return 0;
}

bool wp_sample_in_kernel(const struct perf_event_header *hdr)
{
	switch (hdr->misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
	case PERF_RECORD_MISC_HYPERVISOR:
	case PERF_RECORD_MISC_GUEST_KERNEL:
		return true;
	}
	return false;
}

void wp_callchain_walk_init(struct wp_callchain_walk *w, const struct perf_event_header *hdr,
			    const struct wp_sample *s)
{
	w->ips = s->callchain;
	w->n = s->nr_callchain;
	w->i = 0;
	w->kernel = wp_sample_in_kernel(hdr);
}

bool wp_callchain_walk_next(struct wp_callchain_walk *w, uint64_t *ip, bool *kernel)
{
	while (w->i < w->n) {
		uint64_t v = w->ips[w->i++];

		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			w->kernel = v != (uint64_t)PERF_CONTEXT_USER &&
				    v != (uint64_t)PERF_CONTEXT_GUEST_USER;
			continue;
		}
		*ip = v;
		*kernel = w->kernel;
		return true;
	}
	return false;
}

/* The time fields of wallprof's timed records (WP_TIME_FIELD). */
static uint64_t thread_time(const struct perf_event_header *h)
{
	struct wp_record_thread t;

	return wp_thread_parse(h, &t) ? 0 : t.time;
}

static uint64_t cmdline_time(const struct perf_event_header *h)
{
	struct wp_cmdline c;

	return wp_cmdline_parse(h, &c) ? 0 : c.time;
}

static uint64_t stack_sample_time(const struct perf_event_header *h)
{
	struct wp_stack_sample ss;

	return wp_stack_sample_parse(h, &ss) ? 0 : ss.time;
}

static uint64_t thread_clock_time(const struct perf_event_header *h)
{
	struct wp_record_thread_clock tc;

	return wp_thread_clock_parse(h, &tc) ? 0 : tc.time;
}

/* Short names for the table's columns. */
#define KERNEL(flags) (flags), WP_TIME_SAMPLE_ID
#define OWN(flags) WP_KIND_OWN | (flags), WP_TIME_NONE
#define OWN_TIMED(flags) WP_KIND_OWN | (flags), WP_TIME_FIELD

/*
 * Every record type a recording holds, and what it is: its name for
 * dumps; which tell what lives (rotation's model follows them, and each
 * rotated file restates them), which are switches, which every file
 * begins with, which are wallprof's own; where its time is; what a
 * summary counts it as.  MMAP is not state: wallprof asks for MMAP2.  A
 * TASK_NAME's time is when the name was read, not an event's: it is
 * ordered with the records around it.
 */
static const struct wp_record_kind record_kinds[] = {
	{ PERF_RECORD_MMAP, "MMAP", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_LOST, "LOST", KERNEL(0), WP_COUNT_LOST, NULL },
	{ PERF_RECORD_COMM, "COMM", KERNEL(WP_KIND_STATE), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_EXIT, "EXIT", KERNEL(WP_KIND_STATE), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_THROTTLE, "THROTTLE", KERNEL(0), WP_COUNT_THROTTLE, NULL },
	{ PERF_RECORD_UNTHROTTLE, "UNTHROTTLE", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_FORK, "FORK", KERNEL(WP_KIND_STATE), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_READ, "READ", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_SAMPLE, "SAMPLE", WP_KIND_SAMPLE, WP_TIME_SAMPLE, WP_COUNT_SAMPLE, NULL },
	{ PERF_RECORD_MMAP2, "MMAP2", KERNEL(WP_KIND_STATE), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_AUX, "AUX", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_ITRACE_START, "ITRACE_START", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_LOST_SAMPLES, "LOST_SAMPLES", KERNEL(0), WP_COUNT_LOST_SAMPLES, NULL },
	{ PERF_RECORD_SWITCH, "SWITCH", KERNEL(WP_KIND_SWITCH), WP_COUNT_SWITCH, NULL },
	{ PERF_RECORD_SWITCH_CPU_WIDE, "SWITCH_CPU_WIDE", KERNEL(WP_KIND_SWITCH), WP_COUNT_SWITCH,
	  NULL },
	{ PERF_RECORD_NAMESPACES, "NAMESPACES", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_KSYMBOL, "KSYMBOL", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_BPF_EVENT, "BPF_EVENT", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_CGROUP, "CGROUP", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_TEXT_POKE, "TEXT_POKE", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ PERF_RECORD_AUX_OUTPUT_HW_ID, "AUX_OUTPUT_HW_ID", KERNEL(0), WP_COUNT_RECORD, NULL },
	{ WP_RECORD_ROUND, "ROUND", OWN(0), WP_COUNT_NOTHING, NULL },
	{ WP_RECORD_BUILD_ID, "BUILD_ID", OWN(0), WP_COUNT_RECORD, NULL },
	{ WP_RECORD_THREAD, "THREAD", OWN_TIMED(WP_KIND_STATE), WP_COUNT_RECORD, thread_time },
	{ WP_RECORD_ATTACH, "ATTACH", OWN(WP_KIND_PRELUDE), WP_COUNT_RECORD, NULL },
	{ WP_RECORD_TRACE_FORMAT, "TRACE_FORMAT", OWN(WP_KIND_PRELUDE), WP_COUNT_RECORD, NULL },
	{ WP_RECORD_CMDLINE, "CMDLINE", OWN_TIMED(WP_KIND_STATE), WP_COUNT_SYNTHESIZED,
	  cmdline_time },
	{ WP_RECORD_DSO, "DSO", OWN(WP_KIND_STATE | WP_KIND_STACK_DEF), WP_COUNT_RECORD, NULL },
	{ WP_RECORD_PLACE, "PLACE", OWN(WP_KIND_STATE | WP_KIND_STACK_DEF), WP_COUNT_RECORD,
	  NULL },
	{ WP_RECORD_STACK, "STACK", OWN(WP_KIND_STATE | WP_KIND_STACK_DEF), WP_COUNT_RECORD,
	  NULL },
	{ WP_RECORD_STACK_SAMPLE, "STACK_SAMPLE", OWN_TIMED(WP_KIND_SAMPLE), WP_COUNT_SAMPLE,
	  stack_sample_time },
	{ WP_RECORD_THREAD_CLOCK, "THREAD_CLOCK", OWN_TIMED(0), WP_COUNT_SYNTHESIZED,
	  thread_clock_time },
	{ WP_RECORD_TASK_NAME, "TASK_NAME", OWN(0), WP_COUNT_SYNTHESIZED, NULL },
};

#undef KERNEL
#undef OWN
#undef OWN_TIMED

/* Record types below this index the table directly (kinds_by_type). */
#define KIND_INDEX_MAX 128

const struct wp_record_kind *wp_record_kind_of(uint32_t type)
{
	/* Every record of a file asks: an index made once, not a search each time. */
	static const struct wp_record_kind *by_type[KIND_INDEX_MAX];
	static bool indexed;

	if (!__atomic_load_n(&indexed, __ATOMIC_ACQUIRE)) {
		for (size_t i = 0; i < sizeof(record_kinds) / sizeof(record_kinds[0]); i++)
			if (record_kinds[i].type < KIND_INDEX_MAX)
				by_type[record_kinds[i].type] = &record_kinds[i];
		__atomic_store_n(&indexed, true, __ATOMIC_RELEASE);
	}
	return type < KIND_INDEX_MAX ? by_type[type] : NULL;
}

bool wp_record_kind_has(uint32_t type, unsigned int flags)
{
	const struct wp_record_kind *k = wp_record_kind_of(type);

	return k && (k->flags & flags);
}

bool wp_record_is_own(uint32_t type)
{
	const struct wp_record_kind *k = wp_record_kind_of(type);

	return k ? (k->flags & WP_KIND_OWN) != 0 : type >= WP_RECORD_ROUND;
}

uint64_t wp_record_time(const struct wp_sample_format *fmt, const struct perf_event_header *rec)
{
	const struct wp_record_kind *k = wp_record_kind_of(rec->type);
	struct wp_sample_id id;
	uint64_t time;

	/* An unknown type: the kernel's has a sample_id, a later wallprof's no time. */
	switch (k ? k->clock : wp_record_is_own(rec->type) ? WP_TIME_NONE : WP_TIME_SAMPLE_ID) {
	case WP_TIME_SAMPLE:
		/* Only the time is read here; the sample is parsed once, at delivery. */
		return wp_sample_time(fmt, rec, &time) ? 0 : time;
	case WP_TIME_SAMPLE_ID:
		return wp_sample_id_parse(fmt, rec, &id) ? 0 : id.time;
	case WP_TIME_FIELD:
		return k->time(rec);
	}
	return 0;
}

int wp_record_event_id(const struct wp_sample_format *fmt, const struct perf_event_header *rec,
		       uint64_t *id)
{
	struct wp_stack_sample ss;

	if (rec->type == PERF_RECORD_SAMPLE)
		return wp_sample_event_id(fmt, rec, id);
	if (rec->type != WP_RECORD_STACK_SAMPLE || wp_stack_sample_parse(rec, &ss))
		return -EBADMSG;
	*id = ss.id;
	return 0;
}

const char *wp_record_type_name(uint32_t type)
{
	const struct wp_record_kind *k = wp_record_kind_of(type);

	return k ? k->name : "UNKNOWN";
}

/* The kernel's MMAP2 body: its fixed part, then the file name. */
struct mmap2_fixed {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved[3];
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
};
_Static_assert(sizeof(struct mmap2_fixed) == 64, "the kernel's MMAP2 layout");

/* The NUL-terminated string at off in the body, or NULL. */
static const char *body_string(const struct perf_event_header *hdr, size_t off, size_t *len)
{
	const char *s = (const char *)(hdr + 1) + off;
	size_t body = hdr->size - sizeof(*hdr), n;

	if (hdr->size < sizeof(*hdr) || body <= off)
		return NULL;
	n = strnlen(s, body - off);
	if (n == body - off)
		return NULL;
	if (len)
		*len = n;
	return s;
}

int wp_mmap2_parse(const struct perf_event_header *hdr, struct wp_mmap2 *out)
{
	struct mmap2_fixed f;

	if (hdr->type != PERF_RECORD_MMAP2 || hdr->size < sizeof(*hdr) + sizeof(f))
		return -EBADMSG;
	memcpy(&f, hdr + 1, sizeof(f));
	memset(out, 0, sizeof(*out));
	out->pid = f.pid;
	out->tid = f.tid;
	out->addr = f.addr;
	out->len = f.len;
	out->pgoff = f.pgoff;
	out->prot = f.prot;
	out->flags = f.flags;
	if (hdr->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		out->has_build_id = true;
		out->build_id_size = f.build_id_size <= 20 ? f.build_id_size : 20;
		out->build_id = (const uint8_t *)(hdr + 1) + offsetof(struct mmap2_fixed, build_id);
	} else {
		out->maj = f.maj;
		out->min = f.min;
		out->ino = f.ino;
		out->ino_generation = f.ino_generation;
	}
	out->filename = body_string(hdr, sizeof(f), NULL);
	return out->filename ? 0 : -EBADMSG;
}

size_t wp_mmap2_body(const struct wp_mmap2 *m, void *buf, size_t size)
{
	size_t name = strlen(m->filename) + 1;
	size_t total = ALIGN_UP(sizeof(struct mmap2_fixed) + name, (size_t)8);
	struct mmap2_fixed f = {
		.pid = m->pid, .tid = m->tid,
		.addr = m->addr, .len = m->len, .pgoff = m->pgoff,
		.maj = m->maj, .min = m->min, .ino = m->ino, .ino_generation = m->ino_generation,
		.prot = m->prot, .flags = m->flags,
	};

	if (total > size)
		return 0;
	memset(buf, 0, total);
	memcpy(buf, &f, sizeof(f));
	memcpy((uint8_t *)buf + sizeof(f), m->filename, name);
	return total;
}

int wp_task_event_parse(const struct perf_event_header *hdr, struct wp_task_event *out)
{
	if ((hdr->type != PERF_RECORD_FORK && hdr->type != PERF_RECORD_EXIT) ||
	    hdr->size < sizeof(*hdr) + sizeof(*out))
		return -EBADMSG;
	memcpy(out, hdr + 1, sizeof(*out));
	return 0;
}

int wp_comm_parse(const struct perf_event_header *hdr, struct wp_comm *out)
{
	if (hdr->type != PERF_RECORD_COMM || hdr->size < sizeof(*hdr) + 8)
		return -EBADMSG;
	memcpy(&out->pid, hdr + 1, 4);
	memcpy(&out->tid, (const uint8_t *)(hdr + 1) + 4, 4);
	out->exec = hdr->misc & PERF_RECORD_MISC_COMM_EXEC;
	out->comm = body_string(hdr, 8, &out->len);
	return out->comm ? 0 : -EBADMSG;
}

size_t wp_comm_body(const struct wp_comm *c, void *buf, size_t size)
{
	size_t total = ALIGN_UP(8 + c->len + 1, (size_t)8);
	uint8_t *p = buf;

	if (total > size)
		return 0;
	memset(buf, 0, total);
	memcpy(p, &c->pid, 4);
	memcpy(p + 4, &c->tid, 4);
	memcpy(p + 8, c->comm, c->len);
	return total;
}

int wp_lost_parse(const struct perf_event_header *hdr, uint64_t *id, uint64_t *lost)
{
	const uint8_t *p = (const uint8_t *)(hdr + 1);

	*id = 0;
	if (hdr->type == PERF_RECORD_LOST && hdr->size >= sizeof(*hdr) + 16) {
		memcpy(id, p, 8);
		memcpy(lost, p + 8, 8);
		return 0;
	}
	if (hdr->type == PERF_RECORD_LOST_SAMPLES && hdr->size >= sizeof(*hdr) + 8) {
		memcpy(lost, p, 8);
		return 0;
	}
	return -EBADMSG;
}

int wp_switch_parse(const struct perf_event_header *hdr, struct wp_switch *out)
{
	const uint8_t *p = (const uint8_t *)(hdr + 1);

	if (hdr->type != PERF_RECORD_SWITCH && hdr->type != PERF_RECORD_SWITCH_CPU_WIDE)
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	out->out = hdr->misc & PERF_RECORD_MISC_SWITCH_OUT;
	out->preempted = out->out && (hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	if (hdr->type == PERF_RECORD_SWITCH)
		return 0;
	if (hdr->size < sizeof(*hdr) + 8)
		return -EBADMSG;
	out->cpu_wide = true;
	memcpy(&out->next_prev_pid, p, 4);
	memcpy(&out->next_prev_tid, p + 4, 4);
	return 0;
}

int wp_throttle_parse(const struct perf_event_header *hdr, struct wp_throttle *out)
{
	if ((hdr->type != PERF_RECORD_THROTTLE && hdr->type != PERF_RECORD_UNTHROTTLE) ||
	    hdr->size < sizeof(*hdr) + sizeof(*out))
		return -EBADMSG;
	memcpy(out, hdr + 1, sizeof(*out));
	return 0;
}

int wp_thread_parse(const struct perf_event_header *hdr, struct wp_record_thread *out)
{
	if (hdr->type != WP_RECORD_THREAD || hdr->size < sizeof(*out))
		return -EBADMSG;
	memcpy(out, hdr, sizeof(*out));
	return 0;
}

int wp_thread_clock_parse(const struct perf_event_header *hdr, struct wp_record_thread_clock *out)
{
	if (hdr->type != WP_RECORD_THREAD_CLOCK || hdr->size < sizeof(*out) ||
	    hdr->misc < WP_CLOCK_START || hdr->misc > WP_CLOCK_DURING)
		return -EBADMSG;
	memcpy(out, hdr, sizeof(*out));
	return 0;
}

int wp_thread_clock_append(struct wp_buf *out, enum wp_clock_when when, uint32_t pid,
			   uint32_t tid, uint64_t time, uint64_t on_cpu_ns, uint64_t runq_ns,
			   uint64_t slices)
{
	struct wp_record_thread_clock r = {
		.header = { .type = WP_RECORD_THREAD_CLOCK, .misc = (uint16_t)when,
			    .size = sizeof(r) },
		.pid = pid, .tid = tid, .time = time,
		.on_cpu_ns = on_cpu_ns, .runq_ns = runq_ns, .slices = slices,
	};

	return wp_buf_append(out, &r, sizeof(r));
}

/*
 * The length of args without its trailing empty arguments, keeping the
 * first: a program that rewrites its command line in place (PostgreSQL's
 * backends, setproctitle) pads the rest of the old arguments' memory
 * with NULs, which /proc shows as dozens of empty arguments.
 */
static uint32_t cmdline_trim(const char *args, uint32_t len)
{
	while (len >= 2 && !args[len - 1] && !args[len - 2])
		len--;
	return len;
}

int wp_cmdline_parse(const struct perf_event_header *hdr, struct wp_cmdline *out)
{
	struct wp_record_cmdline c;
	const char *args = (const char *)hdr + sizeof(c);

	if (hdr->type != WP_RECORD_CMDLINE || hdr->size < sizeof(c))
		return -EBADMSG;
	memcpy(&c, hdr, sizeof(c));
	/* Every argument ends with its NUL, inside the record. */
	if (c.len > hdr->size - sizeof(c) || (c.len && args[c.len - 1]))
		return -EBADMSG;
	out->pid = c.pid;
	out->source = c.source;
	out->flags = c.flags;
	out->time = c.time;
	out->exec_time = c.exec_time;
	out->len = cmdline_trim(args, c.len);
	out->args = args;
	return 0;
}

int wp_cmdline_append(struct wp_buf *out, const struct wp_cmdline *c)
{
	struct wp_record_cmdline r = {
		.header = { .type = WP_RECORD_CMDLINE },
		.pid = c->pid, .source = c->source, .flags = c->flags,
		.time = c->time, .exec_time = c->exec_time,
		.len = c->flags & WP_CMDLINE_TRUNCATED ? c->len : cmdline_trim(c->args, c->len),
	};
	size_t size;
	uint8_t *p;

	if (r.len > WP_CMDLINE_MAX) {
		r.len = WP_CMDLINE_MAX;
		r.flags |= WP_CMDLINE_TRUNCATED;
	}
	/* Room for a NUL of our own when the arguments were cut inside one. */
	size = ALIGN_UP(sizeof(r) + r.len + 1, (size_t)8);
	r.header.size = (uint16_t)size;
	p = wp_buf_reserve(out, size);
	if (!p)
		return -ENOMEM;
	memset(p, 0, size);
	memcpy(p + sizeof(r), c->args, r.len);
	if (r.len && p[sizeof(r) + r.len - 1])
		r.len++;	/* the padding's first byte ends the last one */
	memcpy(p, &r, sizeof(r));
	out->len += size;
	return 0;
}

int wp_task_name_parse(const struct perf_event_header *hdr, struct wp_record_task_name *out)
{
	if (hdr->type != WP_RECORD_TASK_NAME || hdr->size < sizeof(*out))
		return -EBADMSG;
	memcpy(out, hdr, sizeof(*out));
	return 0;
}

int wp_task_name_append(struct wp_buf *out, uint32_t pid, uint32_t tid, uint64_t time,
			const char *comm)
{
	struct wp_record_task_name r = {
		.header = { .type = WP_RECORD_TASK_NAME, .size = sizeof(r) },
		.pid = pid, .tid = tid, .time = time,
	};

	memcpy(r.comm, comm, strnlen(comm, sizeof(r.comm)));
	return wp_buf_append(out, &r, sizeof(r));
}

int wp_attach_parse(const struct perf_event_header *hdr, struct wp_attach *out)
{
	struct wp_record_attach a;

	if (hdr->type != WP_RECORD_ATTACH || hdr->size < sizeof(a))
		return -EBADMSG;
	memcpy(&a, hdr, sizeof(a));
	if (a.nr_ids > (hdr->size - sizeof(a)) / sizeof(uint64_t))
		return -EBADMSG;
	out->tid = a.tid;
	out->nr_ids = a.nr_ids;
	out->done = a.done;
	out->ids = (const uint8_t *)hdr + sizeof(a);
	return 0;
}

uint64_t wp_attach_id(const struct wp_attach *a, uint32_t i)
{
	uint64_t id;

	memcpy(&id, (const uint8_t *)a->ids + (size_t)i * sizeof(id), sizeof(id));
	return id;
}

int wp_text_parse(const struct perf_event_header *hdr, const char **text, size_t *len)
{
	const char *t = (const char *)hdr + sizeof(struct wp_record_text);
	size_t max;

	if (hdr->type != WP_RECORD_TRACE_FORMAT || hdr->size <= sizeof(struct wp_record_text))
		return -EBADMSG;
	max = hdr->size - sizeof(struct wp_record_text);
	*len = strnlen(t, max);
	if (*len == max)
		return -EBADMSG;
	*text = t;
	return 0;
}

/*
 * A record of type type: fixed bytes, then a NUL-terminated name that
 * ends within the record.  The name, or NULL.
 */
static const char *record_name(const struct perf_event_header *hdr, uint32_t type, size_t fixed)
{
	const char *name = (const char *)hdr + fixed;
	size_t max;

	if (hdr->type != type || hdr->size <= fixed)
		return NULL;
	max = hdr->size - fixed;
	return strnlen(name, max) == max ? NULL : name;
}

int wp_build_id_parse(const struct perf_event_header *hdr, struct wp_build_id *out)
{
	const char *name = record_name(hdr, WP_RECORD_BUILD_ID, sizeof(struct wp_record_build_id));
	struct wp_record_build_id b;

	if (!name)
		return -EBADMSG;
	memcpy(&b, hdr, sizeof(b));
	out->pid = b.pid;
	out->size = b.size <= sizeof(b.build_id) ? b.size : sizeof(b.build_id);
	out->build_id = (const uint8_t *)hdr + offsetof(struct wp_record_build_id, build_id);
	out->maj = b.maj;
	out->min = b.min;
	out->ino = b.ino;
	out->filename = name;
	return 0;
}

const struct perf_event_header *wp_record_next(const void *buf, size_t len, size_t *off)
{
	const struct perf_event_header *h = (const void *)((const uint8_t *)buf + *off);

	if (*off + sizeof(*h) > len || h->size < sizeof(*h) || h->size > len - *off)
		return NULL;
	*off += h->size;
	return h;
}

bool wp_mmap_is_anon(const char *filename)
{
	return !strncmp(filename, "//anon", 6) || !strncmp(filename, "[anon:", 6) ||
	       !strncmp(filename, "/memfd:", 7) || !filename[0];
}

int wp_dso_def_parse(const struct perf_event_header *hdr, struct wp_dso_def *out)
{
	const char *name = record_name(hdr, WP_RECORD_DSO, sizeof(struct wp_record_dso));
	struct wp_record_dso d;

	if (!name)
		return -EBADMSG;
	memcpy(&d, hdr, sizeof(d));
	out->dso = d.dso;
	out->maj = d.maj;
	out->min = d.min;
	out->ino = d.ino;
	out->build_id_size = d.build_id_size <= sizeof(d.build_id) ? d.build_id_size
								   : sizeof(d.build_id);
	out->build_id = (const uint8_t *)hdr + offsetof(struct wp_record_dso, build_id);
	out->filename = name;
	return 0;
}

int wp_dso_def_append(struct wp_buf *out, const struct wp_dso_def *d)
{
	struct wp_record_dso r = {
		.header = { .type = WP_RECORD_DSO },
		.dso = d->dso, .maj = d->maj, .min = d->min, .ino = d->ino,
		.build_id_size = d->build_id_size <= sizeof(r.build_id) ? d->build_id_size
									 : sizeof(r.build_id),
	};
	size_t len = strlen(d->filename), size = ALIGN_UP(sizeof(r) + len + 1, (size_t)8);
	uint8_t *p;

	if (size > UINT16_MAX)
		return -E2BIG;
	memcpy(r.build_id, d->build_id, r.build_id_size);
	r.header.size = (uint16_t)size;
	p = wp_buf_reserve(out, size);
	if (!p)
		return -ENOMEM;
	memset(p, 0, size);
	memcpy(p, &r, sizeof(r));
	memcpy(p + sizeof(r), d->filename, len);
	out->len += size;
	return 0;
}

int wp_place_def_parse(const struct perf_event_header *hdr, struct wp_place_def *out)
{
	struct wp_record_place r;

	if (hdr->type != WP_RECORD_PLACE || hdr->size < sizeof(r))
		return -EBADMSG;
	memcpy(&r, hdr, sizeof(r));
	out->place = r.place;
	out->kind = r.kind;
	out->flags = r.flags;
	out->where = r.where;
	out->addr = r.addr;
	out->pgoff = r.pgoff;
	return 0;
}

int wp_place_def_append(struct wp_buf *out, const struct wp_place_def *pl)
{
	struct wp_record_place r = {
		.header = { .type = WP_RECORD_PLACE, .size = sizeof(r) },
		.place = pl->place, .kind = pl->kind, .flags = pl->flags, .where = pl->where,
		.addr = pl->addr, .pgoff = pl->pgoff,
	};

	return wp_buf_append(out, &r, sizeof(r));
}

int wp_stack_def_parse(const struct perf_event_header *hdr, struct wp_stack_def *out)
{
	struct wp_record_stack r;

	if (hdr->type != WP_RECORD_STACK || hdr->size < sizeof(r))
		return -EBADMSG;
	memcpy(&r, hdr, sizeof(r));
	if ((size_t)r.nr_chain + r.nr_user > (hdr->size - sizeof(r)) / sizeof(uint32_t))
		return -EBADMSG;
	out->stack = r.stack;
	out->flags = r.flags;
	out->ip = r.ip;
	out->nr_chain = r.nr_chain;
	out->nr_user = r.nr_user;
	out->needed = r.needed;
	out->places = (const uint8_t *)hdr + sizeof(r);
	return 0;
}

uint32_t wp_stack_def_place(const struct wp_stack_def *d, unsigned int i)
{
	uint32_t id;

	memcpy(&id, (const uint8_t *)d->places + (size_t)i * sizeof(id), sizeof(id));
	return id;
}

int wp_stack_def_append(struct wp_buf *out, const struct wp_stack_def *d, const uint32_t *places)
{
	struct wp_record_stack r = {
		.header = { .type = WP_RECORD_STACK },
		.stack = d->stack, .flags = d->flags, .ip = d->ip,
		.nr_chain = d->nr_chain, .nr_user = d->nr_user, .needed = d->needed,
	};
	size_t n = (size_t)d->nr_chain + d->nr_user;
	size_t size = ALIGN_UP(sizeof(r) + n * sizeof(uint32_t), (size_t)8);
	uint8_t *p;

	if (size > UINT16_MAX)
		return -E2BIG;
	r.header.size = (uint16_t)size;
	p = wp_buf_reserve(out, size);
	if (!p)
		return -ENOMEM;
	memset(p, 0, size);
	memcpy(p, &r, sizeof(r));
	memcpy(p + sizeof(r), places, n * sizeof(uint32_t));
	out->len += size;
	return 0;
}

int wp_stack_sample_parse(const struct perf_event_header *hdr, struct wp_stack_sample *out)
{
	struct wp_record_stack_sample r;

	if (hdr->type != WP_RECORD_STACK_SAMPLE || hdr->size < sizeof(r))
		return -EBADMSG;
	memcpy(&r, hdr, sizeof(r));
	out->misc = r.header.misc;
	out->time = r.time;
	out->id = r.id;
	out->pid = r.pid;
	out->tid = r.tid;
	out->cpu = r.cpu;
	out->stack = r.stack;
	out->thread = r.thread;
	out->flags = r.flags;
	return 0;
}

int wp_stack_sample_append(struct wp_buf *out, const struct wp_stack_sample *ss)
{
	struct wp_record_stack_sample r = {
		.header = { .type = WP_RECORD_STACK_SAMPLE, .misc = ss->misc, .size = sizeof(r) },
		.time = ss->time, .id = ss->id, .pid = ss->pid, .tid = ss->tid, .cpu = ss->cpu,
		.stack = ss->stack, .thread = ss->thread, .flags = ss->flags,
	};

	return wp_buf_append(out, &r, sizeof(r));
}
