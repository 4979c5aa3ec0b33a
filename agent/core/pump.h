/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moves records from the ring to the sinks. Each sink keeps the position up
 * to which it is done with the ring (written out, acknowledged, pages
 * released: the sink decides); the ring's consumer position is the lowest
 * of them, so a record leaves the ring only when every sink is done with it.
 * The ring is the retransmit buffer; no sink copies records it has not sent.
 */
#ifndef VIGIL_PUMP_H
#define VIGIL_PUMP_H

#include <stdbool.h>
#include <stdint.h>
#include "ring.h"

struct vigil_sink;

struct vigil_sink_ops {
	/* Records in [sink->pos, end) are there to take; advance sink->pos
	 * past what is done. Returns < 0 only for a fatal error. */
	int (*offer)(struct vigil_sink *s, const struct vigil_ring *r, uint64_t end);
	/* Final chance to finish work at stop. */
	void (*flush)(struct vigil_sink *s, const struct vigil_ring *r);
};

struct vigil_sink {
	const char *name;
	const struct vigil_sink_ops *ops;
	uint64_t pos;
};

#define VIGIL_MAX_SINKS 8

struct vigil_pump {
	struct vigil_ring ring;
	struct vigil_sink *sinks[VIGIL_MAX_SINKS];
	int nsinks;
	int epfd;
	int poll_ms;	/* sleep between polls when the ring is quiet */
	uint64_t wakeups, polls, spins;
};

int vigil_pump_init(struct vigil_pump *p, int ring_fd, int poll_ms);
/* A new sink starts at the ring's consumer position. */
int vigil_pump_add(struct vigil_pump *p, struct vigil_sink *s);
/* Offers what is in the ring to every sink and releases what all are done
 * with; returns the bytes released. */
int64_t vigil_pump_once(struct vigil_pump *p);
/* Waits for data: spins briefly while events flow, else sleeps until the
 * poll timer or a wakeup that BPF forces past its fill threshold. */
void vigil_pump_wait(struct vigil_pump *p, bool flowing);
void vigil_pump_flush(struct vigil_pump *p);
void vigil_pump_close(struct vigil_pump *p);

#endif
