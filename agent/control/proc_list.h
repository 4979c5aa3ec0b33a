/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vigil policy list` for exec and file rules: each with its hits, the
 * signals and kills sent, what monitor mode would have sent, and refusals.
 */
#ifndef VIGIL_PROC_LIST_H
#define VIGIL_PROC_LIST_H

#include <stdbool.h>
#include "buf.h"

struct vigil_policy_state;

/* A table after the network rules' (json false), or one JSON object a line. */
void vigil_list_proc_rules(struct vigil_policy_state *s, struct vigil_buf *out, bool json);

#endif
