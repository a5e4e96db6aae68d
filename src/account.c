/* SPDX-License-Identifier: GPL-2.0-or-later */
/* account.c: per-thread on-CPU / blocked / preempted time from switch records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "layout.h"

enum run_state {
	STATE_UNKNOWN,		/* no switch record yet: decided later */
	STATE_ON,
	STATE_BLOCKED,
	STATE_PREEMPTED,
};

struct thread {
	struct wp_thread_times t;
	enum run_state state;
	enum run_state initial_off;	/* what an off-CPU start counts as */
	uint64_t since;			/* start of the current state */
	bool closed;
};

struct wp_account {
	struct wp_sample_format fmt;
	uint64_t start_ns;
	bool cpu_wide;
	uint64_t *switch_ids;		/* ids of the switch-out stack event */
	size_t nr_switch_ids;
	struct thread *threads;
	size_t nr, cap;
	size_t *index;			/* open addressing: tid -> threads[i] + 1 */
	size_t index_cap;
	uint64_t lost;
	uint64_t lost_since;		/* first loss time, 0 if none */
	struct wp_thread_times *result;	/* built by wp_account_finish */
};

static size_t hash_tid(uint32_t tid, size_t cap)
{
	return (tid * 2654435761U) & (cap - 1);
}

static int index_rebuild(struct wp_account *a, size_t cap)
{
	size_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr; i++) {
		size_t h;

		if (a->threads[i].closed)
			continue;
		for (h = hash_tid(a->threads[i].t.tid, cap); idx[h]; h = (h + 1) & (cap - 1))
			;
		idx[h] = i + 1;
	}
	free(a->index);
	a->index = idx;
	a->index_cap = cap;
	return 0;
}

/* The live (not exited) thread with this tid, or NULL. */
static struct thread *thread_find(struct wp_account *a, uint32_t tid)
{
	if (!a->index_cap)
		return NULL;
	for (size_t h = hash_tid(tid, a->index_cap); a->index[h];
	     h = (h + 1) & (a->index_cap - 1)) {
		struct thread *t = &a->threads[a->index[h] - 1];

		if (t->t.tid == tid && !t->closed)
			return t;
	}
	return NULL;
}

static struct thread *thread_add(struct wp_account *a, uint32_t pid, uint32_t tid,
				 uint64_t start, enum run_state initial)
{
	struct thread *t;

	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct thread *nt = realloc(a->threads, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		a->threads = nt;
		a->cap = cap;
	}
	t = &a->threads[a->nr++];
	memset(t, 0, sizeof(*t));
	t->t.pid = pid;
	t->t.tid = tid;
	t->t.start_ns = start;
	t->state = initial;
	t->initial_off = STATE_BLOCKED;
	t->since = start;
	if (a->lost_since)
		t->t.approximate = true;
	/* Keep the index under half full; it is rebuilt without closed threads. */
	if (a->nr * 2 > a->index_cap) {
		if (index_rebuild(a, a->index_cap ? a->index_cap * 2 : 128)) {
			a->nr--;
			return NULL;
		}
	} else {
		size_t h;

		for (h = hash_tid(tid, a->index_cap); a->index[h]; h = (h + 1) & (a->index_cap - 1))
			;
		a->index[h] = a->nr;
	}
	return t;
}

/* A thread first seen in a record: it existed when recording began. */
static struct thread *thread_get(struct wp_account *a, uint32_t pid, uint32_t tid)
{
	struct thread *t = thread_find(a, tid);

	if (!t)
		t = thread_add(a, pid, tid, a->start_ns, STATE_UNKNOWN);
	return t;
}

/* Add the time since t->since to the bucket of the current state. */
static void thread_advance(struct thread *t, uint64_t now)
{
	uint64_t d;

	if (now < t->since)
		now = t->since;	/* tiny clock disorder between CPUs */
	d = now - t->since;
	switch (t->state) {
	case STATE_ON:
		t->t.on_cpu_ns += d;
		break;
	case STATE_BLOCKED:
		t->t.blocked_ns += d;
		break;
	case STATE_PREEMPTED:
		t->t.preempted_ns += d;
		break;
	case STATE_UNKNOWN:
		return;		/* decided by the first switch record */
	}
	t->since = now;
}

static void thread_switch_out(struct thread *t, uint64_t now, bool preempted)
{
	if (t->state == STATE_UNKNOWN)
		t->state = STATE_ON;		/* it was running since the start */
	else if (t->state != STATE_ON)
		t->t.approximate = true;	/* its switch-in was lost */
	thread_advance(t, now);
	t->state = preempted ? STATE_PREEMPTED : STATE_BLOCKED;
	if (preempted)
		t->t.involuntary_switches++;
	else
		t->t.voluntary_switches++;
}

static void thread_switch_in(struct thread *t, uint64_t now)
{
	if (t->state == STATE_UNKNOWN)
		t->state = t->initial_off;	/* off-CPU since the start */
	else if (t->state == STATE_ON)
		t->t.approximate = true;	/* its switch-out was lost */
	thread_advance(t, now);
	t->state = STATE_ON;
}

static void thread_close(struct thread *t, uint64_t end)
{
	if (t->closed)
		return;
	if (end < t->t.start_ns)
		end = t->t.start_ns;
	if (t->state == STATE_UNKNOWN) {
		/* No switch at all: running throughout if it was ever sampled. */
		t->state = t->t.samples || t->t.switch_samples ? STATE_ON : t->initial_off;
	}
	thread_advance(t, end);
	t->t.end_ns = end;
	t->t.wall_ns = end - t->t.start_ns;
	t->closed = true;
}

int wp_account_new(const struct wp_meta *meta, struct wp_account **out)
{
	struct wp_account *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a)
		return -ENOMEM;
	wp_sample_format_init(&a->fmt, meta->sample_type, meta->regs_mask);
	a->start_ns = meta->start_clock_ns;
	a->cpu_wide = meta->flags & WP_META_CPU_WIDE;
	for (uint32_t e = 0; e < meta->nr_events; e++) {
		const struct wp_event_desc *ev = &meta->events[e];
		uint64_t *ids;

		if (ev->role != WP_EVENT_SWITCH_OUT || !ev->nr_ids)
			continue;
		ids = realloc(a->switch_ids, (a->nr_switch_ids + ev->nr_ids) * sizeof(*ids));
		if (!ids) {
			wp_account_free(a);
			return -ENOMEM;
		}
		memcpy(ids + a->nr_switch_ids, ev->ids, ev->nr_ids * sizeof(*ids));
		a->switch_ids = ids;
		a->nr_switch_ids += ev->nr_ids;
	}
	*out = a;
	return 0;
}

static bool is_switch_sample(const struct wp_account *a, uint64_t id)
{
	for (size_t i = 0; i < a->nr_switch_ids; i++)
		if (a->switch_ids[i] == id)
			return true;
	return false;
}

static void note_loss(struct wp_account *a, uint64_t n, uint64_t time)
{
	a->lost += n;
	if (!a->lost_since)
		a->lost_since = time ? time : 1;
	/* Any live thread may have lost records. */
	for (size_t i = 0; i < a->nr; i++)
		if (!a->threads[i].closed)
			a->threads[i].t.approximate = true;
}

static int account_fork(struct wp_account *a, const struct perf_event_header *rec,
			uint64_t time)
{
	uint32_t body[4];	/* pid, ppid, tid, ptid */
	struct thread *t;

	if (rec->size < sizeof(*rec) + sizeof(body))
		return 0;
	memcpy(body, rec + 1, sizeof(body));
	t = thread_find(a, body[2]);
	if (t)
		thread_close(t, time);	/* a reused tid */
	/* A new thread is runnable, not yet running: waiting for a CPU. */
	t = thread_add(a, body[0], body[2], time, STATE_PREEMPTED);
	if (!t)
		return -ENOMEM;
	t->initial_off = STATE_PREEMPTED;
	{
		struct thread *parent = thread_find(a, body[3]);

		if (parent)
			memcpy(t->t.comm, parent->t.comm, sizeof(t->t.comm));
	}
	return 0;
}

static int account_comm(struct wp_account *a, const struct perf_event_header *rec,
			uint64_t time)
{
	const uint8_t *p = (const uint8_t *)(rec + 1);
	size_t body = rec->size - sizeof(*rec), n;
	uint32_t pid, tid;
	struct thread *t;

	if (body < 9)
		return 0;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	t = thread_find(a, tid);
	if (!t && (rec->misc & PERF_RECORD_MISC_COMM_EXEC) &&
	    !(rec->misc & WP_RECORD_MISC_SYNTHESIZED)) {
		/* The launched command: it runs from its exec on. */
		t = thread_add(a, pid, tid, time > a->start_ns ? time : a->start_ns, STATE_ON);
	}
	if (!t)
		t = thread_get(a, pid, tid);
	if (!t)
		return -ENOMEM;
	t->t.pid = pid;
	n = strnlen((const char *)p + 8, body - 8);
	if (n >= sizeof(t->t.comm))
		n = sizeof(t->t.comm) - 1;
	memcpy(t->t.comm, p + 8, n);
	t->t.comm[n] = '\0';
	return 0;
}

int wp_account_record(struct wp_account *a, const struct perf_event_header *rec,
		      uint64_t time)
{
	struct wp_sample_id id;
	struct thread *t;
	uint64_t v;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		struct wp_sample s;

		if (wp_sample_parse(&a->fmt, rec, &s) || !s.tid)
			return 0;
		t = thread_get(a, s.pid, s.tid);
		if (!t)
			return -ENOMEM;
		if (is_switch_sample(a, s.id)) {
			t->t.switch_samples++;
		} else {
			t->t.samples++;
			/* Sampled on a CPU while we thought it off: a lost switch-in. */
			if (t->state == STATE_BLOCKED || t->state == STATE_PREEMPTED) {
				t->t.approximate = true;
				thread_switch_in(t, time);
			}
		}
		return 0;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (wp_sample_id_parse(&a->fmt, rec, &id) || !id.tid)
			return 0;
		t = thread_get(a, id.pid, id.tid);
		if (!t)
			return -ENOMEM;
		if (rec->misc & PERF_RECORD_MISC_SWITCH_OUT)
			thread_switch_out(t, time, rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		else
			thread_switch_in(t, time);
		return 0;
	case PERF_RECORD_FORK:
		return account_fork(a, rec, time);
	case PERF_RECORD_COMM:
		return account_comm(a, rec, time);
	case PERF_RECORD_EXIT: {
		uint32_t body[4];

		if (rec->size < sizeof(*rec) + sizeof(body))
			return 0;
		memcpy(body, rec + 1, sizeof(body));
		t = thread_find(a, body[2]);
		if (t) {
			/* The exiting task runs its exit path until the end. */
			if (t->state == STATE_UNKNOWN)
				t->state = STATE_ON;
			thread_close(t, time);
			t->t.exited = true;
		}
		return 0;
	}
	case WP_RECORD_THREAD: {
		struct wp_record_thread th;

		if (rec->size < sizeof(th))
			return 0;
		memcpy(&th, rec, sizeof(th));
		return thread_get(a, th.pid, th.tid) ? 0 : -ENOMEM;
	}
	case PERF_RECORD_LOST:
		if (rec->size >= sizeof(*rec) + 16) {
			memcpy(&v, (const uint8_t *)(rec + 1) + 8, 8);
			note_loss(a, v, time);
		}
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size >= sizeof(*rec) + 8) {
			memcpy(&v, rec + 1, 8);
			note_loss(a, v, time);
		}
		return 0;
	}
	return 0;
}

static int thread_cmp(const void *x, const void *y)
{
	const struct thread *a = x, *b = y;

	if (a->t.pid != b->t.pid)
		return a->t.pid < b->t.pid ? -1 : 1;
	if (a->t.tid != b->t.tid)
		return a->t.tid < b->t.tid ? -1 : 1;
	return a->t.start_ns < b->t.start_ns ? -1 : a->t.start_ns > b->t.start_ns;
}

void wp_account_finish(struct wp_account *a, uint64_t end_ns)
{
	for (size_t i = 0; i < a->nr; i++)
		thread_close(&a->threads[i], end_ns);
	qsort(a->threads, a->nr, sizeof(*a->threads), thread_cmp);
	free(a->index);
	a->index = NULL;
	a->index_cap = 0;
	free(a->result);
	a->result = calloc(a->nr ? a->nr : 1, sizeof(*a->result));
	for (size_t i = 0; a->result && i < a->nr; i++)
		a->result[i] = a->threads[i].t;
}

const struct wp_thread_times *wp_account_threads(const struct wp_account *a, size_t *n)
{
	*n = a->result ? a->nr : 0;
	return a->result;
}

uint64_t wp_account_lost(const struct wp_account *a)
{
	return a->lost;
}

void wp_account_free(struct wp_account *a)
{
	if (!a)
		return;
	free(a->threads);
	free(a->result);
	free(a->index);
	free(a->switch_ids);
	free(a);
}
