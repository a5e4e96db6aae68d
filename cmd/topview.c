/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topview.c: wallprof top's full screen view, with ncurses.
 *
 * A thread of its own reads the keys and draws; the monitor's thread
 * hands it each interval's rows (copied, with their frames named there)
 * under a lock.  The recording's own signals stay blocked here, so that
 * the session's main thread takes them; q asks it to stop as a signal
 * would.  The terminal is given back as it was with endwin().
 */
#include <ctype.h>
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include "log.h"
#include "quote.h"
#include "timeline.h"
#include "topview.h"
#include "util.h"

#define FRAME_MAX 160

/* A row as shown: a thread, or a process's threads added up. */
struct vrow {
	struct wp_mon_row r;
	char frame[FRAME_MAX];	/* where it waits most, named */
	uint32_t threads;	/* process rows: how many */
	uint64_t frame_blocked_ns;	/* process rows: the blocked time of frame's thread */
};

/*
 * The columns right of COMM, which Left and Right scroll (PID, TID and
 * COMM stay, to tell the rows apart): the numbers' width, their names'
 * and the spaces before each, as batch mode prints them.  A number is
 * shown whole or not at all, since a cut one reads as another; the names
 * are left-aligned and may be cut at the edge.
 */
struct column {
	const char *name;
	int width;		/* negative: left-aligned */
	int gap;		/* spaces before */
};

static const struct column view_columns[] = {
	{ "ON%", 5, 1 },   { "RUN%", 5, 1 },  { "PRE%", 5, 1 },  { "BLK%", 5, 1 },
	{ "LOCK", 5, 1 },  { "IO", 5, 1 },    { "SLEEP", 5, 1 }, { "NET", 5, 1 },
	{ "OTHER", 5, 1 }, { "SW/s", 7, 1 },  { "WAKER", -20, 2 }, { "WAITS IN", 0, 1 },
};

#define NR_COLUMNS ARRAY_SIZE(view_columns)
#define CELL_SIZE WP_QUOTE_SIZE(FRAME_MAX)

enum sort_key { SORT_ON, SORT_WAIT_CPU, SORT_BLOCKED, SORT_SWITCHES, SORT_PID, SORT_KEYS };

static const char *const sort_names[SORT_KEYS] = {
	"on-CPU", "waiting for a CPU", "blocked", "switches", "pid",
};

struct top_view {
	pthread_t thread;
	pthread_mutex_t lock;
	bool running;
	/* under lock: the last interval */
	struct vrow *rows;
	size_t nr_rows, cap_rows;
	uint64_t index, len_ns, lost;
	bool fresh;
	/* the view's own */
	bool color, paused, processes, detail;
	enum sort_key sort;
	char filter[64];
	/*
	 * The selection is a thread (a process in process mode), not a line:
	 * the rows are sorted again at each interval.  sel_id is its TID (its
	 * PID in process mode), sel_pid its process's; selected is its line
	 * as last drawn, kept when it is gone.  The keys move it by sel_move
	 * lines at the next draw, from wherever the new order puts it.
	 */
	uint32_t sel_id, sel_pid;
	bool sel_valid;
	int64_t sel_move;
	size_t selected, top;
	unsigned int first_column;	/* the first of view_columns[] shown */
	size_t detail_scroll;		/* the Enter view's first line shown */
	/*
	 * The bottom line: what the s key did, or the last message logged.
	 * Under its own lock: messages come from any thread, some of them
	 * holding the other one (naming frames can log).
	 */
	pthread_mutex_t status_lock;
	char status[256];
	/* Warnings and errors, printed again once the screen is gone. */
	struct {
		enum wp_log_level level;
		char msg[256];
	} said[4];
	unsigned int nr_said, dropped_said;
	SCREEN *screen;
};

/* The log sink has no argument: the one view. */
static struct top_view *log_view;

static double pct(uint64_t ns, uint64_t of)
{
	return of ? 100.0 * (double)ns / (double)of : 0;
}

static uint64_t sort_value(const struct vrow *v, enum sort_key k)
{
	switch (k) {
	case SORT_ON:
		return v->r.on_ns;
	case SORT_WAIT_CPU:
		return v->r.runnable_ns + v->r.preempted_ns;
	case SORT_BLOCKED:
		return wp_mon_row_blocked(&v->r);
	case SORT_SWITCHES:
		return v->r.switches;
	default:
		return UINT64_MAX - v->r.pid;
	}
}

static enum sort_key cur_sort;

static int cmp_vrow(const void *a, const void *b)
{
	const struct vrow *x = a, *y = b;
	uint64_t kx = sort_value(x, cur_sort), ky = sort_value(y, cur_sort);

	if (kx != ky)
		return kx < ky ? 1 : -1;
	return x->r.tid < y->r.tid ? -1 : x->r.tid > y->r.tid;
}

int top_view_interval(struct top *t, const struct wp_mon_snapshot *s)
{
	struct top_view *v = t->view;

	if (t->quit)
		return 1;
	pthread_mutex_lock(&v->lock);
	if (!v->paused && !WP_GROW(v->rows, v->cap_rows, s->nr_rows + 1)) {
		for (size_t i = 0; i < s->nr_rows; i++) {
			struct vrow *r = &v->rows[i];

			r->r = s->rows[i];
			r->threads = 1;
			r->frame[0] = '\0';
			if (r->r.wait_stack >= 0)
				wp_monitor_wait_frame(t->mon, r->r.stacks[r->r.wait_stack].stack,
						      r->frame, sizeof(r->frame));
		}
		v->nr_rows = s->nr_rows;
		v->index = s->index;
		v->len_ns = s->end_ns - s->start_ns;
		v->lost = s->lost;
		v->fresh = true;
	}
	pthread_mutex_unlock(&v->lock);
	t->shown++;
	return 0;
}

/*
 * A thread's wakers added to its process row's: the same waker's time
 * adds up, the heaviest are kept (a process's Enter view is all its
 * threads', not its first thread's).
 */
static void merge_wakers(struct wp_mon_row *p, const struct wp_mon_row *r)
{
	for (unsigned int i = 0; i < r->nr_wakers && i < WP_MON_WAKERS; i++) {
		const struct wp_mon_waker *w = &r->wakers[i];
		unsigned int j = 0, light = 0;

		for (; j < p->nr_wakers; j++) {
			if (p->wakers[j].kind == w->kind && p->wakers[j].tid == w->tid &&
			    p->wakers[j].pid == w->pid)
				break;
			if (p->wakers[j].ns < p->wakers[light].ns)
				light = j;
		}
		if (j < p->nr_wakers) {
			p->wakers[j].ns += w->ns;
			p->wakers[j].count += w->count;
		} else if (p->nr_wakers < WP_MON_WAKERS) {
			p->wakers[p->nr_wakers++] = *w;
		} else if (w->ns > p->wakers[light].ns) {
			p->wakers[light] = *w;
		}
	}
}

/* The same for the stacks: one stack in one state (and kind) adds up. */
static void merge_stacks(struct wp_mon_row *p, const struct wp_mon_row *r)
{
	for (unsigned int i = 0; i < 2 * WP_MON_STACKS; i++) {
		const struct wp_mon_stack *s = &r->stacks[i];
		unsigned int j = 0, light = 0;

		if (!s->count)
			continue;
		for (; j < 2 * WP_MON_STACKS; j++) {
			const struct wp_mon_stack *q = &p->stacks[j];

			if (q->count && q->stack == s->stack && q->state == s->state &&
			    q->kind == s->kind)
				break;
			if (!q->count || (p->stacks[light].count && q->ns < p->stacks[light].ns))
				light = j;
		}
		if (j < 2 * WP_MON_STACKS) {
			p->stacks[j].ns += s->ns;
			p->stacks[j].count += s->count;
		} else if (!p->stacks[light].count || s->ns > p->stacks[light].ns) {
			p->stacks[light] = *s;
		}
	}
	/* Their indexes in the thread's row mean nothing in the process's. */
	p->wait_stack = -1;
	for (unsigned int j = 0; j < 2 * WP_MON_STACKS; j++)
		p->stacks[j].waker = -1;
}

/* A process row: its threads added up, its most waited-in frame the heaviest thread's. */
static size_t merge_processes(struct vrow *rows, size_t n)
{
	size_t out = 0;

	cur_sort = SORT_PID;
	qsort(rows, n, sizeof(*rows), cmp_vrow);
	for (size_t i = 0; i < n; i++) {
		struct vrow *p = out ? &rows[out - 1] : NULL;
		const struct wp_mon_row *r = &rows[i].r;

		if (p && p->r.pid == r->pid) {
			/* The thread blocked longest, not the threads so far added up. */
			if (wp_mon_row_blocked(r) > p->frame_blocked_ns && rows[i].frame[0]) {
				memcpy(p->frame, rows[i].frame, sizeof(p->frame));
				p->frame_blocked_ns = wp_mon_row_blocked(r);
			}
			p->r.on_ns += r->on_ns;
			p->r.runnable_ns += r->runnable_ns;
			p->r.runnable_estimated_ns += r->runnable_estimated_ns;
			p->r.runnable_unknown_ns += r->runnable_unknown_ns;
			p->r.preempted_ns += r->preempted_ns;
			for (int k = 0; k < WP_BLOCK_KINDS; k++)
				p->r.blocked_ns[k] += r->blocked_ns[k];
			p->r.switches += r->switches;
			merge_wakers(&p->r, r);
			merge_stacks(&p->r, r);
			if (r->tid == r->pid)
				memcpy(p->r.comm, r->comm, sizeof(p->r.comm));
			p->threads++;
			continue;
		}
		rows[out] = rows[i];
		rows[out].r.tid = rows[out].r.pid;
		rows[out].frame_blocked_ns = rows[i].frame[0] ? wp_mon_row_blocked(r) : 0;
		out++;
	}
	return out;
}

static void put(int y, int x, const char *s, int attr)
{
	if (attr)
		attron(attr);
	mvaddnstr(y, x, s, COLS - x > 0 ? COLS - x : 0);
	if (attr)
		attroff(attr);
}

/* Columns from first_column on after the fixed part, as many as fit in cols. */
static void join_columns(char *line, size_t size, const char *fixed, char cells[][CELL_SIZE],
			 unsigned int first, int cols)
{
	size_t len = (size_t)snprintf(line, size, "%s", fixed);

	for (unsigned int i = first; i < NR_COLUMNS && len + 1 < size; i++) {
		const struct column *c = &view_columns[i];
		size_t start = len + (size_t)c->gap;
		int n;

		if (c->width > 0 ? start + (size_t)c->width > (size_t)cols : start >= (size_t)cols)
			break;
		n = snprintf(line + len, size - len, "%*s%*s", c->gap, "", c->width, cells[i]);
		len = n < 0 ? len : len + (size_t)n >= size ? size - 1 : len + (size_t)n;
	}
}

static void draw_header(const struct top_view *v, int y, int attr)
{
	char fixed[64], cells[NR_COLUMNS][CELL_SIZE], line[NR_COLUMNS * CELL_SIZE];

	snprintf(fixed, sizeof(fixed), "%7s %7s %-15s", "PID", v->processes ? "THREADS" : "TID",
		 "COMM");
	for (unsigned int i = 0; i < NR_COLUMNS; i++)
		snprintf(cells[i], sizeof(cells[i]), "%s", view_columns[i].name);
	join_columns(line, sizeof(line), fixed, cells, v->first_column, COLS);
	mvhline(y, 0, ' ', COLS);
	put(y, 0, line, attr);
}

/* A row's cells, in the order of view_columns[]. */
static void row_cells(const struct vrow *vr, uint64_t len, char cells[][CELL_SIZE])
{
	static const enum wp_block_kind kinds[] = {
		WP_BLOCK_LOCK, WP_BLOCK_IO, WP_BLOCK_SLEEP, WP_BLOCK_NET, WP_BLOCK_OTHER,
	};
	const struct wp_mon_row *r = &vr->r;
	double secs = (double)len / 1e9;
	unsigned int c = 0;
	char wb[96];

	snprintf(cells[c++], CELL_SIZE, "%.1f", pct(r->on_ns, len));
	wp_mon_runnable_pct(r, len, cells[c++], CELL_SIZE);
	snprintf(cells[c++], CELL_SIZE, "%.1f", pct(r->preempted_ns, len));
	snprintf(cells[c++], CELL_SIZE, "%.1f", pct(wp_mon_row_blocked(r), len));
	for (unsigned int k = 0; k < ARRAY_SIZE(kinds); k++)
		snprintf(cells[c++], CELL_SIZE, "%.1f", pct(r->blocked_ns[kinds[k]], len));
	snprintf(cells[c++], CELL_SIZE, "%.0f", secs > 0 ? (double)r->switches / secs : 0);
	snprintf(cells[c++], CELL_SIZE, "%s",
		 r->nr_wakers ? wp_mon_waker_name(&r->wakers[0], wb, sizeof(wb)) : "-");
	if (vr->frame[0])
		wp_quote(cells[c], CELL_SIZE, vr->frame, WP_QUOTE_TEXT);
	else
		snprintf(cells[c], CELL_SIZE, "-");
}

static void draw_row(const struct top_view *v, int y, const struct vrow *vr, uint64_t len,
		     int attr)
{
	const struct wp_mon_row *r = &vr->r;
	char fixed[128], q[WP_QUOTE_SIZE(16)], cells[NR_COLUMNS][CELL_SIZE];
	char line[NR_COLUMNS * CELL_SIZE];

	snprintf(fixed, sizeof(fixed), "%7" PRIu32 " %7" PRIu32 " %-15s", r->pid,
		 v->processes ? vr->threads : r->tid, wp_quote(q, sizeof(q), r->comm, WP_QUOTE_TEXT));
	row_cells(vr, len, cells);
	join_columns(line, sizeof(line), fixed, cells, v->first_column, COLS);
	if (attr)
		mvhline(y, 0, ' ', COLS);
	put(y, 0, line, attr);
}

/*
 * The Enter view's body, a line at a time: those from first on go to the
 * screen lines from y down to bottom (excluded), so that it scrolls.
 */
struct body {
	int y, bottom;
	size_t line, first;
};

static void body_put(struct body *o, int x, const char *s, int attr)
{
	if (o->line++ >= o->first && o->y < o->bottom)
		put(o->y++, x, s, attr);
}

/*
 * The states by the row's time in them, most first: a thread blocked 80%
 * of the time is to see its blocked stacks, not its on-CPU ones, on the
 * first screen.
 */
static void states_by_time(const struct wp_mon_row *r, enum wp_mon_state order[4])
{
	uint64_t ns[4];

	ns[WP_MON_ON] = r->on_ns;
	ns[WP_MON_BLOCKED] = wp_mon_row_blocked(r);
	ns[WP_MON_RUNNABLE] = r->runnable_ns;
	ns[WP_MON_PREEMPTED] = r->preempted_ns;
	for (int i = 0; i < 4; i++) {
		int j = i;

		for (; j > 0 && ns[order[j - 1]] < ns[i]; j--)
			order[j] = order[j - 1];
		order[j] = (enum wp_mon_state)i;
	}
}

/* A stack: its share and state, then its frames, innermost first. */
static void body_stack(struct top *t, struct body *o, const struct wp_mon_stack *s, uint64_t len)
{
	static const char *const states[] = { "on-CPU", "blocked", "runnable", "preempted" };
	char line[512], qn[WP_QUOTE_SIZE(200)];
	const char *names[12];
	bool kernel[12];
	unsigned int n;

	body_put(o, 0, "", 0);
	snprintf(line, sizeof(line), "%6.1f%%  %s%s%s", pct(s->ns, len),
		 states[s->state < 4 ? s->state : 0], s->state == WP_MON_BLOCKED ? " in " : "",
		 s->state == WP_MON_BLOCKED ? wp_block_kind_name(s->kind) : "");
	body_put(o, 0, line, A_BOLD);
	n = wp_monitor_frames(t->mon, s->stack, names, kernel, 12);
	if (!n)
		body_put(o, 10, s->stack == WP_NO_STACK ? "[no stack]" : "[unnamed]", 0);
	for (unsigned int j = 0; j < n; j++) {
		snprintf(line, sizeof(line), "%s%s", wp_quote(qn, sizeof(qn), names[j], WP_QUOTE_TEXT),
			 kernel[j] ? " [k]" : "");
		body_put(o, 10, line, 0);
	}
}

static int cmp_stack_ns(const void *a, const void *b)
{
	const struct wp_mon_stack *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* The wakers, then the stacks, state by state in order of time, heaviest first. */
static void detail_body(struct top *t, const struct wp_mon_row *r, uint64_t len, struct body *o)
{
	struct wp_mon_stack stacks[2 * WP_MON_STACKS];
	enum wp_mon_state order[4];
	char line[512], wb[96];

	for (unsigned int i = 0; i < r->nr_wakers; i++) {
		snprintf(line, sizeof(line), "  woken by %-24s %6.1f%% of the time, %" PRIu64
			 " times", wp_mon_waker_name(&r->wakers[i], wb, sizeof(wb)),
			 pct(r->wakers[i].ns, len), r->wakers[i].count);
		body_put(o, 0, line, 0);
	}
	/* A process row's stacks are its threads' merged, in no order. */
	memcpy(stacks, r->stacks, sizeof(stacks));
	qsort(stacks, ARRAY_SIZE(stacks), sizeof(stacks[0]), cmp_stack_ns);
	states_by_time(r, order);
	for (int k = 0; k < 4; k++)
		for (unsigned int i = 0; i < ARRAY_SIZE(stacks); i++) {
			const struct wp_mon_stack *s = &stacks[i];

			if (s->state != order[k] || !s->count || (!s->ns && s->state != WP_MON_ON))
				continue;
			body_stack(t, o, s, len);
		}
}

/*
 * A row's stacks from line y: a heading that stays, and the body below
 * it, scrolled by detail_scroll lines (kept within the body).
 */
static void draw_detail(struct top *t, const struct vrow *row, uint64_t len, int y)
{
	struct top_view *v = t->view;
	const struct wp_mon_row *r = &row->r;
	char line[512], who[64], q[WP_QUOTE_SIZE(16)], run[16];
	struct body count = { 0 }, o = { y + 1, LINES - 1, 0, 0 };
	size_t page = LINES - 1 > y + 1 ? (size_t)(LINES - 2 - y) : 0;

	if (v->processes)
		snprintf(who, sizeof(who), "Process %" PRIu32 " (%" PRIu32 " threads)", r->pid,
			 row->threads);
	else
		snprintf(who, sizeof(who), "Thread %" PRIu32 "/%" PRIu32, r->pid, r->tid);
	/* The table's names, so that the figures fit 80 columns. */
	snprintf(line, sizeof(line), "%s %s: ON%% %.1f  RUN%% %s  PRE%% %.1f  BLK%% %.1f", who,
		 wp_quote(q, sizeof(q), r->comm, WP_QUOTE_TEXT), pct(r->on_ns, len),
		 wp_mon_runnable_pct(r, len, run, sizeof(run)), pct(r->preempted_ns, len),
		 pct(wp_mon_row_blocked(r), len));
	put(y, 0, line, A_BOLD);
	/* Counted first, so that End and a shorter interval leave no page half empty. */
	count.first = SIZE_MAX;
	detail_body(t, r, len, &count);
	if (v->detail_scroll + page > count.line)
		v->detail_scroll = count.line > page ? count.line - page : 0;
	o.first = v->detail_scroll;
	detail_body(t, r, len, &o);
}

/* The Enter view of the row selected, or why there is none. */
static void draw_selected(struct top *t, const struct vrow *rows, size_t n, uint64_t len, int y)
{
	struct top_view *v = t->view;
	char line[128];

	for (size_t i = 0; i < n; i++)
		if (rows[i].r.tid == v->sel_id) {
			draw_detail(t, &rows[i], len, y);
			return;
		}
	/* A thread that ended leaves the rows an interval later: say so, not a blank view. */
	snprintf(line, sizeof(line), "%s %" PRIu32 " is not in this interval: it has ended.",
		 v->processes ? "Process" : "Thread", v->sel_id);
	put(y, 0, line, A_BOLD);
}

/* The rows the filter keeps, moved to the front: how many. */
static size_t keep_filtered(const struct top_view *v, struct vrow *rows, size_t n)
{
	size_t out = 0;

	if (!v->filter[0])
		return n;
	for (size_t i = 0; i < n; i++)
		if (strstr(rows[i].r.comm, v->filter))
			rows[out++] = rows[i];
	return out;
}

/*
 * Put the selection on its thread's line in the new order (on the same
 * line when the thread is gone), move it as the keys asked, and scroll
 * so that it is among the page lines shown.
 */
static void place_selection(struct top_view *v, const struct vrow *rows, size_t n, size_t page)
{
	size_t pos = v->selected;
	int64_t to;

	if (!n)
		return;
	for (size_t i = 0; v->sel_valid && i < n; i++)
		if (rows[i].r.tid == v->sel_id) {
			pos = i;
			break;
		}
	to = (int64_t)(pos < n ? pos : n - 1) + v->sel_move;
	pos = to < 0 ? 0 : to >= (int64_t)n ? n - 1 : (size_t)to;
	v->sel_move = 0;
	v->selected = pos;
	v->sel_id = rows[pos].r.tid;
	v->sel_pid = rows[pos].r.pid;
	v->sel_valid = true;
	if (pos < v->top)
		v->top = pos;
	if (page && pos >= v->top + page)
		v->top = pos - page + 1;
	if (v->top + page > n)
		v->top = n > page ? n - page : 0;
}

/* The lines of rows a page of the table holds, below its header at y. */
static size_t table_page(int y)
{
	return LINES - 2 > y ? (size_t)(LINES - 2 - y) : 0;
}

/* The table from line y: its header, then the rows from top down. */
static void draw_table(struct top_view *v, struct vrow *rows, size_t n, uint64_t len, int y)
{
	int hdr = v->color ? COLOR_PAIR(1) | A_BOLD : A_REVERSE;

	n = keep_filtered(v, rows, n);
	cur_sort = v->sort;
	qsort(rows, n, sizeof(*rows), cmp_vrow);
	place_selection(v, rows, n, table_page(y));
	draw_header(v, y++, hdr);
	for (size_t i = v->top; i < n && y < LINES - 1; i++) {
		int attr = 0;

		if (i == v->selected)
			attr = A_REVERSE;
		else if (v->color && pct(rows[i].r.on_ns, len) >= 50)
			attr = COLOR_PAIR(2);
		draw_row(v, y++, &rows[i], len, attr);
	}
	if (!n && y < LINES - 1)
		put(y, 0, v->filter[0] ? "  no row matches the filter (/ and Enter: all rows)" :
		    "  no thread seen yet", 0);
}

static void draw(struct top *t)
{
	struct top_view *v = t->view;
	struct vrow *rows;
	size_t n;
	uint64_t len;
	char line[512];
	int y = 0;

	pthread_mutex_lock(&v->lock);
	n = v->nr_rows;
	len = v->len_ns;
	rows = malloc((n ? n : 1) * sizeof(*rows));
	if (rows)
		memcpy(rows, v->rows, n * sizeof(*rows));
	v->fresh = false;
	snprintf(line, sizeof(line), "wallprof top - interval %" PRIu64 ", %.1f s%s%s - %s, "
		 "by %s%s%s%s", v->index, (double)len / 1e9, v->paused ? " - PAUSED" : "",
		 v->lost ? " - records lost" : "", v->processes ? "processes" : "threads",
		 sort_names[v->sort], v->filter[0] ? ", filter '" : "", v->filter,
		 v->filter[0] ? "'" : "");
	pthread_mutex_unlock(&v->lock);
	erase();
	if (!rows) {
		put(0, 0, "out of memory", 0);
		refresh();
		return;
	}
	put(y++, 0, line, A_BOLD);
	/* The keys of the view shown, in 80 columns: a user there needs Left and Right most. */
	put(y++, 0, v->detail ? "Esc, Enter or q back  Up Down PgUp PgDn Home End scroll  "
	    "p pause  s save" : "q quit  p pause  H procs  <> sort  / filter  Enter stacks  "
	    "s save  <- -> columns", 0);
	if (v->processes)
		n = merge_processes(rows, n);
	if (v->detail)
		draw_selected(t, rows, n, len, y);
	else
		draw_table(v, rows, n, len, y);
	pthread_mutex_lock(&v->status_lock);
	memcpy(line, v->status, sizeof(v->status));
	pthread_mutex_unlock(&v->status_lock);
	if (line[0])
		put(LINES - 1, 0, line, A_BOLD);
	refresh();
	free(rows);
}

/* Read a filter at the bottom line; Escape leaves it as it was. */
static void read_filter(struct top_view *v)
{
	char buf[sizeof(v->filter)] = "";
	size_t len = 0;
	int c;

	timeout(-1);
	for (;;) {
		mvhline(LINES - 1, 0, ' ', COLS);
		mvprintw(LINES - 1, 0, "filter (name contains): %s", buf);
		refresh();
		c = getch();
		if (c == '\n' || c == KEY_ENTER || c == '\r')
			break;
		if (c == 27) {
			timeout(200);
			return;
		}
		if ((c == KEY_BACKSPACE || c == 127 || c == 8) && len)
			buf[--len] = '\0';
		else if (c >= 32 && c < 127 && len + 1 < sizeof(buf))
			buf[len++] = (char)c, buf[len] = '\0';
	}
	timeout(200);
	pthread_mutex_lock(&v->lock);
	memcpy(v->filter, buf, sizeof(buf));
	v->selected = v->top = 0;
	pthread_mutex_unlock(&v->lock);
}

/* Up, Down, PgUp, PgDn, Home, End: the selection moves at the next draw. */
static void move_key(struct top_view *v, int c)
{
	int64_t page = (int64_t)table_page(2);

	switch (c) {
	case KEY_UP:
		v->sel_move--;
		break;
	case KEY_DOWN:
		v->sel_move++;
		break;
	case KEY_PPAGE:
		v->sel_move -= page > 1 ? page : 1;
		break;
	case KEY_NPAGE:
		v->sel_move += page > 1 ? page : 1;
		break;
	case KEY_HOME:
		v->sel_move = INT64_MIN / 2;
		break;
	default:
		v->sel_move = INT64_MAX / 2;
		break;
	}
}

/* The same keys in the Enter view: its lines scroll (drawing keeps them within it). */
static void scroll_key(struct top_view *v, int c)
{
	size_t page = table_page(2);

	page = page > 1 ? page : 1;
	switch (c) {
	case KEY_UP:
		v->detail_scroll -= v->detail_scroll > 0;
		break;
	case KEY_DOWN:
		v->detail_scroll++;
		break;
	case KEY_PPAGE:
		v->detail_scroll -= v->detail_scroll > page ? page : v->detail_scroll;
		break;
	case KEY_NPAGE:
		v->detail_scroll += page;
		break;
	case KEY_HOME:
		v->detail_scroll = 0;
		break;
	default:
		v->detail_scroll = SIZE_MAX / 2;
		break;
	}
}

static void *view_main(void *arg)
{
	struct top *t = arg;
	struct top_view *v = t->view;

	timeout(200);
	while (!t->quit) {
		int c = getch();
		bool redraw = c != ERR;

		switch (c) {
		case 'q':
			if (v->detail) {
				v->detail = false;
				break;
			}
			t->quit_key = true;
			t->quit = true;
			t->stop();
			break;
		case 'p':
			v->paused = !v->paused;
			break;
		case 'H':
			/* From a thread to its process, from a process to its main thread. */
			v->processes = !v->processes;
			v->sel_id = v->sel_pid;
			break;
		case '<':
			v->sort = (v->sort + SORT_KEYS - 1) % SORT_KEYS;
			break;
		case '>':
			v->sort = (v->sort + 1) % SORT_KEYS;
			break;
		case '/':
		case 'f':
			read_filter(v);
			break;
		case '\n':
		case '\r':
		case KEY_ENTER:
			v->detail = !v->detail && v->sel_valid;
			v->detail_scroll = 0;
			break;
		case 27:
			v->detail = false;
			break;
		case KEY_UP:
		case KEY_DOWN:
		case KEY_PPAGE:
		case KEY_NPAGE:
		case KEY_HOME:
		case KEY_END:
			if (v->detail)
				scroll_key(v, c);
			else
				move_key(v, c);
			break;
		case KEY_LEFT:
			if (v->first_column)
				v->first_column--;
			break;
		case KEY_RIGHT:
			/* The last column stays in view: never a table of names alone. */
			if (v->first_column + 1 < NR_COLUMNS)
				v->first_column++;
			break;
		case 's':
			/* The session writes it; top_view_saved() names the file. */
			pthread_mutex_lock(&v->status_lock);
			if (t->keep > 0) {
				kill(getpid(), SIGUSR1);
				snprintf(v->status, sizeof(v->status), "saving the last %.0f s...",
					 t->keep);
			} else {
				snprintf(v->status, sizeof(v->status), "nothing kept to save (--keep 0)");
			}
			pthread_mutex_unlock(&v->status_lock);
			break;
		case KEY_RESIZE:
			break;
		default:
			break;
		}
		if (redraw || v->fresh)
			draw(t);
	}
	return NULL;
}

void top_view_saved(struct top *t, const char *name)
{
	struct top_view *v = t->view;

	if (!v)
		return;
	pthread_mutex_lock(&v->status_lock);
	snprintf(v->status, sizeof(v->status), "saved the last %.0f s (at most) to '%s': "
		 "wallprof report -i reads it", t->keep, wp_quoted(name));
	pthread_mutex_unlock(&v->status_lock);
	v->fresh = true;
}

/*
 * Messages while the screen is up: on its bottom line, since writing to
 * the terminal under the screen would garble it; warnings and errors kept
 * to be printed again when it is gone.
 */
static void view_log(enum wp_log_level level, const char *msg)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	struct top_view *v = log_view;

	pthread_mutex_lock(&v->status_lock);
	snprintf(v->status, sizeof(v->status), "%s%s", prefix[level], msg);
	if (level <= WP_LOG_WARN) {
		if (v->nr_said < ARRAY_SIZE(v->said)) {
			v->said[v->nr_said].level = level;
			snprintf(v->said[v->nr_said++].msg, sizeof(v->said[0].msg), "%s", msg);
		} else
			v->dropped_said++;
	}
	pthread_mutex_unlock(&v->status_lock);
	v->fresh = true;
}

int top_view_start(struct top *t, enum wp_color_mode color)
{
	struct top_view *v = calloc(1, sizeof(*v));
	const char *term = getenv("TERM");
	sigset_t sigs;
	int err;

	if (!v)
		return -ENOMEM;
	if (!term || !*term) {
		wp_error("TERM is not set, so the full screen view cannot drive the terminal: use "
			 "-b for batch mode");
		free(v);
		return -ENOTTY;
	}
	if (!strcmp(term, "dumb")) {
		wp_error("a dumb terminal (TERM=dumb) cannot place text on the screen: use -b for "
			 "batch mode");
		free(v);
		return -ENOTTY;
	}
	v->screen = newterm(NULL, stdout, stdin);
	if (!v->screen) {
		wp_error("cannot drive the terminal '%s': use -b for batch mode", wp_quoted(term));
		free(v);
		return -ENOTTY;
	}
	if (!tigetstr("cup") || tigetstr("cup") == (char *)-1) {
		endwin();
		delscreen(v->screen);
		wp_error("the terminal '%s' cannot place text on the screen: use -b for batch mode",
			 wp_quoted(term));
		free(v);
		return -ENOTTY;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	/*
	 * Escape leaves the Enter view and the filter: not after ncurses'
	 * default second of waiting for the rest of a key's sequence, which
	 * a terminal sends at once.  As htop does.
	 */
	set_escdelay(25);
	curs_set(0);
	v->color = color != WP_COLOR_NEVER && has_colors() &&
		   (color == WP_COLOR_ALWAYS || !getenv("NO_COLOR") || !*getenv("NO_COLOR"));
	if (v->color) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_CYAN);
		init_pair(2, COLOR_RED, -1);
	}
	pthread_mutex_init(&v->lock, NULL);
	pthread_mutex_init(&v->status_lock, NULL);
	t->view = v;
	log_view = v;
	wp_log_set_sink(view_log);
	/* The recording's signals go to its main thread, never to the view's. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	draw(t);
	err = pthread_create(&v->thread, NULL, view_main, t);
	if (err) {
		top_view_end(t);
		wp_error("cannot start the view: %s", strerror(err));
		return -err;
	}
	v->running = true;
	return 0;
}

void top_view_end(struct top *t)
{
	struct top_view *v = t->view;

	if (!v)
		return;
	t->quit = true;
	if (v->running)
		pthread_join(v->thread, NULL);
	endwin();
	delscreen(v->screen);
	wp_log_set_sink(NULL);
	log_view = NULL;
	/* What was said while the screen was up, where it stays. */
	for (unsigned int i = 0; i < v->nr_said; i++)
		wp_log(v->said[i].level, "%s", v->said[i].msg);
	if (v->dropped_said)
		wp_warn("and %u more messages like these", v->dropped_said);
	pthread_mutex_destroy(&v->status_lock);
	pthread_mutex_destroy(&v->lock);
	free(v->rows);
	free(v);
	t->view = NULL;
}
