/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * format_pprof.c: the profile as a gzipped profile.proto (proto/profile.proto),
 * the format of pprof, for it and the fleet profilers that read it.
 *
 * One sample per (stack, thread, kind of time) that the view shows, with
 * its time in the column of its kind and in "wall", and its count (on-CPU
 * samples, or off-CPU intervals); labels say the pid, tid, thread name
 * and kind.  A location is one frame, or one run of inlined frames with
 * the frame they were inlined into (pprof's lines of one location), at
 * the entry of that frame's function in its file (frameinfo.h: stacks
 * keep functions, not instruction addresses); a function is one name,
 * with its source file and first line where the debug info has them; a
 * mapping is one file, with its build id, the recorded program's first
 * (pprof's main binary).  Off-CPU samples get their kind's marker frame
 * as leaf, as in folded output, one function per kind: a time partly
 * estimated says so with a label (pprof shortens "f (estimated)" to
 * "f ", a function apart).  Every figure is the accounting's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format.h"
#include "frameinfo.h"
#include "log.h"
#include "profile.pb-c.h"
#include "quote.h"
#include "stacks.h"
#include "strpool.h"
#include "symbols.h"
#include "u64map.h"
#include "util.h"

/* The sample values, in this order (sample_type). */
enum pprof_value {
	PV_SAMPLES,
	PV_WALL,
	PV_ON_CPU,
	PV_BLOCKED,
	PV_PREEMPTED,
	PV_RUNNABLE,
	PV_COUNT,
};

static const char *const value_names[PV_COUNT] = {
	"samples", "wall", "on-cpu", "blocked", "preempted", "runnable",
};

/* The column of each kind of time (enum wp_part), and its state label. */
static const enum pprof_value part_value[WP_NR_PARTS] = {
	[WP_PART_ON] = PV_ON_CPU,
	[WP_PART_BLOCKED] = PV_BLOCKED,
	[WP_PART_PREEMPTED] = PV_PREEMPTED,
	[WP_PART_RUNNABLE] = PV_RUNNABLE,
};

static const char *const part_state[WP_NR_PARTS] = {
	[WP_PART_ON] = "on-cpu",
	[WP_PART_BLOCKED] = "blocked",
	[WP_PART_PREEMPTED] = "preempted",
	[WP_PART_RUNNABLE] = "runnable",
};

#define LABELS_PER_SAMPLE 5	/* pid, tid, thread, state; estimated, when it is */

/* The most frames one location holds; a longer inlined run is split. */
#define GROUP_MAX 64

/*
 * The profile under construction.  Arrays grow, so samples and locations
 * refer to their parts by index until pprof_link() points them.
 */
struct pprof {
	struct wp_view *v;
	struct wp_strpool *strings;	/* the string table: id = index */
	struct wp_buf quoted;		/* scratch for one quoted string */

	struct wp_u64map function_of;	/* frame token (not inlined) -> index + 1 */
	Wallprof__Pprof__Function *functions;
	size_t nr_functions, cap_functions;

	struct wp_stacks *groups;	/* a location's frames */
	struct wp_u64map location_of;	/* group id -> index + 1 */
	Wallprof__Pprof__Location *locations;
	size_t nr_locations, cap_locations;
	size_t *first_line;		/* per location, into lines */
	size_t cap_first_line;
	Wallprof__Pprof__Line *lines;
	size_t nr_lines, cap_lines;
	uint64_t marker_location[WP_NR_PARTS];	/* location id, 0: not yet */

	struct wp_u64map stack_at;	/* stack id -> index into stack_locs + 1 */
	uint64_t *stack_locs;		/* per stack: count, then location ids */
	size_t nr_stack_locs, cap_stack_locs;

	Wallprof__Pprof__Sample *samples;
	size_t nr_samples, cap_samples;
	size_t *sample_locs;		/* per sample, into stack_locs (its count) */
	size_t cap_sample_locs;
	int64_t *values;		/* PV_COUNT per sample */
	size_t cap_values;
	Wallprof__Pprof__Label *labels;	/* per thread: pid, tid, thread; then states */
	Wallprof__Pprof__Label estimated;	/* "estimated": "true" */
	Wallprof__Pprof__Label **label_ptrs;	/* LABELS_PER_SAMPLE per sample */
	uint8_t *nr_labels;		/* per sample: how many of them it has */
	size_t cap_label_ptrs, cap_nr_labels;
};

/* The index of s, quoted for display, in the string table (-1: no memory). */
static int64_t string_id(struct pprof *pp, const char *s)
{
	uint32_t id;

	pp->quoted.len = 0;
	if (wp_quote_buf(&pp->quoted, s, strlen(s), WP_QUOTE_TEXT) ||
	    wp_buf_append(&pp->quoted, "", 1))
		return -1;
	id = wp_strpool_intern(pp->strings, (const char *)pp->quoted.data);
	return id == UINT32_MAX ? -1 : (int64_t)id;
}

/* A function of this name (src: its source file or NULL); its id, or 0 when out of memory. */
static uint64_t new_function(struct pprof *pp, const char *name, const char *src,
			     uint32_t line)
{
	Wallprof__Pprof__Function *f, *grown;
	int64_t sid = string_id(pp, name), file = src ? string_id(pp, src) : 0;

	if (sid < 0 || file < 0)
		return 0;
	grown = wp_grow(pp->functions, &pp->cap_functions, pp->nr_functions + 1,
			sizeof(*pp->functions));
	if (!grown)
		return 0;
	pp->functions = grown;
	f = &pp->functions[pp->nr_functions++];
	wallprof__pprof__function__init(f);
	f->id = pp->nr_functions;
	f->name = sid;
	f->system_name = sid;
	f->filename = file;
	f->start_line = line;
	return f->id;
}

/* The function of a frame token, made on first use; 0 when out of memory. */
static uint64_t token_function(struct pprof *pp, uint32_t token)
{
	uint64_t key = token & ~WP_FRAME_INLINED, id;
	struct wp_frame_info fi = { .src = NULL };

	if (wp_u64map_get(&pp->function_of, key, &id))
		return id;
	wp_frameinfo_get(pp->v->an->frames, token, &fi);
	id = new_function(pp, wp_analysis_frame_name(pp->v->an, token), fi.src, fi.line);
	if (id && wp_u64map_put(&pp->function_of, key, id))
		return 0;
	return id;
}

/*
 * A new location of n lines (functions fns, innermost first) at addr of
 * mapping (0: none); its id or 0.
 */
static uint64_t new_location(struct pprof *pp, const uint64_t *fns, unsigned int n,
			     uint64_t mapping, uint64_t addr)
{
	Wallprof__Pprof__Location *l, *grown;
	Wallprof__Pprof__Line *gl;
	size_t *gf;

	grown = wp_grow(pp->locations, &pp->cap_locations, pp->nr_locations + 1,
			sizeof(*pp->locations));
	if (!grown)
		return 0;
	pp->locations = grown;
	gf = wp_grow(pp->first_line, &pp->cap_first_line, pp->nr_locations + 1,
		     sizeof(*pp->first_line));
	if (!gf)
		return 0;
	pp->first_line = gf;
	gl = wp_grow(pp->lines, &pp->cap_lines, pp->nr_lines + n, sizeof(*pp->lines));
	if (!gl)
		return 0;
	pp->lines = gl;
	pp->first_line[pp->nr_locations] = pp->nr_lines;
	for (unsigned int i = 0; i < n; i++) {
		wallprof__pprof__line__init(&pp->lines[pp->nr_lines]);
		pp->lines[pp->nr_lines++].function_id = fns[i];
	}
	l = &pp->locations[pp->nr_locations++];
	wallprof__pprof__location__init(l);
	l->id = pp->nr_locations;
	l->n_line = n;
	l->mapping_id = mapping;
	l->address = addr;
	return l->id;
}

/*
 * The location of the frames group[0..n): inlined frames and the one they
 * were inlined into, innermost first.  Its id, or 0 when out of memory.
 */
static uint64_t group_location(struct pprof *pp, const uint32_t *group, unsigned int n)
{
	uint32_t gid = wp_stacks_intern(pp->groups, group, n);
	uint64_t fns[GROUP_MAX], id;
	struct wp_frame_info fi = { .file = WP_FRAMEINFO_NONE };

	if (gid == UINT32_MAX)
		return 0;
	if (wp_u64map_get(&pp->location_of, gid, &id))
		return id;
	for (unsigned int i = 0; i < n; i++) {
		fns[i] = token_function(pp, group[i]);
		if (!fns[i])
			return 0;
	}
	/* Where the function is that the others were inlined into. */
	wp_frameinfo_get(pp->v->an->frames, group[n - 1], &fi);
	id = new_location(pp, fns, n, fi.file == WP_FRAMEINFO_NONE ? 0 : fi.file + 1ULL,
			  fi.addr);
	if (id && wp_u64map_put(&pp->location_of, gid, id))
		return 0;
	return id;
}

/*
 * The leaf location that marks off-CPU time of one kind, estimated or not
 * (a label says which); 0 when out of memory.
 */
static uint64_t marker_location(struct pprof *pp, enum wp_part part)
{
	uint64_t fn;

	if (pp->marker_location[part])
		return pp->marker_location[part];
	fn = new_function(pp, wp_part_marker(part, false), NULL, 0);
	if (fn)
		pp->marker_location[part] = new_location(pp, &fn, 1, 0, 0);
	return pp->marker_location[part];
}

/*
 * The locations of a stack, leaf first, in stack_locs (a count, then the
 * ids); the index of the count, or SIZE_MAX when out of memory.
 */
static size_t stack_locations(struct pprof *pp, uint32_t stack)
{
	const uint32_t *f;
	unsigned int n, i = 0;
	uint64_t *grown, at;
	size_t start;

	if (wp_u64map_get(&pp->stack_at, stack, &at))
		return (size_t)at - 1;
	f = wp_stacks_get(pp->v->an->stacks, stack, &n);
	grown = wp_grow(pp->stack_locs, &pp->cap_stack_locs, pp->nr_stack_locs + n + 1,
			sizeof(*pp->stack_locs));
	if (!grown)
		return SIZE_MAX;
	pp->stack_locs = grown;
	start = pp->nr_stack_locs++;
	pp->stack_locs[start] = 0;
	while (i < n) {
		unsigned int j = i;
		uint64_t id;

		/* A run of inlined frames ends with the frame they are part of. */
		while (j < n && j - i < GROUP_MAX - 1 && (f[j] & WP_FRAME_INLINED))
			j++;
		if (j < n)
			j++;
		id = group_location(pp, f + i, j - i);
		if (!id)
			return SIZE_MAX;
		pp->stack_locs[pp->nr_stack_locs++] = id;
		pp->stack_locs[start]++;
		i = j;
	}
	if (wp_u64map_put(&pp->stack_at, stack, start + 1))
		return SIZE_MAX;
	return start;
}

/* The labels of every thread (pid, tid, thread) and of every state. */
static int make_labels(struct pprof *pp)
{
	size_t nr_threads;
	const struct wp_thread_times *th = wp_account_threads(pp->v->an->account, &nr_threads);
	int64_t pid = string_id(pp, "pid"), tid = string_id(pp, "tid");
	int64_t thread = string_id(pp, "thread"), state = string_id(pp, "state");

	if (pid < 0 || tid < 0 || thread < 0 || state < 0)
		return -ENOMEM;
	wallprof__pprof__label__init(&pp->estimated);
	pp->estimated.key = string_id(pp, "estimated");
	pp->estimated.str = string_id(pp, "true");
	if (pp->estimated.key < 0 || pp->estimated.str < 0)
		return -ENOMEM;
	pp->labels = calloc(nr_threads * 3 + WP_NR_PARTS, sizeof(*pp->labels));
	if (!pp->labels)
		return -ENOMEM;
	for (size_t i = 0; i < nr_threads * 3 + WP_NR_PARTS; i++)
		wallprof__pprof__label__init(&pp->labels[i]);
	for (size_t i = 0; i < nr_threads; i++) {
		Wallprof__Pprof__Label *l = &pp->labels[i * 3];
		char comm[sizeof(th[i].comm) + 1];

		/* A thread name fills its 16 bytes without a NUL. */
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(th[i].comm), th[i].comm);
		l[0].key = pid;
		l[0].num = th[i].pid;
		l[1].key = tid;
		l[1].num = th[i].tid;
		l[2].key = thread;
		l[2].str = string_id(pp, comm);
		if (l[2].str < 0)
			return -ENOMEM;
	}
	for (int p = 0; p < WP_NR_PARTS; p++) {
		Wallprof__Pprof__Label *l = &pp->labels[nr_threads * 3 + (size_t)p];

		l->key = state;
		l->str = string_id(pp, part_state[p]);
		if (l->str < 0)
			return -ENOMEM;
	}
	return 0;
}

/* One sample: ns of one kind of time on one stack weight. */
static int add_sample(struct pprof *pp, const struct wp_stack_weight *w, enum wp_part part,
		      uint64_t ns, size_t nr_threads)
{
	Wallprof__Pprof__Sample *s, *grown;
	size_t locs = stack_locations(pp, w->stack), *gl, k = pp->nr_samples;
	Wallprof__Pprof__Label **glp;
	uint64_t marker = 0, count = wp_view_part_count(w, part);
	bool estimated = part != WP_PART_ON && wp_view_part_estimated(w, part);
	int64_t *gv, *val;
	uint8_t *gn;

	if (part != WP_PART_ON)
		marker = marker_location(pp, part);
	if (locs == SIZE_MAX || (part != WP_PART_ON && !marker))
		return -ENOMEM;
	if (part == WP_PART_BLOCKED && pp->v->have_waker_re)
		wp_view_woken_ns(pp->v, w, &count);
	grown = wp_grow(pp->samples, &pp->cap_samples, k + 1, sizeof(*pp->samples));
	if (!grown)
		return -ENOMEM;
	pp->samples = grown;
	gl = wp_grow(pp->sample_locs, &pp->cap_sample_locs, k + 1, sizeof(*pp->sample_locs));
	if (!gl)
		return -ENOMEM;
	pp->sample_locs = gl;
	gv = wp_grow(pp->values, &pp->cap_values, (k + 1) * PV_COUNT, sizeof(*pp->values));
	if (!gv)
		return -ENOMEM;
	pp->values = gv;
	glp = wp_grow(pp->label_ptrs, &pp->cap_label_ptrs, (k + 1) * LABELS_PER_SAMPLE,
		      sizeof(*pp->label_ptrs));
	if (!glp)
		return -ENOMEM;
	pp->label_ptrs = glp;
	gn = wp_grow(pp->nr_labels, &pp->cap_nr_labels, k + 1, sizeof(*pp->nr_labels));
	if (!gn)
		return -ENOMEM;
	pp->nr_labels = gn;

	s = &pp->samples[pp->nr_samples++];
	wallprof__pprof__sample__init(s);
	/* An off-CPU sample's leaf is its marker: location ids then start one earlier. */
	if (marker) {
		uint64_t *grown_locs;
		size_t n = (size_t)pp->stack_locs[locs];

		grown_locs = wp_grow(pp->stack_locs, &pp->cap_stack_locs,
				     pp->nr_stack_locs + n + 2, sizeof(*pp->stack_locs));
		if (!grown_locs)
			return -ENOMEM;
		pp->stack_locs = grown_locs;
		pp->stack_locs[pp->nr_stack_locs] = n + 1;
		pp->stack_locs[pp->nr_stack_locs + 1] = marker;
		memcpy(pp->stack_locs + pp->nr_stack_locs + 2, pp->stack_locs + locs + 1,
		       n * sizeof(*pp->stack_locs));
		locs = pp->nr_stack_locs;
		pp->nr_stack_locs += n + 2;
	}
	pp->sample_locs[k] = locs;
	val = pp->values + k * PV_COUNT;
	memset(val, 0, PV_COUNT * sizeof(*val));
	val[PV_SAMPLES] = (int64_t)count;
	val[PV_WALL] = (int64_t)ns;
	val[part_value[part]] = (int64_t)ns;
	glp = pp->label_ptrs + k * LABELS_PER_SAMPLE;
	glp[0] = &pp->labels[w->thread * 3];
	glp[1] = &pp->labels[w->thread * 3 + 1];
	glp[2] = &pp->labels[w->thread * 3 + 2];
	glp[3] = &pp->labels[nr_threads * 3 + part];
	glp[4] = &pp->estimated;
	pp->nr_labels[k] = estimated ? 5 : 4;
	return 0;
}

/* Every sample the view shows, in the accounting's order. */
static int add_samples(struct pprof *pp)
{
	const struct wp_stack_weight *w;
	size_t nw, nr_threads;
	int err;

	wp_account_threads(pp->v->an->account, &nr_threads);
	err = make_labels(pp);
	if (err)
		return err;
	w = wp_account_stacks(pp->v->an->account, &nw);
	for (size_t i = 0; i < nw; i++) {
		if (!wp_view_thread(pp->v, w[i].thread) || !wp_view_stack(pp->v, w[i].stack))
			continue;
		for (int p = 0; p < WP_NR_PARTS; p++) {
			uint64_t ns = wp_view_part_ns(pp->v, &w[i], (enum wp_part)p);

			if (!ns)
				continue;
			err = add_sample(pp, &w[i], (enum wp_part)p, ns, nr_threads);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The arrays of pointers that the message holds, and the ones inside. */
struct pprof_ptrs {
	Wallprof__Pprof__ValueType types[PV_COUNT], period_type;
	Wallprof__Pprof__ValueType *type_ptrs[PV_COUNT];
	Wallprof__Pprof__Sample **samples;
	Wallprof__Pprof__Location **locations;
	Wallprof__Pprof__Line **lines;
	Wallprof__Pprof__Function **functions;
	Wallprof__Pprof__Mapping *mappings;
	Wallprof__Pprof__Mapping **mapping_ptrs;
	char **strings;
	int64_t comments[2];
};

static void pprof_ptrs_release(struct pprof_ptrs *pt)
{
	free(pt->samples);
	free(pt->locations);
	free(pt->lines);
	free(pt->functions);
	free(pt->mappings);
	free(pt->mapping_ptrs);
	free(pt->strings);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A file that can be a program: not the kernel's, [vdso], nor a library. */
static bool program_file(const char *path)
{
	return path[0] == '/' && !strstr(base_name(path), ".so");
}

/* The launched command's name: the word after record's "--", or NULL. */
static const char *launched_command(const struct wp_meta *m)
{
	for (uint32_t i = 0; i + 1 < m->argc; i++)
		if (!strcmp(m->argv[i], "--"))
			return base_name(m->argv[i + 1]);
	return NULL;
}

/*
 * The file pprof is to take for the main binary (its first mapping): the
 * recorded program's.  That is the launched command's file when one of
 * its name has frames; else (attached, -a, a command run through a shell
 * or a link) the program file whose frames carry the most time; else the
 * first file.  The time of a sample counts once per file in its stack.
 */
static size_t main_file(const struct pprof *pp, const struct wp_frame_file *files, size_t n)
{
	const char *cmd = launched_command(pp->v->an->meta);
	uint64_t *wall = calloc(n + 1, sizeof(*wall)), best_wall = 0;
	size_t *seen = calloc(n + 1, sizeof(*seen)), best = 0;

	if (!wall || !seen) {
		free(wall);
		free(seen);
		return 0;	/* only the order suffers */
	}
	for (size_t k = 0; k < pp->nr_samples; k++) {
		const uint64_t *ids = pp->stack_locs + pp->sample_locs[k];

		for (uint64_t i = 1; i <= ids[0]; i++) {
			uint64_t m = pp->locations[ids[i] - 1].mapping_id;

			if (!m || m > n || seen[m - 1] == k + 1)
				continue;
			seen[m - 1] = k + 1;
			wall[m - 1] += (uint64_t)pp->values[k * PV_COUNT + PV_WALL];
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool named = cmd && !strcmp(base_name(files[i].path), cmd);

		if (!program_file(files[i].path))
			continue;
		/* The command's own file outranks any other. */
		if (named)
			wall[i] += UINT64_MAX / 2;
		if (wall[i] > best_wall) {
			best_wall = wall[i];
			best = i;
		}
	}
	free(wall);
	free(seen);
	return best;
}

/*
 * One mapping per file that frames were noted in, as loaded at 0: the
 * locations' addresses are file addresses, shared by every process.
 */
static int fill_mappings(struct pprof *pp, struct pprof_ptrs *pt, Wallprof__Pprof__Profile *msg)
{
	const struct wp_frame_file *files;
	size_t n, first;

	files = wp_frameinfo_files(pp->v->an->frames, &n);
	pt->mappings = calloc(n + 1, sizeof(*pt->mappings));
	pt->mapping_ptrs = calloc(n + 1, sizeof(*pt->mapping_ptrs));
	if (!pt->mappings || !pt->mapping_ptrs)
		return -ENOMEM;
	first = main_file(pp, files, n);
	for (size_t i = 0; i < n; i++) {
		Wallprof__Pprof__Mapping *m = &pt->mappings[i];
		char hex[2 * sizeof(files[i].build_id) + 1] = "";

		wallprof__pprof__mapping__init(m);
		for (unsigned int k = 0; k < files[i].build_id_size; k++)
			snprintf(hex + 2 * k, 3, "%02x", files[i].build_id[k]);
		m->id = i + 1;
		m->memory_limit = files[i].max_addr + 1;
		m->filename = string_id(pp, files[i].path);
		m->build_id = string_id(pp, hex);
		if (m->filename < 0 || m->build_id < 0)
			return -ENOMEM;
		/* Named already: a reader must not look the addresses up again. */
		m->has_functions = true;
		m->has_filenames = true;
		m->has_inline_frames = true;
		/* Ids stay the files' own: only the order changes. */
		pt->mapping_ptrs[i == first ? 0 : i < first ? i + 1 : i] = m;
	}
	msg->n_mapping = n;
	msg->mapping = pt->mapping_ptrs;
	return 0;
}

/* The header figures: sample types, period, time, comments. */
static int fill_header(struct pprof *pp, struct pprof_ptrs *pt, Wallprof__Pprof__Profile *msg)
{
	const struct wp_analysis *an = pp->v->an;
	const struct wp_meta *m = an->meta;
	int64_t ns = string_id(pp, "nanoseconds"), count = string_id(pp, "count");
	struct wp_buf cmd = { 0 };
	char text[512];
	int err = 0;

	if (ns < 0 || count < 0)
		return -ENOMEM;
	for (int i = 0; i < PV_COUNT; i++) {
		wallprof__pprof__value_type__init(&pt->types[i]);
		pt->types[i].type = string_id(pp, value_names[i]);
		pt->types[i].unit = i == PV_SAMPLES ? count : ns;
		if (pt->types[i].type < 0)
			return -ENOMEM;
		pt->type_ptrs[i] = &pt->types[i];
	}
	msg->n_sample_type = PV_COUNT;
	msg->sample_type = pt->type_ptrs;
	msg->default_sample_type = pt->types[PV_WALL].type;
	/* The sampling clock of on-CPU stacks. */
	wallprof__pprof__value_type__init(&pt->period_type);
	pt->period_type.type = string_id(pp, "cpu");
	pt->period_type.unit = ns;
	msg->period_type = &pt->period_type;
	msg->period = (int64_t)m->sample_period_ns;
	/* A --time window past the recording's end is empty, not negative. */
	if (an->window_start >= an->start_ns)
		msg->time_nanos = (int64_t)(m->start_realtime_ns + (an->window_start - an->start_ns));
	if (an->window_end > an->window_start)
		msg->duration_nanos = (int64_t)(an->window_end - an->window_start);

	snprintf(text, sizeof(text), "wallprof %s, mode %s, host %s", PACKAGE_VERSION,
		 wp_mode_name(pp->v->o.mode), m->hostname);
	pt->comments[0] = string_id(pp, text);
	for (uint32_t i = 0; i < m->argc && !err; i++)
		err = wp_buf_append(&cmd, i ? " " : "command: ", i ? 1 : 9) ||
		      wp_buf_append(&cmd, m->argv[i], strlen(m->argv[i]));
	if (!err)
		err = wp_buf_append(&cmd, "", 1);
	pt->comments[1] = err ? -1 : string_id(pp, m->argc ? (const char *)cmd.data :
					       "command: (attached)");
	wp_buf_release(&cmd);
	if (pt->period_type.type < 0 || pt->comments[0] < 0 || pt->comments[1] < 0)
		return -ENOMEM;
	msg->n_comment = 2;
	msg->comment = pt->comments;
	return 0;
}

/* Point the message and its parts at each other, now that nothing grows. */
static int pprof_link(struct pprof *pp, struct pprof_ptrs *pt, Wallprof__Pprof__Profile *msg)
{
	size_t nstr = wp_strpool_count(pp->strings);

	pt->samples = calloc(pp->nr_samples + 1, sizeof(*pt->samples));
	pt->locations = calloc(pp->nr_locations + 1, sizeof(*pt->locations));
	pt->lines = calloc(pp->nr_lines + 1, sizeof(*pt->lines));
	pt->functions = calloc(pp->nr_functions + 1, sizeof(*pt->functions));
	pt->strings = calloc(nstr + 1, sizeof(*pt->strings));
	if (!pt->samples || !pt->locations || !pt->lines || !pt->functions || !pt->strings)
		return -ENOMEM;
	for (size_t i = 0; i < pp->nr_samples; i++) {
		Wallprof__Pprof__Sample *s = &pp->samples[i];
		size_t at = pp->sample_locs[i];

		s->n_location_id = (size_t)pp->stack_locs[at];
		s->location_id = pp->stack_locs + at + 1;
		s->n_value = PV_COUNT;
		s->value = pp->values + i * PV_COUNT;
		s->n_label = pp->nr_labels[i];
		s->label = pp->label_ptrs + i * LABELS_PER_SAMPLE;
		pt->samples[i] = s;
	}
	for (size_t i = 0; i < pp->nr_lines; i++)
		pt->lines[i] = &pp->lines[i];
	for (size_t i = 0; i < pp->nr_locations; i++) {
		pp->locations[i].line = pt->lines + pp->first_line[i];
		pt->locations[i] = &pp->locations[i];
	}
	for (size_t i = 0; i < pp->nr_functions; i++)
		pt->functions[i] = &pp->functions[i];
	/* The message only reads its strings: the pool keeps them. */
	for (size_t i = 0; i < nstr; i++)
		pt->strings[i] = (char *)wp_strpool_get(pp->strings, (uint32_t)i);
	msg->n_sample = pp->nr_samples;
	msg->sample = pt->samples;
	msg->n_location = pp->nr_locations;
	msg->location = pt->locations;
	msg->n_function = pp->nr_functions;
	msg->function = pt->functions;
	msg->n_string_table = nstr;
	msg->string_table = pt->strings;
	return 0;
}

/* A protobuf-c output buffer that gzips what it is given into a FILE. */
struct gzip_sink {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int err;
	unsigned char chunk[65536];
};

static int gzip_run(struct gzip_sink *g, int flush)
{
	do {
		int ret;

		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EIO;
		errno = 0;
		if (fwrite(g->chunk, 1, sizeof(g->chunk) - g->z.avail_out, g->out) !=
		    sizeof(g->chunk) - g->z.avail_out)
			return errno ? -errno : -EIO;
	} while (g->z.avail_out == 0);
	return 0;
}

static void gzip_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gzip_sink *g = (struct gzip_sink *)b;

	while (len && !g->err) {
		/* zlib counts in unsigned int. */
		unsigned int n = len > (1U << 30) ? 1U << 30 : (unsigned int)len;

		g->z.next_in = (unsigned char *)(uintptr_t)data;
		g->z.avail_in = n;
		g->err = gzip_run(g, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

static int write_gzipped(const Wallprof__Pprof__Profile *msg, FILE *out)
{
	struct gzip_sink *g = calloc(1, sizeof(*g));
	int err;

	if (!g) {
		wp_error("out of memory making the pprof profile");
		return -ENOMEM;
	}
	g->base.append = gzip_append;
	g->out = out;
	/* 16 + window bits: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		wp_error("out of memory making the pprof profile");
		return -ENOMEM;
	}
	wallprof__pprof__profile__pack_to_buffer(msg, &g->base);
	err = g->err;
	if (!err)
		err = gzip_run(g, Z_FINISH);
	deflateEnd(&g->z);
	free(g);
	/*
	 * Whole chunks go straight out, so closing a file finds no error left
	 * to report; standard output's final check does report its own.
	 */
	if (err && out != stdout)
		wp_error("cannot write the pprof profile: %s", strerror(-err));
	return err;
}

static void pprof_release(struct pprof *pp)
{
	wp_strpool_free(pp->strings);
	wp_buf_release(&pp->quoted);
	wp_u64map_release(&pp->function_of);
	free(pp->functions);
	wp_stacks_free(pp->groups);
	wp_u64map_release(&pp->location_of);
	free(pp->locations);
	free(pp->first_line);
	free(pp->lines);
	wp_u64map_release(&pp->stack_at);
	free(pp->stack_locs);
	free(pp->samples);
	free(pp->sample_locs);
	free(pp->values);
	free(pp->labels);
	free(pp->label_ptrs);
	free(pp->nr_labels);
}

int wp_format_pprof(struct wp_view *v, FILE *out)
{
	Wallprof__Pprof__Profile msg = WALLPROF__PPROF__PROFILE__INIT;
	struct pprof pp = { .v = v };
	struct pprof_ptrs pt = { 0 };
	int err;

	/* Binary on a terminal helps nobody and may upset it. */
	if (isatty(fileno(out))) {
		wp_error("--format pprof writes a gzipped binary profile: give -o FILE or "
			 "redirect the output");
		return -EINVAL;
	}
	err = wp_strpool_new(&pp.strings);
	if (!err)
		err = wp_stacks_new(&pp.groups);
	/* Entry 0 of the string table is the empty string. */
	if (!err && wp_strpool_intern(pp.strings, "") != 0)
		err = -ENOMEM;
	if (!err)
		err = fill_header(&pp, &pt, &msg);
	if (!err)
		err = add_samples(&pp);
	if (!err)
		err = fill_mappings(&pp, &pt, &msg);
	if (!err)
		err = pprof_link(&pp, &pt, &msg);
	if (err == -ENOMEM)
		wp_error("out of memory making the pprof profile");
	if (!err)
		err = write_gzipped(&msg, out);
	pprof_ptrs_release(&pt);
	pprof_release(&pp);
	return err;
}
