/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rotate.c: --rotate and --flight-recorder: a recording cut into complete files by time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "closing.h"
#include "layout.h"
#include "log.h"
#include "order.h"
#include "quote.h"
#include "rotate.h"
#include "synth.h"
#include "timeline.h"
#include "u64map.h"
#include "util.h"

/*
 * Threads that left the timeline this long ago are forgotten (their late
 * records are in by then); the model is pruned at most once a second.
 */
#define FORGET_AFTER_NS (2ULL * NSEC_PER_SEC)

/*
 * A switch-out sample is the switch-out's when this close to it (the
 * tracepoint fires a little before the switch record; report matches
 * them the same way).
 */
#define SWITCH_STACK_LAG_NS (2ULL * 1000 * 1000)

/* What every file restates of a process. */
struct st_proc {
	uint32_t pid;
	/* a thread of it was seen alive: once none is, it is gone */
	bool had_threads;
	bool alive;			/* one is, at the last prune */
	/*
	 * The time of its latest record: one that no prune saw alive (it
	 * came and went between two, or a record of it came late) is gone
	 * FORGET_AFTER_NS after.
	 */
	uint64_t seen;
	struct wp_buf maps;		/* its executable MMAP2 records, copied */
	struct wp_buf cmdline;		/* its last CMDLINE record, or empty */
};

/* A thread's latest switch-out sample, a copy: for a file that begins in that wait. */
struct st_stack {
	uint32_t tid;
	bool keep;			/* at a prune */
	uint64_t time;
	struct wp_buf rec;
};

/*
 * What is alive, as of the records applied so far.  Who lives and in
 * which state is the timeline's (timeline.h), fed the records that tell
 * (switches, forks, names, exits, THREAD and LOST records) in time order
 * through an order queue (order.h); what a file must restate besides
 * (mappings, command lines, stack copies, the stack table) is kept here.
 */
struct model {
	struct wp_timeline *tl;
	struct wp_order *order;
	struct st_proc *procs;
	size_t nr_procs, cap_procs;
	struct wp_u64map proc_index;	/* pid -> index */
	struct st_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct wp_u64map stack_index;	/* tid -> index */
	uint64_t pruned;		/* when it was last pruned */
	uint64_t latest;		/* the latest time of a record applied */
	/*
	 * A live recording's stack table so far (DSO, PLACE and STACK
	 * records): each file begins with it, as the samples of any file may
	 * name a stack first seen in an earlier one.  It grows with the
	 * distinct stacks, not with time.
	 */
	struct wp_buf defs;
};

/*
 * Records kept by the flight recorder: one drained block's, compressed
 * (stack copies shrink some 100 times, as in the file).
 */
struct chunk {
	struct chunk *next;
	uint64_t min_time, max_time;	/* of its timed records */
	/* its timed records before this are the model's already (a file's start) */
	uint64_t applied_until;
	uint64_t round_ns;		/* every record before it is in this chunk or earlier */
	struct wp_summary counts;	/* of its records */
	size_t raw_len;
	size_t len;			/* of the zstd frame in data */
	uint8_t data[];
};

/* Level 1: the file's default, fast enough for the writer thread. */
#define CHUNK_ZSTD_LEVEL 1

struct id_role {
	uint64_t id;
	uint32_t role;
};

struct wp_rotate {
	struct wp_sink sink;		/* first: the sink is the rotation */
	struct wp_rotate_opts o;
	const struct wp_meta *meta;
	struct wp_sample_format fmt;
	struct id_role *roles;
	size_t nr_roles, cap_roles;
	struct wp_buf prelude;
	struct model m;

	/* The file being written (--rotate), and its span. */
	struct wp_writer *w;
	uint64_t start_ns, end_ns;
	uint64_t complete_ns;		/* it holds every record before (of its span) */
	struct wp_summary counts;
	struct wp_buf out;		/* records for its next block */
	struct wp_buf pending;		/* records of later files, until it closes */

	/* --flight-recorder */
	struct chunk *head, *tail;
	size_t kept_bytes;		/* compressed */
	size_t kept_peak;		/* the most kept_bytes has been */
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	struct wp_buf zbuf;		/* a chunk being compressed */
	struct wp_buf raw;		/* a chunk's records, decompressed */
	struct wp_buf rest;		/* a block's records but the prelude's */
	struct wp_buf deferred;		/* offsets of the switch-out samples put aside */
	uint64_t kept_since;		/* the state of the model is as of then */
	uint64_t evicted;
	uint64_t dump_asked;		/* atomic: a time, or 0 */

	unsigned int nr_files;		/* written */
	unsigned int numbered;		/* names used, written or not */
	char *first_name, *last_name;
	uint64_t bytes_done;		/* of the files closed */
	int err;
};

char *wp_rotate_name(const char *path, unsigned int n)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	char *name;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	if (asprintf(&name, "%.*s.%04u%s", (int)(dot - path), path, n, dot) < 0)
		return NULL;
	return name;
}

static int id_role_cmp(const void *a, const void *b)
{
	const struct id_role *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The role of a sample's event (a raw sample, or a live recording's STACK_SAMPLE), or -1. */
static int sample_role(const struct wp_rotate *r, const struct perf_event_header *h)
{
	struct id_role key, *hit;

	if (wp_record_event_id(&r->fmt, h, &key.id))
		return -1;
	hit = r->nr_roles ? bsearch(&key, r->roles, r->nr_roles, sizeof(key), id_role_cmp) : NULL;
	return hit ? (int)hit->role : -1;
}

/* The time of a record, or 0 when it has none. */
static uint64_t record_time(const struct wp_rotate *r, const struct perf_event_header *h)
{
	return wp_record_time(&r->fmt, h);
}

/* Count a record into a file's summary, as the drain counts it. */
static void count_record(const struct wp_rotate *r, struct wp_summary *c,
			 const struct perf_event_header *h)
{
	/* A live recording's sample left for report to unwind (its unwinder fell behind). */
	if (h->type == PERF_RECORD_SAMPLE && (r->meta->flags & WP_META_STACK_TABLE))
		c->raw_samples++;
	wp_summary_count(c, h, wp_record_kind_has(h->type, WP_KIND_SAMPLE) ?
			 sample_role(r, h) : -1);
}

/* The model: what a file must say of what lives. */

static struct st_proc *proc_get(struct model *m, uint32_t pid, bool create)
{
	uint64_t i;

	if (wp_u64map_get(&m->proc_index, pid, &i))
		return &m->procs[i];
	if (!create || WP_GROW(m->procs, m->cap_procs, m->nr_procs + 1))
		return NULL;
	if (wp_u64map_put(&m->proc_index, pid, m->nr_procs))
		return NULL;
	m->procs[m->nr_procs] = (struct st_proc){ .pid = pid };
	return &m->procs[m->nr_procs++];
}

static void proc_del(struct model *m, uint32_t pid)
{
	uint64_t i;

	if (!wp_u64map_get(&m->proc_index, pid, &i))
		return;
	wp_buf_release(&m->procs[i].maps);
	wp_buf_release(&m->procs[i].cmdline);
	wp_u64map_del(&m->proc_index, pid);
	if (i != m->nr_procs - 1) {
		m->procs[i] = m->procs[m->nr_procs - 1];
		wp_u64map_put(&m->proc_index, m->procs[i].pid, i);
	}
	m->nr_procs--;
}

static void stack_del(struct model *m, size_t i)
{
	wp_buf_release(&m->stacks[i].rec);
	wp_u64map_del(&m->stack_index, m->stacks[i].tid);
	if (i != m->nr_stacks - 1) {
		m->stacks[i] = m->stacks[m->nr_stacks - 1];
		wp_u64map_put(&m->stack_index, m->stacks[i].tid, i);
	}
	m->nr_stacks--;
}

/* Keep an executable mapping; the ones it covers are gone. */
static int proc_map(struct st_proc *p, const struct perf_event_header *h,
		    const struct wp_mmap2 *mm)
{
	struct wp_buf kept = { 0 };
	int err = 0;

	for (size_t off = 0; !err && off < p->maps.len;) {
		const struct perf_event_header *o = (const void *)(p->maps.data + off);
		struct wp_mmap2 om;

		off += o->size;
		if (!wp_mmap2_parse(o, &om) &&
		    (om.addr >= mm->addr + mm->len || om.addr + om.len <= mm->addr))
			err = wp_buf_append(&kept, o, o->size);
	}
	if (!err)
		err = wp_buf_append(&kept, h, h->size);
	if (err) {
		wp_buf_release(&kept);
		return err;
	}
	wp_buf_release(&p->maps);
	p->maps = kept;
	return 0;
}

/* Set the pid and tid of a copied kernel record (body and sample_id trailer). */
static void retarget(const struct wp_sample_format *fmt, struct perf_event_header *h,
		     uint32_t pid, uint32_t tid, uint64_t time)
{
	size_t idsize = wp_sample_id_size(fmt);
	struct wp_sample_id sid;

	if (pid != UINT32_MAX && h->size >= sizeof(*h) + 8) {
		memcpy((uint8_t *)h + sizeof(*h), &pid, 4);
		memcpy((uint8_t *)h + sizeof(*h) + 4, &tid, 4);
	}
	if (idsize && h->size >= sizeof(*h) + idsize && !wp_sample_id_parse(fmt, h, &sid)) {
		if (pid != UINT32_MAX) {
			sid.pid = pid;
			sid.tid = tid;
		}
		if (time)
			sid.time = time;
		wp_sample_id_write(fmt, &sid, (uint8_t *)h + h->size - idsize);
	}
}

/*
 * A new process has its parent's mappings and command line, and none of
 * what an earlier process of its pid had.
 */
static int proc_fork(struct wp_rotate *r, struct st_proc *child, uint32_t ppid)
{
	struct st_proc *parent = proc_get(&r->m, ppid, false);
	int err = 0;

	if (parent == child)
		return 0;
	child->maps.len = 0;
	wp_buf_release(&child->cmdline);
	if (!parent)
		return 0;
	err = wp_buf_append(&child->maps, parent->maps.data, parent->maps.len);
	/* The copies are the child's: its pid and tid. */
	for (size_t off = 0; !err && off < child->maps.len;) {
		struct perf_event_header *h = (void *)(child->maps.data + off);

		off += h->size;
		retarget(&r->fmt, h, child->pid, child->pid, 0);
	}
	if (!err && parent->cmdline.len) {
		struct wp_cmdline c;

		if (!wp_cmdline_parse((const void *)parent->cmdline.data, &c)) {
			c.pid = child->pid;
			err = wp_cmdline_append(&child->cmdline, &c);
		}
	}
	return err;
}

/*
 * A switch-out stack sample (is_switch_stack()): its thread's latest, a
 * copy.  Records come ring by ring: the latest by time is the one.
 */
static int keep_switch_stack(struct wp_rotate *r, const struct perf_event_header *h, uint64_t time)
{
	struct model *m = &r->m;
	struct wp_stack_sample ss;
	struct st_stack *s;
	uint32_t pid, tid;
	uint64_t i;

	if (h->type == WP_RECORD_STACK_SAMPLE) {
		if (wp_stack_sample_parse(h, &ss))
			return 0;
		tid = ss.tid;
	} else if (wp_sample_thread(&r->fmt, h, &pid, &tid)) {
		return 0;
	}
	if (!tid)
		return 0;	/* the idle task */
	if (wp_u64map_get(&m->stack_index, tid, &i)) {
		s = &m->stacks[i];
		if (time < s->time)
			return 0;
	} else {
		if (WP_GROW(m->stacks, m->cap_stacks, m->nr_stacks + 1) ||
		    wp_u64map_put(&m->stack_index, tid, m->nr_stacks))
			return -ENOMEM;
		s = &m->stacks[m->nr_stacks++];
		*s = (struct st_stack){ .tid = tid };
	}
	s->time = time;
	s->rec.len = 0;
	return wp_buf_append(&s->rec, h, h->size);
}

/*
 * A record the model follows, in time order (the order queue's callback):
 * what it says of a process here, and of every thread to the timeline.
 */
static int model_deliver(const struct perf_event_header *h, const struct wp_sample *sample,
			 uint64_t time, void *arg)
{
	struct wp_rotate *r = arg;
	struct model *m = &r->m;
	struct wp_task_event te;
	struct wp_cmdline cl;
	struct st_proc *p;
	struct wp_mmap2 mm;
	struct wp_comm c;
	int err = 0;

	(void)sample;	/* none is queued */
	if (time > m->latest)
		m->latest = time;
	switch (h->type) {
	case WP_RECORD_CMDLINE:
		if (wp_cmdline_parse(h, &cl))
			break;
		if (!(p = proc_get(m, cl.pid, true)))
			return -ENOMEM;
		p->seen = m->latest;
		wp_buf_release(&p->cmdline);
		err = wp_buf_append(&p->cmdline, h, h->size);
		break;
	case PERF_RECORD_COMM:
		/* A new program: the old one's mappings are gone. */
		if (!wp_comm_parse(h, &c) && c.exec && (p = proc_get(m, c.pid, false))) {
			p->seen = m->latest;
			p->maps.len = 0;
		}
		break;
	case PERF_RECORD_MMAP2:
		if (wp_mmap2_parse(h, &mm) || !(mm.prot & PROT_EXEC))
			break;
		if (!(p = proc_get(m, mm.pid, true)))
			return -ENOMEM;
		p->seen = m->latest;
		err = proc_map(p, h, &mm);
		break;
	case PERF_RECORD_FORK:
		if (wp_task_event_parse(h, &te) || te.pid == te.ppid || te.pid != te.tid)
			break;
		if (!(p = proc_get(m, te.pid, true)))
			return -ENOMEM;
		p->seen = m->latest;
		err = proc_fork(r, p, te.ppid);
		break;
	}
	return err ? err : wp_timeline_record(m->tl, h, time);
}

/* Whether a copied switch-out sample is of the wait (or run) that began at since. */
static bool stack_of(const struct st_stack *s, uint64_t since)
{
	return s->time + SWITCH_STACK_LAG_NS >= since;
}

static int mark_live(void *arg, const struct wp_tl_thread *t, const struct wp_tl_state *st)
{
	struct model *m = arg;
	struct st_proc *p = proc_get(m, t->pid, false);
	uint64_t i;

	if (p)
		p->had_threads = p->alive = true;
	/* Its current wait's, or one taken since it last ran, whose switch-out is to come. */
	if (wp_u64map_get(&m->stack_index, t->tid, &i))
		m->stacks[i].keep = stack_of(&m->stacks[i], st->off ? st->off_since : st->since);
	return 0;
}

/*
 * At most once a second, as of now: the threads that left long ago
 * forgotten, the processes whose threads all did, and the stack copies of
 * waits since over.  A stack copy of a thread not seen yet (its records
 * still in the queue) stays a second.  A process that no prune saw with
 * a thread alive (most of them beside churn: a shell's /bin/true lives a
 * few milliseconds) goes when none lives and it has had no record for
 * FORGET_AFTER_NS: waiting for a thread seen alive, such processes stayed
 * for the whole recording, each with its mappings and command line.
 */
static int model_prune(struct wp_rotate *r, uint64_t now)
{
	struct model *m = &r->m;
	size_t forgotten;
	int err = 0;

	if (now < m->pruned + NSEC_PER_SEC)
		return 0;
	m->pruned = now;
	if (now > FORGET_AFTER_NS)
		err = wp_timeline_forget(m->tl, now - FORGET_AFTER_NS, &forgotten);
	if (err)
		return err;
	for (size_t i = 0; i < m->nr_procs; i++)
		m->procs[i].alive = false;
	for (size_t i = 0; i < m->nr_stacks; i++)
		m->stacks[i].keep = m->stacks[i].time + NSEC_PER_SEC > now;
	wp_timeline_each_live(m->tl, mark_live, m);
	for (size_t i = 0; i < m->nr_stacks;)
		if (m->stacks[i].keep)
			i++;
		else
			stack_del(m, i);	/* the last one moves here */
	for (size_t i = 0; i < m->nr_procs;) {
		const struct st_proc *p = &m->procs[i];

		if (p->alive || (!p->had_threads && p->seen + FORGET_AFTER_NS > now))
			i++;
		else
			proc_del(m, p->pid);	/* the last one moves here */
	}
	return 0;
}

/*
 * Records that every file begins with.  They come through
 * wp_rotate_prelude(), or, from a live recording's unwinder, among the
 * records: taken aside then, so that no file has them twice.
 */
static bool is_prelude_record(const struct perf_event_header *h)
{
	return wp_record_kind_has(h->type, WP_KIND_PRELUDE);
}

/*
 * The records the model follows: those that tell what lives (every
 * thread is announced by one of them: a FORK, an exec's COMM, or a
 * THREAD or COMM written at attach), who is off-CPU since when (switch
 * records), where records were lost, and the ROUNDs that let the queue
 * put them in order; the stack table's, taken as read.  And in which
 * stack: of the switch-out samples of a buffer only each thread's latest
 * is copied, so they are put aside (model_defer) and looked at newest
 * first once the buffer is done (model_apply_deferred).  On-CPU samples
 * are not followed: a file's start needs no more than the switches say.
 */
static bool is_model_record(const struct perf_event_header *h)
{
	return wp_record_kind_has(h->type, WP_KIND_STATE | WP_KIND_SWITCH) ||
	       h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES ||
	       h->type == WP_RECORD_ROUND;
}

static bool is_switch_stack(const struct wp_rotate *r, const struct perf_event_header *h)
{
	return wp_record_kind_has(h->type, WP_KIND_SAMPLE) &&
	       sample_role(r, h) == WP_EVENT_SWITCH_OUT;
}

/* Put aside a switch-out sample at offset off of the buffer being read. */
static int model_defer(struct wp_rotate *r, size_t off)
{
	uint64_t v = off;

	return wp_buf_append(&r->deferred, &v, sizeof(v));
}

/*
 * The switch-out samples of buf put aside, newest first: a thread's
 * latest is copied, the older ones only looked at.
 */
static int model_apply_deferred(struct wp_rotate *r, const uint8_t *buf)
{
	size_t n = r->deferred.len / sizeof(uint64_t);
	int err = 0;

	while (!err && n--) {
		const struct perf_event_header *h;
		uint64_t off;

		memcpy(&off, r->deferred.data + n * sizeof(off), sizeof(off));
		h = (const void *)(buf + off);
		err = keep_switch_stack(r, h, record_time(r, h));
	}
	r->deferred.len = 0;
	return err;
}

/* A record of the buffer being read, at offset at: to the model, or put aside. */
static int model_follow(struct wp_rotate *r, const struct perf_event_header *h, size_t at)
{
	if (wp_record_kind_has(h->type, WP_KIND_STACK_DEF))
		return wp_buf_append(&r->m.defs, h, h->size);
	if (is_model_record(h))
		return wp_order_push(r->m.order, h, NULL, 0);
	if (is_switch_stack(r, h))
		return model_defer(r, at);
	return 0;
}

/* The buffer is read (or failed with err): what was put aside, applied. */
static int model_follow_end(struct wp_rotate *r, const uint8_t *buf, int err)
{
	if (!err)
		err = model_apply_deferred(r, buf);
	r->deferred.len = 0;
	return err;
}

/*
 * The records of buf that the model follows, to it: those dated in
 * [from, to) (to 0: no end), and with timeless the timeless ones (a
 * chunk's go to the model once, with its last records).
 */
static int model_apply_all(struct wp_rotate *r, const uint8_t *buf, size_t len, uint64_t from,
			   uint64_t to, bool timeless)
{
	const struct perf_event_header *h;
	size_t off = 0, at;
	int err = 0;

	while (!err && (at = off, h = wp_record_next(buf, len, &off))) {
		uint64_t t = record_time(r, h);

		if (t ? t < from || (to && t >= to) : !timeless)
			continue;
		err = model_follow(r, h, at);
	}
	return model_follow_end(r, buf, err);
}

/*
 * The stack a thread off-CPU at time (a file's start) went off-CPU in at
 * off_since, dated then; its THREAD record says it is off-CPU.  After the
 * mappings, which unwinding it needs.
 */
static int emit_off_cpu_stack(struct wp_rotate *r, uint32_t tid, uint64_t off_since,
			      uint64_t time, struct wp_buf *out)
{
	const struct st_stack *s;
	struct perf_event_header *copy;
	uint64_t i, lag;

	if (!wp_u64map_get(&r->m.stack_index, tid, &i))
		return 0;
	s = &r->m.stacks[i];
	lag = s->time > off_since ? s->time - off_since : off_since - s->time;
	if (!s->rec.len || lag > SWITCH_STACK_LAG_NS)
		return 0;
	copy = wp_buf_reserve(out, s->rec.len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s->rec.data, s->rec.len);
	if (copy->type == WP_RECORD_STACK_SAMPLE)
		((struct wp_record_stack_sample *)copy)->time = time;
	else
		wp_sample_set_time(&r->fmt, copy, time);
	out->len += s->rec.len;
	return 0;
}

struct emit {
	struct wp_rotate *r;
	uint64_t time;
	struct wp_buf *out;
	struct wp_summary *c;
	bool stacks;		/* the second pass: the off-CPU threads' stacks */
};

/* A live thread as a file's start says it: THREAD and COMM, then its wait's stack. */
static int emit_thread(void *arg, const struct wp_tl_thread *t, const struct wp_tl_state *st)
{
	struct emit *e = arg;
	size_t at = e->out->len;
	struct perf_event_header *h;
	int err;

	if (!t->tid)
		return 0;	/* the idle task */
	if (e->stacks)
		return st->off && !st->uncertain ?
		       emit_off_cpu_stack(e->r, t->tid, st->off_since, e->time, e->out) : 0;
	err = wp_synth_thread(&e->r->fmt, (pid_t)t->pid, (pid_t)t->tid, t->comm, e->time, e->out);
	if (err)
		return err;
	e->c->synthesized += t->comm[0] ? 2 : 1;
	h = (void *)(e->out->data + at);
	if (st->uncertain)
		h->misc = WP_THREAD_UNCERTAIN;
	else if (st->off)
		h->misc = WP_THREAD_OFF_CPU | (st->preempted ? WP_THREAD_PREEMPTED : 0);
	return 0;
}

/*
 * The state of what lives at time, as records dated then; counted into
 * c.  Every record the model follows dated before time is in: the queue
 * hands them all to the timeline first.
 */
static int model_emit(struct wp_rotate *r, uint64_t time, struct wp_buf *out,
		      struct wp_summary *c)
{
	struct model *m = &r->m;
	struct emit e = { .r = r, .time = time, .out = out, .c = c };
	int err = wp_order_flush(m->order);

	if (!err && m->defs.len)
		err = wp_buf_append(out, m->defs.data, m->defs.len);
	if (!err)
		err = wp_timeline_each_live(m->tl, emit_thread, &e);
	for (size_t i = 0; !err && i < m->nr_procs; i++) {
		const struct st_proc *p = &m->procs[i];
		struct wp_cmdline cl;

		if (p->cmdline.len && !wp_cmdline_parse((const void *)p->cmdline.data, &cl)) {
			cl.time = time;
			err = wp_cmdline_append(out, &cl);
			c->synthesized++;
		}
		for (size_t off = 0; !err && off < p->maps.len;) {
			const struct perf_event_header *h = (const void *)(p->maps.data + off);
			struct perf_event_header *copy = wp_buf_reserve(out, h->size);

			off += h->size;
			if (!copy) {
				err = -ENOMEM;
				break;
			}
			memcpy(copy, h, h->size);
			retarget(&r->fmt, copy, UINT32_MAX, 0, time);
			out->len += h->size;
			c->synthesized++;
		}
	}
	e.stacks = true;
	if (!err)
		err = wp_timeline_each_live(m->tl, emit_thread, &e);
	return err;
}

/* The model's first state, for a recording described by meta. */
static int model_start(struct wp_rotate *r, const struct wp_meta *meta)
{
	struct wp_timeline_opts to = { .unknown_stack = WP_NO_STACK,
				       .unsampled_switch_stack = WP_NO_STACK };
	int err = wp_timeline_new(meta, &to, &r->m.tl);

	if (!err)
		err = wp_order_new(&r->fmt, model_deliver, r, NULL, &r->m.order);
	r->m.pruned = meta->start_clock_ns;
	return err;
}

static void model_release(struct model *m)
{
	for (size_t i = 0; i < m->nr_procs; i++) {
		wp_buf_release(&m->procs[i].maps);
		wp_buf_release(&m->procs[i].cmdline);
	}
	for (size_t i = 0; i < m->nr_stacks; i++)
		wp_buf_release(&m->stacks[i].rec);
	wp_buf_release(&m->defs);
	free(m->procs);
	free(m->stacks);
	wp_u64map_release(&m->proc_index);
	wp_u64map_release(&m->stack_index);
	wp_order_free(m->order);
	wp_timeline_free(m->tl);
}

/* Files. */

static void note_error(struct wp_rotate *r, int err)
{
	if (err && !r->err)
		r->err = err;
}

/* Files numbered before a free name is found, with skip_existing. */
#define SKIP_EXISTING_MAX 10000

/* The next file's name (malloc'ed), past those already there with skip_existing. */
static char *next_name(struct wp_rotate *r)
{
	char *name = wp_rotate_name(r->o.output, ++r->numbered);

	for (unsigned int i = 0; name && r->o.skip_existing && i < SKIP_EXISTING_MAX &&
	     access(name, F_OK) == 0; i++) {
		free(name);
		name = wp_rotate_name(r->o.output, ++r->numbered);
	}
	return name;
}

/* Start the next file, spanning from start: meta, prelude, state. */
static int file_open(struct wp_rotate *r, uint64_t start, struct wp_writer **out,
		     struct wp_summary *c)
{
	struct wp_meta meta = *r->meta;
	struct wp_buf state = { 0 };
	/* A name that failed is not tried again: the next file gets the next one. */
	char *name = next_name(r);
	int err;

	*out = NULL;
	memset(c, 0, sizeof(*c));
	if (!name)
		return -ENOMEM;
	err = wp_writer_open(name, r->o.force, r->o.compress_level, out);
	free(name);
	if (err)
		return err;
	r->nr_files++;
	meta.start_clock_ns = start;
	meta.start_realtime_ns = r->meta->start_realtime_ns + (start - r->meta->start_clock_ns);
	err = wp_writer_write_meta(*out, &meta);
	if (!err && r->prelude.len)
		err = wp_writer_write_records(*out, r->prelude.data, r->prelude.len);
	if (!err)
		err = model_emit(r, start, &state, c);
	if (!err && state.len)
		err = wp_writer_write_records(*out, state.data, state.len);
	wp_buf_release(&state);
	return err;
}

/*
 * Close a file at end: the session's closing blocks, the summary, its
 * name.  last, when given, is the whole recording's end.  complete_ns:
 * the file holds every record of its span before then, for a file whose
 * writer failed; it then ends there, and its summary says it was cut
 * short and why (a file that looked whole would show the time after the
 * cut as spent in whatever state its threads were last seen in).
 */
static int file_close(struct wp_rotate *r, struct wp_writer *w, struct wp_summary *c,
		      uint64_t end, uint32_t reason, const struct wp_summary *last,
		      uint64_t complete_ns)
{
	char *where = NULL;
	int err, e, werr;

	err = r->o.closing ? wp_closing_write(r->o.closing, w) : 0;
	c->exit_status = -1;
	c->stop_reason = reason;
	if (last) {
		c->exit_status = last->exit_status;
		c->stop_reason = last->stop_reason;
		c->lost_unreported = last->lost_unreported;
		c->rings_full_at_end = last->rings_full_at_end;
		c->cut_short_errno = last->cut_short_errno;
	}
	/* The first failed write, records or closing blocks. */
	werr = wp_writer_error(w);
	/* Not one record of its span: no file, rather than an empty one. */
	if (werr && !c->records) {
		wp_writer_abort(w);
		r->nr_files--;
		return err ? err : werr;
	}
	if (werr) {
		c->stop_reason = WP_STOP_ERROR;
		c->cut_short_errno = (uint32_t)-werr;
		if (complete_ns < end)
			end = complete_ns;
		if (!err)
			err = werr;
	}
	c->end_clock_ns = end;
	c->end_realtime_ns = r->meta->start_realtime_ns + (end - r->meta->start_clock_ns);
	e = wp_writer_write_summary(w, c);
	if (!err)
		err = e;
	r->bytes_done += wp_writer_bytes(w);
	e = wp_writer_commit_where(w, &where);
	if (!err)
		err = e;
	if (where && werr)
		wp_warn("'%s' was cut short at %.3f s by a write error (%s): it holds the "
			"records before", wp_quoted(where),
			(double)(end - r->meta->start_clock_ns) / 1e9, strerror(-werr));
	if (where) {
		wp_debug("wrote '%s', ending at %.3f s", wp_quoted(where),
			 (double)(end - r->meta->start_clock_ns) / 1e9);
		if (!r->first_name) {
			r->first_name = where;
		} else {
			free(r->last_name);
			r->last_name = where;
		}
	}
	return err;
}

/* --rotate: route the records of buf to the file of their time. */
static int route(struct wp_rotate *r, const uint8_t *buf, size_t len)
{
	const struct perf_event_header *h;
	size_t off = 0, at;
	int err = 0;

	while (!err && (at = off, h = wp_record_next(buf, len, &off))) {
		uint64_t t;

		if (is_prelude_record(h)) {
			/* The next files get it from the prelude, this one now. */
			err = wp_buf_append(&r->prelude, h, h->size);
			if (!err)
				err = wp_buf_append(&r->out, h, h->size);
			continue;
		}
		if (h->type == WP_RECORD_ROUND) {
			/*
			 * Both streams keep every ROUND: each stays ordered as
			 * order.h says; and the model's queue, which holds
			 * this file's records.
			 */
			err = wp_buf_append(&r->out, h, h->size);
			if (!err && r->pending.len)
				err = wp_buf_append(&r->pending, h, h->size);
			if (!err)
				err = model_follow(r, h, at);
			continue;
		}
		t = record_time(r, h);
		if (t && t >= r->end_ns) {
			err = wp_buf_append(&r->pending, h, h->size);
			continue;
		}
		/* Counted once written (flush_out): a full disk may keep only some. */
		err = model_follow(r, h, at);
		if (!err)
			err = wp_buf_append(&r->out, h, h->size);
	}
	return model_follow_end(r, buf, err);
}

/* Count into c the records of the first len bytes of buf, but the prelude's. */
static void count_written(const struct wp_rotate *r, struct wp_summary *c, const uint8_t *buf,
			  size_t len)
{
	const struct perf_event_header *h;
	size_t off = 0;

	while ((h = wp_record_next(buf, len, &off)))
		if (!is_prelude_record(h))
			count_record(r, c, h);
}

/*
 * Up to when the first len bytes of buf, records as the drain passes them
 * (a ROUND after each pass over the rings), hold every record, as far as
 * they tell (0: they do not): a pass reads every record dated before it
 * began, so each one's records are dated after every record before the
 * ROUND ahead of the pass before it.
 */
static uint64_t complete_until(const struct wp_rotate *r, const uint8_t *buf, size_t len)
{
	const struct perf_event_header *h;
	uint64_t safe = 0, before_last = 0, seen = 0;
	size_t off = 0;

	while ((h = wp_record_next(buf, len, &off))) {
		uint64_t t;

		if (h->type == WP_RECORD_ROUND) {
			if (before_last > safe)
				safe = before_last;
			before_last = seen;
		} else if ((t = record_time(r, h)) > seen) {
			seen = t;
		}
	}
	return safe;
}

static int flush_out(struct wp_rotate *r)
{
	int err = 0;

	if (r->out.len && r->w) {
		size_t kept;

		err = wp_writer_write_records(r->w, r->out.data, r->out.len);
		kept = err ? wp_writer_kept(r->w) : r->out.len;
		count_written(r, &r->counts, r->out.data, kept);
		if (err) {
			uint64_t t = complete_until(r, r->out.data, kept);

			if (t > r->complete_ns)
				r->complete_ns = t < r->end_ns ? t : r->end_ns;
		}
	}
	r->out.len = 0;
	return err;
}

/* Close the file at its end and start the next, with the records held for it. */
static int rotate_now(struct wp_rotate *r)
{
	struct wp_buf held = r->pending;
	int err;

	err = flush_out(r);
	if (!err)
		r->complete_ns = r->end_ns;	/* every record of its span is in */
	if (r->w) {
		int e = file_close(r, r->w, &r->counts, r->end_ns, WP_STOP_ROTATED, NULL,
				   r->complete_ns);

		r->w = NULL;
		if (!err)
			err = e;
	}
	memset(&r->pending, 0, sizeof(r->pending));
	r->start_ns = r->end_ns;
	r->complete_ns = r->start_ns;
	r->end_ns += r->o.rotate_ns;
	if (!err)
		err = model_prune(r, r->start_ns);
	if (!err)
		err = file_open(r, r->start_ns, &r->w, &r->counts);
	if (!err)
		err = route(r, held.data, held.len);
	wp_buf_release(&held);
	if (!err)
		err = flush_out(r);
	return err;
}

/* The records of a chunk, in r->raw (valid until the next call). */
static int chunk_records(struct wp_rotate *r, const struct chunk *k)
{
	size_t n;

	r->raw.len = 0;
	if (!wp_buf_reserve(&r->raw, k->raw_len))
		return -ENOMEM;
	n = ZSTD_decompressDCtx(r->dctx, r->raw.data, k->raw_len, k->data, k->len);
	if (ZSTD_isError(n) || n != k->raw_len)
		return -EIO;	/* our own bytes: cannot happen */
	r->raw.len = n;
	return 0;
}

/*
 * --flight-recorder: a file of the records kept, from kept_since to end.
 * A chunk all before end goes in as it is kept, compressed.
 */
static int dump(struct wp_rotate *r, uint64_t end, const struct wp_summary *last)
{
	uint64_t start = r->kept_since, from, complete;
	struct wp_summary c;
	struct wp_writer *w;
	struct wp_buf out = { 0 };
	int err, e;

	/*
	 * The state is as of the newest record let go; the file starts a
	 * window before its end: what the kept chunks hold from before that
	 * (a chunk is a drained block, which in a quiet recording spans
	 * seconds) goes into the state, not into the file.
	 */
	err = 0;
	if (end > r->o.window_ns && end - r->o.window_ns > start) {
		from = end - r->o.window_ns;
		for (struct chunk *k = r->head; !err && k; k = k->next) {
			if (!k->min_time || k->min_time >= from || k->applied_until >= from)
				continue;
			err = chunk_records(r, k);
			if (!err)
				err = model_apply_all(r, r->raw.data, r->raw.len, k->applied_until, from,
						      false);
			k->applied_until = from;
		}
		start = from;
	}
	if (!err)
		err = file_open(r, start, &w, &c);
	else
		w = NULL;
	/* After a write error, the file ends where its records are all in. */
	complete = start;
	for (struct chunk *k = r->head; !err && k; k = k->next) {
		if (k->max_time <= end && (!k->min_time || k->min_time >= start)) {
			err = wp_writer_write_records_zstd(w, k->data, k->len, k->raw_len);
			if (!err) {
				wp_summary_add_counts(&c, &k->counts);
				if (k->round_ns > complete)
					complete = k->round_ns;
				continue;
			}
			/*
			 * Not compressed: as below.  Too large for the space left:
			 * its records, which the writer splits to keep what fits.
			 */
			if (err != -EINVAL && err != -ENOSPC && err != -EDQUOT && err != -EFBIG)
				break;
		}
		out.len = 0;
		err = chunk_records(r, k);
		for (size_t off = 0; !err && off + sizeof(struct perf_event_header) <= r->raw.len;) {
			const struct perf_event_header *h = (const void *)(r->raw.data + off);
			uint64_t t = record_time(r, h);

			off += h->size;
			/* After the request (the next file's), or before the start (its state). */
			if (t > end || (t && t < start))
				continue;
			err = wp_buf_append(&out, h, h->size);
		}
		if (!err && out.len) {
			size_t kept;

			err = wp_writer_write_records(w, out.data, out.len);
			kept = err ? wp_writer_kept(w) : out.len;
			count_written(r, &c, out.data, kept);
			if (err && complete_until(r, out.data, kept) > complete)
				complete = complete_until(r, out.data, kept);
		}
		if (!err && k->max_time <= end && k->round_ns > complete)
			complete = k->round_ns;
	}
	wp_buf_release(&out);
	if (!err)
		complete = end;		/* a closing block may still fail */
	if (w) {
		if (end < start)
			end = start;
		e = file_close(r, w, &c, end, WP_STOP_DUMPED, last, complete < end ? complete : end);
		if (!err)
			err = e;
	}
	return err;
}

/* Drop the oldest chunks: their records move into the model. */
static int evict(struct wp_rotate *r, uint64_t newest)
{
	size_t max = r->o.memory_max ? r->o.memory_max : WP_FLIGHT_MEMORY_MAX;
	int err = 0;

	while (!err && r->head &&
	       (r->head->max_time + r->o.window_ns < newest || r->kept_bytes > max)) {
		struct chunk *k = r->head;

		/*
		 * Once more, all of it (but what a file's start took already):
		 * who is off-CPU, and in which stack, too.
		 */
		err = chunk_records(r, k);
		if (!err)
			err = model_apply_all(r, r->raw.data, r->raw.len, k->applied_until, 0, true);
		r->evicted += k->counts.records;
		if (k->max_time > r->kept_since)
			r->kept_since = k->max_time;
		r->head = k->next;
		if (!r->head)
			r->tail = NULL;
		r->kept_bytes -= k->len;
		free(k);
	}
	return err ? err : model_prune(r, r->kept_since);
}

/*
 * Take the prelude records of buf aside (a live recording's unwinder
 * passes them among the others); *buf and *len then say what is left.
 */
static int take_prelude(struct wp_rotate *r, const uint8_t **buf, size_t *len)
{
	const struct perf_event_header *h;
	size_t off = 0;
	bool any = false;
	int err = 0;

	while (!any && (h = wp_record_next(*buf, *len, &off)))
		any = is_prelude_record(h);
	if (!any)
		return 0;
	r->rest.len = 0;
	for (off = 0; !err && (h = wp_record_next(*buf, *len, &off));)
		err = wp_buf_append(is_prelude_record(h) ? &r->prelude : &r->rest, h, h->size);
	*buf = r->rest.data;
	*len = r->rest.len;
	return err;
}

static int keep(struct wp_rotate *r, const uint8_t *buf, size_t len, uint64_t round_ns)
{
	struct wp_summary counts = { 0 };
	uint64_t min_time = UINT64_MAX, max_time = 0;
	const struct perf_event_header *h;
	struct chunk *k;
	size_t whole = 0, n;
	int err = take_prelude(r, &buf, &len);

	for (size_t off = 0; !err && (h = wp_record_next(buf, len, &off));) {
		uint64_t t;

		whole = off;	/* whole records only */
		t = record_time(r, h);
		if (t > max_time)
			max_time = t;
		if (t && t < min_time)
			min_time = t;
		count_record(r, &counts, h);
	}
	if (err || !whole)
		return err;
	if (!r->cctx) {
		r->cctx = ZSTD_createCCtx();
		/* As the file's writer makes them: the frames go in as they are. */
		if (!r->cctx ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(r->cctx, ZSTD_c_compressionLevel,
							CHUNK_ZSTD_LEVEL)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(r->cctx, ZSTD_c_checksumFlag, 1)))
			return -ENOMEM;
	}
	if (!r->dctx && !(r->dctx = ZSTD_createDCtx()))
		return -ENOMEM;
	r->zbuf.len = 0;
	if (!wp_buf_reserve(&r->zbuf, ZSTD_compressBound(whole)))
		return -ENOMEM;
	n = ZSTD_compress2(r->cctx, r->zbuf.data, ZSTD_compressBound(whole), buf, whole);
	if (ZSTD_isError(n))
		return -ENOMEM;	/* only out of memory makes zstd fail here */
	k = malloc(sizeof(*k) + n);
	if (!k)
		return -ENOMEM;
	k->next = NULL;
	k->raw_len = whole;
	k->len = n;
	k->min_time = min_time == UINT64_MAX ? 0 : min_time;
	k->max_time = max_time;
	k->round_ns = round_ns;
	k->applied_until = 0;
	k->counts = counts;
	memcpy(k->data, r->zbuf.data, n);
	if (r->tail)
		r->tail->next = k;
	else
		r->head = k;
	r->tail = k;
	r->kept_bytes += k->len;
	if (r->kept_bytes > r->kept_peak)
		r->kept_peak = r->kept_bytes;
	return 0;
}

int wp_rotate_records(void *arg, const void *buf, size_t len, uint64_t round_ns,
		      uint64_t *bytes)
{
	struct wp_rotate *r = arg;
	int err;

	if (r->o.rotate_ns) {
		err = route(r, buf, len);
		if (!err)
			err = flush_out(r);
		/* Every record dated before it is in (a later one is the next file's). */
		if (!err && round_ns > r->complete_ns)
			r->complete_ns = round_ns < r->end_ns ? round_ns : r->end_ns;
		/* Every record dated before the end is in: the file is complete. */
		while (!err && round_ns && round_ns >= r->end_ns + WP_ROTATE_SLACK_NS)
			err = rotate_now(r);
	} else {
		uint64_t asked = __atomic_load_n(&r->dump_asked, __ATOMIC_ACQUIRE);

		err = keep(r, buf, len, round_ns);
		if (!err && asked && round_ns >= asked + WP_ROTATE_SLACK_NS) {
			unsigned int files = r->nr_files;

			__atomic_compare_exchange_n(&r->dump_asked, &asked, 0, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
			/* The window ends at the request, not at this pass. */
			err = evict(r, asked);
			if (!err)
				err = dump(r, asked, NULL);
			/*
			 * A file that could not be written does not stop the
			 * recording; one cut short said so as it was kept.
			 */
			if (err && err != -ENOMEM) {
				if (r->nr_files == files)
					wp_warn("the flight recorder's file was not written: %s",
						strerror(-err));
				err = 0;
			}
		}
		if (!err && round_ns)
			err = evict(r, round_ns);
	}
	note_error(r, err);
	*bytes = wp_rotate_bytes(r);
	return err;
}

void wp_rotate_request_dump(struct wp_rotate *r, uint64_t now)
{
	__atomic_store_n(&r->dump_asked, now, __ATOMIC_RELEASE);
}

int wp_rotate_end(struct wp_rotate *r, const struct wp_summary *whole)
{
	uint64_t end = whole->end_clock_ns;
	int err = 0, e;

	if (r->o.rotate_ns) {
		/*
		 * Every record is in: close each file whose span ended (after a
		 * write error, the file being written is the last one).
		 */
		while (!err && !r->err && r->w && r->end_ns < end)
			err = rotate_now(r);
		r->end_ns = end;
		if (!err)
			err = route(r, r->pending.data, r->pending.len);
		r->pending.len = 0;
		e = flush_out(r);
		if (!err)
			err = e;
		if (!err)
			r->complete_ns = end;
		if (r->w) {
			e = file_close(r, r->w, &r->counts, end, 0, whole, r->complete_ns);
			r->w = NULL;
			if (!err)
				err = e;
		}
	} else {
		err = evict(r, end);
		if (!err && !r->o.no_final_dump)
			err = dump(r, end, whole);
		wp_debug("the flight recorder kept at most %zu bytes of records at once",
			 r->kept_peak);
	}
	note_error(r, err);
	return r->err;
}

int wp_rotate_open(const struct wp_rotate_opts *opts, struct wp_rotate **out)
{
	struct wp_rotate *r = calloc(1, sizeof(*r));
	struct wp_writer *probe = NULL;
	char *name;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->o = *opts;
	/* Its numbered names would hide what was wrong with it: "" makes ".0001". */
	err = wp_writer_check_name(opts->output);
	if (err) {
		free(r);
		return err;
	}
	/* Fail now, not at the first file, when it cannot be made. */
	name = next_name(r);
	r->numbered = 0;
	err = name ? wp_writer_open(name, opts->force, opts->compress_level, &probe) : -ENOMEM;
	free(name);
	wp_writer_abort(probe);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

int wp_rotate_start(struct wp_rotate *r, const struct wp_meta *meta)
{
	int err;

	r->meta = meta;
	wp_sample_format_init(&r->fmt, meta->sample_type, meta->regs_mask);
	for (uint32_t e = 0; e < meta->nr_events; e++) {
		const struct wp_event_desc *d = &meta->events[e];

		for (uint32_t i = 0; i < d->nr_ids; i++) {
			if (WP_GROW(r->roles, r->cap_roles, r->nr_roles + 1))
				return -ENOMEM;
			r->roles[r->nr_roles++] = (struct id_role){ d->ids[i], d->role };
		}
	}
	if (r->nr_roles)
		qsort(r->roles, r->nr_roles, sizeof(*r->roles), id_role_cmp);
	err = model_start(r, meta);
	if (err)
		return err;
	r->kept_since = meta->start_clock_ns;
	r->start_ns = meta->start_clock_ns;
	r->complete_ns = r->start_ns;
	if (!r->o.rotate_ns)
		return 0;
	r->end_ns = r->start_ns + r->o.rotate_ns;
	return file_open(r, r->start_ns, &r->w, &r->counts);
}

int wp_rotate_prelude(struct wp_rotate *r, const void *buf, size_t len)
{
	int err = wp_buf_append(&r->prelude, buf, len);

	/* The first file was started before: it gets them now. */
	if (!err && r->w)
		err = wp_writer_write_records(r->w, buf, len);
	return err;
}

unsigned int wp_rotate_nr_files(const struct wp_rotate *r, const char **first, const char **last)
{
	*first = r->first_name;
	*last = r->last_name ? r->last_name : r->first_name;
	return r->nr_files;
}

uint64_t wp_rotate_evicted(const struct wp_rotate *r)
{
	return r->evicted;
}

size_t wp_rotate_nr_processes(const struct wp_rotate *r)
{
	return r->m.nr_procs;
}

uint64_t wp_rotate_bytes(const struct wp_rotate *r)
{
	return r->bytes_done + (r->w ? wp_writer_bytes(r->w) : 0);
}

void wp_rotate_free(struct wp_rotate *r)
{
	if (!r)
		return;
	wp_writer_abort(r->w);
	while (r->head) {
		struct chunk *k = r->head;

		r->head = k->next;
		free(k);
	}
	model_release(&r->m);
	ZSTD_freeCCtx(r->cctx);
	ZSTD_freeDCtx(r->dctx);
	wp_buf_release(&r->zbuf);
	wp_buf_release(&r->raw);
	wp_buf_release(&r->rest);
	wp_buf_release(&r->deferred);
	wp_buf_release(&r->prelude);
	wp_buf_release(&r->out);
	wp_buf_release(&r->pending);
	free(r->roles);
	free(r->first_name);
	free(r->last_name);
	free(r);
}

/* The sink (sink.h). */

static struct wp_rotate *rotate_of(const struct wp_sink *k)
{
	return (struct wp_rotate *)k;
}

static int sink_start(struct wp_sink *k, const struct wp_meta *meta)
{
	return wp_rotate_start(rotate_of(k), meta);
}

static int sink_prelude(struct wp_sink *k, const void *buf, size_t len)
{
	return wp_rotate_prelude(rotate_of(k), buf, len);
}

static int sink_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
			struct wp_sink_progress *p)
{
	/* Its files hold whole blocks: after an error, the blocks before (p->kept 0). */
	return wp_rotate_records(rotate_of(k), buf, len, round_ns, &p->bytes);
}

static int sink_request_dump(struct wp_sink *k, uint64_t now)
{
	struct wp_rotate *r = rotate_of(k);

	if (!r->o.window_ns)
		return -EOPNOTSUPP;
	wp_rotate_request_dump(r, now);
	return 0;
}

static int sink_end(struct wp_sink *k, struct wp_summary *whole, int *write_err)
{
	struct wp_rotate *r = rotate_of(k);
	int err = wp_rotate_end(r, whole);

	if (err && !*write_err) {
		wp_error("cannot write the last file: %s", strerror(-err));
		*write_err = err;
	}
	if (r->o.window_ns && r->evicted)
		wp_info("the flight recorder let %llu older records go (not lost: recorded, "
			"then dropped by age)", (unsigned long long)r->evicted);
	return err;
}

static unsigned int sink_files(const struct wp_sink *k, const char **first, const char **last)
{
	return wp_rotate_nr_files(rotate_of(k), first, last);
}

static uint64_t sink_bytes(const struct wp_sink *k)
{
	return wp_rotate_bytes(rotate_of(k));
}

static void sink_free(struct wp_sink *k)
{
	wp_rotate_free(rotate_of(k));
}

static const struct wp_sink_ops rotate_ops = {
	.start = sink_start,
	.prelude = sink_prelude,
	.records = sink_records,
	.request_dump = sink_request_dump,
	.end = sink_end,
	.files = sink_files,
	.bytes = sink_bytes,
	.free = sink_free,
};

struct wp_sink *wp_rotate_sink(struct wp_rotate *r)
{
	/* Each file that a write error cuts short says so as it closes (file_close). */
	r->sink = (struct wp_sink){ .ops = &rotate_ops, .closing = r->o.closing, .says_cut = true };
	return &r->sink;
}
