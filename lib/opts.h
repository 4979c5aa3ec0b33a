/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command-line options from one table: each option is written once, with
 * its help, and getopt_long's table, the short-option string and --help
 * are made from it (the man-page checks in tests/cli.t read that --help).
 * A program still handles each option's value in its own switch.
 */
#ifndef VIGIL_OPTS_H
#define VIGIL_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct vigil_opt {
	const char *name;	/* long name; NULL: a section title (help) or a blank line */
	int short_name;		/* 0: none */
	int code;		/* what getopt_long returns for it: short_name, or a code */
	const char *arg;	/* its argument as --help names it; NULL: it takes none */
	const char *help;	/* one or more lines, separated by '\n' */
};

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

#define VIGIL_OPTS_N(t) (sizeof(t) / sizeof(*(t)))

#endif
