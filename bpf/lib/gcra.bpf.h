/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A token bucket in one __u64, in GCRA form (the "theoretical arrival
 * time"): a send is allowed when, after adding one interval, the time owed
 * is at most burst intervals ahead of now. One compare-and-swap updates it:
 * no lock on the packet path, and CPUs racing for the last token lose at
 * most a retry each. Used by enforcement's rate limits (ratelimit.bpf.h)
 * and the process event budget (proc_budget.bpf.h); no maps of its own.
 */
#ifndef VIGIL_GCRA_BPF_H
#define VIGIL_GCRA_BPF_H

#include "vmlinux.h"

/* true: one send allowed now, at rate per second with burst. */
static __always_inline bool vigil_gcra(__u64 *tat, __u64 now, __u32 rate, __u32 burst)
{
	__u64 interval = 1000000000ULL / (rate ? rate : 1);
	__u64 limit = interval * (burst ? burst : 1);
	int i;

	if (!interval)
		return true;	/* 1e9/s or more: no limit */

	for (i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)tat;
		__u64 next = (old > now ? old : now) + interval;

		if (next - now > limit)
			return false;
		if (__sync_val_compare_and_swap(tat, old, next) == old)
			return true;
	}
	return false;
}

#endif
