/* SPDX-License-Identifier: GPL-2.0-or-later */
/* analysis.c: reader -> order -> maps -> unwind -> symbols -> accounting. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis.h"
#include "arch.h"
#include "buildid.h"
#include "coverage.h"
#include "deferred.h"
#include "debuginfo.h"
#include "fdlimit.h"
#include "jitmap.h"
#include "pkgowner.h"
#include "placenames.h"
#include "u64map.h"
#include "log.h"
#include "order.h"
#include "procmap.h"
#include "quote.h"
#include "samplekind.h"
#include "samplestack.h"
#include "stacks.h"
#include "stacktable.h"
#include "symbols.h"
#include "symcache.h"
#include "tasknames.h"
#include "ucache.h"
#include "util.h"

#define MAX_STACK_TOKENS 512

/*
 * A user stack is named in full before a sample's budget cuts it, but one
 * longer than any budget shows the same under every budget: a token more
 * than the largest budget is enough to tell.
 */
#define USER_TOKENS (MAX_STACK_TOKENS + 1)

struct pipeline {
	struct wp_analysis *an;
	const struct wp_arch *arch;	/* the recorded machine's, or NULL */
	const struct wp_analysis_opts *opts;
	struct wp_account_observer keeper;	/* keep_timeline: into an->kept */
	struct wp_sample_format fmt;
	struct wp_procmap *pm;
	struct wp_resolver *resolver;	/* samples' stacks as places */
	struct wp_stacktable *table;	/* the file's stacks already unwound */
	struct wp_placenames *names;	/* the names saved with them, or NULL */
	struct wp_u64map saved_at;	/* place -> its tokens in saved, from names */
	uint32_t *saved;
	size_t nr_saved, cap_saved;
	struct wp_placename_frame frames[WP_PLACENAMES_MAX_FRAMES];
	struct wp_symbols *symbols;
	struct wp_coverage *coverage;
	struct wp_u64map unnamed_at;	/* where unnamed frames were -> how many */
	uint32_t no_stack_marker;
	struct wp_sample_kinds kinds;
	uint32_t truncated_marker;
	uint32_t unreadable_marker;
	uint64_t last_time;
	struct wp_sample_stack sstack;	/* the stack of the sample being delivered */
	struct wp_deferred *held;	/* deliveries waiting for debug files */
	struct wp_sample_stack held_stack;	/* the stack of one taken from there */
	uint64_t nr_held;		/* deliveries that were held */
	uint32_t tokens[MAX_STACK_TOKENS];
	uint32_t user_tokens[USER_TOKENS];	/* one user stack, before the budget */
	uint64_t bad_stacks;		/* stack samples naming no stack of the table */
	uint64_t file_size, progress_step, next_progress;
	char *ksyms_text;	/* the recording's saved kernel symbols, or NULL */
	struct wp_jitmap jit;	/* the recording's names of JIT code */
};

/*
 * The n frames saved for a file's place (in p->frames) as tokens in
 * chain, or the file's own names when they are better: the saved ones are
 * a cache, made with what was installed where it was recorded.  A place
 * saved without a function name or a source line, in a file whose
 * separate debug file was installed since the recording began, is named
 * from the files, and their names taken unless they name less.
 */
static unsigned int saved_or_fresh(struct pipeline *p, const struct wp_place *pl, unsigned int n,
				   uint32_t *chain)
{
	uint32_t fresh[WP_PLACENAMES_MAX_FRAMES];
	bool lined = false;
	unsigned int k;

	for (unsigned int i = 0; i < n; i++)
		lined |= p->frames[i].where != NULL;
	if ((lined && !(p->frames[0].flags & WP_PLACENAME_UNNAMED)) ||
	    !wp_symbols_debug_file_since(p->symbols, pl->where, p->an->meta->start_realtime_ns))
		return wp_symbols_place_saved(p->symbols, pl, p->frames, n, chain,
					      WP_PLACENAMES_MAX_FRAMES);
	k = wp_symbols_place(p->symbols, pl, fresh, WP_PLACENAMES_MAX_FRAMES);
	if (k && (!(fresh[0] & WP_FRAME_UNNAMED) || (p->frames[0].flags & WP_PLACENAME_UNNAMED))) {
		memcpy(chain, fresh, k * sizeof(*fresh));
		return k;
	}
	return wp_symbols_place_saved(p->symbols, pl, p->frames, n, chain,
				      WP_PLACENAMES_MAX_FRAMES);
}

/*
 * The frames of place id (pl): from the names saved in the file when it
 * has them for the place, without reading any file, else from the files.
 */
static unsigned int name_place(struct pipeline *p, uint32_t id, const struct wp_place *pl,
			       uint32_t *out, unsigned int max)
{
	uint32_t chain[WP_PLACENAMES_MAX_FRAMES];
	const uint32_t *tokens = chain;
	unsigned int n;
	uint64_t at;

	if (!p->names || pl->kind != WP_PLACE_FILE)
		return wp_symbols_place(p->symbols, pl, out, max);
	if (wp_u64map_get(&p->saved_at, id, &at)) {
		tokens = p->saved + (at >> 32);
		n = (uint32_t)at;
	} else {
		if (!wp_stacktable_names(p->table, id, p->frames, WP_PLACENAMES_MAX_FRAMES, &n))
			return wp_symbols_place(p->symbols, pl, out, max);
		n = saved_or_fresh(p, pl, n, chain);
		/* Kept, to be made once: without memory, made again next time. */
		at = p->nr_saved;
		if (at + n <= UINT32_MAX && !WP_GROW(p->saved, p->cap_saved, at + n) &&
		    !wp_u64map_put(&p->saved_at, id, at << 32 | n)) {
			memcpy(p->saved + at, chain, n * sizeof(*chain));
			p->nr_saved += n;
		}
	}
	if (n > max)
		n = max;
	memcpy(out, tokens, n * sizeof(*out));
	return n;
}

/* The frames of a place; an id the resolver does not know (no memory) has none. */
static unsigned int place_frames(struct pipeline *p, uint32_t id, uint32_t *out, unsigned int max)
{
	struct wp_place pl;

	if (!wp_resolver_place(p->resolver, id, &pl))
		return 0;
	return name_place(p, id, &pl, out, max);
}

/*
 * Name the user stack of ss into tokens[n..]; returns the new n.  The
 * whole stack goes through the same budget and the same counters.
 */
static unsigned int user_frames(struct pipeline *p, const struct wp_sample_stack *ss,
				unsigned int n)
{
	struct wp_quality *q = &p->an->quality;
	struct wp_ucache_stack st = { .tokens = p->user_tokens };
	bool cut;

	q->samples++;
	if (ss->flags & WP_SSTACK_FAILED) {
		q->unwind_failed++;
		return n;
	}
	for (unsigned int i = 0; i < ss->nr_user && st.len < USER_TOKENS; i++)
		st.len += place_frames(p, ss->user[i], p->user_tokens + st.len,
				       USER_TOKENS - st.len);
	st.truncated = ss->flags & WP_SSTACK_TRUNCATED;
	st.unreadable = ss->flags & WP_SSTACK_UNREADABLE;
	st.too_deep = ss->flags & WP_SSTACK_TOO_DEEP;
	st.needed = ss->needed;
	/*
	 * A copy the kernel cut short at a page it could not read (the
	 * sample came in a page fault on the stack) is no matter of the
	 * copy's size: its own marker, and no advice to copy more.
	 */
	n += wp_ucache_emit(&st, st.unreadable && !st.too_deep ? p->unreadable_marker :
			    p->truncated_marker, p->tokens + n, MAX_STACK_TOKENS - n, &cut);
	/* Frames left out for want of room: deeper than shown, as at the frame limit. */
	if (st.too_deep || cut)
		q->too_deep++;
	if (st.unreadable)
		q->unreadable++;
	else if (st.truncated) {
		q->truncated++;
		if (st.needed > q->truncated_needed)
			q->truncated_needed = st.needed;
		if (st.needed && st.needed <= WP_STACK_COPY_MAX)
			q->truncated_in_reach++;
	}
	return n;
}

/* A kernel frame of the tracing machinery (symbols.h). */
static bool tracing_frame(const struct pipeline *p, uint32_t tok)
{
	return (tok & WP_FRAME_KERNEL) && wp_symbols_tracing_name(wp_analysis_frame_name(p->an, tok));
}

/*
 * Frames of a sample's stack, innermost first: kernel, then user.  A
 * stack a tracepoint took (by_tracepoint: switch-outs, wakers) starts at
 * the traced code, as perf starts its own at its probe's caller: with a
 * second tracer on the tracepoint, that caller is the tracepoint's
 * iterator, whose frames (and any other tracer's) are left out.
 */
static unsigned int stack_frames(struct pipeline *p, const struct wp_sample_stack *ss,
				 bool by_tracepoint)
{
	unsigned int n = 0, k;

	for (unsigned int i = 0; i < ss->nr_chain && n < MAX_STACK_TOKENS; i++) {
		struct wp_place pl;

		if (!wp_resolver_place(p->resolver, ss->chain[i], &pl))
			continue;
		if (pl.kind == WP_PLACE_KERNEL ? p->opts->no_kernel : p->opts->no_user)
			continue;
		k = name_place(p, ss->chain[i], &pl, p->tokens + n, MAX_STACK_TOKENS - n);
		if (by_tracepoint && !n && k == 1 && tracing_frame(p, p->tokens[0]))
			continue;
		by_tracepoint = false;
		n += k;
	}
	if (!(ss->flags & WP_SSTACK_UNWOUND) || p->opts->no_user)
		return n;
	return user_frames(p, ss, n);
}

/* Frames of a sample, named and not (markers are not frames). */
static void count_frames(struct pipeline *p, unsigned int n)
{
	struct wp_quality *q = &p->an->quality;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t tok = p->tokens[i];
		uint64_t where, count = 0;

		if (tok == p->truncated_marker || tok == p->unreadable_marker ||
		    tok == p->no_stack_marker)
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
	size_t len;

	f->debug_file[0] = '\0';
	if (!dso)
		return;
	len = wp_procmap_dso_build_id(p->pm, dso, id, sizeof(id));
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
			/* Places named where recorded: their file was read there. */
			f->reason = dso->usable || (p->table &&
						    wp_stacktable_named_file(p->table, (uint32_t)where)) ?
				    WP_UNNAMED_NO_SYMBOLS : WP_UNNAMED_MISSING;
			/* Not for want of symbols, nor missing: for want of descriptors. */
			if (dso->starved)
				f->reason = WP_UNNAMED_NO_FDS;
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

/* Frame i of the stack in p->tokens, for wp_waker_classify. */
static const char *token_frame(unsigned int i, bool *kernel, void *arg)
{
	const struct pipeline *p = arg;

	*kernel = p->tokens[i] & WP_FRAME_KERNEL;
	return wp_analysis_frame_name(p->an, p->tokens[i]);
}

/*
 * sched_waking, in the waker's context: the woken thread wakee; the waker
 * is the sample's thread unless the kernel was in interrupt context
 * (context, WP_WAKE_* bits: then whoever ran was not the waker, and its
 * user stack means nothing, so ss has none), but for a thread's own send
 * delivered in its system call (wp_waker_classify).  A softirq's wake-up
 * names its softirq by the handler on its stack, above the interrupt's
 * entry (a hard interrupt runs the pending softirqs as it returns).
 */
static int deliver_wakeup(struct pipeline *p, uint32_t pid, uint32_t tid, uint32_t wakee,
			  uint8_t context, uint64_t time, const struct wp_sample_stack *ss)
{
	struct wp_waker w = { .pid = pid, .tid = tid, .context = context };
	struct wp_waker_class c;
	unsigned int n;

	n = stack_frames(p, ss, true);
	wp_waker_classify(p->arch, context, tid, n, token_frame, p, &c);
	w.kind = c.kind;
	w.softirq = c.softirq;
	n = c.nr_frames;
	if (c.kind == WP_WAKER_INTERRUPT || c.kind == WP_WAKER_TIMER)
		w.pid = w.tid = 0;
	if (!n)
		p->tokens[n++] = p->no_stack_marker;
	w.stack = wp_stacks_intern(p->an->stacks, p->tokens, n);
	if (w.stack == UINT32_MAX)
		return -ENOMEM;
	return wp_account_wakeup(p->an->account, wakee, time, &w);
}

/* An on-CPU or switch-out sample of thread tid, whose stack is ss. */
static int deliver_stack(struct pipeline *p, enum wp_event_role role, uint32_t pid, uint32_t tid,
			 uint32_t cpu, uint64_t time, const struct wp_sample_stack *ss)
{
	uint32_t stack;
	unsigned int n;

	n = stack_frames(p, ss, role != WP_EVENT_ONCPU);
	/* No call graph (-g none) or nothing unwound: the sampled address. */
	if (!n && ss->ip != WP_NO_PLACE) {
		struct wp_place pl;

		if (wp_resolver_place(p->resolver, ss->ip, &pl) &&
		    !(pl.kind == WP_PLACE_KERNEL ? p->opts->no_kernel : p->opts->no_user))
			n = name_place(p, ss->ip, &pl, p->tokens, MAX_STACK_TOKENS);
	}
	if (!n)
		p->tokens[n++] = p->no_stack_marker;
	count_frames(p, n);
	stack = wp_stacks_intern(p->an->stacks, p->tokens, n);
	if (stack == UINT32_MAX)
		return -ENOMEM;
	return wp_account_sample(p->an->account, pid, tid, cpu, time, role == WP_EVENT_SWITCH_OUT,
				 stack);
}

/*
 * Deliveries are held while debug files started ahead are decompressing,
 * up to this many bytes of them (their stacks as places: some hundred
 * thousand samples); beyond, the report waits for the files.
 */
#define HELD_MAX ((size_t)64 << 20)

/* Give the ledger one delivery, held or not. */
static int account_item(struct pipeline *p, const struct wp_deferred_item *it,
			const struct wp_sample_stack *ss, const struct perf_event_header *rec)
{
	switch (it->kind) {
	case WP_DEFER_STACK:
		return deliver_stack(p, it->role, it->pid, it->tid, it->cpu, it->time, ss);
	case WP_DEFER_WAKEUP:
		return deliver_wakeup(p, it->pid, it->tid, it->other, it->context, it->time, ss);
	case WP_DEFER_ENQUEUED:
		/* (A new thread is not blocked: its enqueue changes nothing of it.) */
		if (it->here)
			wp_account_counted(p->an->account, it->tid, it->time);
		return wp_account_enqueued(p->an->account, it->other, it->time);
	case WP_DEFER_SCHED_SWITCH:
		return wp_account_sched_switch(p->an->account, it->tid, it->other, it->time,
					       it->cpu);
	case WP_DEFER_CPU:
		return wp_account_sample(p->an->account, 0, 0, it->cpu, it->time, false, UINT32_MAX);
	case WP_DEFER_RECORD:
		return wp_account_record(p->an->account, rec, it->time);
	}
	return 0;
}

/* Account every delivery held, in order (naming their stacks may wait). */
static int release_held(struct pipeline *p)
{
	struct wp_deferred_item it;
	const struct perf_event_header *rec;
	int err = 0;

	while (!err && wp_deferred_pop(p->held, &it, &p->held_stack, &rec))
		err = account_item(p, &it, &p->held_stack, rec);
	return err;
}

/*
 * Account a delivery now, or hold it while debug files decompress: the
 * pipeline goes on unwinding meanwhile.  Once they are ready, what was
 * held goes first.
 */
static int account(struct pipeline *p, const struct wp_deferred_item *it,
		   const struct wp_sample_stack *ss, const struct perf_event_header *rec)
{
	if (p->held && wp_symbols_loading(p->symbols) &&
	    wp_deferred_bytes(p->held) < HELD_MAX) {
		p->nr_held++;
		return wp_deferred_push(p->held, it, ss, rec);
	}
	if (p->held && !wp_deferred_empty(p->held)) {
		int err = release_held(p);

		if (err)
			return err;
	}
	return account_item(p, it, ss, rec);
}

static int deliver_sample(struct pipeline *p, const struct perf_event_header *rec,
			  const struct wp_sample *s, uint64_t time)
{
	enum wp_event_role role = wp_sample_kinds_role(&p->kinds, s->id);
	struct wp_deferred_item it = { .role = role, .pid = s->pid, .tid = s->tid,
				       .cpu = s->cpu, .time = time };
	uint32_t tid;
	uint8_t context;

	if (!wp_sample_kinds_known(&p->kinds, s->id)) {
		p->an->quality.unknown_samples++;
		return 0;
	}
	if (role == WP_EVENT_WAKEUP) {
		if (!wp_sample_kinds_waking(&p->kinds, s, &tid, &context))
			return 0;
		wp_resolver_sample(p->resolver, rec, s, !context, &p->sstack);
		it.kind = WP_DEFER_WAKEUP;
		it.other = tid;
		it.context = context;
		return account(p, &it, &p->sstack, NULL);
	}
	/*
	 * sched:sched_wakeup(_new): the woken (or new) thread is on a run
	 * queue, and when it is this CPU's, the kernel counted the running
	 * thread's time up to now; sched:sched_switch: the sample's thread
	 * leaves the CPU to the next.
	 */
	if (role == WP_EVENT_ENQUEUED || role == WP_EVENT_WAKEUP_NEW ||
	    role == WP_EVENT_SCHED_SWITCH) {
		bool enqueued = role != WP_EVENT_SCHED_SWITCH;

		if (!(enqueued ? wp_sample_kinds_woken(&p->kinds, s, &tid) :
				 wp_sample_kinds_next(&p->kinds, s, &tid)))
			return 0;
		it.kind = enqueued ? WP_DEFER_ENQUEUED : WP_DEFER_SCHED_SWITCH;
		it.other = tid;
		/*
		 * A fork onto its own CPU: the parent's time was counted then.
		 * (A wake-up too, but a thread wakes its joiner on its exit
		 * path, after taskstats took its figure: not those.)
		 */
		it.here = role == WP_EVENT_WAKEUP_NEW && wp_sample_kinds_enqueued_here(&p->kinds, s);
		return account(p, &it, NULL, NULL);
	}
	/* The idle task (-a): its CPU was idle; nothing to unwind. */
	if (!s->tid && role == WP_EVENT_ONCPU) {
		it.kind = WP_DEFER_CPU;
		return account(p, &it, NULL, NULL);
	}
	wp_resolver_sample(p->resolver, rec, s, true, &p->sstack);
	it.kind = WP_DEFER_STACK;
	return account(p, &it, &p->sstack, NULL);
}

/*
 * A sample made compact before (liveunwind.h): what the ledger reads of
 * it, and its stack from the file's stack table.
 */
static int deliver_stack_sample(struct pipeline *p, const struct perf_event_header *rec,
				uint64_t time)
{
	struct wp_stack_sample ss;
	enum wp_event_role role;

	if (wp_stack_sample_parse(rec, &ss))
		return 0;
	if (!wp_sample_kinds_known(&p->kinds, ss.id)) {
		p->an->quality.unknown_samples++;
		return 0;
	}
	role = wp_sample_kinds_role(&p->kinds, ss.id);
	switch (role) {
	case WP_EVENT_ENQUEUED:
	case WP_EVENT_WAKEUP_NEW:
		if (ss.flags & WP_STACK_SAMPLE_HERE)
			wp_account_counted(p->an->account, ss.tid, time);
		return ss.thread ? wp_account_enqueued(p->an->account, ss.thread, time) : 0;
	case WP_EVENT_SCHED_SWITCH:
		return wp_account_sched_switch(p->an->account, ss.tid, ss.thread, time, ss.cpu);
	case WP_EVENT_ONCPU:
		if (!ss.tid)
			return wp_account_sample(p->an->account, 0, 0, ss.cpu, time, false,
						 UINT32_MAX);
		break;
	default:
		break;
	}
	if (!p->table || !wp_stacktable_get(p->table, ss.stack, &p->sstack)) {
		/* A damaged file: the sample still counts, without its stack. */
		p->bad_stacks++;
		p->sstack.flags = 0;
		p->sstack.nr_chain = p->sstack.nr_user = 0;
		p->sstack.ip = WP_NO_PLACE;
	}
	if (role == WP_EVENT_WAKEUP)
		return deliver_wakeup(p, ss.pid, ss.tid, ss.thread, wp_wake_context_of_flags(ss.flags),
				      time, &p->sstack);
	return deliver_stack(p, role, ss.pid, ss.tid, ss.cpu, time, &p->sstack);
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

/* The files a block maps, by build id, each once (up to a bound). */
#define MAPPED_MAX 64
struct mapped {
	struct wp_symbols_id ids[MAPPED_MAX];
	size_t n;
	uint64_t inodes[MAPPED_MAX];	/* of those mapped without an id, read */
	size_t nr_inodes;
};

static void note_mapped(const struct perf_event_header *rec, void *arg)
{
	struct mapped *mp = arg;
	struct wp_symbols_id *to = &mp->ids[mp->n];
	struct wp_mmap2 m;

	if (rec->type != PERF_RECORD_MMAP2 || mp->n == MAPPED_MAX || wp_mmap2_parse(rec, &m))
		return;
	if (m.has_build_id) {
		if (m.build_id_size > sizeof(to->id))
			return;
		*to = (struct wp_symbols_id){ .len = m.build_id_size };
		memcpy(to->id, m.build_id, m.build_id_size);
	} else if (m.filename[0] == '/') {
		/* Found at attach time: the file tells, once per file. */
		uint64_t key = m.ino ^ ((uint64_t)m.maj << 52) ^ ((uint64_t)m.min << 40);

		for (size_t i = 0; i < mp->nr_inodes; i++)
			if (mp->inodes[i] == key)
				return;
		if (mp->nr_inodes == MAPPED_MAX)
			return;
		mp->inodes[mp->nr_inodes++] = key;
		*to = (struct wp_symbols_id){ .maj = m.maj, .min = m.min, .ino = m.ino };
		to->len = wp_procmap_file_build_id(m.filename, m.maj, m.min, m.ino, to->id,
						   sizeof(to->id));
		if (!to->len)
			return;
	} else {
		return;
	}
	for (size_t i = 0; i < mp->n; i++)
		if (mp->ids[i].len == to->len && !memcmp(mp->ids[i].id, to->id, to->len))
			return;
	mp->n++;
}

/*
 * The block rec starts: the debug files of the files it maps start
 * decompressing, all of them, as it is first read, not when their first
 * frame comes out of the queue, nor behind a sample waiting for an
 * earlier one.
 */
static void prefetch_debug_files(struct pipeline *p, const struct perf_event_header *rec)
{
	struct mapped *mp = calloc(1, sizeof(*mp));

	if (!mp)
		return;
	note_mapped(rec, mp);
	wp_reader_ahead(p->an->reader, note_mapped, mp);
	wp_symbols_prefetch(p->symbols, mp->ids, mp->n);
	free(mp);
}

/* A FORK record, kept (keep_timeline); without memory, forks stop being kept. */
static void keep_fork(struct wp_analysis *an, const struct perf_event_header *rec)
{
	struct wp_task_event te;

	if (wp_task_event_parse(rec, &te) || te.tid == te.ptid ||
	    WP_GROW(an->forks, an->cap_forks, an->nr_forks + 1))
		return;
	an->forks[an->nr_forks++] = (struct wp_kept_fork){ .time = te.time, .parent = te.ptid,
							   .child = te.tid };
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
		return wp_sample_kinds_format(&p->kinds, rec);
	if (rec->type == WP_RECORD_STACK_SAMPLE)
		return deliver_stack_sample(p, rec, time);
	if (rec->type == WP_RECORD_TASK_NAME)
		return wp_tasknames_record(p->an->tasknames, rec);
	err = wp_procmap_record(p->pm, rec);
	if (err)
		return err;
	if (rec->type == PERF_RECORD_FORK && p->opts->keep_timeline)
		keep_fork(p->an, rec);
	if (rec->type == PERF_RECORD_SAMPLE)
		return s ? deliver_sample(p, rec, s, time) : 0;
	return account(p, &(struct wp_deferred_item){ .kind = WP_DEFER_RECORD, .time = time },
		       NULL, rec);
}

/*
 * The names saved at the end of a live recording (placenames.h), when
 * the file has them: its places are then named without their files.
 */
static int load_names(struct pipeline *p)
{
	char *buf;
	size_t len;
	int err = wp_reader_names(p->an->reader, &buf, &len);

	if (!err && buf)
		err = wp_placenames_parse(buf, len, &p->names);
	free(buf);
	/* Damaged names cost only the time to name the places from the files. */
	if (err == -EBADMSG) {
		wp_warn("the saved names of '%s' are damaged; its frames are named from its files",
			wp_quoted(p->an->path));
		return 0;
	}
	if (!err && p->names) {
		wp_stacktable_use_names(p->table, p->names);
		wp_debug("%zu places have names saved in the file", wp_placenames_places(p->names));
	}
	return err;
}

/* Room for one more kept event; NULL when out of memory (then kept stops). */
static struct wp_kept_event *kept_next(struct wp_analysis *an)
{
	if (WP_GROW(an->kept, an->cap_kept, an->nr_kept + 1))
		return NULL;
	return &an->kept[an->nr_kept++];
}

struct wp_kept_event wp_kept_of_period(const struct wp_period *p)
{
	return (struct wp_kept_event){
		.start_ns = p->start_ns, .end_ns = p->end_ns, .serial = p->thread->serial,
		.stack = p->stack, .waker = p->waker_index, .cpu = p->cpu,
		.kind = (uint8_t)p->kind,
		.flags = (p->short_off ? WP_KEPT_SHORT_OFF : 0) |
			 (p->wakeup_unrecorded ? WP_KEPT_WAKEUP_UNRECORDED : 0) |
			 (p->waker_unrecorded ? WP_KEPT_WAKER_UNRECORDED : 0) |
			 (p->wakeup_dropped ? WP_KEPT_WAKEUP_DROPPED : 0),
	};
}

/* The ledger's observer, with keep_timeline: each period as it is counted. */
static void keep_period(void *arg, const struct wp_period *p)
{
	struct wp_kept_event *e = kept_next(arg);

	if (e)
		*e = wp_kept_of_period(p);
}

/* And each on-CPU sample it counts. */
static void keep_sample(void *arg, const struct wp_thread_times *t, uint64_t time,
			uint32_t stack)
{
	struct wp_kept_event *e = kept_next(arg);

	if (!e)
		return;
	*e = (struct wp_kept_event){
		.start_ns = time, .end_ns = time, .serial = t->serial, .stack = stack,
		.waker = UINT32_MAX, .cpu = UINT32_MAX, .kind = WP_KEPT_SAMPLE,
	};
}

static int pipeline_init(struct pipeline *p, struct wp_analysis *an,
			 const struct wp_analysis_opts *opts)
{
	const struct wp_meta *m = an->meta;
	struct wp_account_opts ao = { .min_block_ns = opts->min_block_ns };
	uint32_t frame;
	int err;

	p->an = an;
	p->arch = wp_arch_find(m->machine);
	p->opts = opts;
	wp_sample_format_init(&p->fmt, m->sample_type, m->regs_mask);
	err = wp_sample_kinds_init(&p->kinds, m);
	if (!err)
		err = wp_strpool_new(&an->names);
	if (!err)
		err = wp_stacks_new(&an->stacks);
	if (!err)
		err = wp_tasknames_new(&an->tasknames);
	/* Some DWARF lookups more per address symbolized: only when wanted. */
	if (!err && opts->frame_info)
		err = wp_frameinfo_new(&an->frames);
	if (!err)
		err = wp_procmap_new(wp_same_kernel(m), &p->pm);
	if (!err)
		err = wp_resolver_new(p->pm, m, &p->resolver);
	if (!err && (m->flags & WP_META_STACK_TABLE))
		err = wp_stacktable_new(p->pm, p->resolver, &p->table);
	if (!err && p->table)
		err = load_names(p);
	if (!err)
		err = wp_coverage_new(&p->fmt, &p->coverage);
	/* A stack table's places have their names: nothing to wait for. */
	if (!err && !p->table)
		err = wp_deferred_new(&p->held);
	if (!err) {
		size_t len;

		/* A damaged KSYMS block only costs the kernel names. */
		if (wp_reader_ksyms(an->reader, &p->ksyms_text, &len) == -EBADMSG)
			wp_warn("the saved kernel symbols are damaged; kernel frames may be shown as addresses");
		err = wp_symbols_new(p->pm, an->names, opts->lines, wp_same_kernel(m),
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
	p->unreadable_marker = wp_symbols_marker(p->symbols, "[stack unreadable]");
	p->no_stack_marker = wp_symbols_marker(p->symbols, "[no stack]");
	frame = wp_symbols_marker(p->symbols, "[unsampled]");
	ao.unsampled_stack = wp_stacks_intern(an->stacks, &frame, 1);
	frame = wp_symbols_marker(p->symbols, "[off-cpu: not sampled]");
	ao.unsampled_switch_stack = wp_stacks_intern(an->stacks, &frame, 1);
	an->unsampled_switch_stack = ao.unsampled_switch_stack;
	ao.switch_stacks_sampled = wp_meta_switch_stack_rate(m) != 0;
	frame = wp_symbols_marker(p->symbols, m->flags & WP_META_OFFCPU_STACKS ?
				  "[no stack]" : "[off-cpu: stacks not recorded]");
	ao.unknown_stack = wp_stacks_intern(an->stacks, &frame, 1);
	frame = wp_symbols_marker(p->symbols, "[waiting since before the recording]");
	ao.start_stack = wp_stacks_intern(an->stacks, &frame, 1);
	an->window_start = an->start_ns;
	an->window_end = 0;
	if (opts->has_window) {
		ao.window_start = an->start_ns + (uint64_t)(opts->window_start_s * 1e9);
		ao.window_end = an->start_ns + (uint64_t)(opts->window_end_s * 1e9);
		an->window_start = ao.window_start;
		an->window_end = ao.window_end;
		an->has_window = true;
	}
	if (opts->keep_timeline) {
		p->keeper = (struct wp_account_observer){ .period = keep_period,
							  .sample = keep_sample, .arg = an };
		ao.observer = &p->keeper;
	}
	/* Files of older versions could have neither. */
	if (!(m->flags & WP_META_SWITCHES) && !m->sample_period_ns)
		wp_warn("the recording has no switch records and its samples do not count time: "
			"on-CPU time cannot be told, and shows as 0");
	return wp_account_new(m, &ao, &an->account);
}

static void pipeline_release(struct pipeline *p)
{
	free(p->ksyms_text);
	wp_deferred_free(p->held);
	wp_symbols_free(p->symbols);
	wp_jitmap_release(&p->jit);
	wp_stacktable_free(p->table);
	wp_placenames_free(p->names);
	wp_u64map_release(&p->saved_at);
	free(p->saved);
	wp_resolver_free(p->resolver);
	wp_coverage_free(p->coverage);
	wp_sample_kinds_release(&p->kinds);
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
	uint64_t end, block = 0;
	bool block_seen = false;
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

		/*
		 * The stack table's definitions come before their first use
		 * in the file: taken as read, never queued.
		 */
		if (wp_stacktable_is_def(rec)) {
			err = p->table ? wp_stacktable_define(p->table, rec) : 0;
			if (err == -EBADMSG)
				an->bad_stack_defs++;
			else if (err)
				goto out;
			err = 0;
			continue;
		}
		/* A new block (not with a stack table: its places have names). */
		if (!p->table && (!block_seen || wp_reader_block_offset(an->reader) != block)) {
			block_seen = true;
			block = wp_reader_block_offset(an->reader);
			prefetch_debug_files(p, rec);
		}
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
	if (!err && p->held)
		err = release_held(p);
	if (err)
		goto out;
	if (p->nr_held)
		wp_debug("%" PRIu64 " deliveries were held while debug files decompressed",
			 p->nr_held);
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
	an->quality.starved_files = wp_procmap_starved(p->pm);
	if (wp_fd_starved()) {
		an->quality.fd_limit = wp_fdlimit();
		wp_warn("some frames were left unnamed for lack of file descriptors (the limit "
			"is %u): raise it ('ulimit -n') for a report that names them",
			an->quality.fd_limit);
	}
	an->quality.jit_live_maps = wp_symbols_jit_live(p->symbols);
	an->quality.cache_hits = wp_resolver_cache_hits(p->resolver);
	if (an->bad_stack_defs || p->bad_stacks)
		wp_warn("'%s': %" PRIu64 " stack table entries are damaged and %" PRIu64
			" samples name no stack of it; those samples count without their stacks",
			wp_quoted(path), an->bad_stack_defs, p->bad_stacks);
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
	free(an->kept);
	free(an->forks);
	wp_account_free(an->account);
	wp_stacks_free(an->stacks);
	wp_strpool_free(an->names);
	wp_frameinfo_free(an->frames);
	wp_tasknames_free(an->tasknames);
	wp_reader_close(an->reader);
	memset(an, 0, sizeof(*an));
}
