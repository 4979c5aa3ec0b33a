// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Command-line options from one table (opts.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "opts.h"

#define HELP_COLUMN 35
#define AUTO_CODE 256	/* past every short option's character */

static int vigil_opt_code(const struct vigil_opt *o, size_t i)
{
	if (o->code)
		return o->code;
	return o->short_name ? o->short_name : AUTO_CODE + (int)i;
}

int vigil_getopt_make(struct vigil_getopt *g, const struct vigil_opt *t, size_t n,
		      const char *prefix)
{
	size_t nl = 0, ns = strlen(prefix);

	memset(g, 0, sizeof(*g));
	if (n > VIGIL_OPTS_MAX || ns > 2)
		return -E2BIG;
	memcpy(g->shortopts, prefix, ns);
	for (size_t i = 0; i < n; i++) {
		if (!t[i].name)
			continue;
		g->longopts[nl++] = (struct option){ t[i].name, t[i].arg ? required_argument : no_argument,
						     NULL, vigil_opt_code(&t[i], i) };
		if (t[i].short_name) {
			g->shortopts[ns++] = (char)t[i].short_name;
			if (t[i].arg)
				g->shortopts[ns++] = ':';
		}
	}
	return 0;
}

void vigil_opts_usage(FILE *f, const char *head, const struct vigil_opt *t, size_t n)
{
	fputs(head, f);
	for (size_t i = 0; i < n; i++) {
		const char *h = t[i].help ? t[i].help : "", *nl;
		int w;

		if (!t[i].name) {
			fprintf(f, "\n%s%s", h, *h ? "\n" : "");
			continue;
		}
		if (t[i].short_name)
			w = fprintf(f, "  -%c, --%s", t[i].short_name, t[i].name);
		else
			w = fprintf(f, "      --%s", t[i].name);
		if (t[i].arg)
			w += fprintf(f, " %s", t[i].arg);
		/* A long left side keeps two spaces before its help. */
		fprintf(f, "%*s", w + 2 > HELP_COLUMN ? 2 : HELP_COLUMN - w, "");
		while ((nl = strchr(h, '\n'))) {
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
			h = nl + 1;
		}
		fprintf(f, "%s\n", h);
	}
}

#define FIELD(base, o, type) ((type *)((char *)(base) + (o)->off))

int vigil_opt_flag(const struct vigil_opt *o, void *base, const char *arg)
{
	(void)arg;
	*FIELD(base, o, bool) = true;
	return 0;
}

int vigil_opt_str(const struct vigil_opt *o, void *base, const char *arg)
{
	*FIELD(base, o, const char *) = arg;
	return 0;
}

static int out_of_range(const struct vigil_opt *o, const char *arg)
{
	return vlog_usage("invalid value '%s' for --%s: wants %g to %g", arg, o->name,
			o->min, o->max);
}

int vigil_opt_u64(const struct vigil_opt *o, void *base, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || *arg == '-' || arg[0] == ' ')
		return vlog_usage("invalid value '%s' for --%s", arg, o->name);
	if ((double)v < o->min || (double)v > o->max)
		return out_of_range(o, arg);
	*FIELD(base, o, uint64_t) = (uint64_t)v << o->shift;
	return 0;
}

int vigil_opt_double(const struct vigil_opt *o, void *base, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v))
		return vlog_usage("invalid value '%s' for --%s", arg, o->name);
	if (v < o->min || v > o->max)
		return out_of_range(o, arg);
	*FIELD(base, o, double) = v;
	return 0;
}

int vigil_opt_help(const struct vigil_opt *o, void *base, const char *arg)
{
	(void)o, (void)base, (void)arg;
	return VIGIL_OPTS_DONE;	/* the usage is vigil_opts_parse's: it has the table */
}

int vigil_opt_list(const struct vigil_opt *o, void *base, const char *arg)
{
	unsigned *n = (unsigned *)((char *)base + o->count_off);

	if (*n >= o->max)
		return vlog_usage("at most %g --%s", o->max, o->name);
	FIELD(base, o, const char *)[(*n)++] = arg;
	return 0;
}

int vigil_opt_verbose(const struct vigil_opt *o, void *base, const char *arg)
{
	(void)o, (void)base, (void)arg;
	return vlog_set_level("debug");
}

int vigil_opt_log_level(const struct vigil_opt *o, void *base, const char *arg)
{
	(void)base;
	if (vlog_set_level(arg))
		return vlog_usage("invalid value '%s' for --%s: error, warn, info or debug", arg,
				  o->name);
	return 0;
}

int vigil_opt_log_format(const struct vigil_opt *o, void *base, const char *arg)
{
	(void)base;
	if (vlog_set_format(arg))
		return vlog_usage("invalid value '%s' for --%s: text or json", arg, o->name);
	return 0;
}

int vigil_opts_parse(const struct vigil_opt *t, size_t n, int argc, char **argv, void *base,
		     const char *prog)
{
	struct vigil_getopt g;
	bool seen[VIGIL_OPTS_MAX] = {};
	const char *config;
	size_t at;
	int c, err;

	if (vigil_getopt_make(&g, t, n, ":"))
		return vlog_refuse(-E2BIG, "too many options for one table");
	/* getopt's own messages name argv[0] as invoked: ours name the
	 * program, as every other message does. */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		size_t i = 0;

		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			if (c == ':')
				return vlog_usage("option '%s' needs an argument (try '%s --help')",
						  bad, prog);
			if (optopt && strncmp(bad, "--", 2))
				return vlog_usage("unrecognized option '-%c' (try '%s --help')", optopt,
						  prog);
			return vlog_usage("unrecognized option '%s' (try '%s --help')", bad, prog);
		}
		while (i < n && (!t[i].name || vigil_opt_code(&t[i], i) != c))
			i++;
		if (i == n)
			return vlog_usage("option code %d not in the table (try '%s --help')", c, prog);
		if (!t[i].set)
			return vlog_refuse(-EINVAL, "--%s: no setter in the option table", t[i].name);
		if (t[i].set == vigil_opt_help) {
			vigil_opts_usage(stdout, t[i].usage, t, n);
			return VIGIL_OPTS_DONE;
		}
		if ((err = t[i].set(&t[i], base, optarg)))
			return err == VIGIL_OPTS_DONE ? err : -VIGIL_EUSAGE;
		seen[i] = true;
	}
	if (optind < argc)
		return vlog_usage("unexpected argument '%s' (try '%s --help')", argv[optind],
				prog);
	for (at = 0; at < n && !(t[at].name && !strcmp(t[at].name, "config")); at++)
		;
	if (at == n || !(config = *(const char **)((char *)base + t[at].off)))
		return 0;
	return vigil_opts_file(t, n, config, base, seen);
}
