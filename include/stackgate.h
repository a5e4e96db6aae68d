/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stackgate.h: a budget of switch-out stacks per CPU, kept by turning the
 * switch-out event off and on.
 *
 * A stack at every context switch costs the kernel a sample each time; in
 * a switch storm that is most of the profiler's cost.  The switch records
 * (from another event) stay exact, so each CPU's rate of switch-outs is
 * known all along.  While it is within the budget b, the switch-out
 * event stays on and every switch-out has its stack.  Above it, at r
 * switch-outs a second, time is cut into slots of random length, and a
 * share (b / r)^2 of it is open, in short slots: about b * b / r stacks a
 * second, fewer the harder the storm, whose cost they would multiply.
 * The switch-outs that get a stack are a random sample of time,
 * independent of what the threads do, so report can share the time of
 * the others among them without bias (account.h).
 *
 * The wake-up tracepoints cost a sample at every wake-up, so in a harder
 * storm, above a second rate w, a closed slot closes them too, on every
 * CPU at once (a tracepoint's perf probe costs each hit while any CPU
 * has an event on it): they are off while the fastest CPU over w (the
 * leader) is in a closed slot, so on a share (b / r)^2 of the time for
 * its rate r, however many CPUs storm.  (Off while any storming CPU is
 * closed, their share would be the product of those CPUs' shares.)  A
 * CPU takes the lead from another only when 1.25 times as fast, so
 * their share is at most 1.25^2 times the fastest CPU's.
 * They are kept apart from the stacks, and w above the budget,
 * because a wait's waker is known only from its wake-up, and a wake-up
 * costs far less than a stack.
 * Owns the per-CPU slots and the wake-ups' state, and how long each was
 * off; the caller does the switching.
 */
#ifndef WALLPROF_STACKGATE_H
#define WALLPROF_STACKGATE_H

#include <stdbool.h>
#include <stdint.h>

struct wp_stackgate;

/*
 * budget: switch-outs a second per CPU that all get a stack (> 0);
 * wakeup_rate: switch-outs a second of a CPU above which its closed
 * slots close the wake-ups too (0: never).
 */
int wp_stackgate_new(unsigned int nr_cpus, uint64_t budget, uint64_t wakeup_rate,
		     uint64_t now_ns, struct wp_stackgate **out);

/*
 * What the gate reads and turns.  switch_outs gives CPU cpu's switch-outs
 * so far, counted as of *as_of_ns; stacks turns CPU cpu's switch-out
 * stacks on or off; wakeups turns the wake-up tracepoints of every CPU
 * on or off at now_ns.  The last two are called only on a change (the
 * wake-ups go off after a CPU's stacks and on before them, so they are
 * never off while every CPU's stacks are on) and return 0 or -errno.
 */
struct wp_stackgate_ops {
	uint64_t (*switch_outs)(unsigned int cpu, uint64_t *as_of_ns, void *arg);
	int (*stacks)(unsigned int cpu, bool open, void *arg);
	int (*wakeups)(bool open, uint64_t now_ns, void *arg);
};

/*
 * Advance to now_ns (CLOCK_MONOTONIC), turning what changes.  Returns when
 * to call again.
 */
uint64_t wp_stackgate_step(struct wp_stackgate *g, uint64_t now_ns,
			   const struct wp_stackgate_ops *ops, void *arg);

/*
 * Whether counts fresher than the drain thread's own pace would serve:
 * a CPU has no rate yet, or one above a quarter of the budget.  A calm
 * recording is left to that pace (a storm is seen within 100 ms).
 */
bool wp_stackgate_wants_fresh_counts(const struct wp_stackgate *g);

/* Share of the recorded time that CPU cpu's stacks were off, 0..1. */
double wp_stackgate_closed_share(const struct wp_stackgate *g, unsigned int cpu, uint64_t now_ns);

/* Share of the recorded time that the wake-ups were off, 0..1. */
double wp_stackgate_wakeups_off_share(const struct wp_stackgate *g, uint64_t now_ns);

/* The first error of the ops' stacks or wakeups, or 0. */
int wp_stackgate_error(const struct wp_stackgate *g);

void wp_stackgate_free(struct wp_stackgate *g);

#endif
