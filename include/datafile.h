/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * datafile.h: the wallprof.data file format, writer and reader.
 *
 * The only module that knows the on-disk byte layout (documented in
 * wallprof-data(5)):
 *
 *	file header	magic "WALLPROF", version, byte-order mark, meta size
 *	meta		tag/length/value fields (struct wp_meta)
 *	blocks...	{type, flags, size, raw_size} + payload; RECORDS blocks
 *			hold perf records back to back, optionally one zstd
 *			frame each; the SUMMARY block closes a complete file
 *
 * The writer creates a temporary file next to the destination and renames
 * it only in wp_writer_commit(), so an interrupted run never leaves a half
 * file under the final name.  A write that fails leaves the file as it was
 * before that block, so what was written stays readable; and a recording
 * is never deleted once it has data.  The reader validates every length
 * before use.
 */
#ifndef WALLPROF_DATAFILE_H
#define WALLPROF_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define WP_FILE_MAGIC "WALLPROF"
/*
 * Version 2 added the stack table (WP_META_STACK_TABLE); a file without
 * one is still written as version 1, which older builds read.
 */
#define WP_FILE_VERSION 2
#define WP_FILE_VERSION_RAW 1
#define WP_FILE_BYTE_ORDER 0x01020304U

/* Largest payload a block may declare (a bound against corrupt sizes). */
#define WP_BLOCK_MAX_SIZE (256U << 20)

/* wp_meta.flags */
#define WP_META_KERNEL_SAMPLES	(1ULL << 0)	/* samples include kernel mode */
#define WP_META_KERNEL_STACKS	(1ULL << 1)	/* kernel callchains recorded */
#define WP_META_SWITCHES	(1ULL << 2)	/* context-switch records */
#define WP_META_OFFCPU_STACKS	(1ULL << 3)	/* a stack at every switch-out */
#define WP_META_OFFCPU_STACKS_DENIED (1ULL << 4) /* wanted but not permitted */
#define WP_META_CPU_WIDE	(1ULL << 5)	/* -a: every task on every CPU */
#define WP_META_CLOCK_FALLBACK	(1ULL << 6)	/* a hardware event fell back */
#define WP_META_WAKEUPS		(1ULL << 7)	/* wake-up tracepoints, per CPU */
/* Stacks already unwound: a stack table, and samples that name its stacks. */
#define WP_META_STACK_TABLE	(1ULL << 8)
/*
 * The wake-up tracepoints were turned off and on per CPU with the
 * switch-out stacks (switch_stack_budget): a wait whose wake-up fell in a
 * closed slot has its runnable part and its waker estimated.
 */
#define WP_META_WAKEUPS_GATED	(1ULL << 9)
/* The kernel's figures of threads at their exit were recorded (THREAD_CLOCK, exit). */
#define WP_META_EXIT_CLOCKS	(1ULL << 10)
/*
 * The on-CPU event was per CPU, for every task, and the recorder kept the
 * samples of the recording's threads (the task and switch records came
 * from a per-task WP_EVENT_SIDEBAND event): a thread's timer does not
 * start and stop at each of its switches.
 */
#define WP_META_ONCPU_PER_CPU	(1ULL << 11)

enum wp_callgraph {
	WP_CALLGRAPH_NONE = 0,
	WP_CALLGRAPH_FP = 1,
	WP_CALLGRAPH_DWARF = 2,
};

enum wp_target_mode {
	WP_TARGET_COMMAND = 0,
	WP_TARGET_PID = 1,
	WP_TARGET_TID = 2,
	WP_TARGET_ALL_CPUS = 3,
};

/* Roles of events; report tells on-CPU samples from switch-out stacks. */
enum wp_event_role {
	WP_EVENT_ONCPU = 0,
	WP_EVENT_SWITCH_OUT = 1,
	WP_EVENT_WAKEUP = 2,		/* sched:sched_waking, per CPU */
	WP_EVENT_WAKEUP_NEW = 3,	/* sched:sched_wakeup_new, per CPU */
	WP_EVENT_ENQUEUED = 4,		/* sched:sched_wakeup, per CPU: on a run queue */
	/* sched:sched_switch, per CPU: when the CPU changed threads, exactly. */
	WP_EVENT_SCHED_SWITCH = 5,
	/* No samples: a per-task event for the task and switch records only. */
	WP_EVENT_SIDEBAND = 6,
};

struct wp_event_desc {
	char name[32];		/* "cpu-clock", "context-switches", ... */
	uint32_t role;		/* enum wp_event_role */
	struct perf_event_attr attr;	/* as passed to perf_event_open */
	uint64_t *ids;		/* PERF_EVENT_IOC_ID of every fd of it */
	uint32_t nr_ids;
};

/*
 * The largest user stack copy the kernel takes (attr.sample_stack_user:
 * a sample's size is a 16-bit field), and so the largest stack_size.
 */
#define WP_STACK_COPY_MAX 65528

struct wp_meta {
	int32_t clockid;		/* clock of every record time */
	uint64_t start_clock_ns;	/* record start on that clock */
	uint64_t start_realtime_ns;	/* the same instant, CLOCK_REALTIME */
	char hostname[256];
	char os_release[128];
	char machine[64];		/* uname -m */
	char boot_id[40];		/* /proc/sys/kernel/random/boot_id, "" if unknown */
	char **argv;			/* wallprof's own command line */
	uint32_t argc;
	uint64_t sample_type;		/* shared by every event */
	uint64_t regs_mask;		/* attr.sample_regs_user */
	uint32_t stack_size;		/* attr.sample_stack_user */
	uint32_t callgraph;		/* enum wp_callgraph */
	uint32_t nr_cpus;
	uint32_t page_size;
	uint32_t target_mode;		/* enum wp_target_mode */
	uint64_t flags;			/* WP_META_* */
	uint64_t sample_period_ns;	/* on-CPU sample period (clock events) */
	struct wp_event_desc *events;
	uint32_t nr_events;
	/*
	 * Switch-out stacks a second per CPU that record let the kernel take
	 * (--switch-stacks=RATE: the switch-out event is turned off and on
	 * per CPU), or 0 when it was never turned off.
	 */
	uint64_t switch_stack_budget;
};

/* Frees what the reader allocated inside a meta it filled. */
void wp_meta_release(struct wp_meta *m);

/*
 * The switch-out stacks per second the recording allowed: per CPU
 * (switch_stack_budget), or per thread and CPU (the switch-out event's
 * frequency, in files of wallprof 0.1 before the budget); 0 when it took
 * one at every switch-out (or took none).
 */
uint64_t wp_meta_switch_stack_rate(const struct wp_meta *m);

/*
 * Whether e is the wake-ups of other programs' wakers: sched_waking
 * without the waker's user stack, with its kernel frames, beside one
 * with both (record --wakeups=stacks, event.c add_sched_descs).
 */
bool wp_event_other_wakers(const struct wp_event_desc *e);

enum wp_stop_reason {
	WP_STOP_TARGET_EXITED = 0,
	WP_STOP_SIGNAL = 1,
	WP_STOP_DURATION = 2,
	WP_STOP_ERROR = 3,
	WP_STOP_ROTATED = 4,	/* --rotate: the next file goes on */
	WP_STOP_DUMPED = 5,	/* --flight-recorder: written on SIGUSR1; recording went on */
};

/* Totals written last; their presence marks a complete file. */
struct wp_summary {
	uint64_t end_clock_ns;
	uint64_t end_realtime_ns;
	uint64_t records;		/* kernel records kept */
	uint64_t samples;		/* on-CPU samples */
	uint64_t switch_samples;	/* switch-out stack samples */
	uint64_t switches;		/* SWITCH records (in and out) */
	uint64_t lost_records;		/* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_samples;		/* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t throttles;		/* PERF_RECORD_THROTTLE count */
	uint64_t ring_bytes;		/* bytes read from the rings */
	uint64_t stack_bytes_trimmed;	/* unfilled stack bytes not written */
	uint64_t corrupt_bytes;		/* ring bytes skipped as malformed */
	uint64_t synthesized;		/* records made from /proc */
	int32_t exit_status;		/* wait status of the command, or -1 */
	uint32_t stop_reason;		/* enum wp_stop_reason */
	/*
	 * Losses the kernel counted on the events (PERF_FORMAT_LOST) beyond
	 * the LOST records: a ring full at the end never gets its LOST record.
	 */
	uint64_t lost_unreported;
	uint32_t rings_full_at_end;	/* rings nearly full at the final drain */
	/*
	 * 0 for a complete file; else the errno of the write error that cut
	 * the recording short at end_clock_ns: the file then holds what was
	 * written before it, up to its last whole block.
	 */
	uint32_t cut_short_errno;
	uint64_t wakeups;		/* wake-up samples (after the fields above, new) */
	/* With a stack table: samples written raw, the live unwinder behind (newer). */
	uint64_t raw_samples;
	/*
	 * Samples read whose event id is none of the recording's, left out
	 * (newest): another recorder's id on a sample the kernel shared.
	 */
	uint64_t unknown_samples;
};

/*
 * Count one record into a summary, as the drain counts what it writes:
 * role is the sample's event role (enum wp_event_role; -1 when unknown),
 * for records of kind WP_KIND_SAMPLE only.  What each type counts as is
 * layout.h's table (WP_COUNT_*); a ROUND is not counted at all.
 */
void wp_summary_count(struct wp_summary *c, const struct perf_event_header *h, int role);

/*
 * Set to's counts of records (records, samples, switch_samples,
 * switches, wakeups, lost_records, lost_samples, throttles) to from's:
 * what wp_summary_count keeps of the kernel's records.
 */
void wp_summary_take_counts(struct wp_summary *to, const struct wp_summary *from);

/*
 * Add from's counts of records, as above, and its synthesized records, to
 * to's: the parts of a recording (rotate.c's chunks) summed.
 */
void wp_summary_add_counts(struct wp_summary *to, const struct wp_summary *from);

struct wp_writer;

/*
 * Whether path can name a data file at all (not empty, not ending in
 * '/'): -EINVAL, logged, when it cannot.  wp_writer_open() checks it;
 * so do those who make file names from it (rotate.h).
 */
int wp_writer_check_name(const char *path);

/*
 * Start a file that will become path, checking first that it can: path
 * must not exist unless force, and then only as a regular file that this
 * process may replace (-EEXIST, -EINVAL for anything but a regular file,
 * -EPERM); and no other wallprof may be recording to it now unless force
 * (-EBUSY).  Warns about unfinished recordings left under that name.
 * compress_level 0 stores blocks as they are, 1..22 compresses each with
 * zstd.  Returns 0 or -errno (logged).
 */
int wp_writer_open(const char *path, bool force, int compress_level,
		   struct wp_writer **out);

/* Write the file header and meta; call once, before any block. */
int wp_writer_write_meta(struct wp_writer *w, const struct wp_meta *m);

/*
 * Append len bytes of whole records, as one RECORDS block or, once the
 * file system runs low on space, as blocks of at most 64 KiB.  Not thread
 * safe: one writer thread calls it.  Until wp_writer_closing(), records
 * leave 8 KiB of the file system free for the blocks that close the file.
 * When the records do not fit (no space, quota, file size limit), as many
 * whole records from the start of buf as fit are written, in smaller
 * blocks, and the error returned (the first one of the writer is logged);
 * wp_writer_kept() says how many bytes of buf made it.  On any other
 * error, the file is cut back to its last whole block.
 */
int wp_writer_write_records(struct wp_writer *w, const void *buf, size_t len);

/*
 * How many bytes from the start of the buffer the last
 * wp_writer_write_records() wrote: its len when it returned 0.
 */
size_t wp_writer_kept(const struct wp_writer *w);

/*
 * The blocks that close the file (build ids, symbols, names, summary)
 * come now: they may use the room kept for them.
 */
void wp_writer_closing(struct wp_writer *w);

/*
 * Append a RECORDS block whose payload is already one zstd frame (with
 * its checksum) of raw_len bytes of whole records: records kept
 * compressed in memory are written without compressing them again.
 * -EINVAL when w stores blocks uncompressed (compress_level 0).
 */
int wp_writer_write_records_zstd(struct wp_writer *w, const void *frame, size_t len,
				 size_t raw_len);

/*
 * Append the KSYMS block: the kernel symbols the recording's stacks use,
 * as "hexaddr name" lines sorted by address.
 */
int wp_writer_write_ksyms(struct wp_writer *w, const char *text, size_t len);

/*
 * Append the JITMAP block: names of generated code from the recorded
 * processes' perf maps, as "pid hexstart hexsize name" lines (jitmap.h).
 */
int wp_writer_write_jitmap(struct wp_writer *w, const char *text, size_t len);

/*
 * Append the NAMES block: the names of the stack table's places
 * (placenames.h encodes it).
 */
int wp_writer_write_names(struct wp_writer *w, const void *buf, size_t len);

/*
 * Append the SUMMARY block.  When the file system is full, the last blocks
 * are dropped until the summary fits, so a full disk still gives a file
 * that reads to its end.
 */
int wp_writer_write_summary(struct wp_writer *w, const struct wp_summary *s);

/* The first error of any write so far (-errno), or 0. */
int wp_writer_error(const struct wp_writer *w);

/*
 * Flush, close and give the file its final name.  Frees w.  When the name
 * cannot be given (the path appeared meanwhile without force, became
 * something other than a regular file, or cannot be replaced), or the
 * data may not have reached the disk, the data is kept, never deleted:
 * under the temporary name without its leading dot (or the temporary name
 * itself if even that fails), logged with the error.  Returns 0 or -errno;
 * *where (when not NULL) gets the name the data is under (malloc'ed, the
 * caller frees it; NULL only when out of memory).
 */
int wp_writer_commit_where(struct wp_writer *w, char **where);
int wp_writer_commit(struct wp_writer *w);

/* Close and unlink the temporary file.  Frees w; NULL is fine. */
void wp_writer_abort(struct wp_writer *w);

/* Bytes written so far (after compression). */
uint64_t wp_writer_bytes(const struct wp_writer *w);
const char *wp_writer_path(const struct wp_writer *w);

/*
 * The temporary file of an unfinished recording of path, left by a
 * wallprof that was killed (or still being written by one that runs:
 * *running), the newest if there are several: its name in *found
 * (malloc'ed, the caller frees it).  Returns 0, or -ENOENT when there is
 * none, -ENOMEM.
 */
int wp_writer_find_unfinished(const char *path, char **found, bool *running);

struct wp_reader;

/*
 * Open and validate the header and meta.  Errors (logged, one line):
 * -ENOENT & co from open, -EBADMSG not a wallprof file or corrupt meta,
 * -EPROTO a newer format version.
 */
int wp_reader_open(const char *path, struct wp_reader **out);

const struct wp_meta *wp_reader_meta(const struct wp_reader *r);

/*
 * Next record in file order: 1 with *rec set (borrowed until the next
 * call), 0 at the end of the file, -EBADMSG for a corrupt or truncated
 * block, or for far more records than a recording of the file's size
 * holds (logged once, with its offset).
 */
int wp_reader_next(struct wp_reader *r, const struct perf_event_header **rec);

/*
 * Keep the block that the last record came from alive after the next
 * wp_reader_next() (records are borrowed from it): a counted reference,
 * dropped with wp_block_put().  Lets a consumer queue records without
 * copying them.
 */
struct wp_block_ref;
struct wp_block_ref *wp_reader_block_get(struct wp_reader *r);
void wp_block_put(struct wp_block_ref *b);

/* The memory that a reference keeps alive, in bytes (0 for NULL). */
size_t wp_block_bytes(const struct wp_block_ref *b);

/* The summary, once wp_reader_next() returned 0; NULL if the file has none. */
const struct wp_summary *wp_reader_summary(const struct wp_reader *r);

/*
 * The KSYMS block's text (malloc'ed, NUL-terminated, the caller frees it),
 * found when the file was opened; *text is NULL when the file has none.
 * Returns 0 or -EBADMSG/-ENOMEM.
 */
int wp_reader_ksyms(struct wp_reader *r, char **text, size_t *len);

/*
 * The end of the recording (end_clock_ns) as the SUMMARY block gives it,
 * found when the file was opened, before any record is read; 0 when the
 * file has none.  Record times lie before it: a later one is damaged.
 */
uint64_t wp_reader_end_ns(const struct wp_reader *r);

/* The JITMAP block's text, as wp_reader_ksyms() gives the KSYMS block's. */
int wp_reader_jitmap(struct wp_reader *r, char **text, size_t *len);

/* The NAMES block's payload, as wp_reader_ksyms() gives the KSYMS block's. */
int wp_reader_names(struct wp_reader *r, char **buf, size_t *len);

/* File offset of the block the last record came from. */
uint64_t wp_reader_block_offset(const struct wp_reader *r);

/*
 * Show fn the records after the last one in its block, without taking
 * them: a look ahead, up to the end of the block or a malformed record
 * (which wp_reader_next() then reports).
 */
void wp_reader_ahead(const struct wp_reader *r,
		     void (*fn)(const struct perf_event_header *rec, void *arg), void *arg);

void wp_reader_close(struct wp_reader *r);

#endif
