/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The event of exec and file rules (struct vigil_policy_hit) as Tetragon's
 * process_tracepoint, in both export forms (docs/events.md): the one shape
 * for enforcement decisions in Tetragon's form.
 */
#ifndef VIGIL_FORMAT_POLICY_H
#define VIGIL_FORMAT_POLICY_H

#include <stdint.h>
#include "buf.h"

struct vigil_formatter;

int vigil_check_policy_hit(const void *rec, uint32_t len, const char **why);
void vigil_format_policy_hit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json,
			     struct vigil_buf *compact);
void vigil_tetragon_policy_hit(struct vigil_formatter *f, const void *rec, struct vigil_buf *json);

#endif
