/* SPDX-License-Identifier: GPL-2.0-or-later */
/* format_text.c: the text report, readable in 80 columns. */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "util.h"

#define DUR(ns, b) wp_human_ns((ns), (b), sizeof(b))

static void print_header(const struct wp_analysis *an, FILE *out)
{
	const struct wp_meta *m = an->meta;
	time_t secs = (time_t)(m->start_realtime_ns / NSEC_PER_SEC);
	char when[64] = "?", dur[32];
	struct tm tm;

	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(out, "# command:");
	for (uint32_t i = 0; i < m->argc; i++)
		fprintf(out, " %s", m->argv[i]);
	fprintf(out, "\n# started %s, recorded %s on %s (%s, %u CPUs)\n", when,
		DUR(an->end_ns - an->start_ns, dur), m->hostname, m->os_release, m->nr_cpus);
	fprintf(out, "# events:");
	for (uint32_t e = 0; e < m->nr_events; e++) {
		const struct wp_event_desc *ev = &m->events[e];

		if (ev->role == WP_EVENT_SWITCH_OUT)
			fprintf(out, "%s stacks at switch-out (%s)", e ? "," : "", ev->name);
		else if (ev->attr.freq)
			fprintf(out, "%s %s at %" PRIu64 " Hz", e ? "," : "", ev->name,
				(uint64_t)ev->attr.sample_freq);
		else
			fprintf(out, "%s %s every %" PRIu64 " ns", e ? "," : "", ev->name,
				(uint64_t)ev->attr.sample_period);
	}
	if (m->flags & WP_META_SWITCHES)
		fprintf(out, ", switch records");
	fputc('\n', out);
	if (!(m->flags & WP_META_SWITCHES))
		fprintf(out, "# recorded with --no-off-cpu: on-CPU time is estimated from "
			"samples, off-CPU time is unknown\n");
	if (m->flags & WP_META_OFFCPU_STACKS_DENIED)
		fprintf(out, "# off-CPU stacks were not recorded: they need CAP_PERFMON or "
			"kernel.perf_event_paranoid <= 1\n");
}

static void print_thread(const struct wp_thread_times *t, FILE *out, bool process)
{
	char w[16], on[16], bl[16], pr[16], id[16];
	double pct = t->wall_ns ? 100.0 * (double)t->on_cpu_ns / (double)t->wall_ns : 0;

	snprintf(id, sizeof(id), "%s%" PRIu32, process ? "" : "  ", process ? t->pid : t->tid);
	fprintf(out, "%-9s %-12.12s %7s %7s %7s %7s %3.0f%% %5" PRIu64 " %5" PRIu64
		" %6" PRIu64 "%s\n", id, t->comm,
		DUR(t->wall_ns, w), DUR(t->on_cpu_ns, on), DUR(t->blocked_ns, bl),
		DUR(t->preempted_ns, pr), pct, t->voluntary_switches, t->involuntary_switches,
		t->samples, t->approximate ? " ~" : "");
}

/* Sum the threads of one process [i, j) into a process line. */
static void sum_process(const struct wp_thread_times *th, size_t i, size_t j,
			struct wp_thread_times *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = th[i].pid;
	memcpy(p->comm, th[i].comm, sizeof(p->comm));
	for (size_t k = i; k < j; k++) {
		if (th[k].tid == th[k].pid)
			memcpy(p->comm, th[k].comm, sizeof(p->comm));
		p->wall_ns += th[k].wall_ns;
		p->on_cpu_ns += th[k].on_cpu_ns;
		p->blocked_ns += th[k].blocked_ns;
		p->preempted_ns += th[k].preempted_ns;
		p->voluntary_switches += th[k].voluntary_switches;
		p->involuntary_switches += th[k].involuntary_switches;
		p->samples += th[k].samples;
		p->approximate |= th[k].approximate;
	}
}

static void print_footer(const struct wp_analysis *an, FILE *out, bool approx)
{
	const struct wp_summary *s = &an->summary;
	uint64_t lost = s->lost_records + s->lost_samples;

	if (approx)
		fprintf(out, "\n~ approximate: records were lost while the thread ran\n");
	fprintf(out, "\n# quality: %" PRIu64 " records", an->records);
	if (an->complete)
		fprintf(out, ", %" PRIu64 " lost (%.2f%%)", lost,
			s->records + lost ? 100.0 * (double)lost / (double)(s->records + lost) : 0);
	else
		fprintf(out, ", the recording did not finish");
	if (an->damaged)
		fprintf(out, ", damaged file: read up to the damage");
	if (an->out_of_order)
		fprintf(out, ", %" PRIu64 " out of order", an->out_of_order);
	fputc('\n', out);
}

int wp_format_text(const struct wp_analysis *an, FILE *out)
{
	const struct wp_thread_times *th;
	bool approx = false;
	size_t n, i = 0;

	th = wp_account_threads(an->account, &n);
	print_header(an, out);
	fprintf(out, "\n%-9s %-12s %7s %7s %7s %7s %4s %5s %5s %6s\n", "PID/TID", "COMM",
		"WALL", "ON-CPU", "BLOCKED", "PREEMPT", "%ON", "VOL", "INVOL", "SAMPL");
	while (i < n) {
		struct wp_thread_times p;
		size_t j = i;

		while (j < n && th[j].pid == th[i].pid)
			j++;
		sum_process(th, i, j, &p);
		print_thread(&p, out, true);
		for (size_t k = i; k < j; k++) {
			print_thread(&th[k], out, false);
			approx |= th[k].approximate;
		}
		i = j;
	}
	print_footer(an, out, approx);
	return 0;
}
