/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command-line options from one table: each option is written once, with
 * its help and how its value is stored, and getopt_long's table, the
 * short-option string, --help (the man-page checks in tests/cli.t read it)
 * and the parse itself are made from it. A value is stored by the option's
 * setter at an offset in the program's options struct: the generic setters
 * below check the value's form and bounds and name the option in their
 * error, so a program writes only the checks that span several options.
 */
#ifndef VIGIL_OPTS_H
#define VIGIL_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct vigil_opt;

/* Stores arg (NULL for an option without one) for opt in the options
 * struct at base. 0, VIGIL_OPTS_DONE (the program has answered: --help,
 * --version), or a negative errno after logging why. */
typedef int vigil_opt_set_fn(const struct vigil_opt *opt, void *base, const char *arg);
#define VIGIL_OPTS_DONE 1

struct vigil_opt {
	const char *name;	/* long name; NULL: a section title (help) or a blank line */
	int short_name;		/* 0: none */
	int code;		/* what getopt_long returns for it: short_name, a code, or
				 * 0: made by vigil_getopt_make (short_name, else 256 + index) */
	const char *arg;	/* its argument as --help names it; NULL: it takes none */
	const char *help;	/* one or more lines, separated by '\n' */
	/* For vigil_opts_parse: */
	vigil_opt_set_fn *set;
	size_t off;		/* the field set writes, from the options struct's start */
	size_t count_off;	/* vigil_opt_list: the unsigned count of the list at off */
	double min, max;	/* numbers: the bounds, inclusive; list: max is its capacity */
	unsigned shift;		/* vigil_opt_u64: the value is stored shifted left (MiB) */
	const char *usage;	/* vigil_opt_help: --help's first lines */
};

/* Generic setters. Numbers are refused past [min, max] with the option's
 * name and the bounds; a list refuses its (max + 1)th entry. */
vigil_opt_set_fn vigil_opt_flag;	/* bool = true */
vigil_opt_set_fn vigil_opt_str;		/* const char * = arg */
vigil_opt_set_fn vigil_opt_u64;		/* uint64_t, decimal or 0x */
vigil_opt_set_fn vigil_opt_double;	/* double, finite */
vigil_opt_set_fn vigil_opt_list;	/* const char *[max], count at count_off */
/* --help: vigil_opts_parse writes the usage (opt->usage, then the table it
 * parses) and answers VIGIL_OPTS_DONE. */
vigil_opt_set_fn vigil_opt_help;
#define VIGIL_HELP_OPT(head) \
	{ "help", 'h', 0, NULL, "this text", .set = vigil_opt_help, .usage = (head) }

/* The log's options, the same in every daemon (lib/log.h): -v, --log-level,
 * --log-format; they set the log's state, not a field. */
vigil_opt_set_fn vigil_opt_verbose, vigil_opt_log_level, vigil_opt_log_format;
#define VIGIL_LOG_OPTS								\
	{ "verbose", 'v', 0, NULL, "the same as --log-level debug", .set = vigil_opt_verbose }, \
	{ "log-level", 0, 0, "LEVEL",						\
	  "error, warn, info (default) or debug (libbpf's\n"			\
	  "and the verifier's output)", .set = vigil_opt_log_level },		\
	{ "log-format", 0, 0, "FORMAT",						\
	  "text (default) or json: one object a line", .set = vigil_opt_log_format }

#define VIGIL_OPTS_MAX 96	/* options in one table */

/* What getopt_long needs, made from a table. */
struct vigil_getopt {
	struct option longopts[VIGIL_OPTS_MAX + 1];
	char shortopts[2 * VIGIL_OPTS_MAX + 2];
};

/* Fills g from t[0..n); prefix goes first in shortopts ("+" to stop at the
 * first non-option). -E2BIG when the table is past VIGIL_OPTS_MAX. */
int vigil_getopt_make(struct vigil_getopt *g, const struct vigil_opt *t, size_t n,
		      const char *prefix);
/* Writes head, then the table as --help shows it: each option's names and
 * argument, its help from column 35, sections as their titles. */
void vigil_opts_usage(FILE *f, const char *head, const struct vigil_opt *t, size_t n);

/* Parses argv by the table into the options struct at base: 0, or
 * VIGIL_OPTS_DONE when an option answered (exit 0), or a negative errno
 * after one line naming the option ("Try 'prog --help'." for an unknown one).
 * When the table has a string option "config" and argv gives it, the file it
 * names is read after argv (vigil_opts_file): the command line wins. */
int vigil_opts_parse(const struct vigil_opt *t, size_t n, int argc, char **argv, void *base,
		     const char *prog);

/* Options from a config file (lib/opts_file.c): `name = value` lines, each
 * through its option's setter; options with seen[i] set (given on the
 * command line) are left alone. 0, or an error naming FILE:LINE. */
int vigil_opts_file(const struct vigil_opt *t, size_t n, const char *path, void *base,
		    const bool *seen);

#define VIGIL_OPTS_N(t) (sizeof(t) / sizeof(*(t)))

#endif
