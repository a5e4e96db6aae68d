/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-structured.c: the report pipeline on data files built record by
 * record.  fuzz-report feeds the pipeline bytes, which mostly stop at the
 * first block or record that does not parse; here the input is a stream
 * of choices from which a valid file is made (wallprof-data(5)): its
 * header and metadata (launched, attached or -a; wake-ups; a stack table,
 * version 2; a rotated file's start), then scheduler-shaped sequences of
 * records on each CPU (switches with their switch-out and sched_switch
 * samples, on-CPU samples, wake-ups, forks, execs, exits, mappings, lost
 * records), a rotated file's THREAD prelude, stack table records and a
 * NAMES block, KSYMS and the summary.  A second file of another shape is
 * made from the same input and some of its records are grafted into the
 * first; then fields of chosen records are mutated (ids, threads, CPUs,
 * times, sizes of counts), so that the analysis meets files that are
 * almost right: what reaches the ledger's deep paths.
 *
 * Whatever the choices, the pipeline must end with an error or the
 * reports: no crash, no leak, no unbounded time or memory.  Corpus
 * inputs (tests/fuzz/corpus-structured) are choice streams, replayed by
 * tests/unit/test-fuzz-structured in every build; WP_FUZZ_SAVE=PATH keeps
 * the file an input makes, for wallprof report --dump.
 */
#include <stdbool.h>
#include <string.h>

#include <linux/perf_event.h>

#include "analysis.h"
#include "format.h"
#include "fuzz.h"
#include "fuzz-waits.h"
#include "layout.h"
#include "procmap.h"
#include "util.h"
#include "view.h"

/*
 * The input, read as decisions; all zeros once it runs out.  Each choice
 * is its own statement: the order of the operands of one expression (or
 * of the members of one initializer) is the compiler's, and a corpus
 * input must make the same file in every build.
 */
struct choices {
	const uint8_t *p;
	size_t n;
};

static uint8_t pick8(struct choices *c)
{
	if (!c->n)
		return 0;
	c->n--;
	return *c->p++;
}

static uint16_t pick16(struct choices *c)
{
	uint16_t lo = pick8(c);

	return (uint16_t)(lo | pick8(c) << 8);
}

static uint32_t pick32(struct choices *c)
{
	uint32_t lo = pick16(c);

	return lo | (uint32_t)pick16(c) << 16;
}

/* A number below n (n > 0), from as few bytes as it needs. */
static uint32_t below(struct choices *c, uint32_t n)
{
	return n <= 256 ? pick8(c) % n : pick16(c) % n;
}

#define MS 1000000ULL
#define START_NS (1000 * 1000 * MS)
#define MAX_CPUS 4
#define NR_TIDS 40		/* enough to grow the ledger's arrays past 16 and 32 */
#define TID_BASE 4000
#define MAX_RECORDS 700
#define MAX_GRAFT 64
#define KERNEL_BASE 0xffffffff81000000ULL
#define USER_BASE 0x400000ULL
#define ANON_BASE 0x7f0000001000ULL

/* Sample types: the fields every event shares (wallprof-data(5), EVENT). */
#define BASE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
		   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* x86-64's user registers of a DWARF recording: AX..R15 less the segments. */
#define REGS_MASK 0xff01ffULL
#define NR_REGS 17

/* Event ids: each role's, one per CPU, from a base a file chooses. */
static uint64_t event_id(uint64_t base, unsigned int role, unsigned int cpu)
{
	return base + role * 16 + cpu;
}

/* The shape of one file. */
struct shape {
	bool table;		/* a stack table: version 2, STACK_SAMPLE records */
	bool cpu_wide;
	bool wakeups;
	bool rotated;		/* begins with a THREAD prelude, ends rotated */
	unsigned int callgraph;	/* 0 none, 1 fp, 2 dwarf */
	unsigned int nr_cpus;
	uint64_t sample_type;
	uint64_t id_base;
	uint64_t flags;		/* WP_META_* */
};

/* Records, each at its offset in one buffer. */
struct records {
	struct wp_buf buf;
	size_t off[MAX_RECORDS + MAX_GRAFT + 8];
	size_t n;
	uint64_t last_ns;	/* the latest time of a record */
};

/* What the generator keeps between records. */
struct gen {
	struct choices *c;
	const struct shape *s;
	struct records *r;
	uint64_t now;
	uint32_t current[MAX_CPUS];	/* tid on each CPU, 0: idle */
	uint32_t stacks, places;	/* stack table ids handed out */
};

static void put(struct wp_buf *b, const void *p, size_t n)
{
	if (wp_buf_append(b, p, n))
		abort();
}

static void put64(struct wp_buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put32(struct wp_buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void pad8(struct wp_buf *b)
{
	static const uint8_t zero[8];

	put(b, zero, ALIGN_UP(b->len, (size_t)8) - b->len);
}

/* A record starts here in g's list. */
static void note_record(struct gen *g)
{
	struct records *r = g->r;

	if (r->n == sizeof(r->off) / sizeof(r->off[0]))
		abort();
	r->off[r->n++] = r->buf.len;
}

/* Start a record in g's list; end_record sets its size. */
static size_t begin_record(struct gen *g, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	note_record(g);
	put(&g->r->buf, &h, sizeof(h));
	return g->r->buf.len - sizeof(h);
}

static void end_record(struct gen *g, size_t at)
{
	struct perf_event_header *h;

	pad8(&g->r->buf);
	h = (struct perf_event_header *)(g->r->buf.data + at);
	h->size = (uint16_t)(g->r->buf.len - at);
}

static uint32_t pid_of(uint32_t tid)
{
	if (!tid || tid == UINT32_MAX || tid < TID_BASE || tid >= TID_BASE + NR_TIDS)
		return tid;
	/* The first four are processes; the others are their threads. */
	return tid < TID_BASE + 4 ? tid : TID_BASE + (tid - TID_BASE) % 4;
}

/* A thread: mostly one of the pool, sometimes the idle task or none. */
static uint32_t pick_tid(struct gen *g)
{
	uint8_t b = pick8(g->c);

	if (b == 255)
		return UINT32_MAX;
	if (b >= 250)
		return 0;
	return TID_BASE + b % NR_TIDS;
}

/* The next record's time: mostly a little later, now and then not. */
static uint64_t tick(struct gen *g)
{
	uint8_t b = pick8(g->c);

	if (b < 150)
		g->now += b * 1000;
	else if (b < 230)
		g->now += (uint64_t)(b - 150) * 50000;
	else if (b < 245)
		g->now += (uint64_t)(b - 229) * 20 * MS;
	else if (b < 254)
		g->now -= g->now > START_NS ? (uint64_t)(b - 244) * 3000 : 0;
	else	/* one record far outside the recording */
		return b == 254 ? START_NS - MS : g->now + (1ULL << 62);
	if (g->now > g->r->last_ns)
		g->r->last_ns = g->now;
	return g->now;
}

static void sample_id(struct gen *g, uint32_t tid, uint64_t time, uint32_t cpu, uint64_t id)
{
	put32(&g->r->buf, pid_of(tid));
	put32(&g->r->buf, tid);
	put64(&g->r->buf, time);
	put32(&g->r->buf, cpu);
	put32(&g->r->buf, 0);
	put64(&g->r->buf, id);
}

/* An address of the kernel (in KSYMS's symbols) or of a mapping. */
static uint64_t pick_ip(struct gen *g, bool kernel)
{
	uint8_t b = pick8(g->c);

	if (kernel)
		return KERNEL_BASE + (uint64_t)(b % 12) * 0x100 + (b & 0x30);
	if (b >= 240)
		return ANON_BASE + (uint64_t)(b - 240) * 0x40;
	return USER_BASE + (uint64_t)b * 0x24;
}

static void callchain(struct gen *g, bool kernel, bool user)
{
	uint64_t chain[24];
	unsigned int n = 0, k = kernel ? 1 + pick8(g->c) % 6 : 0;
	unsigned int u = user ? pick8(g->c) % 10 : 0;

	if (k) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		while (k--)
			chain[n++] = pick_ip(g, true);
	}
	if (u) {
		chain[n++] = PERF_CONTEXT_USER;
		while (u--)
			chain[n++] = pick_ip(g, false);
	}
	put64(&g->r->buf, n);
	put(&g->r->buf, chain, n * 8);
}

/*
 * A sample of role on cpu by tid: role 0 on-CPU, 1 switch-out, 2 waking,
 * 3 wakeup_new, 4 wakeup, 5 sched_switch (other: the thread its raw data
 * names), 6 an event the file does not describe.
 */
static void sample(struct gen *g, unsigned int role, uint32_t cpu, uint32_t tid,
		   uint32_t other)
{
	const struct shape *s = g->s;
	uint64_t time = tick(g), id;
	bool kernel = role == 1 || (role == 0 && pick8(g->c) & 1);
	size_t at;

	id = role == 6 ? 7777 : event_id(s->id_base, role, cpu);
	at = begin_record(g, PERF_RECORD_SAMPLE, kernel ? PERF_RECORD_MISC_KERNEL :
						       PERF_RECORD_MISC_USER);
	put64(&g->r->buf, id);
	put64(&g->r->buf, pick_ip(g, kernel));
	put32(&g->r->buf, pid_of(tid));
	put32(&g->r->buf, tid);
	put64(&g->r->buf, time);
	put32(&g->r->buf, cpu);
	put32(&g->r->buf, 0);
	put64(&g->r->buf, role == 0 ? 1000000 : 1);
	if (s->sample_type & PERF_SAMPLE_CALLCHAIN)
		callchain(g, kernel || role == 2, s->callgraph == 1 && role < 3);
	if (s->sample_type & PERF_SAMPLE_RAW) {
		/* The tracepoints' fields as TRACE_FORMAT says (below). */
		uint8_t raw[28] = { 0 };
		uint32_t size = role >= 2 && role <= 5 ? 28 : 4;

		raw[2] = pick8(g->c) & 0x18;	/* common_flags: in an interrupt? */
		memcpy(raw + 4, &tid, 4);
		memcpy(raw + (role == 5 ? 16 : 8), &other, 4);
		put32(&g->r->buf, size);
		put(&g->r->buf, raw, size);
	}
	if (s->sample_type & PERF_SAMPLE_REGS_USER) {
		uint64_t regs[NR_REGS] = { 0 };
		bool have = role < 3 && pick8(g->c) % 4;

		put64(&g->r->buf, have ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE);
		if (have) {
			regs[7] = 0x7ffd0000 + pick8(g->c) * 8;	/* sp */
			regs[8] = pick_ip(g, false);			/* ip */
			regs[6] = regs[7] + 64;				/* bp */
			put(&g->r->buf, regs, sizeof(regs));
		}
	}
	if (s->sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = role < 3 ? (pick8(g->c) % 8) * 8 : 0, word;

		put64(&g->r->buf, size);
		for (uint64_t i = 0; i < size / 8; i++) {
			word = i & 1 ? pick_ip(g, false) : 0x7ffd0000 + i * 8;
			put64(&g->r->buf, word);
		}
		if (size)
			put64(&g->r->buf, size - (pick8(g->c) % 2) * 8);
	}
	end_record(g, at);
}

/* A STACK_SAMPLE naming a stack of the table (or none, or one never defined). */
static void stack_sample(struct gen *g, unsigned int role, uint32_t cpu, uint32_t tid,
			 uint32_t other)
{
	struct wp_stack_sample ss = {
		.misc = role == 1 ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		.id = role == 6 ? 7777 : event_id(g->s->id_base, role, cpu),
		.pid = pid_of(tid), .tid = tid, .cpu = cpu, .thread = other,
	};
	uint8_t b;

	ss.time = tick(g);
	/* A wake-up's interrupt context, any of them, as the kernel nests them. */
	ss.flags = pick8(g->c) & (WP_STACK_SAMPLE_IRQ | WP_STACK_SAMPLE_HARDIRQ |
				   WP_STACK_SAMPLE_SOFTIRQ | WP_STACK_SAMPLE_NMI);
	b = pick8(g->c);

	ss.stack = b >= 250 ? WP_NO_STACK : g->stacks ? b % (g->stacks + 2) : b;
	note_record(g);
	if (wp_stack_sample_append(&g->r->buf, &ss))
		abort();
}

static void any_sample(struct gen *g, unsigned int role, uint32_t cpu, uint32_t tid,
		       uint32_t other)
{
	if (g->s->table && pick8(g->c) % 4)
		stack_sample(g, role, cpu, tid, other);
	else
		sample(g, role, cpu, tid, other);
}

/* A switch record of tid on cpu; with -a, naming the other thread. */
static void switch_record(struct gen *g, uint32_t cpu, uint32_t tid, bool out, bool preempt,
			  uint32_t other)
{
	uint16_t misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
			(out && preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0);
	bool wide = g->s->cpu_wide;
	uint64_t time = tick(g);
	size_t at = begin_record(g, wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH, misc);

	if (wide) {
		put32(&g->r->buf, pid_of(other));
		put32(&g->r->buf, other);
	}
	sample_id(g, tid, time, cpu, event_id(g->s->id_base, 0, cpu));
	end_record(g, at);
}

/*
 * The CPU changes threads, as the kernel tells it: sched_switch, the
 * switch-out stack, the switch records (either may be missing: lost, or
 * gated).
 */
static void context_switch(struct gen *g)
{
	uint32_t cpu = below(g->c, g->s->nr_cpus), prev = g->current[cpu], next = pick_tid(g);
	uint8_t how = pick8(g->c);

	if (next == UINT32_MAX)
		next = 0;
	if (g->s->wakeups && how & 1)
		any_sample(g, 5, cpu, prev, next);
	if (how & 2 && prev)
		any_sample(g, 1, cpu, prev, 0);
	if (!(how & 4))
		switch_record(g, cpu, prev, true, how & 8, next);
	if (!(how & 16))
		switch_record(g, cpu, next, false, false, prev);
	g->current[cpu] = next;
}

static void comm(struct gen *g, uint32_t tid, bool exec)
{
	static const char *const names[] = { "fuzz", "w", "", "a name of sixteen+" };
	const char *name = names[pick8(g->c) % 4];
	uint64_t time = tick(g);
	size_t at = begin_record(g, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);

	put32(&g->r->buf, pid_of(tid));
	put32(&g->r->buf, tid);
	put(&g->r->buf, name, strlen(name) + 1);
	pad8(&g->r->buf);
	sample_id(g, tid, time, below(g->c, g->s->nr_cpus), event_id(g->s->id_base, 0, 0));
	end_record(g, at);
}

static void task(struct gen *g, uint32_t type, uint32_t tid, uint32_t parent)
{
	uint64_t time = tick(g);
	size_t at = begin_record(g, type, 0);

	put32(&g->r->buf, pid_of(tid));
	put32(&g->r->buf, pid_of(parent));
	put32(&g->r->buf, tid);
	put32(&g->r->buf, parent);
	put64(&g->r->buf, time);
	sample_id(g, tid, time, below(g->c, g->s->nr_cpus), event_id(g->s->id_base, 0, 0));
	end_record(g, at);
}

static void mmap2(struct gen *g, uint32_t pid)
{
	static const char *const files[] = {
		"/nonexistent/fuzz", "//anon", "[vdso]", "/memfd:jit (deleted)", "",
		"/nonexistent/lib.so",
	};
	const char *file = files[pick8(g->c) % 6];
	uint64_t time = tick(g);
	bool anon = file[0] != '/' || file[1] == '/' || file[1] == 'm';
	size_t at = begin_record(g, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);

	put32(&g->r->buf, pid);
	put32(&g->r->buf, pid);
	put64(&g->r->buf, anon ? ANON_BASE : USER_BASE + (pick8(g->c) & 1) * 0x1000);
	put64(&g->r->buf, 0x1000 * (1 + pick8(g->c) % 16));
	put64(&g->r->buf, (pick8(g->c) % 3) * 0x1000);
	put32(&g->r->buf, 8);	/* maj */
	put32(&g->r->buf, 1);	/* min */
	put64(&g->r->buf, 100 + pick8(g->c) % 4);	/* ino */
	put64(&g->r->buf, 0);	/* ino generation */
	put32(&g->r->buf, 5);	/* PROT_READ | PROT_EXEC */
	put32(&g->r->buf, 2);	/* MAP_PRIVATE */
	put(&g->r->buf, file, strlen(file) + 1);
	pad8(&g->r->buf);
	sample_id(g, pid, time, 0, WP_SYNTHESIZED_ID);
	end_record(g, at);
}

static void lost(struct gen *g)
{
	uint64_t time = tick(g);
	bool samples = pick8(g->c) & 1;
	size_t at = begin_record(g, samples ? PERF_RECORD_LOST_SAMPLES : PERF_RECORD_LOST, 0);

	if (!samples)
		put64(&g->r->buf, event_id(g->s->id_base, 0, 0));
	put64(&g->r->buf, pick8(g->c));
	sample_id(g, pick_tid(g), time, 0, event_id(g->s->id_base, 0, 0));
	end_record(g, at);
}

/* A thread that existed at the file's start, off-CPU in a stack, or not. */
static void thread_record(struct gen *g, uint32_t tid)
{
	uint16_t misc = pick8(g->c) % 4;
	size_t at = begin_record(g, WP_RECORD_THREAD, misc);

	put32(&g->r->buf, pid_of(tid));
	put32(&g->r->buf, tid);
	put64(&g->r->buf, START_NS);
	put64(&g->r->buf, pick8(g->c) & 1 ? START_NS - MS : 0);
	end_record(g, at);
	if (misc & WP_THREAD_OFF_CPU && pick8(g->c) & 1) {
		uint64_t now = g->now;

		g->now = START_NS;
		any_sample(g, 1, 0, tid, 0);
		g->now = now;
	}
}

static void cmdline(struct gen *g, uint32_t pid)
{
	static const char args[] = "fuzz\0--flag\0value";
	struct wp_cmdline c = { .pid = pid, .args = args };

	c.source = pick8(g->c) % 4;
	c.flags = pick8(g->c) & 1;
	c.time = tick(g);
	c.exec_time = c.time - 1000;
	c.len = (uint32_t)(pick8(g->c) % sizeof(args));

	note_record(g);
	if (wp_cmdline_append(&g->r->buf, &c))
		abort();
}

/* Stack table definitions: a DSO, places of every kind, stacks of them. */
static void table_record(struct gen *g)
{
	static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef };
	uint8_t what = pick8(g->c) % 4;

	note_record(g);
	if (what == 0) {
		struct wp_dso_def d = { .maj = 8, .min = 1, .build_id = build_id };

		d.dso = pick8(g->c) % 4;
		d.ino = 100 + pick8(g->c) % 4;
		d.build_id_size = pick8(g->c) % 2 ? 20 : 0;
		d.filename = pick8(g->c) % 2 ? "/nonexistent/fuzz" : "/nonexistent/lib.so";
		if (wp_dso_def_append(&g->r->buf, &d))
			abort();
	} else if (what == 1) {
		struct wp_place_def pl = { .place = g->places++ };

		pl.kind = pick8(g->c) % 5;
		pl.flags = pick8(g->c) & 1;
		pl.where = pick8(g->c) % 6;
		pl.addr = pl.kind == WP_PLACE_KERNEL ? pick_ip(g, true) : pick_ip(g, false);
		if (pl.kind == WP_PLACE_ANON)
			pl.where = TID_BASE + pl.where % 4;
		if (wp_place_def_append(&g->r->buf, &pl))
			abort();
	} else {
		uint32_t places[16];
		struct wp_stack_def d = { .stack = g->stacks++ };

		d.flags = pick8(g->c) % 16;
		d.nr_chain = pick8(g->c) % 5;
		d.nr_user = pick8(g->c) % 8;
		d.needed = pick8(g->c) * 64;
		/* Place ids already given, some beyond. */
		for (unsigned int i = 0; i < 16u; i++)
			places[i] = below(g->c, g->places + 2);
		d.ip = pick8(g->c) % 8 ? places[0] : UINT32_MAX;
		if (wp_stack_def_append(&g->r->buf, &d, places))
			abort();
	}
}

/* The tracepoints' formats, for the raw data that sample() writes. */
static void trace_formats(struct gen *g)
{
	static const char pid[] = "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n";
	static const struct {
		const char *name, *fields;
	} formats[] = {
		{ "sched_waking",
		  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		  "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n" },
		{ "sched_wakeup_new", pid },
		{ "sched_wakeup", pid },
		{ "sched_switch",
		  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		  "\tfield:pid_t next_pid;\toffset:16;\tsize:4;\tsigned:1;\n" },
	};

	for (unsigned int i = 0; i < 4; i++) {
		char text[512];
		int len = snprintf(text, sizeof(text), "name: %s\nID: %u\nformat:\n%s",
				   formats[i].name, 300 + i, formats[i].fields);
		size_t at = begin_record(g, WP_RECORD_TRACE_FORMAT, 0);

		put(&g->r->buf, text, (size_t)len + 1);
		end_record(g, at);
	}
}

static void round_record(struct gen *g)
{
	end_record(g, begin_record(g, WP_RECORD_ROUND, 0));
}

/* The records of one file, as the choices say. */
static void generate(struct choices *c, const struct shape *s, struct records *r,
		     unsigned int max)
{
	struct gen g = { .c = c, .s = s, .r = r, .now = START_NS };
	unsigned int n = 0;

	if (s->wakeups)
		trace_formats(&g);
	if (s->rotated) {
		/* A rotated file's start: the threads alive, some off-CPU. */
		unsigned int k = pick8(c) % (NR_TIDS + 1);

		for (unsigned int i = 0; i < k; i++)
			thread_record(&g, TID_BASE + i);
	}
	for (unsigned int i = 0; i < s->nr_cpus; i++)
		g.current[i] = TID_BASE + i;
	while (c->n && n < max && r->n < MAX_RECORDS) {
		uint8_t op = pick8(c);
		uint32_t cpu = below(c, s->nr_cpus), tid = g.current[cpu];

		n++;
		switch (op % 20) {
		case 0: case 1: case 2: case 3: case 4:
			context_switch(&g);
			break;
		case 5: case 6: case 7:
			any_sample(&g, 0, cpu, tid, 0);
			break;
		case 8:
			if (s->wakeups) {
				uint32_t woken = pick_tid(&g), role, on;

				any_sample(&g, 2, cpu, tid, woken);
				role = pick8(c) & 1 ? 4 : 3;
				on = below(c, s->nr_cpus);
				any_sample(&g, role, on, woken, woken);
			}
			break;
		case 9:
			task(&g, PERF_RECORD_FORK, pick_tid(&g), tid);
			break;
		case 10:
			task(&g, PERF_RECORD_EXIT, pick_tid(&g), tid);
			break;
		case 11: {
			uint32_t who = pick_tid(&g);

			comm(&g, who, pick8(c) & 1);
			break;
		}
		case 12:
			mmap2(&g, pid_of(pick_tid(&g)));
			break;
		case 13:
			lost(&g);
			break;
		case 14:
			round_record(&g);
			break;
		case 15:
			thread_record(&g, pick_tid(&g));
			break;
		case 16:
			cmdline(&g, pid_of(pick_tid(&g)));
			break;
		case 17:
			if (s->table)
				table_record(&g);
			else
				any_sample(&g, 6, cpu, tid, 0);
			break;
		case 18: {
			uint32_t role = pick8(c) % 7, who = pick_tid(&g), other = pick_tid(&g);

			any_sample(&g, role, cpu, who, other);
			break;
		}
		case 19: {
			/* A record of a type no writer makes, or an empty one. */
			uint32_t type = pick8(c);
			size_t at = begin_record(&g, type, pick16(c));

			for (unsigned int k = pick8(c) % 4; k; k--)
				put64(&r->buf, pick32(c));
			end_record(&g, at);
			break;
		}
		}
	}
	round_record(&g);
}

static void tlv(struct wp_buf *b, uint32_t tag, const void *p, size_t n)
{
	put32(b, tag);
	put32(b, (uint32_t)n);
	put(b, p, n);
	pad8(b);
}

static void event_tlv(struct wp_buf *b, const struct shape *s, const char *name,
		      unsigned int role, uint32_t type, uint64_t config, uint64_t period)
{
	struct perf_event_attr attr = {
		.type = type, .size = PERF_ATTR_SIZE_VER0, .config = config,
		.sample_period = period, .sample_type = s->sample_type,
	};
	struct wp_buf t = { 0 };
	char n[32] = { 0 };

	snprintf(n, sizeof(n), "%s", name);
	put(&t, n, sizeof(n));
	put32(&t, role);
	put32(&t, PERF_ATTR_SIZE_VER0);
	put32(&t, s->nr_cpus);
	put32(&t, 0);
	put(&t, &attr, PERF_ATTR_SIZE_VER0);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		put64(&t, event_id(s->id_base, role, cpu));
	tlv(b, 9, t.data, t.len);
	wp_buf_release(&t);
}

static void header(struct wp_buf *out, const struct shape *s, uint32_t version)
{
	struct wp_buf m = { 0 };
	uint64_t clock[3] = { 1, START_NS, 1700000000ULL * 1000 * MS };
	uint64_t format[4] = { s->sample_type, s->callgraph == 2 ? REGS_MASK : 0,
			       (uint64_t)(s->callgraph == 2 ? 64 : 0) | (uint64_t)s->callgraph << 32,
			       MS };
	uint32_t system[2] = { s->nr_cpus, 4096 };
	uint64_t target[2] = { s->cpu_wide ? 3 : s->rotated ? 1 : 0, s->flags };
	static const char cmd[] = "wallprof\0record\0--\0fuzz";

	clock[0] = 1;	/* clockid 1, reserved 0 */
	tlv(&m, 1, clock, sizeof(clock));
	tlv(&m, 2, "fuzz", 5);
	tlv(&m, 3, "0.0.0-fuzz", 11);
	tlv(&m, 4, "x86_64", 7);
	tlv(&m, 5, cmd, sizeof(cmd));
	tlv(&m, 6, format, sizeof(format));
	tlv(&m, 7, system, sizeof(system));
	tlv(&m, 8, target, sizeof(target));
	tlv(&m, 10, "00000000-0000-0000-0000-000000000000", 37);
	event_tlv(&m, s, "cpu-clock", 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, MS);
	if (s->flags & WP_META_OFFCPU_STACKS)
		event_tlv(&m, s, "context-switches", 1, PERF_TYPE_SOFTWARE,
			  PERF_COUNT_SW_CONTEXT_SWITCHES, 1);
	if (s->wakeups) {
		static const char *const names[] = {
			"sched:sched_waking", "sched:sched_wakeup_new", "sched:sched_wakeup",
			"sched:sched_switch",
		};

		for (unsigned int i = 0; i < 4; i++)
			event_tlv(&m, s, names[i], 2 + i, PERF_TYPE_TRACEPOINT, 300 + i, 1);
	}
	put(out, "WALLPROF", 8);
	put32(out, version);
	put32(out, 0x01020304);
	put64(out, m.len);
	put(out, m.data, m.len);
	wp_buf_release(&m);
}

static void block(struct wp_buf *out, uint32_t type, const void *p, size_t n)
{
	put32(out, type);
	put32(out, 0);
	put64(out, n);
	put64(out, n);
	put(out, p, n);
	pad8(out);
}

/* A NAMES block for some of the places (wallprof-data(5), BLOCKS). */
static void names_block(struct wp_buf *out, struct choices *c, uint32_t nr_places)
{
	static const char strings[] = "fuzz_inner\0fuzz_outer\0fuzz.c:3\0fuzz.h";
	struct wp_buf b = { 0 };
	uint32_t np = nr_places ? 1 + below(c, nr_places < 8 ? nr_places : 8) : 1, nf = 0;
	uint32_t frames[8];

	for (uint32_t i = 0; i < np; i++) {
		frames[i] = 1 + pick8(c) % 3;
		nf += frames[i];
	}
	put32(&b, np);
	put32(&b, nf);
	put32(&b, pick8(c) == 255 ? 9 : 4);	/* now and then, more than there are */
	put32(&b, 0);
	put64(&b, sizeof(strings));
	for (uint32_t i = 0, first = 0; i < np; i++) {
		put32(&b, pick8(c) == 255 ? i : i * 2 % (nr_places + 1));
		put32(&b, first);
		first += frames[i];
	}
	for (uint32_t i = 0; i < nf; i++) {
		put32(&b, pick8(c) % 3);	/* flags */
		put32(&b, pick8(c) % 5 == 4 ? UINT32_MAX : i % 4);
		put32(&b, pick8(c) % 2 ? 2 : UINT32_MAX);
		put32(&b, 3);
		put32(&b, pick8(c));
		put32(&b, 0);
		put64(&b, 0x100 * i);
	}
	put(&b, strings, sizeof(strings));
	pad8(&b);
	block(out, 5, b.data, b.len);
	wp_buf_release(&b);
}

static void pick_shape(struct choices *c, struct shape *s)
{
	uint8_t a = pick8(c), b = pick8(c);

	memset(s, 0, sizeof(*s));
	s->table = a & 1;
	s->cpu_wide = a & 2;
	s->wakeups = a & 4;
	s->rotated = a & 8;
	s->callgraph = (a >> 4) % 3;
	s->nr_cpus = 1 + b % MAX_CPUS;
	s->id_base = b & 0x80 ? 1000 : 100;
	s->sample_type = BASE_TYPE;
	if (s->callgraph)
		s->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->callgraph == 2)
		s->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (s->wakeups)
		s->sample_type |= PERF_SAMPLE_RAW;
	s->flags = WP_META_KERNEL_SAMPLES | WP_META_SWITCHES;
	if (s->callgraph)
		s->flags |= WP_META_KERNEL_STACKS | (b & 0x40 ? 0 : WP_META_OFFCPU_STACKS);
	if (s->cpu_wide)
		s->flags |= WP_META_CPU_WIDE;
	if (s->wakeups)
		s->flags |= WP_META_WAKEUPS | (b & 0x20 ? WP_META_WAKEUPS_GATED : 0);
	if (s->table)
		s->flags |= WP_META_STACK_TABLE;
}

/* Change one field of a record: an aligned u32 or u64 of it. */
static void mutate(struct records *r, struct choices *c)
{
	static const uint64_t values[] = {
		0, 1, UINT32_MAX, 0x80000000, TID_BASE, TID_BASE + 17, TID_BASE + NR_TIDS,
		START_NS, START_NS + 50 * MS, UINT64_MAX, 100, 1000, 7777, MAX_CPUS,
	};
	uint8_t *rec, how = pick8(c);
	struct perf_event_header h;
	size_t i = below(c, (uint32_t)r->n), at;
	uint64_t v = values[how % (sizeof(values) / sizeof(values[0]))];

	rec = r->buf.data + r->off[i];
	memcpy(&h, rec, sizeof(h));
	/* The header's type or misc too, now and then; never its size. */
	if (how & 0x80) {
		if (how & 1)
			h.misc ^= (uint16_t)(1u << (pick8(c) % 16));
		else
			h.type = (uint32_t)v;
		memcpy(rec, &h, sizeof(h));
		return;
	}
	at = sizeof(h) + (size_t)pick8(c) * 4;
	if (at + (how & 0x40 ? 8 : 4) > h.size)
		return;
	if (how & 0x40)
		memcpy(rec + at, &v, 8);
	else
		memcpy(rec + at, &v, 4);
}

/* File a's records with some of b's grafted in, then mutated, cut into blocks. */
static void assemble(struct wp_buf *file, struct choices *c, struct records *a,
		     const struct records *b)
{
	size_t graft_at = a->n ? below(c, (uint32_t)a->n + 1) : 0;
	size_t from = b->n ? below(c, (uint32_t)b->n) : 0;
	size_t count = b->n ? below(c, MAX_GRAFT) : 0, blocks = 1 + pick8(c) % 4;
	struct wp_buf all = { 0 };
	size_t start = 0, nr = 0, off[2 * (MAX_RECORDS + MAX_GRAFT + 8)];

	for (unsigned int k = pick8(c) % 8; k; k--)
		if (a->n)
			mutate(a, c);
	/* Records in order, b's slice at graft_at. */
	for (size_t i = 0; i <= a->n; i++) {
		if (i == graft_at)
			for (size_t j = from; j < b->n && j < from + count; j++) {
				size_t end = j + 1 < b->n ? b->off[j + 1] : b->buf.len;

				off[nr++] = all.len;
				put(&all, b->buf.data + b->off[j], end - b->off[j]);
			}
		if (i < a->n) {
			size_t end = i + 1 < a->n ? a->off[i + 1] : a->buf.len;

			off[nr++] = all.len;
			put(&all, a->buf.data + a->off[i], end - a->off[i]);
		}
	}
	/* Blocks end at record boundaries. */
	for (size_t k = 1; k <= blocks; k++) {
		size_t end = k == blocks || !nr ? all.len : off[below(c, (uint32_t)nr)];

		if (end < start)
			continue;
		block(file, 1, all.data + start, end - start);
		start = end;
	}
	wp_buf_release(&all);
}

/* The report's options, as fuzz-report takes them. */
static void report(const char *path, uint8_t knobs, uint32_t path_pick)
{
	struct wp_view_opts plain = { .mode = WP_MODE_WALL, .sort = WP_SORT_WALL, .top = 10,
				      .unit_ns = 1000, .thread_root = true };
	struct wp_view_opts vo = plain;
	struct wp_analysis_opts ao = { 0 };
	FILE *out = fuzz_sink();
	struct wp_analysis an;
	struct wp_view v;

	ao.lines = knobs & 1;
	ao.no_kernel = knobs & 2;
	ao.no_user = knobs & 4;
	if (knobs & 8) {
		ao.has_window = true;
		ao.window_start_s = 0.001;
		ao.window_end_s = 0.05;
	}
	ao.frame_info = true;
	ao.keep_timeline = true;	/* the trace, the wait-for graph, the critical path */
	ao.no_cache = true;
	if (wp_analysis_run(path, &ao, &an))
		return;
	/* A thread's path over its window, or over part of the recording. */
	fuzz_critical_path(&an, &plain, out, path_pick, knobs & 64 ? START_NS + 2 * MS : 0,
			   knobs & 64 ? START_NS + 30 * MS : UINT64_MAX);
	if (!wp_view_init(&v, &an, &plain)) {
		for (const struct wp_format *f = wp_formats; f->name; f++)
			f->write(&v, out);
		wp_view_release(&v);
	}
	vo.mode = (enum wp_mode)(knobs % 6);
	vo.sort = (enum wp_sort)((knobs >> 3) % 7);
	vo.wakers = knobs & 2;
	vo.unit_ns = knobs & 32 ? 1 : 1000000;
	vo.per_thread = true;
	vo.by = (enum wp_group_by)((knobs >> 1) % 3);
	vo.mode_given = knobs & 16;
	if (!wp_view_init(&v, &an, &vo)) {
		for (const struct wp_format *f = wp_formats; f->name; f++)
			f->write(&v, out);
		wp_view_release(&v);
	}
	wp_analysis_release(&an);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct choices c = { data, size };
	struct records *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct shape sa, sb;
	struct wp_buf file = { 0 };
	uint8_t knobs = pick8(&c), ends = pick8(&c);
	uint32_t version;
	struct wp_summary sum = { 0 };

	if (!a || !b)
		abort();
	pick_shape(&c, &sa);
	pick_shape(&c, &sb);
	/* The other file first, a few records, so that the rest is this one's. */
	generate(&c, &sb, b, 1 + pick8(&c) % 48);
	generate(&c, &sa, a, MAX_RECORDS);
	version = sa.table ? 2 : 1;
	if (ends & 1)
		version = 3 - version;	/* stack table records unflagged, or the reverse */
	header(&file, &sa, version);
	assemble(&file, &c, a, b);
	if (sa.table && ends & 2)
		names_block(&file, &c, 12);
	if (ends & 4) {
		static const char ksyms[] =
			"ffffffff81000000 fuzz_entry\nffffffff81000100 schedule\n"
			"ffffffff81000200 __schedule\nffffffff81000300 __traceiter_sched_switch\n"
			"ffffffff81000400 perf_trace_sched_switch\nffffffff81000500 do_syscall_64\n"
			"ffffffff81000600 __cond_resched\nffffffff81000700 do_task_dead\n"
			"ffffffff81000800 pipe_read\nffffffff81000900 try_to_wake_up\n"
			"ffffffff81000a00 perf_tp_event\nffffffff81000b00 trace_event_raw_event\n";

		block(&file, 3, ksyms, sizeof(ksyms) - 1);
	}
	if (!(ends & 8)) {
		/* Mostly after the last record, as a recording ends. */
		sum.end_clock_ns = (ends >> 4 ? a->last_ns : START_NS) + (ends >> 4) * MS;
		sum.records = a->n;
		sum.stop_reason = sa.rotated ? 4 : 2;
		sum.exit_status = -1;
		block(&file, 2, &sum, sizeof(sum));
	}
	/* WP_FUZZ_SAVE=PATH keeps the file built, for report --dump. */
	if (getenv("WP_FUZZ_SAVE")) {
		FILE *f = fopen(getenv("WP_FUZZ_SAVE"), "we");

		if (f) {
			fwrite(file.data, 1, file.len, f);
			fclose(f);
		}
	}
	report(fuzz_file(file.data, file.len), knobs, (uint32_t)(knobs >> 5) * 16 + (ends >> 4));
	wp_buf_release(&file);
	wp_buf_release(&a->buf);
	wp_buf_release(&b->buf);
	free(a);
	free(b);
	return 0;
}
