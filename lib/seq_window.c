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

/* Clears the n numbers from `from` on (n <= VIGIL_SEQ_WINDOW) a word at a
 * time, and counts those never seen (none below the lowest number seen).
 * Works on counts, not end values, so numbers near 2^64 do not wrap. */
static uint64_t drop_range(struct vigil_seq_window *w, uint64_t from, uint64_t n)
{
	uint64_t gaps = 0;

	while (n) {
		unsigned bit = from % 64;
		uint64_t k = n < 64 - bit ? n : 64 - bit;
		uint64_t mask = (k == 64 ? ~0ull : (1ull << k) - 1) << bit;
		uint64_t *word = &w->bits[(from / 64) % WORDS], unseen = ~*word & mask;

		if (from < w->lowest) {
			uint64_t below = w->lowest - from;

			unseen = below >= k ? 0 : unseen & ~(((1ull << below) - 1) << bit);
		}
		if (unseen) {
			if (!gaps)
				w->gap_first = from - bit + __builtin_ctzll(unseen);
			gaps += __builtin_popcountll(unseen);
		}
		*word &= ~mask;
		from += k;
		n -= k;
	}
	return gaps;
}

/* Moves the window's base to nb, counting the numbers it drops unseen. */
static uint64_t slide(struct vigil_seq_window *w, uint64_t nb)
{
	uint64_t d = nb - w->base, gaps;

	if (d <= VIGIL_SEQ_WINDOW) {
		gaps = drop_range(w, w->base, d);
	} else {
		/* Jumped past the whole window: everything in it is decided,
		 * and the numbers between were never seen. */
		gaps = drop_range(w, w->base, VIGIL_SEQ_WINDOW);
		if (!gaps)
			w->gap_first = w->base + VIGIL_SEQ_WINDOW;
		gaps += d - VIGIL_SEQ_WINDOW;
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
	if (seq - w->base >= VIGIL_SEQ_WINDOW) {
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
