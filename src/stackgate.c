// SPDX-License-Identifier: GPL-2.0-or-later
/* stackgate.c: a budget of switch-out stacks per CPU (see stackgate.h). */
#include <errno.h>
#include <stdlib.h>

#include "stackgate.h"

#define MS 1000000ULL
/*
 * Rates are measured over this much time (the first one sooner: the
 * event is on until then), and a slot lasts 10-30 ms.
 */
#define RATE_WINDOW_NS (50 * MS)
#define FIRST_WINDOW_NS (10 * MS)
#define SLOT_MIN_NS (10 * MS)
#define SLOT_SPREAD_NS (20 * MS)

struct gate_cpu {
	bool open;
	uint64_t slot_end_ns;
	uint64_t window_start_ns, window_count;	/* switch-outs at the window's start */
	double rate;			/* switch-outs a second, last window */
	bool measured;			/* rate holds a measure */
	bool started;			/* window_count holds a count */
	uint64_t closed_ns;		/* time spent closed */
	uint64_t state_since_ns;
};

struct wp_stackgate {
	unsigned int nr_cpus;
	uint64_t budget;
	uint64_t start_ns;
	uint64_t rng;
	int error;
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

int wp_stackgate_new(unsigned int nr_cpus, uint64_t budget, uint64_t now_ns,
		     struct wp_stackgate **out)
{
	struct wp_stackgate *g;

	if (!budget || !nr_cpus)
		return -EINVAL;
	g = calloc(1, sizeof(*g) + nr_cpus * sizeof(g->cpus[0]));
	if (!g)
		return -ENOMEM;
	g->nr_cpus = nr_cpus;
	g->budget = budget;
	g->start_ns = now_ns;
	g->rng = now_ns ^ 0x9E3779B97F4A7C15ULL;
	if (!g->rng)
		g->rng = 1;
	for (unsigned int i = 0; i < nr_cpus; i++) {
		/* Open until a rate is known: the events start on. */
		g->cpus[i].open = true;
		g->cpus[i].window_start_ns = now_ns;
		g->cpus[i].state_since_ns = now_ns;
	}
	*out = g;
	return 0;
}

static void set_state(struct wp_stackgate *g, unsigned int cpu, bool open, uint64_t now_ns,
		      wp_stackgate_set_fn set, void *arg)
{
	struct gate_cpu *c = &g->cpus[cpu];
	int err;

	if (c->open == open)
		return;
	if (!c->open)
		c->closed_ns += now_ns - c->state_since_ns;
	c->state_since_ns = now_ns;
	c->open = open;
	err = set(cpu, open, arg);
	if (err && !g->error)
		g->error = err;
}

uint64_t wp_stackgate_step(struct wp_stackgate *g, uint64_t now_ns,
			   uint64_t (*switch_outs)(unsigned int cpu, void *arg),
			   wp_stackgate_set_fn set, void *arg)
{
	uint64_t next = now_ns + RATE_WINDOW_NS;

	for (unsigned int i = 0; i < g->nr_cpus; i++) {
		struct gate_cpu *c = &g->cpus[i];

		uint64_t window = c->measured ? RATE_WINDOW_NS : FIRST_WINDOW_NS;

		if (!c->started) {
			c->window_count = switch_outs(i, arg);
			c->window_start_ns = now_ns;
			c->started = true;
		} else if (now_ns - c->window_start_ns >= window) {
			uint64_t n = switch_outs(i, arg);

			c->rate = (double)(n - c->window_count) * 1e9 /
				  (double)(now_ns - c->window_start_ns);
			c->window_count = n;
			c->window_start_ns = now_ns;
			c->measured = true;
			c->slot_end_ns = now_ns;	/* decide at once */
		}
		if (now_ns >= c->slot_end_ns) {
			double p = c->rate > (double)g->budget ? (double)g->budget / c->rate : 1.0;

			c->slot_end_ns = now_ns + SLOT_MIN_NS + next_random(g) % SLOT_SPREAD_NS;
			set_state(g, i, p >= 1.0 || next_unit(g) < p, now_ns, set, arg);
		}
		if (c->slot_end_ns < next)
			next = c->slot_end_ns;
		if (c->window_start_ns + window < next)
			next = c->window_start_ns + window;
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

int wp_stackgate_error(const struct wp_stackgate *g)
{
	return g->error;
}

void wp_stackgate_free(struct wp_stackgate *g)
{
	free(g);
}
