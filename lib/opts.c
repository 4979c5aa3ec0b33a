// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Command-line options from one table (opts.h). */
#include <errno.h>
#include <string.h>
#include "opts.h"

#define HELP_COLUMN 35

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
						     NULL, t[i].code };
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
