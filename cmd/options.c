/* SPDX-License-Identifier: GPL-2.0-or-later */
/* options.c: getopt_long arrays and --help text from one option table. */
#include <errno.h>
#include <string.h>

#include "options.h"

/* Where the words of an option start: under its name. */
#define WORD_INDENT 8

/* Whether key is a short option letter (the others start at 256). */
static bool has_letter(const struct cmd_option *o)
{
	return o->key > 0 && o->key < 256;
}

int options_parser_init(struct option_parser *p, const struct cmd_option *opts, size_t n,
			const char *prefix)
{
	static const int has_arg[] = {
		[OPTION_NO_ARG] = no_argument,
		[OPTION_ARG] = required_argument,
		[OPTION_OPTIONAL_ARG] = optional_argument,
	};
	size_t nlong = 0, at = strlen(prefix);

	memset(p, 0, sizeof(*p));
	if (at >= sizeof(p->shortopts))
		return -E2BIG;
	memcpy(p->shortopts, prefix, at);
	for (size_t i = 0; i < n; i++) {
		const struct cmd_option *o = &opts[i];

		if (!o->name)
			continue;
		if (nlong == OPTIONS_MAX || at + 3 >= sizeof(p->shortopts))
			return -E2BIG;
		p->longopts[nlong++] = (struct option){ o->name, has_arg[o->arg], NULL, o->key };
		if (!has_letter(o))
			continue;
		p->shortopts[at++] = (char)o->key;
		if (o->arg != OPTION_NO_ARG)
			p->shortopts[at++] = ':';
		if (o->arg == OPTION_OPTIONAL_ARG)
			p->shortopts[at++] = ':';
	}
	return 0;
}

/* The width of "  -x, --name <arg>" (or "      --name <arg>"). */
static size_t left_width(const struct cmd_option *o)
{
	return 6 + 2 + strlen(o->name) + (o->arg_help ? strlen(o->arg_help) : 0);
}

/* Print text from column col (the cursor is at column at), a line per '\n'. */
static void print_column(FILE *out, size_t at, size_t col, const char *text)
{
	for (;;) {
		size_t len = strcspn(text, "\n");

		fprintf(out, "%*s%.*s\n", (int)(col > at ? col - at : 1), "", (int)len, text);
		if (!text[len])
			return;
		text += len + 1;
		at = 0;
	}
}

/* The words under their option, each with its help in the help column. */
static void print_words(FILE *out, size_t col, option_word_fn w)
{
	const char *help, *name;

	for (size_t i = 0; (name = w(i, &help)); i++) {
		fprintf(out, "%*s%s", WORD_INDENT, "", name);
		fprintf(out, "%*s%s%s\n", (int)(col > WORD_INDENT + strlen(name) + 1 ?
						col - WORD_INDENT - strlen(name) : 2), "",
			help, i ? "" : " (default)");
	}
}

void options_usage(FILE *out, const char *head, const struct cmd_option *opts, size_t n)
{
	size_t col = 0;

	for (size_t i = 0; i < n; i++)
		if (opts[i].name && left_width(&opts[i]) + 2 > col)
			col = left_width(&opts[i]) + 2;
	fputs(head, out);
	for (size_t i = 0; i < n; i++) {
		const struct cmd_option *o = &opts[i];

		if (!o->name) {
			fprintf(out, "%s\n", o->help);
			continue;
		}
		if (has_letter(o))
			fprintf(out, "  -%c, --%s%s", o->key, o->name, o->arg_help ? o->arg_help : "");
		else
			fprintf(out, "      --%s%s", o->name, o->arg_help ? o->arg_help : "");
		print_column(out, left_width(o), col, o->help);
		if (o->words)
			print_words(out, col, o->words);
	}
}

const char *options_word_list(option_word_fn w, char *buf, size_t size)
{
	const char *help, *name;
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; at < size && (name = w(i, &help)); i++) {
		int len = snprintf(buf + at, size - at, "%s%s", i ? ", " : "", name);

		if (len < 0)
			break;
		at += (size_t)len;
	}
	return buf;
}

void options_print_words(FILE *out, option_word_fn w)
{
	const char *help, *name;

	for (size_t i = 0; (name = w(i, &help)); i++)
		fprintf(out, "%s\t%s\n", name, help);
}
