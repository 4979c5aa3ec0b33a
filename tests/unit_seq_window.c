// SPDX-License-Identifier: GPL-2.0
/*
 * Unit checks (TAP) for the sequence window (lib/seq_window.c), one table:
 * sequence numbers as a collector gets them from an agent (hostile: any
 * value, any order), and what the window then says: which were new, the
 * gaps and duplicates counted, the gaps still open, the first number of
 * the last gap.
 */
#include <stdint.h>
#include <stdio.h>
#include "seq_window.h"

#define W VIGIL_SEQ_WINDOW
#define MAXN 6

static int n, failed;

int main(void)
{
	static const struct {
		const char *what;
		unsigned nseq;
		uint64_t seq[MAXN];
		unsigned new_mask;	/* bit i: seq[i] was new */
		uint64_t gaps, dups, open, gap_first;
		const char *todo;
	} cases[] = {
		{ "the first number is new, wherever it starts", 1, { 1000000 }, 0x1, 0, 0, 0, 0, NULL },
		{ "a duplicate is refused", 2, { 5, 5 }, 0x1, 0, 1, 0, 0, NULL },
		{ "numbers out of order inside the window", 4, { 10, 8, 9, 11 }, 0xf, 0, 0, 0, 0, NULL },
		{ "a hole inside the window is open, not yet a gap", 2, { 10, 12 }, 0x3, 0, 0, 1, 0, NULL },
		{ "a late number closes its hole", 3, { 10, 12, 11 }, 0x7, 0, 0, 0, 0, NULL },
		{ "below the first number, inside half a window: new", 2, { 100000, 99000 }, 0x3, 0, 0,
		  999, 0, NULL },
		{ "below the window: counted a duplicate", 2, { 100000, 100000 - W / 2 - 1 }, 0x1, 0, 1,
		  0, 0, NULL },
		{ "0 after 1: new", 2, { 1, 0 }, 0x3, 0, 0, 0, 0, NULL },
		{ "a hole that leaves the window is a gap, once", 3, { 0, 2, 2 + W }, 0x7, 1, 0, W - 1,
		  1, NULL },
		{ "the gap's first number is named", 4, { 0, 1, 3, 3 + W }, 0xf, 1, 0, W - 1, 2, NULL },
		{ "a jump far past the window counts every number skipped", 2, { 0, 10ull * W }, 0x3,
		  9ull * W, 0, W - 1, 1, NULL },
		{ "a number seen twice across a slide is one duplicate", 3, { 0, W + 5, W + 5 }, 0x3,
		  5, 1, W - 1, 1, NULL },
		/* Hostile agents choose their numbers: near 2^64 the window's end
		 * (base + VIGIL_SEQ_WINDOW) must not wrap. */
		{ "numbers near 2^64 are counted as anywhere else", 2, { UINT64_MAX - 10, UINT64_MAX - 5 },
		  0x3, 0, 0, 4, 0, NULL },
		{ "a slide that ends at 2^64 - 1 counts its gaps", 3,
		  { UINT64_MAX - 2 * W, UINT64_MAX - 2 * W + 2, UINT64_MAX }, 0x7, W - 1, 0, W - 1,
		  UINT64_MAX - 2 * W + 1, NULL },
		{ "a jump of 70,000 slides a word at a time, counting each number", 2,
		  { 0, 70000 }, 0x3, 70000 - W, 0, W - 1, 1, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		static struct vigil_seq_window w;
		unsigned mask = 0;
		uint64_t g, open;
		int good;

		w = (struct vigil_seq_window){ 0 };
		for (unsigned k = 0; k < cases[i].nseq; k++)
			mask |= (unsigned)vigil_seq_window_add(&w, cases[i].seq[k], &g) << k;
		open = vigil_seq_window_open_gaps(&w);
		good = mask == cases[i].new_mask && w.gaps == cases[i].gaps && w.dups == cases[i].dups &&
		       open == cases[i].open && (!cases[i].gaps || w.gap_first == cases[i].gap_first);
		printf("%sok %d - seq window: %s%s%s\n", good ? "" : "not ", ++n, cases[i].what,
		       cases[i].todo ? " # TODO " : "", cases[i].todo ? cases[i].todo : "");
		if (!good)
			printf("#   new %#x gaps %llu dups %llu open %llu gap_first %llu\n", mask,
			       (unsigned long long)w.gaps, (unsigned long long)w.dups,
			       (unsigned long long)open, (unsigned long long)w.gap_first);
		failed |= !good && !cases[i].todo;
	}
	printf("1..%d\n", n);
	return failed;
}
