/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * De-duplication and gap counting by sequence number, per agent boot: the
 * collector's per-agent window and the agent's own proof that nothing was
 * lost or doubled (agent/sinks/sink_local.c).
 * Sequence numbers are taken in BPF with one atomic counter, so records
 * arrive near, not in, sequence order (CPUs commit to the ring out of
 * order): a bitmap window over the last VIGIL_SEQ_WINDOW numbers says
 * whether a number was seen; numbers that leave the window unseen are gaps.
 * Numbers below the window are too old to tell and are counted as
 * duplicates (re-sends are the common cause).
 */
#ifndef VIGIL_SEQ_WINDOW_H
#define VIGIL_SEQ_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define VIGIL_SEQ_WINDOW 65536u

struct vigil_seq_window {
	bool started;
	uint64_t base;		/* lowest number the window covers */
	uint64_t lowest;	/* lowest number seen: below it nothing is a gap */
	uint64_t highest;	/* highest number seen */
	uint64_t seen;		/* distinct numbers seen */
	uint64_t bits[VIGIL_SEQ_WINDOW / 64];
	uint64_t gaps, dups;
	uint64_t gap_first;	/* first number of the last gap found */
};

/* Returns true when seq is new (and records it); false for a duplicate.
 * *new_gaps is set to how many numbers left the window unseen. */
bool vigil_seq_window_add(struct vigil_seq_window *w, uint64_t seq, uint64_t *new_gaps);
/* Numbers still in the window, between the lowest and the highest seen,
 * not seen yet: gaps unless they arrive late. At the end of a stream, the
 * gaps are w->gaps plus these. */
uint64_t vigil_seq_window_open_gaps(const struct vigil_seq_window *w);

#endif
