/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The process object of every event that names a process, in either export
 * form (format_tetragon.h): one writer, and for each form the list of its
 * fields in its order, its flag words and how much of a container id it
 * keeps. docs/events.md says what each field holds in each form.
 */
#ifndef VIGIL_FORMAT_PROCESS_H
#define VIGIL_FORMAT_PROCESS_H

#include "format_tetragon.h"

struct vigil_formatter;
struct vigil_proc;
struct vigil_exec;
struct vigil_proc_entry;
struct jw;

/* Writes the object under key for the process p names: e is its cache
 * entry (NULL: unknown to this output, flagged so, and only what p says),
 * ex its exec event when the line is that exec's (binary_properties). */
void vigil_json_process_form(struct vigil_formatter *f, struct jw *w,
			     enum vigil_export_format form, const char *key,
			     const struct vigil_proc *p, const struct vigil_proc_entry *e,
			     const struct vigil_exec *ex);
/* "parent": p's parent as it was at its exec, when the cache has it. */
void vigil_json_parent(struct vigil_formatter *f, struct jw *w, enum vigil_export_format form,
		       const struct vigil_proc *p);
/* vigil's own "process" (key given) of the process p names, from the
 * cache when it is there. */
void vigil_json_process(struct vigil_formatter *f, struct jw *w, const char *key,
			const struct vigil_proc *p);

#endif
