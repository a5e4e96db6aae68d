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
	v->have_comm_re = v->have_grep_re = v->have_waker_re = false;
	v->grep_cache = NULL;
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
	return true;
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

const char *wp_waker_name(const struct wp_waker *w, char *buf, size_t size)
{
	switch (w->kind) {
	case WP_WAKER_INTERRUPT:
		return "[interrupt]";
	case WP_WAKER_TIMER:
		return "[timer]";
	case WP_WAKER_IDLE:
		return "swapper";	/* the idle task's name, as the kernel gives it */
	}
	if (w->comm[0]) {
		snprintf(buf, size, "%.*s", (int)sizeof(w->comm), w->comm);
		return buf;
	}
	/* Not a thread of the recording: its tid, the way perf shows one. */
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
	return waker < n && !regexec(&v->waker_re, wp_waker_name(&w[waker], buf, sizeof(buf)),
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

const struct wp_view_word wp_sorts[] = {
	{ "wall", WP_SORT_WALL, "wall time, largest first" },
	{ "on", WP_SORT_ON, "on-CPU time, largest first" },
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
