/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dump.c: one line per record of a wallprof data file. */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>

#include "datafile.h"
#include "dump.h"
#include "layout.h"
#include "placenames.h"
#include "log.h"
#include "quote.h"

struct dump {
	FILE *out;
	const struct wp_meta *meta;
	struct wp_sample_format fmt;
};

/* Is event e's name also another event's (one tracepoint, two uses)? */
static bool name_shared(const struct wp_meta *m, uint32_t e)
{
	for (uint32_t o = 0; o < m->nr_events; o++)
		if (o != e && !strcmp(m->events[o].name, m->events[e].name))
			return true;
	return false;
}

/* A sample's event by name, "name#N" (its index) when the name is shared. */
static void put_event_name(const struct dump *d, uint64_t id)
{
	for (uint32_t e = 0; e < d->meta->nr_events; e++)
		for (uint32_t i = 0; i < d->meta->events[e].nr_ids; i++) {
			if (d->meta->events[e].ids[i] != id)
				continue;
			wp_quote_puts(d->out, d->meta->events[e].name, WP_QUOTE_TEXT);
			if (name_shared(d->meta, e))
				fprintf(d->out, "#%u", e);
			return;
		}
	fputs(id ? "?" : "synthesized", d->out);
}

static void print_time(FILE *out, uint64_t t)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, t / (uint64_t)1000000000, t % (uint64_t)1000000000);
}

static void print_header(const struct dump *d)
{
	const struct wp_meta *m = d->meta;
	time_t secs = (time_t)(m->start_realtime_ns / 1000000000ULL);
	char when[64] = "?";
	struct tm tm;
	FILE *out = d->out;

	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	fprintf(out, "# wallprof data, format version %d\n",
		m->flags & WP_META_STACK_TABLE ? WP_FILE_VERSION : WP_FILE_VERSION_RAW);
	/* Every name in a recording is quoted: one record, one line, no escapes. */
	fprintf(out, "# command line:");
	for (uint32_t i = 0; i < m->argc; i++) {
		fputc(' ', out);
		wp_quote_puts(out, m->argv[i], WP_QUOTE_TEXT);
	}
	fprintf(out, "\n# host: ");
	wp_quote_puts(out, m->hostname, WP_QUOTE_TEXT);
	fprintf(out, ", kernel ");
	wp_quote_puts(out, m->os_release, WP_QUOTE_TEXT);
	fprintf(out, ", ");
	wp_quote_puts(out, m->machine, WP_QUOTE_TEXT);
	fprintf(out, ", %u CPUs\n", m->nr_cpus);
	fprintf(out, "# started: %s (clock %d at ", when, m->clockid);
	print_time(out, m->start_clock_ns);
	fprintf(out, ")\n# sample_type: 0x%" PRIx64 ", user regs 0x%" PRIx64
		", stack %u bytes, call graph %s\n", m->sample_type, m->regs_mask,
		m->stack_size, m->callgraph == WP_CALLGRAPH_DWARF ? "dwarf" :
		m->callgraph == WP_CALLGRAPH_FP ? "fp" : "none");
	fprintf(out, "# flags:%s%s%s%s%s%s%s%s%s%s%s%s\n",
		m->flags & WP_META_KERNEL_SAMPLES ? " kernel-samples" : "",
		m->flags & WP_META_KERNEL_STACKS ? " kernel-stacks" : "",
		m->flags & WP_META_SWITCHES ? " switches" : "",
		m->flags & WP_META_OFFCPU_STACKS ? " off-cpu-stacks" : "",
		m->flags & WP_META_OFFCPU_STACKS_DENIED ? " off-cpu-stacks-denied" : "",
		m->flags & WP_META_CPU_WIDE ? " all-cpus" : "",
		m->flags & WP_META_CLOCK_FALLBACK ? " cpu-clock-fallback" : "",
		m->flags & WP_META_WAKEUPS ? " wakeups" : "",
		m->flags & WP_META_WAKEUPS_GATED ? " wakeups-gated" : "",
		m->flags & WP_META_STACK_TABLE ? " stack-table" : "",
		m->flags & WP_META_EXIT_CLOCKS ? " exit-clocks" : "",
		m->flags & WP_META_ONCPU_PER_CPU ? " oncpu-per-cpu" : "");
	for (uint32_t e = 0; e < m->nr_events; e++) {
		const struct wp_event_desc *ev = &m->events[e];
		char name[WP_QUOTE_SIZE(sizeof(ev->name))];

		fprintf(out, "# event %u: %s, %s, type %u config %" PRIu64 ", %s %" PRIu64
			", %u ids\n", e, wp_quote(name, sizeof(name), ev->name, WP_QUOTE_TEXT),
			ev->role == WP_EVENT_SWITCH_OUT ? "switch-out stacks" :
			wp_event_other_wakers(ev) ? "wake-ups by other threads, kernel frames" :
			ev->role == WP_EVENT_WAKEUP ? "wake-ups" :
			ev->role == WP_EVENT_WAKEUP_NEW ? "new threads' wake-ups" :
			ev->role == WP_EVENT_ENQUEUED ? "woken threads on a run queue" :
			ev->role == WP_EVENT_SCHED_SWITCH ? "switch times" :
			ev->role == WP_EVENT_SIDEBAND ? "task and switch records" : "on-CPU samples",
			ev->attr.type, (uint64_t)ev->attr.config,
			ev->attr.freq ? "frequency" : "period", (uint64_t)ev->attr.sample_period,
			ev->nr_ids);
	}
}

static void print_sample(const struct dump *d, const struct perf_event_header *h)
{
	struct wp_sample s;
	FILE *out = d->out;

	if (wp_sample_parse(&d->fmt, h, &s)) {
		fprintf(out, "SAMPLE malformed, %u bytes\n", h->size);
		return;
	}
	print_time(out, s.time);
	fprintf(out, " SAMPLE %u/%u cpu %u ", s.pid, s.tid, s.cpu);
	put_event_name(d, s.id);
	fprintf(out, " ip 0x%" PRIx64 " period %" PRIu64, s.ip, s.period);
	if (d->fmt.sample_type & PERF_SAMPLE_CALLCHAIN)
		fprintf(out, " callchain %" PRIu64, s.nr_callchain);
	if (d->fmt.sample_type & PERF_SAMPLE_REGS_USER)
		fprintf(out, " regs %s", s.regs_abi == PERF_SAMPLE_REGS_ABI_64 ? "abi64" :
			s.regs_abi == PERF_SAMPLE_REGS_ABI_32 ? "abi32" : "none");
	if (d->fmt.sample_type & PERF_SAMPLE_STACK_USER)
		fprintf(out, " stack %" PRIu64 "/%" PRIu64, s.stack_dyn_size, s.stack_size);
	fputc('\n', out);
}

/* A kernel record other than a sample. */
static void print_other(const struct dump *d, const struct perf_event_header *h)
{
	bool is_switch = h->type == PERF_RECORD_SWITCH || h->type == PERF_RECORD_SWITCH_CPU_WIDE;
	struct wp_sample_id id;
	struct wp_task_event te;
	struct wp_throttle th;
	struct wp_mmap2 m;
	struct wp_switch sw;
	struct wp_comm c;
	FILE *out = d->out;
	uint64_t lost_id, lost;

	if (wp_sample_id_parse(&d->fmt, h, &id) || (is_switch && wp_switch_parse(h, &sw))) {
		fprintf(out, "%s malformed, %u bytes\n", wp_record_type_name(h->type), h->size);
		return;
	}
	print_time(out, id.time);
	if (is_switch) {
		fprintf(out, " %s %u/%u cpu %u", sw.out ? "SWITCH_OUT" : "SWITCH_IN", id.pid,
			id.tid, id.cpu);
		if (sw.out)
			fprintf(out, " %s", sw.preempted ? "preempted" : "blocked");
		if (sw.cpu_wide)
			fprintf(out, " %s %u/%u", sw.out ? "next" : "prev", sw.next_prev_pid,
				sw.next_prev_tid);
		fputc('\n', out);
		return;
	}
	fprintf(out, " %s", wp_record_type_name(h->type));
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (wp_mmap2_parse(h, &m))
			break;
		fprintf(out, " %u/%u 0x%" PRIx64 "+0x%" PRIx64 " pgoff 0x%" PRIx64, m.pid, m.tid,
			m.addr, m.len, m.pgoff);
		fprintf(out, " %c%c%c", m.prot & PROT_READ ? 'r' : '-',
			m.prot & PROT_WRITE ? 'w' : '-', m.prot & PROT_EXEC ? 'x' : '-');
		if (m.has_build_id) {
			fprintf(out, " build-id ");
			for (unsigned int i = 0; i < m.build_id_size; i++)
				fprintf(out, "%02x", m.build_id[i]);
		} else {
			fprintf(out, " dev %x:%x ino %" PRIu64, m.maj, m.min, m.ino);
		}
		fputc(' ', out);
		wp_quote_puts(out, m.filename, WP_QUOTE_TEXT);
		break;
	case PERF_RECORD_COMM:
		if (wp_comm_parse(h, &c))
			break;
		fprintf(out, " %u/%u ", c.pid, c.tid);
		wp_quote_write(out, c.comm, c.len, WP_QUOTE_TEXT);
		if (c.exec)
			fprintf(out, " exec");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (wp_task_event_parse(h, &te))
			break;
		fprintf(out, " %u/%u parent %u/%u", te.pid, te.tid, te.ppid, te.ptid);
		break;
	case PERF_RECORD_LOST:
		if (wp_lost_parse(h, &lost_id, &lost))
			break;
		fprintf(out, " id %" PRIu64 " lost %" PRIu64, lost_id, lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (wp_lost_parse(h, &lost_id, &lost))
			break;
		fprintf(out, " lost %" PRIu64, lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (wp_throttle_parse(h, &th))
			break;
		fprintf(out, " id %" PRIu64, th.id);
		break;
	}
	fprintf(out, " cpu %d%s\n", (int)id.cpu,
		id.id == WP_SYNTHESIZED_ID ? " synthesized" : "");
}

static void print_wp_record(const struct dump *d, const struct perf_event_header *h)
{
	struct wp_record_thread_clock tc;
	struct wp_record_thread t;
	struct wp_cmdline cl;
	struct wp_build_id b;
	struct wp_attach a;
	struct wp_dso_def dso;
	struct wp_place_def pl;
	struct wp_stack_def st;
	struct wp_stack_sample ss;
	FILE *out = d->out;
	const char *text;
	size_t len;

	switch (h->type) {
	case WP_RECORD_ROUND:
		fprintf(out, "ROUND\n");
		break;
	case WP_RECORD_THREAD:
		if (wp_thread_parse(h, &t))
			goto bad;
		print_time(out, t.time);
		fprintf(out, " THREAD %u/%u%s\n", t.pid, t.tid,
			t.header.misc & WP_THREAD_UNCERTAIN ? " state-unknown" :
			!(t.header.misc & WP_THREAD_OFF_CPU) ? "" :
			t.header.misc & WP_THREAD_PREEMPTED ? " off-cpu preempted" : " off-cpu blocked");
		break;
	case WP_RECORD_TRACE_FORMAT:
		if (wp_text_parse(h, &text, &len))
			goto bad;
		/* Its first line: "name: sched_waking". */
		fprintf(out, "TRACE_FORMAT ");
		wp_quote_write(out, text, strcspn(text, "\n"), WP_QUOTE_TEXT);
		fprintf(out, ", %zu bytes\n", len);
		break;
	case WP_RECORD_THREAD_CLOCK:
		if (wp_thread_clock_parse(h, &tc))
			goto bad;
		print_time(out, tc.time);
		fprintf(out, " THREAD_CLOCK %u/%u %s on-cpu %" PRIu64 " runq %" PRIu64
			" slices %" PRIu64 "\n", tc.pid, tc.tid,
			tc.header.misc == WP_CLOCK_START ? "start" :
			tc.header.misc == WP_CLOCK_END ? "end" :
			tc.header.misc == WP_CLOCK_EXIT ? "exit" : "during",
			tc.on_cpu_ns, tc.runq_ns, tc.slices);
		break;
	case WP_RECORD_CMDLINE:
		if (wp_cmdline_parse(h, &cl))
			goto bad;
		print_time(out, cl.time);
		fprintf(out, " CMDLINE %u %s", cl.pid, cl.source == WP_CMDLINE_LAUNCH ? "launch" :
			cl.source == WP_CMDLINE_ATTACH ? "attach" : "exec");
		if (cl.exec_time)
			fprintf(out, " exec@%" PRIu64, cl.exec_time);
		for (const char *arg = cl.args; arg < cl.args + cl.len; arg += strlen(arg) + 1) {
			fputc(' ', out);
			wp_quote_shell_word(out, arg);
		}
		fprintf(out, "%s\n", cl.flags & WP_CMDLINE_TRUNCATED ? " ..." : "");
		break;
	case WP_RECORD_TASK_NAME: {
		struct wp_record_task_name tn;

		if (wp_task_name_parse(h, &tn))
			goto bad;
		print_time(out, tn.time);
		fprintf(out, " TASK_NAME %u/%u ", tn.pid, tn.tid);
		wp_quote_write(out, tn.comm, strnlen(tn.comm, sizeof(tn.comm)), WP_QUOTE_TEXT);
		fputc('\n', out);
		break;
	}
	case WP_RECORD_ATTACH:
		if (wp_attach_parse(h, &a))
			goto bad;
		print_time(out, a.done);
		fprintf(out, " ATTACH %u events %u\n", a.tid, a.nr_ids);
		break;
	case WP_RECORD_BUILD_ID:
		if (wp_build_id_parse(h, &b))
			goto bad;
		fprintf(out, "BUILD_ID ");
		for (unsigned int i = 0; i < b.size; i++)
			fprintf(out, "%02x", b.build_id[i]);
		fputc(' ', out);
		wp_quote_puts(out, b.filename, WP_QUOTE_TEXT);
		fputc('\n', out);
		break;
	case WP_RECORD_DSO:
		if (wp_dso_def_parse(h, &dso))
			goto bad;
		fprintf(out, "DSO %u ", dso.dso);
		for (unsigned int i = 0; i < dso.build_id_size; i++)
			fprintf(out, "%02x", dso.build_id[i]);
		fprintf(out, "%s%u:%u/%" PRIu64 " ", dso.build_id_size ? " " : "", dso.maj, dso.min,
			dso.ino);
		wp_quote_puts(out, dso.filename, WP_QUOTE_TEXT);
		fputc('\n', out);
		break;
	case WP_RECORD_PLACE:
		if (wp_place_def_parse(h, &pl))
			goto bad;
		if (pl.kind > 3) {
			fprintf(out, "PLACE %u kind %u\n", pl.place, pl.kind);
			break;
		}
		fprintf(out, "PLACE %u %s", pl.place,
			pl.kind == 0 ? "kernel" : pl.kind == 1 ? "file" : pl.kind == 2 ? "anon" : "unknown");
		if (pl.kind == 1)
			fprintf(out, " dso %u +0x%" PRIx64 " pgoff 0x%" PRIx64 "\n", pl.where, pl.addr,
				pl.pgoff);
		else if (pl.kind == 2)
			fprintf(out, " pid %u 0x%" PRIx64 "%s\n", pl.where, pl.addr,
				pl.flags & WP_PLACE_ACTIVATION ? "" : " return");
		else
			fprintf(out, " 0x%" PRIx64 "\n", pl.addr);
		break;
	case WP_RECORD_STACK:
		if (wp_stack_def_parse(h, &st))
			goto bad;
		fprintf(out, "STACK %u flags 0x%x chain %u user %u:", st.stack, st.flags, st.nr_chain,
			st.nr_user);
		for (unsigned int i = 0; i < (unsigned int)st.nr_chain + st.nr_user; i++)
			fprintf(out, " %u", wp_stack_def_place(&st, i));
		fputc('\n', out);
		break;
	case WP_RECORD_STACK_SAMPLE:
		if (wp_stack_sample_parse(h, &ss))
			goto bad;
		print_time(out, ss.time);
		fprintf(out, " STACK_SAMPLE %u/%u cpu %u id %" PRIu64 " (", ss.pid, ss.tid, ss.cpu,
			ss.id);
		put_event_name(d, ss.id);
		fprintf(out, ") stack %d", ss.stack == WP_NO_STACK ? -1 : (int)ss.stack);
		if (ss.thread)
			fprintf(out, " thread %u", ss.thread);
		if (ss.flags & WP_STACK_SAMPLE_IRQ)
			fprintf(out, " irq");
		if (ss.flags & WP_STACK_SAMPLE_HARDIRQ)
			fprintf(out, " hardirq");
		if (ss.flags & WP_STACK_SAMPLE_SOFTIRQ)
			fprintf(out, " softirq");
		if (ss.flags & WP_STACK_SAMPLE_NMI)
			fprintf(out, " nmi");
		if (ss.flags & WP_STACK_SAMPLE_HERE)
			fprintf(out, " here");
		fputc('\n', out);
		break;
	default:
		fprintf(out, "UNKNOWN type %u, %u bytes\n", h->type, h->size);
	}
	return;
bad:
	fprintf(out, "%s malformed, %u bytes\n", wp_record_type_name(h->type), h->size);
}

static void print_summary(FILE *out, const struct wp_summary *s, const struct wp_meta *m)
{
	uint64_t lost = s->lost_records + s->lost_samples + s->lost_unreported;

	fprintf(out, "# summary: %.3f s, %" PRIu64 " records, %" PRIu64 " samples, %" PRIu64
		" off-CPU stacks, %" PRIu64 " switches, %" PRIu64 " synthesized, %" PRIu64
		" wake-ups\n", (double)(s->end_clock_ns - m->start_clock_ns) / 1e9, s->records,
		s->samples, s->switch_samples, s->switches, s->synthesized, s->wakeups);
	fprintf(out, "# lost: %" PRIu64 " records, %" PRIu64 " samples (%.2f%%), %" PRIu64
		" throttled, %" PRIu64 " corrupt bytes\n", s->lost_records + s->lost_unreported,
		s->lost_samples,
		s->records + lost ? 100.0 * (double)lost / (double)(s->records + lost) : 0.0,
		s->throttles, s->corrupt_bytes);
	if (s->lost_unreported || s->rings_full_at_end)
		fprintf(out, "# lost without a LOST record: %" PRIu64 "; rings nearly full at the "
			"end: %u\n", s->lost_unreported, s->rings_full_at_end);
	fprintf(out, "# ring bytes %" PRIu64 ", unfilled stack bytes dropped %" PRIu64
		", stop %s", s->ring_bytes, s->stack_bytes_trimmed,
		s->stop_reason == WP_STOP_SIGNAL ? "signal" :
		s->stop_reason == WP_STOP_DURATION ? "duration" :
		s->stop_reason == WP_STOP_TARGET_EXITED ? "target-exited" :
		s->stop_reason == WP_STOP_ROTATED ? "rotated" :
		s->stop_reason == WP_STOP_DUMPED ? "dumped" : "error");
	/* exit_status is a wait(2) status, or -1 without a launched command. */
	if (s->exit_status < 0)
		fprintf(out, ", no command\n");
	else if (WIFEXITED(s->exit_status))
		fprintf(out, ", exit status %d\n", WEXITSTATUS(s->exit_status));
	else if (WIFSIGNALED(s->exit_status))
		fprintf(out, ", killed by signal %d\n", WTERMSIG(s->exit_status));
	else
		fprintf(out, ", wait status %d\n", s->exit_status);
	if (s->cut_short_errno)
		fprintf(out, "# cut short at %.3f s by a write error: %s\n",
			(double)(s->end_clock_ns - m->start_clock_ns) / 1e9,
			strerror((int)s->cut_short_errno));
}

int wp_dump_reader(struct wp_reader *r, const char *path, FILE *out)
{
	const struct perf_event_header *h;
	struct dump d = { .out = out };
	int ret;

	d.meta = wp_reader_meta(r);
	wp_sample_format_init(&d.fmt, d.meta->sample_type, d.meta->regs_mask);
	print_header(&d);
	{
		size_t len, lines = 0;
		char *ksyms;

		if (!wp_reader_ksyms(r, &ksyms, &len) && ksyms) {
			for (size_t i = 0; i < len; i++)
				lines += ksyms[i] == '\n';
			fprintf(out, "# kernel symbols saved: %zu\n", lines);
			free(ksyms);
		}
	}
	{
		size_t len, lines = 0;
		char *jit;

		/* The entries as saved: the block is text, one per line. */
		if (!wp_reader_jitmap(r, &jit, &len) && jit) {
			for (size_t i = 0; i < len; i++)
				lines += jit[i] == '\n';
			fprintf(out, "# JIT names saved: %zu\n", lines);
			free(jit);
		}
	}
	{
		struct wp_placenames *pn = NULL;
		size_t len;
		char *names;

		if (!wp_reader_names(r, &names, &len) && names &&
		    !wp_placenames_parse(names, len, &pn))
			fprintf(out, "# place names saved: %zu places, %zu frames, %zu strings\n",
				wp_placenames_places(pn), wp_placenames_frames(pn),
				wp_placenames_strings(pn));
		else if (names)
			fprintf(out, "# place names saved: damaged\n");
		wp_placenames_free(pn);
		free(names);
	}
	while ((ret = wp_reader_next(r, &h)) > 0) {
		if (h->type == PERF_RECORD_SAMPLE)
			print_sample(&d, h);
		else if (wp_record_is_own(h->type))
			print_wp_record(&d, h);
		else
			print_other(&d, h);
	}
	if (ret == 0) {
		const struct wp_summary *s = wp_reader_summary(r);

		if (s) {
			print_summary(out, s, d.meta);
			if (s->cut_short_errno) {
				char q[WP_QUOTE_MSG];

				wp_warn("'%s' was cut short at %.3f s by a write error (%s)",
					wp_quote(q, sizeof(q), path, WP_QUOTE_TEXT),
					(double)(s->end_clock_ns - d.meta->start_clock_ns) / 1e9,
					strerror((int)s->cut_short_errno));
			}
		} else {
			char q[WP_QUOTE_MSG];

			fprintf(out, "# no summary: the recording did not finish\n");
			wp_warn("'%s' has no summary block: the recording did not finish",
				wp_quote(q, sizeof(q), path, WP_QUOTE_TEXT));
		}
	}
	return ret;
}
