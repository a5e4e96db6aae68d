// SPDX-License-Identifier: GPL-2.0-or-later
/* stackgate.c: a budget of switch-out stacks per CPU (see stackgate.h). */
#include <errno.h>
#include <stdlib.h>

#include "stackgate.h"

#define MS 1000000ULL
/*
 * A rate is measured over at least this long between two counts (the
 * first one sooner, looked for more often: every stack is taken until
 * then, which in a storm is thousands of them; but only once the count
 * is FIRST_MIN_SHARE of what the budget allows a second, so that a
 * program's first few switches, bunched as it starts, are not taken
 * for a storm: 8 switch-outs in 2 ms read 4000 a second).  A closed slot
 * lasts 10-30 ms; an open one at most as long, shorter in a storm, so that
 * one slot never brings a lump of stacks.
 */
#define RATE_SPAN_NS (50 * MS)
#define FIRST_SPAN_NS (2 * MS)
#define FIRST_POLL_NS (2 * MS)
#define FIRST_MIN_SHARE 100	/* budget / 100: 40 switch-outs at 4000 a second */
#define FIRST_MIN 16
#define POLL_NS (10 * MS)
#define SLOT_MIN_NS (10 * MS)
#define SLOT_SPREAD_NS (20 * MS)
#define SLOT_MEAN_NS (SLOT_MIN_NS + SLOT_SPREAD_NS / 2)
#define OPEN_MIN_NS (MS / 2)
#define LEADER_MARGIN 1.25

struct gate_cpu {
	bool open;
	uint64_t slot_end_ns;
	uint64_t base_count, base_ns;	/* the count a rate is measured from, and as of when */
	bool have_base, measured;
	double rate;			/* switch-outs a second */
	uint64_t closed_ns;		/* time spent closed */
	uint64_t state_since_ns;
};

struct wp_stackgate {
	unsigned int nr_cpus;
	uint64_t budget;
	uint64_t wakeup_rate;		/* 0: the wake-ups stay on */
	uint64_t start_ns;
	uint64_t rng;
	int error;
	/*
	 * The CPU whose closed slots close the wake-ups: the fastest above
	 * their rate, or -1.  Another takes over only when faster by
	 * LEADER_MARGIN, so that two CPUs storming alike do not hand it back
	 * and forth (each hand-over may turn the tracepoints).
	 */
	int leader;
	bool wakeups_off;
	uint64_t wakeups_off_ns, wakeups_off_since;	/* time they were off, and since when */
	struct gate_cpu cpus[];
};

/* xorshift64*: enough randomness for slot lengths and draws. */
static uint64_t next_random(struct wp_stackgate *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545F4914F6CDD1DULL;
}

/* A uniform draw in [0, 1). */
static double next_unit(struct wp_stackgate *g)
{
	return (double)(next_random(g) >> 11) / (double)(1ULL << 53);
}

int wp_stackgate_new(unsigned int nr_cpus, uint64_t budget, uint64_t wakeup_rate,
		     uint64_t now_ns, struct wp_stackgate **out)
{
	struct wp_stackgate *g;

	if (!budget || !nr_cpus)
		return -EINVAL;
	g = calloc(1, sizeof(*g) + nr_cpus * sizeof(g->cpus[0]));
	if (!g)
		return -ENOMEM;
	g->nr_cpus = nr_cpus;
	g->budget = budget;
	g->wakeup_rate = wakeup_rate;
	g->start_ns = now_ns;
	g->rng = now_ns ^ 0x9E3779B97F4A7C15ULL;
	if (!g->rng)
		g->rng = 1;
	g->leader = -1;
	for (unsigned int i = 0; i < nr_cpus; i++) {
		/* Open until a rate is known: the events start on. */
		g->cpus[i].open = true;
		g->cpus[i].state_since_ns = now_ns;
	}
	*out = g;
	return 0;
}

static void keep_error(struct wp_stackgate *g, int err)
{
	if (err && !g->error)
		g->error = err;
}

/* The wake-up tracepoints go off or on, on every CPU. */
static void set_wakeups_off(struct wp_stackgate *g, bool off, uint64_t now_ns,
			    const struct wp_stackgate_ops *ops, void *arg)
{
	if (g->wakeups_off == off)
		return;
	g->wakeups_off = off;
	if (off)
		g->wakeups_off_since = now_ns;
	else
		g->wakeups_off_ns += now_ns - g->wakeups_off_since;
	keep_error(g, ops->wakeups(!off, now_ns, arg));
}

/*
 * A slot: the stacks open or closed, and on the leader the wake-ups with
 * them, on before the stacks and off after.
 */
static void set_state(struct wp_stackgate *g, unsigned int cpu, bool open, uint64_t now_ns,
		      const struct wp_stackgate_ops *ops, void *arg)
{
	struct gate_cpu *c = &g->cpus[cpu];
	bool leads = g->leader == (int)cpu;

	if (leads && open)
		set_wakeups_off(g, false, now_ns, ops, arg);
	if (c->open != open) {
		if (!c->open)
			c->closed_ns += now_ns - c->state_since_ns;
		c->state_since_ns = now_ns;
		c->open = open;
		keep_error(g, ops->stacks(cpu, open, arg));
	}
	if (leads && !open)
		set_wakeups_off(g, true, now_ns, ops, arg);
}

/*
 * Which CPU leads the wake-ups, from the rates just measured, and the
 * wake-ups as its slot has them: off in its closed slots, on otherwise.
 * One CPU's slots, not every storming CPU's (off while any is closed
 * would leave them on only where all are open at once: the product of
 * their shares, next to nothing on a many-CPU server in a storm); the
 * fastest's, whose share (b / r)^2 is the smallest of them, since it is
 * the CPU whose switches the tracepoints cost most.
 */
static void choose_leader(struct wp_stackgate *g, uint64_t now_ns,
			  const struct wp_stackgate_ops *ops, void *arg)
{
	int best = -1;

	for (unsigned int i = 0; g->wakeup_rate && i < g->nr_cpus; i++) {
		const struct gate_cpu *c = &g->cpus[i];

		if (c->measured && c->rate > (double)g->wakeup_rate &&
		    (best < 0 || c->rate > g->cpus[best].rate))
			best = (int)i;
	}
	if (best >= 0 && g->leader >= 0 && best != g->leader) {
		const struct gate_cpu *l = &g->cpus[g->leader];

		if (l->rate > (double)g->wakeup_rate &&
		    g->cpus[best].rate < l->rate * LEADER_MARGIN)
			best = g->leader;
	}
	g->leader = best;
	set_wakeups_off(g, best >= 0 && !g->cpus[best].open, now_ns, ops, arg);
}

/* A uniform draw of a length in [len / 2, len * 3 / 2). */
static uint64_t spread(struct wp_stackgate *g, uint64_t len)
{
	return len / 2 + (len ? next_random(g) % len : 0);
}

/*
 * The next slot of a CPU switching out at rate r against budget b: all
 * open while r <= b.  Above, open a share (b / r)^2 of the time, which
 * keeps b * b / r stacks a second: the harder the storm, the fewer stacks
 * it needs, and the less they cost it.  An open slot lasts 20 ms * b / r
 * (at least 0.5 ms), so that it holds some 0.02 b stacks.
 */
static void next_slot(struct wp_stackgate *g, unsigned int cpu, uint64_t now_ns,
		      const struct wp_stackgate_ops *ops, void *arg)
{
	struct gate_cpu *c = &g->cpus[cpu];
	double f = c->rate > (double)g->budget ? (double)g->budget / c->rate : 1.0;
	double share = f * f, open_len, p;

	if (f >= 1.0) {
		c->slot_end_ns = now_ns + SLOT_MIN_NS + next_random(g) % SLOT_SPREAD_NS;
		set_state(g, cpu, true, now_ns, ops, arg);
		return;
	}
	open_len = 20.0 * MS * f;
	if (open_len < OPEN_MIN_NS)
		open_len = OPEN_MIN_NS;
	/* Open slots of length o, closed ones of mean m: p o / (p o + (1 - p) m) = share. */
	p = share * SLOT_MEAN_NS / (open_len + share * (SLOT_MEAN_NS - open_len));
	if (next_unit(g) < p) {
		c->slot_end_ns = now_ns + spread(g, (uint64_t)open_len);
		set_state(g, cpu, true, now_ns, ops, arg);
	} else {
		c->slot_end_ns = now_ns + SLOT_MIN_NS + next_random(g) % SLOT_SPREAD_NS;
		set_state(g, cpu, false, now_ns, ops, arg);
	}
}

/* The switch-outs a first rate needs before the whole span. */
static uint64_t first_min(const struct wp_stackgate *g)
{
	uint64_t n = g->budget / FIRST_MIN_SHARE;

	return n > FIRST_MIN ? n : FIRST_MIN;
}

bool wp_stackgate_wants_fresh_counts(const struct wp_stackgate *g)
{
	for (unsigned int i = 0; i < g->nr_cpus; i++)
		if (!g->cpus[i].measured || g->cpus[i].rate * 4 > (double)g->budget)
			return true;
	return false;
}

uint64_t wp_stackgate_step(struct wp_stackgate *g, uint64_t now_ns,
			   const struct wp_stackgate_ops *ops, void *arg)
{
	uint64_t next = now_ns + POLL_NS;

	for (unsigned int i = 0; i < g->nr_cpus; i++) {
		struct gate_cpu *c = &g->cpus[i];
		uint64_t as_of, n = ops->switch_outs(i, &as_of, arg);

		if (!c->measured && now_ns + FIRST_POLL_NS < next)
			next = now_ns + FIRST_POLL_NS;

		/* Counts come as of the drain thread's passes: rate between two. */
		if (!c->have_base && as_of >= g->start_ns) {
			c->base_count = n;
			c->base_ns = as_of;
			c->have_base = true;
		} else if (c->have_base &&
			   (as_of - c->base_ns >= RATE_SPAN_NS ||
			    (!c->measured && as_of - c->base_ns >= FIRST_SPAN_NS &&
			     n - c->base_count >= first_min(g)))) {
			c->rate = (double)(n - c->base_count) * 1e9 / (double)(as_of - c->base_ns);
			c->base_count = n;
			c->base_ns = as_of;
			if (!c->measured)
				c->slot_end_ns = now_ns;	/* the first rate: decide at once */
			c->measured = true;
		}
	}
	choose_leader(g, now_ns, ops, arg);
	for (unsigned int i = 0; i < g->nr_cpus; i++) {
		struct gate_cpu *c = &g->cpus[i];

		if (c->measured && now_ns >= c->slot_end_ns)
			next_slot(g, i, now_ns, ops, arg);
		if (c->measured && c->slot_end_ns < next)
			next = c->slot_end_ns;
	}
	return next;
}

double wp_stackgate_closed_share(const struct wp_stackgate *g, unsigned int cpu, uint64_t now_ns)
{
	const struct gate_cpu *c;
	uint64_t closed;

	if (cpu >= g->nr_cpus || now_ns <= g->start_ns)
		return 0;
	c = &g->cpus[cpu];
	closed = c->closed_ns + (c->open ? 0 : now_ns - c->state_since_ns);
	return (double)closed / (double)(now_ns - g->start_ns);
}

double wp_stackgate_wakeups_off_share(const struct wp_stackgate *g, uint64_t now_ns)
{
	uint64_t off = g->wakeups_off_ns;

	if (now_ns <= g->start_ns)
		return 0;
	if (g->wakeups_off && now_ns > g->wakeups_off_since)
		off += now_ns - g->wakeups_off_since;
	return (double)off / (double)(now_ns - g->start_ns);
}

int wp_stackgate_error(const struct wp_stackgate *g)
{
	return g->error;
}

void wp_stackgate_free(struct wp_stackgate *g)
{
	free(g);
}
