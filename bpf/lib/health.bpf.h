/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The health ring: a small ring of its own, pinned (vigil_health_ring), for
 * what says the node was blind or tampered with (heartbeats, blind
 * records, run counts, tamper records). They must outlive a main ring that
 * filled while vigild was away, which is when they matter. The agent
 * copies each into the main ring (bpf/inject.bpf.c, inject_health), so
 * readers of the stream get them as ordinary records; docs/stream.md.
 *
 * Its own sequence (vigil_health_seq), not vigil_seq: a record here takes
 * no number of the main stream, which stays gapless; a gap in the health
 * sequence is a health record lost, counted in VIGIL_CNT_HEALTH_FULL. The
 * same rule as the main ring: take the number right before reserving.
 * Every writer of a health record goes through vigil_health_reserve.
 */
#ifndef VIGIL_HEALTH_BPF_H
#define VIGIL_HEALTH_BPF_H

#include "ring.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VIGIL_HEALTH_RING_SIZE);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_health_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_health_seq SEC(".maps");

/* Reserves a fixed-size health record with its header filled in (its
 * number in the health sequence), stamped now (0: read the clock here).
 * NULL, counted in VIGIL_CNT_HEALTH_FULL, when the health ring is full.
 * size: a constant multiple of 8, at most VIGIL_HEALTH_REC_MAX. */
static __always_inline void *vigil_health_reserve_at(__u16 type, __u32 size, __u64 now)
{
	return vigil_reserve_in(&vigil_health_ring, &vigil_health_seq, VIGIL_CNT_HEALTH_FULL,
				type, size, now);
}

static __always_inline void *vigil_health_reserve(__u16 type, __u32 size)
{
	return vigil_health_reserve_at(type, size, 0);
}

/* Commits without a wakeup: health records are rare, and the agent looks
 * at the health ring at each poll of the main one. */
static __always_inline void vigil_health_submit(void *ev)
{
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
}

#endif
