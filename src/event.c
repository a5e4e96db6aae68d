/* SPDX-License-Identifier: GPL-2.0-or-later */
/* event.c: perf_event_open for the on-CPU and switch-out events, per CPU. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "event.h"
#include "log.h"
#include "quote.h"
#include "tracefs.h"
#include "util.h"

/*
 * 16 MiB per CPU absorbs a context-switch storm with 8 KiB stacks for tens
 * of milliseconds while the drain thread waits for a CPU; all rings
 * together stay under 512 MiB on large machines.
 */
#define WP_DEFAULT_RING_BYTES (16U << 20)
#define WP_DEFAULT_RINGS_TOTAL (512ULL << 20)
#define WP_DEFAULT_PAGES_USER 128	/* fits perf_event_mlock_kb's default */

static unsigned int default_ring_pages(unsigned int nr_cpus)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t bytes = WP_DEFAULT_RING_BYTES;
	unsigned int pages;

	while (bytes > 64 * page && bytes * nr_cpus > WP_DEFAULT_RINGS_TOTAL)
		bytes /= 2;
	pages = (unsigned int)(bytes / page);
	/* A power of two, as the kernel requires. */
	while (pages & (pages - 1))
		pages &= pages - 1;
	return pages ? pages : 1;
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			       int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

static int read_online_cpus(struct wp_evlist *ev)
{
	char buf[4096], *p;
	size_t n = 0, cap = 0;

	if (wp_read_text_file("/sys/devices/system/cpu/online", buf, sizeof(buf))) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(buf, sizeof(buf), "0-%ld", c > 0 ? c - 1 : 0);
	}
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long c = lo; c <= hi; c++) {
			if (WP_GROW(ev->cpus, cap, n + 1))
				return -ENOMEM;
			ev->cpus[n++] = (int)c;
		}
		p = *end == ',' ? end + 1 : end;
	}
	ev->nr_cpus = (unsigned int)n;
	return n ? 0 : -ENODEV;
}

/*
 * The events that can drive on-CPU sampling: the one list that -e
 * accepts, that its --help and errors show, and that the completion asks
 * for ("record -e help").
 */
struct event_alias {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *help;
};

static const struct event_alias event_aliases[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	  "timer over the thread's CPU time" },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  "timer over the task's own run time" },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles (needs a PMU)" },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "another name for cycles" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  "retired instructions (needs a PMU)" },
};

static const struct event_alias *event_alias_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(event_aliases); i++)
		if (!strcmp(name, event_aliases[i].name))
			return &event_aliases[i];
	return NULL;
}

bool wp_event_name_known(const char *name)
{
	return event_alias_find(name) != NULL;
}

bool wp_event_is_clock(const char *name)
{
	const struct event_alias *a = event_alias_find(name);

	return a && a->type == PERF_TYPE_SOFTWARE;
}

const char *wp_event_word(size_t i, const char **help)
{
	if (i >= ARRAY_SIZE(event_aliases))
		return NULL;
	*help = event_aliases[i].help;
	return event_aliases[i].name;
}

static const struct {
	const char *name;
	enum wp_wakeups how;
	const char *help;
} wakeups_words[] = {
	{ "stacks", WP_WAKEUPS_STACKS,
	  "wakers with their stacks (other programs' kernel frames only), when allowed" },
	{ "all-stacks", WP_WAKEUPS_ALL_STACKS, "every waker's stack, other programs' too" },
	{ "nostacks", WP_WAKEUPS_NOSTACKS, "who woke whom and when, no stacks" },
	{ "off", WP_WAKEUPS_OFF, "no wake-ups" },
};

const char *wp_wakeups_word(size_t i, const char **help)
{
	if (i >= ARRAY_SIZE(wakeups_words))
		return NULL;
	*help = wakeups_words[i].help;
	return wakeups_words[i].name;
}

int wp_wakeups_parse(const char *word, enum wp_wakeups *how)
{
	for (size_t i = 0; i < ARRAY_SIZE(wakeups_words); i++)
		if (!strcmp(word, wakeups_words[i].name)) {
			*how = wakeups_words[i].how;
			return 0;
		}
	return -EINVAL;
}

/* Can this machine count the hardware event at all (VMs often cannot)? */
static bool hardware_event_works(const struct event_alias *a, bool kernel)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = a->type,
		.config = a->config,
		.disabled = 1,
		.exclude_kernel = !kernel,
		.exclude_hv = 1,
	};
	int fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void attr_common(struct perf_event_attr *a, const struct wp_evlist *ev,
			const struct wp_event_opts *opts, bool kernel)
{
	a->size = sizeof(*a);
	a->sample_type = ev->fmt.sample_type;
	a->sample_regs_user = ev->fmt.regs_mask;
	a->sample_stack_user = opts->callgraph == WP_CALLGRAPH_DWARF ? opts->stack_size : 0;
	a->disabled = 1;
	a->enable_on_exec = opts->enable_on_exec;
	a->inherit = !opts->cpu_wide;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_user = opts->callgraph == WP_CALLGRAPH_DWARF;
	a->exclude_callchain_kernel = !kernel;
	a->watermark = 1;
	/* Linux 6.0+: reading an event tells how many of its records were lost. */
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
}

/*
 * sched_waking runs in the waker's context: who woke, with its stack.
 * sched_wakeup runs once the thread is on a run queue (on the wakee's
 * CPU, after an IPI when the waker ran elsewhere): when its wait for a
 * CPU starts, as the kernel's schedstat counts it.  sched_wakeup_new: a
 * new thread's first time on a run queue.  sched_switch runs in
 * __schedule before the switch, where schedstat's clocks turn: the
 * kernel's switch records come some microseconds later (after the
 * switch-out stack is taken, and after the switch itself for the thread
 * coming in), which in a switch storm adds up to much of a thread's
 * on-CPU time.  Its thread field is the one switched in; the one switched
 * out is the sample's own.
 */
static const char *const sched_events[WP_NR_SCHED_EVENTS] = {
	"sched_waking", "sched_wakeup_new", "sched_wakeup", "sched_switch",
};
static const uint32_t sched_roles[WP_NR_SCHED_EVENTS] = {
	WP_EVENT_WAKEUP, WP_EVENT_WAKEUP_NEW, WP_EVENT_ENQUEUED, WP_EVENT_SCHED_SWITCH,
};
static const char *const sched_pid_fields[WP_NR_SCHED_EVENTS] = {
	"pid", "pid", "pid", "next_pid",
};
/* sched_pid_field[] is indexed by role - WP_EVENT_WAKEUP (event.h). */
_Static_assert(WP_EVENT_WAKEUP_NEW == WP_EVENT_WAKEUP + 1 &&
	       WP_EVENT_ENQUEUED == WP_EVENT_WAKEUP + 2 &&
	       WP_EVENT_SCHED_SWITCH == WP_EVENT_WAKEUP + 3, "scheduler roles in sched_events order");

/*
 * Find the wake-up tracepoints and their formats, when wanted and allowed.
 * Asked for explicitly, their absence is an error; by default it is said
 * once (wp_evlist_explain_limits) and recording goes on without them.
 */
static int wakeups_setup(struct wp_evlist *ev, const struct wp_event_opts *opts,
			 const struct wp_priv *priv, uint64_t ids[WP_NR_SCHED_EVENTS])
{
	bool asked = opts->wakeups != WP_WAKEUPS_AUTO && opts->wakeups != WP_WAKEUPS_OFF;
	char *why = ev->wakeups_missing, dir[256];
	size_t size = sizeof(ev->wakeups_missing);
	int err = 0;

	if (opts->wakeups == WP_WAKEUPS_OFF)
		return 0;
	if (!opts->off_cpu) {
		snprintf(why, size, "--no-off-cpu records no switches to split");
		err = -EINVAL;
	} else if (!wp_priv_can_trace_sched(priv)) {
		snprintf(why, size, "they need CAP_PERFMON or kernel.perf_event_paranoid <= -1 "
			 "(it is %d)", priv->paranoid);
		err = -EPERM;
	} else {
		err = wp_tracefs_find(dir, sizeof(dir), priv->root || priv->cap_sys_admin,
				      &ev->tracefs_mounted);
		if (err == -ENOENT)
			snprintf(why, size, "this kernel has no tracefs");
		else if (err == -EPERM)
			snprintf(why, size, "tracefs is not mounted, and only root may mount it "
				 "(mount -t tracefs nodev /sys/kernel/tracing)");
		else if (err)
			snprintf(why, size, "tracefs cannot be read (%s)", strerror(-err));
	}
	for (int i = 0; !err && i < WP_NR_SCHED_EVENTS; i++) {
		struct wp_trace_format f;

		err = wp_trace_format_read(dir, "sched", sched_events[i], &ev->sched_formats[i]);
		if (!err)
			err = wp_trace_format_parse(ev->sched_formats[i], &f);
		if (!err && !wp_trace_field(&f, sched_pid_fields[i]))
			err = -EBADMSG;
		if (!err)
			ev->sched_pid_field[i] = *wp_trace_field(&f, sched_pid_fields[i]);
		if (err)
			snprintf(why, size, "the tracepoint sched:%s cannot be used (%s)",
				 sched_events[i], err == -EBADMSG ? "its format lacks a thread field" :
				 strerror(-err));
		ids[i] = f.id;
	}
	if (!err)
		return 0;
	for (int i = 0; i < WP_NR_SCHED_EVENTS; i++) {
		free(ev->sched_formats[i]);
		ev->sched_formats[i] = NULL;
	}
	if (asked) {
		wp_error("cannot record wake-ups: %s", why);
		return err;
	}
	return 0;
}

/*
 * sched:sched_switch's id without the wake-ups, from a tracefs already
 * mounted, for the switch-out stacks on a cgroup (wp_evlist_use_cgroup)
 * or on every CPU (-a); 0 when it cannot be had.
 */
static uint64_t sched_switch_id(const struct wp_event_opts *opts, const struct wp_priv *priv)
{
	struct wp_trace_format f;
	char dir[256], *text = NULL;
	uint64_t id = 0;
	bool mounted;

	if (!opts->off_cpu || opts->callgraph == WP_CALLGRAPH_NONE ||
	    !wp_priv_can_trace_sched(priv) || wp_tracefs_find(dir, sizeof(dir), false, &mounted))
		return 0;
	if (!wp_trace_format_read(dir, "sched", "sched_switch", &text) &&
	    !wp_trace_format_parse(text, &f))
		id = f.id;
	free(text);
	return id;
}

/*
 * Which filter a scheduler tracepoint's events take (build_filters): the
 * woken thread is the recording's; the thread switched in or out is; the
 * woken one and the waker (the thread the wake-up ran on) are; the woken
 * one is and the waker is not.
 */
enum sched_filter { FILTER_WAKEE, FILTER_SWITCH, FILTER_OWN_WAKER, FILTER_OTHER_WAKER };

/* One per-CPU scheduler tracepoint desc: role, stacks (user and kernel). */
static void add_sched_desc(struct wp_evlist *ev, const struct wp_event_opts *opts, int i,
			   uint64_t id, bool user_stack, bool kernel_stack, enum sched_filter filter)
{
	unsigned int d = ev->nr_descs++;
	struct perf_event_attr *a = &ev->descs[d].attr;

	attr_common(a, ev, opts, true);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = id;
	a->sample_period = 1;
	a->inherit = 0;
	a->enable_on_exec = 0;
	/* The same sample layout as every event's, with empty stacks. */
	if (!user_stack) {
		a->sample_stack_user = 0;
		a->exclude_callchain_user = 1;
	}
	if (!kernel_stack)
		a->exclude_callchain_kernel = 1;
	snprintf(ev->descs[d].name, sizeof(ev->descs[d].name), "sched:%s", sched_events[i]);
	ev->descs[d].role = sched_roles[i];
	ev->sched_filter_of[d] = (uint8_t)filter;
	ev->cpu_wide_descs |= 1U << d;
}

/*
 * The wake-up tracepoints, per CPU.  Only sched_waking, in the waker's
 * context, carries a stack worth having (and not with --wakeups=nostacks).
 * Another program's waker (a client waking a server) is recorded by a
 * second sched_waking event without its user stack: a copy of its stack
 * memory (some 4 KiB a wake-up) is most of what wake-ups cost a server,
 * tells nothing of the recorded program, and is another program's memory
 * in root's file.  Its kernel frames stay: they say how it woke (a
 * socket, a pipe, a futex).  Not with -a (every waker is recorded) nor
 * with --wakeups=all-stacks.
 */
static void add_sched_descs(struct wp_evlist *ev, const struct wp_event_opts *opts,
			     const uint64_t ids[WP_NR_SCHED_EVENTS])
{
	bool stacks = opts->wakeups != WP_WAKEUPS_NOSTACKS;
	bool split = stacks && opts->wakeups != WP_WAKEUPS_ALL_STACKS && !opts->cpu_wide;

	for (int i = 0; i < WP_NR_SCHED_EVENTS; i++) {
		if (sched_roles[i] == WP_EVENT_SCHED_SWITCH)
			add_sched_desc(ev, opts, i, ids[i], false, false, FILTER_SWITCH);
		else if (sched_roles[i] != WP_EVENT_WAKEUP)
			add_sched_desc(ev, opts, i, ids[i], false, false, FILTER_WAKEE);
		else if (!split)
			add_sched_desc(ev, opts, i, ids[i], stacks, stacks, FILTER_WAKEE);
		else {
			add_sched_desc(ev, opts, i, ids[i], true, true, FILTER_OWN_WAKER);
			add_sched_desc(ev, opts, i, ids[i], false, true, FILTER_OTHER_WAKER);
		}
	}
}

int wp_evlist_init(struct wp_evlist *ev, const struct wp_event_opts *opts,
		   const struct wp_priv *priv)
{
	uint64_t sched_ids[WP_NR_SCHED_EVENTS] = { 0 };
	const struct event_alias *alias = NULL;
	const struct wp_arch *arch = NULL;
	struct perf_event_attr *a;
	bool kernel, want_chain;
	uint64_t type;
	int err;

	memset(ev, 0, sizeof(*ev));
	if (pthread_mutex_init(&ev->alias_lock, NULL))
		return -ENOMEM;
	ev->alias_lock_init = true;
	ev->priv = *priv;
	alias = event_alias_find(opts->event);
	if (!alias) {
		wp_error("unknown event '%s' (see 'wallprof record -e help')",
			 wp_quoted(opts->event));
		return -EINVAL;
	}
	if (opts->callgraph == WP_CALLGRAPH_DWARF) {
		arch = wp_arch_find(wp_arch_host_machine());
		if (!arch) {
			wp_error("-g dwarf is not supported on %s yet (only on %s); use -g fp",
				 wp_arch_host_machine(), wp_arch_supported());
			return -EOPNOTSUPP;
		}
	}
	err = read_online_cpus(ev);
	if (err) {
		wp_error("cannot list the online CPUs");
		return err;
	}
	kernel = wp_priv_can_sample_kernel(priv);
	err = wakeups_setup(ev, opts, priv, sched_ids);
	if (err)
		return err;
	ev->switch_tp_id = ev->sched_formats[0] ?
			   sched_ids[WP_EVENT_SCHED_SWITCH - WP_EVENT_WAKEUP] :
			   sched_switch_id(opts, priv);
	if (alias->type == PERF_TYPE_HARDWARE && !hardware_event_works(alias, kernel)) {
		ev->asked_event = opts->event;
		alias = &event_aliases[0];
		ev->meta_flags |= WP_META_CLOCK_FALLBACK;
	}

	want_chain = opts->callgraph == WP_CALLGRAPH_FP ||
		     (opts->callgraph == WP_CALLGRAPH_DWARF && kernel);
	type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (want_chain)
		type |= PERF_SAMPLE_CALLCHAIN;
	if (opts->callgraph == WP_CALLGRAPH_DWARF)
		type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	/* Every event shares one layout: the others' samples carry empty raw data. */
	if (ev->sched_formats[0])
		type |= PERF_SAMPLE_RAW;
	wp_sample_format_init(&ev->fmt, type, arch ? arch->sample_regs_user : 0);

	if (kernel)
		ev->meta_flags |= WP_META_KERNEL_SAMPLES;
	else if (!opts->off_cpu || opts->callgraph == WP_CALLGRAPH_NONE)
		ev->user_only = true;
	if (kernel && want_chain)
		ev->meta_flags |= WP_META_KERNEL_STACKS;
	if (opts->cpu_wide)
		ev->meta_flags |= WP_META_CPU_WIDE;

	/* The on-CPU event also carries the side-band records. */
	a = &ev->descs[0].attr;
	attr_common(a, ev, opts, kernel);
	a->type = alias->type;
	a->config = alias->config;
	if (alias->type == PERF_TYPE_SOFTWARE) {
		a->sample_period = NSEC_PER_SEC / opts->freq;
		if (!a->sample_period)
			a->sample_period = 1;
		ev->sample_period_ns = a->sample_period;
	} else {
		a->freq = 1;
		a->sample_freq = opts->freq;
	}
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->build_id = 1;
	a->context_switch = opts->off_cpu;
	snprintf(ev->descs[0].name, sizeof(ev->descs[0].name), "%s", alias->name);
	ev->descs[0].role = WP_EVENT_ONCPU;
	ev->nr_descs = 1;
	if (opts->off_cpu)
		ev->meta_flags |= WP_META_SWITCHES;

	/*
	 * The switch-out stack: the kernel samples it from __schedule, so the
	 * event must not exclude kernel mode or every sample is dropped.
	 */
	if (opts->off_cpu && opts->callgraph != WP_CALLGRAPH_NONE) {
		if (kernel) {
			a = &ev->descs[1].attr;
			attr_common(a, ev, opts, true);
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
			/* Every switch-out; a budget turns it off and on (stackgate.h). */
			a->sample_period = 1;
			snprintf(ev->descs[1].name, sizeof(ev->descs[1].name), "context-switches");
			/*
			 * On every CPU, the tracepoint: the kernel hands one
			 * sample to each software event a switch fires in turn,
			 * and from 6.1 on, what one event filled in (its id,
			 * time, stacks) the next one keeps.  Beside any other
			 * recorder's context-switches event (an attached
			 * wallprof's, say), this one's samples came with that
			 * event's id: neither ours nor even our clock's.
			 * Tracepoint events each get a sample of their own.
			 */
			if (opts->cpu_wide && ev->switch_tp_id) {
				a->type = PERF_TYPE_TRACEPOINT;
				a->config = ev->switch_tp_id;
				snprintf(ev->descs[1].name, sizeof(ev->descs[1].name),
					 "sched:sched_switch");
			}
			ev->descs[1].role = WP_EVENT_SWITCH_OUT;
			ev->nr_descs = 2;
			ev->meta_flags |= WP_META_OFFCPU_STACKS;
		} else {
			ev->meta_flags |= WP_META_OFFCPU_STACKS_DENIED;
		}
	}

	if (ev->sched_formats[0]) {
		add_sched_descs(ev, opts, sched_ids);
		ev->meta_flags |= WP_META_WAKEUPS;
	}

	ev->mmap_pages_given = opts->mmap_pages_given;
	ev->enable_on_open = opts->enable_on_open;
	ev->mmap_pages = opts->mmap_pages;
	if (!ev->mmap_pages)
		ev->mmap_pages = (priv->root || priv->cap_ipc_lock) ?
				 default_ring_pages(ev->nr_cpus) : WP_DEFAULT_PAGES_USER;
	ev->rings = calloc(ev->nr_cpus, sizeof(*ev->rings));
	ev->peeked = calloc(ev->nr_cpus, sizeof(*ev->peeked));
	ev->ring_owner = malloc(sizeof(int) * ev->nr_cpus);
	if (!ev->rings || !ev->peeked || !ev->ring_owner)
		return -ENOMEM;
	for (unsigned int i = 0; i < ev->nr_cpus; i++)
		ev->ring_owner[i] = -1;
	return 0;
}

void wp_evlist_explain_limits(const struct wp_evlist *ev)
{
	if (ev->meta_flags & WP_META_CLOCK_FALLBACK)
		wp_warn("no hardware PMU for '%s' here (a virtual machine?); sampling cpu-clock instead",
			wp_quoted(ev->asked_event));
	if (ev->meta_flags & WP_META_OFFCPU_STACKS_DENIED)
		wp_warn("off-CPU stacks need CAP_PERFMON or kernel.perf_event_paranoid <= 1 "
			"(it is %d); recording exact off-CPU time without its stacks, "
			"and user-space samples only", ev->priv.paranoid);
	if (ev->user_only)
		wp_info("recording user-space samples only: kernel mode needs CAP_PERFMON "
			"or kernel.perf_event_paranoid <= 1 (it is %d)", ev->priv.paranoid);
	if (ev->tracefs_mounted)
		wp_info("mounted tracefs at /sys/kernel/tracing for the wake-up tracepoints");
	if (ev->wakeups_missing[0])
		wp_info("wake-ups are not recorded: %s; the wait for a CPU after a wake-up "
			"then counts as blocked, and no wait has a waker to follow (report's "
			"wait-for graph and critical path)", ev->wakeups_missing);
}

static int evlist_add_fd(struct wp_evlist *ev, int fd, int cpu, unsigned int desc,
			 pid_t tid)
{
	struct wp_evfd *f;

	if (WP_GROW(ev->fds, ev->cap_fds, ev->nr_fds + 1))
		return -ENOMEM;
	f = &ev->fds[ev->nr_fds++];
	f->fd = fd;
	f->cpu = cpu;
	f->desc = desc;
	f->tid = tid;
	f->id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &f->id))
		return -errno;
	f->file_id = f->id;
	return 0;
}

/* mmap the ring of CPU slot i on fd, shrinking it when over the mlock limit. */
static int evlist_map_ring(struct wp_evlist *ev, unsigned int i, int fd)
{
	unsigned int pages = ev->mmap_pages;
	int err;

	for (;;) {
		err = wp_ring_map(&ev->rings[i], fd, pages);
		if (err != -EPERM || ev->mmap_pages_given || pages <= 8)
			break;
		pages /= 2;
	}
	if (err == -EPERM) {
		wp_error("cannot map a %u-page ring buffer: over the locked-memory limit; "
			 "use a smaller -m, raise kernel.perf_event_mlock_kb, or run as root",
			 pages);
		return err;
	}
	if (err) {
		wp_error("cannot map the ring buffer: %s", strerror(-err));
		return err;
	}
	if (pages != ev->mmap_pages) {
		wp_warn("ring buffers reduced to %u pages per CPU by the locked-memory limit "
			"(kernel.perf_event_mlock_kb); more records may be lost", pages);
		ev->mmap_pages = pages;
	}
	ev->rings[i].cpu = ev->cpus[i];
	ev->ring_owner[i] = fd;
	ev->peeked[i] = wp_ring_tell(&ev->rings[i]);
	return 0;
}

/* perf_event_open one event of desc on CPU slot cpu_idx: fd or -errno. */
static int evlist_open_fd(struct wp_evlist *ev, pid_t pid, unsigned int cpu_idx,
			  unsigned int desc)
{
	struct perf_event_attr attr = ev->descs[desc].attr;
	int cpu = ev->cpus[cpu_idx], fd;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;

	if (ev->cgroup_descs & (1U << desc)) {
		pid = ev->cgroup_fd;
		flags |= PERF_FLAG_PID_CGROUP;
	}

	/* Only the ring owner wakes the drain thread, at a quarter full. */
	attr.wakeup_watermark = (uint32_t)((uint64_t)ev->mmap_pages *
					   (uint64_t)sysconf(_SC_PAGESIZE) / 4);
	fd = sys_perf_event_open(&attr, pid, cpu, -1, flags);
	if (fd == -EINVAL && attr.build_id) {
		/* Kernels before 5.12 know no build_id bit. */
		attr.build_id = 0;
		fd = sys_perf_event_open(&attr, pid, cpu, -1, flags);
		if (fd >= 0)
			ev->descs[desc].attr.build_id = 0;
	}
	if (fd == -EINVAL && (attr.read_format & PERF_FORMAT_LOST)) {
		/* Nor before 6.0 PERF_FORMAT_LOST. */
		attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = sys_perf_event_open(&attr, pid, cpu, -1, flags);
		if (fd >= 0)
			ev->descs[desc].attr.read_format = attr.read_format;
	}
	return fd;
}

/* Give an open event its id and its CPU's ring. */
static int evlist_setup_fd(struct wp_evlist *ev, int fd, pid_t pid, unsigned int cpu_idx,
			   unsigned int desc, const char *what)
{
	int cpu = ev->cpus[cpu_idx], err;

	err = evlist_add_fd(ev, fd, cpu, desc, pid);
	if (err) {
		if (ev->nr_fds && ev->fds[ev->nr_fds - 1].fd != fd)
			close(fd);
		wp_error("cannot set up the event for %s: %s", what, strerror(-err));
		return err;
	}
	if (ev->ring_owner[cpu_idx] < 0) {
		err = evlist_map_ring(ev, cpu_idx, fd);
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ev->ring_owner[cpu_idx])) {
		err = -errno;
		wp_error("cannot share the ring buffer of CPU %d: %s", cpu, strerror(-err));
	}
	return err;
}

/*
 * Open every event of one target (or of every CPU), and set each up as it
 * comes.  When attaching, each counts as soon as it has its ring: a thread
 * that the target creates from then on inherits it and is announced by a
 * FORK record (a disabled event would pass itself on silently).  A thread
 * created while this runs inherits only the events that exist at that
 * moment; keeping the moment short is all that can be done about it.
 */
static int evlist_open(struct wp_evlist *ev, pid_t pid, const char *what)
{
	for (unsigned int c = 0; c < ev->nr_cpus; c++) {
		for (unsigned int d = 0; d < ev->nr_descs; d++) {
			int fd, err;

			/* Per-CPU events are not opened per task. */
			if (pid > 0 &&
			    ((ev->cpu_wide_descs | ev->cgroup_descs | ev->percpu_descs) & (1U << d)))
				continue;
			fd = evlist_open_fd(ev, pid, c, d);

			if (fd == -ENODEV)
				continue;	/* CPU went offline meanwhile */
			/* A vanished task is the caller's to judge: a thread may just have exited. */
			if (fd == -ESRCH && pid > 0)
				return fd;
			if (fd < 0) {
				wp_priv_explain_open_error(&ev->priv, fd, what);
				return fd;
			}
			err = evlist_setup_fd(ev, fd, pid, c, d, what);
			if (!err && ev->enable_on_open && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
				err = -errno;
				wp_error("cannot enable the events of %s: %s", what, strerror(-err));
			}
			if (err)
				return err;
		}
	}
	return 0;
}

int wp_event_open_anchor(pid_t tid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return sys_perf_event_open(&attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int evlist_open_anchor(struct wp_evlist *ev, pid_t tid)
{
	int fd = wp_event_open_anchor(tid), *na;

	if (fd < 0)
		return fd;
	na = realloc(ev->anchor_fds, (ev->nr_anchor_fds + 1) * sizeof(*na));
	if (!na) {
		close(fd);
		return -ENOMEM;
	}
	ev->anchor_fds = na;
	ev->anchor_fds[ev->nr_anchor_fds++] = fd;
	return 0;
}

bool wp_evlist_use_cgroup(struct wp_evlist *ev, int cgroup_fd, const pid_t *members, size_t n)
{
	ev->cgroup_members = members;
	ev->nr_cgroup_members = n;
	for (unsigned int d = 0; d < ev->nr_descs; d++) {
		struct perf_event_attr *a = &ev->descs[d].attr;

		if ((ev->cpu_wide_descs & (1U << d)) || ev->meta_flags & WP_META_CPU_WIDE)
			continue;
		/*
		 * The on-CPU event too, with the switch records and the task
		 * records it carries: with no event left in the threads' own
		 * perf contexts, a context switch skips the kernel's per-task
		 * perf work altogether.  A pinned ping-pong storm ran 7% faster
		 * so, though a CPU-wide switch record is 8 bytes longer and
		 * names the other thread.  cpu-clock only, the event measured:
		 * the others stay per task.
		 */
		if (ev->descs[d].role == WP_EVENT_ONCPU &&
		    (a->type != PERF_TYPE_SOFTWARE || a->config != PERF_COUNT_SW_CPU_CLOCK))
			continue;
		if (ev->descs[d].role != WP_EVENT_SWITCH_OUT && ev->descs[d].role != WP_EVENT_ONCPU)
			continue;
		a->inherit = 0;
		a->enable_on_exec = 0;	/* a task's context only: enabled at open */
		/*
		 * The tracepoint rather than the software event: while a
		 * software context-switches event exists anywhere, every
		 * switch of every task takes the kernel's software event path,
		 * which in a storm costs a point or two even with the event off.
		 */
		if (ev->descs[d].role == WP_EVENT_SWITCH_OUT && ev->switch_tp_id) {
			a->type = PERF_TYPE_TRACEPOINT;
			a->config = ev->switch_tp_id;
			snprintf(ev->descs[d].name, sizeof(ev->descs[d].name), "sched:sched_switch");
		}
		ev->cgroup_descs |= 1U << d;
		ev->cgroup_fd = cgroup_fd;
	}
	return ev->cgroup_descs != 0;
}

/* Open and enable the descs of mask on every CPU, for every task (or a cgroup's). */
static int open_enabled_per_cpu(struct wp_evlist *ev, unsigned int mask, const char *what)
{
	for (unsigned int c = 0; c < ev->nr_cpus; c++) {
		for (unsigned int d = 0; d < ev->nr_descs; d++) {
			int fd, err;

			if (!(mask & (1U << d)))
				continue;
			fd = evlist_open_fd(ev, -1, c, d);
			if (fd == -ENODEV)
				continue;
			if (fd < 0) {
				wp_priv_explain_open_error(&ev->priv, fd, what);
				return fd;
			}
			err = evlist_setup_fd(ev, fd, -1, c, d, what);
			if (!err && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
				err = -errno;
			if (err)
				return err;
		}
	}
	return 0;
}

int wp_evlist_open_cgroup_events(struct wp_evlist *ev)
{
	return open_enabled_per_cpu(ev, ev->cgroup_descs, "the cgroup");
}

bool wp_evlist_oncpu_per_cpu(struct wp_evlist *ev)
{
	struct perf_event_attr *a = &ev->descs[0].attr, *sb;
	unsigned int d;

	if (ev->meta_flags & WP_META_CPU_WIDE || ev->cgroup_descs || ev->percpu_descs ||
	    ev->nr_descs >= WP_MAX_DESCS || ev->descs[0].role != WP_EVENT_ONCPU ||
	    a->type != PERF_TYPE_SOFTWARE || a->config != PERF_COUNT_SW_CPU_CLOCK)
		return false;
	d = ev->nr_descs++;
	ev->descs[d] = ev->descs[0];
	snprintf(ev->descs[d].name, sizeof(ev->descs[d].name), "dummy");
	ev->descs[d].role = WP_EVENT_SIDEBAND;
	sb = &ev->descs[d].attr;
	sb->config = PERF_COUNT_SW_DUMMY;
	sb->sample_period = 1;	/* never sampled: it counts nothing */
	/* The on-CPU event: no side-band records (the dummy's), every task's time. */
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = a->build_id = 0;
	a->context_switch = 0;
	a->inherit = 0;
	a->enable_on_exec = 0;
	/* The idle task is no thread of a recording of tasks. */
	a->exclude_idle = 1;
	ev->percpu_descs |= 1U << 0;
	ev->meta_flags |= WP_META_ONCPU_PER_CPU;
	return true;
}

int wp_evlist_open_percpu_events(struct wp_evlist *ev)
{
	return open_enabled_per_cpu(ev, ev->percpu_descs, "the on-CPU events");
}

bool wp_evlist_has_wakeups(const struct wp_evlist *ev)
{
	return ev->cpu_wide_descs != 0;
}

int wp_evlist_open_cpu_events(struct wp_evlist *ev)
{
	for (unsigned int c = 0; c < ev->nr_cpus; c++) {
		for (unsigned int d = 0; d < ev->nr_descs; d++) {
			int fd, err;

			if (!(ev->cpu_wide_descs & (1U << d)))
				continue;
			fd = evlist_open_fd(ev, -1, c, d);
			if (fd == -ENODEV)
				continue;
			if (fd < 0) {
				wp_priv_explain_open_error(&ev->priv, fd, "the wake-up tracepoints");
				return fd;
			}
			err = evlist_setup_fd(ev, fd, -1, c, d, "the wake-up tracepoints");
			if (err)
				return err;
		}
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * "pid == 12 || (pid >= 20 && pid <= 25) || pid > 900" (field "pid") for
 * the sorted tids and the threads still to come (above newer_than),
 * joining runs whose gaps are at most gap: a few other threads' records
 * (which the drain thread leaves out) are better than a filter over the
 * kernel's length.  Its length, or 0 when it does not fit.
 */
static size_t tid_filter(const char *field, const uint32_t *t, size_t n, uint32_t gap,
			 uint32_t newer_than, char *buf, size_t size)
{
	size_t len = 0;
	int w;

	buf[0] = '\0';
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && t[j + 1] - t[j] <= gap + 1)
			j++;
		if (t[i] > newer_than)
			break;	/* the last term covers it */
		if (t[j] == t[i])
			w = snprintf(buf + len, size - len, "%s == %u || ", field, t[i]);
		else
			w = snprintf(buf + len, size - len, "(%s >= %u && %s <= %u) || ", field,
				     t[i], field, t[j]);
		if (w < 0 || (size_t)w >= size - len)
			return 0;
		len += (size_t)w;
		i = j + 1;
	}
	w = snprintf(buf + len, size - len, "%s > %u", field, newer_than);
	if (w < 0 || (size_t)w >= size - len)
		return 0;
	return len + (size_t)w;
}

/*
 * sched_switch: the thread switched in (next_pid) or out (common_pid,
 * the current one) is one of the recording's.
 */
static size_t switch_filter(const uint32_t *t, size_t n, uint32_t gap, uint32_t newer_than,
			    char *buf, size_t size)
{
	size_t len, more;

	if (size < 4)
		return 0;
	buf[0] = '(';
	len = tid_filter("next_pid", t, n, gap, newer_than, buf + 1, size - 1);
	if (!len || size - 1 - len < 8)
		return 0;
	len += 1;
	memcpy(buf + len, ") || (", 6);
	len += 6;
	more = tid_filter("common_pid", t, n, gap, newer_than, buf + len, size - len);
	if (!more || size - len - more < 2)
		return 0;
	len += more;
	buf[len++] = ')';
	buf[len] = '\0';
	return len;
}

/*
 * "(A) && (B)", or "(A) && !(B)" when negated, into buf of size; its
 * length, or 0 when it does not fit.
 */
static size_t filter_and(const char *x, const char *y, bool negated, char *buf, size_t size)
{
	int w = snprintf(buf, size, "(%s) && %s(%s)", x, negated ? "!" : "", y);

	return w < 0 || (size_t)w >= size ? 0 : (size_t)w;
}

/* The filters for tids and the threads above newer_than, into ev->sched_filter. */
static int build_filters(struct wp_evlist *ev, const uint32_t *tids, size_t n,
			 uint32_t newer_than)
{
	/* The kernel takes a filter of less than a page, and only once. */
	char f[4][4000], waker[4000];
	char *copy[4] = { NULL };
	uint32_t *t, gap = 0;

	t = malloc((n ? n : 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (n)
		memcpy(t, tids, n * sizeof(*t));
	qsort(t, n, sizeof(*t), u32_cmp);
	while (!tid_filter("pid", t, n, gap, newer_than, f[FILTER_WAKEE], sizeof(f[0])) ||
	       !switch_filter(t, n, gap, newer_than, f[FILTER_SWITCH], sizeof(f[0])) ||
	       !tid_filter("common_pid", t, n, gap, newer_than, waker, sizeof(waker)) ||
	       !filter_and(f[FILTER_WAKEE], waker, false, f[FILTER_OWN_WAKER], sizeof(f[0])) ||
	       !filter_and(f[FILTER_WAKEE], waker, true, f[FILTER_OTHER_WAKER], sizeof(f[0])))
		gap = gap ? gap * 2 : 16;
	free(t);
	/* Kept for the events opened again (wp_evlist_sched_open). */
	for (int i = 0; i < 4; i++) {
		copy[i] = strdup(f[i]);
		if (!copy[i]) {
			for (int k = 0; k <= i; k++)
				free(copy[k]);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < 4; i++) {
		free(ev->sched_filter[i]);
		ev->sched_filter[i] = copy[i];
	}
	return 0;
}

int wp_evlist_filter_wakees(struct wp_evlist *ev, const uint32_t *tids, size_t n,
			    uint32_t newer_than)
{
	int err = 0;

	if (!ev->cpu_wide_descs || ev->meta_flags & WP_META_CPU_WIDE)
		return 0;
	err = build_filters(ev, tids, n, newer_than);
	if (err)
		return err;
	for (size_t i = 0; i < ev->nr_fds; i++) {
		const struct wp_evfd *f = &ev->fds[i];
		const char *filter = ev->sched_filter[ev->sched_filter_of[f->desc]];

		if (!(ev->cpu_wide_descs & (1U << f->desc)))
			continue;
		if (ioctl(f->fd, PERF_EVENT_IOC_SET_FILTER, filter) ||
		    ioctl(f->fd, PERF_EVENT_IOC_ENABLE, 0)) {
			err = err ? err : -errno;
			wp_debug("tracepoint filter '%s': %s", filter, strerror(errno));
		}
	}
	return err;
}

static int sched_swap(struct wp_evlist *ev, uint64_t now_ns);

int wp_evlist_refilter_wakees(struct wp_evlist *ev, const uint32_t *tids, size_t n,
			      uint32_t newer_than, uint64_t now_ns)
{
	int err;

	if (!ev->cpu_wide_descs || ev->meta_flags & WP_META_CPU_WIDE || !ev->sched_filter[0])
		return 0;
	err = build_filters(ev, tids, n, newer_than);
	/* Closed (by the budget): they open with the new filters. */
	if (err || ev->sched_closed)
		return err;
	return sched_swap(ev, now_ns);
}

int wp_evlist_open_task(struct wp_evlist *ev, pid_t tid, const char *what)
{
	unsigned int per_task = ((1U << ev->nr_descs) - 1) &
				~(ev->cpu_wide_descs | ev->cgroup_descs | ev->percpu_descs);
	int err;

	/*
	 * Every event per CPU (on a cgroup): the thread's perf context holds
	 * nothing to anchor, and one made for an anchor alone would cost it
	 * every context switch.
	 */
	if (!per_task)
		return 0;
	err = evlist_open_anchor(ev, tid);
	if (err == -ESRCH)
		return err;
	if (err)
		wp_debug("no anchor event for %s: %s", what, strerror(-err));
	return evlist_open(ev, tid, what);
}

int wp_evlist_open_cpus(struct wp_evlist *ev)
{
	return evlist_open(ev, -1, "all CPUs");
}

bool wp_evlist_has_task(const struct wp_evlist *ev, pid_t tid)
{
	for (size_t i = 0; i < ev->nr_fds; i++)
		if (ev->fds[i].tid == tid)
			return true;
	return false;
}

void wp_evlist_peek(struct wp_evlist *ev, wp_evlist_peek_fn fn, void *arg)
{
	for (unsigned int i = 0; i < ev->nr_cpus; i++) {
		struct wp_ring *r = &ev->rings[i];
		const struct perf_event_header *h;
		uint64_t unread;

		if (!r->meta)
			continue;
		unread = wp_ring_tell(r);
		wp_ring_begin(r);
		wp_ring_seek(r, ev->peeked[i]);
		while (wp_ring_read_next(r, &h) > 0)
			fn(h, arg);
		/* A malformed record stops the look; the drain will say so. */
		ev->peeked[i] = wp_ring_tell(r);
		wp_ring_seek(r, unread);
	}
}

static int evlist_ioctl_all(struct wp_evlist *ev, unsigned long req)
{
	int err = 0;

	for (size_t i = 0; i < ev->nr_fds; i++)
		if (ev->fds[i].fd >= 0 && ioctl(ev->fds[i].fd, req, 0) && !err)
			err = -errno;
	return err;
}

int wp_evlist_gate(struct wp_evlist *ev, unsigned int cpu, bool open)
{
	unsigned long req = open ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	int err = 0;

	/* On a parent event, the ioctl reaches every inherited copy too. */
	for (size_t i = 0; i < ev->nr_fds; i++) {
		const struct wp_evfd *f = &ev->fds[i];

		if (ev->descs[f->desc].role != WP_EVENT_SWITCH_OUT || f->cpu != (int)cpu)
			continue;
		if (ioctl(f->fd, req, 0) && !err)
			err = -errno;
	}
	return err;
}

/* An event opened again: its id, and the id it stands for. */
struct wp_id_alias {
	uint64_t id, canon;
	uint64_t closed_ns;	/* when it was closed, or 0 while open */
};

/* Aliases of events closed longer ago than this are dropped: their records were read. */
#define ALIAS_KEEP_NS (10 * 1000000000ULL)

static bool is_sched_fd(const struct wp_evlist *ev, const struct wp_evfd *f)
{
	uint32_t role = ev->descs[f->desc].role;

	return (ev->cpu_wide_descs & (1U << f->desc)) && role >= WP_EVENT_WAKEUP &&
	       role <= WP_EVENT_SCHED_SWITCH;
}

/* Close a scheduler tracepoint's fd, counting what its ring lost. */
static void sched_fd_close(struct wp_evlist *ev, unsigned int desc, int fd)
{
	uint64_t v[3];	/* value, id, lost */

	if ((ev->descs[desc].attr.read_format & PERF_FORMAT_LOST) &&
	    read(fd, v, sizeof(v)) == (ssize_t)sizeof(v))
		ev->closed_lost += v[2];
	close(fd);
}

/* Drop the aliases of events whose records were all read long ago. */
static void aliases_prune(struct wp_evlist *ev, uint64_t now_ns)
{
	size_t kept = 0;

	pthread_mutex_lock(&ev->alias_lock);
	for (size_t i = 0; i < ev->nr_aliases; i++)
		if (!ev->aliases[i].closed_ns || now_ns < ev->aliases[i].closed_ns + ALIAS_KEEP_NS)
			ev->aliases[kept++] = ev->aliases[i];
	ev->nr_aliases = kept;
	pthread_mutex_unlock(&ev->alias_lock);
}

int wp_evlist_sched_close(struct wp_evlist *ev, uint64_t now_ns)
{
	if (ev->sched_closed)
		return 0;
	pthread_mutex_lock(&ev->alias_lock);
	for (size_t i = 0; i < ev->nr_aliases; i++)
		if (!ev->aliases[i].closed_ns)
			ev->aliases[i].closed_ns = now_ns ? now_ns : 1;
	pthread_mutex_unlock(&ev->alias_lock);
	for (size_t i = 0; i < ev->nr_fds; i++) {
		struct wp_evfd *f = &ev->fds[i];

		if (!is_sched_fd(ev, f) || f->fd < 0)
			continue;
		sched_fd_close(ev, f->desc, f->fd);
		f->fd = -1;
	}
	ev->sched_closed = true;
	return 0;
}

/*
 * One closed tracepoint event of f's desc and CPU opened again, disabled:
 * opening is what puts perf's probe on the tracepoint, patching kernel
 * code with interrupts to every CPU, and no record should be taken while
 * the others are still at it.
 */
static int sched_reopen(struct wp_evlist *ev, struct wp_evfd *f, uint64_t canon)
{
	const char *filter = ev->sched_filter[ev->sched_filter_of[f->desc]];
	struct wp_id_alias *a;
	unsigned int c = 0;
	uint64_t id;
	int fd, err = 0;

	while (c < ev->nr_cpus && ev->cpus[c] != f->cpu)
		c++;
	if (c == ev->nr_cpus || ev->ring_owner[c] < 0)
		return -ENODEV;
	fd = evlist_open_fd(ev, -1, c, f->desc);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ev->ring_owner[c]) ||
	    (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) ||
	    ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Known before its first record can be read. */
	pthread_mutex_lock(&ev->alias_lock);
	if (WP_GROW(ev->aliases, ev->cap_aliases, ev->nr_aliases + 1)) {
		err = -ENOMEM;
	} else {
		a = &ev->aliases[ev->nr_aliases++];
		a->id = id;
		a->canon = canon;
		a->closed_ns = 0;
	}
	pthread_mutex_unlock(&ev->alias_lock);
	if (err) {
		close(fd);
		return err;
	}
	f->fd = fd;
	f->id = id;
	return 0;
}

int wp_evlist_sched_open(struct wp_evlist *ev, uint64_t now_ns)
{
	int err = 0;

	if (!ev->sched_closed)
		return 0;
	aliases_prune(ev, now_ns);
	for (size_t i = 0; i < ev->nr_fds; i++) {
		struct wp_evfd *f = &ev->fds[i];
		int e;

		if (!is_sched_fd(ev, f) || f->fd >= 0)
			continue;
		e = sched_reopen(ev, f, f->file_id);
		if (e && e != -ENODEV && !err)
			err = e;
	}
	/* Then all at once. */
	for (size_t i = 0; i < ev->nr_fds; i++) {
		struct wp_evfd *f = &ev->fds[i];

		if (is_sched_fd(ev, f) && f->fd >= 0 && ioctl(f->fd, PERF_EVENT_IOC_ENABLE, 0) &&
		    !err)
			err = -errno;
	}
	ev->sched_closed = false;
	return err;
}

/*
 * Every open scheduler tracepoint replaced by a new one (with the filters
 * as they are now): the new ones are opened first, disabled, so that
 * perf's probe stays on the tracepoints all along (closing the last
 * event of a tracepoint takes it off, patching the kernel's code, some
 * 50-90 ms on this kind of VM under load, while nothing is recorded);
 * then each old one is turned off and its new one on, and the old ones
 * closed.  No hit is recorded twice; those between the two ioctls are
 * not recorded.
 */
static int sched_swap(struct wp_evlist *ev, uint64_t now_ns)
{
	int *old_fd = malloc(ev->nr_fds * sizeof(*old_fd) + 1);
	uint64_t *old_id = malloc(ev->nr_fds * sizeof(*old_id) + 1);
	int err = 0;

	if (!old_fd || !old_id) {
		free(old_fd);
		free(old_id);
		return -ENOMEM;
	}
	aliases_prune(ev, now_ns);
	for (size_t i = 0; i < ev->nr_fds; i++) {
		struct wp_evfd *f = &ev->fds[i];
		int e;

		old_fd[i] = -1;
		if (!is_sched_fd(ev, f) || f->fd < 0)
			continue;
		old_fd[i] = f->fd;
		old_id[i] = f->id;
		f->fd = -1;
		e = sched_reopen(ev, f, f->file_id);
		if (e) {
			/* The old one stays. */
			f->fd = old_fd[i];
			f->id = old_id[i];
			old_fd[i] = -1;
			if (e != -ENODEV && !err)
				err = e;
		}
	}
	for (size_t i = 0; i < ev->nr_fds; i++) {
		if (old_fd[i] < 0)
			continue;
		ioctl(old_fd[i], PERF_EVENT_IOC_DISABLE, 0);
		if (ioctl(ev->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0) && !err)
			err = -errno;
	}
	pthread_mutex_lock(&ev->alias_lock);
	for (size_t i = 0; i < ev->nr_fds; i++)
		for (size_t k = 0; old_fd[i] >= 0 && k < ev->nr_aliases; k++)
			if (ev->aliases[k].id == old_id[i] && !ev->aliases[k].closed_ns)
				ev->aliases[k].closed_ns = now_ns ? now_ns : 1;
	pthread_mutex_unlock(&ev->alias_lock);
	for (size_t i = 0; i < ev->nr_fds; i++)
		if (old_fd[i] >= 0)
			sched_fd_close(ev, ev->fds[i].desc, old_fd[i]);
	free(old_fd);
	free(old_id);
	return err;
}

bool wp_evlist_id_alias(struct wp_evlist *ev, uint64_t id, uint64_t *canon)
{
	bool found = false;

	pthread_mutex_lock(&ev->alias_lock);
	/* Newest first: most records are of the events open now. */
	for (size_t i = ev->nr_aliases; i-- > 0;)
		if (ev->aliases[i].id == id) {
			*canon = ev->aliases[i].canon;
			found = true;
			break;
		}
	pthread_mutex_unlock(&ev->alias_lock);
	return found;
}

int wp_evlist_enable(struct wp_evlist *ev)
{
	return evlist_ioctl_all(ev, PERF_EVENT_IOC_ENABLE);
}

int wp_evlist_disable(struct wp_evlist *ev)
{
	return evlist_ioctl_all(ev, PERF_EVENT_IOC_DISABLE);
}

uint64_t wp_evlist_read_lost(const struct wp_evlist *ev)
{
	uint64_t total = ev->closed_lost;

	for (size_t i = 0; i < ev->nr_fds; i++) {
		uint64_t v[3];	/* value, id, lost */

		if (ev->fds[i].fd < 0 ||
		    !(ev->descs[ev->fds[i].desc].attr.read_format & PERF_FORMAT_LOST))
			continue;
		if (read(ev->fds[i].fd, v, sizeof(v)) == (ssize_t)sizeof(v))
			total += v[2];
	}
	return total;
}

int wp_evlist_describe(const struct wp_evlist *ev, struct wp_meta *meta)
{
	meta->events = calloc(ev->nr_descs, sizeof(*meta->events));
	if (!meta->events)
		return -ENOMEM;
	meta->nr_events = ev->nr_descs;
	for (unsigned int d = 0; d < ev->nr_descs; d++) {
		struct wp_event_desc *e = &meta->events[d];

		*e = ev->descs[d];
		e->ids = malloc(sizeof(uint64_t) * (ev->nr_fds + 1));
		if (!e->ids)
			return -ENOMEM;
		e->nr_ids = 0;
		for (size_t i = 0; i < ev->nr_fds; i++)
			if (ev->fds[i].desc == d)
				e->ids[e->nr_ids++] = ev->fds[i].file_id;
	}
	meta->sample_type = ev->fmt.sample_type;
	meta->regs_mask = ev->fmt.regs_mask;
	meta->stack_size = ev->descs[0].attr.sample_stack_user;
	meta->flags |= ev->meta_flags;
	meta->sample_period_ns = ev->sample_period_ns;
	meta->nr_cpus = ev->nr_cpus;
	return 0;
}

void wp_evlist_release(struct wp_evlist *ev)
{
	for (unsigned int i = 0; ev->rings && i < ev->nr_cpus; i++)
		wp_ring_release(&ev->rings[i]);
	for (size_t i = 0; i < ev->nr_fds; i++)
		if (ev->fds[i].fd >= 0)
			close(ev->fds[i].fd);
	for (size_t i = 0; i < ev->nr_anchor_fds; i++)
		close(ev->anchor_fds[i]);
	free(ev->anchor_fds);
	for (int i = 0; i < WP_NR_SCHED_EVENTS; i++)
		free(ev->sched_formats[i]);
	free(ev->rings);
	free(ev->peeked);
	free(ev->ring_owner);
	free(ev->fds);
	free(ev->cpus);
	for (int i = 0; i < 4; i++)
		free(ev->sched_filter[i]);
	free(ev->aliases);
	if (ev->alias_lock_init)
		pthread_mutex_destroy(&ev->alias_lock);
	memset(ev, 0, sizeof(*ev));
}
