/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF ring buffer as user space maps it: the consumer page (ours to
 * write), the producer page, and the data area mapped twice back to back so
 * any range up to the ring's size is contiguous. This file walks committed
 * records and moves the consumer position; it never copies a record, and it
 * never decides when a record may be released: the caller does (sinks hold
 * their own positions, see agent/core/pump.c).
 */
#ifndef VIGIL_RING_H
#define VIGIL_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIGIL_RB_BUSY (1U << 31)
#define VIGIL_RB_DISCARD (1U << 30)
#define VIGIL_RB_HDR_SZ 8U

struct vigil_ring {
	int map_fd;
	uint64_t size;		/* data area bytes, a power of two */
	uint64_t mask;
	size_t page_size;
	volatile uint64_t *consumer_pos;
	volatile uint64_t *producer_pos;
	const uint8_t *data;	/* size * 2 bytes, the second half a mirror */
};

int vigil_ring_open(struct vigil_ring *r, int map_fd);
void vigil_ring_close(struct vigil_ring *r);

uint64_t vigil_ring_consumer(const struct vigil_ring *r);
uint64_t vigil_ring_producer(const struct vigil_ring *r);
void vigil_ring_release(struct vigil_ring *r, uint64_t pos);

/* The record header at pos, read with acquire order. */
uint32_t vigil_ring_rec_len(const struct vigil_ring *r, uint64_t pos);

static inline const void *vigil_ring_at(const struct vigil_ring *r, uint64_t pos)
{
	return r->data + (pos & r->mask);
}

/* A record's footprint in the ring: header and data, padded to 8. */
static inline uint64_t vigil_ring_rec_span(uint32_t len)
{
	len &= ~(VIGIL_RB_BUSY | VIGIL_RB_DISCARD);
	return ((uint64_t)len + VIGIL_RB_HDR_SZ + 7) & ~7ULL;
}

/*
 * Calls fn for each committed, non-discarded record from pos on, stopping at
 * the first uncommitted record or at end. fn returns 0 to go on, > 0 to stop
 * after this record, < 0 to stop before it (not taken). Returns the position
 * after the last record taken.
 */
typedef int (*vigil_record_fn)(void *ctx, const void *rec, uint32_t len, uint64_t pos);
uint64_t vigil_ring_walk(const struct vigil_ring *r, uint64_t pos, uint64_t end,
			 vigil_record_fn fn, void *ctx);

#endif
