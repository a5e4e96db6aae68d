/* SPDX-License-Identifier: GPL-2.0-or-later */
/* view.c: thread, time and stack selection shared by every output format. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "quote.h"
#include "symbols.h"
#include "view.h"

int wp_view_init(struct wp_view *v, const struct wp_analysis *an,
		 const struct wp_view_opts *o)
{
	char q[WP_QUOTE_MSG];
	int err;

	memset(v, 0, sizeof(*v));
	v->an = an;
	v->o = *o;
	if (!v->o.unit_ns)
		v->o.unit_ns = 1000;
	if (o->comm) {
		/* Anchored: --comm foo matches the name foo, not foobar. */
		size_t n = strlen(o->comm) + 5;
		char *re = malloc(n);

		if (!re)
			return -ENOMEM;
		snprintf(re, n, "^(%s)$", o->comm);
		err = regcomp(&v->comm_re, re, REG_EXTENDED | REG_NOSUB);
		free(re);
		if (err) {
			wp_error("--comm: '%s' is not a valid regular expression",
				 wp_quote(q, sizeof(q), o->comm, WP_QUOTE_TEXT));
			return -EINVAL;
		}
		v->have_comm_re = true;
	}
	if (o->grep) {
		if (regcomp(&v->grep_re, o->grep, REG_EXTENDED | REG_NOSUB)) {
			wp_error("--grep: '%s' is not a valid regular expression",
				 wp_quote(q, sizeof(q), o->grep, WP_QUOTE_TEXT));
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
	free(v->grep_cache);
	v->have_comm_re = v->have_grep_re = false;
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
		return w->blocked_ns;
	case WP_PART_PREEMPTED:
		return w->preempted_ns;
	default:
		return 0;
	}
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

const char *wp_part_marker(enum wp_part part)
{
	switch (part) {
	case WP_PART_BLOCKED:
		return "[off-cpu:blocked]";
	case WP_PART_PREEMPTED:
		return "[off-cpu:preempted]";
	default:
		return NULL;
	}
}

const char *wp_mode_name(enum wp_mode mode)
{
	static const char *const names[] = { "wall", "on", "off", "blocked", "preempted" };

	return names[mode];
}

uint64_t wp_view_sort_key(const struct wp_view *v, const struct wp_thread_times *t)
{
	switch (v->o.sort) {
	case WP_SORT_WALL:
		return t->wall_ns;
	case WP_SORT_ON:
		return t->on_cpu_ns;
	case WP_SORT_OFF:
		return t->blocked_ns + t->preempted_ns;
	case WP_SORT_BLOCKED:
		return t->blocked_ns;
	case WP_SORT_PREEMPTED:
		return t->preempted_ns;
	case WP_SORT_TID:
		return UINT64_MAX - t->tid;
	}
	return 0;
}
