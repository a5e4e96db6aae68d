/* SPDX-License-Identifier: GPL-2.0-or-later */
/* session.c: one recording: set up, run until told to stop, close the file. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "closing.h"
#include "drain.h"
#include "filecache.h"
#include "layout.h"
#include "livestage.h"
#include "log.h"
#include "quote.h"
#include "rotate.h"
#include "session.h"
#include "sink.h"
#include "stackgate.h"
#include "cgroup.h"
#include "synth.h"
#include "target.h"
#include "threadclock.h"
#include "util.h"
#include "waitstack.h"

#define TICK_NS (200ULL * 1000 * 1000)

/* A thread wallprof opened events for, and when they were all set up. */
struct wp_attached {
	pid_t tid;			/* first: sorted and searched by it */
	pid_t pid;
	uint64_t done;
	size_t fds_from, fds_to;	/* its events in ev.fds */
	/*
	 * It exited while its events were being opened: its EXIT record may
	 * never come (only the events of the CPU it exits on write one).
	 */
	bool vanished;
};

struct session {
	const struct wp_record_opts *opts;
	struct wp_priv priv;
	struct wp_evlist ev;
	/*
	 * Where the records go (sink.h): the file, or the rotating files,
	 * with the live unwinder and a monitor in front when asked for.
	 */
	struct wp_sink *sink;
	struct wp_closing *closing;	/* the blocks that close each file */
	struct wp_drain *drain;
	struct wp_child child;
	bool have_child;
	int child_status;	/* wait status, -1 while running */
	uint64_t child_start_ns;	/* CLOCK_MONOTONIC, once it runs */
	struct wp_meta meta;
	struct wp_summary summary;
	sigset_t sigs;
	bool progress_shown;
	struct wp_buf wakees;		/* thread ids whose wake-ups are kept at first */
	uint32_t newer_than;		/* the last thread id handed out as they were listed */
	struct wp_attached *attached;	/* threads given events of their own */
	size_t nr_attached, cap_attached;
	bool attached_sorted;
	int write_err;		/* the write error that cut the recording short */
	uint64_t cut_ns;	/* when */
	struct wp_stackgate *gate;	/* --switch-stacks=RATE, or NULL */
	/*
	 * The wake-up tracepoints' filters, renewed while other programs'
	 * threads pass them (refilter_step): on, the foreign records seen at
	 * the last look, when to look next, and a renewal under way (the
	 * last thread id then, and when it was read; 0: none).
	 */
	bool refilter;
	uint64_t refilter_seen, refilter_next_ns, refilter_since_ns, refilter_gap_ns;
	uint32_t refilter_last_pid;
	struct wp_cgroup cgroup;	/* the command's, for its switch-out stacks */
	int target_cgroup;		/* the processes attached to have it to themselves; or -1 */
	/*
	 * The kernel's own figures of the threads' time (threadclock.h): the
	 * recording's processes (not -a), the listener of their exits (root
	 * or CAP_NET_ADMIN; else NULL, and why in exits_err), and the
	 * figures read here at the start and the end, for the drain to take.
	 */
	struct wp_procset *procs;
	struct wp_exitclock *exits;
	int exits_err;
	pthread_mutex_t clock_lock;
	struct wp_buf clock_records;
	pthread_t clock_thread;		/* rotating or flight: reads them on time */
	pthread_cond_t clock_wake;	/* with clock_lock: stop */
	bool clock_running;
	int clock_stop;			/* under clock_lock */
};

static void fill_meta(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	struct wp_meta *m = &s->meta;
	struct utsname u;

	m->clockid = CLOCK_MONOTONIC;
	gethostname(m->hostname, sizeof(m->hostname) - 1);
	if (!uname(&u)) {
		/* uname fields are 65 bytes; a longer one is cut, never overrun. */
		snprintf(m->os_release, sizeof(m->os_release), "%s", u.release);
		snprintf(m->machine, sizeof(m->machine), "%.63s", wp_arch_host_machine());
	}
	/* Kernel addresses mean the same only within one boot (KASLR). */
	if (!wp_read_text_file("/proc/sys/kernel/random/boot_id", m->boot_id, sizeof(m->boot_id)))
		m->boot_id[strcspn(m->boot_id, "\n")] = '\0';
	m->argv = o->argv;
	m->argc = (uint32_t)o->argc;
	m->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	m->callgraph = o->events.callgraph;
	if (o->events.cpu_wide)
		m->target_mode = WP_TARGET_ALL_CPUS;
	else if (o->nr_pids)
		m->target_mode = WP_TARGET_PID;
	else if (o->nr_tids)
		m->target_mode = WP_TARGET_TID;
	else
		m->target_mode = WP_TARGET_COMMAND;
}

/*
 * Attaching gives up after this long if the thread lists never settle
 * (threads made faster than events can be set up for them).
 */
#define ATTACH_TIME_MAX_NS (2ULL * NSEC_PER_SEC)
/*
 * A thread created this soon after its creator's events were all set up
 * (by the time of its FORK record, which the kernel writes a few
 * microseconds after the new thread inherited its creator's events) may
 * have been created before they were: it may carry only some of them, so
 * it gets events of its own.  Much longer, and a chain of threads that
 * each make the next within this time would be chased link by link.
 */
#define ATTACH_SUSPECT_NS (200ULL * 1000)

/* A set of thread ids: appended, sorted when next searched. */
struct tid_set {
	pid_t *v;
	size_t n, cap;
	bool sorted;
};

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int tid_set_add(struct tid_set *set, pid_t tid)
{
	if (WP_GROW(set->v, set->cap, set->n + 1))
		return -ENOMEM;
	set->v[set->n++] = tid;
	set->sorted = false;
	return 0;
}

static bool tid_set_has(struct tid_set *set, pid_t tid)
{
	if (!set->sorted && set->n) {
		qsort(set->v, set->n, sizeof(*set->v), pid_cmp);
		set->sorted = true;
	}
	return set->n && bsearch(&tid, set->v, set->n, sizeof(*set->v), pid_cmp);
}

/* The attached thread tid, or NULL (s->attached sorted by tid first). */
static struct wp_attached *find_attached(struct session *s, pid_t tid)
{
	struct wp_attached key = { .tid = tid };

	if (!s->attached_sorted && s->nr_attached) {
		qsort(s->attached, s->nr_attached, sizeof(*s->attached), pid_cmp);
		s->attached_sorted = true;
	}
	return s->nr_attached ? bsearch(&key, s->attached, s->nr_attached,
					sizeof(*s->attached), pid_cmp) : NULL;
}

/*
 * Capabilities that wallprof's user does not have (file capabilities)
 * reach only what that user could trace, unless --any-process is given:
 * CAP_PERFMON alone lets the kernel attach to any process and copy its
 * stack.  -EPERM (logged) or -ESRCH when the thread is gone.
 */
static int check_traceable(struct session *s, pid_t tid, const char *what)
{
	int err;

	if (!s->priv.elevated || s->opts->any_process)
		return 0;
	err = wp_priv_user_may_trace(&s->priv, tid);
	if (err == -EPERM)
		wp_error("refusing to profile %s: user %u could not trace it (it is another "
			 "user's or privileged), and wallprof's capabilities reach such "
			 "processes only with --any-process", what, (unsigned int)s->priv.uid);
	return err;
}

/*
 * Open events for one thread, noting which and when they were all set up.
 * -ESRCH when the thread is gone.
 */
static int attach_thread(struct session *s, pid_t pid, pid_t tid, const char *what)
{
	size_t from = s->ev.nr_fds;
	struct wp_attached *a;
	int err = check_traceable(s, tid, what);

	if (!err)
		err = wp_evlist_open_task(&s->ev, tid, what);
	/*
	 * Again once attached: a set-user-ID execve in between changes the
	 * thread's IDs; one after it makes the kernel drop the events.
	 */
	if (!err)
		err = check_traceable(s, tid, what);
	if (s->ev.nr_fds == from)
		return err;
	if (WP_GROW(s->attached, s->cap_attached, s->nr_attached + 1))
		return -ENOMEM;
	a = &s->attached[s->nr_attached++];
	a->tid = tid;
	a->pid = pid;
	a->vanished = err == -ESRCH;
	a->done = wp_clock_ns(CLOCK_MONOTONIC);
	a->fds_from = from;
	a->fds_to = s->ev.nr_fds;
	s->attached_sorted = false;
	return err;
}

struct follow {
	struct session *s;
	struct tid_set inherited;	/* created by followed threads, with all their events */
	struct tid_set dead;		/* listed, but exited (zombies stay listed) */
};

/*
 * Threads that inherited events: the kernel announces each with a FORK
 * record, written by its creator's events.  Only a creator that was
 * followed before, and not just being attached, passed on all of them.
 */
static void note_inherited(const struct perf_event_header *h, void *arg)
{
	struct follow *f = arg;
	struct wp_sample_id id;
	struct wp_attached *creator;
	struct wp_task_event te;

	if (h->type != PERF_RECORD_FORK || wp_task_event_parse(h, &te) ||
	    wp_sample_id_parse(&f->s->ev.fmt, h, &id))
		return;
	creator = find_attached(f->s, (pid_t)te.ptid);
	if (creator ? id.time > creator->done + ATTACH_SUSPECT_NS :
		      tid_set_has(&f->inherited, (pid_t)te.ptid))
		tid_set_add(&f->inherited, (pid_t)te.tid);
}

/*
 * -p: events for every thread of the processes.  Each event counts as
 * soon as it is set up, so a thread that an attached thread creates from
 * then on inherits it and is announced by a FORK record; but a thread
 * created meanwhile by a thread not yet attached inherits nothing, and
 * one created while its creator's events were being set up inherits only
 * some.  So the thread lists are read again and again, attaching to every
 * thread that is not known to carry all the events, until two readings in
 * a row find none.  A thread that gets events of its own on top of
 * inherited ones is recorded twice; report keeps one (coverage.h), told
 * by the ATTACH records.
 */
static int attach_processes(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	struct follow f = { .s = s };
	uint64_t deadline = wp_clock_ns(CLOCK_MONOTONIC) + ATTACH_TIME_MAX_NS;
	bool *gone = calloc(o->nr_pids, sizeof(*gone));
	int err = 0, quiet = 0;
	char what[64];

	if (!gone)
		return -ENOMEM;
	for (unsigned int round = 0; !err && quiet < 2; round++) {
		bool found = false;

		for (size_t i = 0; !err && i < o->nr_pids; i++) {
			pid_t *tids = NULL;
			size_t n = 0;

			if (gone[i])
				continue;
			err = wp_list_threads(o->pids[i], &tids, &n);
			if (err == -ESRCH || (!err && !wp_process_alive(o->pids[i]))) {
				free(tids);
				err = 0;
				gone[i] = true;
				if (round)
					continue;	/* it exited while we attached */
				wp_error("cannot attach to process %d: no such process", o->pids[i]);
				err = -ESRCH;
				break;
			}
			snprintf(what, sizeof(what), "process %d", o->pids[i]);
			wp_evlist_peek(&s->ev, note_inherited, &f);
			for (size_t t = 0; !err && t < n; t++) {
				if (find_attached(s, tids[t]) || tid_set_has(&f.inherited, tids[t]) ||
				    tid_set_has(&f.dead, tids[t]))
					continue;
				err = attach_thread(s, o->pids[i], tids[t], what);
				if (err == -ESRCH)	/* the thread exited meanwhile */
					err = tid_set_add(&f.dead, tids[t]);
				found = true;
			}
			free(tids);
		}
		quiet = found ? 0 : quiet + 1;
		if (!err && quiet < 2 && wp_clock_ns(CLOCK_MONOTONIC) > deadline) {
			wp_warn("threads kept appearing faster than wallprof could attach to them; "
				"threads created by those it missed are not recorded");
			break;
		}
	}
	if (!err) {
		bool any = false;

		for (size_t i = 0; i < o->nr_pids; i++)
			any |= !gone[i];
		if (!any) {
			wp_error("cannot attach to process %d: it exited", o->pids[0]);
			err = -ESRCH;
		}
	}
	free(f.inherited.v);
	free(f.dead.v);
	free(gone);
	return err;
}

/* Records that come before the drain's, to the sink. */
static int write_records(struct session *s, const void *buf, size_t len)
{
	return wp_sink_records(s->sink, buf, len, 0, NULL);
}

/* Records that every file of a rotating recording repeats. */
static int write_prelude(struct session *s, const void *buf, size_t len)
{
	return wp_sink_prelude(s->sink, buf, len);
}

/*
 * A monitor (wallprof top) beside the files: a sink that passes the
 * live unwinder's records on to the files' sink, when there is one, then
 * to the monitor, and names to it each file the flight recorder writes.
 */
struct monitor_tee {
	struct wp_sink sink;		/* first */
	struct wp_sink *inner;		/* or NULL: no file */
	const struct wp_record_monitor *mon;
};

static struct monitor_tee *tee_of(const struct wp_sink *k)
{
	return (struct monitor_tee *)k;
}

static int tee_prelude(struct wp_sink *k, const void *buf, size_t len)
{
	struct monitor_tee *t = tee_of(k);

	return t->inner ? wp_sink_prelude(t->inner, buf, len) : 0;
}

static int tee_records(struct wp_sink *k, const void *buf, size_t len, uint64_t round_ns,
		       struct wp_sink_progress *p)
{
	struct monitor_tee *t = tee_of(k);
	int err = 0;

	if (t->inner) {
		const char *first, *last;
		unsigned int files = wp_sink_files(t->inner, &first, &last);

		err = wp_sink_records(t->inner, buf, len, round_ns, p);
		/* A file the flight recorder wrote on request: the monitor names it. */
		if (t->mon->saved && wp_sink_files(t->inner, &first, &last) != files && last)
			t->mon->saved(t->mon->arg, last);
	}
	if (!err)
		err = t->mon->records(t->mon->arg, buf, len, round_ns);
	return err;
}

static int tee_request_dump(struct wp_sink *k, uint64_t now)
{
	struct monitor_tee *t = tee_of(k);

	return t->inner ? wp_sink_request_dump(t->inner, now) : -EOPNOTSUPP;
}

static int tee_finish(struct wp_sink *k, struct wp_summary *whole)
{
	struct monitor_tee *t = tee_of(k);

	return t->inner ? wp_sink_finish(t->inner, whole) : 0;
}

static int tee_end(struct wp_sink *k, struct wp_summary *whole, int *write_err)
{
	struct monitor_tee *t = tee_of(k);

	return t->inner ? wp_sink_end(t->inner, whole, write_err) : 0;
}

static unsigned int tee_files(const struct wp_sink *k, const char **first, const char **last)
{
	const struct monitor_tee *t = tee_of(k);

	*first = *last = NULL;
	return t->inner ? wp_sink_files(t->inner, first, last) : 0;
}

static uint64_t tee_bytes(const struct wp_sink *k)
{
	const struct monitor_tee *t = tee_of(k);

	return t->inner ? wp_sink_bytes(t->inner) : 0;
}

static void tee_free(struct wp_sink *k)
{
	struct monitor_tee *t = tee_of(k);

	wp_sink_free(t->inner);
	free(t);
}

static const struct wp_sink_ops tee_ops = {
	.prelude = tee_prelude,
	.records = tee_records,
	.request_dump = tee_request_dump,
	.finish = tee_finish,
	.end = tee_end,
	.files = tee_files,
	.bytes = tee_bytes,
	.free = tee_free,
};

/* inner (or NULL) with mon beside it; the tee owns inner once made. */
static int monitor_tee_new(struct wp_sink *inner, const struct wp_record_monitor *mon,
			   struct wp_sink **out)
{
	struct monitor_tee *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->sink = (struct wp_sink){ .ops = &tee_ops, .closing = inner ? inner->closing : NULL,
				    .says_cut = inner && inner->says_cut };
	t->inner = inner;
	t->mon = mon;
	*out = &t->sink;
	return 0;
}

/*
 * The wake-up tracepoints' format files, so that report decodes their raw
 * data as this kernel lays it out, on any machine.
 */
static int write_trace_formats(struct session *s)
{
	struct wp_buf buf = { 0 };
	int err = 0;

	for (int i = 0; !err && i < WP_NR_SCHED_EVENTS && s->ev.sched_formats[i]; i++) {
		size_t len = strlen(s->ev.sched_formats[i]) + 1;
		size_t size = ALIGN_UP(sizeof(struct wp_record_text) + len, (size_t)8);
		struct wp_record_text *r;

		if (size > UINT16_MAX) {
			err = -E2BIG;
			break;
		}
		r = wp_buf_reserve(&buf, size);
		if (!r) {
			err = -ENOMEM;
			break;
		}
		memset(r, 0, size);
		r->header.type = WP_RECORD_TRACE_FORMAT;
		r->header.size = (uint16_t)size;
		memcpy(r->text, s->ev.sched_formats[i], len);
		buf.len += size;
	}
	if (!err && buf.len)
		err = write_prelude(s, buf.data, buf.len);
	wp_buf_release(&buf);
	return err;
}

/*
 * The per-CPU events of a recording of tasks: the wake-up tracepoints,
 * and the on-CPU event when it is per CPU (wp_evlist_oncpu_per_cpu).
 * The threads whose records of them are kept at first: the launched
 * command, or the threads attached to (the kernel's filter keeps their
 * wake-ups); the drain thread follows those created and gone from then
 * on.
 */
static int open_cpu_events(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	bool wakeups = wp_evlist_has_wakeups(&s->ev) && !o->events.cpu_wide;
	struct wp_buf ids = { 0 };
	int err = 0;

	if (!wakeups && !s->ev.percpu_descs)
		return 0;
	/* The command, not yet forked, is among the threads created from now on. */
	if (wakeups)
		err = wp_evlist_open_cpu_events(&s->ev);
	if (!err && s->ev.percpu_descs)
		err = wp_evlist_open_percpu_events(&s->ev);
	for (size_t i = 0; !err && i < o->nr_pids; i++) {
		pid_t *tids = NULL;
		size_t n = 0;

		if (wp_list_threads(o->pids[i], &tids, &n))
			continue;
		for (size_t k = 0; !err && k < n; k++) {
			uint32_t t = (uint32_t)tids[k];

			err = wp_buf_append(&ids, &t, sizeof(t));
		}
		free(tids);
	}
	for (size_t i = 0; !err && i < o->nr_tids; i++) {
		uint32_t t = (uint32_t)o->tids[i];

		err = wp_buf_append(&ids, &t, sizeof(t));
	}
	if (!err) {
		long last = 0;

		/* Every thread created from now on, the recording's among them. */
		if (wp_read_int_file("/proc/sys/kernel/ns_last_pid", &last) || last <= 0)
			last = 0;
		s->newer_than = (uint32_t)last;
		if (wakeups)
			err = wp_evlist_filter_wakees(&s->ev, (const uint32_t *)ids.data,
						      ids.len / sizeof(uint32_t), (uint32_t)last);
	}
	if (err && err != -EPERM && err != -EACCES)
		wp_error("cannot set up the wake-up tracepoints: %s", strerror(-err));
	if (err)
		wp_buf_release(&ids);
	else
		s->wakees = ids;	/* the drain thread follows them from its start */
	return err;
}

/* One ATTACH record per attached thread: which events are its own. */
static int write_attached(struct session *s, struct wp_buf *out)
{
	for (size_t i = 0; i < s->nr_attached; i++) {
		const struct wp_attached *a = &s->attached[i];
		uint32_t n = (uint32_t)(a->fds_to - a->fds_from);
		size_t size = sizeof(struct wp_record_attach) + n * sizeof(uint64_t);
		struct wp_record_attach r = {
			.header = { .type = WP_RECORD_ATTACH, .size = (uint16_t)size },
			.tid = (uint32_t)a->tid, .nr_ids = n, .done = a->done,
		};
		uint8_t *p;

		if (size > UINT16_MAX)
			return -E2BIG;
		p = wp_buf_reserve(out, size);
		if (!p)
			return -ENOMEM;
		memcpy(p, &r, sizeof(r));
		for (uint32_t k = 0; k < n; k++)
			memcpy(p + sizeof(r) + k * sizeof(uint64_t),
			       &s->ev.fds[a->fds_from + k].id, sizeof(uint64_t));
		out->len += size;
		/* It was gone by then, whether or not its own EXIT comes too. */
		if (a->vanished && wp_synth_exit(&s->ev.fmt, a->pid, a->tid, a->done, out) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Processes that have a cgroup to themselves: their events per CPU on it
 * (wp_evlist_use_cgroup), none of their own, and every thread they make
 * is seen from its start (no inheritance to race with).  Each thread is
 * checked as attach_thread() checks it.
 */
static int attach_cgroup(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	char what[64];
	int err = 0;

	for (size_t i = 0; !err && i < o->nr_pids; i++) {
		pid_t *tids = NULL;
		size_t n = 0;

		snprintf(what, sizeof(what), "process %d", o->pids[i]);
		err = wp_list_threads(o->pids[i], &tids, &n);
		if (err == -ESRCH || (!err && !wp_process_alive(o->pids[i]))) {
			wp_error("cannot attach to process %d: no such process", o->pids[i]);
			err = -ESRCH;
		}
		for (size_t t = 0; !err && t < n; t++) {
			err = check_traceable(s, tids[t], what);
			if (err == -ESRCH)
				err = 0;	/* the thread exited meanwhile */
		}
		free(tids);
	}
	if (!err)
		err = wp_evlist_open_cgroup_events(&s->ev);
	if (!err)
		wp_debug("attached through the processes' own cgroup, per CPU");
	return err;
}

static int open_targets(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	char what[64];
	int err = 0;

	if (o->events.cpu_wide) {
		if (!wp_priv_can_profile_cpus(&s->priv)) {
			wp_error("-a needs CAP_PERFMON or kernel.perf_event_paranoid <= 0 (it is %d); "
				 "run as root or grant CAP_PERFMON", s->priv.paranoid);
			return -EPERM;
		}
		if (s->priv.elevated && !o->any_process) {
			wp_error("refusing -a: it records every user's processes, and wallprof's "
				 "capabilities reach other users' processes only with --any-process");
			return -EPERM;
		}
		return wp_evlist_open_cpus(&s->ev);
	}
	if (s->have_child) {
		snprintf(what, sizeof(what), "'%s'", s->child.cmd);
		err = wp_evlist_open_task(&s->ev, s->child.stub, what);
		if (!err && s->ev.cgroup_descs)
			err = wp_evlist_open_cgroup_events(&s->ev);
		return err;
	}
	if (o->nr_pids && s->ev.cgroup_descs)
		return attach_cgroup(s);
	if (o->nr_pids)
		return attach_processes(s);
	/* -t: the threads named, and the threads they create (by inheritance). */
	for (size_t i = 0; !err && i < o->nr_tids; i++) {
		if (!wp_process_alive(o->tids[i])) {
			wp_error("cannot attach to thread %d: no such thread", o->tids[i]);
			return -ESRCH;
		}
		snprintf(what, sizeof(what), "thread %d", o->tids[i]);
		err = attach_thread(s, wp_thread_group(o->tids[i]), o->tids[i], what);
		if (err == -ESRCH)
			wp_error("cannot attach to thread %d: no such thread", o->tids[i]);
	}
	return err;
}

/* The drain's source of the figures read here (wp_drain_add_source). */
static int take_clocks(void *arg, struct wp_buf *out)
{
	struct session *s = arg;
	int err = 0;

	pthread_mutex_lock(&s->clock_lock);
	if (s->clock_records.len) {
		err = wp_buf_append(out, s->clock_records.data, s->clock_records.len);
		if (!err)
			s->clock_records.len = 0;
	}
	pthread_mutex_unlock(&s->clock_lock);
	return err;
}

static int take_exits(void *arg, struct wp_buf *out)
{
	return wp_exitclock_take(arg, out);
}

static bool recorded_process(void *arg, pid_t pid)
{
	struct session *s = arg;

	return wp_procset_has(s->procs, pid, 0);
}

/*
 * Read the kernel's figures of every recorded thread now (when: start or
 * end), for the drain's next pass.  A failure costs only the anchoring:
 * report then takes the switch records as they are, and says so.  (A
 * read that spans a drain pass's start hands records dated before that
 * pass's ROUND to the next one: late for the ROUND's promise, sink.h.
 * Holding clock_lock through the read, to make the pass wait, was tried
 * and taken back: record --user timed out in the suite twice with it.)
 */
static void read_clocks(struct session *s, enum wp_clock_when when)
{
	struct wp_buf b = { 0 };
	uint64_t t0 = wp_clock_ns(CLOCK_MONOTONIC);
	int n;

	if (s->opts->events.cpu_wide) {
		n = wp_threadclock_all(when, CLOCK_MONOTONIC, NULL, NULL, &b);
	} else if (s->opts->nr_tids) {
		/* -t: the threads named, and no other of their processes. */
		n = 0;
		for (size_t i = 0; i < s->opts->nr_tids; i++) {
			pid_t tid = s->opts->tids[i], pid = wp_thread_group(tid);
			uint64_t on, rq, slices, now = wp_clock_ns(CLOCK_MONOTONIC);

			if (pid > 0 && !wp_schedstat_read(pid, tid, &on, &rq, &slices) &&
			    !wp_thread_clock_append(&b, when, (uint32_t)pid, (uint32_t)tid, now, on,
						    rq, slices))
				n++;
		}
	} else if (s->procs) {
		n = wp_threadclock_all(when, CLOCK_MONOTONIC, recorded_process, s, &b);
	} else {
		n = 0;
	}
	wp_debug("the scheduler's figures of %d threads read at %.3f s in %.1f ms", n,
		 (double)(t0 - s->meta.start_clock_ns) / 1e9,
		 (double)(wp_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	if (n < 0)
		wp_debug("cannot read the threads' scheduler figures: %s", strerror(-n));
	pthread_mutex_lock(&s->clock_lock);
	if (b.len && wp_buf_append(&s->clock_records, b.data, b.len))
		wp_debug("no memory for the threads' scheduler figures");
	pthread_mutex_unlock(&s->clock_lock);
	wp_buf_release(&b);
}

/*
 * The recording's processes, and the listener of their threads' exit
 * figures: before the events count, so that no exit goes unheard.
 */
static int start_clocks(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	int err = 0;

	if (!o->events.cpu_wide) {
		err = wp_procset_new(&s->procs);
		/*
		 * A launched command is wallprof's own child (the stub forks
		 * it with CLONE_PARENT): wallprof's descendants are the
		 * recording's, wallprof's own threads aside.
		 */
		if (!err && s->have_child)
			err = wp_procset_add(s->procs, getpid());
		for (size_t i = 0; !err && i < o->nr_pids; i++)
			err = wp_procset_add(s->procs, o->pids[i]);
		for (size_t i = 0; !err && i < o->nr_tids; i++) {
			pid_t pid = wp_thread_group(o->tids[i]);

			if (pid > 0)
				err = wp_procset_add(s->procs, pid);
		}
		if (err)
			return err;
	}
	s->exits_err = wp_exitclock_start(CLOCK_MONOTONIC, s->procs, &s->exits);
	if (s->exits_err == -ENOMEM)
		return -ENOMEM;
	if (s->exits_err)
		wp_debug("the kernel's figures of threads at their exit (taskstats) are not "
			 "available: %s", s->exits_err == -EPERM ? "they need CAP_NET_ADMIN" :
			 s->exits_err == -ENOENT ? "this kernel has no taskstats" :
			 strerror(-s->exits_err));
	return 0;
}

/* The id the file knows thread tid's switch-out event by (its own, else any), or 0. */
static uint64_t switch_out_id(const struct wp_evlist *ev, pid_t tid)
{
	uint64_t any = 0;

	for (size_t i = 0; i < ev->nr_fds; i++) {
		const struct wp_evfd *f = &ev->fds[i];

		if (f->fd < 0 || ev->descs[f->desc].role != WP_EVENT_SWITCH_OUT)
			continue;
		if (f->tid == tid)
			return f->file_id;
		if (!any)
			any = f->file_id;
	}
	return any;
}

/* At most this many threads' waits are read at the start (a second's worth or so). */
#define WAIT_STACKS_MAX 4096

/*
 * The threads of synth (its THREAD records) asleep at the start: marked
 * off-CPU since then, with the stack each waits in as a switch-out sample
 * dated then, into out (waitstack.h), which report unwinds as any other.
 * Without it, the wait of a thread blocked since before the recording
 * has no stack until the thread wakes.  DWARF stacks only: a frame
 * pointer walk would need the registers /proc does not give (the wait is
 * still marked as one since before the recording).
 */
static int add_wait_stacks(struct session *s, struct wp_buf *synth, uint64_t start,
			   struct wp_buf *out)
{
	const struct wp_arch *arch = wp_arch_find(wp_arch_host_machine());
	const struct wp_sample_format *fmt = &s->ev.fmt;
	uint32_t stack_size = s->opts->events.stack_size;
	uint64_t regs[64] = { 0 };
	unsigned int n = 0, asleep = 0, stacks = 0;
	uint8_t *stack;
	int err = 0;

	if (!(s->ev.meta_flags & WP_META_OFFCPU_STACKS))
		return 0;
	/* Off-CPU since the start all the same, stack or not ("waiting since before"). */
	if (!arch || !(fmt->sample_type & PERF_SAMPLE_STACK_USER) ||
	    !(fmt->sample_type & PERF_SAMPLE_REGS_USER) || fmt->nr_regs > 64)
		stack_size = 0;
	stack = malloc(stack_size ? stack_size : 1);
	if (!stack)
		return -ENOMEM;
	for (size_t off = 0; !err && off + sizeof(struct perf_event_header) <= synth->len;) {
		struct perf_event_header *h = (void *)(synth->data + off);
		struct wp_record_thread th;
		struct wp_wait_stack w;
		struct wp_sample smp;

		if (h->size < sizeof(*h) || h->size > synth->len - off)
			break;
		off += h->size;
		if (h->type != WP_RECORD_THREAD || wp_thread_parse(h, &th))
			continue;
		if (++n > WAIT_STACKS_MAX)
			break;
		if (wp_wait_stack_read((pid_t)th.pid, (pid_t)th.tid, stack, stack_size, &w) ||
		    !wp_wait_state_asleep(w.state))
			continue;
		asleep++;
		h->misc |= WP_THREAD_OFF_CPU;
		if (!w.len)
			continue;
		smp = (struct wp_sample){
			.id = switch_out_id(&s->ev, (pid_t)th.tid), .ip = w.pc, .pid = th.pid,
			.tid = th.tid, .time = start, .cpu = w.cpu >= 0 ? (uint32_t)w.cpu : 0,
			.period = 1, .regs_abi = PERF_SAMPLE_REGS_ABI_64, .regs = regs,
			.stack_size = stack_size, .stack_dyn_size = w.len, .stack = stack,
			/* A tracepoint's data: none (its u32 size and 4 zero bytes). */
			.raw_size = 4, .raw = "\0\0\0",
		};
		if (!smp.id)
			continue;
		memset(regs, 0, sizeof(regs));
		for (int r = 0; r < 64; r++)
			if (fmt->regs_mask & (1ULL << r)) {
				unsigned int at = (unsigned int)__builtin_popcountll(
					fmt->regs_mask & ((1ULL << r) - 1));

				if (r == arch->perf_ip)
					regs[at] = w.pc;
				else if (r == arch->perf_sp)
					regs[at] = w.sp;
			}
		err = wp_sample_append(fmt, PERF_RECORD_MISC_USER, &smp, out);
		if (!err)
			stacks++;
	}
	free(stack);
	s->summary.synthesized += stacks;
	wp_debug("threads asleep at the start: %u of %u, %u with the stack they wait in",
		 asleep, n, stacks);
	return err == -E2BIG ? 0 : err;
}

/*
 * Names, threads and mappings of what already ran before we attached,
 * written first in the file and dated at the start of the recording, so
 * that report knows them before any sample.  Mappings made since the
 * events were enabled also come as MMAP2 records of their own, later.
 */
static int write_existing(struct session *s)
{
	const struct wp_record_opts *o = s->opts;
	uint64_t start = s->meta.start_clock_ns;
	struct wp_buf buf = { 0 };
	int n = 0, err;

	err = write_attached(s, &buf);
	if (!err && buf.len)
		err = write_prelude(s, buf.data, buf.len);
	buf.len = 0;
	if (err) {
		wp_buf_release(&buf);
		return err;
	}
	if (o->events.cpu_wide) {
		n = wp_synth_all(&s->ev.fmt, start, &buf);
		if (n > 0)
			s->summary.synthesized += (uint64_t)n;
	} else {
		for (size_t i = 0; n >= 0 && i < o->nr_pids + o->nr_tids; i++) {
			pid_t tid = i < o->nr_pids ? 0 : o->tids[i - o->nr_pids];
			pid_t pid = tid ? wp_thread_group(tid) : o->pids[i];

			if (pid <= 0)
				continue;
			n = wp_synth_process(&s->ev.fmt, pid, tid, start, &buf);
			if (n > 0)
				s->summary.synthesized += (uint64_t)n;
			if (n == -ESRCH)
				n = 0;	/* it exited since the attach */
		}
	}
	if (n < 0)
		wp_warn("cannot read the state of the existing processes: %s", strerror(-n));
	/* Where the threads already asleep wait. */
	if (buf.len) {
		struct wp_buf waits = { 0 };

		err = add_wait_stacks(s, &buf, start, &waits);
		if (!err && waits.len)
			err = wp_buf_append(&buf, waits.data, waits.len);
		wp_buf_release(&waits);
		if (err) {
			wp_buf_release(&buf);
			return err;
		}
	}
	wp_closing_note_existing(s->closing, &buf);
	err = buf.len ? write_records(s, buf.data, buf.len) : 0;
	wp_buf_release(&buf);
	return err;
}

static bool targets_alive(struct session *s)
{
	const struct wp_record_opts *o = s->opts;

	for (size_t i = 0; i < o->nr_pids; i++)
		if (wp_process_alive(o->pids[i]))
			return true;
	for (size_t i = 0; i < o->nr_tids; i++)
		if (wp_process_alive(o->tids[i]))
			return true;
	return false;
}

static void reap_child(struct session *s, int options)
{
	int status;

	if (!s->have_child || s->child_status >= 0)
		return;
	if (waitpid(s->child.pid, &status, options) == s->child.pid)
		s->child_status = status;
}

static void show_progress(struct session *s, uint64_t start_ns, bool final)
{
	struct wp_summary c;
	uint64_t bytes;

	if (!s->opts->progress)
		return;
	if (final) {
		if (s->progress_shown)
			fputs("\r\033[K", stderr);
		return;
	}
	wp_drain_progress(s->drain, &c, &bytes);
	fprintf(stderr, "\r\033[K[ %.1fs  %llu samples  %llu switches  %llu lost  %.1f MiB ]",
		(double)(wp_clock_ns(CLOCK_MONOTONIC) - start_ns) / 1e9,
		(unsigned long long)(c.samples + c.switch_samples),
		(unsigned long long)c.switches,
		(unsigned long long)(c.lost_records + c.lost_samples),
		(double)bytes / (1 << 20));
	fflush(stderr);
	s->progress_shown = true;
}

/*
 * A write error ends the recording, not the command: the events stop, the
 * file keeps what was written before the error, and a launched command
 * runs on to its end (the error told what failed).
 */
static void cut_short(struct session *s, int err, uint64_t when)
{
	if (s->write_err)
		return;
	s->write_err = err;
	s->cut_ns = when;
	wp_evlist_disable(&s->ev);
	show_progress(s, 0, true);	/* the status line, erased for the message */
	if (s->have_child && s->child_status < 0)
		wp_warn("the recording stopped at %.3f s; the file keeps what was written "
			"before the error, and '%s' runs on",
			(double)(when - s->meta.start_clock_ns) / 1e9, s->child.cmd);
	else
		wp_warn("the recording stopped at %.3f s; the file keeps what was written "
			"before the error", (double)(when - s->meta.start_clock_ns) / 1e9);
}

static uint64_t gate_switch_outs(unsigned int cpu, uint64_t *as_of_ns, void *arg)
{
	struct session *s = arg;

	/* Fresh counts for the next look: the drain's own pace is 50 ms. */
	if (cpu == 0 && wp_stackgate_wants_fresh_counts(s->gate))
		wp_drain_kick(s->drain);
	return wp_drain_switch_outs(s->drain, cpu, as_of_ns);
}

/* A CPU's slot opens or closes: its switch-out stacks go on or off. */
static int gate_stacks(unsigned int cpu, bool open, void *arg)
{
	struct session *s = arg;

	return cpu < s->ev.nr_cpus ? wp_evlist_gate(&s->ev, cpu, open) : 0;
}

/* The wake-up tracepoints go off or on, on every CPU. */
static int gate_wakeups(bool open, uint64_t now_ns, void *arg)
{
	struct session *s = arg;

	return open ? wp_evlist_sched_open(&s->ev, now_ns) : wp_evlist_sched_close(&s->ev, now_ns);
}

static const struct wp_stackgate_ops gate_ops = {
	.switch_outs = gate_switch_outs,
	.stacks = gate_stacks,
	.wakeups = gate_wakeups,
};

/* How often the foreign records are looked at, and how many call for new filters. */
#define REFILTER_LOOK_NS (50ULL * 1000 * 1000)
#define REFILTER_SOON_NS (5ULL * 1000 * 1000)
#define REFILTER_GAP_MAX_NS (1000ULL * 1000 * 1000)
#define REFILTER_MIN_FOREIGN 16
/* No renewal this close to -d's end. */
#define REFILTER_END_MARGIN_NS (250ULL * 1000 * 1000)
/* A FORK is in its ring this long after its thread id was handed out, at most. */
#define REFILTER_FORK_LAG_NS (5ULL * 1000 * 1000)

/*
 * The wake-up tracepoints' filters pass the recording's threads and every
 * thread newer than the last one at the start (those the recording will
 * create): on a busy machine the threads that other programs create pass
 * too, and each of their wake-ups and switches costs a sample (with the
 * waker's stack) that the drain thread then leaves out.  When many do,
 * the filters are made again for the threads the recording has now and
 * those newer than the last thread id now.  The drain must know every
 * thread of the recording created before that id was read: the renewal
 * waits for a sweep of the rings that began some time after.  Returns
 * how long until it wants to be called again.
 */
static uint64_t refilter_step(struct session *s, uint64_t now, uint64_t deadline)
{
	uint64_t as_of, foreign = wp_drain_foreign(s->drain, &as_of);
	struct wp_buf tids = { 0 };
	long last = 0;
	int err;

	if (s->refilter_since_ns) {
		if (as_of < s->refilter_since_ns + REFILTER_FORK_LAG_NS) {
			wp_drain_kick(s->drain);
			return 5ULL * 1000 * 1000;
		}
		s->refilter_since_ns = 0;
		/*
		 * Swapping the events can wait out an RCU grace period (some
		 * 100 ms), which would hold -d's end up: so near it, the
		 * filters stay as they are.
		 */
		if (deadline && deadline - now < REFILTER_END_MARGIN_NS) {
			s->refilter_next_ns = deadline;
			return deadline - now;
		}
		err = wp_drain_wakees(s->drain, &tids);
		if (!err)
			err = wp_evlist_refilter_wakees(&s->ev, (const uint32_t *)tids.data,
							tids.len / sizeof(uint32_t),
							s->refilter_last_pid, now);
		if (err) {
			wp_debug("cannot renew the wake-up filters: %s", strerror(-err));
			s->refilter = false;
		} else {
			wp_debug("wake-up filters renewed: %zu threads, and those above %u "
				 "(in %.3f ms)", tids.len / sizeof(uint32_t),
				 s->refilter_last_pid,
				 (double)(wp_clock_ns(CLOCK_MONOTONIC) - now) / 1e6);
		}
		wp_buf_release(&tids);
		s->refilter_seen = foreign;
		/*
		 * Programs that keep making processes would have the
		 * tracepoints closed and opened all the time: each renewal
		 * waits twice as long as the last, up to a second, until a
		 * look finds the filters passing few.
		 */
		s->refilter_gap_ns = s->refilter_gap_ns ? s->refilter_gap_ns * 2 : REFILTER_LOOK_NS;
		if (s->refilter_gap_ns > REFILTER_GAP_MAX_NS)
			s->refilter_gap_ns = REFILTER_GAP_MAX_NS;
		s->refilter_next_ns = now + s->refilter_gap_ns;
		return s->refilter_gap_ns;
	}
	if (now < s->refilter_next_ns)
		return s->refilter_next_ns - now;
	if (foreign - s->refilter_seen < REFILTER_MIN_FOREIGN) {
		/*
		 * A few: a storm may be starting, look again soon.  They add
		 * up from look to look: a program that wakes the recording's
		 * threads 200 times a second, started after the recording,
		 * never brought 16 in one look, and its wake-ups kept passing
		 * as the recording's, with its stack, for as long as it ran.
		 */
		uint64_t next = foreign > s->refilter_seen ? REFILTER_SOON_NS : REFILTER_LOOK_NS;

		s->refilter_next_ns = now + next;
		s->refilter_gap_ns = 0;
		return next;
	}
	s->refilter_next_ns = now + REFILTER_LOOK_NS;
	s->refilter_seen = foreign;
	if (wp_read_int_file("/proc/sys/kernel/ns_last_pid", &last) || last <= 0)
		return REFILTER_LOOK_NS;
	s->refilter_last_pid = (uint32_t)last;
	s->refilter_since_ns = wp_clock_ns(CLOCK_MONOTONIC);
	wp_drain_kick(s->drain);
	return REFILTER_FORK_LAG_NS;
}

/* Wait for a stop condition; returns the enum wp_stop_reason. */
/*
 * A rotating recording reads the threads' figures this long before each
 * file's end (a read of some hundred threads takes milliseconds), and
 * again this long after.
 */
#define CLOCK_LEAD_NS (50ULL * 1000 * 1000)
#define CLOCK_LAG_NS (1ULL * 1000 * 1000)

/*
 * When to read the threads' figures next, after now: for a rotating
 * recording (files every ns from start) just before and just after each
 * file's end, else every ns.  A late read never skips the next.
 */
static uint64_t next_clock_read(uint64_t start, uint64_t every, bool rotating, uint64_t now)
{
	uint64_t k = now > start ? (now - start) / every : 0, best = UINT64_MAX;

	for (uint64_t b = k; b <= k + 2; b++) {
		uint64_t at = start + b * every;
		uint64_t when[2] = { at > CLOCK_LEAD_NS ? at - CLOCK_LEAD_NS : at, at + CLOCK_LAG_NS };

		if (!b)
			continue;
		for (int i = rotating ? 0 : 0; i < (rotating ? 2 : 1); i++) {
			uint64_t w = rotating ? when[i] : at;

			if (w > now && w < best)
				best = w;
		}
	}
	return best;
}

/*
 * A recording that is neither rotating, nor a flight recorder, nor
 * monitored reads the figures every second, so that report can anchor a
 * --time window at whole seconds as it anchors the whole recording; but
 * for at most this share of a CPU: a read that took longer (thousands of
 * threads with -a) makes the reads as many seconds apart as keep it so.
 */
#define CLOCK_READ_SHARE_MAX 100	/* 1 / 100: 1% */

/*
 * The thread that reads the threads' figures on time (next_clock_read),
 * beside the main thread, which the switch-out stack budget may keep busy
 * opening and closing events.  It runs ahead of the workload when
 * allowed (CAP_SYS_NICE): a read late by a file's end anchors neither
 * file well.
 */
static void *clock_main(void *arg)
{
	struct session *s = arg;
	uint64_t start = s->meta.start_clock_ns;
	uint64_t every = s->opts->rotate > 0 ? (uint64_t)(s->opts->rotate * 1e9) :
			 s->opts->clock_every > 0 ? (uint64_t)(s->opts->clock_every * 1e9) :
			 NSEC_PER_SEC;
	bool rotating = s->opts->rotate > 0;
	bool paced = !rotating && s->opts->flight_recorder <= 0 && s->opts->clock_every <= 0;

	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10))
		wp_debug("the figures' reader keeps the default priority: %s", strerror(errno));
	for (;;) {
		uint64_t at = next_clock_read(start, every, rotating, wp_clock_ns(CLOCK_MONOTONIC));
		struct timespec ts = { .tv_sec = (time_t)(at / NSEC_PER_SEC),
				       .tv_nsec = (long)(at % NSEC_PER_SEC) };
		bool stop;

		pthread_mutex_lock(&s->clock_lock);
		while (!s->clock_stop && wp_clock_ns(CLOCK_MONOTONIC) < at)
			if (pthread_cond_timedwait(&s->clock_wake, &s->clock_lock, &ts) == ETIMEDOUT)
				break;
		stop = s->clock_stop;
		pthread_mutex_unlock(&s->clock_lock);
		if (stop)
			return NULL;
		at = wp_clock_ns(CLOCK_MONOTONIC);
		read_clocks(s, WP_CLOCK_DURING);
		at = wp_clock_ns(CLOCK_MONOTONIC) - at;
		/* Whole seconds apart still, for windows at whole seconds. */
		if (paced && at * CLOCK_READ_SHARE_MAX > every) {
			every = (at * CLOCK_READ_SHARE_MAX + NSEC_PER_SEC - 1) / NSEC_PER_SEC * NSEC_PER_SEC;
			wp_debug("the scheduler's figures are read every %" PRIu64 " s from now",
				 (uint64_t)(every / NSEC_PER_SEC));
		}
	}
}

/* Start the figures' reader (clock_main). */
static void clock_reader_start(struct session *s)
{
	pthread_condattr_t attr;

	if (pthread_condattr_init(&attr))
		return;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!pthread_cond_init(&s->clock_wake, &attr)) {
		if (!pthread_create(&s->clock_thread, NULL, clock_main, s))
			s->clock_running = true;
		else
			pthread_cond_destroy(&s->clock_wake);
	}
	pthread_condattr_destroy(&attr);
}

static void clock_reader_stop(struct session *s)
{
	if (!s->clock_running)
		return;
	pthread_mutex_lock(&s->clock_lock);
	s->clock_stop = 1;
	pthread_cond_signal(&s->clock_wake);
	pthread_mutex_unlock(&s->clock_lock);
	pthread_join(s->clock_thread, NULL);
	pthread_cond_destroy(&s->clock_wake);
	s->clock_running = false;
}

static uint32_t wait_for_stop(struct session *s, uint64_t start_ns, int *signo)
{
	const struct wp_record_opts *o = s->opts;
	uint64_t deadline = o->duration > 0 ? start_ns + (uint64_t)(o->duration * 1e9) : 0;
	uint64_t gate_ns = 0, tick_ns = 0, dump_flush_ns = 0;
	/*
	 * --rotate: a pass handed over just after each file's end closes it,
	 * even when no record comes to carry one.
	 */
	uint64_t rotate_ns = (uint64_t)(o->rotate * 1e9);
	uint64_t rotate_flush_ns = rotate_ns ? start_ns + rotate_ns + 2 * WP_ROTATE_SLACK_NS : 0;
	/*
	 * Each file of a rotating or flight recording has the kernel's
	 * figures of its own: read just before and just after each file's
	 * end, or every second for the flight recorder, whose files end
	 * anywhere.
	 */

	for (;;) {
		uint64_t now = wp_clock_ns(CLOCK_MONOTONIC), wait_ns = TICK_NS, when;
		struct timespec ts;
		int sig, err;

		if (!s->write_err && (err = wp_drain_write_error(s->drain, &when))) {
			cut_short(s, err, when);
			/* Only a command is waited for: it decides when wallprof exits. */
			if (!s->have_child)
				return WP_STOP_ERROR;
		}
		if (deadline && now >= deadline)
			return WP_STOP_DURATION;
		if (deadline && deadline - now < wait_ns)
			wait_ns = deadline - now;
		/* The switch-out stack budget is kept in slots of some 10 ms. */
		if (s->gate && !s->write_err) {
			if (now >= gate_ns)
				gate_ns = wp_stackgate_step(s->gate, now, &gate_ops, s);
			if (gate_ns > now && gate_ns - now < wait_ns)
				wait_ns = gate_ns - now;
		}
		if (s->refilter && !s->write_err) {
			uint64_t next = refilter_step(s, now, deadline);

			if (next < wait_ns)
				wait_ns = next;
		}
		if (dump_flush_ns && now >= dump_flush_ns) {
			wp_drain_flush(s->drain);
			dump_flush_ns = 0;
		}
		if (dump_flush_ns && dump_flush_ns - now < wait_ns)
			wait_ns = dump_flush_ns - now;
		if (rotate_flush_ns && now >= rotate_flush_ns) {
			wp_drain_flush(s->drain);
			while (rotate_flush_ns <= now)
				rotate_flush_ns += rotate_ns;
		}
		if (rotate_flush_ns && rotate_flush_ns - now < wait_ns)
			wait_ns = rotate_flush_ns - now;

		ts.tv_sec = (time_t)(wait_ns / NSEC_PER_SEC);
		ts.tv_nsec = (long)(wait_ns % NSEC_PER_SEC);
		sig = sigtimedwait(&s->sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			*signo = sig;
			return WP_STOP_SIGNAL;
		}
		/*
		 * The flight recorder's file, written once the drain hands over a
		 * pass begun a little after now: every record dated before now is
		 * in it.
		 */
		if (sig == SIGUSR1 &&
		    !wp_sink_request_dump(s->sink, now = wp_clock_ns(CLOCK_MONOTONIC))) {
			dump_flush_ns = now + WP_ROTATE_SLACK_NS + WP_ROTATE_SLACK_NS / 2;
			continue;
		}
		/* Woken for the budget alone: the rest waits for its tick. */
		now = wp_clock_ns(CLOCK_MONOTONIC);
		if (sig < 0 && now < tick_ns && (!deadline || now < deadline))
			continue;
		tick_ns = now + TICK_NS;
		if (s->have_child) {
			reap_child(s, WNOHANG);
			if (s->child_status >= 0)
				return WP_STOP_TARGET_EXITED;
		} else if (!o->events.cpu_wide && !targets_alive(s)) {
			return WP_STOP_TARGET_EXITED;
		}
		show_progress(s, start_ns, false);
	}
}

/* Stop a launched command that outlives the recording (like perf record). */
static void end_child(struct session *s)
{
	reap_child(s, WNOHANG);
	if (!s->have_child || s->child_status >= 0)
		return;
	kill(s->child.pid, SIGTERM);
	for (int i = 0; i < 40 && s->child_status < 0; i++) {
		usleep(50000);
		reap_child(s, WNOHANG);
	}
	if (s->child_status < 0) {
		kill(s->child.pid, SIGKILL);
		reap_child(s, 0);
	}
}

/*
 * Keep a copy of every file that a process in a chroot or another mount
 * namespace mapped (the drain opened them as the process saw them), so
 * that report finds them by build id even when the host has another file,
 * or none, at the recorded path.  Not an error if it fails: report then
 * names those frames by address, and says so.  What the programs chose to
 * map is copied within limits (filecache.h), holes left holes, and a
 * SIGINT, SIGTERM or SIGHUP stops the copying; then the cache is pruned.
 */
static void keep_foreign_files(struct session *s)
{
	const struct wp_mapped_file *files;
	sigset_t stop;
	struct wp_filecache_copy cp = { .budget = WP_FILECACHE_MAX_KEPT, .stop = &stop };
	struct wp_filecache_pruned pruned;
	size_t n, kept = 0, wanted = 0, big = 0, over = 0, cut = 0;
	uint64_t since = wp_clock_ns(CLOCK_REALTIME);
	int err = 0;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	files = wp_seen_files(wp_drain_seen(s->drain), &n);	/* (the drain has stopped) */
	for (size_t i = 0; i < n; i++) {
		int e;

		if (files[i].fd < 0)
			continue;
		wanted++;
		if (s->opts->no_buildid_cache) {
			err = -ECANCELED;
			continue;
		}
		if (cp.signal) {
			cut++;
			continue;
		}
		wp_debug("copying '%s' (process %u) into the cache", wp_quoted(files[i].path),
			 files[i].pid);
		e = wp_filecache_store(files[i].fd, files[i].build_id, files[i].build_id_size, &cp);
		if (!e || e == -EEXIST)
			kept++;
		else if (e == -EFBIG)
			big++;
		else if (e == -EDQUOT)
			over++;
		else if (e == -EINTR)
			cut++;
		else if (!err)
			err = e;
	}
	if (!wanted)
		return;
	if (kept)
		wp_info("kept copies of %zu file%s mapped in a chroot or another mount namespace "
			"for report (see FILES in wallprof-record(1))", kept, kept == 1 ? "" : "s");
	if (big)
		wp_warn("%zu file%s mapped in a chroot or another mount namespace %s not kept: "
			"more than %llu MiB of data each", big, big == 1 ? "" : "s",
			big == 1 ? "was" : "were", WP_FILECACHE_MAX_COPY >> 20);
	if (over)
		wp_warn("%zu file%s mapped in a chroot or another mount namespace %s not kept: "
			"the copies of a recording hold at most %llu MiB", over, over == 1 ? "" : "s",
			over == 1 ? "was" : "were", WP_FILECACHE_MAX_KEPT >> 20);
	if (cut)
		wp_warn("copying stopped by %s: %zu file%s mapped in a chroot or another mount "
			"namespace %s not kept", strsignal(cp.signal), cut, cut == 1 ? "" : "s",
			cut == 1 ? "was" : "were");
	if (kept + big + over + cut < wanted)
		wp_warn("%zu file%s mapped in a chroot or another mount namespace %s not kept (%s); "
			"report names their frames only while they stay at the recorded paths",
			wanted - kept - big - over - cut, wanted - kept - big - over - cut == 1 ? "" : "s",
			wanted - kept - big - over - cut == 1 ? "was" : "were",
			err == -ECANCELED ? "the cache is off" : strerror(-err));
	if (s->opts->no_buildid_cache || wp_filecache_prune(since, &pruned))
		return;
	if (pruned.removed)
		wp_info("removed %u old copies of files (%.1f MiB) from the cache, which now holds "
			"%.1f MiB (see FILES in wallprof-record(1))", pruned.removed,
			(double)pruned.freed / (1 << 20), (double)pruned.left / (1 << 20));
}

/* After the commit: a message that cannot be written never costs the data. */
/*
 * Off-CPU stacks a second above which record suggests --switch-stacks: a
 * pinned pipe ping-pong took 100,000 a second and ran at a third of its
 * speed; ordinary programs take a few thousand.
 */
#define SWITCH_STACKS_HINT 20000.0
/* Wake-ups a second above which record says what --switch-stacks=all cost. */
#define WAKEUPS_HINT 20000.0

/*
 * -p follows the processes listed and the children they make from now
 * on, not those already running: a server's workers (PostgreSQL's
 * backends under its postmaster) would go unrecorded without a word.
 */
static void hint_unlisted_children(const struct wp_record_opts *opts)
{
	for (size_t i = 0; i < opts->nr_pids; i++) {
		pid_t pid = opts->pids[i], first = 0;
		size_t n = wp_unlisted_children(pid, opts->pids, opts->nr_pids, &first);

		if (n)
			wp_info("process %d has %zu child process%s already running (%d%s), which "
				"-p does not follow: list them too, as -p \"$(pgrep -d, -P %d),%d\"",
				(int)pid, n, n == 1 ? "" : "es", (int)first, n > 1 ? ", ..." : "",
				(int)pid, (int)pid);
	}
}

/* Where the budget turned stacks and wake-ups off, and for how long. */
static void print_gate(struct session *s)
{
	uint64_t budget = s->opts->events.switch_stack_budget;
	uint64_t end = s->summary.end_clock_ns;
	double wakeups_off = wp_stackgate_wakeups_off_share(s->gate, end);
	char list[256] = "";
	size_t len = 0;

	/* "81% of the time on CPU 1, 12% on CPU 0" */
	for (unsigned int i = 0; (s->meta.flags & WP_META_OFFCPU_STACKS) && i < s->ev.nr_cpus; i++) {
		double share = wp_stackgate_closed_share(s->gate, i, end);

		if (share < 0.005 || len >= sizeof(list) - 40)
			continue;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%.0f%% %son CPU %u",
					len ? ", " : "", 100 * share, len ? "" : "of the time ", i);
	}
	if (len)
		wp_info("switch-out stacks were off %s, which switched out more than %llu times a "
			"second; report estimates the rest", list, (unsigned long long)budget);
	if (wakeups_off >= 0.005)
		wp_info("wake-ups were off %.0f%% of the time, while a CPU switched out more than "
			"%llu times a second; report estimates their share of the waits",
			100.0 * wakeups_off, (unsigned long long)(WP_WAKEUPS_GATE_FACTOR * budget));
	if (wp_stackgate_error(s->gate))
		wp_warn("cannot turn switch-out stacks or wake-ups off and on: %s",
			strerror(-wp_stackgate_error(s->gate)));
}

static void print_summary(struct session *s, uint64_t bytes)
{
	const struct wp_summary *c = &s->summary;
	uint64_t lost = c->lost_records + c->lost_samples + c->lost_unreported;
	double secs = (double)(c->end_clock_ns - s->meta.start_clock_ns) / 1e9;
	double pct = c->records + lost ? 100.0 * (double)lost / (double)(c->records + lost) : 0;

	if (!s->opts->quiet) {
		char wakeups[48] = "";

		if (wp_evlist_has_wakeups(&s->ev))
			snprintf(wakeups, sizeof(wakeups), ", %llu wake-ups",
				 (unsigned long long)c->wakeups);
		wp_info("recorded %.3f s: %llu samples, %llu off-CPU stacks, %llu switches%s; "
			"lost %llu records (%.2f%%)",
			secs, (unsigned long long)c->samples,
			(unsigned long long)c->switch_samples, (unsigned long long)c->switches,
			wakeups, (unsigned long long)lost, pct);
		const char *first, *last;
		unsigned int n = wp_sink_files(s->sink, &first, &last);

		if (n > 1 && first && last)
			wp_info("wrote %.2f MiB to %u files, '%s' to '%s'",
				(double)bytes / (1 << 20), n, wp_quoted(first), wp_quoted(last));
		else if (first && s->write_err && !s->sink->says_cut)
			wp_info("wrote %.2f MiB to '%s', cut short at %.3f s by a write error (%s)",
				(double)bytes / (1 << 20), wp_quoted(first), secs,
				strerror(-s->write_err));
		else if (first)
			wp_info("wrote %.2f MiB to '%s'", (double)bytes / (1 << 20),
				wp_quoted(first));
		if (s->gate)
			print_gate(s);
		/* A switch storm: its stacks are what slowed the program most. */
		if (secs > 0 && !s->opts->events.switch_stack_budget &&
		    (double)c->switch_samples / secs > SWITCH_STACKS_HINT)
			wp_info("%.0f off-CPU stacks a second slowed the program at each switch; "
				"without --switch-stacks=all, at most %d a second per CPU are taken, "
				"the rest estimated", (double)c->switch_samples / secs,
				WP_SWITCH_STACKS_DEFAULT);
		if (secs > 0 && !s->opts->events.switch_stack_budget &&
		    (double)c->wakeups / secs > WAKEUPS_HINT)
			wp_info("%.0f wake-ups a second were recorded, a sample each: in such a storm "
				"they slow the program as much as a stack at every switch would; "
				"without --switch-stacks=all they go off with the stacks in a storm "
				"(--switch-stacks)",
				(double)c->wakeups / secs);
	}
	/* Losses and throttling are warnings: -q does not hide them. */
	if (s->drain && wp_drain_outsiders(s->drain))
		wp_warn("%llu records of other processes in the cgroup of the processes attached "
			"to (neither listed with -p nor started by one since) were left out",
			(unsigned long long)wp_drain_outsiders(s->drain));
	if (lost)
		wp_warn("%llu records were lost: the rings overflowed; try a larger -m, "
			"a lower -F or a smaller -g dwarf stack size", (unsigned long long)lost);
	if (c->rings_full_at_end && !c->lost_unreported)
		wp_warn("%u ring buffers were nearly full when recording stopped: records at the "
			"end may be missing without a count; try a larger -m", c->rings_full_at_end);
	if (c->throttles)
		wp_warn("the kernel throttled sampling %llu times; try a lower -F",
			(unsigned long long)c->throttles);
	if (c->unknown_samples)
		wp_warn("%llu samples named an event that is not the recording's and were left "
			"out: another profiler's context-switches event shared them (the kernel "
			"hands one sample to each software event in turn); every thread's times "
			"are unaffected (they come from the switch records), but the waits those "
			"samples were taken at have no stack",
			(unsigned long long)c->unknown_samples);
}

/*
 * A command that failed within this long of its start may have needed
 * the capabilities it was denied (chroot, mount, ...).
 */
#define QUICK_FAILURE_NS (500ULL * 1000 * 1000)

/*
 * A launched command that failed while it ran with less than its user
 * has without wallprof, or than wallprof has: say so, once.  After
 * --drop-capabilities whenever it fails (root asked for less, and a
 * build that cannot write fails late); otherwise only when it failed at
 * once, the likely sign of a missing privilege.
 */
static void explain_failure(const struct session *s)
{
	int st = s->child_status;
	bool quick;

	if (!s->have_child || st < 0 || !s->child_start_ns ||
	    (WIFEXITED(st) && !WEXITSTATUS(st)) || s->summary.stop_reason != WP_STOP_TARGET_EXITED)
		return;
	quick = s->summary.end_clock_ns - s->child_start_ns <= QUICK_FAILURE_NS;
	if (s->opts->user) {
		if (quick)
			wp_warn("'%s' failed at once; it ran as user '%s', without capabilities",
				wp_quoted(s->child.cmd), wp_quoted(s->opts->user));
	} else if (s->opts->drop_caps && (s->priv.root || s->priv.elevated)) {
		wp_warn("'%s' failed; it ran without capabilities (--drop-capabilities): without "
			"that option it keeps those of its user%s", wp_quoted(s->child.cmd),
			s->priv.elevated ? "" : ", root's");
	} else if (s->priv.elevated && quick) {
		wp_warn("'%s' failed at once; it ran with its user's privileges, without "
			"wallprof's capabilities, which never reach the command (see PRIVILEGES in "
			"wallprof-record(1))", wp_quoted(s->child.cmd));
	}
}

static void mark_start(struct session *s)
{
	s->meta.start_clock_ns = wp_clock_ns(CLOCK_MONOTONIC);
	s->meta.start_realtime_ns = wp_clock_ns(CLOCK_REALTIME);
}

static int exit_status_of(const struct session *s, uint32_t reason, int signo)
{
	if (reason == WP_STOP_SIGNAL)
		return 128 + signo;
	if (reason == WP_STOP_DURATION || !s->have_child || s->child_status < 0)
		return 0;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return 1;
}

int wp_record_run(const struct wp_record_opts *opts)
{
	struct session s = { .opts = opts, .child_status = -1, .target_cgroup = -1,
			     .clock_lock = PTHREAD_MUTEX_INITIALIZER };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe, old_xfsz;
	struct wp_livestage *live = NULL;	/* the sink's, with --unwind=live */
	uint32_t reason = WP_STOP_ERROR;
	bool ignoring = false;
	sigset_t old;
	int err, signo = 0, ret = 1;

	/*
	 * Blocks of records (a MiB and more) come and go all along: from
	 * mmap, always, so that each freed one goes back.  glibc would
	 * otherwise raise this bound as they are freed, and serve the next
	 * ones from a heap that keeps the most a backlog ever took.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	wp_priv_read(&s.priv);
	if (s.priv.setid) {
		wp_error("wallprof runs set-user-ID or set-group-ID, which record refuses "
			 "(the data file and the command would get those IDs); install it with "
			 "file capabilities instead (see PRIVILEGES in wallprof-record(1))");
		return 1;
	}
	if (opts->keep_caps && (s.priv.uid != 0 || s.priv.elevated)) {
		wp_error("--keep-capabilities is for root, running wallprof (whose command keeps "
			 "root's capabilities anyway): capabilities given to wallprof's file never "
			 "reach the command");
		return 1;
	}
	sigemptyset(&s.sigs);
	sigaddset(&s.sigs, SIGINT);
	sigaddset(&s.sigs, SIGTERM);
	sigaddset(&s.sigs, SIGHUP);
	sigaddset(&s.sigs, SIGCHLD);
	/* The flight recorder writes what it keeps when asked. */
	if (opts->flight_recorder > 0)
		sigaddset(&s.sigs, SIGUSR1);
	/* Blocked before any thread or child exists; sigtimedwait takes them. */
	pthread_sigmask(SIG_BLOCK, &s.sigs, &old);

	err = wp_evlist_init(&s.ev, &opts->events, &s.priv);
	if (err)
		goto out;
	err = wp_closing_new(&s.meta, &s.closing);
	if (!err && (opts->rotate > 0 || opts->flight_recorder > 0)) {
		struct wp_rotate_opts ro = {
			.output = opts->output, .force = opts->force,
			.compress_level = opts->compress_level,
			.rotate_ns = (uint64_t)(opts->rotate * 1e9),
			.window_ns = (uint64_t)(opts->flight_recorder * 1e9),
			.memory_max = opts->flight_memory_max,
			.no_final_dump = opts->flight_no_final,
			.skip_existing = opts->flight_no_final,
			.closing = s.closing,
		};
		struct wp_rotate *rot;

		err = wp_rotate_open(&ro, &rot);
		if (!err)
			s.sink = wp_rotate_sink(rot);
	} else if (!err && (opts->output || !opts->monitor)) {
		err = wp_file_sink_open(opts->output, opts->force, opts->compress_level, s.closing,
					&s.sink);
	}
	/* Records reach a monitor only through the live unwinder. */
	if (!err && opts->monitor && !opts->unwind_live)
		err = -EINVAL;
	if (err)
		goto out;
	if (opts->command) {
		err = wp_child_prepare(&s.child, opts->command, opts->user, &opts->keep_env,
				       opts->drop_caps ? WP_CHILD_DROP_ALL :
				       s.priv.elevated ? WP_CHILD_DROP_GAINED : WP_CHILD_CAPS_AS_USER);
		if (err)
			goto out;
		s.have_child = true;
		/* Without a cgroup, the switch-out event is the threads' own. */
		if (s.ev.meta_flags & WP_META_OFFCPU_STACKS && !opts->events.cpu_wide &&
		    !wp_cgroup_create(&s.cgroup, s.child.stub))
			wp_evlist_use_cgroup(&s.ev, s.cgroup.fd, NULL, 0);
	} else if (opts->nr_pids && !opts->nr_tids && !opts->events.cpu_wide &&
		   s.ev.meta_flags & WP_META_OFFCPU_STACKS && wp_priv_can_profile_cpus(&s.priv) &&
		   !wp_cgroup_of_processes(opts->pids, opts->nr_pids, &s.target_cgroup) &&
		   !wp_evlist_use_cgroup(&s.ev, s.target_cgroup, opts->pids, opts->nr_pids)) {
		/*
		 * Processes with a cgroup to themselves (a service): their
		 * events per CPU on it, as a launched command's.
		 */
		close(s.target_cgroup);
		s.target_cgroup = -1;
	}
	/*
	 * Attached otherwise: on-CPU samples per CPU, every task's, the
	 * drain keeping the recording's threads' (other users' processes
	 * too, so not on capabilities that reach them only for this).
	 */
	if (!err && !opts->command && (opts->nr_pids || opts->nr_tids) &&
	    !opts->events.cpu_wide && !s.ev.cgroup_descs && wp_priv_can_profile_cpus(&s.priv) &&
	    (!s.priv.elevated || opts->any_process) && wp_evlist_oncpu_per_cpu(&s.ev))
		wp_debug("on-CPU samples per CPU, the attached threads' kept");
	if (!err && !opts->command && opts->nr_pids)
		hint_unlisted_children(opts);
	/*
	 * A closed standard error (EPIPE) or a file size limit (EFBIG) is an
	 * error to handle, not a reason to die with the recording.  Set after
	 * the fork: the command keeps the default dispositions.
	 */
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGXFSZ, &ign, &old_xfsz);
	ignoring = true;
	/*
	 * Attached events count from the moment they exist: start before
	 * them.  Others count from the enable (or the exec) below.
	 */
	if (opts->events.enable_on_open)
		mark_start(&s);
	err = open_targets(&s);
	if (!err)
		err = open_cpu_events(&s);
	if (!err)
		err = start_clocks(&s);
	if (err)
		goto out;
	wp_evlist_explain_limits(&s.ev);
	if (!opts->events.enable_on_open)
		mark_start(&s);
	fill_meta(&s);
	err = wp_evlist_describe(&s.ev, &s.meta);
	if (err)
		goto out;
	if (s.meta.flags & WP_META_OFFCPU_STACKS)
		s.meta.switch_stack_budget = opts->events.switch_stack_budget;
	if ((s.meta.flags & WP_META_WAKEUPS) && opts->events.switch_stack_budget)
		s.meta.flags |= WP_META_WAKEUPS_GATED;
	if (opts->unwind_live)
		s.meta.flags |= WP_META_STACK_TABLE;
	if (s.exits)
		s.meta.flags |= WP_META_EXIT_CLOCKS;
	err = s.sink ? wp_sink_start(s.sink, &s.meta) : 0;
	if (!err && opts->monitor)
		err = opts->monitor->start(opts->monitor->arg, &s.meta);
	/* Live: drain -> unwinder -> [the monitor beside] the file or the rotating files. */
	if (!err && opts->monitor) {
		struct wp_sink *tee;

		err = monitor_tee_new(s.sink, opts->monitor, &tee);
		if (!err)
			s.sink = tee;
	}
	if (!err && opts->unwind_live) {
		err = wp_livestage_start(&s.meta, s.sink, &live);
		if (!err)
			s.sink = wp_livestage_sink(live);
	}
	if (err)
		goto out;
	err = wp_drain_start(&s.ev, s.sink, &s.drain);
	if (!err)
		wp_closing_set_seen(s.closing, wp_drain_seen(s.drain));
	if (!err && live)
		wp_livestage_set_seen(live, wp_drain_seen(s.drain));
	if (!err && s.have_child)
		wp_drain_skip_stub(s.drain, (uint32_t)s.child.stub);
	if (!err)
		err = wp_drain_add_source(s.drain, take_clocks, &s);
	if (!err && s.exits)
		err = wp_drain_add_source(s.drain, take_exits, s.exits);
	if (!err)
		err = write_trace_formats(&s);
	if (!err && (wp_evlist_has_wakeups(&s.ev) || s.ev.percpu_descs) &&
	    !opts->events.cpu_wide) {
		err = wp_drain_track_wakees(s.drain, (const uint32_t *)s.wakees.data,
					    s.wakees.len / sizeof(uint32_t), s.newer_than);
		/* Only where the ledger knows the tracepoints may be off a while. */
		s.refilter = s.meta.flags & WP_META_WAKEUPS_GATED;
		s.refilter_next_ns = wp_clock_ns(CLOCK_MONOTONIC) + REFILTER_LOOK_NS;
	}
	if (err)
		goto out;

	if (!opts->events.enable_on_exec) {
		/* Attach and -a: count from now, then describe what already runs. */
		err = wp_evlist_enable(&s.ev);
		if (err) {
			wp_error("cannot enable the events: %s", strerror(-err));
			goto out;
		}
		/* The threads' figures as the events begin to count, first. */
		read_clocks(&s, WP_CLOCK_START);
		err = write_existing(&s);
		if (err)
			goto out;
	}
	wp_drain_release_writer(s.drain);
	if (s.have_child) {
		err = wp_child_start(&s.child);
		if (err) {
			s.child_status = 0;	/* reaped by wp_child_start */
			ret = err == -ENOENT ? 127 : 126;
			goto out;
		}
		s.child_start_ns = wp_clock_ns(CLOCK_MONOTONIC);
		/* Its argv as we ran it, whatever /proc says once it exec'd. */
		err = wp_drain_known_cmdline(s.drain, (uint32_t)s.child.pid, opts->command);
		if (err)
			goto out;
		/* Its stub forked it while no event wrote FORK records. */
		if (wp_evlist_has_wakeups(&s.ev)) {
			uint32_t t = (uint32_t)s.child.pid;

			err = wp_drain_track_wakees(s.drain, &t, 1, 0);
			if (err)
				goto out;
		}
	}
	if (s.meta.switch_stack_budget || (s.meta.flags & WP_META_WAKEUPS_GATED)) {
		err = wp_stackgate_new(s.ev.nr_cpus, opts->events.switch_stack_budget,
				       s.meta.flags & WP_META_WAKEUPS_GATED ?
				       WP_WAKEUPS_GATE_FACTOR * opts->events.switch_stack_budget : 0,
				       wp_clock_ns(CLOCK_MONOTONIC), &s.gate);
		if (err)
			goto out;
	}

	clock_reader_start(&s);
	reason = wait_for_stop(&s, s.meta.start_clock_ns, &signo);
	clock_reader_stop(&s);
	show_progress(&s, 0, true);
	/* The threads still alive: their figures now, while the events still count. */
	read_clocks(&s, WP_CLOCK_END);
	if (s.exits)
		wp_exitclock_flush(s.exits);
	/* The recording ends now, not when a lingering command is gone. */
	wp_evlist_disable(&s.ev);
	s.summary.end_clock_ns = wp_clock_ns(CLOCK_MONOTONIC);
	s.summary.end_realtime_ns = wp_clock_ns(CLOCK_REALTIME);
	if (reason != WP_STOP_TARGET_EXITED)
		end_child(&s);
	s.summary.stop_reason = reason;
	s.summary.exit_status = s.have_child ? s.child_status : -1;
	err = wp_drain_stop(s.drain, &s.summary);
	if (s.exits) {
		uint64_t heard, kept, lost;

		wp_exitclock_counts(s.exits, &heard, &kept, &lost);
		if (lost)
			wp_warn("some threads' figures at their exit were lost (%" PRIu64 " times the "
				"kernel's taskstats overflowed): report estimates their on-CPU time",
				lost);
		wp_debug("exits: %" PRIu64 " heard, %" PRIu64 " of the recording's", heard, kept);
	}
	{
		/* What waits (the live unwinder's queue), written now. */
		int ferr = wp_sink_finish(s.sink, &s.summary);

		if (ferr && !err) {
			err = ferr;
			cut_short(&s, err, s.summary.end_clock_ns);
		}
	}
	{
		uint64_t dropped, gone;

		wp_drain_cmdline_counts(s.drain, &dropped, &gone);
		if (dropped)
			wp_warn("%" PRIu64 " command lines after an exec were not read: more execs "
				"than the reader kept up with", dropped);
		if (gone)
			wp_debug("%" PRIu64 " processes were gone, or had no command line, when "
				 "read after their exec", gone);
	}
	if (err) {
		uint64_t when;

		wp_drain_write_error(s.drain, &when);
		cut_short(&s, err, when);	/* in the last drain */
	}
	{
		/*
		 * A stage in front of the files (the live unwinder) wrote
		 * after the drain: what the files hold, it says.
		 */
		struct wp_summary held = { 0 };
		uint64_t until;

		if (s.write_err && !wp_sink_written(s.sink, &held, &until)) {
			wp_summary_take_counts(&s.summary, &held);
			if (!until)
				until = s.meta.start_clock_ns;
			if (until < s.cut_ns)
				s.cut_ns = until;
		}
	}
	{
		uint64_t counted = wp_evlist_read_lost(&s.ev);

		if (counted > s.summary.lost_records)
			s.summary.lost_unreported = counted - s.summary.lost_records;
	}
	/* Files that name mapped files (a monitor's recording may write none). */
	if (s.sink->closing)
		keep_foreign_files(&s);
	if (s.write_err) {
		/* The recording ends where the error cut it. */
		s.summary.stop_reason = WP_STOP_ERROR;
		s.summary.cut_short_errno = (uint32_t)-s.write_err;
		if (s.cut_ns < s.summary.end_clock_ns) {
			s.summary.end_realtime_ns -= s.summary.end_clock_ns - s.cut_ns;
			s.summary.end_clock_ns = s.cut_ns;
		}
	}
	/*
	 * Even after an error: the closing blocks are small, and name what
	 * was recorded.  Then the summary, and the files' names: from here on
	 * the data is never deleted.
	 */
	err = wp_sink_end(s.sink, &s.summary, &s.write_err);
	print_summary(&s, wp_sink_bytes(s.sink));
	explain_failure(&s);
	ret = exit_status_of(&s, reason, signo);
	if ((err || s.write_err) && ret == 0)
		ret = WP_RECORD_INCOMPLETE;

out:
	if (s.have_child && s.child.pid <= 0) {
		wp_child_abort(&s.child);	/* never released, or never ran */
	} else if (s.have_child) {
		end_child(&s);
		wp_child_finish(&s.child);
		free(s.child.cmd);
	}
	wp_stackgate_free(s.gate);
	wp_drain_free(s.drain);
	wp_exitclock_free(s.exits);
	wp_procset_free(s.procs);
	wp_buf_release(&s.clock_records);
	pthread_mutex_destroy(&s.clock_lock);
	/* After the drain, whose writer thread gives it records until stopped. */
	wp_sink_free(s.sink);
	wp_closing_free(s.closing);
	wp_evlist_release(&s.ev);
	wp_cgroup_remove(&s.cgroup);
	if (s.target_cgroup >= 0)
		close(s.target_cgroup);
	free(s.attached);
	wp_buf_release(&s.wakees);
	s.meta.argv = NULL;	/* borrowed from opts */
	s.meta.argc = 0;
	wp_meta_release(&s.meta);
	if (ignoring) {
		sigaction(SIGPIPE, &old_pipe, NULL);
		sigaction(SIGXFSZ, &old_xfsz, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}
