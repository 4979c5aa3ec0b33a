// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Prometheus's text format (prom.h). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include "prom.h"

void vigil_prom_family(struct vigil_buf *b, const char *name, const char *type, const char *help)
{
	vbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void escaped(struct vigil_buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			vbuf_printf(b, "\\%c", *v);
		else if (*v == '\n')
			vbuf_puts(b, "\\n");
		else
			vbuf_putc(b, *v);
	}
}

void vigil_prom_sample(struct vigil_buf *b, const char *name, double value, ...)
{
	const char *key;
	bool first = true;
	va_list ap;

	vbuf_puts(b, name);
	va_start(ap, value);
	while ((key = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);

		vbuf_printf(b, "%s%s=\"", first ? "{" : ",", key);
		escaped(b, v ? v : "");
		vbuf_putc(b, '"');
		first = false;
	}
	va_end(ap);
	if (!first)
		vbuf_putc(b, '}');
	/* Counters are integers: whole numbers print as such, never 1e+06. */
	if (isfinite(value) && value == (double)(int64_t)value)
		vbuf_printf(b, " %lld\n", (long long)value);
	else
		vbuf_printf(b, " %.9g\n", value);
}

void vigil_prom_one(struct vigil_buf *b, const char *name, const char *type, const char *help,
		    double value)
{
	vigil_prom_family(b, name, type, help);
	vigil_prom_sample(b, name, value, NULL);
}
