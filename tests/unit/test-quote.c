/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-quote.c: the quoting of untrusted names (src/quote.c): strict UTF-8,
 * each mode's escapes on the bytes programs put in their thread names and
 * file paths, cuts at whole escapes, the per-thread buffers of messages,
 * and, over every byte value and many random strings, outputs that hold no
 * control byte, only well-formed UTF-8, in FOLDED no ';', in XML no
 * markup character, in CLICKHOUSE no quote, and (TEXT, FOLDED, XML,
 * CLICKHOUSE) read back to the input.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"
#include "util.h"
#include "tap.h"

static const char *const mode_names[] = { "text", "folded", "json", "message", "xml",
					  "clickhouse" };
#define LAST_MODE WP_QUOTE_CLICKHOUSE

/* Not a mode: q_write quotes with wp_quote_shell_word (s whole, len unused). */
#define SHELL_WORD (LAST_MODE + 1)

/* The quoted form of len bytes at s through wp_quote_write, NUL-terminated (static). */
static const char *q_write(const char *s, size_t len, enum wp_quote_mode mode)
{
	static char out[4096];
	FILE *f;

	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	if (!f)
		return NULL;
	if ((int)mode == SHELL_WORD)
		wp_quote_shell_word(f, s);
	else
		wp_quote_write(f, s, len, mode);
	fclose(f);
	return out;
}

/* The same through wp_quote_buf. */
static const char *q_buf(const char *s, size_t len, enum wp_quote_mode mode)
{
	static char out[4096];
	struct wp_buf b = { 0 };

	if (wp_quote_buf(&b, s, len, mode) || b.len >= sizeof(out)) {
		wp_buf_release(&b);
		return NULL;
	}
	if (b.len)	/* b.data is NULL until something is appended */
		memcpy(out, b.data, b.len);
	out[b.len] = '\0';
	wp_buf_release(&b);
	return out;
}

/* Check one string in one mode through all three entry points. */
static void quoted(const char *in, enum wp_quote_mode mode, const char *want, const char *what)
{
	char dst[4096];

	is_str(q_write(in, strlen(in), mode), want, "%s, %s (write)", what, mode_names[mode]);
	is_str(q_buf(in, strlen(in), mode), want, "%s, %s (buf)", what, mode_names[mode]);
	is_str(wp_quote(dst, sizeof(dst), in, mode), want, "%s, %s (str)", what,
	       mode_names[mode]);
}

static void test_utf8_len(void)
{
	static const struct {
		const char *s;
		size_t n, want;
		const char *what;
	} cases[] = {
		{ "A", 1, 1, "ASCII" },
		{ "\xc3\xa9", 2, 2, "U+00E9" },
		{ "\xc2\x9b", 2, 2, "U+009B (well-formed, if a control)" },
		{ "\xe2\x82\xac", 3, 3, "U+20AC" },
		{ "\xf0\x9f\x98\x80", 4, 4, "U+1F600" },
		{ "\xf4\x8f\xbf\xbf", 4, 4, "U+10FFFF" },
		{ "\x9b", 1, 0, "a lone continuation byte (raw CSI)" },
		{ "\x85", 1, 0, "a lone 0x85 (raw NEL)" },
		{ "\xc0\x80", 2, 0, "overlong NUL" },
		{ "\xc1\xbf", 2, 0, "overlong 2-byte" },
		{ "\xe0\x80\x80", 3, 0, "overlong 3-byte" },
		{ "\xf0\x80\x80\x80", 4, 0, "overlong 4-byte" },
		{ "\xed\xa0\x80", 3, 0, "a surrogate" },
		{ "\xf4\x90\x80\x80", 4, 0, "above U+10FFFF" },
		{ "\xf5\x80\x80\x80", 4, 0, "0xf5 lead byte" },
		{ "\xe2\x82", 2, 0, "cut short by the end of the string" },
		{ "\xe2\x82\xac", 2, 0, "cut short by n" },
		{ "\xe2\x41\xac", 3, 0, "ASCII where a continuation belongs" },
		{ "", 0, 0, "nothing" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int((long long)wp_utf8_len(cases[i].s, cases[i].n), (long long)cases[i].want,
		       "utf8_len: %s", cases[i].what);
}

static void test_modes(void)
{
	const char *title = "\033]2;pwn\007";

	quoted("plain text (with spaces) é €", WP_QUOTE_TEXT, "plain text (with spaces) é €",
	       "printable ASCII and UTF-8 stay");
	quoted(title, WP_QUOTE_TEXT, "\\033]2;pwn\\a", "an OSC title sequence");
	quoted(title, WP_QUOTE_FOLDED, "\\033]2\\073pwn\\a", "an OSC title sequence");
	quoted(title, WP_QUOTE_JSON, "\\u001b]2;pwn\\u0007", "an OSC title sequence");
	quoted(title, WP_QUOTE_MESSAGE, "\\033]2;pwn\\a", "an OSC title sequence");
	quoted("a\x9b" "2J\x85" "b", WP_QUOTE_TEXT, "a\\2332J\\205b", "raw C1 bytes");
	quoted("a\x9b" "2J\x85" "b", WP_QUOTE_JSON, "a\\ufffd2J\\ufffdb", "raw C1 bytes");
	quoted("a\xc2\x9b" "2J", WP_QUOTE_TEXT, "a\\302\\2332J", "U+009B in UTF-8");
	quoted("a\xc2\x85", WP_QUOTE_JSON, "a\\u0085", "U+0085 in UTF-8");
	quoted("x\xe2\x80\xaey", WP_QUOTE_TEXT, "x\\342\\200\\256y", "U+202E (right-to-left)");
	quoted("x\xe2\x80\xaey", WP_QUOTE_JSON, "x\\u202ey", "U+202E (right-to-left)");
	quoted("x\xe2\x80\xa8y", WP_QUOTE_FOLDED, "x\\342\\200\\250y", "U+2028 (line separator)");
	quoted("\t\n\r\v\f\b\001\037\177", WP_QUOTE_TEXT, "\\t\\n\\r\\v\\f\\b\\001\\037\\177",
	       "control bytes and DEL");
	quoted("\t\n\r\v\f\b\001\037\177", WP_QUOTE_JSON,
	       "\\t\\n\\r\\u000b\\f\\b\\u0001\\u001f\\u007f", "control bytes and DEL");
	quoted("a\\b\"c;d", WP_QUOTE_TEXT, "a\\\\b\"c;d", "backslash, quote, semicolon");
	quoted("a\\b\"c;d", WP_QUOTE_FOLDED, "a\\\\b\"c\\073d", "backslash, quote, semicolon");
	quoted("a\\b\"c;d", WP_QUOTE_JSON, "a\\\\b\\\"c;d", "backslash, quote, semicolon");
	quoted("a\\b\"c;d", WP_QUOTE_MESSAGE, "a\\b\"c;d", "backslash, quote, semicolon");
	quoted("lib\033[31m\a\n;\x9b.so", WP_QUOTE_FOLDED, "lib\\033[31m\\a\\n\\073\\233.so",
	       "a hostile file name");
	quoted("\xed\xa0\x80\xc0\xaf", WP_QUOTE_TEXT, "\\355\\240\\200\\300\\257",
	       "a surrogate and an overlong '/'");
	quoted("", WP_QUOTE_TEXT, "", "the empty string");
	/* ClickHouse reads \\0 as NUL: bytes as \\xHH, never octal. */
	quoted(title, WP_QUOTE_CLICKHOUSE, "\\x1b]2;pwn\\x07", "an OSC title sequence");
	quoted("a\\b'c\"d;\t\n\r\v", WP_QUOTE_CLICKHOUSE, "a\\\\b\\'c\"d;\\t\\n\\r\\x0b",
	       "backslash, quotes, tab, newline, return, vertical tab");
	quoted("a\x9b" "2J\x85" "b", WP_QUOTE_CLICKHOUSE, "a\\x9b2J\\x85b", "raw C1 bytes");
	quoted("x\xe2\x80\xaey \xc3\xa9", WP_QUOTE_CLICKHOUSE, "x\\xe2\\x80\\xaey \xc3\xa9",
	       "U+202E escaped, U+00E9 kept");
}

/* XML: markup characters as entities, and TEXT's escapes for the rest. */
static void test_xml(void)
{
	quoted("<a href=\"x\">&'b'</a>", WP_QUOTE_XML,
	       "&lt;a href=&quot;x&quot;&gt;&amp;&apos;b&apos;&lt;/a&gt;", "markup");
	quoted("std::vector<int>::push_back(int&&)", WP_QUOTE_XML,
	       "std::vector&lt;int&gt;::push_back(int&amp;&amp;)", "a C++ function name");
	quoted("\033]2;pwn\007", WP_QUOTE_XML, "\\033]2;pwn\\a", "an OSC title sequence");
	quoted("a\tb\nc\rd", WP_QUOTE_XML, "a\\tb\\nc\\rd", "tab, newline, return");
	quoted("a\x9b" "2J\xc2\x85", WP_QUOTE_XML, "a\\2332J\\302\\205",
	       "a raw C1 byte and U+0085");
	quoted("x\xe2\x80\xaey", WP_QUOTE_XML, "x\\342\\200\\256y", "U+202E (right-to-left)");
	quoted("a\\b;c \xc3\xa9", WP_QUOTE_XML, "a\\\\b;c \xc3\xa9",
	       "backslash, semicolon, space, UTF-8");
	quoted("\xed\xa0\x80", WP_QUOTE_XML, "\\355\\240\\200", "a surrogate");
}

/* wp_quoted: four buffers per thread, used in turn; TEXT rules. */
static void test_quoted(void)
{
	const char *a = wp_quoted("one\033"), *b = wp_quoted("two"), *c = wp_quoted("three");
	const char *d = wp_quoted("four");

	is_str(a, "one\\033", "wp_quoted: TEXT rules");
	is_str(b, "two", "wp_quoted: the second of four buffers");
	is_str(c, "three", "wp_quoted: the third");
	is_str(d, "four", "wp_quoted: the fourth");
	ok(a != b && a != c && a != d, "wp_quoted: four distinct buffers");
	is_str(wp_quoted("five"), "five", "wp_quoted: the fifth reuses the first");
	is_str(a, "five", "wp_quoted: ... so the first is overwritten");
	is_str(wp_quoted(NULL), "(null)", "wp_quoted: NULL");
}

static void test_nul_and_cut(void)
{
	char dst[16];

	is_str(q_write("a\0b", 3, WP_QUOTE_TEXT), "a\\000b", "an embedded NUL, text");
	is_str(q_write("a\0b", 3, WP_QUOTE_JSON), "a\\u0000b", "an embedded NUL, json");
	is_str(wp_quote(dst, 6, "ab\033cd", WP_QUOTE_TEXT), "ab",
	       "a cut never splits an escape (size 6)");
	is_str(wp_quote(dst, 7, "ab\033cd", WP_QUOTE_TEXT), "ab\\033",
	       "the escape when it fits whole (size 7)");
	is_str(wp_quote(dst, 3, "a\xc3\xa9", WP_QUOTE_TEXT), "a",
	       "a cut never splits a UTF-8 character");
	is_str(wp_quote(dst, 4, "a\xc3\xa9", WP_QUOTE_TEXT), "a\xc3\xa9", "the whole character");
	is_str(wp_quote(dst, 1, "abc", WP_QUOTE_TEXT), "", "size 1: the empty string");
	is_str(wp_quote(dst, 13, "0123456789abcdef", WP_QUOTE_TEXT), "0123456789ab",
	       "plain text cut at size - 1");
}

/* Whether s is well-formed UTF-8 with no control character, raw or encoded. */
static bool terminal_safe(const char *s, bool allow_semicolon, bool allow_markup)
{
	size_t len = strlen(s);

	while (len) {
		size_t n = wp_utf8_len(s, len);
		const unsigned char *u = (const unsigned char *)s;

		if (!n || u[0] < 0x20 || u[0] == 0x7f || (u[0] == 0xc2 && u[1] <= 0x9f))
			return false;
		if (!allow_semicolon && u[0] == ';')
			return false;
		if (!allow_markup && strchr("<>\"'", u[0]))
			return false;
		s += n;
		len -= n;
	}
	return true;
}

static int oct(char c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

static int hexdigit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undo TEXT/FOLDED/CLICKHOUSE (or XML) quoting; the length read back, or -1 if malformed. */
static long unquote(const char *q, char *out, bool xml)
{
	static const char letters[] = "abtnvfr", bytes[] = "\a\b\t\n\v\f\r";
	static const char *const entities[] = { "&lt;", "&gt;", "&amp;", "&quot;", "&apos;" };
	long n = 0;

	while (*q) {
		const char *l;
		size_t e = 0;

		if (xml && *q == '&') {
			while (e < 5 && strncmp(q, entities[e], strlen(entities[e])))
				e++;
			if (e == 5)
				return -1;
			out[n++] = "<>&\"'"[e];
			q += strlen(entities[e]);
			continue;
		}
		if (*q != '\\') {
			out[n++] = *q++;
			continue;
		}
		q++;
		if (*q == '\\') {
			out[n++] = *q++;
		} else if (*q && (l = strchr(letters, *q))) {
			out[n++] = bytes[l - letters];
			q++;
		} else if (*q == '\'') {
			out[n++] = *q++;
		} else if (*q == 'x' && hexdigit(q[1]) >= 0 && hexdigit(q[2]) >= 0) {
			out[n++] = (char)(hexdigit(q[1]) << 4 | hexdigit(q[2]));
			q += 3;
		} else if (oct(q[0]) >= 0 && oct(q[1]) >= 0 && oct(q[2]) >= 0) {
			out[n++] = (char)(oct(q[0]) << 6 | oct(q[1]) << 3 | oct(q[2]));
			q += 3;
		} else {
			return -1;
		}
	}
	return n;
}

/* Whether a quote in q is not after a backslash that escapes it (CLICKHOUSE). */
static bool unescaped_quote(const char *q)
{
	for (; *q; q++) {
		if (*q == '\\' && q[1]) {
			q++;
			continue;
		}
		if (*q == '\'')
			return true;
	}
	return false;
}

static void test_properties(void)
{
	static const unsigned char pick[] = { 0x00, 0x07, 0x09, 0x0a, 0x1b, 0x20, 0x22, 0x3b,
					      0x41, 0x5c, 0x7f, 0x80, 0x85, 0x9b, 0x9f, 0xa0,
					      0xbf, 0xc2, 0xc3, 0xe2, 0x80, 0xae, 0xed, 0xf0,
					      0xf4, 0x90, 0xff, 0x26, 0x27, 0x3c, 0x3e };
	unsigned int bad[LAST_MODE + 1] = { 0 }, unround[LAST_MODE + 1] = { 0 }, differ = 0;
	char in[40], back[40], dst[WP_QUOTE_SIZE(40)];
	unsigned int seed = 12345;

	for (int t = 0; t < 20000; t++) {
		size_t len;

		/* All single bytes first, then random strings of interesting bytes. */
		if (t < 255) {
			in[0] = (char)(t + 1);
			len = 1;
		} else {
			len = 1 + rand_r(&seed) % 24;
			for (size_t i = 0; i < len; i++)
				in[i] = (char)pick[rand_r(&seed) % sizeof(pick)];
			/* No NUL inside: wp_quote takes C strings. */
			for (size_t i = 0; i < len; i++)
				if (!in[i])
					in[i] = 'z';
		}
		in[len] = '\0';
		for (int m = WP_QUOTE_TEXT; m <= LAST_MODE; m++) {
			const char *a = q_write(in, len, (enum wp_quote_mode)m);
			const char *b = q_buf(in, len, (enum wp_quote_mode)m);

			wp_quote(dst, sizeof(dst), in, (enum wp_quote_mode)m);
			if (!a || !b || strcmp(a, b) || strcmp(a, dst))
				differ++;
			if (!a || !terminal_safe(a, m != WP_QUOTE_FOLDED, m != WP_QUOTE_XML) ||
			    (m == WP_QUOTE_CLICKHOUSE && unescaped_quote(a)))
				bad[m]++;
			if (a && m != WP_QUOTE_JSON && m != WP_QUOTE_MESSAGE &&
			    (unquote(a, back, m == WP_QUOTE_XML) != (long)len ||
			     memcmp(back, in, len)))
				unround[m]++;
		}
	}
	is_int(differ, 0, "write, buf and str agree on 20000 strings in every mode");
	for (int m = WP_QUOTE_TEXT; m <= LAST_MODE; m++)
		is_int(bad[m], 0, "%s: never a control byte, C1 character or bad UTF-8%s",
		       mode_names[m], m == WP_QUOTE_FOLDED ? " or ';'" :
		       m == WP_QUOTE_XML ? " or < > \" '" :
		       m == WP_QUOTE_CLICKHOUSE ? " or an unescaped '" : "");
	is_int(unround[WP_QUOTE_TEXT], 0, "text reads back to the same bytes");
	is_int(unround[WP_QUOTE_FOLDED], 0, "folded reads back to the same bytes");
	is_int(unround[WP_QUOTE_XML], 0, "xml reads back to the same bytes");
	is_int(unround[WP_QUOTE_CLICKHOUSE], 0, "clickhouse reads back to the same bytes");
}

/* A command line's argument as a shell word. */
static const char *shell_word(const char *s)
{
	return q_write(s, strlen(s), (enum wp_quote_mode)SHELL_WORD);
}

static void test_shell_word(void)
{
	is_str(shell_word("ls"), "ls", "shell: a plain word as it is");
	is_str(shell_word("/usr/bin/x-y_z.1,a=b:c@d%e+f"), "/usr/bin/x-y_z.1,a=b:c@d%e+f",
	       "shell: every safe character");
	is_str(shell_word(""), "''", "shell: the empty word");
	is_str(shell_word("a b"), "'a b'", "shell: a space");
	is_str(shell_word("it's"), "'it'\\''s'", "shell: a single quote");
	is_str(shell_word("$HOME `x` \"y\" *?[] ~ # ; & | < > ( ) { } !"),
	       "'$HOME `x` \"y\" *?[] ~ # ; & | < > ( ) { } !'", "shell: metacharacters");
	is_str(shell_word("caf\xc3\xa9"), "'caf\xc3\xa9'", "shell: UTF-8 quoted");
	is_str(shell_word("a\nb"), "$'a\\nb'", "shell: a newline");
	is_str(shell_word("\033]2;x\007'\\"), "$'\\033]2;x\\a\\'\\\\'",
	       "shell: ESC, BEL, quote and backslash");
	is_str(shell_word("\x9b" "2J"), "$'\\2332J'", "shell: a raw C1 byte");
	is_str(shell_word("x\xe2\x80\xaey"), "$'x\\342\\200\\256y'", "shell: U+202E");
}

int main(void)
{
	test_utf8_len();
	test_modes();
	test_xml();
	test_quoted();
	test_nul_and_cut();
	test_properties();
	test_shell_word();
	return done_testing();
}
