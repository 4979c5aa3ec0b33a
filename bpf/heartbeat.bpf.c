// SPDX-License-Identifier: GPL-2.0
/*
 * The node says when it was blind. A bpf_timer in a pinned map ticks every
 * interval whether or not vigild runs (it holds its program; the agent only
 * arms or re-arms it, heartbeat_start) and writes a heartbeat into the ring
 * with the ring's producer and consumer positions. A live agent consumes
 * each heartbeat within an interval, so a tick that finds records waiting
 * and the consumer where the last tick left it marks user space blind,
 * from the last tick it was seen consuming. When the consumer moves again
 * a blind record says from when to when; the stall is kept in the pinned
 * state until the ring takes that record, so a ring still full of the
 * backlog delays it but does not lose it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/ring.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define CLOCK_MONOTONIC 1
#define EBUSY 16

struct hb_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hb_timer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_hb_timer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_hb_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_hb_state SEC(".maps");

static __always_inline __u64 last_seq(void)
{
	__u32 zero = 0;
	__u64 *s = bpf_map_lookup_elem(&vigil_seq, &zero);

	return s ? *s : 0;
}

static __always_inline void report_blind(struct vigil_hb_state *st, __u64 now)
{
	struct vigil_blind *ev = vigil_reserve_at(VIGIL_EV_BLIND, sizeof(*ev), now);

	if (!ev)
		return;	/* the next tick tries again */
	ev->from_ktime = st->since;
	ev->to_ktime = now;
	ev->ticks = st->ticks_blind;
	ev->beats_lost = st->beats_lost - st->lost_at_since;
	vigil_submit(ev);
	st->last_from = st->since;
	st->last_to = now;
	st->since = 0;
	st->ticks_blind = 0;
}

static int hb_tick(void *map, __u32 *key, struct hb_timer *t)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 prod = bpf_ringbuf_query(&vigil_ring, BPF_RB_PROD_POS);
	__u64 cons = bpf_ringbuf_query(&vigil_ring, BPF_RB_CONS_POS);
	struct vigil_heartbeat *ev;
	struct vigil_hb_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&vigil_hb_state, &zero);
	if (!st)
		return 0;
	if (prod != cons && cons == st->last_cons) {
		if (!st->since) {
			st->since = st->last_tick;
			st->lost_at_since = st->beats_lost;
		}
		st->ticks_blind++;
	} else if (st->since) {
		report_blind(st, now);
	}
	st->beats++;
	ev = vigil_reserve_at(VIGIL_EV_HEARTBEAT, sizeof(*ev), now);
	if (ev) {
		ev->producer_pos = prod;
		ev->consumer_pos = cons;
		ev->last_seq = last_seq();
		ev->beats = st->beats;
		ev->beats_lost = st->beats_lost;
		ev->consumer_since = st->since;
		ev->interval_ns = st->interval_ns;
		ev->ticks_blind = st->ticks_blind;
		vigil_submit(ev);
	} else {
		st->beats_lost++;
	}
	st->last_tick = now;
	st->last_cons = cons;
	if (st->interval_ns)
		bpf_timer_start(&t->timer, st->interval_ns, 0);
	return 0;
}

/* Run by the agent (BPF_PROG_TEST_RUN) at every start: arms the timer, or
 * re-arms the one an earlier agent left running, with this interval (0
 * stops it). */
SEC("syscall")
int heartbeat_start(__u64 *interval_ns)
{
	struct vigil_hb_state *st;
	struct hb_timer *t;
	__u32 zero = 0;
	long err;

	t = bpf_map_lookup_elem(&vigil_hb_timer, &zero);
	st = bpf_map_lookup_elem(&vigil_hb_state, &zero);
	if (!t || !st)
		return -1;
	err = bpf_timer_init(&t->timer, &vigil_hb_timer, CLOCK_MONOTONIC);
	if (err && err != -EBUSY)
		return err;
	st->interval_ns = *interval_ns;
	if (!st->last_tick)
		st->last_tick = bpf_ktime_get_ns();
	if (!*interval_ns)
		return bpf_timer_cancel(&t->timer) < 0 ? -1 : 0;
	err = bpf_timer_set_callback(&t->timer, hb_tick);
	if (err)
		return err;
	return bpf_timer_start(&t->timer, *interval_ns, 0);
}
