/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pieces of a line in Tetragon's form that its formatters share
 * (format_tetragon.c: process, network and loss lines; format_tetragon_tp.c:
 * enforcement decisions and reports as process_tracepoint lines).
 */
#ifndef VIGIL_FORMAT_TETRAGON_JSON_H
#define VIGIL_FORMAT_TETRAGON_JSON_H

#include <stdint.h>
#include "buf.h"

struct jw;
struct vigil_formatter;
struct vigil_proc;

/* protojson writes 64-bit integers as strings. */
void vigil_tg_u64_str(struct jw *w, const char *key, uint64_t v);
/* Opens the line and its kind's object ... */
void vigil_tg_begin(struct jw *w, struct vigil_buf *json, const char *kind);
/* ... and closes both: node and time, no seq. */
void vigil_tg_end(struct vigil_formatter *f, struct jw *w, uint64_t ktime);
/* A labelled argument: {"size_arg": "v", "label": label}, or a string_arg. */
void vigil_tg_size_arg(struct jw *w, const char *label, uint64_t v);
void vigil_tg_string_arg(struct jw *w, const char *label, const char *v);
/* "process" and "parent" of p; with VIGIL_CONN_NO_OWNER in flags, a process
 * object that says it is unknown (pid 0, flags "unknown"). */
void vigil_tg_owner(struct vigil_formatter *f, struct jw *w, const struct vigil_proc *p,
		    uint32_t flags);

#endif
