/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each vigil program's runs, counted at its entry (VIGIL_PROG_RUN) in one
 * pinned per-CPU row (vigil/prog_slots.h), which the heartbeat's tick sums
 * into a prog_runs record: a program that stopped running (its link
 * detached) shows 0 runs there. The cost is one inlined per-CPU array
 * lookup and an increment with no atomic (docs/threat-model.md gives the
 * exec storm's ratio). Run time is not counted: two clock reads per run
 * would cost more than most programs (kernel.bpf_stats_enabled and
 * `bpftool prog` give it).
 */
#ifndef VIGIL_PROG_RUNS_BPF_H
#define VIGIL_PROG_RUNS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/prog_slots.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_prog_counts);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_prog_runs SEC(".maps");

static __always_inline void vigil_prog_run(__u32 slot)
{
	__u32 zero = 0;
	struct vigil_prog_counts *c = bpf_map_lookup_elem(&vigil_prog_runs, &zero);

	if (c && slot < VIGIL_PROG_SLOTS)
		c->runs[slot]++;	/* per CPU: no atomic needed */
}

#endif
