// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "seq_window.h"

#define WORDS (VIGIL_SEQ_WINDOW / 64)

static bool test_and_set(struct vigil_seq_window *w, uint64_t seq)
{
	uint64_t *word = &w->bits[(seq / 64) % WORDS], bit = 1ull << (seq % 64);
	bool was = *word & bit;

	*word |= bit;
	return was;
}

/* Moves the window's base to nb, counting the numbers it drops unseen. */
static uint64_t slide(struct vigil_seq_window *w, uint64_t nb)
{
	uint64_t gaps = 0, s = w->base;

	if (nb - s > VIGIL_SEQ_WINDOW) {
		/* Jumped past the whole window: everything in it is decided,
		 * and the numbers between were never seen. */
		uint64_t skipped = nb - s - VIGIL_SEQ_WINDOW;

		for (; s < w->base + VIGIL_SEQ_WINDOW; s++)
			if (s >= w->lowest && !(w->bits[(s / 64) % WORDS] & (1ull << (s % 64)))) {
				if (!gaps++)
					w->gap_first = s;
			}
		if (skipped && !gaps)
			w->gap_first = w->base + VIGIL_SEQ_WINDOW;
		gaps += skipped;
		memset(w->bits, 0, sizeof(w->bits));
		w->base = nb;
		return gaps;
	}
	for (; s < nb; s++) {
		uint64_t *word = &w->bits[(s / 64) % WORDS], bit = 1ull << (s % 64);

		if (s >= w->lowest && !(*word & bit) && !gaps++)
			w->gap_first = s;
		*word &= ~bit;
	}
	w->base = nb;
	return gaps;
}

bool vigil_seq_window_add(struct vigil_seq_window *w, uint64_t seq, uint64_t *new_gaps)
{
	*new_gaps = 0;
	if (!w->started) {
		/* Half the window below the first number, for records of
		 * lower numbers that other CPUs committed later. */
		w->started = true;
		w->base = seq > VIGIL_SEQ_WINDOW / 2 ? seq - VIGIL_SEQ_WINDOW / 2 : 0;
		w->lowest = seq;
	}
	if (seq < w->base) {
		w->dups++;
		return false;
	}
	if (seq >= w->base + VIGIL_SEQ_WINDOW) {
		*new_gaps = slide(w, seq - VIGIL_SEQ_WINDOW + 1);
		w->gaps += *new_gaps;
	}
	if (seq < w->lowest)
		w->lowest = seq;
	if (test_and_set(w, seq)) {
		w->dups++;
		return false;
	}
	w->seen++;
	if (seq > w->highest)
		w->highest = seq;
	return true;
}

uint64_t vigil_seq_window_open_gaps(const struct vigil_seq_window *w)
{
	uint64_t open = 0, s = w->base > w->lowest ? w->base : w->lowest;

	for (; w->started && s < w->highest; s++)
		if (!(w->bits[(s / 64) % WORDS] & (1ull << (s % 64))))
			open++;
	return open;
}
