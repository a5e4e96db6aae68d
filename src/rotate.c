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
#include "quote.h"
#include "rotate.h"
#include "synth.h"
#include "u64map.h"
#include "util.h"

/* Exited threads are remembered this long, against their records read late. */
#define TOMBSTONE_NS (2ULL * NSEC_PER_SEC)

struct st_thread {
	uint32_t pid, tid;
	char comm[16];
	/*
	 * Off-CPU since its last switch-out (preempted or
	 * blocked), and that switch-out's stack sample, a copy: a file that
	 * begins during the wait says so, with the stack.
	 */
	bool off, preempted;
	uint64_t switch_time;		/* of its latest switch record */
	uint64_t stack_time;		/* of the sample in stack */
	struct wp_buf stack;
};

/*
 * A switch-out sample is the switch-out's when this close to it (the
 * tracepoint fires a little before the switch record; report matches
 * them the same way).
 */
#define SWITCH_STACK_LAG_NS (2ULL * 1000 * 1000)

struct st_proc {
	uint32_t pid;
	uint32_t nr_threads;
	struct wp_buf maps;		/* its executable MMAP2 records, copied */
	struct wp_buf cmdline;		/* its last CMDLINE record, or empty */
};

/* What is alive, as of the records applied so far. */
struct model {
	struct st_thread *threads;
	size_t nr_threads, cap_threads;
	struct wp_u64map thread_index;	/* tid -> index */
	struct st_proc *procs;
	size_t nr_procs, cap_procs;
	struct wp_u64map proc_index;	/* pid -> index */
	struct wp_u64map exited;	/* tid -> exit time: late records of it are old */
	uint64_t pruned;		/* when exited was last pruned */
	/*
	 * A live recording's stack table so far (DSO, PLACE and STACK
	 * records): each file begins with it, as the samples of any file may
	 * name a stack first seen in an earlier one.  It grows with the
	 * distinct stacks, not with time.
	 */
	struct wp_buf defs;
	/* The time of the latest LOST record: a thread switched last before it is in doubt. */
	uint64_t last_lost;
};

/* Records were lost since t's latest switch record (before time, a file's start). */
static bool thread_uncertain(const struct model *m, const struct st_thread *t, uint64_t time)
{
	return m->last_lost > t->switch_time && m->last_lost <= time;
}

/*
 * Records kept by the flight recorder: one drained block's, compressed
 * (stack copies shrink some 100 times, as in the file).
 */
struct chunk {
	struct chunk *next;
	uint64_t min_time, max_time;	/* of its timed records */
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

/* The model: threads and processes alive, with what a file must say of them. */

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

/* A record of tid dated before its exit, read after its EXIT: not news. */
static bool exited_since(struct model *m, uint32_t tid, uint64_t time)
{
	uint64_t at;

	return wp_u64map_get(&m->exited, tid, &at) && (!time || time <= at);
}

static struct st_thread *thread_find(struct model *m, uint32_t tid)
{
	uint64_t i;

	return wp_u64map_get(&m->thread_index, tid, &i) ? &m->threads[i] : NULL;
}

static struct st_thread *thread_get(struct model *m, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct st_thread *t;
	struct st_proc *p;

	if (!tid || tid == UINT32_MAX || pid == UINT32_MAX)
		return NULL;	/* the idle task, or one already unhashed */
	t = thread_find(m, tid);
	if (t)
		return t;
	if (exited_since(m, tid, time))
		return NULL;
	p = proc_get(m, pid, true);
	if (!p || WP_GROW(m->threads, m->cap_threads, m->nr_threads + 1) ||
	    wp_u64map_put(&m->thread_index, tid, m->nr_threads))
		return NULL;
	wp_u64map_del(&m->exited, tid);
	p->nr_threads++;
	m->threads[m->nr_threads] = (struct st_thread){ .pid = pid, .tid = tid };
	return &m->threads[m->nr_threads++];
}

/*
 * The thread a switch or a switch-out sample is of: not one that has
 * exited, however late the record.  A thread's last switch-out comes
 * after its EXIT; made again from it, the thread would never exit.
 */
static struct st_thread *thread_switching(struct model *m, uint32_t pid, uint32_t tid,
					  uint64_t time)
{
	return wp_u64map_get(&m->exited, tid, NULL) ? NULL : thread_get(m, pid, tid, time);
}

static void thread_exit(struct model *m, uint32_t tid, uint64_t time)
{
	struct st_proc *p;
	uint64_t i;

	wp_u64map_put(&m->exited, tid, time);
	if (!wp_u64map_get(&m->thread_index, tid, &i))
		return;
	p = proc_get(m, m->threads[i].pid, false);
	if (p && p->nr_threads && !--p->nr_threads)
		proc_del(m, p->pid);
	wp_buf_release(&m->threads[i].stack);
	wp_u64map_del(&m->thread_index, tid);
	if (i != m->nr_threads - 1) {
		m->threads[i] = m->threads[m->nr_threads - 1];
		wp_u64map_put(&m->thread_index, m->threads[i].tid, i);
	}
	m->nr_threads--;
}

/* Forget threads that exited long before time (at most once a second). */
static void prune_exited(struct model *m, uint64_t time)
{
	struct wp_buf old = { 0 };
	uint64_t tid, at;
	size_t pos = 0;

	if (time < m->pruned + NSEC_PER_SEC)
		return;
	m->pruned = time;
	while (wp_u64map_next(&m->exited, &pos, &tid, &at))
		if (at + TOMBSTONE_NS < time && wp_buf_append(&old, &tid, sizeof(tid)))
			break;
	/* Deleting may move entries: not while walking. */
	for (size_t i = 0; i < old.len / sizeof(tid); i++) {
		memcpy(&tid, old.data + i * sizeof(tid), sizeof(tid));
		wp_u64map_del(&m->exited, tid);
	}
	wp_buf_release(&old);
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

/* A new process has its parent's mappings and command line. */
static int proc_fork(struct wp_rotate *r, struct st_proc *child, uint32_t ppid)
{
	struct st_proc *parent = proc_get(&r->m, ppid, false);
	int err = 0;

	if (!parent || parent == child)
		return 0;
	wp_buf_release(&child->maps);
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
			struct wp_buf b = { 0 };

			c.pid = child->pid;
			err = wp_cmdline_append(&b, &c);
			if (!err) {
				wp_buf_release(&child->cmdline);
				child->cmdline = b;
			}
		}
	}
	return err;
}

/* Apply one record, dated time, to the model. */
/* A switch-out stack sample (is_model_record() lets only those by): its thread's latest. */
static int keep_switch_stack(struct wp_rotate *r, const struct perf_event_header *h, uint64_t time)
{
	struct wp_stack_sample ss;
	struct st_thread *t;
	uint32_t pid, tid;

	if (h->type == WP_RECORD_STACK_SAMPLE) {
		if (wp_stack_sample_parse(h, &ss))
			return 0;
		pid = ss.pid;
		tid = ss.tid;
	} else if (wp_sample_thread(&r->fmt, h, &pid, &tid)) {
		return 0;
	}
	t = thread_switching(&r->m, pid, tid, time);
	/* Records come ring by ring: the latest by time is the one; a wait since over, none. */
	if (!t || (t->stack.len && time < t->stack_time) || (!t->off && t->switch_time > time))
		return 0;
	t->stack.len = 0;
	t->stack_time = time;
	return wp_buf_append(&t->stack, h, h->size);
}

static int model_apply(struct wp_rotate *r, const struct perf_event_header *h, uint64_t time)
{
	struct model *m = &r->m;
	struct wp_switch sw;
	struct wp_record_thread th;
	struct wp_task_event te;
	struct wp_cmdline cl;
	struct wp_sample_id id;
	struct st_thread *t;
	struct st_proc *p;
	struct wp_mmap2 mm;
	struct wp_comm c;

	/* The stack table, kept whole: every file begins with it. */
	if (wp_record_kind_has(h->type, WP_KIND_STACK_DEF))
		return wp_buf_append(&m->defs, h, h->size);
	switch (h->type) {
	case WP_RECORD_THREAD:
		if (!wp_thread_parse(h, &th))
			thread_get(m, th.pid, th.tid, time);
		return 0;
	case WP_RECORD_CMDLINE:
		if (wp_cmdline_parse(h, &cl) || !(p = proc_get(m, cl.pid, true)))
			return 0;
		wp_buf_release(&p->cmdline);
		return wp_buf_append(&p->cmdline, h, h->size);
	case PERF_RECORD_COMM:
		if (wp_comm_parse(h, &c) || !(t = thread_get(m, c.pid, c.tid, time)))
			return 0;
		snprintf(t->comm, sizeof(t->comm), "%.*s", (int)c.len, c.comm);
		if (c.exec && (p = proc_get(m, c.pid, false)))
			p->maps.len = 0;	/* a new program: the old one's mappings are gone */
		return 0;
	case PERF_RECORD_MMAP2:
		if (wp_mmap2_parse(h, &mm) || !(mm.prot & PROT_EXEC) ||
		    !(p = proc_get(m, mm.pid, true)))
			return 0;
		return proc_map(p, h, &mm);
	case PERF_RECORD_FORK:
		if (wp_task_event_parse(h, &te) || exited_since(m, te.tid, time))
			return 0;
		{
			/*
			 * The thread that made a thread is the recording's; one
			 * that made a process may not be (the launch stub).
			 */
			struct st_thread *parent = te.pid == te.ppid ?
				thread_get(m, te.ppid, te.ptid, 0) : thread_find(m, te.ptid);
			char comm[16] = "";

			if (parent)
				memcpy(comm, parent->comm, sizeof(comm));
			t = thread_get(m, te.pid, te.tid, time);
			if (!t)
				return 0;
			if (!t->comm[0])
				memcpy(t->comm, comm, sizeof(comm));
		}
		if (te.pid != te.ppid && (p = proc_get(m, te.pid, false)) && !p->maps.len)
			return proc_fork(r, p, te.ppid);
		return 0;
	case PERF_RECORD_EXIT:
		if (!wp_task_event_parse(h, &te))
			thread_exit(m, te.tid, time);
		return 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (wp_sample_id_parse(&r->fmt, h, &id) || wp_switch_parse(h, &sw) ||
		    !(t = thread_switching(m, id.pid, id.tid, time)) || time < t->switch_time)
			return 0;	/* (an older one, from another CPU's ring) */
		t->off = sw.out;
		t->preempted = sw.out && sw.preempted;
		t->switch_time = time;
		if (!sw.out && t->stack_time < time)
			t->stack.len = 0;
		return 0;
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
 * THREAD or COMM written at attach, so that switches and samples need
 * not be kept aside), the stack table's, and who is off-CPU since when
 * (switch records).  And in which stack: of the switch-out samples of a
 * buffer only each thread's latest is kept, so they are put aside
 * (model_defer) and applied once the buffer is done (model_apply_deferred).
 */
static bool is_model_record(const struct perf_event_header *h)
{
	return wp_record_kind_has(h->type, WP_KIND_STATE | WP_KIND_SWITCH);
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
static int model_follow(struct wp_rotate *r, const struct perf_event_header *h, size_t at,
			uint64_t time)
{
	if ((h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_LOST_SAMPLES) &&
	    time > r->m.last_lost)
		r->m.last_lost = time;
	if (is_model_record(h))
		return model_apply(r, h, time);
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

/* The records of buf that the model follows applied to it, in order. */
static int model_apply_all(struct wp_rotate *r, const uint8_t *buf, size_t len)
{
	const struct perf_event_header *h;
	size_t off = 0, at;
	int err = 0;

	while (!err && (at = off, h = wp_record_next(buf, len, &off)))
		err = model_follow(r, h, at, record_time(r, h));
	return model_follow_end(r, buf, err);
}

/*
 * The stack a thread off-CPU at time (a file's start) went off-CPU in,
 * dated then; its THREAD record says it is off-CPU.  After the mappings,
 * which unwinding it needs.
 */
static int emit_off_cpu_stack(struct wp_rotate *r, const struct st_thread *t, uint64_t time,
			      struct wp_buf *out)
{
	struct perf_event_header *copy;
	uint64_t lag = t->stack_time > t->switch_time ? t->stack_time - t->switch_time :
							 t->switch_time - t->stack_time;

	if (!t->stack.len || lag > SWITCH_STACK_LAG_NS)
		return 0;
	copy = wp_buf_reserve(out, t->stack.len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, t->stack.data, t->stack.len);
	if (copy->type == WP_RECORD_STACK_SAMPLE)
		((struct wp_record_stack_sample *)copy)->time = time;
	else
		wp_sample_set_time(&r->fmt, copy, time);
	out->len += t->stack.len;
	return 0;
}

/* The state of what lives at time, as records dated then; counted into c. */
static int model_emit(struct wp_rotate *r, uint64_t time, struct wp_buf *out,
		      struct wp_summary *c)
{
	struct model *m = &r->m;
	int err = m->defs.len ? wp_buf_append(out, m->defs.data, m->defs.len) : 0;

	for (size_t i = 0; !err && i < m->nr_threads; i++) {
		const struct st_thread *t = &m->threads[i];
		size_t at = out->len;

		err = wp_synth_thread(&r->fmt, (pid_t)t->pid, (pid_t)t->tid, t->comm, time, out);
		c->synthesized += t->comm[0] ? 2 : 1;
		if (!err && thread_uncertain(m, t, time))
			((struct perf_event_header *)(out->data + at))->misc = WP_THREAD_UNCERTAIN;
		else if (!err && t->off && t->switch_time <= time)
			((struct perf_event_header *)(out->data + at))->misc =
				WP_THREAD_OFF_CPU | (t->preempted ? WP_THREAD_PREEMPTED : 0);
	}
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
	for (size_t i = 0; !err && i < m->nr_threads; i++) {
		const struct st_thread *t = &m->threads[i];

		if (t->off && t->switch_time <= time && !thread_uncertain(m, t, time))
			err = emit_off_cpu_stack(r, t, time, out);
	}
	return err;
}

static void model_release(struct model *m)
{
	for (size_t i = 0; i < m->nr_procs; i++) {
		wp_buf_release(&m->procs[i].maps);
		wp_buf_release(&m->procs[i].cmdline);
	}
	wp_buf_release(&m->defs);
	for (size_t i = 0; i < m->nr_threads; i++)
		wp_buf_release(&m->threads[i].stack);
	free(m->procs);
	free(m->threads);
	wp_u64map_release(&m->thread_index);
	wp_u64map_release(&m->proc_index);
	wp_u64map_release(&m->exited);
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
			/* Both streams keep every ROUND: each stays ordered as order.h says. */
			err = wp_buf_append(&r->out, h, h->size);
			if (!err && r->pending.len)
				err = wp_buf_append(&r->pending, h, h->size);
			continue;
		}
		t = record_time(r, h);
		if (t && t >= r->end_ns) {
			err = wp_buf_append(&r->pending, h, h->size);
			continue;
		}
		/* Counted once written (flush_out): a full disk may keep only some. */
		err = model_follow(r, h, at, t);
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
	prune_exited(&r->m, r->start_ns);
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
	 * The state is as of the newest record let go; when nothing came
	 * for long after it, the file starts a window before its end (or at
	 * its oldest record).
	 */
	if (end > r->o.window_ns && end - r->o.window_ns > start) {
		from = end - r->o.window_ns;
		if (r->head && r->head->min_time && r->head->min_time < from)
			from = r->head->min_time;
		if (from > start)
			start = from;
	}
	err = file_open(r, start, &w, &c);
	/* After a write error, the file ends where its records are all in. */
	complete = start;
	for (struct chunk *k = r->head; !err && k; k = k->next) {
		if (k->max_time <= end) {
			err = wp_writer_write_records_zstd(w, k->data, k->len, k->raw_len);
			if (!err) {
				c.records += k->counts.records;
				c.samples += k->counts.samples;
				c.switch_samples += k->counts.switch_samples;
				c.switches += k->counts.switches;
				c.lost_records += k->counts.lost_records;
				c.lost_samples += k->counts.lost_samples;
				c.throttles += k->counts.throttles;
				c.wakeups += k->counts.wakeups;
				c.synthesized += k->counts.synthesized;
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

			off += h->size;
			if (record_time(r, h) > end)
				continue;	/* after the request: the next file's */
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

		/* Once more, all of it: who is off-CPU, and in which stack, too. */
		err = chunk_records(r, k);
		if (!err)
			err = model_apply_all(r, r->raw.data, r->raw.len);
		r->evicted += k->counts.records;
		if (k->max_time > r->kept_since)
			r->kept_since = k->max_time;
		r->head = k->next;
		if (!r->head)
			r->tail = NULL;
		r->kept_bytes -= k->len;
		free(k);
	}
	prune_exited(&r->m, r->kept_since);
	return err;
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
