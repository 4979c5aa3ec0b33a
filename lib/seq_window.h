/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which sequence numbers of one producer (one boot of one node) have been
 * seen, within a sliding window: sequence order differs from ring order
 * across CPUs by a little, so "highest seen" cannot tell a duplicate from a
 * late record, and a gap is only final once the window has moved past it.
 * Used to prove "nothing lost, nothing doubled" (agent sinks, collector).
 */
#ifndef VIGIL_SEQ_WINDOW_H
#define VIGIL_SEQ_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define VIGIL_SEQ_WINDOW 65536	/* sequence numbers; a power of two */

struct vigil_seq_window {
	uint64_t base;		/* the lowest seq the window still holds */
	uint64_t low;		/* the lowest seq ever seen: gaps start above it */
	uint64_t high;		/* the highest seq seen */
	uint64_t seen, dups, gaps;
	bool started;
	uint64_t bits[VIGIL_SEQ_WINDOW / 64];
};

/* true when seq is new; false for a duplicate (or one older than the
 * window, which cannot be told from a duplicate and is dropped as one). */
bool vigil_seq_see(struct vigil_seq_window *w, uint64_t seq);
/* Gaps final now, plus those still open below the highest seen. */
uint64_t vigil_seq_gaps(const struct vigil_seq_window *w);

#endif
