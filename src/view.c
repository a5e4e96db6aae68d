/* SPDX-License-Identifier: GPL-2.0-or-later */
/* view.c: thread, time and stack selection shared by every output format. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "quote.h"
#include "symbols.h"
#include "util.h"
#include "view.h"

/* An anchored name regex: --comm foo matches the name foo, not foobar. */
static int compile_name_re(regex_t *re, const char *pattern, const char *option)
{
	size_t n = strlen(pattern) + 5;
	char *anchored = malloc(n);
	int err;

	if (!anchored)
		return -ENOMEM;
	snprintf(anchored, n, "^(%s)$", pattern);
	err = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (err) {
		wp_error("%s: '%s' is not a valid regular expression", option,
			 wp_quoted(pattern));
		return -EINVAL;
	}
	return 0;
}

/*
 * Which threads are idle (WP_IDLE_PERMILLE): for each, the stack that
 * holds most of its blocked time (and the runnable time after it), then
 * whether that is nearly all of its blocked time, and the blocked time
 * most of its wall time.  Time preempted is no waiting for work: a thread
 * that the CPUs' load keeps off them is not idle, and a short one's
 * start on a loaded machine does not make it less so.
 */
static int find_idle(struct wp_view *v)
{
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	uint64_t *most;
	size_t nth, nw;

	th = wp_account_threads(v->an->account, &nth);
	w = wp_account_stacks(v->an->account, &nw);
	v->idle_stack = calloc(nth + 1, sizeof(*v->idle_stack));
	most = calloc(nth + 1, sizeof(*most));
	if (!v->idle_stack || !most) {
		free(most);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nw; i++) {
		uint64_t ns = w[i].blocked_ns + w[i].runnable_ns;

		if (w[i].thread < nth && ns > most[w[i].thread]) {
			most[w[i].thread] = ns;
			v->idle_stack[w[i].thread] = w[i].stack + 1;
		}
	}
	for (size_t i = 0; i < nth; i++) {
		const struct wp_thread_times *t = &th[i];
		uint64_t waits = t->blocked_ns + t->runnable_ns;

		if (!t->wall_ns || t->on_cpu_ns * 1000 >= t->wall_ns * WP_IDLE_PERMILLE ||
		    !most[i] || most[i] * 100 < waits * WP_IDLE_STACK_PERCENT ||
		    waits * 2 < t->wall_ns)
			v->idle_stack[i] = 0;
	}
	free(most);
	return 0;
}

int wp_view_init(struct wp_view *v, const struct wp_analysis *an,
		 const struct wp_view_opts *o)
{
	int err;

	memset(v, 0, sizeof(*v));
	v->an = an;
	v->o = *o;
	if (!v->o.unit_ns)
		v->o.unit_ns = 1000;
	if (!wp_account_has_wakeups(an->account)) {
		const char *opt = o->wakers ? "--wakers" : o->waker_comm ? "--waker-comm" :
				  o->mode == WP_MODE_RUNNABLE ? "--mode runnable" :
				  o->sort == WP_SORT_RUNNABLE ? "--sort runnable" : NULL;

		if (opt) {
			wp_error("%s: the recording has no wake-ups (record them with --wakeups, "
				 "which needs CAP_PERFMON)", opt);
			return -EINVAL;
		}
	}
	if (o->comm) {
		err = compile_name_re(&v->comm_re, o->comm, "--comm");
		if (err)
			return err;
		v->have_comm_re = true;
	}
	if (o->waker_comm) {
		err = compile_name_re(&v->waker_re, o->waker_comm, "--waker-comm");
		if (err) {
			wp_view_release(v);
			return err;
		}
		v->have_waker_re = true;
	}
	/*
	 * Who asks for wakers looks at waits, and who names threads (--comm,
	 * --pid, --tid) wants theirs: no default that hides some then.
	 */
	v->explain = o->explain && !o->mode_given && !o->waker_comm && !o->comm && !o->nr_pids &&
		     !o->nr_tids;
	if (an->meta->flags & WP_META_CPU_WIDE) {
		v->system_default = v->explain;
		if (!o->sort_given)
			v->o.sort = WP_SORT_ON;
	}
	if (v->explain && !o->sort_given)
		v->o.sort = WP_SORT_ON;
	/* (Found in any view: the wait-for graph asks; only an explain view folds them.) */
	err = find_idle(v);
	if (err) {
		wp_view_release(v);
		return err;
	}
	if (o->grep) {
		if (regcomp(&v->grep_re, o->grep, REG_EXTENDED | REG_NOSUB)) {
			wp_error("--grep: '%s' is not a valid regular expression",
				 wp_quoted(o->grep));
			wp_view_release(v);
			return -EINVAL;
		}
		v->have_grep_re = true;
		v->grep_cache = calloc(wp_stacks_count(an->stacks) + 1, 1);
		if (!v->grep_cache) {
			wp_view_release(v);
			return -ENOMEM;
		}
	}
	return 0;
}

void wp_view_release(struct wp_view *v)
{
	if (v->have_comm_re)
		regfree(&v->comm_re);
	if (v->have_grep_re)
		regfree(&v->grep_re);
	if (v->have_waker_re)
		regfree(&v->waker_re);
	free(v->grep_cache);
	if (!v->derived)
		free(v->idle_stack);
	v->have_comm_re = v->have_grep_re = v->have_waker_re = false;
	v->grep_cache = NULL;
	v->idle_stack = NULL;
}

void wp_view_derive(const struct wp_view *v, enum wp_mode mode, bool busy_only,
		    struct wp_view *out)
{
	*out = *v;
	out->o.mode = mode;
	out->o.busy_only = busy_only;
	out->base = NULL;
	out->explain = out->system_default = false;
	out->derived = true;
}

static bool id_listed(const pid_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if ((uint32_t)ids[i] == id)
			return true;
	return false;
}

bool wp_view_thread(const struct wp_view *v, size_t idx)
{
	const struct wp_thread_times *th;
	size_t n;

	th = wp_account_threads(v->an->account, &n);
	if (idx >= n)
		return false;
	th += idx;
	if (v->o.nr_pids && !id_listed(v->o.pids, v->o.nr_pids, th->pid))
		return false;
	if (v->o.nr_tids && !id_listed(v->o.tids, v->o.nr_tids, th->tid))
		return false;
	if (v->have_comm_re && regexec(&v->comm_re, th->comm, 0, NULL, 0))
		return false;
	/* Outside the --time window entirely. */
	if (!th->wall_ns && v->an->has_window)
		return false;
	if (v->o.busy_only && !wp_view_at_work(v, idx))
		return false;
	return true;
}

bool wp_view_idle_by_rule(const struct wp_view *v, size_t idx)
{
	size_t n;

	wp_account_threads(v->an->account, &n);
	return v->idle_stack && idx < n && v->idle_stack[idx];
}

bool wp_view_idle(const struct wp_view *v, size_t idx, uint32_t *stack)
{
	if (!v->explain || !wp_view_idle_by_rule(v, idx))
		return false;
	if (stack)
		*stack = v->idle_stack[idx] - 1;
	return true;
}

bool wp_view_at_work(const struct wp_view *v, size_t idx)
{
	const struct wp_thread_times *th;
	size_t n;

	th = wp_account_threads(v->an->account, &n);
	if (idx >= n)
		return false;
	if (v->an->meta->flags & WP_META_CPU_WIDE)
		return th[idx].on_cpu_ns * 100 >= th[idx].wall_ns * WP_BUSY_PERCENT;
	return !wp_view_idle(v, idx, NULL);
}

void wp_view_left_out(const struct wp_view *v, uint64_t *threads, uint64_t *off_ns)
{
	const struct wp_thread_times *th;
	size_t n;

	*threads = *off_ns = 0;
	if (!v->explain || v->o.mode != WP_MODE_WALL)
		return;
	th = wp_account_threads(v->an->account, &n);
	for (size_t i = 0; i < n; i++) {
		if (!wp_view_thread(v, i) || wp_view_at_work(v, i))
			continue;
		++*threads;
		*off_ns += th[i].blocked_ns + th[i].runnable_ns + th[i].preempted_ns;
	}
}

bool wp_view_part(const struct wp_view *v, enum wp_part part)
{
	/* Only blocked intervals have wakers. */
	if (v->have_waker_re && part != WP_PART_BLOCKED)
		return false;
	switch (v->o.mode) {
	case WP_MODE_WALL:
		return true;
	case WP_MODE_ON:
		return part == WP_PART_ON;
	case WP_MODE_OFF:
		return part != WP_PART_ON;
	case WP_MODE_BLOCKED:
		return part == WP_PART_BLOCKED;
	case WP_MODE_PREEMPTED:
		return part == WP_PART_PREEMPTED;
	case WP_MODE_RUNNABLE:
		return part == WP_PART_RUNNABLE;
	}
	return false;
}

uint64_t wp_view_part_ns(const struct wp_view *v, const struct wp_stack_weight *w,
			 enum wp_part part)
{
	if (!wp_view_part(v, part))
		return 0;
	/* The default wall view: the waits of threads at work only. */
	if (part != WP_PART_ON && v->explain && v->o.mode == WP_MODE_WALL &&
	    !wp_view_at_work(v, w->thread))
		return 0;
	switch (part) {
	case WP_PART_ON:
		return w->on_cpu_ns;
	case WP_PART_BLOCKED:
		return v->have_waker_re ? wp_view_woken_ns(v, w, NULL) : w->blocked_ns;
	case WP_PART_PREEMPTED:
		return w->preempted_ns;
	case WP_PART_RUNNABLE:
		return w->runnable_ns;
	default:
		return 0;
	}
}

uint64_t wp_view_part_count(const struct wp_stack_weight *w, enum wp_part part)
{
	switch (part) {
	case WP_PART_ON:
		return w->samples;
	case WP_PART_BLOCKED:
		return w->blocked_count;
	case WP_PART_RUNNABLE:
		return w->runnable_count;
	default:
		return w->preempted_count;
	}
}

const char *wp_waker_name(const struct wp_analysis *an, const struct wp_waker *w, char *buf,
			  size_t size)
{
	const char *read = wp_waker_kind_name(w->kind);

	if (read)
		return read;
	if (w->comm[0]) {
		snprintf(buf, size, "%.*s", (int)sizeof(w->comm), w->comm);
		return buf;
	}
	/* Not a thread of the recording: the name read while recording, if any. */
	read = wp_tasknames_find(an->tasknames, w->pid, w->tid);
	if (read) {
		snprintf(buf, size, "%s", read);
		return buf;
	}
	/* Else its tid, the way perf shows one. */
	snprintf(buf, size, ":%" PRIu32, w->tid);
	return buf;
}

bool wp_view_waker(const struct wp_view *v, uint32_t waker)
{
	const struct wp_waker *w;
	char buf[32];
	size_t n;

	if (!v->have_waker_re)
		return true;
	w = wp_account_wakers(v->an->account, &n);
	return waker < n && !regexec(&v->waker_re, wp_waker_name(v->an, &w[waker], buf, sizeof(buf)),
				     0, NULL, 0);
}

uint64_t wp_view_woken_ns(const struct wp_view *v, const struct wp_stack_weight *w,
			  uint64_t *count)
{
	const struct wp_wake_weight *k;
	uint64_t ns = 0, c = 0;
	size_t n;

	k = wp_account_wake_weights(v->an->account, &n);
	for (uint32_t i = w->wakes; i && i <= n; i = k[i - 1].next) {
		if (!wp_view_waker(v, k[i - 1].waker))
			continue;
		ns += k[i - 1].blocked_ns;
		c += k[i - 1].count;
	}
	if (count)
		*count = c;
	return ns;
}

bool wp_view_stack(struct wp_view *v, uint32_t stack)
{
	const uint32_t *frames;
	unsigned int n;
	bool match = false;

	if (!v->have_grep_re)
		return true;
	if (v->grep_cache[stack])
		return v->grep_cache[stack] == 1;
	frames = wp_stacks_get(v->an->stacks, stack, &n);
	for (unsigned int i = 0; i < n && !match; i++)
		match = !regexec(&v->grep_re, wp_analysis_frame_name(v->an, frames[i]), 0, NULL, 0);
	v->grep_cache[stack] = match ? 1 : 2;
	return match;
}

const char *wp_part_marker(enum wp_part part, bool estimated)
{
	switch (part) {
	case WP_PART_BLOCKED:
		return estimated ? "[off-cpu:blocked (estimated)]" : "[off-cpu:blocked]";
	case WP_PART_PREEMPTED:
		return estimated ? "[off-cpu:preempted (estimated)]" : "[off-cpu:preempted]";
	case WP_PART_RUNNABLE:
		return estimated ? "[off-cpu:runnable (estimated)]" : "[off-cpu:runnable]";
	default:
		return NULL;
	}
}

uint64_t wp_view_part_estimated_ns(const struct wp_stack_weight *w, enum wp_part part)
{
	switch (part) {
	case WP_PART_BLOCKED:
		return w->estimated_ns[0];
	case WP_PART_RUNNABLE:
		return w->estimated_ns[1];
	case WP_PART_PREEMPTED:
		return w->estimated_ns[2];
	default:
		return 0;
	}
}

uint64_t wp_view_part_estimate_error_ns(const struct wp_stack_weight *w, enum wp_part part)
{
	int k = part == WP_PART_BLOCKED ? 0 : part == WP_PART_RUNNABLE ? 1 :
		part == WP_PART_PREEMPTED ? 2 : -1;

	return k < 0 ? 0 : wp_stack_weight_error_ns(w, k);
}

bool wp_estimated_enough(uint64_t estimated_ns, uint64_t ns)
{
	return estimated_ns && estimated_ns >= ns / 100;
}

bool wp_view_part_estimated(const struct wp_stack_weight *w, enum wp_part part)
{
	uint64_t all = part == WP_PART_BLOCKED ? w->blocked_ns : part == WP_PART_RUNNABLE ?
		       w->runnable_ns : part == WP_PART_PREEMPTED ? w->preempted_ns : 0;

	return wp_estimated_enough(wp_view_part_estimated_ns(w, part), all);
}

const struct wp_view_word wp_modes[] = {
	{ "wall", WP_MODE_WALL, "on-CPU + blocked + runnable + preempted time" },
	{ "on", WP_MODE_ON, "on-CPU time only" },
	{ "off", WP_MODE_OFF, "blocked, runnable and preempted time" },
	{ "blocked", WP_MODE_BLOCKED, "blocked time only" },
	{ "runnable", WP_MODE_RUNNABLE, "runnable time only (needs wake-ups)" },
	{ "preempted", WP_MODE_PREEMPTED, "preempted time only" },
	{ NULL, 0, NULL },
};

/* The default first: what a report read without filters is sorted by (wp_view_init). */
const struct wp_view_word wp_sorts[] = {
	{ "on", WP_SORT_ON, "on-CPU time, largest first" },
	{ "wall", WP_SORT_WALL, "wall time, largest first (the default with --mode, --comm, "
				"--pid, --tid, --waker-comm or --diff)" },
	{ "off", WP_SORT_OFF, "blocked, runnable and preempted time, largest first" },
	{ "blocked", WP_SORT_BLOCKED, "blocked time, largest first" },
	{ "runnable", WP_SORT_RUNNABLE, "runnable time, largest first (needs wake-ups)" },
	{ "preempted", WP_SORT_PREEMPTED, "preempted time, largest first" },
	{ "tid", WP_SORT_TID, "increasing process and thread IDs" },
	{ NULL, 0, NULL },
};

const struct wp_view_word *wp_view_word_find(const struct wp_view_word *words,
					     const char *name)
{
	for (const struct wp_view_word *w = words; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

const char *wp_mode_name(enum wp_mode mode)
{
	for (const struct wp_view_word *w = wp_modes; w->name; w++)
		if (w->value == (int)mode)
			return w->name;
	return "?";
}

uint64_t wp_view_sort_key(const struct wp_view *v, const struct wp_thread_times *t)
{
	switch (v->o.sort) {
	case WP_SORT_WALL:
		return t->wall_ns;
	case WP_SORT_ON:
		return t->on_cpu_ns;
	case WP_SORT_OFF:
		return t->blocked_ns + t->runnable_ns + t->preempted_ns;
	case WP_SORT_BLOCKED:
		return t->blocked_ns;
	case WP_SORT_PREEMPTED:
		return t->preempted_ns;
	case WP_SORT_TID:
		return UINT64_MAX - t->tid;
	case WP_SORT_RUNNABLE:
		return t->runnable_ns;
	}
	return 0;
}

const struct wp_view_word wp_groupings[] = {
	{ "process", WP_BY_PROCESS, "processes, each with its busiest threads" },
	{ "thread", WP_BY_THREAD, "threads" },
	{ "comm", WP_BY_COMM, "thread names, each over every process" },
	{ NULL, 0, NULL },
};

const struct wp_view_word wp_stack_styles[] = {
	{ "auto", WP_STACKS_AUTO, "compact above 24 threads, else full" },
	{ "full", WP_STACKS_FULL, "every frame of each stack and of its wakers" },
	{ "compact", WP_STACKS_COMPACT, "a line a stack, its innermost named frames" },
	{ NULL, 0, NULL },
};

/* The rows of one process, thread or name while the table is made. */
struct table_group {
	struct wp_thread_times sum;
	size_t first, n;	/* its threads: members[first, first + n) */
	uint64_t processes;
	bool one_thread;	/* a process with no other thread shown but its main one */
	bool program;		/* processes of one name (WP_ROW_PROGRAM) */
	bool taken;		/* it has a row */
	size_t shown;		/* by process: of its threads, those with a row */
};

struct table_ctx {
	const struct wp_view *v;
	const struct wp_thread_times *th;
	/*
	 * By process, explain: per thread index, its row's key: its pid, or
	 * PROGRAM_KEY + a number for the processes of a program.
	 */
	uint64_t *keys;
};

#define PROGRAM_KEY (1ULL << 40)

static void add_times(struct wp_thread_times *sum, const struct wp_thread_times *t)
{
	sum->wall_ns += t->wall_ns;
	sum->on_cpu_ns += t->on_cpu_ns;
	sum->blocked_ns += t->blocked_ns;
	sum->runnable_ns += t->runnable_ns;
	sum->preempted_ns += t->preempted_ns;
	sum->wakeups += t->wakeups;
	sum->voluntary_switches += t->voluntary_switches;
	sum->involuntary_switches += t->involuntary_switches;
	sum->samples += t->samples;
	sum->switch_samples += t->switch_samples;
	sum->switch_outs_unsampled += t->switch_outs_unsampled;
	sum->approximate |= t->approximate;
	sum->on_cpu_bound_ns += t->on_cpu_bound_ns;
	if (t->on_cpu_source == WP_ON_CPU_ESTIMATED)
		sum->on_cpu_source = WP_ON_CPU_ESTIMATED;
}

/* Threads by name, then pid and tid (the accounting's order). */
static int member_by_comm(const void *x, const void *y, void *arg)
{
	const struct table_ctx *c = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int d = strncmp(c->th[a].comm, c->th[b].comm, sizeof(c->th->comm));

	if (d)
		return d;
	return a < b ? -1 : a > b;
}

/* Threads by the sort key, then tid. */
static int member_by_key(const void *x, const void *y, void *arg)
{
	const struct table_ctx *c = arg;
	const struct wp_thread_times *a = &c->th[*(const uint32_t *)x];
	const struct wp_thread_times *b = &c->th[*(const uint32_t *)y];
	uint64_t ka = wp_view_sort_key(c->v, a), kb = wp_view_sort_key(c->v, b);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Groups by the sort key of their sums, then pid, tid and name. */
static int group_by_key(const void *x, const void *y, void *arg)
{
	const struct table_ctx *c = arg;
	const struct table_group *a = x, *b = y;
	uint64_t ka = wp_view_sort_key(c->v, &a->sum), kb = wp_view_sort_key(c->v, &b->sum);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->sum.pid != b->sum.pid)
		return a->sum.pid < b->sum.pid ? -1 : 1;
	if (a->sum.tid != b->sum.tid)
		return a->sum.tid < b->sum.tid ? -1 : 1;
	return strncmp(a->sum.comm, b->sum.comm, sizeof(a->sum.comm));
}

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Distinct values among ids[0, n), which it sorts. */
static uint64_t count_distinct(uint32_t *ids, size_t n)
{
	uint64_t d = 0;

	if (n)
		qsort(ids, n, sizeof(*ids), u32_cmp);
	for (size_t i = 0; i < n; i++)
		d += !i || ids[i] != ids[i - 1];
	return d;
}

/* Whether the process of thread idx has no other thread in the recording. */
static bool process_of_one(const struct wp_view *v, const struct wp_thread_times *th, size_t n,
			   size_t idx)
{
	size_t i = idx, others = 0;

	while (i > 0 && th[i - 1].pid == th[idx].pid)
		i--;
	for (; i < n && th[i].pid == th[idx].pid; i++)
		if (i != idx && (th[i].wall_ns || !v->an->has_window))
			others++;
	return !others;
}

/* The name of the process of thread idx: its main thread's, else thread idx's. */
static const char *main_comm(const struct table_ctx *c, size_t nth, size_t idx)
{
	uint32_t pid = c->th[idx].pid;
	size_t k = idx;

	/* The accounting's threads go by pid, then tid: the main thread first. */
	while (k > 0 && c->th[k - 1].pid == pid)
		k--;
	for (; k < nth && c->th[k].pid == pid; k++)
		if (c->th[k].tid == pid)
			return c->th[k].comm;
	return c->th[idx].comm;
}

/* Threads by their row's key, then their accounting order (pid, tid). */
static int member_by_row_key(const void *x, const void *y, void *arg)
{
	const struct table_ctx *c = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (c->keys[a] != c->keys[b])
		return c->keys[a] < c->keys[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* A process while its program is looked for: its name and its threads. */
struct proc_run {
	const char *name;
	size_t first, n;	/* members[first, first + n) */
};

static int run_by_name(const void *x, const void *y)
{
	const struct proc_run *a = x, *b = y;
	int d = strncmp(a->name, b->name, 16);

	if (d)
		return d;
	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * By process, explain: give each member its row's key (c->keys), so that
 * the processes of a name that WP_TABLE_PROGRAM processes or more share
 * become one row, and put the members in the order of their keys.
 * Members come in the accounting's order: by pid, then tid.
 */
static int program_keys(struct table_ctx *c, size_t nth, uint32_t *members, size_t n)
{
	struct proc_run *runs = calloc(n + 1, sizeof(*runs));
	size_t nr = 0;
	uint64_t program = 0;

	c->keys = calloc(nth + 1, sizeof(*c->keys));
	if (!runs || !c->keys) {
		free(runs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;

		runs[nr] = (struct proc_run){ .name = c->th[members[i]].comm, .first = i };
		for (; j < n && c->th[members[j]].pid == c->th[members[i]].pid; j++) {
			const struct wp_thread_times *m = &c->th[members[j]];

			c->keys[members[j]] = m->pid;
			/* A process goes by its main thread's name. */
			if (m->tid == m->pid)
				runs[nr].name = m->comm;
		}
		runs[nr++].n = j - i;
		i = j;
	}
	qsort(runs, nr, sizeof(*runs), run_by_name);
	for (size_t i = 0, j; i < nr; i = j) {
		for (j = i + 1; j < nr && !strncmp(runs[j].name, runs[i].name, 16); j++)
			;
		if (j - i < WP_TABLE_PROGRAM)
			continue;
		program++;
		for (size_t r = i; r < j; r++)
			for (size_t k = runs[r].first; k < runs[r].first + runs[r].n; k++)
				c->keys[members[k]] = PROGRAM_KEY + program;
	}
	free(runs);
	qsort_r(members, n, sizeof(*members), member_by_row_key, c);
	return 0;
}

/* The groups of members (each run of one process, one name or one thread). */
static int make_groups(struct table_ctx *c, size_t nth, uint32_t *members, size_t n,
		       struct table_group **out, size_t *nr)
{
	enum wp_group_by by = c->v->o.by;
	struct table_group *g;
	uint32_t *pids = NULL;
	size_t ng = 0;

	g = calloc(n + 1, sizeof(*g));
	pids = calloc(n + 1, sizeof(*pids));
	if (!g || !pids) {
		free(g);
		free(pids);
		return -ENOMEM;
	}
	if (by == WP_BY_COMM)
		qsort_r(members, n, sizeof(*members), member_by_comm, (void *)c);
	/* --threads all: a row for every process. */
	if (by == WP_BY_PROCESS && c->v->explain && c->v->o.rows &&
	    program_keys(c, nth, members, n)) {
		free(g);
		free(pids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		const struct wp_thread_times *t = &c->th[members[i]];
		struct table_group *grp = &g[ng++];
		size_t j = i + 1;

		if (by == WP_BY_PROCESS && c->keys)
			while (j < n && c->keys[members[j]] == c->keys[members[i]])
				j++;
		else if (by == WP_BY_PROCESS)
			while (j < n && c->th[members[j]].pid == t->pid)
				j++;
		else if (by == WP_BY_COMM)
			while (j < n && !strncmp(c->th[members[j]].comm, t->comm, sizeof(t->comm)))
				j++;
		grp->first = i;
		grp->n = j - i;
		grp->sum.pid = grp->sum.tid = t->pid;
		memcpy(grp->sum.comm, t->comm, sizeof(t->comm));
		if (by == WP_BY_THREAD)
			grp->sum.tid = t->tid;
		for (size_t k = i; k < j; k++) {
			const struct wp_thread_times *m = &c->th[members[k]];

			/* A process goes by its main thread's name. */
			if (by == WP_BY_PROCESS && m->tid == m->pid)
				memcpy(grp->sum.comm, m->comm, sizeof(m->comm));
			add_times(&grp->sum, m);
			pids[k - i] = m->pid;
		}
		grp->processes = count_distinct(pids, j - i);
		/* Its main thread may have no row (idle, folded): its name still. */
		if (by == WP_BY_PROCESS)
			memcpy(grp->sum.comm, main_comm(c, nth, members[i]), sizeof(t->comm));
		grp->program = c->keys && c->keys[members[i]] >= PROGRAM_KEY;
		/*
		 * One row for a process of one thread, or whose one thread
		 * shown is its main thread (the others idle, folded): a row
		 * under it would repeat it figure for figure.
		 */
		grp->one_thread = by == WP_BY_PROCESS && j - i == 1 && !grp->program &&
				  (c->th[members[i]].tid == c->th[members[i]].pid ||
				   process_of_one(c->v, c->th, nth, members[i]));
		qsort_r(members + i, j - i, sizeof(*members), member_by_key, (void *)c);
		i = j;
	}
	free(pids);
	qsort_r(g, ng, sizeof(*g), group_by_key, (void *)c);
	*out = g;
	*nr = ng;
	return 0;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Which groups and threads get a row, within the limit. */
static void choose_rows(const struct wp_view *v, struct table_group *g, size_t ng)
{
	size_t limit = v->o.rows ? v->o.rows : SIZE_MAX, rows = 0;

	for (size_t i = 0; i < ng && rows < limit; i++) {
		g[i].taken = true;
		rows++;
		if (v->o.by != WP_BY_PROCESS || g[i].one_thread || g[i].program)
			continue;
		g[i].shown = min_size(g[i].n, min_size(WP_TABLE_THREADS, limit - rows));
		rows += g[i].shown;
	}
	if (v->o.by != WP_BY_PROCESS)
		return;
	for (size_t i = 0; i < ng && rows < limit; i++) {
		size_t more;

		if (!g[i].taken || g[i].one_thread || g[i].program)
			continue;
		more = min_size(g[i].n - g[i].shown, limit - rows);
		g[i].shown += more;
		rows += more;
	}
}

static int table_add(struct wp_table *t, size_t *cap, enum wp_row_kind kind,
		     const struct wp_thread_times *sum, uint64_t threads, uint64_t processes)
{
	if (WP_GROW(t->rows, *cap, t->nr_rows + 1))
		return -ENOMEM;
	t->rows[t->nr_rows++] = (struct wp_table_row){ .kind = kind, .sum = *sum,
						       .threads = threads,
						       .processes = processes };
	return 0;
}

/* Idle threads by their stack, then their accounting order. */
static int idle_by_stack(const void *x, const void *y, void *arg)
{
	const uint32_t *stack = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (stack[a] != stack[b])
		return stack[a] < stack[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Folds with the most threads first, then the most wall time, then by stack. */
static int fold_cmp(const void *x, const void *y)
{
	const struct wp_idle_fold *a = x, *b = y;

	if (a->threads != b->threads)
		return a->threads > b->threads ? -1 : 1;
	if (a->sum.wall_ns != b->sum.wall_ns)
		return a->sum.wall_ns > b->sum.wall_ns ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The idle threads (n of them, thread indexes) as a fold per stack. */
static int fold_idle(const struct wp_view *v, const struct wp_thread_times *th, uint32_t *idle,
		     size_t n, struct wp_table *t)
{
	uint32_t *pids = calloc(n + 1, sizeof(*pids));
	struct table_ctx c = { .v = v, .th = th };
	size_t nf = 0;

	t->idle = calloc(n + 1, sizeof(*t->idle));
	if (!pids || !t->idle) {
		free(pids);
		return -ENOMEM;
	}
	qsort_r(idle, n, sizeof(*idle), idle_by_stack, v->idle_stack);
	for (size_t i = 0, j; i < n; i = j) {
		struct wp_idle_fold *f = &t->idle[nf++];

		f->stack = v->idle_stack[idle[i]] - 1;
		for (j = i; j < n && v->idle_stack[idle[j]] == v->idle_stack[idle[i]]; j++) {
			add_times(&f->sum, &th[idle[j]]);
			pids[j - i] = th[idle[j]].pid;
		}
		/* Its distinct names, in the order of names. */
		qsort_r(idle + i, j - i, sizeof(*idle), member_by_comm, &c);
		for (size_t k = i; k < j; k++) {
			if (k > i && !strncmp(th[idle[k]].comm, th[idle[k - 1]].comm, sizeof(th->comm)))
				continue;
			if (f->nr_names < ARRAY_SIZE(f->names))
				f->names[f->nr_names++] = idle[k];
			else
				f->more_names++;
		}
		f->threads = j - i;
		f->processes = count_distinct(pids, j - i);
		f->sum.pid = f->sum.tid = th[idle[i]].pid;
	}
	qsort(t->idle, nf, sizeof(*t->idle), fold_cmp);
	t->nr_idle = nf;
	t->idle_threads = n;
	free(pids);
	return 0;
}

int wp_view_table(const struct wp_view *v, struct wp_table *t)
{
	struct table_ctx c = { .v = v };
	struct table_group *g = NULL;
	uint32_t *members, *rest_pids, *idle;
	size_t nth, n = 0, ng = 0, cap = 0, nrest = 0, nidle = 0;
	int err;

	memset(t, 0, sizeof(*t));
	c.th = wp_account_threads(v->an->account, &nth);
	members = calloc(nth + 1, sizeof(*members));
	rest_pids = calloc(nth + 1, sizeof(*rest_pids));
	idle = calloc(nth + 1, sizeof(*idle));
	if (!members || !rest_pids || !idle) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nth; i++) {
		if (!wp_view_thread(v, i))
			continue;
		add_times(&t->all, &c.th[i]);
		rest_pids[n + nidle] = c.th[i].pid;
		/* Folded, unless every thread has a row (--threads all). */
		if (v->o.rows && wp_view_idle(v, i, NULL))
			idle[nidle++] = (uint32_t)i;
		else
			members[n++] = (uint32_t)i;
	}
	t->threads = n + nidle;
	t->processes = count_distinct(rest_pids, n + nidle);
	err = fold_idle(v, c.th, idle, nidle, t);
	if (!err)
		err = make_groups(&c, nth, members, n, &g, &ng);
	if (err)
		goto out;
	choose_rows(v, g, ng);
	for (size_t i = 0; i < ng; i++) {
		const struct table_group *grp = &g[i];
		bool alone = v->o.by != WP_BY_PROCESS || grp->one_thread || grp->program;
		enum wp_row_kind kind = v->o.by == WP_BY_COMM ? WP_ROW_COMM :
					v->o.by == WP_BY_THREAD ? WP_ROW_THREAD :
					grp->program ? WP_ROW_PROGRAM :
					grp->one_thread ? WP_ROW_ONE_THREAD : WP_ROW_PROCESS;

		if (!grp->taken) {
			t->rest_names += v->o.by == WP_BY_COMM;
		} else {
			err = table_add(t, &cap, kind, &grp->sum, grp->n, grp->processes);
			for (size_t k = 0; !err && !alone && k < grp->shown; k++)
				err = table_add(t, &cap, WP_ROW_THREAD, &c.th[members[grp->first + k]],
						1, 1);
			if (err)
				goto out;
		}
		/* A row of a name, a thread or a process of one stands for its threads. */
		for (size_t k = grp->taken ? (alone ? grp->n : grp->shown) : 0; k < grp->n; k++) {
			const struct wp_thread_times *m = &c.th[members[grp->first + k]];

			add_times(&t->rest, m);
			rest_pids[nrest++] = m->pid;
		}
	}
	t->rest_threads = nrest;
	t->rest_processes = count_distinct(rest_pids, nrest);
out:
	if (err)
		wp_view_table_release(t);
	free(g);
	free(c.keys);
	free(members);
	free(rest_pids);
	free(idle);
	return err;
}

void wp_view_table_release(struct wp_table *t)
{
	free(t->rows);
	free(t->idle);
	t->rows = NULL;
	t->idle = NULL;
	t->nr_rows = t->nr_idle = 0;
}
