/* SPDX-License-Identifier: GPL-2.0-or-later */
/* analysis.c: reader -> order -> maps -> unwind -> symbols -> accounting. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "analysis.h"
#include "arch.h"
#include "buildid.h"
#include "coverage.h"
#include "debuginfo.h"
#include "jitmap.h"
#include "pkgowner.h"
#include "u64map.h"
#include "log.h"
#include "order.h"
#include "procmap.h"
#include "quote.h"
#include "stacks.h"
#include "symbols.h"
#include "symcache.h"
#include "tracefs.h"
#include "ucache.h"
#include "unwind.h"
#include "util.h"

#define MAX_STACK_TOKENS 512

/*
 * A user stack is named in full before a sample's budget cuts it, but one
 * longer than any budget shows the same under every budget: a token more
 * than the largest budget is enough to tell.
 */
#define USER_TOKENS (MAX_STACK_TOKENS + 1)
#define UCACHE_SLOTS 65536	/* unwound stacks remembered, a power of two */
#define UCACHE_TOKENS (1U << 20)	/* their frames, in all */

struct pipeline {
	struct wp_analysis *an;
	const struct wp_analysis_opts *opts;
	struct wp_sample_format fmt;
	struct wp_procmap *pm;
	struct wp_unwinder *unwinder;
	struct wp_symbols *symbols;
	struct wp_coverage *coverage;
	struct wp_u64map unnamed_at;	/* where unnamed frames were -> how many */
	uint32_t no_stack_marker;
	struct wp_u64map roles;		/* event id -> enum wp_event_role */
	struct wp_u64map configs;	/* event id -> its attr.config */
	struct wp_trace_format formats[8];	/* of the recording's tracepoints */
	unsigned int nr_formats;
	uint32_t truncated_marker;
	uint64_t last_time;
	struct wp_ustack ustack;
	uint32_t tokens[MAX_STACK_TOKENS];
	uint32_t user_tokens[USER_TOKENS];	/* one user stack, before the budget */
	struct wp_ucache *ucache;		/* NULL: no cache, only slower */
	uint64_t file_size, progress_step, next_progress;
	char *ksyms_text;	/* the recording's saved kernel symbols, or NULL */
	struct wp_jitmap jit;	/* the recording's names of JIT code */
};

static enum wp_event_role sample_role(const struct pipeline *p, uint64_t id)
{
	uint64_t role = WP_EVENT_ONCPU;

	wp_u64map_get(&p->roles, id, &role);
	return (enum wp_event_role)role;
}

/*
 * Unwind and name the user stack of s into tokens[n..]; returns the new n.
 * Whether it was unwound now or found in the cache, the whole stack goes
 * through the same budget and the same counters.
 */
static unsigned int user_frames(struct pipeline *p, struct wp_process *proc,
				const struct wp_sample *s, unsigned int n)
{
	struct wp_quality *q = &p->an->quality;
	struct wp_ucache_stack st = { .tokens = p->user_tokens };
	uint64_t key = 0;
	bool cut;

	if (p->ucache) {
		key = wp_ucache_key(s->pid, proc->generation, s->regs, p->fmt.nr_regs);
		if (wp_ucache_find(p->ucache, key, s->stack, s->stack_dyn_size, &st)) {
			q->cache_hits++;
			goto emit;
		}
	}
	wp_unwind_sample(p->unwinder, &p->fmt, s, &p->ustack);
	if (p->ustack.failed) {
		q->unwind_failed++;
		return n;
	}
	for (unsigned int i = 0; i < p->ustack.n && st.len < USER_TOKENS; i++)
		st.len += wp_symbols_user(p->symbols, proc, p->ustack.pc[i],
					  p->ustack.activation[i], p->user_tokens + st.len,
					  USER_TOKENS - st.len);
	st.truncated = p->ustack.truncated;
	st.too_deep = p->ustack.too_deep;
	st.needed = p->ustack.needed;
	if (p->ucache)
		wp_ucache_insert(p->ucache, key, s->stack, s->stack_dyn_size,
				 p->ustack.read_bytes, &st);
emit:
	n += wp_ucache_emit(&st, p->truncated_marker, p->tokens + n, MAX_STACK_TOKENS - n, &cut);
	/* Frames left out for want of room: deeper than shown, as at the frame limit. */
	if (st.too_deep || cut)
		q->too_deep++;
	if (st.truncated) {
		q->truncated++;
		if (st.needed > q->truncated_needed)
			q->truncated_needed = st.needed;
	}
	return n;
}

/* Frames of a sample, innermost first: kernel, then user. */
static unsigned int sample_frames(struct pipeline *p, const struct perf_event_header *rec,
				  const struct wp_sample *s, bool user_frames_too)
{
	struct wp_quality *q = &p->an->quality;
	struct wp_process *proc = wp_procmap_process(p->pm, s->pid);
	struct wp_callchain_walk walk;
	bool kernel, first_user = true;
	unsigned int n = 0;
	uint64_t ip;

	wp_callchain_walk_init(&walk, rec, s);
	while (n < MAX_STACK_TOKENS && wp_callchain_walk_next(&walk, &ip, &kernel)) {
		if (kernel && !p->opts->no_kernel) {
			p->tokens[n++] = wp_symbols_kernel(p->symbols, ip);
		} else if (!kernel && !p->opts->no_user && user_frames_too) {
			n += wp_symbols_user(p->symbols, proc, ip, first_user, p->tokens + n,
					     MAX_STACK_TOKENS - n);
			first_user = false;
		}
	}
	if (!(p->fmt.sample_type & PERF_SAMPLE_STACK_USER) || p->opts->no_user || !p->unwinder ||
	    !user_frames_too)
		return n;
	if (s->regs_abi == 0)
		return n;	/* a kernel thread: no user stack */
	/*
	 * No known mappings: the user state of an image being replaced by
	 * execve (a launched command's first samples), or of a process whose
	 * maps were never seen.  Nothing to unwind or name it with.
	 */
	if (!proc || !proc->nr_maps)
		return n;
	q->samples++;
	return user_frames(p, proc, s, n);
}

/* Frames of a sample, named and not (markers are not frames). */
static void count_frames(struct pipeline *p, unsigned int n)
{
	struct wp_quality *q = &p->an->quality;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t tok = p->tokens[i];
		uint64_t where, count = 0;

		if (tok == p->truncated_marker || tok == p->no_stack_marker)
			continue;
		q->frames++;
		if (!(tok & WP_FRAME_UNNAMED))
			continue;
		q->unnamed++;
		where = wp_symbols_unnamed_where(p->symbols, tok);
		wp_u64map_get(&p->unnamed_at, where, &count);
		wp_u64map_put(&p->unnamed_at, where, count + 1);
	}
}

/* Most frames first; a total order, since the map gives them in any order. */
static int unnamed_cmp(const void *a, const void *b)
{
	const struct wp_unnamed_file *x = a, *y = b;
	int c;

	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	c = strcmp(x->path, y->path);
	return c ? c : (int)x->reason - (int)y->reason;
}

/*
 * The time of the stacks that hold an unnamed frame of each of the n
 * places (a stack counts once for a place, whatever its number of such
 * frames), and of all stacks.
 */
static void unnamed_time(struct pipeline *p, struct wp_unnamed_file *files, size_t n)
{
	struct wp_quality *q = &p->an->quality;
	const struct wp_stack_weight *w;
	size_t nw;

	w = wp_account_stacks(p->an->account, &nw);
	for (size_t i = 0; i < nw; i++) {
		uint64_t ns = w[i].on_cpu_ns + w[i].blocked_ns + w[i].runnable_ns +
			      w[i].preempted_ns;
		bool seen[WP_UNNAMED_FILES + 1] = { false };
		const uint32_t *tok;
		unsigned int len;

		q->stacks_ns += ns;
		tok = wp_stacks_get(p->an->stacks, w[i].stack, &len);
		for (unsigned int k = 0; tok && k < len; k++) {
			uint32_t where;

			if (!(tok[k] & WP_FRAME_UNNAMED))
				continue;
			where = wp_symbols_unnamed_where(p->symbols, tok[k]);
			for (size_t f = 0; f < n; f++) {
				if (seen[f] || files[f].where != where)
					continue;
				seen[f] = true;
				files[f].stack_ns += ns;
			}
		}
	}
}

/*
 * Where a file's debug file would be found by its build id (the recorded
 * one, else the file's own): debuginfo.h's first place.
 */
static void debug_file_of(struct pipeline *p, struct wp_unnamed_file *f)
{
	struct wp_dso *dso = wp_procmap_dso(p->pm, f->where);
	uint8_t id[WP_SYMCACHE_MAX_ID];
	size_t len = 0;
	int n;

	f->debug_file[0] = '\0';
	if (!dso)
		return;
	if (dso->build_id_size) {
		len = dso->build_id_size;
		memcpy(id, dso->build_id, len);
	} else if (dso->usable && (n = wp_build_id_read_fd(dso->fd, id, sizeof(id))) > 0) {
		len = (size_t)n;
	}
	if (len < 2)
		return;
	wp_debuginfo_build_id_path(id, len, f->debug_file, sizeof(f->debug_file));
}

/* The places with the most unnamed frames, why, and what would name them. */
static void explain_unnamed(struct pipeline *p)
{
	struct wp_quality *q = &p->an->quality;
	struct wp_unnamed_file all[WP_UNNAMED_FILES + 1];
	char owners[WP_UNNAMED_FILES][WP_PACKAGE_NAME_MAX];
	const char *paths[WP_UNNAMED_FILES];
	uint64_t where, count;
	size_t pos = 0, n = 0, nfiles = 0;

	while (wp_u64map_next(&p->unnamed_at, &pos, &where, &count)) {
		struct wp_unnamed_file *f = &all[n];
		struct wp_dso *dso = NULL;

		memset(f, 0, sizeof(*f));
		f->frames = count;
		if (where == WP_SYMBOLS_KERNEL) {
			f->reason = WP_UNNAMED_KERNEL;
			snprintf(f->path, sizeof(f->path), "[kernel]");
		} else if (where == WP_DSO_NONE || !(dso = wp_procmap_dso(p->pm, (uint32_t)where))) {
			f->reason = WP_UNNAMED_NO_FILE;
			snprintf(f->path, sizeof(f->path), "[anonymous]");
		} else {
			f->reason = dso->usable ? WP_UNNAMED_NO_SYMBOLS : WP_UNNAMED_MISSING;
			snprintf(f->path, sizeof(f->path), "%s", dso->path);
		}
		f->where = (uint32_t)where;
		/* Keep the largest few: the extra slot is the one sorted out. */
		if (++n > WP_UNNAMED_FILES) {
			qsort(all, n, sizeof(*all), unnamed_cmp);
			n = WP_UNNAMED_FILES;
		}
	}
	qsort(all, n, sizeof(*all), unnamed_cmp);
	unnamed_time(p, all, n);
	for (size_t i = 0; i < n; i++) {
		if (all[i].reason != WP_UNNAMED_NO_SYMBOLS)
			continue;
		paths[nfiles++] = all[i].path;
		debug_file_of(p, &all[i]);
	}
	wp_package_owners(paths, nfiles, owners);
	for (size_t i = 0, k = 0; i < n; i++)
		if (all[i].reason == WP_UNNAMED_NO_SYMBOLS)
			snprintf(all[i].package, sizeof(all[i].package), "%s", owners[k++]);
	memcpy(q->unnamed_files, all, n * sizeof(*all));
	q->nr_unnamed_files = (unsigned int)n;
}

/* Trace flags in common_flags (the kernel's trace.h): the context of the event. */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACE_FLAG_NMI 0x40

/* A kernel frame that says a timer's expiry did the waking. */
static bool timer_frame(const struct pipeline *p, uint32_t tok)
{
	static const char *const timers[] = {
		"hrtimer_wakeup", "process_timeout", "call_timer_fn", "__hrtimer_run_queues",
	};
	const char *name = wp_analysis_frame_name(p->an, tok);

	for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
		if ((tok & WP_FRAME_KERNEL) && !strcmp(name, timers[i]))
			return true;
	return false;
}

/* An interrupt's or exception's entry from the interrupted context (x86: asm_*). */
static bool irq_entry_frame(const struct pipeline *p, uint32_t tok)
{
	return (tok & WP_FRAME_KERNEL) &&
	       !strncmp(wp_analysis_frame_name(p->an, tok), "asm_", 4);
}

/* The format of the tracepoint event id's samples come from, or NULL. */
static const struct wp_trace_format *sample_format(const struct pipeline *p, uint64_t id)
{
	uint64_t config;

	if (!wp_u64map_get(&p->configs, id, &config))
		return NULL;
	for (unsigned int i = 0; i < p->nr_formats; i++)
		if (p->formats[i].id == config)
			return &p->formats[i];
	return NULL;
}

/*
 * sched:sched_waking, in the waker's context: the woken thread from its
 * raw data, the waker from the sample, unless the flags say the kernel
 * was in interrupt context (then whoever ran was not the waker, and its
 * user stack means nothing).
 */
static int deliver_wakeup(struct pipeline *p, const struct perf_event_header *rec,
			  const struct wp_sample *s, uint64_t time)
{
	const struct wp_trace_format *f = sample_format(p, s->id);
	struct wp_waker w = { .pid = s->pid, .tid = s->tid, .kind = WP_WAKER_THREAD };
	int64_t wakee, flags = 0;
	bool irq;
	unsigned int n;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "pid"), s->raw, s->raw_size, &wakee) ||
	    wakee <= 0)
		return 0;
	wp_trace_field_int(wp_trace_field(f, "common_flags"), s->raw, s->raw_size, &flags);
	irq = flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI);
	n = sample_frames(p, rec, s, !irq);
	if (irq) {
		w.kind = WP_WAKER_INTERRUPT;
		for (unsigned int i = 0; i < n; i++) {
			if (timer_frame(p, p->tokens[i]))
				w.kind = WP_WAKER_TIMER;
			/* Below the interrupt's entry is only what it interrupted. */
			if (irq_entry_frame(p, p->tokens[i])) {
				n = i + 1;
				break;
			}
		}
		w.pid = w.tid = 0;
	} else if (!s->tid) {
		w.kind = WP_WAKER_IDLE;
	}
	if (!n)
		p->tokens[n++] = p->no_stack_marker;
	w.stack = wp_stacks_intern(p->an->stacks, p->tokens, n);
	if (w.stack == UINT32_MAX)
		return -ENOMEM;
	return wp_account_wakeup(p->an->account, (uint32_t)wakee, time, &w);
}

/* sched:sched_wakeup: the woken thread, from its raw data, is on a run queue. */
static int deliver_enqueued(struct pipeline *p, const struct wp_sample *s, uint64_t time)
{
	const struct wp_trace_format *f = sample_format(p, s->id);
	int64_t wakee;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "pid"), s->raw, s->raw_size, &wakee) ||
	    wakee <= 0)
		return 0;
	return wp_account_enqueued(p->an->account, (uint32_t)wakee, time);
}

/* sched:sched_switch: the sample's thread leaves the CPU to next_pid. */
static int deliver_sched_switch(struct pipeline *p, const struct wp_sample *s, uint64_t time)
{
	const struct wp_trace_format *f = sample_format(p, s->id);
	int64_t next;

	if (!f || !wp_trace_field_int(wp_trace_field(f, "next_pid"), s->raw, s->raw_size, &next) ||
	    next < 0 || next > UINT32_MAX)
		return 0;
	return wp_account_sched_switch(p->an->account, s->tid, (uint32_t)next, time, s->cpu);
}

static int deliver_sample(struct pipeline *p, const struct perf_event_header *rec,
			  const struct wp_sample *s, uint64_t time)
{
	enum wp_event_role role = sample_role(p, s->id);
	uint32_t stack;
	unsigned int n;
	int err;

	if (role == WP_EVENT_WAKEUP)
		return deliver_wakeup(p, rec, s, time);
	if (role == WP_EVENT_ENQUEUED)
		return deliver_enqueued(p, s, time);
	if (role == WP_EVENT_WAKEUP_NEW)
		return 0;	/* the FORK tells as much */
	if (role == WP_EVENT_SCHED_SWITCH)
		return deliver_sched_switch(p, s, time);
	/* The idle task (-a): its CPU was idle; nothing to unwind. */
	if (!s->tid && role == WP_EVENT_ONCPU)
		return wp_account_sample_cpu(p->an->account, 0, s->cpu);
	n = sample_frames(p, rec, s, true);
	/* No call graph (-g none) or nothing unwound: the sampled address. */
	if (!n && (p->fmt.sample_type & PERF_SAMPLE_IP) && s->ip) {
		if (wp_sample_in_kernel(rec)) {
			if (!p->opts->no_kernel)
				p->tokens[n++] = wp_symbols_kernel(p->symbols, s->ip);
		} else if (!p->opts->no_user) {
			n = wp_symbols_user(p->symbols, wp_procmap_process(p->pm, s->pid), s->ip, true,
					    p->tokens, MAX_STACK_TOKENS);
		}
	}
	if (!n)
		p->tokens[n++] = p->no_stack_marker;
	count_frames(p, n);
	stack = wp_stacks_intern(p->an->stacks, p->tokens, n);
	if (stack == UINT32_MAX)
		return -ENOMEM;
	err = wp_account_sample(p->an->account, s->pid, s->tid, time,
				role == WP_EVENT_SWITCH_OUT, stack);
	if (!err && role == WP_EVENT_ONCPU)
		err = wp_account_sample_cpu(p->an->account, s->tid, s->cpu);
	return err;
}

/* A tracepoint's format, as the recording's kernel described it. */
static int note_format(struct pipeline *p, const struct perf_event_header *rec)
{
	const char *t;
	char *text;
	size_t len;

	if (wp_text_parse(rec, &t, &len) || p->nr_formats == ARRAY_SIZE(p->formats))
		return 0;
	text = strndup(t, len);
	if (!text)
		return -ENOMEM;
	if (!wp_trace_format_parse(text, &p->formats[p->nr_formats]))
		p->nr_formats++;
	free(text);
	return 0;
}

static void show_progress(struct pipeline *p)
{
	uint64_t off = wp_reader_block_offset(p->an->reader);

	if (!p->opts->progress || off < p->next_progress || !p->file_size)
		return;
	p->next_progress = off + p->progress_step;
	fprintf(stderr, "\rwallprof: reading %3.0f%%", 100.0 * (double)off / (double)p->file_size);
	fflush(stderr);
}

/* A record in time order; a sample comes parsed (NULL when malformed). */
static int deliver(const struct perf_event_header *rec, const struct wp_sample *s,
		   uint64_t time, void *arg)
{
	struct pipeline *p = arg;
	int err;

	if (time > p->last_time)
		p->last_time = time;
	p->an->records++;
	if (!wp_coverage_keep(p->coverage, rec, s, time))
		return 0;	/* the same thing, seen by two sets of events */
	if (rec->type == WP_RECORD_TRACE_FORMAT)
		return note_format(p, rec);
	err = wp_procmap_record(p->pm, rec);
	if (err)
		return err;
	if (rec->type == PERF_RECORD_SAMPLE)
		return s ? deliver_sample(p, rec, s, time) : 0;
	return wp_account_record(p->an->account, rec, time);
}

/* Was the recording made on this machine's running kernel, in this boot? */
static bool same_kernel(const struct wp_meta *m)
{
	char host[256] = "", boot[40] = "";
	struct utsname u;

	if (uname(&u) || gethostname(host, sizeof(host) - 1))
		return false;
	if (strcmp(u.release, m->os_release) || strcmp(host, m->hostname))
		return false;
	/* Kernel addresses change at every boot (KASLR). */
	if (m->boot_id[0] &&
	    !wp_read_text_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot))) {
		boot[strcspn(boot, "\n")] = '\0';
		return !strcmp(boot, m->boot_id);
	}
	return true;
}

/*
 * The unwinder for the file's DWARF stacks, or none (and a warning) when
 * they were recorded on a machine whose registers this build cannot map.
 */
static int unwinder_for(struct pipeline *p, const struct wp_reader *r, struct wp_unwinder **out)
{
	const struct wp_meta *m = wp_reader_meta(r);
	const char *host = wp_arch_host_machine();
	const char *rec = m->machine[0] ? m->machine : host;
	const struct wp_arch *arch = wp_arch_find(rec);

	*out = NULL;
	if (!(m->sample_type & PERF_SAMPLE_STACK_USER))
		return 0;
	if (!arch || strcmp(rec, host)) {
		char what[WP_QUOTE_SIZE(64)];

		wp_warn("the stacks were recorded on %s; wallprof unwinds DWARF stacks only "
			"on the machine kind they were recorded on, and only on %s: user frames "
			"are left out", wp_quote(what, sizeof(what), rec, WP_QUOTE_TEXT),
			wp_arch_supported());
		return 0;
	}
	return wp_unwinder_new(p->pm, arch, out);
}

static int pipeline_init(struct pipeline *p, struct wp_analysis *an,
			 const struct wp_analysis_opts *opts)
{
	const struct wp_meta *m = an->meta;
	struct wp_account_opts ao = { .min_block_ns = opts->min_block_ns,
				      .observer = opts->observer };
	uint32_t frame;
	int err;

	p->an = an;
	p->opts = opts;
	wp_sample_format_init(&p->fmt, m->sample_type, m->regs_mask);
	for (uint32_t e = 0; e < m->nr_events; e++)
		for (uint32_t i = 0; i < m->events[e].nr_ids; i++)
			if (wp_u64map_put(&p->roles, m->events[e].ids[i], m->events[e].role) ||
			    wp_u64map_put(&p->configs, m->events[e].ids[i], m->events[e].attr.config))
				return -ENOMEM;
	err = wp_strpool_new(&an->names);
	if (!err)
		err = wp_stacks_new(&an->stacks);
	/* Some DWARF lookups more per address symbolized: only when wanted. */
	if (!err && opts->frame_info)
		err = wp_frameinfo_new(&an->frames);
	if (!err)
		err = wp_procmap_new(same_kernel(m), &p->pm);
	if (!err)
		err = unwinder_for(p, an->reader, &p->unwinder);
	if (!err)
		err = wp_coverage_new(&p->fmt, &p->coverage);
	if (!err) {
		size_t len;

		/* A damaged KSYMS block only costs the kernel names. */
		if (wp_reader_ksyms(an->reader, &p->ksyms_text, &len) == -EBADMSG)
			wp_warn("the saved kernel symbols are damaged; kernel frames may be shown as addresses");
		err = wp_symbols_new(p->pm, an->names, opts->lines, same_kernel(m),
				     p->ksyms_text, &p->symbols);
	}
	if (!err) {
		char *text;
		size_t len;
		int ret = wp_reader_jitmap(an->reader, &text, &len);

		if (!ret && text)
			ret = wp_jitmap_parse(&p->jit, text, len);
		free(text);
		/* A damaged JITMAP block only costs the JIT names. */
		if (ret == -EBADMSG)
			wp_warn("the saved JIT names are damaged; JIT code may be shown as addresses");
		else
			err = ret;
		wp_symbols_use_jitmap(p->symbols, &p->jit);
	}
	if (err)
		return err;
	if (an->frames)
		wp_symbols_set_frameinfo(p->symbols, an->frames);
	/* Names kept from earlier reports; without a cache, only slower. */
	if (!opts->no_cache) {
		int dir = wp_symcache_dir_open();

		if (dir >= 0)
			wp_symbols_use_cache(p->symbols, dir);
	}
	p->truncated_marker = wp_symbols_marker(p->symbols, "[truncated]");
	p->no_stack_marker = wp_symbols_marker(p->symbols, "[no stack]");
	/* Without the cache everything still works, only slower. */
	wp_ucache_new(UCACHE_SLOTS, UCACHE_TOKENS, &p->ucache);
	frame = wp_symbols_marker(p->symbols, "[unsampled]");
	ao.unsampled_stack = wp_stacks_intern(an->stacks, &frame, 1);
	frame = wp_symbols_marker(p->symbols, "[off-cpu: not sampled]");
	ao.unsampled_switch_stack = wp_stacks_intern(an->stacks, &frame, 1);
	ao.switch_stacks_sampled = wp_meta_switch_stack_rate(m) != 0;
	frame = wp_symbols_marker(p->symbols, m->flags & WP_META_OFFCPU_STACKS ?
				  "[no stack]" : "[off-cpu: stacks not recorded]");
	ao.unknown_stack = wp_stacks_intern(an->stacks, &frame, 1);
	an->window_start = an->start_ns;
	an->window_end = 0;
	if (opts->has_window) {
		ao.window_start = an->start_ns + (uint64_t)(opts->window_start_s * 1e9);
		ao.window_end = an->start_ns + (uint64_t)(opts->window_end_s * 1e9);
		an->window_start = ao.window_start;
		an->window_end = ao.window_end;
		an->has_window = true;
	}
	/* Files of older versions could have neither. */
	if (!(m->flags & WP_META_SWITCHES) && !m->sample_period_ns)
		wp_warn("the recording has no switch records and its samples do not count time: "
			"on-CPU time cannot be told, and shows as 0");
	return wp_account_new(m, &ao, &an->account);
}

static void pipeline_release(struct pipeline *p)
{
	wp_ucache_free(p->ucache);
	free(p->ksyms_text);
	wp_symbols_free(p->symbols);
	wp_jitmap_release(&p->jit);
	wp_unwinder_free(p->unwinder);
	wp_coverage_free(p->coverage);
	wp_u64map_release(&p->roles);
	wp_u64map_release(&p->configs);
	wp_u64map_release(&p->unnamed_at);
	wp_procmap_free(p->pm);
}

int wp_analysis_run(const char *path, const struct wp_analysis_opts *opts,
		    struct wp_analysis *an)
{
	const struct perf_event_header *rec;
	struct pipeline *p;
	struct wp_order *order = NULL;
	struct stat st;
	uint64_t end;
	int err, ret;

	memset(an, 0, sizeof(*an));
	an->path = path;
	an->opts = *opts;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = wp_reader_open(path, &an->reader);
	if (err)
		goto out;
	an->meta = wp_reader_meta(an->reader);
	an->start_ns = an->meta->start_clock_ns;
	err = pipeline_init(p, an, opts);
	if (!err)
		err = wp_order_new(&p->fmt, deliver, p, (wp_order_release_fn)wp_block_put, &order);
	if (err)
		goto out;
	/* A record dated past the summary's end (or 2^63 ns) was damaged. */
	end = wp_reader_end_ns(an->reader);
	wp_order_set_span(order, an->start_ns, end ? end : INT64_MAX);
	if (!stat(path, &st)) {
		p->file_size = (uint64_t)st.st_size;
		p->progress_step = p->file_size / 100 + 1;
		p->next_progress = 4 << 20;	/* quiet for small files */
	}
	p->last_time = an->start_ns;
	while ((ret = wp_reader_next(an->reader, &rec)) > 0) {
		struct wp_block_ref *hold = NULL;

		/* Rounds are not queued: they need no reference on the block. */
		if (rec->type != WP_RECORD_ROUND)
			hold = wp_reader_block_get(an->reader);
		err = wp_order_push(order, rec, hold, wp_block_bytes(hold));
		if (err)
			goto out;
		show_progress(p);
	}
	/* No memory for a block is no damage: say so, with nothing reported. */
	if (ret == -ENOMEM) {
		err = ret;
		goto out;
	}
	if (ret < 0)
		an->damaged = true;
	err = wp_order_flush(order);
	if (err)
		goto out;
	if (p->opts->progress && p->next_progress > (4U << 20))
		fputs("\r\033[K", stderr);
	an->out_of_order = wp_order_late(order);
	if (wp_order_early(order))
		wp_debug("%" PRIu64 " records left the time-ordering queue before their round: "
			 "it reached its bound of %zu MiB", wp_order_early(order),
			 WP_ORDER_BOUND >> 20);
	an->impossible_times = wp_order_impossible(order);
	if (an->impossible_times) {
		char q[WP_QUOTE_MSG];

		wp_warn("'%s': %" PRIu64 " records are dated outside the recording (damaged "
			"times); they count at its start or end",
			wp_quote(q, sizeof(q), path, WP_QUOTE_TEXT), an->impossible_times);
	}
	if (wp_reader_summary(an->reader)) {
		an->summary = *wp_reader_summary(an->reader);
		an->complete = true;
		an->end_ns = an->summary.end_clock_ns;
		/*
		 * Cut short by a write error: what came after its last record
		 * was lost, so the figures end there, as for a file without a
		 * summary.
		 */
		if (an->summary.cut_short_errno) {
			char q[WP_QUOTE_MSG];

			an->end_ns = p->last_time;
			wp_warn("'%s' was cut short at %.3f s by a write error (%s); "
				"figures end at its last record",
				wp_quote(q, sizeof(q), path, WP_QUOTE_TEXT),
				(double)(an->summary.end_clock_ns - an->start_ns) / 1e9,
				strerror((int)an->summary.cut_short_errno));
		}
	} else {
		an->end_ns = p->last_time;
		if (!an->damaged)
			wp_warn("'%s' has no summary: the recording did not finish; "
				"figures end at its last record", wp_quoted(path));
	}
	if (!an->window_end || an->window_end > an->end_ns)
		an->window_end = an->end_ns;
	wp_account_finish(an->account, an->end_ns);
	wp_symbols_save_cache(p->symbols);
	explain_unnamed(p);
	an->quality.changed_files = wp_procmap_mismatches(p->pm);
	an->quality.missing_files = wp_procmap_missing(p->pm);
	an->quality.jit_live_maps = wp_symbols_jit_live(p->symbols);
out:
	wp_order_free(order);
	pipeline_release(p);
	free(p);
	if (err) {
		if (err == -ENOMEM)
			wp_error("out of memory reading '%s'", wp_quoted(path));
		wp_analysis_release(an);
	}
	return err;
}

const char *wp_analysis_frame_name(const struct wp_analysis *an, uint32_t token)
{
	return wp_strpool_get(an->names, WP_FRAME_NAME(token));
}

const struct wp_cpu_time *wp_analysis_cpus(const struct wp_analysis *an, size_t *n,
					   struct wp_cpu_time *sum, uint64_t *span_ns)
{
	const struct wp_cpu_time *c = wp_account_cpus(an->account, n);

	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < *n; i++) {
		sum->idle_ns += c[i].idle_ns;
		sum->busy_ns += c[i].busy_ns;
		sum->unseen_ns += c[i].unseen_ns;
	}
	*span_ns = (an->window_end ? an->window_end : an->end_ns) -
		   (an->window_start ? an->window_start : an->start_ns);
	return *n ? c : NULL;
}

void wp_analysis_release(struct wp_analysis *an)
{
	wp_account_free(an->account);
	wp_stacks_free(an->stacks);
	wp_strpool_free(an->names);
	wp_frameinfo_free(an->frames);
	wp_reader_close(an->reader);
	memset(an, 0, sizeof(*an));
}
