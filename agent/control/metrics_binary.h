/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --metrics-label binary: the binary label on vigil_events_total and
 * vigil_policy_events_total, as Tetragon's label filter adds it. Counted as
 * the local output takes each record, from the process cache its formatter
 * has just kept: one lookup by pid and one probe of a small table per
 * record, no allocation past a binary's first sight.
 *
 * Bounded, so that a host running a million binaries cannot make a million
 * series: the first --metrics-binaries binaries seen get a label value each,
 * every later one counts under "other", and a process the cache does not
 * know under "unknown". A value once given keeps counting exactly for the
 * agent's life (series never move from one binary to another, nor reset),
 * which a "top N" that re-ranks could not promise. docs/operations.md.
 */
#ifndef VIGIL_AGENT_METRICS_BINARY_H
#define VIGIL_AGENT_METRICS_BINARY_H

#include <stdint.h>

struct vigil_buf;
struct vigil_formatter;
struct vigil_metrics_binary;
struct vigil_policy_state;

#define VIGIL_METRICS_BINARIES_DEFAULT 64
#define VIGIL_METRICS_BINARIES_MAX 1024

/* max binaries with a value of their own; policy: the rules in force, whose
 * names the policy series carry. -ENOMEM. */
int vigil_metrics_binary_new(struct vigil_metrics_binary **m, unsigned max,
			     const struct vigil_policy_state *policy);
void vigil_metrics_binary_free(struct vigil_metrics_binary *m);
/* The local output's hook (sink_local.h), after it formatted rec. */
void vigil_metrics_binary_record(void *m, struct vigil_formatter *f, const void *rec);
/* vigil_events_total's samples: per type and binary, and per type without
 * the label for the records that name no process (counts: the formatter's,
 * by type, which every sample of a type adds up to). */
void vigil_metrics_binary_events(struct vigil_buf *b, const struct vigil_metrics_binary *m,
				 const uint64_t *counts);
/* vigil_policy_events_total's samples, per rule in force and binary, from
 * the enforce records the rules wrote; the events a rule's limits held back
 * count under "unknown" (their record says how many, not whose). */
void vigil_metrics_binary_policy(struct vigil_buf *b, const struct vigil_metrics_binary *m);

#endif
