/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quote.h: untrusted byte strings made safe for one kind of output.
 *
 * Thread names, mapped file paths, function names, the recorded command
 * line and host name all come from the recording, and the profiled
 * program chose most of them: any byte may be in them, ESC and the C1
 * control bytes (0x80-0x9f, which some terminals also take as the start
 * of a control sequence) included.  Every output that prints one goes
 * through here.  The quoted form holds printable ASCII, well-formed UTF-8
 * that is not a control or formatting character, and escapes:
 *
 *   WP_QUOTE_TEXT     terminals and text files: C-style escapes, \t \n \r
 *                     \a \b \v \f \\ by name, any other control byte, DEL,
 *                     a byte that is not part of well-formed UTF-8, and
 *                     each byte of a C1 control, bidirectional override or
 *                     line/paragraph separator character as \ooo (octal).
 *   WP_QUOTE_FOLDED   one frame of a folded stack: as TEXT, and ';' (the
 *                     frame separator) as \073.  Spaces stay: the weight
 *                     is what follows the last space of a line.
 *   WP_QUOTE_JSON     the inside of a JSON string: well-formed UTF-8 only,
 *                     '"' and '\' escaped, control characters (C1 and DEL
 *                     included) and the TEXT formatting characters as
 *                     \uXXXX, a byte that is not UTF-8 as \ufffd (so
 *                     different byte strings can read the same there).
 *   WP_QUOTE_MESSAGE  a whole message line whose names are already quoted:
 *                     as TEXT, but a backslash stays as it is.
 *   WP_QUOTE_XML      XML character data or an attribute value (SVG flame
 *                     graphs): as TEXT, and < > & " ' as &lt; &gt; &amp;
 *                     &quot; &apos;.  XML 1.0 allows no control character
 *                     other than tab, newline and return, not even as a
 *                     character reference, so TEXT's escapes are kept.
 *   WP_QUOTE_CLICKHOUSE  a string value of ClickHouse's TabSeparated
 *                     format, bare or single-quoted inside an array: as
 *                     TEXT, but with the escapes ClickHouse reads back to
 *                     the very bytes (its strings are bytes): \t \n \r by
 *                     name, ' and \ after a backslash, and every other
 *                     byte TEXT escapes as \xHH (ClickHouse reads \0 as
 *                     NUL, so never octal).  The table holds the names as
 *                     recorded.
 *
 * Every output and every message that shows such a name goes through this
 * family of functions; none escapes by itself.  TEXT, FOLDED, XML and CLICKHOUSE
 * can be read back unambiguously; nothing is ever dropped.
 */
#ifndef WALLPROF_QUOTE_H
#define WALLPROF_QUOTE_H

#include <stddef.h>
#include <stdio.h>

struct wp_buf;

enum wp_quote_mode {
	WP_QUOTE_TEXT,
	WP_QUOTE_FOLDED,
	WP_QUOTE_JSON,
	WP_QUOTE_MESSAGE,
	WP_QUOTE_XML,
	WP_QUOTE_CLICKHOUSE,
};

/* Room for the quoted form of n bytes in any mode, with its NUL. */
#define WP_QUOTE_SIZE(n) ((n) * 6 + 1)

/* Room for a name quoted into a message (log lines end at 1 KiB anyway). */
#define WP_QUOTE_MSG 1024

/*
 * Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF; at most n bytes are
 * looked at), or 0 when s[0] does not start one.  1 for ASCII.
 */
size_t wp_utf8_len(const char *s, size_t n);

/* Write the quoted form of len bytes at s to out. */
void wp_quote_write(FILE *out, const char *s, size_t len, enum wp_quote_mode mode);

/* Write the quoted form of the string s to out. */
void wp_quote_puts(FILE *out, const char *s, enum wp_quote_mode mode);

/* Append the quoted form of len bytes at s to b; 0 or -ENOMEM. */
int wp_quote_buf(struct wp_buf *b, const char *s, size_t len, enum wp_quote_mode mode);

/*
 * The quoted form of the string s in dst (size > 0 bytes, always
 * NUL-terminated), for messages and fixed-width columns.  When it does
 * not fit it is cut before the first escape or character that does not
 * fit whole, never inside one.  Returns dst.
 */
const char *wp_quote(char *dst, size_t size, const char *s, enum wp_quote_mode mode);

/*
 * The TEXT-quoted form of s (NULL reads "(null)") for a message, cut as
 * wp_quote() does at WP_QUOTE_MSG bytes: wp_error("cannot open '%s'",
 * wp_quoted(path)).  It lives in one of four buffers of the calling thread,
 * used in turn, so one message may quote up to four names; it stays valid
 * until the fourth next call in the same thread.
 */
const char *wp_quoted(const char *s);

/*
 * One argument of a command line as a shell word that reads back as the
 * same bytes in bash, zsh or ksh: as it is when it holds only letters,
 * digits and _@%+=:,./- (and is not empty); else in single quotes (' as
 * '\''); else, when it holds a control or formatting character or a byte
 * that is not UTF-8, in $'...' with TEXT's escapes, which print nothing a
 * terminal acts on.
 */
void wp_quote_shell_word(FILE *out, const char *s);

#endif
