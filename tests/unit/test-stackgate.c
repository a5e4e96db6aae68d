/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-stackgate.c: the switch-out stack budget, on a simulated clock. */
#include <stdlib.h>

#include "stackgate.h"
#include "tap.h"

#define MS 1000000ULL

/* Two CPUs: switch-outs at a fixed rate each, counted as time passes. */
struct sim {
	uint64_t now_ns;
	double rate[2];		/* switch-outs a second */
	uint64_t base[2], rate_since[2];	/* the count when the rate was set, and when */
	uint64_t gran_ns;	/* counts as of multiples of this (0: 10 ms) */
	bool open[2];
	unsigned int changes[2];
	uint64_t open_ns[2];	/* time spent open */
	uint64_t stacks[2];	/* switch-outs while open */
	bool wakeups_open;	/* on every CPU at once */
	unsigned int wakeup_changes;
	unsigned int wakeups_bad;	/* wake-ups off while every CPU's stacks are on */
	uint64_t wakeups_off_ns;
	int fail;		/* -errno for set to return */
	unsigned int backwards;	/* steps that asked to be called in the past */
};

/* Counted as of the last 10 ms boundary, as the drain thread, asked, does. */
static uint64_t sim_switch_outs(unsigned int cpu, uint64_t *as_of_ns, void *arg)
{
	struct sim *s = arg;

	uint64_t gran = s->gran_ns ? s->gran_ns : 10 * MS;

	*as_of_ns = s->now_ns / gran * gran;
	if (*as_of_ns < s->rate_since[cpu])
		*as_of_ns = s->rate_since[cpu];
	return s->base[cpu] + (uint64_t)(s->rate[cpu] * (double)(*as_of_ns - s->rate_since[cpu]) / 1e9);
}

/* CPU cpu switches out at rate from now on (its count goes on from where it was). */
static void set_rate(struct sim *s, unsigned int cpu, double rate)
{
	uint64_t as_of;

	s->base[cpu] = sim_switch_outs(cpu, &as_of, s);
	s->rate_since[cpu] = as_of;
	s->rate[cpu] = rate;
}

static int sim_stacks(unsigned int cpu, bool open, void *arg)
{
	struct sim *s = arg;

	if (s->open[cpu] != open)
		s->changes[cpu]++;
	s->open[cpu] = open;
	if (!s->wakeups_open && s->open[0] && s->open[1])
		s->wakeups_bad++;
	return s->fail;
}

static int sim_wakeups(bool open, uint64_t now_ns, void *arg)
{
	struct sim *s = arg;

	if (s->wakeups_open != open)
		s->wakeup_changes++;
	s->wakeups_open = open;
	if (now_ns != s->now_ns)
		s->wakeups_bad++;
	if (!open && s->open[0] && s->open[1])
		s->wakeups_bad++;
	return s->fail;
}

static const struct wp_stackgate_ops sim_ops = {
	.switch_outs = sim_switch_outs,
	.stacks = sim_stacks,
	.wakeups = sim_wakeups,
};

/* Run the gate for secs seconds of simulated time. */
static void run(struct wp_stackgate *g, struct sim *s, double secs)
{
	uint64_t end = s->now_ns + (uint64_t)(secs * 1e9);
	uint64_t next = s->now_ns;

	while (s->now_ns < end) {
		uint64_t step;

		if (s->now_ns >= next)
			next = wp_stackgate_step(g, s->now_ns, &sim_ops, s);
		if (next < s->now_ns)
			s->backwards++;
		step = (next > s->now_ns ? next : s->now_ns + MS) - s->now_ns;
		if (s->now_ns + step > end)
			step = end - s->now_ns;
		if (!s->wakeups_open)
			s->wakeups_off_ns += step;
		for (int c = 0; c < 2; c++)
			if (s->open[c]) {
				s->open_ns[c] += step;
				s->stacks[c] += (uint64_t)(s->rate[c] * (double)step / 1e9);
			}
		s->now_ns += step;
	}
}

/* A second to settle, then the share of secs seconds that the wake-ups were on. */
static double wakeups_on_share(struct wp_stackgate *g, struct sim *s, double secs)
{
	uint64_t off0, t0;

	run(g, s, 1);
	off0 = s->wakeups_off_ns;
	t0 = s->now_ns;
	run(g, s, secs);
	return 1 - (double)(s->wakeups_off_ns - off0) / (double)(s->now_ns - t0);
}

int main(void)
{
	struct sim s = { .now_ns = 5 * MS, .rate = { 1000, 100000 }, .open = { true, true },
			 .wakeups_open = true };
	struct wp_stackgate *g = NULL;
	double secs = 100;

	is_int(wp_stackgate_new(2, 0, 0, 0, &g), -22, "a budget of 0 is refused");
	is_int(wp_stackgate_new(2, 5000, 20000, s.now_ns, &g), 0,
	       "a gate of 5000 a second per CPU, the wake-ups' at 20000");
	ok(wp_stackgate_wants_fresh_counts(g), "fresh counts wanted until a rate is known");
	run(g, &s, secs);
	ok(wp_stackgate_wants_fresh_counts(g), "fresh counts wanted while a CPU storms");
	is_int(s.changes[0], 0, "a CPU below the budget: never turned off");
	ok(s.open_ns[0] >= (uint64_t)(secs * 1e9) - MS, "it stayed open all along");
	ok(s.changes[1] > 2, "a CPU 20x over the budget: turned off and on (%u times)",
	   s.changes[1]);
	/* Open (1/20)^2 of the time: 5000 * 5000 / 100000 = 250 stacks a second. */
	ok(s.stacks[1] > 250 * secs * 0.8 && s.stacks[1] < 250 * secs * 1.2,
	   "its stacks come near budget^2 / rate (%.0f a second, 250 wanted)",
	   (double)s.stacks[1] / secs);
	{
		double closed = wp_stackgate_closed_share(g, 1, s.now_ns);
		double open = (double)s.open_ns[1] / (double)(s.now_ns - 5 * MS);

		ok(closed > 0.99 && closed < 1, "closed %.1f%% of the time", 100 * closed);
		ok(closed + open > 0.999 && closed + open < 1.001,
		   "closed and open add up to the whole time");
		ok(wp_stackgate_closed_share(g, 0, s.now_ns) == 0, "the calm CPU: never closed");
	}
	ok(s.wakeup_changes > 2 && s.wakeups_open == s.open[1],
	   "20x over: the wake-ups go off and on with its stacks (%u times)", s.wakeup_changes);
	{
		double off = wp_stackgate_wakeups_off_share(g, s.now_ns);
		double sim_off = (double)s.wakeups_off_ns / (double)(s.now_ns - 5 * MS);

		ok(off > 0.99 && off - sim_off < 0.001 && sim_off - off < 0.001,
		   "the wake-ups' off share is the time they were off (%.2f%%, %.2f%%)",
		   100 * off, 100 * sim_off);
		ok(off - wp_stackgate_closed_share(g, 1, s.now_ns) < 0.001 &&
		   wp_stackgate_closed_share(g, 1, s.now_ns) - off < 0.001,
		   "and the storming CPU's closed share");
	}
	is_int(wp_stackgate_error(g), 0, "no error");
	is_int(s.backwards, 0, "the next step is never in the past");
	/* The storm ends: back to every stack. */
	set_rate(&s, 1, 100);
	run(g, &s, 1);
	ok(s.open[1], "when the rate falls below the budget, the event is on again");
	ok(!wp_stackgate_wants_fresh_counts(g), "calm CPUs: the drain's own pace will do");
	/* Over the budget, under the wake-ups' rate: the stacks go off, the wake-ups stay. */
	s.wakeup_changes = 0;
	s.changes[1] = 0;
	set_rate(&s, 1, 10000);
	run(g, &s, 10);
	ok(s.changes[1] > 2 && s.wakeup_changes == 0 && s.wakeups_open,
	   "2x over the budget, under 20000: stacks off and on (%u), the wake-ups on all along",
	   s.changes[1]);
	/* A harder storm: they go off too, in closed slots only. */
	set_rate(&s, 1, 50000);
	run(g, &s, 10);
	ok(s.wakeup_changes > 2, "over 20000: the wake-ups off and on (%u times)",
	   s.wakeup_changes);
	/*
	 * Both CPUs storm: the wake-ups follow one CPU's slots, on
	 * (5000 / 50000)^2 = 1% of the time, not the product of the two
	 * CPUs' shares (0.01%), as they would off while either is closed.
	 */
	s.wakeup_changes = 0;
	set_rate(&s, 0, 50000);
	{
		double on = wakeups_on_share(g, &s, 60);

		ok(s.changes[0] > 2 && s.wakeup_changes > 2,
		   "both over 20000: CPU 0 closes too (%u), the wake-ups go off and on (%u)",
		   s.changes[0], s.wakeup_changes);
		ok(on > 0.01 * 0.7 && on < 0.01 * 1.3,
		   "both over 20000: the wake-ups on (b / r)^2 of the time (%.3f%%, 1%% wanted)",
		   100 * on);
	}
	/* One storming harder: the fastest CPU's share, that CPU's slots. */
	set_rate(&s, 0, 100000);
	{
		double on = wakeups_on_share(g, &s, 60);

		ok(on > 0.0025 * 0.7 && on < 0.0025 * 1.3,
		   "50000 and 100000: the wake-ups on (b / r)^2 of the faster's time (%.3f%%)",
		   100 * on);
		ok(s.wakeups_open == s.open[0], "they follow the faster CPU's slots");
	}
	is_int(s.wakeups_bad, 0,
	       "the wake-ups are never off while every CPU's stacks are on, and change at once");
	wp_stackgate_free(g);
	/*
	 * A program that starts with a burst (30 switch-outs in its first
	 * 2 ms, 15,000 a second) and then switches 50 times a second: the
	 * burst alone is no rate, and nothing is ever turned off.
	 */
	{
		struct sim b = { .now_ns = 5 * MS, .rate = { 15000, 50 }, .open = { true, true },
				 .wakeups_open = true, .gran_ns = MS / 4 };

		is_int(wp_stackgate_new(2, 4000, 16000, b.now_ns, &g), 0, "burst: a gate of 4000");
		run(g, &b, 0.002);
		set_rate(&b, 0, 50);
		run(g, &b, 5);
		is_int(b.changes[0], 0, "burst: a start of 15000 a second for 2 ms turns nothing off");
		is_int(b.wakeup_changes, 0, "burst: nor the wake-ups");
		ok(wp_stackgate_closed_share(g, 0, b.now_ns) == 0, "burst: never closed");
		wp_stackgate_free(g);
	}
	/* A storm is still seen within some 10 ms. */
	{
		struct sim t = { .now_ns = 5 * MS, .rate = { 200000, 50 }, .open = { true, true },
				 .wakeups_open = true, .gran_ns = MS / 4 };

		is_int(wp_stackgate_new(2, 4000, 16000, t.now_ns, &g), 0, "storm: a gate of 4000");
		run(g, &t, 0.015);
		ok(!t.open[0] || t.changes[0] > 0, "storm: 200,000 a second is seen within 15 ms");
		wp_stackgate_free(g);
	}
	is_int(wp_stackgate_new(2, 5000, 20000, s.now_ns, &g), 0, "a gate again, for errors");
	s.fail = -9;
	set_rate(&s, 1, 100000);
	run(g, &s, 1);
	is_int(wp_stackgate_error(g), -9, "the first error of stacks or wakeups is kept");
	wp_stackgate_free(g);
	return done_testing();
}
