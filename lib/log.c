// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

int vlog_verbose;
const char *vlog_prog = "vigil";

static void vsay(const char *fmt, va_list ap, int err)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (err)
		fprintf(stderr, "%s: %s: %s\n", vlog_prog, line, strerror(err < 0 ? -err : err));
	else
		fprintf(stderr, "%s: %s\n", vlog_prog, line);
}

int vlog_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap, err);
	va_end(ap);
	return err < 0 ? err : -err;
}

void vlog_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(fmt, ap, 0);
	va_end(ap);
}

void vlog_debug(const char *fmt, ...)
{
	va_list ap;

	if (!vlog_verbose)
		return;
	va_start(ap, fmt);
	vsay(fmt, ap, 0);
	va_end(ap);
}
