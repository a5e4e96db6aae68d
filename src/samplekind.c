/* SPDX-License-Identifier: GPL-2.0-or-later */
/* samplekind.c: event roles and tracepoint fields of a recording's samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "samplekind.h"
#include "util.h"

int wp_sample_kinds_init(struct wp_sample_kinds *k, const struct wp_meta *m)
{
	memset(k, 0, sizeof(*k));
	for (uint32_t e = 0; e < m->nr_events; e++)
		for (uint32_t i = 0; i < m->events[e].nr_ids; i++)
			if (wp_u64map_put(&k->roles, m->events[e].ids[i], m->events[e].role) ||
			    wp_u64map_put(&k->configs, m->events[e].ids[i], m->events[e].attr.config))
				return -ENOMEM;
	return 0;
}

int wp_sample_kinds_format(struct wp_sample_kinds *k, const struct perf_event_header *rec)
{
	const char *t;
	char *text;
	size_t len;

	if (wp_text_parse(rec, &t, &len) || k->nr_formats == ARRAY_SIZE(k->formats))
		return 0;
	text = strndup(t, len);
	if (!text)
		return -ENOMEM;
	if (!wp_trace_format_parse(text, &k->formats[k->nr_formats]))
		k->nr_formats++;
	free(text);
	return 0;
}

enum wp_event_role wp_sample_kinds_role(const struct wp_sample_kinds *k, uint64_t id)
{
	uint64_t role = WP_EVENT_ONCPU;

	wp_u64map_get(&k->roles, id, &role);
	return (enum wp_event_role)role;
}

bool wp_sample_kinds_known(const struct wp_sample_kinds *k, uint64_t id)
{
	return wp_u64map_get(&k->roles, id, NULL);
}

const struct wp_trace_format *wp_sample_kinds_trace(const struct wp_sample_kinds *k,
						    uint64_t id)
{
	uint64_t config;

	if (!wp_u64map_get(&k->configs, id, &config))
		return NULL;
	for (unsigned int i = 0; i < k->nr_formats; i++)
		if (k->formats[i].id == config)
			return &k->formats[i];
	return NULL;
}

/* Trace flags in common_flags (the kernel's trace.h): the context of the event. */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACE_FLAG_NMI 0x40

bool wp_sample_kinds_waking(const struct wp_sample_kinds *k, const struct wp_sample *s,
			    uint32_t *wakee, uint8_t *context)
{
	const struct wp_trace_format *f = wp_sample_kinds_trace(k, s->id);
	int64_t pid, flags = 0;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "pid"), s->raw, s->raw_size, &pid) ||
	    pid <= 0 || pid > UINT32_MAX)
		return false;
	wp_trace_field_int(wp_trace_field(f, "common_flags"), s->raw, s->raw_size, &flags);
	*wakee = (uint32_t)pid;
	/* Not TRACE_FLAG_BH_OFF (0x80): bottom halves disabled is a task's own context. */
	*context = (flags & TRACE_FLAG_HARDIRQ ? WP_WAKE_HARDIRQ : 0) |
		   (flags & TRACE_FLAG_SOFTIRQ ? WP_WAKE_SOFTIRQ : 0) |
		   (flags & TRACE_FLAG_NMI ? WP_WAKE_NMI : 0);
	return true;
}

bool wp_sample_kinds_woken(const struct wp_sample_kinds *k, const struct wp_sample *s,
			   uint32_t *tid)
{
	const struct wp_trace_format *f = wp_sample_kinds_trace(k, s->id);
	int64_t pid;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "pid"), s->raw, s->raw_size, &pid) ||
	    pid <= 0 || pid > UINT32_MAX)
		return false;
	*tid = (uint32_t)pid;
	return true;
}

bool wp_sample_kinds_next(const struct wp_sample_kinds *k, const struct wp_sample *s,
			  uint32_t *tid)
{
	const struct wp_trace_format *f = wp_sample_kinds_trace(k, s->id);
	int64_t next;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "next_pid"), s->raw, s->raw_size, &next) ||
	    next < 0 || next > UINT32_MAX)
		return false;
	*tid = (uint32_t)next;
	return true;
}

bool wp_sample_kinds_enqueued_here(const struct wp_sample_kinds *k, const struct wp_sample *s)
{
	const struct wp_trace_format *f = wp_sample_kinds_trace(k, s->id);
	int64_t target;

	return f && wp_trace_field_int(wp_trace_field(f, "target_cpu"), s->raw, s->raw_size,
				       &target) && target == (int64_t)s->cpu;
}

void wp_sample_kinds_release(struct wp_sample_kinds *k)
{
	wp_u64map_release(&k->roles);
	wp_u64map_release(&k->configs);
}
