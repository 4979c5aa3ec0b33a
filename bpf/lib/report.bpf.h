/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counters periodic reports are built from, shared (pinned by name) by
 * the programs that count (net, report's exec counter) and the timer that
 * turns them into report events (report.bpf.c).
 *
 * Periods without loss or double count: every entry's key carries the slot
 * of the period it was counted in (period id % 4). Writers read the current
 * period once and add atomically into its slot. The timer starts period N+1,
 * then reports and deletes period N-1's entries: a writer that read N-1
 * before the previous tick has had a whole period to finish, and nobody
 * writes that slot again until it is reused for period N+3, after this
 * drain. So each count is in exactly one report, one period late.
 */
#ifndef VIGIL_REPORT_BPF_H
#define VIGIL_REPORT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include "ring.bpf.h"

#define VIGIL_REPORT_SLOTS 4	/* three would do; four is a mask, not a division */
#define VIGIL_REPORT_PROCS_MAX 16384
#define VIGIL_REPORT_REMOTES_MAX 16384

struct vigil_report_state {
	__u64 period;		/* the period being counted */
	__u64 start_ktime[VIGIL_REPORT_SLOTS];	/* by slot: when it started */
};

static __always_inline __u32 vigil_slot_of(__u64 period)
{
	return period & (VIGIL_REPORT_SLOTS - 1);
}

struct vigil_report_proc_key {
	__u32 pid;
	__u32 slot;
	__u64 exec_ktime;
};

struct vigil_report_proc_val {
	struct vigil_proc proc;
	struct vigil_report_counts c;
};

struct vigil_report_remote_key {
	struct vigil_remote remote;
	__u32 slot;
	__u32 pad;
};

struct vigil_report_remote_val {
	__u64 connections;
	__u64 bytes_sent;
	__u64 bytes_received;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_report_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_report_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_REPORT_PROCS_MAX);
	__type(key, struct vigil_report_proc_key);
	__type(value, struct vigil_report_proc_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_report_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_REPORT_REMOTES_MAX);
	__type(key, struct vigil_report_remote_key);
	__type(value, struct vigil_report_remote_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_report_remotes SEC(".maps");

static __always_inline __u32 vigil_report_slot(void)
{
	__u32 zero = 0;
	struct vigil_report_state *s = bpf_map_lookup_elem(&vigil_report_state, &zero);

	return s ? vigil_slot_of(*(volatile __u64 *)&s->period) : 0;
}

/* Adds an entry that a lookup missed; NULL (counted as a loss) when the
 * table is full. Two CPUs may add the same key at once: one wins, both use
 * it. */
static __always_inline void *vigil_report_add_entry(void *map, const void *key, const void *init)
{
	void *v;

	bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		vigil_count(VIGIL_CNT_REPORT_FULL);
	return v;
}

/* slot: vigil_report_slot(), read once per event that counts. */
static __always_inline struct vigil_report_counts *vigil_report_proc(const struct vigil_proc *p,
								     __u32 slot)
{
	struct vigil_report_proc_key k = {
		.pid = p->pid,
		.slot = slot,
		.exec_ktime = p->exec_ktime,
	};
	struct vigil_report_proc_val *v = bpf_map_lookup_elem(&vigil_report_procs, &k);

	if (!v) {	/* once per process and period: the copy is paid here only */
		struct vigil_report_proc_val init = { .proc = *p };

		v = vigil_report_add_entry(&vigil_report_procs, &k, &init);
	}
	return v ? &v->c : NULL;
}

static __always_inline struct vigil_report_remote_val *vigil_report_remote(const struct vigil_remote *r,
									  __u32 slot)
{
	struct vigil_report_remote_key k = { .remote = *r, .slot = slot };
	struct vigil_report_remote_val *v = bpf_map_lookup_elem(&vigil_report_remotes, &k);
	struct vigil_report_remote_val init = {};

	return v ?: vigil_report_add_entry(&vigil_report_remotes, &k, &init);
}

#define vigil_report_add(field, n) __sync_fetch_and_add(&(field), (n))

#endif
