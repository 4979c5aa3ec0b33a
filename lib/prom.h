/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Prometheus's text exposition format (version 0.0.4), written into a
 * buffer: a family's HELP and TYPE once, then its samples. Label values
 * are escaped (backslash, quote, newline); names are the caller's
 * constants. Counters end in _total, units are base units (bytes,
 * seconds), states are one-hot gauges with a state label
 * (docs/operations.md).
 */
#ifndef VIGIL_PROM_H
#define VIGIL_PROM_H

#include <stdint.h>
#include "buf.h"

/* "# HELP name help" and "# TYPE name type" (counter, gauge). */
void vigil_prom_family(struct vigil_buf *b, const char *name, const char *type, const char *help);
/* One sample: name{labels} value. labels: NULL, or pairs of key and value,
 * ended by NULL (values escaped here). */
void vigil_prom_sample(struct vigil_buf *b, const char *name, double value, ...)
	__attribute__((sentinel));
/* A whole family with one sample and no label. */
void vigil_prom_one(struct vigil_buf *b, const char *name, const char *type, const char *help,
		    double value);

#endif
