// SPDX-License-Identifier: GPL-2.0
/*
 * The node says when it was blind. A bpf_timer in a pinned map ticks every
 * interval whether or not vigild runs (it holds its program; the agent only
 * arms or re-arms it, heartbeat_start) and writes a heartbeat into the
 * health ring (lib/health.bpf.h) with the main ring's producer and
 * consumer positions, then each program's runs since the tick before. A
 * live agent empties the health ring at each poll, so a tick that finds
 * records waiting in either ring and that ring's consumer where the last
 * tick left it marks user space blind, from the last tick it was seen
 * consuming. When the consumers move again a blind record says from when
 * to when; the stall is kept in the pinned state until the health ring
 * takes that record. Only a health ring full too loses heartbeats: then
 * the state counts them (beats_lost), and the blind record says how many
 * the stall lost.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/health.bpf.h"
#include "lib/prog_runs.bpf.h"

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

/* Each program's runs at the last tick, summed over the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_prog_counts);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_hb_runs SEC(".maps");

/* The CPUs to sum over, set by the agent (libbpf_num_possible_cpus). */
const volatile __u32 vigil_nr_cpus = 1;

#define CPUS_MAX 1024

static __always_inline __u64 last_seq(void)
{
	__u32 zero = 0;
	__u64 *s = bpf_map_lookup_elem(&vigil_seq, &zero);

	return s ? *s : 0;
}

static __always_inline void report_blind(struct vigil_hb_state *st, __u64 now)
{
	struct vigil_blind *ev = vigil_health_reserve_at(VIGIL_EV_BLIND, sizeof(*ev), now);

	if (!ev)
		return;	/* the next tick tries again */
	ev->from_ktime = st->since;
	ev->to_ktime = now;
	ev->ticks = st->ticks_blind;
	ev->beats_lost = st->beats_lost - st->lost_at_since;
	vigil_health_submit(ev);
	st->last_from = st->since;
	st->last_to = now;
	st->since = 0;
	st->ticks_blind = 0;
}

struct sum_ctx {
	struct vigil_prog_runs *ev;
	struct vigil_prog_counts *last;
};

/* Adds CPU cpu's row into the record (bpf_loop callback). */
static long sum_cpu(__u32 cpu, struct sum_ctx *c)
{
	__u32 zero = 0;
	struct vigil_prog_counts *row = bpf_map_lookup_percpu_elem(&vigil_prog_runs, &zero, cpu);

	if (!row)
		return 0;
	for (int i = 0; i < VIGIL_PROG_SLOTS_USED; i++)
		c->ev->runs[i] += row->runs[i];
	return 0;
}

/* Each program's runs since the last tick: the sum over the CPUs now,
 * less the sum then, kept in vigil_hb_runs. */
static __always_inline void write_runs(struct vigil_hb_state *st, __u64 now, __u64 since)
{
	struct vigil_prog_runs *ev;
	struct sum_ctx c;
	__u32 zero = 0;
	__u64 total;

	c.last = bpf_map_lookup_elem(&vigil_hb_runs, &zero);
	if (!c.last)
		return;
	ev = vigil_health_reserve_at(VIGIL_EV_PROG_RUNS, sizeof(*ev), now);
	if (!ev)
		return;	/* the next record counts these runs too */
	c.ev = ev;
	ev->beat = st->beats;
	ev->interval_ns = since ? now - since : 0;
	for (int i = 0; i < VIGIL_PROG_SLOTS; i++)
		ev->runs[i] = 0;
	bpf_loop(vigil_nr_cpus < CPUS_MAX ? vigil_nr_cpus : CPUS_MAX, sum_cpu, &c, 0);
	for (int i = 0; i < VIGIL_PROG_SLOTS_USED; i++) {
		total = ev->runs[i];
		ev->runs[i] = total - c.last->runs[i];
		c.last->runs[i] = total;
	}
	vigil_health_submit(ev);
}

/* A ring whose reader stood still since the last tick with records
 * waiting; its positions now in *prod and *cons. */
static __always_inline bool still(void *ring, __u64 last_cons, __u64 *prod, __u64 *cons)
{
	*prod = bpf_ringbuf_query(ring, BPF_RB_PROD_POS);
	*cons = bpf_ringbuf_query(ring, BPF_RB_CONS_POS);
	return *prod != *cons && *cons == last_cons;
}

static int hb_tick(void *map, __u32 *key, struct hb_timer *t)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 prod, cons, hprod, hcons, prev_tick;
	struct vigil_heartbeat *ev;
	struct vigil_hb_state *st;
	__u32 zero = 0;
	bool blind;

	st = bpf_map_lookup_elem(&vigil_hb_state, &zero);
	if (!st)
		return 0;
	blind = still(&vigil_ring, st->last_cons, &prod, &cons);
	blind |= still(&vigil_health_ring, st->last_health_cons, &hprod, &hcons);
	if (blind) {
		if (!st->since) {
			st->since = st->last_tick;
			st->lost_at_since = st->beats_lost;
		}
		st->ticks_blind++;
	} else if (st->since) {
		report_blind(st, now);
	}
	st->beats++;
	ev = vigil_health_reserve_at(VIGIL_EV_HEARTBEAT, sizeof(*ev), now);
	if (ev) {
		ev->producer_pos = prod;
		ev->consumer_pos = cons;
		ev->last_seq = last_seq();
		ev->beats = st->beats;
		ev->beats_lost = st->beats_lost;
		ev->consumer_since = st->since;
		ev->interval_ns = st->interval_ns;
		ev->ticks_blind = st->ticks_blind;
		vigil_health_submit(ev);
		st->lost_since = 0;
	} else {
		/* the fallback when even the health ring is full */
		if (!st->lost_since)
			st->lost_since = now;
		st->beats_lost++;
	}
	prev_tick = st->last_tick;
	write_runs(st, now, prev_tick);
	st->last_tick = now;
	st->last_cons = cons;
	/* the health ring's position before this tick's records: a reader
	 * that reads takes them before the next tick */
	st->last_health_cons = hcons;
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
