/* SPDX-License-Identifier: GPL-2.0-or-later */
/* quote.c: escaping of names and paths for terminals, folded stacks, JSON and XML. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "quote.h"
#include "util.h"

/* The longest quoted form of one character: four bytes as \ooo each. */
#define UNIT_MAX 16

size_t wp_utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	/* The second byte's range excludes overlongs, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

static uint32_t utf8_decode(const unsigned char *s, size_t len)
{
	uint32_t cp = s[0] & (0x7f >> len);

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/*
 * Well-formed characters that still change how a terminal reads or shows
 * what follows: C1 controls (U+009B is CSI to some terminals), line and
 * paragraph separators, and the bidirectional marks and overrides that
 * can make text display in another order than it is stored.
 */
static bool is_format_char(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Whether byte c stands for itself in mode. */
static bool is_plain(unsigned char c, enum wp_quote_mode mode)
{
	if (c < 0x20 || c >= 0x7f)
		return false;
	if (c == '\\')
		return mode == WP_QUOTE_MESSAGE;
	if (mode == WP_QUOTE_XML)
		return !strchr("<>&\"'", c);
	if (c == '"')
		return mode != WP_QUOTE_JSON;
	if (c == ';')
		return mode != WP_QUOTE_FOLDED;
	if (c == '\'')
		return mode != WP_QUOTE_CLICKHOUSE;
	return true;
}

static size_t plain_run(const unsigned char *s, size_t n, enum wp_quote_mode mode)
{
	size_t i = 0;

	while (i < n && is_plain(s[i], mode))
		i++;
	return i;
}

/* One byte as an escape: \ooo, or \xHH for ClickHouse. */
static size_t byte_escape(char *o, unsigned char c, enum wp_quote_mode mode)
{
	static const char hex[] = "0123456789abcdef";

	/* ClickHouse reads "\0" as NUL and the digits after it as themselves. */
	if (mode == WP_QUOTE_CLICKHOUSE) {
		o[0] = '\\';
		o[1] = 'x';
		o[2] = hex[c >> 4];
		o[3] = hex[c & 0xf];
		return 4;
	}
	o[0] = '\\';
	o[1] = (char)('0' + (c >> 6));
	o[2] = (char)('0' + ((c >> 3) & 7));
	o[3] = (char)('0' + (c & 7));
	return 4;
}

/* XML's entity for one of < > & " ', or NULL. */
static const char *xml_entity(unsigned char c)
{
	switch (c) {
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '&':
		return "&amp;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	default:
		return NULL;
	}
}

static size_t json_u(char *o, uint32_t cp)
{
	static const char hex[] = "0123456789abcdef";

	o[0] = '\\';
	o[1] = 'u';
	for (int i = 0; i < 4; i++)
		o[2 + i] = hex[(cp >> (12 - 4 * i)) & 0xf];
	return 6;
}

/*
 * The quoted form of the character at s (n > 0 bytes left, s[0] not
 * plain) in o[UNIT_MAX]; returns its length, *used the bytes it stands for.
 */
static size_t quote_one(const unsigned char *s, size_t n, enum wp_quote_mode mode, char *o,
			size_t *used)
{
	static const char c_names[] = "\a\b\t\n\v\f\r", c_letters[] = "abtnvfr";
	size_t len = wp_utf8_len((const char *)s, n), k = 0;
	const char *named;
	uint32_t cp;

	*used = len ? len : 1;
	if (!len)
		return mode == WP_QUOTE_JSON ? json_u(o, 0xfffd) : byte_escape(o, s[0], mode);
	if (len == 1) {
		if (s[0] >= 0x20 && s[0] < 0x7f) {
			/* A plain character that mode reserves. */
			named = mode == WP_QUOTE_XML ? xml_entity(s[0]) : NULL;
			if (named) {
				memcpy(o, named, strlen(named));
				return strlen(named);
			}
			if (s[0] == ';')
				return byte_escape(o, s[0], mode);
			o[0] = '\\';
			o[1] = (char)s[0];
			return 2;
		}
		/* Control bytes with a name of their own (not NUL, which ends C strings). */
		named = s[0] ? memchr(c_names, s[0], sizeof(c_names) - 1) : NULL;
		if (mode == WP_QUOTE_JSON) {
			if (named && strchr("bfnrt", c_letters[named - c_names])) {
				o[0] = '\\';
				o[1] = c_letters[named - c_names];
				return 2;
			}
			return json_u(o, s[0]);
		}
		/* ClickHouse knows \t \n \r by name; the others read as letters. */
		if (named && (mode != WP_QUOTE_CLICKHOUSE || strchr("tnr", c_letters[named - c_names]))) {
			o[0] = '\\';
			o[1] = c_letters[named - c_names];
			return 2;
		}
		return byte_escape(o, s[0], mode);
	}
	cp = utf8_decode(s, len);
	if (!is_format_char(cp)) {
		memcpy(o, s, len);
		return len;
	}
	if (mode == WP_QUOTE_JSON)
		return json_u(o, cp);
	for (size_t i = 0; i < len; i++)
		k += byte_escape(o + k, s[i], mode);
	return k;
}

void wp_quote_write(FILE *out, const char *str, size_t len, enum wp_quote_mode mode)
{
	const unsigned char *s = (const unsigned char *)str;
	char unit[UNIT_MAX];
	size_t n, used;

	while (len) {
		n = plain_run(s, len, mode);
		if (n) {
			fwrite(s, 1, n, out);
			s += n;
			len -= n;
			continue;
		}
		n = quote_one(s, len, mode, unit, &used);
		fwrite(unit, 1, n, out);
		s += used;
		len -= used;
	}
}

void wp_quote_puts(FILE *out, const char *s, enum wp_quote_mode mode)
{
	wp_quote_write(out, s, strlen(s), mode);
}

int wp_quote_buf(struct wp_buf *b, const char *str, size_t len, enum wp_quote_mode mode)
{
	const unsigned char *s = (const unsigned char *)str;
	char unit[UNIT_MAX];
	size_t n, used;
	int err;

	while (len) {
		n = plain_run(s, len, mode);
		if (n) {
			err = wp_buf_append(b, s, n);
			used = n;
		} else {
			n = quote_one(s, len, mode, unit, &used);
			err = wp_buf_append(b, unit, n);
		}
		if (err)
			return err;
		s += used;
		len -= used;
	}
	return 0;
}

const char *wp_quote(char *dst, size_t size, const char *str, enum wp_quote_mode mode)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), at = 0, n, used;
	char unit[UNIT_MAX];

	while (len) {
		if (is_plain(*s, mode)) {
			unit[0] = (char)*s;
			n = used = 1;
		} else {
			n = quote_one(s, len, mode, unit, &used);
		}
		if (at + n >= size)
			break;
		memcpy(dst + at, unit, n);
		at += n;
		s += used;
		len -= used;
	}
	dst[at] = '\0';
	return dst;
}

/* Whether the character at s (n > 0 bytes left) shows as itself in TEXT. */
static bool shows_as_itself(const unsigned char *s, size_t n, size_t *used)
{
	size_t len = wp_utf8_len((const char *)s, n);

	*used = len ? len : 1;
	if (!len)
		return false;
	if (len == 1)
		return s[0] >= 0x20 && s[0] < 0x7f;
	return !is_format_char(utf8_decode(s, len));
}

void wp_quote_shell_word(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), used, i;
	bool plain = len > 0, printable = true;
	char unit[UNIT_MAX];

	for (i = 0; i < len; i += used) {
		if (!shows_as_itself(s + i, len - i, &used))
			printable = false;
		if (used > 1 || !(isalnum(s[i]) || strchr("_@%+=:,./-", s[i])))
			plain = false;
	}
	if (plain) {
		fputs(str, out);
		return;
	}
	if (printable) {
		fputc('\'', out);
		for (i = 0; i < len; i++)
			if (s[i] == '\'')
				fputs("'\\''", out);
			else
				fputc(s[i], out);
		fputc('\'', out);
		return;
	}
	fputs("$'", out);
	for (i = 0; i < len; i += used) {
		if (s[i] == '\'' || s[i] == '\\') {
			fputc('\\', out);
			fputc(s[i], out);
			used = 1;
		} else if (shows_as_itself(s + i, len - i, &used)) {
			fwrite(s + i, 1, used, out);
		} else {
			fwrite(unit, 1, quote_one(s + i, len - i, WP_QUOTE_TEXT, unit, &used), out);
		}
	}
	fputc('\'', out);
}

const char *wp_quoted(const char *s)
{
	/* Per thread: the drain and writer threads log too. */
	static _Thread_local char bufs[4][WP_QUOTE_MSG];
	static _Thread_local unsigned int next;
	char *dst = bufs[next++ % 4];

	return wp_quote(dst, WP_QUOTE_MSG, s ? s : "(null)", WP_QUOTE_TEXT);
}
