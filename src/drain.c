/* SPDX-License-Identifier: GPL-2.0-or-later */
/* drain.c: the drain thread (rings -> blocks) and the writer thread (blocks -> file). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buildid.h"
#include "cmdline.h"
#include "drain.h"
#include "jitmap.h"
#include "layout.h"
#include "log.h"
#include "procroot.h"
#include "u64map.h"
#include "util.h"

#define BLOCK_SIZE (4U << 20)
/* Empty blocks kept for reuse; those a backlog needed beyond are freed. */
#define SPARE_BLOCKS 4
#define BLOCK_ROOM 65536		/* the largest record */
#define POLL_TIMEOUT_MS 50
#define FLUSH_INTERVAL_NS (500ULL * 1000 * 1000)
/*
 * The first block is written small: it holds the mappings a report looks
 * up debug files by, and a report starts on them once that block is read.
 */
#define FIRST_BLOCK (64U << 10)

/* Where a pass over the rings ends in a block: after its ROUND record. */
struct round_mark {
	size_t end;		/* offset just after the ROUND */
	uint64_t ns;		/* the pass's start: every record before it is in */
};

struct block {
	uint8_t *data;
	size_t len;
	struct block *next;
	struct wp_summary counts;	/* of every record up to this block's end */
	uint64_t round_ns;		/* start of the pass of its last ROUND */
	/* Its ROUNDs, to date what a write that kept only a part holds. */
	struct round_mark *rounds;
	size_t nr_rounds, cap_rounds;
};

struct id_role {
	uint64_t id;
	unsigned int role;
};

struct wp_drain {
	struct wp_evlist *ev;
	struct wp_sink *sink;		/* where the blocks go (sink.h) */
	int epfd, wakefd;
	pthread_t drain_thread, writer_thread;
	bool drain_started, writer_started;

	/* Shared between threads, under lock. */
	pthread_mutex_t lock;
	pthread_cond_t queue_cond;	/* a block was queued, or done */
	pthread_cond_t space_cond;	/* queued bytes went down */
	struct block *queue_head, *queue_tail, *free_blocks;
	unsigned int nr_free_blocks;
	uint64_t queued_bytes;
	bool writer_done;		/* no more blocks will come */
	bool writer_held;		/* the caller still writes to the sink itself */
	int write_err;			/* the first one: nothing is written after it */
	uint64_t write_err_ns;		/* the file holds every record before it */
	struct wp_summary written;	/* the counts of what was written */
	uint64_t written_round_ns;	/* round_ns of the last block written whole */
	uint64_t bytes_written;
	struct wp_summary published;
	bool stop;
	bool flush_asked;		/* atomic: submit at the next pass */
	/*
	 * The code seen run (files, anonymous code, program starts: the
	 * drain thread notes them; kernel addresses in samples: the writer
	 * thread), which the closing blocks read on other threads.
	 */
	struct wp_seen *seen;

	/* Drain thread only. */
	struct block *cur;
	struct wp_summary counts;
	uint64_t last_flush_ns;
	bool submitted;		/* a block was: the first is written small */
	struct id_role *roles;
	/* Switch-out stacks from per-CPU events on the command's cgroup. */
	bool switch_outs_per_cpu;
	/* The on-CPU event (samples, switch and task records) there too. */
	bool records_per_cpu;
	uint32_t stub_pid;	/* in that cgroup, but not recorded; 0: none yet */
	struct wp_u64map born;	/* tid -> time of its FORK or exec, for those */
	/*
	 * Attached through the targets' own cgroup: pid -> 1, the processes
	 * attached to and those they started; the records of others that
	 * joined the cgroup are left out, and counted.
	 */
	bool members_only;
	struct wp_u64map members;
	uint64_t outsiders;	/* atomic */
	/* Drain thread only: records of a pid not theirs yet, until the rings are swept again. */
	struct wp_buf strangers;
	size_t nr_roles;
	size_t nr_foreign;		/* files with an fd (open_foreign_file) */
	unsigned int cur_ring;		/* the ring being read */
	/* Switch-outs read per ring (CPU): written here, read by any thread. */
	uint64_t *switch_outs;
	uint64_t swept_ns;		/* they count the records written before this */
	bool warned_corrupt;
	bool final_pass;		/* the first pass after the events stopped */

	/*
	 * The threads whose wake-ups are kept, under wakees_lock (their own:
	 * the drain thread asks at every wake-up, and must not wait on the
	 * queue's lock); track_wakees is also read without it (atomic), so
	 * that -a takes no lock at all.
	 */
	pthread_mutex_t wakees_lock;
	bool track_wakees;
	struct wp_u64map wakees;	/* tid -> 1 */
	/*
	 * The on-CPU event per CPU (WP_META_ONCPU_PER_CPU): its samples are
	 * kept for those threads only.  Under wakees_lock: threads above
	 * newer_than may be the recording's new ones (their FORK in another
	 * ring); others, tid -> 1, those found not to be (a sweep later),
	 * whose samples go at once.
	 */
	bool oncpu_filter;
	uint32_t newer_than;
	struct wp_u64map others;
	/*
	 * Threads of the recording that exited in this pass and the one
	 * before: a thread that moved to another CPU to exit has samples in
	 * a ring read after its EXIT.
	 */
	struct wp_u64map exited[2];
	/* Scheduler records of other programs' threads left out (atomic). */
	uint64_t foreign;
	/*
	 * Drain thread only: tid -> 1, wakers whose name was asked for; a
	 * thread of the recording's leaves at its EXIT (its tid may come
	 * back, another thread), the others when it is full.
	 */
	struct wp_u64map wakers_named;
	/* Drain thread only: wake-ups of threads not known yet (see held_resolve). */
	struct wp_buf held;

	/* Reads the command line of each process that execs (owned). */
	struct wp_cmdline_reader *cmdlines;
	struct wp_buf cmdline_records;	/* drain thread only: taken from it and the sources */
	/* Other threads' records, taken at each pass (wp_drain_add_source). */
	struct side_source {
		wp_drain_source_fn take;
		void *arg;
	} sources[WP_DRAIN_MAX_SOURCES];
	unsigned int nr_sources;	/* atomic: published after the entry */

	/* Drain thread only: anchors (see note_task), not with -a. */
	bool anchoring;
	struct wp_u64map creators;	/* tid -> the thread that made it */
	struct wp_u64map anchors;	/* anchored tid -> fd, or NO_ANCHOR */
};

/* An anchor that could not be opened: not tried again. */
#define NO_ANCHOR UINT64_MAX
/* Enough for any program's thread-making threads, far below the fd limit. */
#define MAX_ANCHORS 1024

static int id_role_cmp(const void *a, const void *b)
{
	const struct id_role *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The role of a sample's event; in *canon, when the event is a scheduler
 * tracepoint opened again (wp_evlist_sched_open), the id its copy is to
 * carry, which the file knows; else 0.
 */
static int sample_role(const struct wp_drain *d, const struct perf_event_header *h,
		       uint64_t *canon)
{
	struct id_role key, *hit;

	*canon = 0;
	if (wp_sample_event_id(&d->ev->fmt, h, &key.id))
		return -1;
	hit = bsearch(&key, d->roles, d->nr_roles, sizeof(key), id_role_cmp);
	if (!hit && wp_evlist_id_alias(d->ev, key.id, canon)) {
		key.id = *canon;
		hit = bsearch(&key, d->roles, d->nr_roles, sizeof(key), id_role_cmp);
	}
	return hit ? (int)hit->role : -1;
}

static struct block *block_get(struct wp_drain *d)
{
	struct block *b;

	pthread_mutex_lock(&d->lock);
	b = d->free_blocks;
	if (b) {
		d->free_blocks = b->next;
		d->nr_free_blocks--;
	}
	pthread_mutex_unlock(&d->lock);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		/* Mapped, not malloc'ed: a freed block goes back to the system. */
		b->data = mmap(NULL, BLOCK_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->data == MAP_FAILED) {
			free(b);
			return NULL;
		}
	}
	b->len = 0;
	b->next = NULL;
	b->round_ns = 0;
	b->nr_rounds = 0;
	return b;
}

static void block_free(struct block *b)
{
	if (b) {
		munmap(b->data, BLOCK_SIZE);
		free(b->rounds);
		free(b);
	}
}

/* Hand the current block to the writer. */
static void drain_submit(struct wp_drain *d)
{
	struct block *b = d->cur;

	if (!b || !b->len)
		return;
	d->cur = NULL;
	b->counts = d->counts;
	pthread_mutex_lock(&d->lock);
	/*
	 * Only when the writer is a whole gigabyte behind does draining wait;
	 * the kernel then counts what it drops in LOST records.
	 */
	while (d->queued_bytes > WP_DRAIN_QUEUE_MAX && !d->write_err)
		pthread_cond_wait(&d->space_cond, &d->lock);
	if (d->queue_tail)
		d->queue_tail->next = b;
	else
		d->queue_head = b;
	d->queue_tail = b;
	d->queued_bytes += b->len;
	pthread_cond_signal(&d->queue_cond);
	pthread_mutex_unlock(&d->lock);
	d->last_flush_ns = wp_clock_ns(CLOCK_MONOTONIC);
	d->submitted = true;
}

/* Room for n more bytes in the current block, or NULL when out of memory. */
static uint8_t *drain_room(struct wp_drain *d, size_t n)
{
	if (d->cur && BLOCK_SIZE - d->cur->len < n)
		drain_submit(d);
	if (!d->cur)
		d->cur = block_get(d);
	return d->cur ? d->cur->data + d->cur->len : NULL;
}

/* At most this many files are held open for a copy (see open_foreign_file). */
#define MAX_FOREIGN_FILES 256

/*
 * The file the process pid mapped at path (at addr), when the host sees
 * another file, or none, at that path: the process runs in a chroot or
 * another mount namespace.  Opened as the process sees it, never leaving
 * its root (procroot.h: the process may swap a directory for a link to
 * one of the host's meanwhile), while it lives, so that record can keep
 * a copy (see filecache.h); and only when it is the file mapped, by
 * device and inode (of the MMAP2 record, or of /proc/PID/maps when the
 * record carries a build id instead).  A file found without a kernel
 * build id gets the one read from the file.  Returns a descriptor, or -1
 * when the host's path is the same file, the process is gone, or the file
 * at the path is not the one mapped.
 */
static int open_foreign_file(pid_t pid, const char *path, uint64_t addr,
			     struct wp_mapped_file *f)
{
	struct stat st, host;
	uint32_t maj = f->maj, min = f->min;
	uint64_t ino = f->ino;
	uint8_t id[20];
	int fd, n;

	/* Only a regular file is opened: a FIFO or device put there is not. */
	fd = wp_procroot_open(pid, path, &st);
	if (fd < 0) {
		if (fd != -ENOENT)
			wp_debug("not keeping '%s' of process %d: %s", path, (int)pid,
				 strerror(-fd));
		return -1;
	}
	if (!stat(path, &host) && host.st_dev == st.st_dev && host.st_ino == st.st_ino)
		goto no;
	if (!ino && wp_procroot_mapped_file(pid, addr, &maj, &min, &ino))
		goto no;	/* unmapped already, or the process is gone: not checked */
	if (major(st.st_dev) != maj || minor(st.st_dev) != min || st.st_ino != ino) {
		wp_debug("not keeping '%s' of process %d: not the file it mapped", path, (int)pid);
		goto no;
	}
	n = wp_build_id_read_fd(fd, id, sizeof(id));
	if (n <= 0)
		goto no;	/* nothing to find a copy by */
	if (f->build_id_size && (f->build_id_size != n || memcmp(f->build_id, id, (size_t)n)))
		goto no;	/* mapped again since: not the recorded file */
	{
		uint8_t host_id[20];

		/* A copy of the host's file (a chroot made with cp) needs no copy. */
		if (wp_build_id_read(path, host_id, sizeof(host_id)) == n &&
		    !memcmp(host_id, id, (size_t)n))
			goto no;
	}
	f->build_id_size = (uint8_t)n;
	memcpy(f->build_id, id, (size_t)n);
	return fd;
no:
	close(fd);
	return -1;
}

static void note_mapped_file(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_mapped_file f = { .fd = -1 };
	struct wp_mmap2 m;
	const char *name;

	if (wp_mmap2_parse(h, &m) || !(m.prot & PROT_EXEC))
		return;
	name = m.filename;
	if (name[0] != '/' || wp_mmap_is_anon(name))
		return;		/* [vdso], //anon, memfd: nothing to look up */
	f.pid = m.pid;
	if (m.has_build_id) {
		f.build_id_size = m.build_id_size;
		memcpy(f.build_id, m.build_id, f.build_id_size);
	} else {
		f.maj = m.maj;
		f.min = m.min;
		f.ino = m.ino;
	}
	if (wp_seen_file_again(d->seen, name, &f))
		return;
	if (d->nr_foreign < MAX_FOREIGN_FILES) {
		f.fd = open_foreign_file((pid_t)m.pid, name, m.addr, &f);
		if (f.fd >= 0)
			d->nr_foreign++;
	}
	if (wp_seen_file_add(d->seen, name, &f) && f.fd >= 0) {
		close(f.fd);
		d->nr_foreign--;
	}
}

/* Keep a region of anonymous code, with whose it is while the process lives. */
static void add_anon_code(struct wp_drain *d, uint32_t pid, uint64_t start, uint64_t end)
{
	struct wp_anon_code a = { .pid = pid, .start = start, .end = end };

	/* (Few regions: a read of /proc each.) */
	a.users_known = wp_jitmap_process_users(pid, a.users);
	wp_seen_anon_add(d->seen, &a);
}

static void note_anon_code(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_mmap2 m;

	if (wp_mmap2_parse(h, &m) || !(m.prot & PROT_EXEC) || !wp_mmap_is_anon(m.filename))
		return;
	add_anon_code(d, m.pid, m.addr, m.addr + m.len);
}

/*
 * A forked child has its parent's regions of anonymous code (copied out
 * first: adding the child's reorders them).  The drain thread, their only
 * writer, reads them without the lock.
 */
static void inherit_anon_code(struct wp_drain *d, uint32_t parent, uint32_t child)
{
	const struct wp_anon_code *all;
	struct wp_anon_code *mine = NULL;
	size_t n, nr = 0, cap = 0;

	all = wp_seen_anon_code(d->seen, &n);
	for (size_t i = 0; i < n; i++)
		if (all[i].pid == parent && !WP_GROW(mine, cap, nr + 1))
			mine[nr++] = all[i];
	for (size_t i = 0; i < nr; i++)
		add_anon_code(d, child, mine[i].start, mine[i].end);
	free(mine);
}

/*
 * A new process (a FORK that is not a thread's) or an exec: a program
 * starts.  A forked child has its parent's code regions.
 */
static void note_program_start(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_sample_id sid;
	struct wp_task_event te;
	struct wp_comm c;
	uint32_t pid;

	if (h->type == PERF_RECORD_FORK) {
		if (wp_task_event_parse(h, &te) || te.pid == te.ppid)
			return;
		pid = te.pid;
		inherit_anon_code(d, te.ppid, te.pid);
	} else {
		if (wp_comm_parse(h, &c) || !c.exec)
			return;
		pid = c.pid;
	}
	if (!wp_sample_id_parse(&d->ev->fmt, h, &sid))
		wp_seen_start(d->seen, pid, sid.time);
}

/*
 * A process's main thread exited: its start is only asked for when it
 * ran anonymous code (a JIT's names, closing.c), else it goes, so that
 * hours of processes coming and going do not keep one each.  (A main
 * thread going first, whose process maps such code after, has its
 * perf map taken whatever its age.)
 */
static void note_program_end(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_task_event te;

	if (!wp_task_event_parse(h, &te) && te.pid == te.tid)
		wp_seen_end(d->seen, te.pid);
}

/*
 * A thread of the recording born or gone: the wake-ups the drain keeps
 * are those of the threads alive in the recording (see wakee_kept).
 */
static void note_wakee(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_task_event te;

	/* Not tracking: -a, or no wake-ups (every thread's are kept, or none). */
	if (!__atomic_load_n(&d->track_wakees, __ATOMIC_ACQUIRE) || wp_task_event_parse(h, &te))
		return;
	pthread_mutex_lock(&d->wakees_lock);
	if (h->type == PERF_RECORD_FORK) {
		wp_u64map_put(&d->wakees, te.tid, 1);
		if (d->others.len)
			wp_u64map_del(&d->others, te.tid);
	} else {
		if (d->oncpu_filter && wp_u64map_get(&d->wakees, te.tid, NULL))
			wp_u64map_put(&d->exited[0], te.tid, 1);
		wp_u64map_del(&d->wakees, te.tid);
	}
	pthread_mutex_unlock(&d->wakees_lock);
}

/* A pass is over: the threads that exited the pass before are gone for good. */
static void exited_age(struct wp_drain *d)
{
	struct wp_u64map t;

	if (!d->oncpu_filter)
		return;
	pthread_mutex_lock(&d->wakees_lock);
	wp_u64map_release(&d->exited[1]);
	t = d->exited[1];
	d->exited[1] = d->exited[0];
	d->exited[0] = t;
	pthread_mutex_unlock(&d->wakees_lock);
}

/*
 * A thread whose tasks exit gets an anchor (event.h).  Without it, the
 * kernel swaps its perf context with a child's when one switches to the
 * other, and the child's exit takes the thread's partial sampling period
 * along: a main thread running 200 us between making and joining threads
 * kept 7% of its samples.  Anchoring every thread from the start instead
 * would make every context switch of a busy program several times as
 * costly.  The first exit catches the pattern; FORK and EXIT may come out
 * of order (different CPUs' rings), and a later exit then does.
 */
static void note_task(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_task_event te;
	uint64_t creator, fd;
	int ret;

	if (!d->anchoring || wp_task_event_parse(h, &te))
		return;
	if (h->type == PERF_RECORD_FORK) {
		if (te.tid != te.ptid)
			wp_u64map_put(&d->creators, te.tid, te.ptid);
		return;
	}
	if (wp_u64map_get(&d->anchors, te.tid, &fd)) {
		if (fd != NO_ANCHOR)
			close((int)fd);
		wp_u64map_del(&d->anchors, te.tid);
	}
	if (!wp_u64map_get(&d->creators, te.tid, &creator))
		return;
	wp_u64map_del(&d->creators, te.tid);
	if (wp_u64map_get(&d->anchors, creator, NULL) || d->anchors.len >= MAX_ANCHORS)
		return;
	ret = wp_event_open_anchor((pid_t)creator);
	if (ret < 0)
		wp_debug("no anchor for thread %" PRIu64 ": %s", creator, strerror(-ret));
	if (wp_u64map_put(&d->anchors, creator, ret < 0 ? NO_ANCHOR : (uint64_t)ret) && ret >= 0)
		close(ret);
}

/*
 * A scheduler sample decoded once for every question asked of it (its
 * wakee, its waker): a wake-up storm brings hundreds of thousands a
 * second to the drain thread.
 */
struct parsed {
	struct wp_sample s;
	int state;		/* 0: not yet, 1: decoded, -1: malformed */
	bool foreign_waker;	/* a kept wake-up whose waker's user state is not ours */
};

static const struct wp_sample *parse_once(struct wp_drain *d, const struct perf_event_header *h,
					  struct parsed *p)
{
	if (!p->state)
		p->state = wp_sample_parse(&d->ev->fmt, h, &p->s) ? -1 : 1;
	return p->state > 0 ? &p->s : NULL;
}

/*
 * The kernel's filter on wake-ups is coarse (it also lets through threads
 * other processes create): keep a wake-up only when its wakee is one of
 * the recording's threads, a sched_switch when either thread is.  -1: not
 * known yet (its FORK may still be in another CPU's ring), 0: not ours,
 * 1: ours.  A kept wake-up with the waker's user stack whose waker is
 * another program's thread (one the filter took for the recording's
 * threads to come) counts as foreign too: the filters are made again
 * (refilter_step), and that waker's stack is no longer copied; until then
 * its user registers and stack are zeroed before they are kept.
 */
static int wakee_known(struct wp_drain *d, const struct perf_event_header *h, int role,
		       struct parsed *p)
{
	const struct wp_trace_field *f = &d->ev->sched_pid_field[role - WP_EVENT_WAKEUP];
	const struct wp_sample *s;
	int64_t pid;
	int known;

	if (!__atomic_load_n(&d->track_wakees, __ATOMIC_ACQUIRE))
		return 1;
	s = parse_once(d, h, p);
	if (!s || !wp_trace_field_int(f, s->raw, s->raw_size, &pid))
		return 0;
	pthread_mutex_lock(&d->wakees_lock);
	if (wp_u64map_get(&d->wakees, (uint64_t)pid, NULL))
		known = 1;
	else if (role == WP_EVENT_SCHED_SWITCH)
		known = wp_u64map_get(&d->wakees, s->tid, NULL) ? 1 : -1;
	else
		known = -1;
	if (known == 1 && role == WP_EVENT_WAKEUP && s->stack_dyn_size && s->tid &&
	    !wp_u64map_get(&d->wakees, s->tid, NULL)) {
		__atomic_fetch_add(&d->foreign, 1, __ATOMIC_RELAXED);
		p->foreign_waker = true;
	}
	pthread_mutex_unlock(&d->wakees_lock);
	return known;
}

/* Others remembered at most: past it they are looked at again. */
#define OTHERS_MAX 65536

/*
 * An on-CPU sample of the per-CPU event: 1, of one of the recording's
 * threads; 0, of another task; -1, not known yet (the threads are not
 * given yet, or a new thread whose FORK may still be in another ring).
 * final: the rings were swept since, what is not known is another's.
 */
static int oncpu_known(struct wp_drain *d, const struct perf_event_header *h, struct parsed *p,
		       bool final)
{
	const struct wp_sample *s = parse_once(d, h, p);
	int known;

	if (!s || !s->tid)
		return 0;
	pthread_mutex_lock(&d->wakees_lock);
	if (wp_u64map_get(&d->wakees, s->tid, NULL) || wp_u64map_get(&d->exited[0], s->tid, NULL) ||
	    wp_u64map_get(&d->exited[1], s->tid, NULL))
		known = 1;
	else if (wp_u64map_get(&d->others, s->tid, NULL))
		known = 0;
	else if (final && !__atomic_load_n(&d->track_wakees, __ATOMIC_RELAXED))
		known = 0;	/* before the threads were given: not told apart */
	else if (final) {
		if (d->others.len >= OTHERS_MAX)
			wp_u64map_release(&d->others);
		wp_u64map_put(&d->others, s->tid, 1);
		known = 0;
	} else {
		known = __atomic_load_n(&d->track_wakees, __ATOMIC_RELAXED) &&
			s->tid <= d->newer_than ? 0 : -1;
	}
	pthread_mutex_unlock(&d->wakees_lock);
	return known;
}

int wp_drain_track_wakees(struct wp_drain *d, const uint32_t *tids, size_t n,
			  uint32_t newer_than)
{
	int err = 0;

	pthread_mutex_lock(&d->wakees_lock);
	if (newer_than)
		d->newer_than = newer_than;
	for (size_t i = 0; !err && i < n; i++)
		err = wp_u64map_put(&d->wakees, tids[i], 1);
	__atomic_store_n(&d->track_wakees, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->wakees_lock);
	return err;
}

/*
 * Wakers remembered at most: past it they are asked for again, as for
 * hours of threads and processes coming and going from outside the
 * recording (whose exits it does not see) the map would only grow.
 */
#define WAKERS_NAMED_MAX 16384

/*
 * A kept wake-up: ask for its waker's name, once per thread.  The waker
 * may be no thread of the recording (a client process outside it, a
 * kernel thread), of which report would know no name; read off the
 * draining path by the command line reader.
 */
static void note_waker(struct wp_drain *d, const struct perf_event_header *h, struct parsed *p)
{
	const struct wp_sample *s;

	if (!d->cmdlines || !(s = parse_once(d, h, p)) || !s->tid ||
	    wp_u64map_get(&d->wakers_named, s->tid, NULL))
		return;
	if (d->wakers_named.len >= WAKERS_NAMED_MAX)
		wp_u64map_release(&d->wakers_named);
	if (!wp_u64map_put(&d->wakers_named, s->tid, 1))
		wp_cmdline_request_name(d->cmdlines, s->pid, s->tid);
}

/* A thread of the recording exited: a waker with its tid later is another thread. */
static void note_waker_exit(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_task_event te;

	if (d->wakers_named.len && !wp_task_event_parse(h, &te))
		wp_u64map_del(&d->wakers_named, te.tid);
}

/* Set a wake-up of a thread not known yet aside, trimmed, until held_resolve. */
static int held_add(struct wp_drain *d, const struct perf_event_header *h, uint64_t canon)
{
	uint8_t *dst = wp_buf_reserve(&d->held, h->size);

	if (!dst)
		return -ENOMEM;
	d->held.len += wp_sample_copy_trimmed(&d->ev->fmt, h, dst);
	if (canon)
		wp_sample_set_event_id(&d->ev->fmt, (struct perf_event_header *)dst, canon);
	return 0;
}

static int switch_out_recorded(struct wp_drain *d, const struct perf_event_header *h);

/*
 * Whether a sample of role (an event of ours) is the recording's: 1 keep
 * it, 0 leave it out (as if never read; a wake-up of another program's
 * thread is counted as foreign), -1 its thread is not known yet (set it
 * aside: held_add).  Asked again, once the rings were swept once more
 * (again), a thread still not known is not the recording's.
 */
static int sample_verdict(struct wp_drain *d, const struct perf_event_header *h, int role,
			  struct parsed *p, bool again)
{
	int v;

	switch (role) {
	case WP_EVENT_SWITCH_OUT:
		v = d->switch_outs_per_cpu ? switch_out_recorded(d, h) : 1;
		break;
	case WP_EVENT_WAKEUP:
	case WP_EVENT_WAKEUP_NEW:
	case WP_EVENT_ENQUEUED:
	case WP_EVENT_SCHED_SWITCH:
		v = wakee_known(d, h, role, p);
		if (v == 0 || (v < 0 && again)) {
			__atomic_fetch_add(&d->foreign, 1, __ATOMIC_RELAXED);
			return 0;
		}
		break;
	case WP_EVENT_ONCPU:
		v = d->oncpu_filter ? oncpu_known(d, h, p, again) : 1;
		break;
	default:
		return 0;
	}
	return v < 0 && again ? 0 : v;
}

/*
 * Copy a sample the verdict kept into the current block, and count it:
 * trimmed unless it was set aside trimmed already, its id made the
 * file's (canon), a foreign waker's user stack scrubbed.
 */
static int keep_sample(struct wp_drain *d, const struct perf_event_header *h, int role,
		       uint64_t canon, struct parsed *p, bool trimmed)
{
	uint8_t *dst = drain_room(d, h->size);
	size_t n = h->size;

	if (!dst)
		return -ENOMEM;
	if (trimmed) {
		memcpy(dst, h, n);
	} else {
		n = wp_sample_copy_trimmed(&d->ev->fmt, h, dst);
		d->counts.stack_bytes_trimmed += h->size - n;
	}
	if (canon)
		wp_sample_set_event_id(&d->ev->fmt, (struct perf_event_header *)dst, canon);
	if (p->foreign_waker)
		wp_sample_scrub_user(&d->ev->fmt, (struct perf_event_header *)dst);
	d->cur->len += n;
	d->counts.records++;
	switch (role) {
	case WP_EVENT_ONCPU:
		d->counts.samples++;
		break;
	case WP_EVENT_SWITCH_OUT:
		d->counts.switch_samples++;
		break;
	case WP_EVENT_SCHED_SWITCH:	/* switch times are no wake-ups */
		break;
	default:
		d->counts.wakeups++;
		note_waker(d, h, p);
	}
	return 0;
}

/*
 * The samples set aside before the rings were swept once more: a FORK
 * precedes the first wake-up of its thread, so by now it has been read
 * if there is one.  Keep those of the recording's threads, drop the rest.
 */
static int held_resolve(struct wp_drain *d, struct wp_buf *held)
{
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= held->len;) {
		const struct perf_event_header *h = (const void *)(held->data + off);
		uint64_t canon;
		int role = sample_role(d, h, &canon);	/* ids are the file's by now */
		struct parsed p = { .state = 0 };
		int err;

		off += h->size;
		if (sample_verdict(d, h, role, &p, true) != 1)
			continue;
		err = keep_sample(d, h, role, 0, &p, true);
		if (err)
			return err;
	}
	held->len = 0;
	return 0;
}

/*
 * A process exec'd: ask for its new command line (read on the reader's
 * thread; what it read comes in at a later pass, dated when it was read).
 */
static void note_exec(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_sample_id id;
	struct wp_comm c;

	if (!d->cmdlines || wp_comm_parse(h, &c) || !c.exec ||
	    wp_sample_id_parse(&d->ev->fmt, h, &id))
		return;
	wp_cmdline_request(d->cmdlines, c.pid, id.time);
}

/*
 * The command lines read since the last pass, and the records other
 * threads made meanwhile (wp_drain_add_source), put in before it: they
 * were made after every record of the passes before this one was
 * written, so their times keep the order ROUND promises (order.h).
 */
static void drain_cmdlines(struct wp_drain *d)
{
	struct wp_buf *b = &d->cmdline_records;
	unsigned int n = __atomic_load_n(&d->nr_sources, __ATOMIC_ACQUIRE);

	if (d->cmdlines)
		wp_cmdline_take(d->cmdlines, b);
	for (unsigned int i = 0; i < n; i++)
		d->sources[i].take(d->sources[i].arg, b);
	if (!b->len)
		return;
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= b->len;) {
		const struct perf_event_header *h = (const void *)(b->data + off);
		uint8_t *dst = drain_room(d, h->size);

		if (!dst)
			break;
		memcpy(dst, h, h->size);
		d->cur->len += h->size;
		d->counts.records++;
		d->counts.synthesized++;
		off += h->size;
	}
	b->len = 0;
}

/*
 * A switch-out stack from the command's cgroup is for the recording when
 * the per-task events would have taken it: not the stub's, not before
 * the thread's FORK or the command's exec (the events start there), not
 * on the thread's way out, once it has left its memory and its events (no
 * user registers).  1: keep, 0: drop, -1: its thread's FORK or exec may
 * still be in another CPU's ring (held_resolve asks again).
 */
static int switch_out_recorded(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_sample s;
	uint64_t born;

	if (wp_sample_parse(&d->ev->fmt, h, &s))
		return 1;	/* the reader will say what is wrong with it */
	if (s.pid == __atomic_load_n(&d->stub_pid, __ATOMIC_RELAXED))
		return 0;
	if (d->ev->fmt.sample_type & PERF_SAMPLE_REGS_USER &&
	    s.regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	/* Attached: the events were on before any thread of theirs was made. */
	if (d->members_only)
		return 1;
	if (!wp_u64map_get(&d->born, s.tid, &born))
		return -1;
	return s.time >= born;
}

/* A thread's FORK, or an exec: its switch-out stacks count from then. */
static void note_born(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_sample_id sid;
	struct wp_task_event te;
	struct wp_comm c;
	uint32_t tid;

	if (!d->switch_outs_per_cpu || wp_sample_id_parse(&d->ev->fmt, h, &sid))
		return;
	if (h->type == PERF_RECORD_FORK && !wp_task_event_parse(h, &te))
		tid = te.tid;
	else if (h->type == PERF_RECORD_COMM && !wp_comm_parse(h, &c) && c.exec)
		tid = c.tid;
	else
		return;
	/* An exec of a thread already born changes nothing. */
	if (!wp_u64map_get(&d->born, tid, NULL))
		wp_u64map_put(&d->born, tid, sid.time);
}

void wp_drain_skip_stub(struct wp_drain *d, uint32_t pid)
{
	/* Before the stub runs again: wp_child_start comes after. */
	__atomic_store_n(&d->stub_pid, pid, __ATOMIC_RELAXED);
}

/*
 * The process of a record that the events on a cgroup write for a task
 * (the task that wrote it: for a FORK, the parent): 0, or -1 when the
 * record is of another kind or names none.
 */
static int record_pid(const struct wp_drain *d, const struct perf_event_header *h, uint32_t *pid)
{
	struct wp_sample_id sid;
	uint32_t tid;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return wp_sample_thread(&d->ev->fmt, h, pid, &tid) ? -1 : 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (wp_sample_id_parse(&d->ev->fmt, h, &sid))
			return -1;
		*pid = sid.pid;
		return 0;
	}
	return -1;
}

/*
 * The stub that launches the command is in the command's cgroup, so the
 * events on the cgroup see it (per task, it had none enabled): its
 * records are not the recording's, but for its FORK of the command, where
 * the command's life in the recording starts (the only record that
 * names the stub).  Losses are counted whoever they hit.
 */
static bool stub_record(struct wp_drain *d, const struct perf_event_header *h)
{
	uint32_t stub = __atomic_load_n(&d->stub_pid, __ATOMIC_RELAXED), pid;
	struct wp_task_event te;

	if (!d->records_per_cpu || !stub || record_pid(d, h, &pid) || pid != stub)
		return false;
	return h->type != PERF_RECORD_FORK || wp_task_event_parse(h, &te) || te.pid == stub;
}

/*
 * Attached through the targets' own cgroup: a record of a process that
 * is not one of theirs (moved into the cgroup since, or not known yet: a
 * child whose FORK is still in another CPU's ring), which the events on
 * the cgroup see too.  A FORK by one of theirs makes its child theirs; a
 * FORK by another makes a pid used again someone else's.
 */
static bool outsider_record(struct wp_drain *d, const struct perf_event_header *h)
{
	struct wp_task_event te;
	uint64_t canon;
	uint32_t pid;
	int role;

	if (!d->members_only)
		return false;
	if (h->type == PERF_RECORD_SAMPLE) {
		/*
		 * The events on the cgroup's only: the scheduler's tracepoints
		 * are per CPU, with filters of their own, and name other
		 * programs' threads as the wakers of the recording's.
		 */
		role = sample_role(d, h, &canon);
		if (role != WP_EVENT_ONCPU && role != WP_EVENT_SWITCH_OUT)
			return false;
	} else if (h->type == PERF_RECORD_FORK) {
		if (wp_task_event_parse(h, &te))
			return false;
		if (wp_u64map_get(&d->members, te.ppid, NULL)) {
			if (te.pid != te.ppid)
				wp_u64map_put(&d->members, te.pid, 1);
			return false;
		}
		if (te.pid != te.ppid)
			wp_u64map_del(&d->members, te.pid);
		return true;
	}
	if (record_pid(d, h, &pid))
		return false;
	/* An exiting task's last switch-out, once it is unhashed, names no one. */
	return pid != UINT32_MAX && !wp_u64map_get(&d->members, pid, NULL);
}

static int drain_record_ours(struct wp_drain *d, const struct perf_event_header *h);

/* Count one record and copy it (stack trimmed) into the current block. */
static int drain_record(struct wp_drain *d, const struct perf_event_header *h)
{
	if (stub_record(d, h))
		return 0;
	/* Asked again once every ring was read again (strangers_resolve). */
	if (outsider_record(d, h))
		return wp_buf_append(&d->strangers, h, h->size);
	return drain_record_ours(d, h);
}

/*
 * The records set aside by a sweep (drain_record), after the next: the
 * FORKs first, which make their children the targets', then the rest;
 * what is still no one's of theirs is left out, and counted.
 */
static int strangers_resolve(struct wp_drain *d, struct wp_buf *b)
{
	int err = 0;

	for (int forks = 1; forks >= 0; forks--) {
		for (size_t off = 0; !err && off + sizeof(struct perf_event_header) <= b->len;) {
			const struct perf_event_header *h = (const void *)(b->data + off);

			off += h->size;
			if ((h->type == PERF_RECORD_FORK) != forks)
				continue;
			if (outsider_record(d, h))
				__atomic_fetch_add(&d->outsiders, 1, __ATOMIC_RELAXED);
			else
				err = drain_record_ours(d, h);
		}
	}
	b->len = 0;
	return err;
}

/* Count one record of the recording's and copy it (stack trimmed) into the current block. */
static int drain_record_ours(struct wp_drain *d, const struct perf_event_header *h)
{
	uint64_t id, lost, canon;
	uint8_t *dst;

	if (h->type == PERF_RECORD_SAMPLE) {
		struct parsed p;
		int role = sample_role(d, h, &canon);

		/* Decoded only when asked (not the whole struct: every sample passes). */
		p.state = 0;
		p.foreign_waker = false;

		if (role < WP_EVENT_ONCPU || role > WP_EVENT_SCHED_SWITCH) {
			/*
			 * No event of ours: its fields (time, stacks) may be
			 * another recorder's too (event.c), so it is not kept.
			 */
			d->counts.unknown_samples++;
			return 0;
		}
		switch (sample_verdict(d, h, role, &p, false)) {
		case 0:
			return 0;
		case -1:
			return held_add(d, h, canon);
		}
		return keep_sample(d, h, role, canon, &p, false);
	}
	dst = drain_room(d, h->size);
	if (!dst)
		return -ENOMEM;
	d->counts.records++;
	switch (h->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		d->counts.switches++;
		if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
			__atomic_fetch_add(&d->switch_outs[d->cur_ring], 1, __ATOMIC_RELAXED);
		break;
	case PERF_RECORD_LOST:
		if (!wp_lost_parse(h, &id, &lost))
			d->counts.lost_records += lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (!wp_lost_parse(h, &id, &lost))
			d->counts.lost_samples += lost;
		break;
	case PERF_RECORD_THROTTLE:
		d->counts.throttles++;
		break;
	case PERF_RECORD_MMAP2:
		note_mapped_file(d, h);
		note_anon_code(d, h);
		break;
	case PERF_RECORD_COMM:
		note_program_start(d, h);
		note_born(d, h);
		note_exec(d, h);
		break;
	case PERF_RECORD_FORK:
		note_program_start(d, h);
		note_born(d, h);
		/* fallthrough */
	case PERF_RECORD_EXIT:
		note_wakee(d, h);
		note_task(d, h);
		if (h->type == PERF_RECORD_EXIT) {
			note_waker_exit(d, h);
			note_program_end(d, h);
		}
		break;
	}
	memcpy(dst, h, h->size);
	d->cur->len += h->size;
	return 0;
}

static void drain_append_round(struct wp_drain *d, uint64_t pass_start)
{
	struct perf_event_header round = { .type = WP_RECORD_ROUND, .size = sizeof(round) };
	uint8_t *dst = drain_room(d, sizeof(round));

	if (dst) {
		struct block *b = d->cur;

		memcpy(dst, &round, sizeof(round));
		b->len += sizeof(round);
		b->round_ns = pass_start;
		/* Without room for the mark, a cut is dated by an earlier ROUND. */
		if (!WP_GROW(b->rounds, b->cap_rounds, b->nr_rounds + 1))
			b->rounds[b->nr_rounds++] = (struct round_mark){ b->len, pass_start };
	}
}

/* Read every ring once; returns the number of bytes read. */
static uint64_t drain_sweep(struct wp_drain *d)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < d->ev->nr_cpus; i++) {
		struct wp_ring *r = &d->ev->rings[i];
		const struct perf_event_header *h;
		uint64_t avail;
		int ret;

		if (!r->meta)
			continue;
		avail = wp_ring_begin(r);
		/* A ring this full when recording stopped may have lost records unannounced. */
		if (d->final_pass && avail + BLOCK_ROOM > r->data_size)
			d->counts.rings_full_at_end++;
		if (!avail)
			continue;
		d->cur_ring = i;
		while ((ret = wp_ring_read_next(r, &h)) > 0) {
			if (drain_record(d, h)) {
				/* Out of memory: skip the rest and say so. */
				ret = -ENOMEM;
				break;
			}
		}
		if (ret < 0) {
			uint64_t left = r->head - r->pos;

			if (!d->warned_corrupt)
				wp_warn("%s in the ring of CPU %d; %llu bytes skipped",
					ret == -ENOMEM ? "out of memory" : "malformed record",
					r->cpu, (unsigned long long)left);
			d->warned_corrupt = true;
			d->counts.corrupt_bytes += left;
			wp_ring_skip_all(r);
		}
		total += avail;
		d->counts.ring_bytes += avail - (r->head - r->pos);
		wp_ring_end(r);
	}
	return total;
}

/* Sweeps needed at most for the wake-ups of threads not known yet. */
#define HELD_SWEEPS 4

/*
 * One pass: every ring read, and again while wake-ups wait for their
 * thread's FORK, all before the round marker (records read before it are
 * ordered among themselves by the report).  Returns the bytes read.
 */
static uint64_t drain_pass(struct wp_drain *d)
{
	uint64_t start = wp_clock_ns(CLOCK_MONOTONIC);
	struct wp_buf held = { 0 }, strangers = { 0 };
	uint64_t total;

	drain_cmdlines(d);
	total = drain_sweep(d);
	__atomic_store_n(&d->swept_ns, start, __ATOMIC_RELEASE);

	for (int i = 0; (d->held.len || d->strangers.len) && i < HELD_SWEEPS; i++) {
		struct wp_buf t = held, u = strangers;

		held = d->held;	/* what this sweep set aside; the next one tells */
		d->held = t;
		strangers = d->strangers;
		d->strangers = u;
		total += drain_sweep(d);
		if (held_resolve(d, &held) || strangers_resolve(d, &strangers))
			break;
	}
	/* Those of the last sweep, with what is known now. */
	held_resolve(d, &d->held);
	strangers_resolve(d, &d->strangers);
	exited_age(d);
	wp_buf_release(&held);
	wp_buf_release(&strangers);
	if (__atomic_exchange_n(&d->flush_asked, false, __ATOMIC_ACQ_REL)) {
		/* Even a quiet pass: its ROUND tells the sink that time has passed. */
		drain_append_round(d, start);
		drain_submit(d);
	} else if (total) {
		drain_append_round(d, start);
		if (d->cur && (d->cur->len > (d->submitted ? BLOCK_SIZE / 2 : FIRST_BLOCK) ||
			       wp_clock_ns(CLOCK_MONOTONIC) - d->last_flush_ns > FLUSH_INTERVAL_NS))
			drain_submit(d);
	}
	pthread_mutex_lock(&d->lock);
	d->published = d->counts;
	pthread_mutex_unlock(&d->lock);
	return total;
}

static void *drain_main(void *arg)
{
	struct wp_drain *d = arg;
	struct epoll_event evs[64];

	/*
	 * A drain thread that waits for a CPU behind the workload loses
	 * records; run ahead of it when allowed (CAP_SYS_NICE), else as is.
	 */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10))
		wp_debug("drain thread keeps the default priority: %s", strerror(errno));

	for (;;) {
		bool stop;
		int n = epoll_wait(d->epfd, evs, (int)ARRAY_SIZE(evs), POLL_TIMEOUT_MS);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == d->wakefd) {
				uint64_t v;

				if (read(d->wakefd, &v, sizeof(v)) < 0)
					v = 0;	/* EAGAIN: someone else read it */
				continue;
			}
			/*
			 * A ring whose task exited reports HUP forever; stop
			 * polling it (the timeout still drains it).
			 */
			if (evs[i].events & EPOLLHUP)
				epoll_ctl(d->epfd, EPOLL_CTL_DEL, evs[i].data.fd, NULL);
		}
		pthread_mutex_lock(&d->lock);
		stop = d->stop;
		pthread_mutex_unlock(&d->lock);
		/* Stop comes after the events were disabled: this pass sees the end. */
		d->final_pass = stop;
		drain_pass(d);
		d->final_pass = false;
		if (stop)
			break;
	}
	/* Read until the rings are empty. */
	while (drain_pass(d))
		;
	drain_submit(d);
	pthread_mutex_lock(&d->lock);
	d->writer_done = true;
	pthread_cond_signal(&d->queue_cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/*
 * Note the kernel addresses in a block's samples, so that the symbols they
 * need can be saved with the recording (kernel addresses change at boot).
 * Runs on the writer thread, off the draining path.
 */
static void note_kernel_ips(struct wp_drain *d, const uint8_t *buf, size_t len)
{
	const struct wp_sample_format *fmt = &d->ev->fmt;
	size_t off = 0;

	if (!(d->ev->meta_flags & WP_META_KERNEL_SAMPLES))
		return;
	wp_seen_kernel_lock(d->seen);
	while (off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(buf + off);
		struct wp_callchain_walk walk;
		struct wp_sample s;
		uint64_t ip;
		bool kernel;

		if (h->size < sizeof(*h) || off + h->size > len)
			break;
		off += h->size;
		if (h->type != PERF_RECORD_SAMPLE || wp_sample_parse(fmt, h, &s))
			continue;
		wp_callchain_walk_init(&walk, h, &s);
		while (wp_callchain_walk_next(&walk, &ip, &kernel))
			if (kernel)
				wp_seen_kernel_ip(d->seen, ip);
		if (!s.nr_callchain && wp_sample_in_kernel(h))
			wp_seen_kernel_ip(d->seen, s.ip);
	}
	wp_seen_kernel_unlock(d->seen);
}

/*
 * Add the records of the first len bytes of a block to c, as the drain
 * counted them (its samples carry their canonical event ids by now):
 * the counts of what a write that kept only part of a block wrote.
 */
static void count_written(const struct wp_drain *d, struct wp_summary *c, const uint8_t *buf,
			  size_t len)
{
	const struct perf_event_header *h;
	uint64_t canon;
	size_t off = 0;

	while ((h = wp_record_next(buf, len, &off)))
		wp_summary_count(c, h, h->type == PERF_RECORD_SAMPLE ? sample_role(d, h, &canon) : -1);
}

/*
 * Up to when a file that kept only the first kept bytes of block b holds
 * every record: the start of the last pass whose ROUND it holds, else of
 * the last block written whole; else (nothing dated yet) now.
 */
static uint64_t written_until(const struct wp_drain *d, const struct block *b, size_t kept)
{
	for (size_t i = b->nr_rounds; i-- > 0;)
		if (b->rounds[i].end <= kept)
			return b->rounds[i].ns;
	return d->written_round_ns ? d->written_round_ns : wp_clock_ns(CLOCK_MONOTONIC);
}

static void *writer_main(void *arg)
{
	struct wp_drain *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct block *b;
		size_t kept = 0;
		int err = 0;

		while ((!d->queue_head && !d->writer_done) || d->writer_held)
			pthread_cond_wait(&d->queue_cond, &d->lock);
		b = d->queue_head;
		if (!b)
			break;
		d->queue_head = b->next;
		if (!d->queue_head)
			d->queue_tail = NULL;
		if (!d->write_err) {
			struct wp_sink_progress p;

			pthread_mutex_unlock(&d->lock);
			note_kernel_ips(d, b->data, b->len);
			err = wp_sink_records(d->sink, b->data, b->len, b->round_ns, &p);
			kept = p.kept;
			pthread_mutex_lock(&d->lock);
			d->bytes_written = p.bytes;
		}
		if (err && !d->write_err) {
			d->write_err = err;	/* keep consuming so draining never stalls */
			/*
			 * The file ends where its records do: a sink's files hold
			 * the blocks before; the writer kept what fit of this one.
			 */
			d->write_err_ns = written_until(d, b, kept);
			count_written(d, &d->written, b->data, kept);
		} else if (!d->write_err) {
			d->written = b->counts;
			if (b->round_ns)
				d->written_round_ns = b->round_ns;
		}
		d->queued_bytes -= b->len;
		if (d->nr_free_blocks < SPARE_BLOCKS) {
			b->next = d->free_blocks;
			d->free_blocks = b;
			d->nr_free_blocks++;
		} else {
			block_free(b);
		}
		pthread_cond_broadcast(&d->space_cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int wp_drain_start(struct wp_evlist *ev, struct wp_sink *sink, struct wp_drain **out)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct wp_drain *d;
	int err;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ev = ev;
	d->sink = sink;
	d->epfd = d->wakefd = -1;
	d->writer_held = true;
	d->anchoring = !(ev->meta_flags & WP_META_CPU_WIDE);
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->wakees_lock, NULL);
	pthread_cond_init(&d->queue_cond, NULL);
	pthread_cond_init(&d->space_cond, NULL);
	d->last_flush_ns = wp_clock_ns(CLOCK_MONOTONIC);
	/* Without it, only the command lines read at the start are kept. */
	if (wp_cmdline_reader_start(CLOCK_MONOTONIC, &d->cmdlines))
		wp_warn("the command lines of the processes that exec will not be recorded");

	d->roles = calloc(ev->nr_fds + 1, sizeof(*d->roles));
	d->switch_outs = calloc(ev->nr_cpus, sizeof(*d->switch_outs));
	if (!d->roles || !d->switch_outs || wp_seen_new(&d->seen)) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < ev->nr_fds; i++) {
		d->roles[i].id = ev->fds[i].file_id;
		d->roles[i].role = ev->descs[ev->fds[i].desc].role;
		if (ev->cgroup_descs & (1U << ev->fds[i].desc)) {
			d->switch_outs_per_cpu = true;
			if (d->roles[i].role == WP_EVENT_ONCPU)
				d->records_per_cpu = true;
		}
	}
	d->nr_roles = ev->nr_fds;
	qsort(d->roles, d->nr_roles, sizeof(*d->roles), id_role_cmp);
	d->oncpu_filter = ev->percpu_descs != 0;
	d->members_only = ev->cgroup_descs && ev->nr_cgroup_members;
	for (size_t i = 0; i < ev->nr_cgroup_members; i++)
		if (wp_u64map_put(&d->members, (uint64_t)ev->cgroup_members[i], 1)) {
			err = -ENOMEM;
			goto out_free;
		}

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->epfd < 0 || d->wakefd < 0) {
		err = -errno;
		goto out_free;
	}
	e.data.fd = d->wakefd;
	epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->wakefd, &e);
	for (unsigned int i = 0; i < ev->nr_cpus; i++) {
		if (ev->ring_owner[i] < 0)
			continue;
		e.data.fd = ev->ring_owner[i];
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev->ring_owner[i], &e)) {
			err = -errno;
			goto out_free;
		}
	}
	err = -pthread_create(&d->writer_thread, NULL, writer_main, d);
	if (err)
		goto out_free;
	d->writer_started = true;
	err = -pthread_create(&d->drain_thread, NULL, drain_main, d);
	if (err) {
		pthread_mutex_lock(&d->lock);
		d->writer_done = true;
		pthread_cond_signal(&d->queue_cond);
		pthread_mutex_unlock(&d->lock);
		goto out_free;
	}
	d->drain_started = true;
	*out = d;
	return 0;

out_free:
	wp_error("cannot start the drain threads: %s", strerror(-err));
	wp_drain_free(d);
	return err;
}

void wp_drain_release_writer(struct wp_drain *d)
{
	pthread_mutex_lock(&d->lock);
	d->writer_held = false;
	pthread_cond_signal(&d->queue_cond);
	pthread_mutex_unlock(&d->lock);
}

void wp_drain_flush(struct wp_drain *d)
{
	__atomic_store_n(&d->flush_asked, true, __ATOMIC_RELEASE);
	wp_drain_kick(d);
}

void wp_drain_progress(struct wp_drain *d, struct wp_summary *s, uint64_t *bytes_written)
{
	pthread_mutex_lock(&d->lock);
	*s = d->published;
	*bytes_written = d->bytes_written;
	pthread_mutex_unlock(&d->lock);
}

int wp_drain_write_error(struct wp_drain *d, uint64_t *when)
{
	int err;

	pthread_mutex_lock(&d->lock);
	err = d->write_err;
	*when = d->write_err_ns;
	pthread_mutex_unlock(&d->lock);
	return err;
}

int wp_drain_stop(struct wp_drain *d, struct wp_summary *s)
{
	const struct wp_summary *c;
	uint64_t one = 1;
	int err;

	pthread_mutex_lock(&d->lock);
	d->stop = true;
	d->writer_held = false;
	pthread_cond_signal(&d->queue_cond);
	pthread_mutex_unlock(&d->lock);
	if (write(d->wakefd, &one, sizeof(one)) < 0)
		wp_debug("cannot wake the drain thread; it wakes on its timeout");
	if (d->drain_started)
		pthread_join(d->drain_thread, NULL);
	d->drain_started = false;
	if (d->writer_started)
		pthread_join(d->writer_thread, NULL);
	d->writer_started = false;
	/* After a write error, the counts of what the file holds. */
	c = d->write_err ? &d->written : &d->counts;
	wp_summary_take_counts(s, c);
	s->ring_bytes = c->ring_bytes;
	s->stack_bytes_trimmed = c->stack_bytes_trimmed;
	s->corrupt_bytes = c->corrupt_bytes;
	s->rings_full_at_end = c->rings_full_at_end;
	s->unknown_samples = c->unknown_samples;
	err = d->write_err;
	return err;
}

int wp_drain_add_source(struct wp_drain *d, wp_drain_source_fn take, void *arg)
{
	unsigned int n = d->nr_sources;

	if (n == WP_DRAIN_MAX_SOURCES)
		return -ENOSPC;
	d->sources[n] = (struct side_source){ .take = take, .arg = arg };
	__atomic_store_n(&d->nr_sources, n + 1, __ATOMIC_RELEASE);
	return 0;
}

int wp_drain_known_cmdline(struct wp_drain *d, uint32_t pid, char *const argv[])
{
	return d->cmdlines ? wp_cmdline_known(d->cmdlines, pid, argv) : 0;
}

void wp_drain_cmdline_counts(struct wp_drain *d, uint64_t *dropped, uint64_t *gone)
{
	*dropped = *gone = 0;
	if (d->cmdlines)
		wp_cmdline_counts(d->cmdlines, dropped, gone);
}

uint64_t wp_drain_switch_outs(const struct wp_drain *d, unsigned int cpu, uint64_t *as_of_ns)
{
	/* The time first: the counts may be newer than it, never older. */
	*as_of_ns = __atomic_load_n(&d->swept_ns, __ATOMIC_ACQUIRE);
	return cpu < d->ev->nr_cpus ? __atomic_load_n(&d->switch_outs[cpu], __ATOMIC_RELAXED) : 0;
}

uint64_t wp_drain_outsiders(const struct wp_drain *d)
{
	return __atomic_load_n(&d->outsiders, __ATOMIC_RELAXED);
}

uint64_t wp_drain_foreign(const struct wp_drain *d, uint64_t *as_of_ns)
{
	*as_of_ns = __atomic_load_n(&d->swept_ns, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&d->foreign, __ATOMIC_RELAXED);
}

int wp_drain_wakees(struct wp_drain *d, struct wp_buf *out)
{
	uint64_t tid, one;
	size_t pos = 0;
	int err = 0;

	out->len = 0;
	pthread_mutex_lock(&d->wakees_lock);
	if (!d->track_wakees)
		err = -ENOENT;
	while (!err && wp_u64map_next(&d->wakees, &pos, &tid, &one)) {
		uint32_t t = (uint32_t)tid;

		err = wp_buf_append(out, &t, sizeof(t));
	}
	pthread_mutex_unlock(&d->wakees_lock);
	return err;
}

struct wp_seen *wp_drain_seen(struct wp_drain *d)
{
	return d->seen;
}

void wp_drain_kick(struct wp_drain *d)
{
	uint64_t one = 1;

	if (d->wakefd >= 0 && write(d->wakefd, &one, sizeof(one)) < 0)
		wp_debug("cannot wake the drain thread; it wakes on its timeout");
}

void wp_drain_free(struct wp_drain *d)
{
	struct block *b, *next;

	if (!d)
		return;
	if (d->drain_started || d->writer_started) {
		struct wp_summary ignored;

		wp_drain_stop(d, &ignored);
	}
	for (b = d->queue_head; b; b = next) {
		next = b->next;
		block_free(b);
	}
	for (b = d->free_blocks; b; b = next) {
		next = b->next;
		block_free(b);
	}
	block_free(d->cur);
	wp_seen_free(d->seen);
	wp_u64map_release(&d->born);
	wp_u64map_release(&d->members);
	wp_u64map_release(&d->others);
	wp_u64map_release(&d->exited[0]);
	wp_u64map_release(&d->exited[1]);
	wp_cmdline_reader_free(d->cmdlines);
	wp_buf_release(&d->cmdline_records);
	free(d->roles);
	free(d->switch_outs);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->wakefd >= 0)
		close(d->wakefd);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->wakees_lock);
	pthread_cond_destroy(&d->queue_cond);
	pthread_cond_destroy(&d->space_cond);
	wp_u64map_release(&d->wakees);
	wp_u64map_release(&d->wakers_named);
	wp_buf_release(&d->held);
	wp_buf_release(&d->strangers);
	{
		size_t pos = 0;
		uint64_t tid, fd;

		while (wp_u64map_next(&d->anchors, &pos, &tid, &fd))
			if (fd != NO_ANCHOR)
				close((int)fd);
	}
	wp_u64map_release(&d->anchors);
	wp_u64map_release(&d->creators);
	free(d);
}
