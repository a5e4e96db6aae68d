/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threadclock.c: threads' schedstat figures, read now or sent by the kernel at exit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "threadclock.h"
#include "u64map.h"

int wp_schedstat_read(pid_t pid, pid_t tid, uint64_t *on_cpu_ns, uint64_t *runq_ns,
		      uint64_t *slices)
{
	unsigned long long on, rq, n;
	char path[64], text[96];
	int err;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)tid);
	err = wp_read_text_file(path, text, sizeof(text));
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (sscanf(text, "%llu %llu %llu", &on, &rq, &n) != 3)
		return -EINVAL;
	*on_cpu_ns = on;
	*runq_ns = rq;
	*slices = n;
	return 0;
}

/* A name of /proc that is a number: the pid, else 0. */
static pid_t proc_number(const char *name)
{
	char *end;
	long v = strtol(name, &end, 10);

	return *name && !*end && v > 0 && v <= INT32_MAX ? (pid_t)v : 0;
}

int wp_threadclock_process(pid_t pid, enum wp_clock_when when, clockid_t clock,
			   struct wp_buf *out)
{
	char path[64];
	struct dirent *de;
	int n = 0, err = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && n < WP_THREADCLOCK_MAX_THREADS && (de = readdir(dir))) {
		pid_t tid = proc_number(de->d_name);
		uint64_t on, rq, slices, time;

		if (!tid)
			continue;
		time = wp_clock_ns(clock);
		if (wp_schedstat_read(pid, tid, &on, &rq, &slices))
			continue;	/* gone meanwhile */
		err = wp_thread_clock_append(out, when, (uint32_t)pid, (uint32_t)tid, time, on, rq,
					     slices);
		n++;
	}
	closedir(dir);
	return err ? err : n;
}

int wp_threadclock_all(enum wp_clock_when when, clockid_t clock,
		       bool (*keep)(void *arg, pid_t pid), void *arg, struct wp_buf *out)
{
	struct dirent *de;
	int n = 0, ret = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = proc_number(de->d_name);

		if (!pid || pid == getpid() || (keep && !keep(arg, pid)))
			continue;
		ret = wp_threadclock_process(pid, when, clock, out);
		if (ret == -ENOMEM)
			break;
		n += ret > 0 ? ret : 0;
		ret = 0;
	}
	closedir(dir);
	return ret ? ret : n;
}

/* The recording's processes. */

/* Ancestors looked at, at most, to tell whether a process is a descendant. */
#define MAX_DEPTH 64
/* Verdicts on processes that are not, kept at most this many before starting over. */
#define MAX_NOT_IN 65536

/* Verdicts. */
#define IN 1		/* a descendant */
#define NOT_IN 2
#define GIVEN 3		/* given (wp_procset_add) */

struct wp_procset {
	pthread_mutex_t lock;
	struct wp_u64map verdict;	/* pid -> IN, NOT_IN or GIVEN */
	size_t not_in;
};

int wp_procset_new(struct wp_procset **out)
{
	struct wp_procset *ps = calloc(1, sizeof(*ps));

	*out = ps;
	if (!ps)
		return -ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	return 0;
}

int wp_procset_add(struct wp_procset *ps, pid_t pid)
{
	int err;

	pthread_mutex_lock(&ps->lock);
	err = wp_u64map_put(&ps->verdict, (uint64_t)pid, GIVEN);
	pthread_mutex_unlock(&ps->lock);
	return err;
}

/* The parent of process pid, from /proc/PID/stat, or 0. */
static pid_t parent_of(pid_t pid)
{
	char path[64], text[512];
	const char *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (wp_read_text_file(path, text, sizeof(text)))
		return 0;
	/* "pid (comm) state ppid ...": the name may hold anything, ')' too. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1 || ppid <= 0)
		return 0;
	return (pid_t)ppid;
}

bool wp_procset_has(struct wp_procset *ps, pid_t pid, pid_t ppid)
{
	pid_t chain[MAX_DEPTH];
	unsigned int n = 0;
	uint64_t v = 0;
	bool yes = false;

	pthread_mutex_lock(&ps->lock);
	while (pid > 1 && n < MAX_DEPTH) {
		if (wp_u64map_get(&ps->verdict, (uint64_t)pid, &v)) {
			yes = v != NOT_IN;
			break;
		}
		chain[n++] = pid;
		/* A process that is gone names its parent no more: the one known. */
		pid = n == 1 && ppid > 0 ? ppid : parent_of(pid);
	}
	if (!yes && ps->not_in + n > MAX_NOT_IN) {
		/* Forget the verdicts of "no", keep the set. */
		struct wp_u64map keep = { 0 };
		uint64_t key, val;
		size_t it = 0;

		while (wp_u64map_next(&ps->verdict, &it, &key, &val))
			if (val != NOT_IN)
				wp_u64map_put(&keep, key, val);
		wp_u64map_release(&ps->verdict);
		ps->verdict = keep;
		ps->not_in = 0;
	}
	for (unsigned int i = 0; i < n; i++)
		if (!wp_u64map_put(&ps->verdict, (uint64_t)chain[i], yes ? IN : NOT_IN) && !yes)
			ps->not_in++;
	pthread_mutex_unlock(&ps->lock);
	return yes;
}

void wp_procset_gone(struct wp_procset *ps, pid_t pid, bool group_dead)
{
	uint64_t v;

	pthread_mutex_lock(&ps->lock);
	if (wp_u64map_get(&ps->verdict, (uint64_t)pid, &v) && (group_dead || v != GIVEN)) {
		wp_u64map_del(&ps->verdict, (uint64_t)pid);
		if (v == NOT_IN && ps->not_in)
			ps->not_in--;
	}
	pthread_mutex_unlock(&ps->lock);
}

size_t wp_procset_size(struct wp_procset *ps)
{
	size_t n;

	pthread_mutex_lock(&ps->lock);
	n = ps->verdict.len;
	pthread_mutex_unlock(&ps->lock);
	return n;
}

void wp_procset_free(struct wp_procset *ps)
{
	if (!ps)
		return;
	wp_u64map_release(&ps->verdict);
	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

/* The exit listener. */

/* The longest the last read of exit figures may take. */
#define FLUSH_MAX_NS (20ULL * 1000 * 1000)

struct wp_exitclock {
	clockid_t clock;
	struct wp_procset *ps;		/* borrowed; NULL: every process */
	struct nl_sock *sock;
	int family;
	char cpumask[32];
	pthread_t thread;
	bool started;
	int stop;			/* atomic */
	pthread_mutex_t read_lock;	/* held while reading the socket */
	pthread_mutex_t lock;		/* what follows */
	struct wp_buf records;		/* finished, for wp_exitclock_take */
	uint64_t heard, kept, lost;
};

/* One thread's exit figures (an AGGR_PID attribute); group_dead: its process's last. */
static void exit_heard(struct wp_exitclock *x, struct nlattr *aggr, bool group_dead)
{
	struct nlattr *a[TASKSTATS_TYPE_MAX + 1];
	struct taskstats ts;
	uint32_t tid, tgid;
	uint64_t now = wp_clock_ns(x->clock);
	size_t len;
	bool keep;

	if (nla_parse_nested(a, TASKSTATS_TYPE_MAX, aggr, NULL) || !a[TASKSTATS_TYPE_PID] ||
	    !a[TASKSTATS_TYPE_STATS])
		return;
	tid = nla_get_u32(a[TASKSTATS_TYPE_PID]);
	memset(&ts, 0, sizeof(ts));
	len = (size_t)nla_len(a[TASKSTATS_TYPE_STATS]);
	memcpy(&ts, nla_data(a[TASKSTATS_TYPE_STATS]), len < sizeof(ts) ? len : sizeof(ts));
	/* Kernels before taskstats version 13 sent no thread group: the tid then. */
	tgid = len >= offsetof(struct taskstats, ac_tgid) + sizeof(ts.ac_tgid) && ts.ac_tgid ?
	       ts.ac_tgid : tid;
	if ((pid_t)tgid == getpid())
		return;		/* wallprof's own threads */
	keep = !x->ps || wp_procset_has(x->ps, (pid_t)tgid, (pid_t)ts.ac_ppid);
	/*
	 * The process's end (see wp_procset_gone): its pid may come back,
	 * another process's.  The main thread's exit without the group's
	 * figures is a single-threaded process's end, or a main thread going
	 * first (its verdict is found again from its parent).
	 */
	if (x->ps && (group_dead || tid == tgid))
		wp_procset_gone(x->ps, (pid_t)tgid, group_dead);
	pthread_mutex_lock(&x->lock);
	x->heard++;
	if (keep && !wp_thread_clock_append(&x->records, WP_CLOCK_EXIT, tgid, tid, now,
					    ts.cpu_run_virtual_total, ts.cpu_delay_total,
					    ts.cpu_count))
		x->kept++;
	pthread_mutex_unlock(&x->lock);
}

static int message_heard(struct nl_msg *msg, void *arg)
{
	struct wp_exitclock *x = arg;
	struct nlattr *a[TASKSTATS_TYPE_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, TASKSTATS_TYPE_MAX, NULL))
		return NL_SKIP;
	/* AGGR_TGID: a whole process's, when it dies: its threads came one by one. */
	if (a[TASKSTATS_TYPE_AGGR_PID])
		exit_heard(x, a[TASKSTATS_TYPE_AGGR_PID], a[TASKSTATS_TYPE_AGGR_TGID] != NULL);
	return NL_OK;
}

/* Ask for (or no longer) every CPU's exits on this socket. */
static int listen_cpus(struct wp_exitclock *x, bool on)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, x->family, 0, NLM_F_REQUEST,
			 TASKSTATS_CMD_GET, TASKSTATS_VERSION) ||
	    nla_put_string(msg, on ? TASKSTATS_CMD_ATTR_REGISTER_CPUMASK :
			   TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, x->cpumask)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = nl_send_sync(x->sock, msg);	/* frees msg; waits for the ack */
	return err == -NLE_PERM ? -EPERM : err ? -EIO : 0;
}

/* Read what the socket holds now; false once it failed for good. */
static bool read_some(struct wp_exitclock *x)
{
	int err = nl_recvmsgs_default(x->sock);

	if (err == -NLE_NOMEM) {
		/* The socket's buffer overflowed: exits were dropped. */
		pthread_mutex_lock(&x->lock);
		x->lost++;
		pthread_mutex_unlock(&x->lock);
		return true;
	}
	return err >= 0 || err == -NLE_AGAIN;
}

static void *listen_thread(void *arg)
{
	struct wp_exitclock *x = arg;
	struct pollfd pfd = { .fd = nl_socket_get_fd(x->sock), .events = POLLIN };

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		int n = poll(&pfd, 1, 50);
		bool ok = true;

		if (n > 0) {
			pthread_mutex_lock(&x->read_lock);
			ok = read_some(x);
			pthread_mutex_unlock(&x->read_lock);
		}
		if (!ok || (n < 0 && errno != EINTR))
			break;
	}
	return NULL;
}

void wp_exitclock_flush(struct wp_exitclock *x)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(x->sock), .events = POLLIN };

	uint64_t until = wp_clock_ns(CLOCK_MONOTONIC) + FLUSH_MAX_NS;

	/*
	 * What is there now: on a busy machine other processes' exits keep
	 * coming, and the recording must end all the same.
	 */
	pthread_mutex_lock(&x->read_lock);
	while (poll(&pfd, 1, 0) > 0 && read_some(x) && wp_clock_ns(CLOCK_MONOTONIC) < until)
		;
	pthread_mutex_unlock(&x->read_lock);
}

int wp_exitclock_start(clockid_t clock, struct wp_procset *ps, struct wp_exitclock **out)
{
	struct wp_exitclock *x = calloc(1, sizeof(*x));
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int err;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	x->clock = clock;
	x->ps = ps;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->read_lock, NULL);
	snprintf(x->cpumask, sizeof(x->cpumask), "0-%ld", cpus > 1 ? cpus - 1 : 0);
	x->sock = nl_socket_alloc();
	if (!x->sock) {
		err = -ENOMEM;
		goto fail;
	}
	if (genl_connect(x->sock)) {
		err = -EIO;
		goto fail;
	}
	x->family = genl_ctrl_resolve(x->sock, TASKSTATS_GENL_NAME);
	if (x->family < 0) {
		err = -ENOENT;
		goto fail;
	}
	/* Exits come in bursts (a build's thousand processes): room for them. */
	nl_socket_set_buffer_size(x->sock, 4 << 20, 0);
	err = listen_cpus(x, true);
	if (err)
		goto fail;
	nl_socket_disable_seq_check(x->sock);
	nl_socket_modify_cb(x->sock, NL_CB_VALID, NL_CB_CUSTOM, message_heard, x);
	nl_socket_set_nonblocking(x->sock);
	err = -pthread_create(&x->thread, NULL, listen_thread, x);
	if (err) {
		listen_cpus(x, false);
		goto fail;
	}
	x->started = true;
	*out = x;
	return 0;
fail:
	if (x->sock)
		nl_socket_free(x->sock);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->read_lock);
	free(x);
	return err;
}

int wp_exitclock_take(struct wp_exitclock *x, struct wp_buf *out)
{
	int err = 0;

	pthread_mutex_lock(&x->lock);
	if (x->records.len) {
		err = wp_buf_append(out, x->records.data, x->records.len);
		if (!err)
			x->records.len = 0;
	}
	pthread_mutex_unlock(&x->lock);
	return err;
}

void wp_exitclock_counts(struct wp_exitclock *x, uint64_t *heard, uint64_t *kept,
			 uint64_t *lost)
{
	pthread_mutex_lock(&x->lock);
	*heard = x->heard;
	*kept = x->kept;
	*lost = x->lost;
	pthread_mutex_unlock(&x->lock);
}

void wp_exitclock_free(struct wp_exitclock *x)
{
	if (!x)
		return;
	if (x->started) {
		__atomic_store_n(&x->stop, 1, __ATOMIC_RELEASE);
		pthread_join(x->thread, NULL);
	}
	/* Closed, the socket is no listener: the kernel drops it at its next exit. */
	nl_socket_free(x->sock);
	wp_buf_release(&x->records);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->read_lock);
	free(x);
}
