/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layout.h: the byte layout of perf records, and wallprof's own record types.
 *
 * Owns the knowledge of where each field sits in every record a recording
 * holds: a PERF_RECORD_SAMPLE and the sample_id trailer of other records
 * (given the sample_type that every event of a recording shares), the
 * bodies of the kernel's other records (MMAP2, COMM, FORK/EXIT, LOST,
 * SWITCH, THROTTLE), and wallprof's own records.  Nothing else reads a
 * record body by offset: the recorder and the reader side go through the
 * decoders here, and synthesized records through the encoders.  Which
 * frames of a sample are the kernel's is told here too, by the record's
 * cpumode and the callchain's context markers.  And what each record type
 * is, in one table (wp_record_kind_of): its name, where its time is, whether
 * it tells what lives (rotation restates it in every file), begins every
 * file, is a switch or a sample, is wallprof's own, and how a summary counts
 * it; no other stage keeps a list of types.  Parsed structures borrow
 * pointers into the record; they stay valid as long as the record bytes do.
 */
#ifndef WALLPROF_LAYOUT_H
#define WALLPROF_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct wp_buf;

/*
 * Record types that wallprof writes itself.  They live above the kernel's
 * range (which ends below 64) and above perf's user types (64..99).
 */
enum wp_record_type {
	/* Every record before it that came from one drain pass is complete. */
	WP_RECORD_ROUND = 100,
	/* Build id of a mapped file: struct wp_record_build_id + path. */
	WP_RECORD_BUILD_ID = 101,
	/* Start of a thread that existed before recording: struct wp_record_thread. */
	WP_RECORD_THREAD = 102,
	/* The events opened for one attached thread: struct wp_record_attach. */
	WP_RECORD_ATTACH = 103,
	/* A trace event's format file, as tracefs gave it: struct wp_record_text. */
	WP_RECORD_TRACE_FORMAT = 104,
	/* A process's command line, as read: struct wp_record_cmdline + arguments. */
	WP_RECORD_CMDLINE = 105,
	/*
	 * The stack table (file format version 2): files, places and stacks,
	 * each defined once before the records that use it, and samples that
	 * name a stack.  See samplestack.h.
	 */
	/* A file that places are in: struct wp_record_dso + path. */
	WP_RECORD_DSO = 106,
	/* Where a frame's code is: struct wp_record_place. */
	WP_RECORD_PLACE = 107,
	/* A distinct stack: struct wp_record_stack + place ids. */
	WP_RECORD_STACK = 108,
	/* A sample, its stack named by id: struct wp_record_stack_sample. */
	WP_RECORD_STACK_SAMPLE = 109,
	/* The kernel's own figures of a thread's time: struct wp_record_thread_clock. */
	WP_RECORD_THREAD_CLOCK = 110,
	/* The name of a thread that woke one of the recording's: struct wp_record_task_name. */
	WP_RECORD_TASK_NAME = 111,
};

/*
 * What each record type is, for every stage that needs to know: one
 * table (layout.c's record_kinds), asked by type.  No stage keeps a list
 * of types of its own, nor tells wallprof's records by their number.
 */
enum {
	/*
	 * It tells what lives (a thread, a process, an executable mapping,
	 * a command line, a stack table entry): rotation's model follows it,
	 * and every file of a rotating recording restates it at its start.
	 */
	WP_KIND_STATE = 1U << 0,
	/* Every file of a rotating recording begins with it (once per file). */
	WP_KIND_PRELUDE = 1U << 1,
	/* A context switch: who is on a CPU since when (rotation's model follows it). */
	WP_KIND_SWITCH = 1U << 2,
	/* wallprof's own: its time, if any, is a field of its own, not a sample_id. */
	WP_KIND_OWN = 1U << 3,
	/* A stack table definition (taken as read, never time-ordered). */
	WP_KIND_STACK_DEF = 1U << 4,
	/* A sample of an event (wp_record_event_id): its event's role says what it is. */
	WP_KIND_SAMPLE = 1U << 5,
};

/* Where a record type's time is (wp_record_time). */
enum wp_record_clock {
	WP_TIME_NONE = 0,	/* none: it belongs with the records around it */
	WP_TIME_SAMPLE,		/* a PERF_RECORD_SAMPLE's time field */
	WP_TIME_SAMPLE_ID,	/* the kernel's other records: their sample_id trailer */
	WP_TIME_FIELD,		/* wallprof's own: a field of its body (the kind's time()) */
};

/* What a summary counts a record of the type as (wp_summary_count). */
enum wp_record_count {
	WP_COUNT_RECORD = 0,	/* a record, and nothing more */
	WP_COUNT_NOTHING,	/* not even a record: a marker between drain passes */
	WP_COUNT_SAMPLE,	/* by its event's role: a sample, a switch-out stack, a wake-up */
	WP_COUNT_SWITCH,
	WP_COUNT_LOST,		/* the records the rings lost, as it says */
	WP_COUNT_LOST_SAMPLES,	/* the samples the kernel lost, as it says */
	WP_COUNT_THROTTLE,
	/* read from /proc or the kernel apart from the rings */
	WP_COUNT_SYNTHESIZED,
};

struct wp_record_kind {
	uint32_t type;
	const char *name;
	unsigned int flags;	/* WP_KIND_* */
	uint8_t clock;		/* enum wp_record_clock */
	uint8_t count;		/* enum wp_record_count */
	/* WP_TIME_FIELD: the record's time, or 0 when it is too short to hold it. */
	uint64_t (*time)(const struct perf_event_header *h);
};

/* The kind of a record type, or NULL for a type wallprof does not know. */
const struct wp_record_kind *wp_record_kind_of(uint32_t type);

/* Whether records of this type are of a known kind with any of these WP_KIND_* flags. */
bool wp_record_kind_has(uint32_t type, unsigned int flags);

/*
 * Whether a record type is wallprof's own: a known one, or, unknown, in
 * wallprof's range (WP_RECORD_ROUND and above: a later version's), which
 * has no sample_id trailer to read.
 */
bool wp_record_is_own(uint32_t type);

struct wp_sample_format;

/* The time of a record: its sample time, its own field's, its sample_id's, or 0. */
uint64_t wp_record_time(const struct wp_sample_format *fmt, const struct perf_event_header *rec);

/*
 * The event id of a record of kind WP_KIND_SAMPLE (a kernel sample, or a
 * live recording's STACK_SAMPLE): 0, or -EBADMSG for another kind or a
 * record too short.
 */
int wp_record_event_id(const struct wp_sample_format *fmt, const struct perf_event_header *rec,
		       uint64_t *id);

/*
 * Records that wallprof synthesizes from /proc (COMM, MMAP2) carry event
 * id 0 in their sample_id trailer: the kernel numbers events from 1.
 */
#define WP_SYNTHESIZED_ID 0

struct wp_record_build_id {
	struct perf_event_header header;
	uint32_t pid;		/* a process that mapped it, -1 if several */
	uint8_t size;		/* bytes used in build_id[] */
	uint8_t reserved[3];
	uint8_t build_id[24];	/* 20 for SHA-1 ids, up to 24 */
	uint32_t maj, min;	/* device of the file, as in MMAP2 */
	uint64_t ino;
	char filename[];	/* NUL-terminated, padded to 8 bytes */
};

/*
 * A thread alive when recording began (attach and system-wide modes), or
 * when a rotated file began.  header.misc: 0, or WP_THREAD_OFF_CPU when
 * at time the thread was off-CPU since a switch-out before (a rotated
 * file's start, or asleep as recording began),
 * with WP_THREAD_PREEMPTED when it was preempted rather than blocked;
 * the stack it went off-CPU in may follow, a switch-out sample dated at
 * time (at recording's start, one made from /proc: waitstack.h).
 */
#define WP_THREAD_OFF_CPU 1U
#define WP_THREAD_PREEMPTED 2U
/*
 * A rotated file's start: records were lost since the thread's latest
 * switch record, so whether it was on a CPU then is not known (neither
 * of the flags above is set with it).
 */
#define WP_THREAD_UNCERTAIN 4U
struct wp_record_thread {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t time;		/* snapshot time, same clock as samples */
	/* 0 if unknown, else the thread's start time on the event clock. */
	uint64_t start_time;
};

/*
 * The events wallprof opened for one thread when attaching (-p, -t), all
 * counting from done on.  Records of that thread (and of the threads it
 * creates from then on) that came through other events, inherited from the
 * thread that created it, are duplicates after done (see coverage.h).
 */
struct wp_record_attach {
	struct perf_event_header header;
	uint32_t tid;
	uint32_t nr_ids;
	uint64_t done;		/* event clock */
	uint64_t ids[];		/* nr_ids event ids */
};

/* Where a command line was read: how much it can be trusted. */
enum wp_cmdline_source {
	WP_CMDLINE_LAUNCH = 0,	/* the launched command's argv, as wallprof ran it */
	WP_CMDLINE_ATTACH = 1,	/* /proc/PID/cmdline when recording began */
	WP_CMDLINE_EXEC = 2,	/* /proc/PID/cmdline after an exec the recording saw */
};

/* wp_record_cmdline.flags */
#define WP_CMDLINE_TRUNCATED 1U	/* longer than the bytes kept */

/*
 * A process's command line.  The record's time is when it was read; the
 * process may have exec'd again, or changed its arguments, by then.
 */
struct wp_record_cmdline {
	struct perf_event_header header;
	uint32_t pid;
	uint16_t source;	/* enum wp_cmdline_source */
	uint16_t flags;		/* WP_CMDLINE_* */
	uint64_t time;		/* when it was read, event clock */
	uint64_t exec_time;	/* of the exec it was read after (EXEC), else 0 */
	uint32_t len;		/* bytes of args */
	uint32_t reserved;
	char args[];		/* the arguments, each NUL-terminated; padded to 8 */
};

/*
 * The kernel's own figures of one thread's time, read at time (event
 * clock): its scheduler statistics, as /proc/PID/task/TID/schedstat gives
 * them, or as taskstats gives them when the thread exits.  header.misc:
 * WP_CLOCK_START, read as the recording began (a thread alive then), or
 * when a launched command was let go; WP_CLOCK_END, read as the recording
 * ended (a thread alive then); WP_CLOCK_EXIT, the thread's last figures,
 * sent by the kernel when it exited (time: when they came);
 * WP_CLOCK_DURING, read while recording, so that each file of a rotating
 * or flight recording has its own.  Between two
 * of them, on_cpu_ns grew by the thread's exact on-CPU time, runq_ns by
 * its time waiting on a run queue, slices by the times it ran.
 */
enum wp_clock_when {
	WP_CLOCK_START = 1,
	WP_CLOCK_END = 2,
	WP_CLOCK_EXIT = 3,
	/* read while recording (at a rotated file's ends, every second for the flight recorder) */
	WP_CLOCK_DURING = 4,
};

struct wp_record_thread_clock {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t on_cpu_ns;	/* sum_exec_runtime */
	uint64_t runq_ns;	/* run_delay */
	uint64_t slices;	/* pcount */
};

/*
 * The name of a thread, read from /proc/PID/task/TID/comm while recording:
 * of a waker that the recording has no other name for (a client process
 * outside the recorded ones, a kernel thread).
 */
struct wp_record_task_name {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t time;		/* when it was read, event clock */
	char comm[16];		/* NUL-padded; not always NUL-terminated */
};

/* The most bytes of a command line a recording keeps. */
#define WP_CMDLINE_MAX 4096

/* A text record: NUL-terminated, padded to 8 bytes. */
struct wp_record_text {
	struct perf_event_header header;
	char text[];
};

/* The shape of samples and sample_id trailers in one recording. */
struct wp_sample_format {
	uint64_t sample_type;
	uint64_t regs_mask;	/* attr.sample_regs_user */
	unsigned int nr_regs;	/* popcount(regs_mask) */
	/*
	 * attr.sample_stack_user, 0 when unknown: a copy shorter than asked
	 * for stopped where the kernel could not read the stack.
	 */
	uint32_t stack_request;
};

void wp_sample_format_init(struct wp_sample_format *fmt, uint64_t sample_type,
			   uint64_t regs_mask);

struct wp_sample {
	uint64_t id;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr_callchain;
	const uint64_t *callchain;	/* borrowed */
	uint32_t raw_size;		/* PERF_SAMPLE_RAW: a trace event's data */
	const void *raw;		/* borrowed */
	uint64_t regs_abi;		/* PERF_SAMPLE_REGS_ABI_*; 0 = no regs */
	const uint64_t *regs;		/* nr_regs values, packed by mask bit order */
	uint64_t stack_size;		/* bytes reserved in the record */
	uint64_t stack_dyn_size;	/* bytes the kernel filled */
	const uint8_t *stack;		/* borrowed, stack_dyn_size valid bytes */
};

struct wp_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
};

/*
 * Decode a PERF_RECORD_SAMPLE.  Returns 0, or -EBADMSG when the record is
 * shorter than its fields claim.
 */
int wp_sample_parse(const struct wp_sample_format *fmt,
		    const struct perf_event_header *hdr, struct wp_sample *out);

/*
 * Encode s as a PERF_RECORD_SAMPLE of format fmt (header misc given),
 * appended to out: the fields fmt has, in the kernel's order, zero where
 * s has none (regs: fmt->nr_regs values when regs_abi; the user stack:
 * stack_size bytes, stack_dyn_size of them from stack).  0 or -errno
 * (-E2BIG past a record's 64 KiB).
 */
int wp_sample_append(const struct wp_sample_format *fmt, uint16_t misc,
		     const struct wp_sample *s, struct wp_buf *out);

/*
 * Only the time of a sample (the ordering queue needs it before the sample
 * is parsed): 0, or -EBADMSG when the sample has none or is too short.
 * Its thread the same way; and a copy's time changed.
 */
int wp_sample_time(const struct wp_sample_format *fmt, const struct perf_event_header *hdr,
		   uint64_t *time);
int wp_sample_thread(const struct wp_sample_format *fmt, const struct perf_event_header *hdr,
		     uint32_t *pid, uint32_t *tid);
int wp_sample_set_time(const struct wp_sample_format *fmt, struct perf_event_header *hdr,
		       uint64_t time);

/*
 * The event id of a sample, without decoding the rest of it: with
 * PERF_SAMPLE_IDENTIFIER it is the first field, read for every sample on
 * the recorder's draining path.  Returns 0 or -EBADMSG.
 */
int wp_sample_event_id(const struct wp_sample_format *fmt,
		       const struct perf_event_header *hdr, uint64_t *id);
/* A copy's event id changed (with PERF_SAMPLE_IDENTIFIER only): 0 or -EBADMSG. */
int wp_sample_set_event_id(const struct wp_sample_format *fmt, struct perf_event_header *hdr,
			   uint64_t id);

/* Whether the sample was taken in kernel mode, by its cpumode. */
bool wp_sample_in_kernel(const struct perf_event_header *hdr);

/*
 * A walk over a sample's callchain.  The kernel separates kernel and user
 * addresses by context markers (PERF_CONTEXT_KERNEL, _USER, ...); the walk
 * hides them and tells which kind each address is.  Before any marker,
 * addresses are of the kind the sample's cpumode says.
 */
struct wp_callchain_walk {
	const uint64_t *ips;
	uint64_t n, i;
	bool kernel;
};

void wp_callchain_walk_init(struct wp_callchain_walk *w, const struct perf_event_header *hdr,
			    const struct wp_sample *s);

/* The next address: true with *ip and *kernel set, false at the end. */
bool wp_callchain_walk_next(struct wp_callchain_walk *w, uint64_t *ip, bool *kernel);

/*
 * Decode the sample_id trailer of a non-sample kernel record
 * (sample_id_all).  Returns 0 or -EBADMSG.
 */
int wp_sample_id_parse(const struct wp_sample_format *fmt,
		       const struct perf_event_header *hdr,
		       struct wp_sample_id *out);

/* Size in bytes of the sample_id trailer for this format. */
size_t wp_sample_id_size(const struct wp_sample_format *fmt);

/* Write a sample_id trailer for a synthesized record at dst. */
void wp_sample_id_write(const struct wp_sample_format *fmt,
			const struct wp_sample_id *id, void *dst);

/*
 * Copy a sample to dst (at least hdr->size bytes), keeping only the part of
 * the user stack copy that the kernel filled (rounded up to 8 bytes).
 * Returns the new record size; samples without a stack are copied as is.
 * A malformed sample is copied unchanged.
 */
size_t wp_sample_copy_trimmed(const struct wp_sample_format *fmt,
			      const struct perf_event_header *hdr, void *dst);

/*
 * Zero a sample's user registers and user stack copy in place, and mark
 * the copy empty (dyn_size 0); the user part of its callchain becomes
 * context markers (no address is left).  The record keeps its size.
 * For the user state of a thread the recording must not keep.  0, or
 * -EBADMSG for a malformed sample (left as it was).
 */
int wp_sample_scrub_user(const struct wp_sample_format *fmt, struct perf_event_header *hdr);

/*
 * Typed decoders of the kernel's non-sample records (the bodies after the
 * header; the sample_id trailer is wp_sample_id_parse's).  Each returns 0,
 * or -EBADMSG when the record is shorter than its fields; strings are
 * borrowed from the record and NUL-terminated within it.
 */

/* PERF_RECORD_MMAP2 */
struct wp_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	bool has_build_id;		/* PERF_RECORD_MISC_MMAP_BUILD_ID: no dev/inode */
	uint8_t build_id_size;		/* at most 20 */
	const uint8_t *build_id;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	const char *filename;
};
int wp_mmap2_parse(const struct perf_event_header *hdr, struct wp_mmap2 *out);

/*
 * The body of an MMAP2 record for m (device and inode form), padded to 8
 * bytes: its size, or 0 when it does not fit in size bytes.
 */
size_t wp_mmap2_body(const struct wp_mmap2 *m, void *buf, size_t size);

/*
 * Whether an MMAP2 filename is anonymous memory, where a JIT puts its
 * code: "//anon" (the kernel's name, and synth's for a nameless line of
 * /proc/PID/maps), "[anon:NAME]" or "/memfd:NAME"; not a file on disk,
 * nor a special mapping such as "[vdso]".
 */
bool wp_mmap_is_anon(const char *filename);

/*
 * The whole record at *off in buf (len bytes of records), *off moved past
 * it; NULL at the end, or at a record whose size does not fit.
 */
const struct perf_event_header *wp_record_next(const void *buf, size_t len, size_t *off);

/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
struct wp_task_event {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
int wp_task_event_parse(const struct perf_event_header *hdr, struct wp_task_event *out);

/* PERF_RECORD_COMM */
struct wp_comm {
	uint32_t pid, tid;
	const char *comm;
	size_t len;			/* strlen(comm) */
	bool exec;			/* PERF_RECORD_MISC_COMM_EXEC */
};
int wp_comm_parse(const struct perf_event_header *hdr, struct wp_comm *out);

/*
 * The body of a COMM record for c (its pid, tid and comm), padded to 8
 * bytes: its size, or 0 when it does not fit in size bytes.
 */
size_t wp_comm_body(const struct wp_comm *c, void *buf, size_t size);

/* PERF_RECORD_LOST (id and count) and PERF_RECORD_LOST_SAMPLES (count). */
int wp_lost_parse(const struct perf_event_header *hdr, uint64_t *id, uint64_t *lost);

/*
 * PERF_RECORD_SWITCH and PERF_RECORD_SWITCH_CPU_WIDE.  The direction is in
 * the header; only the CPU-wide form names the other task.
 */
struct wp_switch {
	bool out;			/* switched out, else in */
	bool preempted;			/* out while still runnable */
	bool cpu_wide;			/* next_prev_pid and _tid are set */
	uint32_t next_prev_pid;		/* the next task (out) or the previous (in) */
	uint32_t next_prev_tid;
};
int wp_switch_parse(const struct perf_event_header *hdr, struct wp_switch *out);

/* PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE */
struct wp_throttle {
	uint64_t time, id, stream_id;
};
int wp_throttle_parse(const struct perf_event_header *hdr, struct wp_throttle *out);

/*
 * Decoders of wallprof's own records, with the same contract: 0, or
 * -EBADMSG for a record of another type or shorter than its fields.
 */

/* WP_RECORD_THREAD */
int wp_thread_parse(const struct perf_event_header *hdr, struct wp_record_thread *out);

/* WP_RECORD_ATTACH: the ids are read with wp_attach_id(). */
struct wp_attach {
	uint32_t tid;
	uint32_t nr_ids;
	uint64_t done;
	const void *ids;		/* borrowed, nr_ids unaligned u64 */
};
int wp_attach_parse(const struct perf_event_header *hdr, struct wp_attach *out);
uint64_t wp_attach_id(const struct wp_attach *a, uint32_t i);

/* WP_RECORD_TRACE_FORMAT: the text, borrowed, NUL-terminated within the record. */
int wp_text_parse(const struct perf_event_header *hdr, const char **text, size_t *len);

/*
 * WP_RECORD_CMDLINE: args borrowed, len bytes (the last one a NUL, when
 * len > 0), without trailing empty arguments but the first (a command
 * line rewritten in place pads with NULs).
 */
struct wp_cmdline {
	uint32_t pid;
	uint16_t source, flags;
	uint64_t time, exec_time;
	uint32_t len;
	const char *args;
};
int wp_cmdline_parse(const struct perf_event_header *hdr, struct wp_cmdline *out);

int wp_thread_clock_parse(const struct perf_event_header *hdr, struct wp_record_thread_clock *out);

/* Append a THREAD_CLOCK record (when: enum wp_clock_when) to out.  0 or -ENOMEM. */
int wp_thread_clock_append(struct wp_buf *out, enum wp_clock_when when, uint32_t pid,
			   uint32_t tid, uint64_t time, uint64_t on_cpu_ns, uint64_t runq_ns,
			   uint64_t slices);

/*
 * Append a WP_RECORD_CMDLINE record for c to out (trailing empty
 * arguments dropped as wp_cmdline_parse() drops them; args cut to
 * WP_CMDLINE_MAX bytes, then flagged truncated): 0 or -ENOMEM.
 */
int wp_cmdline_append(struct wp_buf *out, const struct wp_cmdline *c);

/* WP_RECORD_TASK_NAME: -EBADMSG when shorter than the struct. */
int wp_task_name_parse(const struct perf_event_header *hdr, struct wp_record_task_name *out);

/* Append a WP_RECORD_TASK_NAME record to out: 0 or -ENOMEM. */
int wp_task_name_append(struct wp_buf *out, uint32_t pid, uint32_t tid, uint64_t time,
			const char *comm);

/* WP_RECORD_BUILD_ID */
struct wp_build_id {
	uint32_t pid;			/* a process that mapped it, -1 if several */
	uint8_t size;			/* bytes of build_id, at most 24 */
	const uint8_t *build_id;	/* borrowed */
	uint32_t maj, min;
	uint64_t ino;
	const char *filename;		/* borrowed */
};
int wp_build_id_parse(const struct perf_event_header *hdr, struct wp_build_id *out);

/*
 * WP_RECORD_DSO: a file that places of kind WP_PLACE_FILE name by dso,
 * identified as MMAP2 and BUILD_ID records identify it.
 */
struct wp_record_dso {
	struct perf_event_header header;
	uint32_t dso;		/* its number in this file's places */
	uint32_t maj, min;
	uint8_t build_id_size;	/* bytes used in build_id[], 0: unknown */
	uint8_t reserved[3];
	uint64_t ino;
	uint8_t build_id[24];
	char filename[];	/* NUL-terminated, padded to 8 bytes */
};

struct wp_dso_def {
	uint32_t dso;
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id_size;		/* at most 24 */
	const uint8_t *build_id;	/* borrowed */
	const char *filename;		/* borrowed */
};
int wp_dso_def_parse(const struct perf_event_header *hdr, struct wp_dso_def *out);
int wp_dso_def_append(struct wp_buf *out, const struct wp_dso_def *d);

/* WP_RECORD_PLACE: procmap.h's struct wp_place, numbered. */
#define WP_PLACE_ACTIVATION 1U	/* wp_record_place.flags */
struct wp_record_place {
	struct perf_event_header header;
	uint32_t place;		/* its id */
	uint8_t kind;		/* enum wp_place_kind */
	uint8_t flags;		/* WP_PLACE_ACTIVATION */
	uint16_t reserved;
	uint32_t where;		/* FILE: a DSO record's dso; ANON: pid */
	uint32_t reserved2;
	uint64_t addr;
	uint64_t pgoff;
};

struct wp_place_def {
	uint32_t place;
	uint8_t kind, flags;
	uint32_t where;
	uint64_t addr, pgoff;
};
int wp_place_def_parse(const struct perf_event_header *hdr, struct wp_place_def *out);
int wp_place_def_append(struct wp_buf *out, const struct wp_place_def *pl);

/* WP_RECORD_STACK: samplestack.h's struct wp_sample_stack, numbered. */
struct wp_record_stack {
	struct perf_event_header header;
	uint32_t stack;		/* its id */
	uint32_t flags;		/* WP_SSTACK_* */
	uint32_t ip;		/* place of the sampled address, or UINT32_MAX */
	uint16_t nr_chain, nr_user;
	uint64_t needed;
	uint32_t places[];	/* nr_chain then nr_user place ids; padded to 8 bytes */
};

struct wp_stack_def {
	uint32_t stack, flags, ip;
	uint16_t nr_chain, nr_user;
	uint64_t needed;
	const void *places;		/* borrowed, nr_chain + nr_user unaligned u32 */
};
int wp_stack_def_parse(const struct perf_event_header *hdr, struct wp_stack_def *out);
uint32_t wp_stack_def_place(const struct wp_stack_def *d, unsigned int i);
/* places: nr_chain + nr_user ids. */
int wp_stack_def_append(struct wp_buf *out, const struct wp_stack_def *d, const uint32_t *places);

/* WP_RECORD_STACK_SAMPLE; the header's misc is the sample's. */
#define WP_STACK_SAMPLE_IRQ 1U	/* sched_waking in interrupt context */
/* sched_wakeup(_new): onto the run queue of the CPU it was taken on */
#define WP_STACK_SAMPLE_HERE 2U
/* Which (any, nested): in a hard interrupt, a softirq, an NMI; older files have none */
#define WP_STACK_SAMPLE_HARDIRQ 4U
#define WP_STACK_SAMPLE_SOFTIRQ 8U
#define WP_STACK_SAMPLE_NMI 16U
#define WP_NO_STACK UINT32_MAX	/* the idle task's: no stack */
struct wp_record_stack_sample {
	struct perf_event_header header;
	uint64_t time;
	uint64_t id;		/* the sample's event id */
	uint32_t pid, tid;
	uint32_t cpu;
	uint32_t stack;		/* a STACK record's id, or WP_NO_STACK (no stack taken) */
	/*
	 * The thread a scheduler tracepoint names: woken (sched_waking,
	 * sched_wakeup) or next to run (sched_switch); else 0.
	 */
	uint32_t thread;
	uint32_t flags;		/* WP_STACK_SAMPLE_* */
};

struct wp_stack_sample {
	uint16_t misc;
	uint64_t time, id;
	uint32_t pid, tid, cpu, stack, thread, flags;
};
int wp_stack_sample_parse(const struct perf_event_header *hdr, struct wp_stack_sample *out);
int wp_stack_sample_append(struct wp_buf *out, const struct wp_stack_sample *ss);

/* A short name for a record type ("SAMPLE", "MMAP2", "ROUND", ...). */
const char *wp_record_type_name(uint32_t type);

#endif
