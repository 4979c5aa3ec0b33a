/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring every vigil program writes to, the per-boot sequence counter and
 * the loss counters. Each BPF object includes this file; the maps are pinned
 * by name under the agent's pin folder, so every object shares one ring, one
 * counter, and the ring outlives the agent (events wait while it restarts).
 *
 * Rules for writers: filter before taking a sequence number; take the number
 * right before reserving, so a failed reserve is a gap in seq and one count
 * in VIGIL_CNT_RING_FULL (the two always agree); never reserve then discard.
 * The one exception is inject_health (bpf/inject.bpf.c): its record is not
 * lost when the ring is full (it waits in the health ring), so it reserves
 * first and takes a number only once it has the room.
 */
#ifndef VIGIL_RING_BPF_H
#define VIGIL_RING_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include "wakeup.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);	/* the agent sets the real size */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_counters SEC(".maps");

/* The event schema the pinned ring holds (VIGIL_SCHEMA_VERSION), written by
 * the agent that created the pins: an agent of another schema refuses to
 * attach to this ring rather than mix two layouts in one stream. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_schema SEC(".maps");

/* Bytes waiting in the ring at which a commit wakes the agent, and again at
 * each further multiple (wakeup.bpf.h). Other commits wake no one: wakeups
 * cost more than the events (docs/stream.md, "Wakeups"), and the agent polls
 * on its own timer. */
const volatile __u64 vigil_wakeup_bytes = 1 << 20;

static __always_inline void vigil_count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&vigil_counters, &which);

	if (c)
		*c += 1;	/* per CPU: no atomic needed */
}

/* The next number of the sequence in seq_map (vigil_seq, or the health
 * ring's vigil_health_seq): 1 for the first, 0 if the map cannot be read. */
static __always_inline __u64 vigil_next_seq_in(void *seq_map)
{
	__u32 zero = 0;
	__u64 *s = bpf_map_lookup_elem(seq_map, &zero);

	return s ? __sync_fetch_and_add(s, 1) + 1 : 0;
}

static __always_inline __u64 vigil_next_seq(void)
{
	return vigil_next_seq_in(&vigil_seq);
}

/* The flag for committing a record of size bytes. reserved: the ring
 * already counts it as available (after bpf_ringbuf_reserve), or not yet
 * (before bpf_ringbuf_output, which would miss the crossings inside the
 * record: in exec events, most of the bytes). */
static __always_inline __u64 vigil_wakeup_flag(__u32 size, bool reserved)
{
	__u64 avail = bpf_ringbuf_query(&vigil_ring, BPF_RB_AVAIL_DATA);

	if (!reserved)
		avail += vigil_ringbuf_span(size);
	return vigil_wakeup_flag_for(avail, size, vigil_wakeup_bytes);
}

/* Reserves a fixed-size record in ring with its header filled in: its
 * number from seq_map, taken right before the reserve, and stamped now (a
 * bpf_ktime_get_ns() the caller read for its own use: a clock read is a
 * helper call, and a kvm-clock read on a VM; 0 reads the clock here).
 * NULL, one count in full, when the ring is full. size must be a multiple
 * of 8 and a constant. The one body of vigil_reserve_at (the main ring)
 * and vigil_health_reserve_at (health.bpf.h): always inlined with constant
 * maps and counter, it compiles to the same instructions as a body
 * written for one ring, which matters on the event path. */
static __always_inline void *vigil_reserve_in(void *ring, void *seq_map, __u32 full,
					      __u16 type, __u32 size, __u64 now)
{
	__u64 seq = vigil_next_seq_in(seq_map);
	struct vigil_hdr *h = bpf_ringbuf_reserve(ring, size, 0);

	if (!h) {
		vigil_count(full);
		return NULL;
	}
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime = now ?: bpf_ktime_get_ns();
	h->seq = seq;
	return h;
}

/* Reserves a fixed-size event in the main ring (vigil_reserve_in), stamped
 * now (0: read the clock here). NULL, counted in VIGIL_CNT_RING_FULL, when
 * the ring is full. */
static __always_inline void *vigil_reserve_at(__u16 type, __u32 size, __u64 now)
{
	return vigil_reserve_in(&vigil_ring, &vigil_seq, VIGIL_CNT_RING_FULL, type, size, now);
}

static __always_inline void *vigil_reserve(__u16 type, __u32 size)
{
	return vigil_reserve_at(type, size, 0);
}

static __always_inline void vigil_submit(void *ev)
{
	bpf_ringbuf_submit(ev, vigil_wakeup_flag(((struct vigil_hdr *)ev)->size, true));
}

/* Copies a variable-size event built in scratch memory into the ring. The
 * header's type and ktime must already be set; size is rounded up to 8 and
 * the caller has zeroed the padding. */
static __always_inline long vigil_output(struct vigil_hdr *h, __u32 size)
{
	long err;

	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->seq = vigil_next_seq();
	err = bpf_ringbuf_output(&vigil_ring, h, size, vigil_wakeup_flag(size, false));
	if (err)
		vigil_count(VIGIL_CNT_RING_FULL);
	return err;
}

#endif
