/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A connection's report counts (connections, bytes), kept per CPU by
 * (process, remote end) until the period is reported.
 *
 * Adding them to the hash maps at once meant two hash lookups (the
 * process's counters, the remote's) at each end's open and close: eight a
 * loopback connection, some 600 ns of the 1,400 ns vigil's programs spent
 * on it. Connections that follow each other mostly share their process and
 * remote, so each CPU keeps, per period slot, a small direct-mapped table
 * of such pairs and adds there: an array lookup, no helper call, no atomic.
 * The hash maps see a pair when another pair takes its place, or when the
 * period is reported (the timer folds every CPU's entries of the slot it
 * reports, report.bpf.c). Many distinct pairs cost what the hash maps cost
 * before: one fold in place of the lookups.
 *
 * Plain adds are safe: only net_state adds here, and a tracing program
 * never nests in itself on a CPU (the kernel skips the inner run and counts
 * a recursion miss, which the agent reports as a loss). The timer reads a
 * slot under the rule the hash maps' entries follow (report.bpf.h): nobody
 * writes a slot in the tick that reports it.
 */
#ifndef VIGIL_REPORT_PAIRS_BPF_H
#define VIGIL_REPORT_PAIRS_BPF_H

#include "report.bpf.h"

#define VIGIL_REPORT_PAIRS_LOG2 6	/* 64 pairs per CPU and slot */
#define VIGIL_REPORT_PAIRS (1u << VIGIL_REPORT_PAIRS_LOG2)

/* The remote end as words, to hash and compare it in four steps. */
union vigil_remote_words {
	struct vigil_remote r;
	__u64 w[4];
};

_Static_assert(sizeof(struct vigil_remote) == 4 * sizeof(__u64), "vigil_remote is four words");

struct vigil_report_pair {
	struct vigil_proc proc;		/* its pid and exec_ktime name the process */
	union vigil_remote_words remote;
	__u64 connections;		/* established: connects or accepts, by direction */
	__u64 bytes_sent;
	__u64 bytes_received;
	__u64 used;
};

struct vigil_report_pair_table {
	struct vigil_report_pair e[VIGIL_REPORT_PAIRS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_REPORT_SLOTS);
	__type(key, __u32);
	__type(value, struct vigil_report_pair_table);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_report_pairs SEC(".maps");

/* Adds a pair's counts to its process's and its remote's entries of slot,
 * and frees it. */
static __always_inline void vigil_report_pair_fold(struct vigil_report_pair *e, __u32 slot)
{
	struct vigil_report_counts *c = vigil_report_proc(&e->proc, slot);
	struct vigil_report_remote_val *r;

	if (c) {
		if (e->remote.r.direction == VIGIL_CONN_OUT)
			vigil_report_add(c->connects, e->connections);
		else
			vigil_report_add(c->accepts, e->connections);
		vigil_report_add(c->bytes_sent, e->bytes_sent);
		vigil_report_add(c->bytes_received, e->bytes_received);
	}
	r = vigil_report_remote(&e->remote.r, slot);
	if (r) {
		vigil_report_add(r->connections, e->connections);
		vigil_report_add(r->bytes_sent, e->bytes_sent);
		vigil_report_add(r->bytes_received, e->bytes_received);
	}
	e->used = 0;
}

static __always_inline bool vigil_report_pair_is(const struct vigil_report_pair *e,
						 const struct vigil_proc *p,
						 const union vigil_remote_words *r)
{
	return e->proc.pid == p->pid && e->proc.exec_ktime == p->exec_ktime &&
	       e->remote.w[0] == r->w[0] && e->remote.w[1] == r->w[1] &&
	       e->remote.w[2] == r->w[2] && e->remote.w[3] == r->w[3];
}

/* Counts connections and bytes of process p with remote end r in the
 * current period. */
static __always_inline void vigil_report_pair_add(const struct vigil_proc *p,
						  const union vigil_remote_words *r,
						  __u64 connections, __u64 sent, __u64 received)
{
	__u32 slot = vigil_report_slot();
	struct vigil_report_pair_table *tab = bpf_map_lookup_elem(&vigil_report_pairs, &slot);
	struct vigil_report_pair *e;
	__u64 h;

	if (!tab)
		return;
	h = ((__u64)p->pid << 32 ^ p->exec_ktime ^ r->w[0]) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ r->w[1] ^ r->w[2] ^ r->w[3]) * 0x9e3779b97f4a7c15ULL;
	e = &tab->e[h >> (64 - VIGIL_REPORT_PAIRS_LOG2)];
	if (e->used && !vigil_report_pair_is(e, p, r))
		vigil_report_pair_fold(e, slot);
	if (!e->used) {
		e->proc = *p;
		e->remote = *r;
		e->connections = 0;
		e->bytes_sent = 0;
		e->bytes_received = 0;
		e->used = 1;
	}
	e->connections += connections;
	e->bytes_sent += sent;
	e->bytes_received += received;
}

#endif
