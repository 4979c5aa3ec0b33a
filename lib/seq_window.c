// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "seq_window.h"

#define W VIGIL_SEQ_WINDOW

static bool test_bit(const struct vigil_seq_window *w, uint64_t seq)
{
	return w->bits[(seq % W) / 64] & (1ULL << (seq % 64));
}

static void flip_bit(struct vigil_seq_window *w, uint64_t seq)
{
	w->bits[(seq % W) / 64] ^= 1ULL << (seq % 64);
}

bool vigil_seq_see(struct vigil_seq_window *w, uint64_t seq)
{
	if (!w->started) {
		w->started = true;
		/* Records from before this one may still arrive (other CPUs):
		 * start the window half below it. */
		w->base = seq > W / 2 ? seq - W / 2 : 0;
		w->low = w->high = seq;
	}
	if (seq < w->base) {
		w->dups++;
		return false;
	}
	/* Slide: what leaves the window unseen, and lies between the lowest
	 * and highest seen, is a gap for good. */
	while (seq >= w->base + W) {
		if (test_bit(w, w->base))
			flip_bit(w, w->base);
		else if (w->base > w->low && w->base < w->high)
			w->gaps++;
		w->base++;
	}
	if (test_bit(w, seq)) {
		w->dups++;
		return false;
	}
	flip_bit(w, seq);
	w->seen++;
	if (seq < w->low)
		w->low = seq;
	if (seq > w->high)
		w->high = seq;
	return true;
}

uint64_t vigil_seq_gaps(const struct vigil_seq_window *w)
{
	uint64_t open = 0, from = w->base > w->low ? w->base : w->low;

	if (!w->started)
		return 0;
	for (uint64_t s = from; s < w->high; s++)
		if (!test_bit(w, s))
			open++;
	return w->gaps + open;
}
