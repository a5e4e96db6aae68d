/* SPDX-License-Identifier: GPL-2.0-or-later */
/* liveunwind.c: samples in, stack table definitions and stack samples out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "liveunwind.h"
#include "placenames.h"
#include "procmap.h"
#include "samplekind.h"
#include "samplestack.h"
#include "stacks.h"
#include "strpool.h"
#include "symbols.h"

/* A stack's words, as interned: flags, ip, needed (two), nr_chain, nr_user, places. */
#define HEAD_WORDS 6
/*
 * How long after an exit the process model and the coverage table let
 * the thread or process go, and how often they are asked to: ample for
 * the records the kernel writes of a task after its EXIT (its last
 * switch-out), which the time ordering has put before later ones.
 */
#define FORGET_AFTER_NS (1000ULL * 1000 * 1000)
/*
 * The unwound stacks remembered, and their places in all: a quarter of a
 * report's.  Report's bound (some 9 MiB once full) was most of what a
 * live recording beside thread churn held beyond a raw one, and churn
 * fills any bound in a minute or two (a new process's stacks are new
 * entries); the stacks that come again and again (a switch storm's) are
 * found again within the first of their repeats after the cache starts
 * over.
 */
#define LIVE_CACHE_STACKS 16384
#define LIVE_CACHE_PLACES (1U << 18)

struct wp_liveunwind {
	struct wp_sample_format fmt;
	struct wp_procmap *pm;
	struct wp_resolver *resolver;
	struct wp_coverage *coverage;
	struct wp_sample_kinds kinds;
	struct wp_stacks *stacks;	/* a stack's words -> its id */
	uint8_t *place_written;		/* per resolver place: PLACE_OUT, PLACE_NAMED */
	size_t cap_places;
	uint8_t *dso_written;		/* per procmap dso: its DSO record is out */
	size_t cap_dsos;
	struct wp_sample_stack sstack;
	uint32_t words[HEAD_WORDS + WP_SSTACK_CHAIN + WP_MAX_FRAMES];
	struct wp_liveunwind_stats stats;
	struct wp_summary out_counts;	/* what its output holds, as the drain counts */
	struct wp_placenames *names;	/* the places named so far, or NULL */
	uint64_t next_forget;		/* record time of the next wp_procmap_forget */
};

#define PLACE_OUT 1	/* its PLACE record is out */
#define PLACE_NAMED 2	/* and wp_liveunwind_names() tried to name it */

int wp_liveunwind_new(const struct wp_meta *m, struct wp_liveunwind **out)
{
	struct wp_liveunwind *lu = calloc(1, sizeof(*lu));
	int err;

	*out = NULL;
	if (!lu)
		return -ENOMEM;
	wp_sample_format_init(&lu->fmt, m->sample_type, m->regs_mask);
	lu->fmt.stack_request = m->stack_size;
	err = wp_sample_kinds_init(&lu->kinds, m);
	if (!err)
		err = wp_procmap_new(wp_same_kernel(m), &lu->pm);
	if (!err)
		err = wp_resolver_new(lu->pm, m, &lu->resolver);
	if (!err)
		err = wp_resolver_bound_cache(lu->resolver, LIVE_CACHE_STACKS, LIVE_CACHE_PLACES);
	if (!err)
		err = wp_coverage_new(&lu->fmt, &lu->coverage);
	if (!err)
		err = wp_stacks_new(&lu->stacks);
	if (err) {
		wp_liveunwind_free(lu);
		return err;
	}
	*out = lu;
	return 0;
}

/* Mark byte i of a growing array; returns 1 if it was already, 0, or -ENOMEM. */
static int mark(uint8_t **v, size_t *cap, size_t i)
{
	size_t had = *cap;

	if (i >= had) {
		if (WP_GROW(*v, *cap, i + 1))
			return -ENOMEM;
		memset(*v + had, 0, *cap - had);
	}
	if ((*v)[i])
		return 1;
	(*v)[i] = 1;
	return 0;
}

static int define_dso(struct wp_liveunwind *lu, uint32_t idx, struct wp_buf *out)
{
	struct wp_dso *dso = wp_procmap_dso(lu->pm, idx);
	uint8_t id[20];
	struct wp_dso_def d;
	int err;

	if (!dso)
		return 0;
	err = mark(&lu->dso_written, &lu->cap_dsos, idx);
	if (err)
		return err < 0 ? err : 0;
	d.dso = idx;
	d.maj = dso->maj;
	d.min = dso->min;
	d.ino = dso->ino;
	/* The file's own id when none was recorded: its debug file is found by it. */
	d.build_id_size = (uint8_t)wp_procmap_dso_build_id(lu->pm, dso, id, sizeof(id));
	d.build_id = id;
	d.filename = dso->path;
	lu->stats.dsos++;
	return wp_dso_def_append(out, &d);
}

static int define_place(struct wp_liveunwind *lu, uint32_t id, struct wp_buf *out)
{
	struct wp_place_def d;
	struct wp_place pl;
	int err;

	if (id == WP_NO_PLACE || !wp_resolver_place(lu->resolver, id, &pl))
		return 0;
	err = mark(&lu->place_written, &lu->cap_places, id);
	if (err)
		return err < 0 ? err : 0;
	if (pl.kind == WP_PLACE_FILE) {
		err = define_dso(lu, pl.where, out);
		if (err)
			return err;
	}
	d.place = id;
	d.kind = (uint8_t)pl.kind;
	d.flags = pl.activation ? WP_PLACE_ACTIVATION : 0;
	d.where = pl.where;
	d.addr = pl.addr;
	d.pgoff = pl.pgoff;
	lu->stats.places++;
	return wp_place_def_append(out, &d);
}

/* The id of the stack just resolved, defining it (and what it uses) when new. */
static int intern_stack(struct wp_liveunwind *lu, struct wp_buf *out, uint32_t *id)
{
	const struct wp_sample_stack *ss = &lu->sstack;
	size_t n = (size_t)ss->nr_chain + ss->nr_user;
	struct wp_stack_def d;
	uint32_t *w = lu->words;
	int err;

	w[0] = ss->flags;
	w[1] = ss->ip;
	w[2] = (uint32_t)ss->needed;
	w[3] = (uint32_t)(ss->needed >> 32);
	w[4] = ss->nr_chain;
	w[5] = ss->nr_user;
	memcpy(w + HEAD_WORDS, ss->chain, ss->nr_chain * sizeof(*w));
	memcpy(w + HEAD_WORDS + ss->nr_chain, ss->user, ss->nr_user * sizeof(*w));
	*id = wp_stacks_intern(lu->stacks, w, (unsigned int)(HEAD_WORDS + n));
	if (*id == UINT32_MAX)
		return -ENOMEM;
	if (*id < lu->stats.stacks)
		return 0;	/* defined before: ids come in order */
	err = define_place(lu, ss->ip, out);
	for (size_t i = 0; !err && i < n; i++)
		err = define_place(lu, w[HEAD_WORDS + i], out);
	if (err)
		return err;
	d.stack = *id;
	d.flags = ss->flags;
	d.ip = ss->ip;
	d.nr_chain = (uint16_t)ss->nr_chain;
	d.nr_user = (uint16_t)ss->nr_user;
	d.needed = ss->needed;
	lu->stats.stacks++;
	return wp_stack_def_append(out, &d, w + HEAD_WORDS);
}

/*
 * A sample whose stack the table can hold: 1 when it was written as a
 * STACK_SAMPLE, 0 when it is to pass as it is.
 */
static int convert_sample(struct wp_liveunwind *lu, const struct perf_event_header *rec,
			  const struct wp_sample *s, struct wp_buf *out)
{
	enum wp_event_role role = wp_sample_kinds_role(&lu->kinds, s->id);
	struct wp_stack_sample ss = {
		.misc = rec->misc, .time = s->time, .id = s->id, .pid = s->pid, .tid = s->tid,
		.cpu = s->cpu, .stack = WP_NO_STACK,
	};
	bool irq = false, unwind = true;
	uint8_t context = 0;
	int err;


	switch (role) {
	case WP_EVENT_WAKEUP:
		if (!wp_sample_kinds_waking(&lu->kinds, s, &ss.thread, &context))
			return 0;
		irq = context != 0;
		ss.flags = wp_wake_flags_of_context(context);
		break;
	/* The other tracepoints' samples take no stack: only who and when. */
	case WP_EVENT_ENQUEUED:
	case WP_EVENT_WAKEUP_NEW:
		if (!wp_sample_kinds_woken(&lu->kinds, s, &ss.thread))
			return 0;
		ss.flags = role == WP_EVENT_WAKEUP_NEW && wp_sample_kinds_enqueued_here(&lu->kinds, s) ?
			   WP_STACK_SAMPLE_HERE : 0;
		unwind = false;
		break;
	case WP_EVENT_SCHED_SWITCH:
		if (!wp_sample_kinds_next(&lu->kinds, s, &ss.thread))
			return 0;
		unwind = false;
		break;
	case WP_EVENT_ONCPU:
		unwind = s->tid;	/* the idle task (-a) is counted, never unwound */
		break;
	case WP_EVENT_SWITCH_OUT:
		break;
	default:
		return 0;
	}
	if (unwind) {
		wp_resolver_sample(lu->resolver, rec, s, !irq, &lu->sstack);
		err = intern_stack(lu, out, &ss.stack);
		if (err)
			return err;
	}
	lu->stats.samples++;
	err = wp_stack_sample_append(out, &ss);
	if (!err) {
		struct perf_event_header h = { .type = WP_RECORD_STACK_SAMPLE };

		wp_summary_count(&lu->out_counts, &h, (int)role);
	}
	return err ? err : 1;
}

static int take(struct wp_liveunwind *lu, const struct perf_event_header *rec, uint64_t time,
		bool unwind, struct wp_buf *out)
{
	struct wp_sample s;
	bool parsed = false;
	int err;

	if (rec->type == WP_RECORD_STACK_SAMPLE || rec->type == WP_RECORD_DSO ||
	    rec->type == WP_RECORD_PLACE || rec->type == WP_RECORD_STACK)
		return -EPROTO;
	if (rec->type == PERF_RECORD_SAMPLE)
		parsed = !wp_sample_parse(&lu->fmt, rec, &s);
	if (!wp_coverage_keep(lu->coverage, rec, parsed ? &s : NULL, time)) {
		lu->stats.dropped++;
		return 0;
	}
	if (rec->type == WP_RECORD_TRACE_FORMAT) {
		err = wp_sample_kinds_format(&lu->kinds, rec);
		if (err)
			return err;
	}
	err = wp_procmap_record(lu->pm, rec);
	if (err)
		return err;
	/*
	 * A flight recorder runs for hours beside threads and processes
	 * coming and going: what was held for the exited ones goes, so that
	 * what is held follows those alive, not all those ever seen.
	 */
	if (time >= lu->next_forget) {
		if (lu->next_forget) {
			size_t n = 0;

			err = wp_procmap_forget(lu->pm, time - FORGET_AFTER_NS, &n);
			if (err)
				return err;
			lu->stats.processes_forgotten += n;
			lu->stats.threads_forgotten +=
				wp_coverage_forget(lu->coverage, time - FORGET_AFTER_NS);
		}
		lu->next_forget = time + FORGET_AFTER_NS;
	}
	if (parsed && unwind) {
		err = convert_sample(lu, rec, &s, out);
		if (err)
			return err < 0 ? err : 0;
	} else if (parsed) {
		lu->stats.raw_samples++;
	}
	err = wp_buf_append(out, rec, rec->size);
	if (!err)
		wp_summary_count(&lu->out_counts, rec,
				 parsed ? (int)wp_sample_kinds_role(&lu->kinds, s.id) : -1);
	return err;
}

int wp_liveunwind_record(struct wp_liveunwind *lu, const struct perf_event_header *rec,
			 uint64_t time, struct wp_buf *out)
{
	return take(lu, rec, time, true, out);
}

int wp_liveunwind_pass(struct wp_liveunwind *lu, const struct perf_event_header *rec,
		       uint64_t time, struct wp_buf *out)
{
	return take(lu, rec, time, false, out);
}

/* A place to name: its file, then its id (the order places are named in). */
struct to_name {
	uint32_t dso, id;
};

static int to_name_cmp(const void *a, const void *b)
{
	const struct to_name *x = a, *y = b;

	if (x->dso != y->dso)
		return x->dso < y->dso ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int wp_liveunwind_names(struct wp_liveunwind *lu, struct wp_buf *out)
{
	struct wp_placename_frame frames[WP_PLACENAMES_MAX_FRAMES];
	struct wp_strpool *pool = NULL;
	struct wp_symbols *sym = NULL;
	struct to_name *todo = NULL;
	size_t nr_todo = 0;
	int err = 0;

	/* A test's file without names, as files were before they had them. */
	if (getenv("WALLPROF_TEST_NO_NAMES"))
		return 0;
	if (!lu->names)
		err = wp_placenames_new(&lu->names);
	if (err)
		return err;
	todo = malloc(lu->cap_places * sizeof(*todo) + 1);
	if (!todo)
		return -ENOMEM;
	/* The file's place ids are the resolver's; each is named once. */
	for (size_t id = 0; id < lu->cap_places; id++) {
		struct wp_place pl;

		if (lu->place_written[id] != PLACE_OUT)
			continue;
		lu->place_written[id] = PLACE_NAMED;
		if (wp_resolver_place(lu->resolver, (uint32_t)id, &pl) && pl.kind == WP_PLACE_FILE)
			todo[nr_todo++] = (struct to_name){ .dso = pl.where, .id = (uint32_t)id };
	}
	if (nr_todo) {
		err = wp_strpool_new(&pool);
		if (!err)
			err = wp_symbols_new(lu->pm, pool, true, false, NULL, &sym);
		if (err)
			goto out;
		wp_symbols_want_all(sym);
	}
	/*
	 * A file at a time, its debug information let go of once its places
	 * are named: the most held at once is one file's, not all of them.
	 */
	qsort(todo, nr_todo, sizeof(*todo), to_name_cmp);
	for (size_t i = 0; i < nr_todo && !err; i++) {
		struct wp_place pl;
		unsigned int n;

		wp_resolver_place(lu->resolver, todo[i].id, &pl);
		n = wp_symbols_describe(sym, &pl, frames, WP_PLACENAMES_MAX_FRAMES);
		if (n)
			err = wp_placenames_add(lu->names, todo[i].id, frames, n);
		if (i + 1 == nr_todo || todo[i + 1].dso != todo[i].dso)
			wp_symbols_drop_file(sym, todo[i].dso);
	}
	lu->stats.named = wp_placenames_places(lu->names);
	if (!err && lu->stats.named)
		err = wp_placenames_encode(lu->names, out);
out:
	free(todo);
	wp_symbols_free(sym);
	wp_strpool_free(pool);
	return err;
}

void wp_liveunwind_set_opener(struct wp_liveunwind *lu, wp_procmap_opener_fn fn, void *arg)
{
	wp_procmap_set_opener(lu->pm, fn, arg);
}

void wp_liveunwind_count(const struct wp_liveunwind *lu, const void *buf, size_t len,
			 struct wp_summary *c)
{
	const struct perf_event_header *h;
	size_t off = 0;

	while ((h = wp_record_next(buf, len, &off))) {
		const struct wp_record_kind *k = wp_record_kind_of(h->type);
		struct wp_stack_sample ss;
		uint64_t id;
		int role = -1;

		/* The table's definitions are no records of the drain's. */
		if (k && (k->flags & WP_KIND_STACK_DEF))
			continue;
		if (h->type == WP_RECORD_STACK_SAMPLE && !wp_stack_sample_parse(h, &ss))
			role = (int)wp_sample_kinds_role(&lu->kinds, ss.id);
		else if (h->type == PERF_RECORD_SAMPLE && !wp_sample_event_id(&lu->fmt, h, &id))
			role = (int)wp_sample_kinds_role(&lu->kinds, id);
		wp_summary_count(c, h, role);
	}
}

const struct wp_summary *wp_liveunwind_counts(const struct wp_liveunwind *lu)
{
	return &lu->out_counts;
}

const struct wp_liveunwind_stats *wp_liveunwind_stats(const struct wp_liveunwind *lu)
{
	return &lu->stats;
}

void wp_liveunwind_free(struct wp_liveunwind *lu)
{
	if (!lu)
		return;
	wp_placenames_free(lu->names);
	wp_stacks_free(lu->stacks);
	wp_coverage_free(lu->coverage);
	wp_resolver_free(lu->resolver);
	wp_procmap_free(lu->pm);
	wp_sample_kinds_release(&lu->kinds);
	free(lu->place_written);
	free(lu->dso_written);
	free(lu);
}
