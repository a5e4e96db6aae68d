/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export_clickhouse.c: recordings into ClickHouse (export_clickhouse.h).
 *
 * Rows go as TabSeparated: every name the recording holds is a byte
 * string some watched program chose, and quote.h's CLICKHOUSE escapes
 * keep each byte while no tab, newline, quote or backslash of a name can
 * end a value, a row or an array element.  Numbers are printed by us.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "export_clickhouse.h"
#include "format.h"
#include "frameinfo.h"
#include "log.h"
#include "quote.h"
#include "stacks.h"
#include "symbols.h"
#include "u64map.h"
#include "util.h"
#include "view.h"

/* A server's answer larger than this is refused (the largest: the stacks it has). */
#define RESULT_MAX (256u << 20)

/* Connecting, and then a transfer that moves not a byte for this long, fail. */
#define CONNECT_TIMEOUT_S 10L
#define STALL_TIMEOUT_S 120L

/* A stack read back (report --from) has at most this many frames. */
#define FRAMES_MAX 4096

/*
 * The stack hashes asked about in one query: some 100 KiB of SQL, well
 * under the server's max_query_size (256 KiB by default).
 */
#define HASHES_PER_QUERY 5000

/*
 * Rows of one table of one file are one INSERT, parsed as one block:
 * ClickHouse writes a block whole or not at all.
 */
#define ONE_BLOCK "max_insert_block_size=1000000000"

const char *const wp_ch_tables[] = {
	"wallprof_files", "wallprof_threads", "wallprof_samples", "wallprof_stacks", NULL,
};

/*
 * The schema (wallprof-export(1)).  A file's rows carry its id, host and
 * labels; times are the recording's clock (ns, as report --format json
 * prints them) and, for queries by date, the wall clock (UTC).
 */
static const char *const create_sql[] = {
	"CREATE TABLE IF NOT EXISTS wallprof_files ("
	"file_id String, host String, labels Nested(key String, value String), "
	"start_time DateTime('UTC'), end_time DateTime('UTC'), "
	"start_realtime_ns UInt64, end_realtime_ns UInt64, start_ns UInt64, end_ns UInt64, "
	"path String, hostname String, command Array(String), "
	"complete UInt8, damaged UInt8, threads UInt64, samples UInt64, "
	"wallprof_version String, exported_at DateTime('UTC')) "
	"ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) "
	"ORDER BY (host, start_time, file_id)",

	"CREATE TABLE IF NOT EXISTS wallprof_threads ("
	"file_id String, host String, labels Nested(key String, value String), "
	"start_time DateTime('UTC'), end_time DateTime('UTC'), "
	"pid UInt32, tid UInt32, serial UInt32, comm String, process String, "
	"cmdline Array(String), start_ns UInt64, end_ns UInt64, wall_ns UInt64, "
	"on_cpu_ns UInt64, runnable_ns UInt64, preempted_ns UInt64, blocked_ns UInt64, "
	"wakeups UInt64, voluntary_switches UInt64, involuntary_switches UInt64, "
	"samples UInt64, exited UInt8, approximate UInt8, "
	"on_cpu_source Enum8('records' = 0, 'kernel' = 1, 'estimated' = 2)) "
	"ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) "
	"ORDER BY (host, start_time, file_id, serial)",

	"CREATE TABLE IF NOT EXISTS wallprof_samples ("
	"file_id String, host String, labels Nested(key String, value String), "
	"start_time DateTime('UTC'), end_time DateTime('UTC'), "
	"pid UInt32, tid UInt32, serial UInt32, comm String, "
	"kind Enum8('on-cpu' = 0, 'blocked' = 1, 'preempted' = 2, 'runnable' = 3, 'woken' = 4), "
	"stack UInt64, waker_stack UInt64, waker_pid UInt32, waker_tid UInt32, waker_comm String, "
	"waker_kind Enum8('' = 0, 'thread' = 1, 'interrupt' = 2, 'timer' = 3, 'idle' = 4), "
	"ns UInt64, count UInt64, estimated_ns UInt64) "
	"ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) "
	"ORDER BY (host, start_time, kind, stack, file_id)",

	/* Written by every host that saw a stack: equal rows, merged by the engine. */
	"CREATE TABLE IF NOT EXISTS wallprof_stacks ("
	"hash UInt64, frames Nested(function String, file String, build_id String, "
	"kernel UInt8, inlined UInt8)) "
	"ENGINE = ReplacingMergeTree ORDER BY hash",
};

struct wp_ch {
	CURL *curl;
	char *url;		/* as given */
	char shown[256];	/* for messages: without a user or password */
};

/* The URL without "user:password@", for messages. */
static void url_for_messages(const char *url, char *out, size_t size)
{
	const char *scheme = strstr(url, "://"), *at, *slash;

	if (!scheme) {
		snprintf(out, size, "%s", url);
		return;
	}
	scheme += 3;
	at = strchr(scheme, '@');
	slash = strchr(scheme, '/');
	if (at && (!slash || at < slash))
		snprintf(out, size, "%.*s%s", (int)(scheme - url), url, at + 1);
	else
		snprintf(out, size, "%s", url);
}

int wp_ch_open(const char *url, struct wp_ch **out)
{
	static bool global_done;
	struct wp_ch *ch;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		wp_error("--clickhouse: '%s' is not an http:// or https:// URL", wp_quoted(url));
		return -EINVAL;
	}
	if (strlen(url) > 4096) {
		wp_error("--clickhouse: the URL is longer than 4096 bytes");
		return -EINVAL;
	}
	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			wp_error("cannot start libcurl");
			return -ENOMEM;
		}
		global_done = true;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->url = strdup(url);
	ch->curl = curl_easy_init();
	if (!ch->url || !ch->curl) {
		wp_ch_close(ch);
		return -ENOMEM;
	}
	url_for_messages(url, ch->shown, sizeof(ch->shown));
	*out = ch;
	return 0;
}

void wp_ch_close(struct wp_ch *ch)
{
	if (!ch)
		return;
	if (ch->curl)
		curl_easy_cleanup(ch->curl);
	free(ch->url);
	free(ch);
}

struct answer {
	struct wp_buf b;
	bool too_big;
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;

	n *= size;	/* libcurl's size is 1 */
	if (a->b.len + n > RESULT_MAX) {
		a->too_big = true;
		return 0;
	}
	if (wp_buf_append(&a->b, p, n))
		return 0;
	return n;
}

/*
 * The sentence of a ClickHouse error: "Code: 60, e.displayText() =
 * DB::Exception: Table default.x doesn't exist., e.what() = ..." says
 * "Table default.x doesn't exist."; in newer servers, what follows "DB::Exception: ".
 */
static void server_sentence(const char *body, char *out, size_t size)
{
	const char *s = strstr(body, "DB::Exception: "), *e;
	size_t len;

	s = s ? s + strlen("DB::Exception: ") : body;
	e = strstr(s, ", e.what()");
	len = e ? (size_t)(e - s) : strcspn(s, "\n");
	if (len >= size)
		len = size - 1;
	memcpy(out, s, len);
	out[len] = '\0';
	while (len && (out[len - 1] == '\n' || out[len - 1] == ' '))
		out[--len] = '\0';
}

int wp_ch_query(struct wp_ch *ch, const char *sql, const char *body, size_t body_len,
		char **result)
{
	struct answer a = { .b = { 0 } };
	char errbuf[CURL_ERROR_SIZE] = "", sentence[512];
	char *esc = NULL, *full = NULL;
	const char *sep;
	long status = 0;
	CURLcode rc;
	int err = 0;

	/* A statement with rows goes in the URL, the rows as the body; else the statement is the body. */
	if (body) {
		esc = curl_easy_escape(ch->curl, sql, 0);
		if (!esc)
			return -ENOMEM;
		sep = strchr(ch->url, '?') ? "&" : ch->url[strlen(ch->url) - 1] == '/' ? "?" :
		      strchr(strstr(ch->url, "://") + 3, '/') ? "?" : "/?";
		if (asprintf(&full, "%s%s" ONE_BLOCK "&query=%s", ch->url, sep, esc) < 0)
			full = NULL;
		curl_free(esc);
		if (!full)
			return -ENOMEM;
	}
	curl_easy_reset(ch->curl);
	curl_easy_setopt(ch->curl, CURLOPT_URL, full ? full : ch->url);
	curl_easy_setopt(ch->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDS, body ? body : sql);
	curl_easy_setopt(ch->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(body ? body_len : strlen(sql)));
	curl_easy_setopt(ch->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(ch->curl, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(ch->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(ch->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(ch->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_LOW_SPEED_TIME, STALL_TIMEOUT_S);
	curl_easy_setopt(ch->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(ch->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = curl_easy_perform(ch->curl);
	free(full);
	if (rc != CURLE_OK && !a.too_big) {
		wp_error("cannot reach ClickHouse at %s: %s", wp_quoted(ch->shown),
			 wp_quoted(errbuf[0] ? errbuf : curl_easy_strerror(rc)));
		err = rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO;
		goto out;
	}
	if (a.too_big) {
		wp_error("ClickHouse at %s answered more than %u MiB", wp_quoted(ch->shown),
			 RESULT_MAX >> 20);
		err = -EFBIG;
		goto out;
	}
	if (wp_buf_append(&a.b, "", 1)) {
		err = -ENOMEM;
		goto out;
	}
	curl_easy_getinfo(ch->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		server_sentence((const char *)a.b.data, sentence, sizeof(sentence));
		wp_error("ClickHouse at %s refused the statement (HTTP %ld): %s%s",
			 wp_quoted(ch->shown), status, wp_quoted(sentence),
			 strstr((const char *)a.b.data, "Code: 60,") ?
				 " (wallprof export --create-tables makes the tables)" : "");
		err = -EIO;
		goto out;
	}
	if (result) {
		*result = (char *)a.b.data;
		return 0;
	}
out:
	wp_buf_release(&a.b);
	return err;
}

int wp_ch_create_tables(struct wp_ch *ch)
{
	int err;

	for (size_t i = 0; i < ARRAY_SIZE(create_sql); i++) {
		err = wp_ch_query(ch, create_sql[i], NULL, 0, NULL);
		if (err)
			return err;
	}
	return 0;
}

int wp_ch_file_id(const char *path, char id[WP_CH_FILE_ID_SIZE])
{
	XXH3_state_t *st;
	XXH128_hash_t h;
	static char buf[1 << 20];
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		wp_error("cannot open '%s': %s", wp_quoted(path), strerror(errno));
		return err;
	}
	st = XXH3_createState();
	if (!st) {
		close(fd);
		return -ENOMEM;
	}
	XXH3_128bits_reset(st);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			wp_error("cannot read '%s': %s", wp_quoted(path), strerror(errno));
			break;
		}
		XXH3_128bits_update(st, buf, (size_t)n);
	}
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	close(fd);
	snprintf(id, WP_CH_FILE_ID_SIZE, "%016" PRIx64 "%016" PRIx64, (uint64_t)h.high64,
		 (uint64_t)h.low64);
	return err;
}

/* A count answered by the server ("42\n"). */
static int query_count(struct wp_ch *ch, const char *sql, uint64_t *n)
{
	char *res, *nl;
	int err;

	err = wp_ch_query(ch, sql, NULL, 0, &res);
	if (err)
		return err;
	nl = strchr(res, '\n');
	if (nl)
		*nl = '\0';
	err = wp_parse_u64(res, n);
	if (err)
		wp_error("ClickHouse at %s answered '%s' for a count", wp_quoted(ch->shown),
			 wp_quoted(res));
	free(res);
	return err ? -EIO : 0;
}

/* A file id is our own 32 hex digits: safe inside quotes as it is. */
static int count_rows(struct wp_ch *ch, const char *table, const char *file_id, uint64_t *n)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "SELECT count() FROM %s WHERE file_id = '%s'", table, file_id);
	return query_count(ch, sql, n);
}

int wp_ch_file_done(struct wp_ch *ch, const char *file_id, bool *done)
{
	uint64_t n;
	int err;

	err = count_rows(ch, "wallprof_files", file_id, &n);
	*done = !err && n;
	return err;
}

/* The rows being made: a memory stream, and the common columns of this file's rows. */
struct rows {
	const struct wp_analysis *an;
	struct wp_view v;
	const struct wp_ch_source *src;
	const char *host;
	char *common;		/* file_id, host, labels.key, labels.value, start, end */
	size_t common_len;
	uint64_t *hash;		/* per stack id: its hash, 0 not yet made */
	size_t nr_stacks;
	bool *wanted;		/* per stack id: used by a row */
};

static void put_str(FILE *f, const char *s)
{
	wp_quote_puts(f, s, WP_QUOTE_CLICKHOUSE);
}

static void put_str_array(FILE *f, const char *const *s, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",'" : "'", f);
		put_str(f, s[i]);
		fputc('\'', f);
	}
	fputc(']', f);
}

/* Wall-clock seconds (UTC) of a time of the recording's clock. */
static uint64_t realtime_ns(const struct wp_analysis *an, uint64_t ns)
{
	const struct wp_meta *m = an->meta;

	if (ns >= m->start_clock_ns)
		return m->start_realtime_ns + (ns - m->start_clock_ns);
	return m->start_realtime_ns - (m->start_clock_ns - ns);
}

static int make_common(struct rows *r, uint64_t start_ns, uint64_t end_ns, struct wp_buf *out)
{
	const char *keys[WP_CH_LABELS_MAX], *values[WP_CH_LABELS_MAX];
	char *p = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&p, &len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < r->src->nr_labels; i++) {
		keys[i] = r->src->labels[i].key;
		values[i] = r->src->labels[i].value;
	}
	fprintf(f, "%s\t", r->src->file_id);
	put_str(f, r->host);
	fputc('\t', f);
	put_str_array(f, keys, r->src->nr_labels);
	fputc('\t', f);
	put_str_array(f, values, r->src->nr_labels);
	fprintf(f, "\t%" PRIu64 "\t%" PRIu64, (uint64_t)(realtime_ns(r->an, start_ns) / NSEC_PER_SEC),
		(uint64_t)(realtime_ns(r->an, end_ns) / NSEC_PER_SEC));
	if (fclose(f)) {
		free(p);
		return -ENOMEM;
	}
	out->data = (uint8_t *)p;
	out->len = len;
	out->cap = len;
	return 0;
}

/* The name of a process: its main thread's last name, else the thread's own. */
static const struct wp_thread_times *main_thread(const struct wp_thread_times *th, size_t n,
						 size_t i)
{
	/* Sorted by pid, then tid (account.h): the main thread is near. */
	for (size_t j = i + 1; j-- > 0 && th[j].pid == th[i].pid;)
		if (th[j].tid == th[j].pid)
			return &th[j];
	for (size_t j = i + 1; j < n && th[j].pid == th[i].pid; j++)
		if (th[j].tid == th[j].pid)
			return &th[j];
	return NULL;
}

static const char *const on_cpu_sources[] = { "records", "kernel", "estimated" };

static int thread_rows(struct rows *r, FILE *f, uint64_t *nr)
{
	const struct wp_thread_times *th;
	struct wp_buf common = { 0 };
	size_t n;
	int err;

	th = wp_account_threads(r->an->account, &n);
	for (size_t i = 0; i < n; i++) {
		const struct wp_thread_times *t = &th[i], *m = main_thread(th, n, i);
		const struct wp_process_cmdline *cl = NULL;
		const char *process = m ? m->comm : t->comm;

		if (!wp_view_thread(&r->v, i))
			continue;
		if (m && m->nr_names) {
			process = m->names[m->nr_names - 1].comm;
			for (uint32_t k = m->nr_names; k-- > 0 && !cl;)
				cl = m->names[k].cmdline;
		}
		err = make_common(r, t->start_ns, t->end_ns, &common);
		if (err)
			return err;
		fwrite(common.data, 1, common.len, f);
		wp_buf_release(&common);
		fprintf(f, "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", t->pid, t->tid, t->serial);
		put_str(f, t->comm);
		fputc('\t', f);
		put_str(f, process);
		fputs("\t[", f);
		if (cl) {
			for (const char *a = cl->args; a < cl->args + cl->len; a += strlen(a) + 1) {
				fputs(a > cl->args ? ",'" : "'", f);
				put_str(f, a);
				fputc('\'', f);
			}
		}
		fprintf(f, "]\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%" PRIu64 "\t%d\t%d\t%s\n",
			t->start_ns, t->end_ns, t->wall_ns, t->on_cpu_ns, t->runnable_ns,
			t->preempted_ns, t->blocked_ns, t->wakeups, t->voluntary_switches,
			t->involuntary_switches, t->samples, t->exited, t->approximate,
			on_cpu_sources[t->on_cpu_source < 3 ? t->on_cpu_source : 0]);
		(*nr)++;
	}
	return 0;
}

/*
 * A stack's hash: of its frames' names, files, build ids and kinds, with
 * no seed, so that every host gives one stack one hash.  0 means none.
 */
static uint64_t stack_hash(struct rows *r, uint32_t stack)
{
	const struct wp_frame_file *files;
	const uint32_t *frames;
	XXH3_state_t *st;
	unsigned int nf;
	size_t nfiles;
	uint64_t h;

	if (stack >= r->nr_stacks)
		return 0;
	if (r->hash[stack])
		return r->hash[stack];
	st = XXH3_createState();
	if (!st)
		return 0;
	XXH3_64bits_reset(st);
	files = wp_frameinfo_files(r->an->frames, &nfiles);
	frames = wp_stacks_get(r->an->stacks, stack, &nf);
	for (unsigned int i = 0; i < nf; i++) {
		struct wp_frame_info fi = { .file = WP_FRAMEINFO_NONE };
		const char *name = wp_analysis_frame_name(r->an, frames[i]);
		uint8_t kind = (frames[i] & WP_FRAME_KERNEL ? 1 : 0) |
			       (frames[i] & WP_FRAME_INLINED ? 2 : 0);

		XXH3_64bits_update(st, name, strlen(name) + 1);
		if (r->an->frames && wp_frameinfo_get(r->an->frames, frames[i], &fi) &&
		    fi.file < nfiles) {
			XXH3_64bits_update(st, files[fi.file].path, strlen(files[fi.file].path) + 1);
			XXH3_64bits_update(st, files[fi.file].build_id,
					   files[fi.file].build_id_size);
		}
		XXH3_64bits_update(st, &kind, 1);
	}
	h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	r->hash[stack] = h ? h : 1;
	r->wanted[stack] = true;
	return r->hash[stack];
}

static const char *const part_kinds[] = { "on-cpu", "blocked", "preempted", "runnable" };
static const char *const waker_kinds[] = { "thread", "interrupt", "timer", "idle" };

static int sample_rows(struct rows *r, FILE *f, uint64_t *nr)
{
	const struct wp_thread_times *th;
	const struct wp_stack_weight *w;
	const struct wp_wake_weight *k;
	const struct wp_waker *wk;
	struct wp_buf common = { 0 };
	size_t nth, nw, nk, nwk;
	int err;

	th = wp_account_threads(r->an->account, &nth);
	w = wp_account_stacks(r->an->account, &nw);
	k = wp_account_wake_weights(r->an->account, &nk);
	wk = wp_account_wakers(r->an->account, &nwk);
	err = make_common(r, r->an->start_ns, r->an->end_ns, &common);
	if (err)
		return err;
	for (size_t i = 0; i < nw; i++) {
		const struct wp_thread_times *t = &th[w[i].thread];
		uint64_t hash = 0;

		if (!wp_view_thread(&r->v, w[i].thread))
			continue;
		for (int p = 0; p < WP_NR_PARTS; p++) {
			uint64_t ns = wp_view_part_ns(&r->v, &w[i], (enum wp_part)p);

			if (!ns)
				continue;
			if (!hash)
				hash = stack_hash(r, w[i].stack);
			if (!hash) {
				err = -ENOMEM;
				goto out;
			}
			fwrite(common.data, 1, common.len, f);
			fprintf(f, "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", t->pid, t->tid,
				t->serial);
			put_str(f, t->comm);
			fprintf(f, "\t%s\t%" PRIu64 "\t0\t0\t0\t\t\t%" PRIu64 "\t%" PRIu64
				"\t%" PRIu64 "\n", part_kinds[p], hash, ns,
				wp_view_part_count(&w[i], (enum wp_part)p),
				wp_view_part_estimated_ns(&w[i], (enum wp_part)p));
			(*nr)++;
			if (p != WP_PART_BLOCKED || !wp_account_has_wakeups(r->an->account))
				continue;
			/* Who ended the blocked time: a breakdown of the row above. */
			for (uint32_t j = w[i].wakes; j && j <= nk; j = k[j - 1].next) {
				const struct wp_waker *a;
				uint64_t wh;
				char name[32];

				if (k[j - 1].waker >= nwk)
					continue;
				a = &wk[k[j - 1].waker];
				wh = stack_hash(r, a->stack);
				fwrite(common.data, 1, common.len, f);
				fprintf(f, "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu32 "\t", t->pid,
					t->tid, t->serial);
				put_str(f, t->comm);
				fprintf(f, "\twoken\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu32
					"\t", hash, wh, a->pid, a->tid);
				put_str(f, wp_waker_name(r->an, a, name, sizeof(name)));
				fprintf(f, "\t%s\t%" PRIu64 "\t%" PRIu64 "\t0\n",
					waker_kinds[a->kind < 4 ? a->kind : 0], k[j - 1].blocked_ns,
					k[j - 1].count);
				(*nr)++;
			}
		}
	}
out:
	wp_buf_release(&common);
	return err;
}

/* One stack's row: its frames as four arrays, innermost first. */
static void stack_row(struct rows *r, FILE *f, uint32_t stack)
{
	static const char hexd[] = "0123456789abcdef";
	const struct wp_frame_file *files;
	const uint32_t *frames;
	unsigned int nf;
	size_t nfiles;

	files = wp_frameinfo_files(r->an->frames, &nfiles);
	frames = wp_stacks_get(r->an->stacks, stack, &nf);
	fprintf(f, "%" PRIu64 "\t[", r->hash[stack]);
	for (unsigned int i = 0; i < nf; i++) {
		fputs(i ? ",'" : "'", f);
		put_str(f, wp_analysis_frame_name(r->an, frames[i]));
		fputc('\'', f);
	}
	for (int col = 0; col < 2; col++) {
		fputs("]\t[", f);
		for (unsigned int i = 0; i < nf; i++) {
			struct wp_frame_info fi = { .file = WP_FRAMEINFO_NONE };
			const struct wp_frame_file *ff = NULL;

			if (wp_frameinfo_get(r->an->frames, frames[i], &fi) && fi.file < nfiles)
				ff = &files[fi.file];
			fputs(i ? ",'" : "'", f);
			if (ff && col == 0)
				put_str(f, ff->path);
			for (unsigned int b = 0; ff && col == 1 && b < ff->build_id_size; b++) {
				fputc(hexd[ff->build_id[b] >> 4], f);
				fputc(hexd[ff->build_id[b] & 0xf], f);
			}
			fputc('\'', f);
		}
	}
	fputs("]\t[", f);
	for (unsigned int i = 0; i < nf; i++)
		fprintf(f, "%s%d", i ? "," : "", frames[i] & WP_FRAME_KERNEL ? 1 : 0);
	fputs("]\t[", f);
	for (unsigned int i = 0; i < nf; i++)
		fprintf(f, "%s%d", i ? "," : "", frames[i] & WP_FRAME_INLINED ? 1 : 0);
	fputs("]\n", f);
}

/* Which of the wanted stacks' hashes the server has: they are not wanted any more. */
static int drop_known_stacks(struct wp_ch *ch, struct rows *r, struct wp_u64map *id_of)
{
	char *sql = NULL, *res, *line, *save;
	size_t len = 0, first = 0, asked;
	uint64_t hash, id;
	FILE *f;
	int err = 0;

	while (first < r->nr_stacks) {
		f = open_memstream(&sql, &len);
		if (!f)
			return -ENOMEM;
		fputs("SELECT DISTINCT hash FROM wallprof_stacks WHERE hash IN (", f);
		asked = 0;
		for (; first < r->nr_stacks && asked < HASHES_PER_QUERY; first++) {
			if (!r->wanted[first])
				continue;
			fprintf(f, "%s%" PRIu64, asked ? "," : "", r->hash[first]);
			asked++;
		}
		fputs(")", f);
		if (fclose(f)) {
			free(sql);
			return -ENOMEM;
		}
		if (!asked) {
			free(sql);
			break;
		}
		err = wp_ch_query(ch, sql, NULL, 0, &res);
		free(sql);
		sql = NULL;
		if (err)
			return err;
		for (line = strtok_r(res, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (!wp_parse_u64(line, &hash) && wp_u64map_get(id_of, hash, &id) &&
			    id < r->nr_stacks)
				r->wanted[id] = false;
		free(res);
	}
	return 0;
}

/*
 * Insert a table's rows of this file unless the server has them: a count
 * of 0 inserts, the same count means an earlier export got this far, and
 * any other is reported (rows written by something else).
 */
static int insert_once(struct wp_ch *ch, const char *table, const struct wp_ch_source *src,
		       const char *rows, size_t len, uint64_t nr)
{
	char sql[128];
	uint64_t have;
	int err;

	err = count_rows(ch, table, src->file_id, &have);
	if (err)
		return err;
	if (have == nr)
		return 0;
	if (have) {
		wp_error("ClickHouse at %s has %" PRIu64 " rows of '%s' in %s, not %" PRIu64
			 ": delete them (ALTER TABLE %s DELETE WHERE file_id = '%s') and export again",
			 wp_quoted(ch->shown), have, wp_quoted(src->path), table, nr, table,
			 src->file_id);
		return -EEXIST;
	}
	snprintf(sql, sizeof(sql), "INSERT INTO %s FORMAT TabSeparated", table);
	return wp_ch_query(ch, sql, rows, len, NULL);
}

static int file_row(struct rows *r, FILE *f, uint64_t threads, uint64_t samples)
{
	const struct wp_meta *m = r->an->meta;
	struct wp_buf common = { 0 };
	int err;

	err = make_common(r, r->an->start_ns, r->an->end_ns, &common);
	if (err)
		return err;
	fwrite(common.data, 1, common.len, f);
	wp_buf_release(&common);
	fprintf(f, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t",
		realtime_ns(r->an, r->an->start_ns), realtime_ns(r->an, r->an->end_ns),
		r->an->start_ns, r->an->end_ns);
	put_str(f, r->src->path);
	fputc('\t', f);
	put_str(f, m->hostname);
	fputc('\t', f);
	put_str_array(f, (const char *const *)m->argv, m->argc);
	fprintf(f, "\t%d\t%d\t%" PRIu64 "\t%" PRIu64 "\t%s\t%" PRIu64 "\n", r->an->complete,
		r->an->damaged, threads, samples, PACKAGE_VERSION,
		(uint64_t)(wp_clock_ns(CLOCK_REALTIME) / NSEC_PER_SEC));
	return 0;
}

/* Rows made by fill into one buffer, then inserted once. */
static int table_rows(struct wp_ch *ch, struct rows *r, const char *table,
		      int (*fill)(struct rows *, FILE *, uint64_t *), uint64_t *nr)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	*nr = 0;
	f = open_memstream(&p, &len);
	if (!f)
		return -ENOMEM;
	err = fill(r, f, nr);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (!err)
		err = insert_once(ch, table, r->src, p, len, *nr);
	free(p);
	return err;
}

int wp_ch_export(struct wp_ch *ch, const struct wp_analysis *an, const struct wp_ch_source *src,
		 uint64_t *added)
{
	struct wp_view_opts vo = { .mode = WP_MODE_WALL, .top = 1, .unit_ns = 1 };
	struct wp_u64map id_of = { 0 };
	uint64_t threads = 0, samples = 0;
	struct rows r = { .an = an, .src = src };
	char *p = NULL;
	size_t len = 0;
	bool done;
	FILE *f;
	int err;

	*added = 0;
	err = wp_ch_file_done(ch, src->file_id, &done);
	if (err || done)
		return err;
	r.host = src->host ? src->host : an->meta->hostname;
	err = wp_view_init(&r.v, an, &vo);
	if (err)
		return err;
	r.nr_stacks = wp_stacks_count(an->stacks);
	r.hash = calloc(r.nr_stacks + 1, sizeof(*r.hash));
	r.wanted = calloc(r.nr_stacks + 1, sizeof(*r.wanted));
	if (!r.hash || !r.wanted) {
		err = -ENOMEM;
		goto out;
	}
	/* The rows that name stacks first: they make the stacks' hashes. */
	f = open_memstream(&p, &len);
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	err = sample_rows(&r, f, &samples);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err)
		goto out;
	/* Stacks the server lacks, then the rows that name them, then the file. */
	for (size_t i = 0; i < r.nr_stacks && !err; i++) {
		uint64_t other;

		if (!r.wanted[i])
			continue;
		/* Two stacks of tokens that read the same are one row. */
		if (wp_u64map_get(&id_of, r.hash[i], &other))
			r.wanted[i] = false;
		else
			err = wp_u64map_put(&id_of, r.hash[i], i);
	}
	if (!err)
		err = drop_known_stacks(ch, &r, &id_of);
	if (!err) {
		char *sp = NULL;
		size_t slen = 0;
		uint64_t nstacks = 0;

		f = open_memstream(&sp, &slen);
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < r.nr_stacks; i++)
			if (r.wanted[i]) {
				stack_row(&r, f, (uint32_t)i);
				nstacks++;
			}
		if (fclose(f))
			err = -ENOMEM;
		if (!err && nstacks)
			err = wp_ch_query(ch, "INSERT INTO wallprof_stacks FORMAT TabSeparated", sp,
					  slen, NULL);
		free(sp);
	}
	if (!err)
		err = insert_once(ch, "wallprof_samples", src, p, len, samples);
	if (!err)
		err = table_rows(ch, &r, "wallprof_threads", thread_rows, &threads);
	if (!err) {
		char *fp = NULL;
		size_t flen = 0;

		f = open_memstream(&fp, &flen);
		if (!f) {
			err = -ENOMEM;
			goto out;
		}
		err = file_row(&r, f, threads, samples);
		if (fclose(f) && !err)
			err = -ENOMEM;
		if (!err)
			err = wp_ch_query(ch, "INSERT INTO wallprof_files FORMAT TabSeparated", fp,
					  flen, NULL);
		free(fp);
	}
	if (!err)
		*added = threads + samples;
out:
	free(p);
	free(r.hash);
	free(r.wanted);
	wp_u64map_release(&id_of);
	wp_view_release(&r.v);
	return err;
}

int wp_ch_parse_time(const char *s, uint64_t now_s, uint64_t *out_s)
{
	struct tm tm = { 0 };
	const char *end;
	uint64_t n;
	char unit;
	time_t t;

	if (s[0] == '-') {
		size_t len = strlen(s);
		char digits[24];

		if (len < 3 || len - 2 >= sizeof(digits))
			return -EINVAL;
		unit = s[len - 1];
		memcpy(digits, s + 1, len - 2);
		digits[len - 2] = '\0';
		if (wp_parse_u64(digits, &n) || !strchr("smhd", unit))
			return -EINVAL;
		n *= unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
		if (n > now_s)
			return -EINVAL;
		*out_s = now_s - n;
		return 0;
	}
	if (!wp_parse_u64(s, &n)) {
		*out_s = n;
		return 0;
	}
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && (*end == ' ' || *end == 'T')) {
		const char *hm = strptime(end + 1, "%H:%M", &tm);

		end = hm && *hm == ':' ? strptime(hm, ":%S", &tm) : hm;
	}
	if (!end || *end)
		return -EINVAL;
	t = timegm(&tm);
	if (t < 0)
		return -EINVAL;
	*out_s = (uint64_t)t;
	return 0;
}

/* The WHERE clause of a filter, after "WHERE kind IN (...)". */
static void put_filter(FILE *f, const struct wp_ch_filter *flt)
{
	for (size_t i = 0; i < flt->nr_hosts; i++) {
		fputs(i ? ", '" : " AND host IN ('", f);
		put_str(f, flt->hosts[i]);
		fputc('\'', f);
	}
	if (flt->nr_hosts)
		fputc(')', f);
	for (size_t i = 0; i < flt->nr_labels; i++) {
		fputs(" AND labels.value[indexOf(labels.key, '", f);
		put_str(f, flt->labels[i].key);
		fputs("')] = '", f);
		put_str(f, flt->labels[i].value);
		fputs("' AND has(labels.key, '", f);
		put_str(f, flt->labels[i].key);
		fputs("')", f);
	}
	if (flt->since_s)
		fprintf(f, " AND end_time >= %" PRIu64, flt->since_s);
	if (flt->until_s)
		fprintf(f, " AND start_time < %" PRIu64, flt->until_s);
}

struct fold_line {
	char *text;
	uint64_t ns;
};

static int fold_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fold_line *)a)->text, ((const struct fold_line *)b)->text);
}

/* hex digits into bytes, in place; false when they are not hex. */
static bool unhex(char *s, size_t len)
{
	size_t n = 0;

	if (len % 2)
		return false;
	for (size_t i = 0; i < len; i += 2) {
		int hi = s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10 : s[i] - '0';
		int lo = s[i + 1] >= 'A' && s[i + 1] <= 'F' ? s[i + 1] - 'A' + 10 : s[i + 1] - '0';

		if (hi < 0 || hi > 15 || lo < 0 || lo > 15)
			return false;
		s[n++] = (char)(hi << 4 | lo);
	}
	s[n] = '\0';
	return true;
}

/*
 * The items of a TabSeparated array of hex strings or digits
 * ("['4142','43']", "[0,1]"), in place: how many, or -EIO when it is
 * not one, -E2BIG past max.
 */
static int array_items(char *s, char **items, unsigned int max)
{
	size_t len = strlen(s);
	char *save, *it;
	unsigned int n = 0;

	if (len < 2 || s[0] != '[' || s[len - 1] != ']')
		return -EIO;
	s[len - 1] = '\0';
	for (it = strtok_r(s + 1, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(it);

		if (it[0] == '\'') {
			if (l < 2 || it[l - 1] != '\'')
				return -EIO;
			it[l - 1] = '\0';
			it++;
		}
		if (n == max)
			return -E2BIG;
		items[n++] = it;
	}
	return (int)n;
}

/* Frames from three array columns (hex names, kernel and inlined marks): how many, or -errno. */
static int row_frames(char **col, char **names, char **kflag, char **iflag)
{
	int n = array_items(col[0], names, FRAMES_MAX);
	int nk = array_items(col[1], kflag, FRAMES_MAX);
	int ni = array_items(col[2], iflag, FRAMES_MAX);

	if (n < 0 || nk < 0 || ni < 0)
		return n == -E2BIG ? -E2BIG : -EIO;
	if (nk != n || ni != n)
		return -EIO;
	for (int i = 0; i < n; i++)
		if (!unhex(names[i], strlen(names[i])))
			return -EIO;
	return n;
}

static uint32_t frame_token(char *const *kflag, char *const *iflag, int i)
{
	return (kflag[i][0] == '1' ? WP_FRAME_KERNEL : 0) |
	       (iflag[i][0] == '1' ? WP_FRAME_INLINED : 0);
}

/*
 * One row of the answer: hex(comm), kind, estimated, ns, the stack's
 * frames (three columns), whether it is a waker's share, hex(waker's
 * name), the waker's frames (three columns).
 */
static int fold_row(char *row, bool thread_root, struct wp_buf *b, struct fold_line *line)
{
	static const char *const kinds[] = { "on-cpu", "blocked", "preempted", "runnable" };
	static const enum wp_part parts[] = { WP_PART_ON, WP_PART_BLOCKED, WP_PART_PREEMPTED,
					      WP_PART_RUNNABLE };
	static char *names[FRAMES_MAX], *kflag[FRAMES_MAX], *iflag[FRAMES_MAX];
	char *col[12], *rest = row;
	int n;
	unsigned int k;
	uint64_t est, ns;

	/* strsep, not strtok: an empty name is an empty column. */
	for (int i = 0; i < 12; i++) {
		col[i] = strsep(&rest, "\t");
		if (!col[i])
			return -EIO;
	}
	if (rest)
		return -EIO;
	for (k = 0; k < 4 && strcmp(col[1], kinds[k]); k++)
		;
	if (k == 4 || wp_parse_u64(col[2], &est) || wp_parse_u64(col[3], &ns) ||
	    !unhex(col[0], strlen(col[0])) || !unhex(col[8], strlen(col[8])))
		return -EIO;
	n = row_frames(col + 4, names, kflag, iflag);
	if (n < 0)
		return n;
	b->len = 0;
	if (thread_root)
		wp_folded_frame(b, col[0][0] ? col[0] : "?", 0);
	for (int i = n; i-- > 0;)
		wp_folded_stack_frame(b, names[i], frame_token(kflag, iflag, i));
	if (wp_part_marker(parts[k], est))
		wp_folded_frame(b, wp_part_marker(parts[k], est), 0);
	/* A waker's share: its frames after "--", leaf first, and its name (format_folded.c). */
	if (!strcmp(col[7], "1")) {
		n = row_frames(col + 9, names, kflag, iflag);
		if (n < 0)
			return n;
		wp_folded_frame(b, "--", 0);
		for (int i = 0; i < n; i++)
			wp_folded_stack_frame(b, names[i], frame_token(kflag, iflag, i));
		if (thread_root)
			wp_folded_frame(b, col[8], 0);
	}
	if (wp_buf_append(b, "", 1))
		return -ENOMEM;
	line->text = strdup((const char *)b->data);
	if (!line->text)
		return -ENOMEM;
	line->ns = ns;
	return 0;
}

/* A row's own blocked time is an estimate, as the folded format's marker says. */
#define EST_SQL "estimated_ns > 0 AND estimated_ns >= intDiv(ns, 100)"

/*
 * The SQL of report --from's folded stacks: one row per line to be (thread
 * name, stack, kind, estimated or not; with wakers, each blocked line
 * split by waker and the rest), with the stacks' frames.
 */
static void folded_sql(FILE *f, const struct wp_ch_filter *flt, const struct wp_view *v,
		       bool wakers)
{
	static const char *const kinds[] = { "on-cpu", "blocked", "preempted", "runnable" };
	static const enum wp_part parts[] = { WP_PART_ON, WP_PART_BLOCKED, WP_PART_PREEMPTED,
					      WP_PART_RUNNABLE };
	bool any = false;

	wakers = wakers && wp_view_part(v, WP_PART_BLOCKED);
	fputs("SELECT hex(comm), k, est, total, arrayMap(x -> hex(x), functions), kernel, "
	      "inlined, wk, hex(waker_comm), arrayMap(x -> hex(x), wfunctions), wkernel, "
	      "winlined FROM (SELECT * FROM (", f);
	/* Each kind the mode weighs (as the view says), blocked apart with wakers. */
	fputs("SELECT comm, stack, toString(kind) AS k, " EST_SQL " AS est, toUInt8(0) AS wk, "
	      "toUInt64(0) AS waker_stack, '' AS waker_comm, sum(ns) AS total "
	      "FROM wallprof_samples WHERE ", f);
	for (int k = 0; k < 4; k++)
		if (wp_view_part(v, parts[k]) && !(wakers && parts[k] == WP_PART_BLOCKED)) {
			fprintf(f, "%s'%s'", any ? ", " : "kind IN (", kinds[k]);
			any = true;
		}
	/* --mode blocked --wakers: only the blocked lines below. */
	fputs(any ? ")" : "0", f);
	put_filter(f, flt);
	fputs(" GROUP BY comm, stack, k, est", f);
	if (wakers) {
		/* What no waker ended, weight by weight (a thread's stack in a file). */
		fputs(" UNION ALL SELECT comm, stack, 'blocked' AS k, est, toUInt8(0) AS wk, "
		      "toUInt64(0) AS waker_stack, '' AS waker_comm, "
		      "sum(toUInt64(if(ns > woken, ns - woken, 0))) AS total FROM (SELECT file_id, serial, "
		      "stack, comm, ns, " EST_SQL " AS est FROM wallprof_samples WHERE kind = "
		      "'blocked'", f);
		put_filter(f, flt);
		fputs(") ANY LEFT JOIN (SELECT file_id, serial, stack, sum(ns) AS woken FROM "
		      "wallprof_samples WHERE kind = 'woken'", f);
		put_filter(f, flt);
		fputs(" GROUP BY file_id, serial, stack) USING (file_id, serial, stack) "
		      "GROUP BY comm, stack, est", f);
		/* What each waker ended, marked as its blocked weight is. */
		fputs(" UNION ALL SELECT comm, stack, 'blocked' AS k, est, toUInt8(1) AS wk, "
		      "waker_stack, waker_comm, sum(ns) AS total FROM (SELECT file_id, serial, stack, "
		      "comm, ns, waker_stack, waker_comm FROM wallprof_samples WHERE kind = 'woken'",
		      f);
		put_filter(f, flt);
		fputs(") ANY LEFT JOIN (SELECT file_id, serial, stack, " EST_SQL " AS est FROM "
		      "wallprof_samples WHERE kind = 'blocked'", f);
		put_filter(f, flt);
		fputs(") USING (file_id, serial, stack) GROUP BY comm, stack, est, waker_stack, "
		      "waker_comm", f);
	}
	fputs(") ANY LEFT JOIN (SELECT hash AS stack, frames.function AS functions, "
	      "frames.kernel AS kernel, frames.inlined AS inlined FROM wallprof_stacks) "
	      "USING stack) ANY LEFT JOIN (SELECT hash AS waker_stack, frames.function AS "
	      "wfunctions, frames.kernel AS wkernel, frames.inlined AS winlined FROM "
	      "wallprof_stacks) USING waker_stack", f);
}

int wp_ch_folded(struct wp_ch *ch, const struct wp_ch_filter *flt, enum wp_mode mode,
		 uint64_t unit_ns, bool thread_root, bool wakers, FILE *out)
{
	struct wp_view v = { .o = { .mode = mode } };
	struct fold_line *lines = NULL;
	size_t nl = 0, cap = 0, len = 0;
	char *sql = NULL, *res = NULL, *row, *next;
	struct wp_buf b = { 0 };
	FILE *f;
	int err = 0;

	f = open_memstream(&sql, &len);
	if (!f)
		return -ENOMEM;
	folded_sql(f, flt, &v, wakers);
	if (fclose(f)) {
		free(sql);
		return -ENOMEM;
	}
	err = wp_ch_query(ch, sql, NULL, 0, &res);
	free(sql);
	if (err)
		return err;
	for (row = res; row && *row; row = next) {
		next = strchr(row, '\n');
		if (next)
			*next++ = '\0';
		err = WP_GROW(lines, cap, nl + 1);
		if (!err)
			err = fold_row(row, thread_root, &b, &lines[nl]);
		if (err == -EIO)
			wp_error("ClickHouse at %s answered a row that is not a stack's",
				 wp_quoted(ch->shown));
		if (err == -E2BIG)
			wp_error("ClickHouse at %s holds a stack of more than %d frames",
				 wp_quoted(ch->shown), FRAMES_MAX);
		if (err)
			goto out;
		nl++;
	}
	if (!nl)
		wp_warn("ClickHouse at %s holds no exported rows that match", wp_quoted(ch->shown));
	/* Equal lines add up: stacks of threads of one name, of every file and host. */
	if (nl)
		qsort(lines, nl, sizeof(*lines), fold_cmp);
	for (size_t i = 0; i < nl;) {
		uint64_t ns = 0, weight;
		size_t j = i;

		while (j < nl && !strcmp(lines[j].text, lines[i].text))
			ns += lines[j++].ns;
		weight = (ns + unit_ns / 2) / unit_ns;
		if (weight)
			fprintf(out, "%s %" PRIu64 "\n", lines[i].text, weight);
		i = j;
	}
out:
	for (size_t i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	free(res);
	wp_buf_release(&b);
	return err;
}
