/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Export filters (a policy's `filters:`) into the pinned maps the event
 * programs ask before the ring (vigil/filter.h), and their counts by
 * filter. A policy's filters are resolved (cgroups, namespaces) in full
 * before anything is written; written into the generation not in force,
 * the running processes' binary bits filled for it, then flipped: an
 * event meets the old set or the new, never a mix.
 */
#ifndef VIGIL_FILTER_MAPS_H
#define VIGIL_FILTER_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include "policy_parse.h"

struct vigil_filter_maps;
struct vigil_filter_compiled;

/* Loads the scan iterator and opens the maps (pinned in pin_dir, shared
 * with the process and network objects). */
int vigil_filter_open(struct vigil_filter_maps **out, const char *pin_dir, uint64_t ring_size);
void vigil_filter_close(struct vigil_filter_maps *m);

/* p's filters, resolved against the system; err "file:line: filter 'x': why". */
int vigil_filter_compile(const struct vigil_policy *p, struct vigil_filter_compiled **out,
			 char *err, size_t errlen);
void vigil_filter_compiled_free(struct vigil_filter_compiled *c);

/* Puts c in force (NULL: no filters). 0, or a negative errno (logged) with
 * the set in force unchanged. */
int vigil_filter_write(struct vigil_filter_maps *m, const struct vigil_filter_compiled *c);

/* The events each filter in force dropped since the agent started (its
 * counts carried over reloads by name); "not_allowed": those no allow filter
 * of their kind matched. Calls each(name, count, arg) for every filter in
 * force, and not_allowed when an allow filter is. */
void vigil_filter_counts(struct vigil_filter_maps *m,
			 void (*each)(const char *name, uint64_t n, void *arg), void *arg);
/* The sum over every filter, in force or gone: the stop line's. */
uint64_t vigil_filter_total(struct vigil_filter_maps *m);
/* One line for `vigil status` and the stop line: "filtered: NAME=N ..."
 * (the CLI reads it back for --json), or "filtered: (no filters)". */
struct vigil_buf;
void vigil_filter_describe(struct vigil_filter_maps *m, struct vigil_buf *out);

#endif
