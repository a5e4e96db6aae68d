/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wakeest.c: the runnable part of waits whose wake-up was not recorded. */

#include "wakeest.h"

/* A recorded wait's runnable part counts up to this many times the mean so far... */
#define SEEN_CAP 8
/* ...once there are this many to have one. */
#define SEEN_CAP_AFTER 20

/* x times f >= 0, rounded down. */
static uint64_t times(uint64_t x, double f)
{
	double v = (double)x * f;

	return v <= 0 ? 0 : v >= 0x1p63 ? UINT64_MAX / 2 : (uint64_t)v;
}

void wp_wake_seen_add(struct wp_wake_seen *own, struct wp_wake_seen *all, uint64_t off,
		      uint64_t run)
{
	if (all->count >= SEEN_CAP_AFTER) {
		uint64_t cap = SEEN_CAP * (all->runnable_ns / all->count);

		if (run > cap) {
			off -= run - cap;
			run = cap;
		}
	}
	if (own) {
		own->off_ns += off;
		own->runnable_ns += run;
		own->count++;
	}
	all->off_ns += off;
	all->runnable_ns += run;
	all->count++;
}

uint64_t wp_wake_runnable_part(const struct wp_wake_seen *own, const struct wp_wake_seen *all,
			       uint64_t n, uint64_t ns)
{
	const struct wp_wake_seen *s =
		own && own->count && own->off_ns >= all->off_ns / 1000 ? own : all;
	uint64_t by_share, by_length;

	if (!s->off_ns || !s->count)
		return 0;
	by_share = times(ns, (double)s->runnable_ns / (double)s->off_ns);
	by_length = times(n, (double)s->runnable_ns / (double)s->count);
	return by_share < by_length ? by_share : by_length;
}
