/* SPDX-License-Identifier: GPL-2.0-or-later */
/* livestage.c: the unwinder thread between the drained records and the file. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "closing.h"
#include "fdlimit.h"
#include "livestage.h"
#include "log.h"
#include "order.h"
#include "seen.h"
#include "util.h"

/*
 * Blocks kept for reuse, at most: a copy into a new one faults every
 * page in and its free unmaps them, shooting the TLB down on every CPU:
 * beside a switch storm that was most of a live recording's own CPU
 * time.  A drain's block of 4 MiB comes as four of a MiB.
 */
#define SPARE_QBLOCKS 4
/*
 * A block's memory is mapped in whole MiBs, never taken from malloc: the
 * drain's writer thread takes blocks and this one frees them, and small
 * ones from malloc filled the writer's arena with holes that a burst
 * left behind for good.  Pages of a mapping are resident only once
 * written, so a small block in a large mapping costs only what it holds.
 */
#define QBLOCK_UNIT ((size_t)1 << 20)
/*
 * What came out is written in pieces of about this much, so that the
 * buffer stays this small: a block after a stall let out tens of MiB at
 * once, and the buffer kept its size for the rest of the recording.
 */
#define OUT_PIECE ((size_t)1 << 20)

struct qblock {
	struct qblock *next;
	size_t len;
	size_t cap;			/* bytes of data[] */
	uint64_t round_ns;		/* the start of the last drain pass in it, 0: unknown */
	/*
	 * The thread's, while taken: its records queued for time order, and
	 * the thread's own hold until it has pushed them all.  The records
	 * are ordered where they are (not copied again), so a block goes
	 * back only once the last of them is written.
	 */
	size_t refs;
	struct wp_livestage *ls;	/* whose spares it goes back to */
	uint8_t data[];
};

struct wp_livestage {
	struct wp_sink sink;		/* first: the stage as a sink */
	struct wp_sink *inner;		/* where its records go */
	pthread_mutex_t lock;
	pthread_cond_t work_cond, space_cond;
	struct qblock *head, *tail;
	size_t queued;			/* bytes of the blocks in the queue */
	struct qblock *spare[SPARE_QBLOCKS];	/* freed blocks to fill again, or NULL */
	bool done;			/* no more blocks will come */
	int err;			/* the first error */
	/* Under lock too, the thread's to set: what the files hold (write_out). */
	int write_err;			/* the files' first error, or 0 */
	struct wp_summary written;	/* the records they hold, counted as the drain does */
	uint64_t written_round_ns;	/* they hold every record dated before it */
	pthread_t thread;
	/* The thread's own: */
	uint64_t out_round_ns;		/* every record of the passes begun by then is out */
	uint64_t told_round_ns;		/* the last out_round_ns the output was given */
	struct wp_sample_format fmt;
	struct wp_liveunwind *lu;
	struct wp_order *order;
	struct wp_buf out;
	bool pieces;			/* some of out was written since the last ROUND */
	bool behind;			/* samples pass raw */
	bool stopping;			/* the recording has ended */
	bool joined;			/* the thread is gone (the caller's) */
	/*
	 * A test's slowed unwinder: this long per block while recording
	 * (WALLPROF_TEST_UNWIND_DELAY_US).
	 */
	long delay_us;
	size_t behind_bytes;		/* WP_LIVE_BEHIND, or 0 when slowed for a test */
	/* What the drain saw: set once it runs, read by the thread. */
	_Atomic(struct wp_seen *) seen;
};

static void qblock_free(struct qblock *b)
{
	if (b)
		munmap(b, sizeof(*b) + b->cap);
}

/* A taken block back, under ls->lock: kept in place of a smaller spare, or freed. */
static void spare_put(struct wp_livestage *ls, struct qblock *b)
{
	struct qblock **min = &ls->spare[0];

	for (unsigned int i = 1; i < SPARE_QBLOCKS && *min; i++)
		if (!ls->spare[i] || ls->spare[i]->cap < (*min)->cap)
			min = &ls->spare[i];
	if (*min && (*min)->cap >= b->cap) {
		qblock_free(b);
		return;
	}
	qblock_free(*min);
	*min = b;
}

/* Drop a hold on a taken block (the thread's): the last one gives it back. */
static void qblock_release(void *hold)
{
	struct qblock *b = hold;
	struct wp_livestage *ls = b->ls;

	if (--b->refs)
		return;
	pthread_mutex_lock(&ls->lock);
	spare_put(ls, b);
	pthread_mutex_unlock(&ls->lock);
}

/* A block for len bytes: a spare large enough, or a new one. */
static struct qblock *spare_get(struct wp_livestage *ls, size_t len)
{
	struct qblock *b = NULL;
	size_t cap;

	pthread_mutex_lock(&ls->lock);
	for (unsigned int i = 0; i < SPARE_QBLOCKS; i++)
		if (ls->spare[i] && ls->spare[i]->cap >= len) {
			b = ls->spare[i];
			ls->spare[i] = NULL;
			break;
		}
	pthread_mutex_unlock(&ls->lock);
	if (b)
		return b;
	/* Rounded up, so that the drain's blocks, of varying lengths, fit the spares. */
	cap = (len + QBLOCK_UNIT - 1) & ~(QBLOCK_UNIT - 1);
	b = mmap(NULL, sizeof(*b) + cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	if (b == MAP_FAILED)
		return NULL;
	b->cap = cap;
	return b;
}

/*
 * A file mapped in a chroot or another mount namespace, which the drain
 * opened as its process saw it while it lived: unwound and named through
 * that, as the host's path holds another file or none.
 */
static int open_seen(void *arg, const struct wp_dso *dso)
{
	struct wp_livestage *ls = arg;
	struct wp_seen *seen = atomic_load(&ls->seen);

	return seen ? wp_seen_file_open(seen, dso->path, dso->build_id, dso->build_id_size) : -1;
}

void wp_livestage_set_seen(struct wp_livestage *ls, struct wp_seen *seen)
{
	atomic_store(&ls->seen, seen);
}

static void set_error(struct wp_livestage *ls, int err)
{
	pthread_mutex_lock(&ls->lock);
	if (!ls->err)
		ls->err = err;
	pthread_mutex_unlock(&ls->lock);
}

/*
 * Hand what came out to the files, and count what they hold: after a
 * write error, the drain's counts are of blocks this thread never
 * wrote, so the counts and the time up to which the files hold every
 * record are this thread's to say (wp_sink_written).
 */
static int write_out(struct wp_livestage *ls, uint64_t round_ns)
{
	struct wp_sink_progress p = { 0 };
	int err = wp_sink_records(ls->inner, ls->out.data, ls->out.len, round_ns, &p);
	size_t kept = p.kept;

	pthread_mutex_lock(&ls->lock);
	if (!err)
		ls->written = *wp_liveunwind_counts(ls->lu);	/* out is all of it */
	else if (!ls->write_err)
		wp_liveunwind_count(ls->lu, ls->out.data, kept, &ls->written);
	if (!err && round_ns)
		ls->written_round_ns = round_ns;
	if (err && !ls->write_err)
		ls->write_err = err;
	pthread_mutex_unlock(&ls->lock);
	ls->out.len = 0;
	return err;
}

static int deliver(const struct perf_event_header *rec, const struct wp_sample *s,
		   uint64_t time, void *arg)
{
	struct wp_livestage *ls = arg;
	int err;

	(void)s;
	if (ls->behind)
		err = wp_liveunwind_pass(ls->lu, rec, time, &ls->out);
	else
		err = wp_liveunwind_record(ls->lu, rec, time, &ls->out);
	if (err || ls->out.len < OUT_PIECE)
		return err;
	/* Whole records, in time order: the ROUND that closes them comes with the rest. */
	err = write_out(ls, 0);
	ls->pieces = true;
	return err;
}

/* Write what came out, closed by a ROUND: it is in time order. */
static int flush(struct wp_livestage *ls)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	int err;

	/* A quiet pass too, when its time is news: a file may be complete. */
	if (!ls->out.len && !ls->pieces &&
	    (!ls->out_round_ns || ls->out_round_ns == ls->told_round_ns))
		return 0;
	ls->told_round_ns = ls->out_round_ns;
	ls->pieces = false;
	err = wp_buf_append(&ls->out, &round, sizeof(round));
	if (!err)
		err = write_out(ls, ls->out_round_ns);
	ls->out.len = 0;
	return err;
}

/*
 * Queue a block's records for time order, and write what comes out.  A
 * ROUND lets out every record of the passes before the last one; and a
 * block that ends with the drain's ROUND (round_ns) holds every record
 * dated before round_ns that was not in an earlier block (sink.h), so
 * those go out too, and the output is told round_ns at once.  (Waiting
 * for the next block's ROUND held a quiet recording's rotated file back
 * until the next drain pass with records, or the next interval's.)  A
 * block cut from the middle of one of the drain's (round_ns 0) tells
 * nothing new.
 */
static int take_block(struct wp_livestage *ls, struct qblock *b, uint64_t prev_round_ns)
{
	size_t off = 0;
	int err = 0;

	if (ls->delay_us > 0 && !ls->behind && !ls->stopping) {
		struct timespec ts = { ls->delay_us / 1000000, ls->delay_us % 1000000 * 1000 };

		nanosleep(&ts, NULL);
	}
	while (!err && off + sizeof(struct perf_event_header) <= b->len) {
		const struct perf_event_header *h = (const void *)(b->data + off);

		/* The drain made these records: a bad size is a bug, not input. */
		if (h->size < sizeof(*h) || off + h->size > b->len)
			return -EBADMSG;
		b->refs++;	/* released by the order, once written or at once */
		err = wp_order_push(ls->order, h, b, b->len);
		off += h->size;
	}
	if (!err && b->round_ns)
		err = wp_order_flush_before(ls->order, b->round_ns);
	if (err)
		return err;
	ls->out_round_ns = b->round_ns ? b->round_ns : prev_round_ns;
	return flush(ls);
}

static void *stage_main(void *arg)
{
	struct wp_livestage *ls = arg;
	uint64_t prev_round_ns = 0;
	int err = 0;

	pthread_mutex_lock(&ls->lock);
	for (;;) {
		struct qblock *b;
		size_t len;

		while (!ls->head && !ls->done)
			pthread_cond_wait(&ls->work_cond, &ls->lock);
		b = ls->head;
		if (!b)
			break;
		ls->head = b->next;
		if (!ls->head)
			ls->tail = NULL;
		/* What waits behind this block says whether there is time to unwind it. */
		ls->behind = ls->queued > ls->behind_bytes;
		ls->stopping = ls->done;
		pthread_mutex_unlock(&ls->lock);
		len = b->len;
		b->refs = 1;
		b->ls = ls;
		if (!err)
			err = take_block(ls, b, prev_round_ns);
		if (b->round_ns)
			prev_round_ns = b->round_ns;
		qblock_release(b);	/* b may be gone */
		pthread_mutex_lock(&ls->lock);
		if (err && !ls->err)
			ls->err = err;
		ls->queued -= len;
		pthread_cond_broadcast(&ls->space_cond);
	}
	pthread_mutex_unlock(&ls->lock);
	ls->behind = false;
	ls->out_round_ns = 0;	/* the end: what the output knows of it, it is told */
	if (!err)
		err = wp_order_flush(ls->order);
	if (!err)
		err = flush(ls);
	if (err)
		set_error(ls, err);
	return NULL;
}

/* Its NAMES block, among the closing blocks of inner's files. */
static int names_closing(void *arg, struct wp_writer *w)
{
	return wp_livestage_names(arg, w);
}

int wp_livestage_start(const struct wp_meta *m, struct wp_sink *inner,
		       struct wp_livestage **out)
{
	struct wp_livestage *ls = calloc(1, sizeof(*ls));
	const char *delay = getenv("WALLPROF_TEST_UNWIND_DELAY_US");
	int err;

	*out = NULL;
	if (!ls)
		return -ENOMEM;
	ls->inner = inner;
	ls->behind_bytes = WP_LIVE_BEHIND;
	if (delay)
		ls->delay_us = strtol(delay, NULL, 10);
	/* Slowed for a test, behind as soon as a block waits: whatever the load. */
	if (ls->delay_us > 0)
		ls->behind_bytes = 0;
	wp_sample_format_init(&ls->fmt, m->sample_type, m->regs_mask);
	pthread_mutex_init(&ls->lock, NULL);
	pthread_cond_init(&ls->work_cond, NULL);
	pthread_cond_init(&ls->space_cond, NULL);
	err = wp_liveunwind_new(m, &ls->lu);
	if (!err)
		wp_liveunwind_set_opener(ls->lu, open_seen, ls);
	if (!err)
		err = wp_order_new(&ls->fmt, deliver, ls, qblock_release, &ls->order);
	/* Before the thread: its records may close a file at once. */
	if (!err && inner->closing)
		err = wp_closing_add(inner->closing, names_closing, ls);
	if (!err) {
		err = -pthread_create(&ls->thread, NULL, stage_main, ls);
		if (err && inner->closing)
			wp_closing_remove(inner->closing, names_closing, ls);
	}
	if (err) {
		wp_order_free(ls->order);
		wp_liveunwind_free(ls->lu);
		pthread_cond_destroy(&ls->work_cond);
		pthread_cond_destroy(&ls->space_cond);
		pthread_mutex_destroy(&ls->lock);
		free(ls);
		return err;
	}
	*out = ls;
	return 0;
}

/*
 * The bytes of the whole records from buf that make a block: up to
 * QBLOCK_UNIT of them, at least one record; all of len when its records
 * are not well formed (the thread says so).
 */
static size_t piece_len(const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (len - off >= sizeof(struct perf_event_header)) {
		const struct perf_event_header *h = (const void *)(buf + off);

		if (h->size < sizeof(*h) || h->size > len - off)
			return len;
		if (off && off + h->size > QBLOCK_UNIT)
			break;
		off += h->size;
	}
	return off < len && len - off < sizeof(struct perf_event_header) ? len : off;
}

static int queue_block(struct wp_livestage *ls, const void *buf, size_t len, uint64_t round_ns)
{
	struct qblock *b;
	int err;

	b = spare_get(ls, len);
	if (!b)
		return -ENOMEM;
	b->next = NULL;
	b->len = len;
	b->round_ns = round_ns;
	memcpy(b->data, buf, len);
	pthread_mutex_lock(&ls->lock);
	while (ls->queued > WP_LIVE_QUEUE_MAX && !ls->err)
		pthread_cond_wait(&ls->space_cond, &ls->lock);
	err = ls->err;
	if (!err) {
		if (ls->tail)
			ls->tail->next = b;
		else
			ls->head = b;
		ls->tail = b;
		ls->queued += len;
		b = NULL;
		pthread_cond_signal(&ls->work_cond);
	}
	pthread_mutex_unlock(&ls->lock);
	qblock_free(b);
	return err;
}

/*
 * In blocks of a MiB at most, each going back once its records are
 * written: the records of a drain pass are held until the next pass's
 * ROUND, and with the drain's blocks of up to 4 MiB whole, most of what
 * a block held waited for the little of it that was held.
 */
int wp_livestage_write(struct wp_livestage *ls, const void *buf, size_t len, uint64_t round_ns)
{
	const uint8_t *p = buf;
	int err = 0;

	while (!err && len) {
		size_t n = len <= QBLOCK_UNIT ? len : piece_len(p, len);

		err = queue_block(ls, p, n, n == len ? round_ns : 0);
		p += n;
		len -= n;
	}
	return err;
}

int wp_livestage_names(struct wp_livestage *ls, struct wp_writer *w)
{
	uint64_t start = wp_clock_ns(CLOCK_MONOTONIC);
	struct wp_buf names = { 0 };
	int err = wp_liveunwind_names(ls->lu, &names);

	if (!err && names.len)
		err = wp_writer_write_names(w, names.data, names.len);
	if (!err)
		wp_debug("named %" PRIu64 " places in %.3f s (%zu bytes before compression)",
			 wp_liveunwind_stats(ls->lu)->named,
			 (double)(wp_clock_ns(CLOCK_MONOTONIC) - start) / 1e9, names.len);
	wp_buf_release(&names);
	/*
	 * Naming loaded and let go of debug information, tens of MiB: give
	 * the freed pages back, or a recording that names at every file
	 * keeps the most it ever held.
	 */
	malloc_trim(0);
	return err;
}

int wp_livestage_finish(struct wp_livestage *ls)
{
	int err;

	if (ls->joined)
		return ls->err;
	pthread_mutex_lock(&ls->lock);
	ls->done = true;
	pthread_cond_signal(&ls->work_cond);
	pthread_mutex_unlock(&ls->lock);
	pthread_join(ls->thread, NULL);
	ls->joined = true;
	err = ls->err;
	return err;
}

const struct wp_liveunwind_stats *wp_livestage_stats(const struct wp_livestage *ls)
{
	return wp_liveunwind_stats(ls->lu);
}

void wp_livestage_free(struct wp_livestage *ls)
{
	if (!ls)
		return;
	wp_livestage_finish(ls);
	while (ls->head) {
		struct qblock *b = ls->head;

		ls->head = b->next;
		qblock_free(b);
	}
	/* First: what it still holds goes back to the spares. */
	wp_order_free(ls->order);
	for (unsigned int i = 0; i < SPARE_QBLOCKS; i++)
		qblock_free(ls->spare[i]);
	wp_liveunwind_free(ls->lu);
	wp_buf_release(&ls->out);
	pthread_cond_destroy(&ls->work_cond);
	pthread_cond_destroy(&ls->space_cond);
	pthread_mutex_destroy(&ls->lock);
	wp_sink_free(ls->inner);
	free(ls);
}

/* The sink (sink.h). */

static struct wp_livestage *stage_of(const struct wp_sink *k)
{
	return (struct wp_livestage *)k;
}

/* The unwinder needs the prelude too, and passes it on among the records. */
static int sink_prelude(struct wp_sink *k, const void *buf, size_t len)
{
	return wp_livestage_write(stage_of(k), buf, len, 0);
}

static int sink_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
			struct wp_sink_progress *p)
{
	p->bytes = 0;	/* the files are the unwinder's, on its thread */
	p->kept = 0;	/* ... and what they hold of a block, theirs to say */
	return wp_livestage_write(stage_of(k), buf, len, round_ns);
}

static int sink_request_dump(struct wp_sink *k, uint64_t now)
{
	return wp_sink_request_dump(stage_of(k)->inner, now);
}

static int sink_finish(struct wp_sink *k, struct wp_summary *whole)
{
	struct wp_livestage *ls = stage_of(k);
	int err = wp_livestage_finish(ls);
	const struct wp_liveunwind_stats *st = wp_livestage_stats(ls);
	uint64_t raw = st->raw_samples;
	int e;

	whole->raw_samples = raw;
	if (st->processes_forgotten || st->threads_forgotten)
		wp_debug("unwinder: %" PRIu64 " exited processes and %" PRIu64 " threads' entries "
			 "let go", st->processes_forgotten, st->threads_forgotten);
	if (raw)
		wp_warn("%" PRIu64 " samples were written with their stack copies: the "
			"unwinder fell behind (report unwinds them)", raw);
	/* The names saved are for good: say why some are not there. */
	if (wp_fd_starved())
		wp_warn("some frames were saved unnamed for lack of file descriptors (the "
			"limit is %u): raise it ('ulimit -n') for a recording that names "
			"them", wp_fdlimit());
	e = wp_sink_finish(ls->inner, whole);
	return err ? err : e;
}

static int sink_written(struct wp_sink *k, struct wp_summary *c, uint64_t *until_ns)
{
	struct wp_livestage *ls = stage_of(k);
	int err;

	pthread_mutex_lock(&ls->lock);
	err = ls->write_err;
	if (err) {
		*c = ls->written;
		*until_ns = ls->written_round_ns;
	}
	pthread_mutex_unlock(&ls->lock);
	return err ? 0 : -ENODATA;
}

static int sink_end(struct wp_sink *k, struct wp_summary *whole, int *write_err)
{
	return wp_sink_end(stage_of(k)->inner, whole, write_err);
}

static unsigned int sink_files(const struct wp_sink *k, const char **first, const char **last)
{
	return wp_sink_files(stage_of(k)->inner, first, last);
}

static uint64_t sink_bytes(const struct wp_sink *k)
{
	return wp_sink_bytes(stage_of(k)->inner);
}

static void sink_free(struct wp_sink *k)
{
	wp_livestage_free(stage_of(k));
}

static const struct wp_sink_ops live_ops = {
	.prelude = sink_prelude,
	.records = sink_records,
	.request_dump = sink_request_dump,
	.finish = sink_finish,
	.written = sink_written,
	.end = sink_end,
	.files = sink_files,
	.bytes = sink_bytes,
	.free = sink_free,
};

struct wp_sink *wp_livestage_sink(struct wp_livestage *ls)
{
	ls->sink = (struct wp_sink){ .ops = &live_ops, .closing = ls->inner->closing,
				     .says_cut = ls->inner->says_cut };
	return &ls->sink;
}
