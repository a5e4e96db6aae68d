/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-procmap.c: the process model of hours of processes coming and
 * going holds those alive, not every one it has seen.
 */
#include <string.h>
#include <sys/mman.h>

#include "procmap.h"
#include "layout.h"
#include "tap.h"

#define MS 1000000ULL
#define START (1000 * MS)

static uint64_t buf_words[64];
static uint8_t *const buf = (uint8_t *)buf_words;

/* A FORK or EXIT record (no sample id: the process model reads the body). */
static const struct perf_event_header *task_rec(uint32_t type, uint32_t pid, uint32_t ppid,
						uint32_t tid, uint32_t ptid, uint64_t t)
{
	struct perf_event_header *h = (void *)buf;
	uint32_t body[4] = { pid, ppid, tid, ptid };

	h->type = (uint16_t)type;
	h->misc = 0;
	h->size = (uint16_t)(sizeof(*h) + sizeof(body) + 8);
	memcpy(h + 1, body, sizeof(body));
	memcpy((uint8_t *)(h + 1) + sizeof(body), &t, 8);
	return h;
}

/* An MMAP2 record of code of /usr/bin/x at addr in process pid. */
static const struct perf_event_header *mmap_rec(uint32_t pid, uint64_t addr)
{
	struct perf_event_header *h = (void *)buf;
	struct wp_mmap2 m = {
		.pid = pid, .tid = pid, .addr = addr, .len = 0x2000, .maj = 8, .min = 1,
		.ino = 1234, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
		.filename = "/usr/bin/x",
	};
	size_t n = wp_mmap2_body(&m, h + 1, sizeof(buf_words) - sizeof(*h));

	h->type = PERF_RECORD_MMAP2;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(sizeof(*h) + n);
	return h;
}

static int feed(struct wp_procmap *pm, const struct perf_event_header *h)
{
	return wp_procmap_record(pm, h);
}

/*
 * Process 100 forks a process every millisecond, which maps code, makes
 * a thread and exits (the thread first) a millisecond later; every 10 ms
 * the model forgets those that exited more than 10 ms ago.
 */
static void test_churn(void)
{
	struct wp_procmap *pm;
	size_t most = 0, total = 0;
	bool fed = true, forgot = true;
	const struct wp_process *p;

	if (!ok(!wp_procmap_new(false, &pm), "churn: a process model"))
		return;
	fed = !feed(pm, mmap_rec(100, 0x400000));
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t pid = 1000 + i;
		uint64_t t = START + i * MS;

		fed &= !feed(pm, task_rec(PERF_RECORD_FORK, pid, 100, pid, 100, t));
		fed &= !feed(pm, mmap_rec(pid, 0x7f0000000000));
		fed &= !feed(pm, task_rec(PERF_RECORD_FORK, pid, pid, pid + 5000, pid, t + 1));
		fed &= !feed(pm, task_rec(PERF_RECORD_EXIT, pid, pid, pid + 5000, pid, t + MS / 2));
		fed &= !feed(pm, task_rec(PERF_RECORD_EXIT, pid, 100, pid, 100, t + MS));
		if (i % 10 == 9) {
			forgot &= !wp_procmap_forget(pm, t - 10 * MS, &total);
			if (wp_procmap_nr_processes(pm) > most)
				most = wp_procmap_nr_processes(pm);
		}
	}
	ok(fed && forgot, "churn: every record taken, every forget done");
	ok(most <= 30, "churn: at most %zu processes held for 1000, those of the last 20 ms", most);
	ok(total >= 970, "churn: %zu of the 1000 exited processes let go", total);
	p = wp_procmap_find(pm, 100);
	ok(p && p->nr_maps == 1, "churn: the process that stays keeps its mapping");
	ok(!wp_procmap_find(pm, 1000), "churn: a process let go is not found");
	wp_procmap_free(pm);
}

static void test_kept(void)
{
	struct wp_procmap *pm;
	struct wp_process *p;
	size_t n = 0;

	if (!ok(!wp_procmap_new(false, &pm), "kept: a process model"))
		return;
	feed(pm, mmap_rec(100, 0x400000));
	/* 200 and 300, forked; 200 exits and its pid comes back at once. */
	feed(pm, task_rec(PERF_RECORD_FORK, 200, 100, 200, 100, START));
	feed(pm, task_rec(PERF_RECORD_FORK, 300, 100, 300, 100, START));
	feed(pm, task_rec(PERF_RECORD_EXIT, 200, 100, 200, 100, START + MS));
	feed(pm, task_rec(PERF_RECORD_FORK, 200, 100, 200, 100, START + 2 * MS));
	/* 300's main thread leaves its thread 301 running (pthread_exit). */
	feed(pm, task_rec(PERF_RECORD_FORK, 300, 300, 301, 300, START + MS));
	feed(pm, task_rec(PERF_RECORD_EXIT, 300, 100, 300, 100, START + 2 * MS));
	p = wp_procmap_find(pm, 300);
	/* A sample of 301 within the grace is of a thread on its way out... */
	wp_procmap_seen(pm, p, START + 3 * MS);
	ok(p->exited_ns, "pthread_exit: a sample right after the exit keeps the mark");
	/* ... one well after it, of one that goes on. */
	wp_procmap_seen(pm, p, START + 2 * MS + WP_PROCMAP_EXIT_GRACE_NS + MS);
	ok(!p->exited_ns, "pthread_exit: a sample after the grace shows it alive");
	ok(!wp_procmap_forget(pm, START + 10000 * MS, &n) && n == 0,
	   "nothing let go: 200 came back, 300 lives on");
	p = wp_procmap_find(pm, 200);
	ok(p && p->nr_maps == 1 && p->maps[0].start == 0x400000,
	   "pid reused: the new process has its parent's maps");
	/* 301 exits: the process is gone with it. */
	feed(pm, task_rec(PERF_RECORD_EXIT, 300, 300, 301, 300, START + 10001 * MS));
	ok(!wp_procmap_forget(pm, START + 10002 * MS, &n) && n == 1 && !wp_procmap_find(pm, 300),
	   "pthread_exit: let go after its last thread's exit");
	/* A new thread of an unknown process makes nothing; its exit neither. */
	feed(pm, task_rec(PERF_RECORD_EXIT, 400, 100, 400, 100, START + 10003 * MS));
	ok(!wp_procmap_find(pm, 400), "an unknown process's exit makes no process");
	wp_procmap_free(pm);
}

static int released;
static struct wp_addrspace *released_space;

static void on_release(struct wp_addrspace *space, void *arg)
{
	(void)arg;
	released++;
	released_space = space;
	space->unwind_state = NULL;
}

/* Forked processes share their parent's address space until they map more. */
static void test_addrspace(void)
{
	struct wp_addrspace *a, *b, *c, *d;
	struct wp_procmap *pm;
	uint64_t old_id;
	size_t n = 0;

	if (!ok(!wp_procmap_new(false, &pm), "addrspace: a process model"))
		return;
	wp_procmap_set_release(pm, on_release, NULL);
	feed(pm, mmap_rec(100, 0x400000));
	feed(pm, task_rec(PERF_RECORD_FORK, 200, 100, 200, 100, START));
	feed(pm, task_rec(PERF_RECORD_FORK, 300, 100, 300, 100, START));
	a = wp_procmap_addrspace(pm, wp_procmap_find(pm, 100));
	b = wp_procmap_addrspace(pm, wp_procmap_find(pm, 200));
	c = wp_procmap_addrspace(pm, wp_procmap_find(pm, 300));
	ok(a && a == b && b == c && a->refs == 3 && wp_procmap_nr_addrspaces(pm) == 1,
	   "addrspace: a parent and its forked children share one");
	ok(wp_procmap_addrspace(pm, wp_procmap_find(pm, 200)) == a && a->refs == 3,
	   "addrspace: asking again takes no second hold");
	/* 300 maps more code: it leaves the shared one for its own. */
	a->unwind_state = &n;
	feed(pm, mmap_rec(300, 0x7f0000000000));
	d = wp_procmap_addrspace(pm, wp_procmap_find(pm, 300));
	ok(d && d != a && a->refs == 2 && d->nr_maps == 2 && wp_procmap_nr_addrspaces(pm) == 2,
	   "addrspace: a process that maps more has its own");
	ok(released == 0 && a->unwind_state == &n,
	   "addrspace: the shared one stays with its other processes");
	/* A process not forked but mapping the same code at the same place shares it too. */
	feed(pm, mmap_rec(500, 0x400000));
	ok(wp_procmap_addrspace(pm, wp_procmap_find(pm, 500)) == a && a->refs == 3,
	   "addrspace: one mapped alike, not forked, shares it");
	/* 100, 200 and 500 go: the last one out lets it go, its state released once. */
	feed(pm, task_rec(PERF_RECORD_EXIT, 100, 1, 100, 1, START + MS));
	feed(pm, task_rec(PERF_RECORD_EXIT, 200, 100, 200, 100, START + MS));
	feed(pm, task_rec(PERF_RECORD_EXIT, 500, 1, 500, 1, START + MS));
	old_id = a->id;
	ok(!wp_procmap_forget(pm, START + 2 * MS, &n) && n == 3, "addrspace: three processes let go");
	ok(released == 1 && released_space == a && wp_procmap_nr_addrspaces(pm) == 1,
	   "addrspace: released once, as its last process went");
	/* A new one alike gets an id never given (cached stacks are keyed by it). */
	feed(pm, mmap_rec(600, 0x400000));
	a = wp_procmap_addrspace(pm, wp_procmap_find(pm, 600));
	ok(a && a->id != old_id && a->id != d->id, "addrspace: a new one has an id of its own");
	wp_procmap_free(pm);
	ok(released == 1, "addrspace: spaces without unwind state are freed unannounced");
}

int main(void)
{
	test_churn();
	test_kept();
	test_addrspace();
	return done_testing();
}
