/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A budget for process events per cgroup, or per uid (--proc-budget,
 * --proc-budget-by): one cgroup's (one user's) exec storm spends its own
 * tokens, so it cannot fill the ring and the export file with its events
 * and push out everyone else's history. Events over the budget are not
 * written; they are counted (VIGIL_CNT_PROC_THROTTLED) and reported per
 * cgroup (uid) by a vigil_throttle event, sent from a timer a second after
 * the first held event, so the last of a storm is reported too, with no
 * later event from there needed. A storm also has a start, written at its
 * first held event, and a stop, written by the timer a second after a
 * report when nothing more was held (Tetragon's THROTTLE_START and _STOP).
 *
 * Off (rate 0) unless asked for: with it, a process over the budget runs
 * unseen, which is what a tenant hiding its own actions would want.
 */
#ifndef VIGIL_PROC_BUDGET_BPF_H
#define VIGIL_PROC_BUDGET_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include "ring.bpf.h"
#include "gcra.bpf.h"

#define VIGIL_CLOCK_MONOTONIC 1
#define VIGIL_THROTTLE_REPORT_NS 1000000000ULL
/* Tags a uid key: cgroup ids never have the top bit set. */
#define VIGIL_BUDGET_UID_KEY (1ULL << 63)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_proc_budget_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_proc_budget_cfg SEC(".maps");

struct vigil_proc_budget {
	__u64 tat;	/* GCRA state (ratelimit.bpf.h) */
	__u64 held;	/* events held since the last report */
	__u32 storm;	/* its start was written, its stop not yet */
	__u32 pad;
	struct bpf_timer report;
};

/* Least recently active cgroups are forgotten first: their held count
 * stays in the global counter. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);	/* cgroup id, or VIGIL_BUDGET_UID_KEY | uid */
	__type(value, struct vigil_proc_budget);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_proc_budgets SEC(".maps");

static __always_inline void vigil_throttle_emit(__u64 key, __u64 n, __u32 phase)
{
	struct vigil_throttle *ev = vigil_reserve(VIGIL_EV_THROTTLE, sizeof(*ev));

	if (!ev)
		return;
	if (key & VIGIL_BUDGET_UID_KEY) {
		ev->cgroup_id = 0;
		ev->uid = (__u32)key;
		ev->by = VIGIL_BUDGET_BY_UID;
	} else {
		ev->cgroup_id = key;
		ev->uid = (__u32)-1;
		ev->by = VIGIL_BUDGET_BY_CGROUP;
	}
	ev->throttled = n;
	ev->phase = phase;
	ev->pad = 0;
	vigil_submit(ev);
}

/* A second after the first event held since the last report: what was
 * held, then one more look a second later; a look that finds nothing held
 * ends the storm. */
static int vigil_throttle_report(void *map, __u64 *key, struct vigil_proc_budget *b)
{
	__u64 n = __sync_lock_test_and_set(&b->held, 0);

	if (n) {
		vigil_throttle_emit(*key, n, VIGIL_THROTTLE_HELD);
		bpf_timer_start(&b->report, VIGIL_THROTTLE_REPORT_NS, 0);
	} else if (__sync_lock_test_and_set(&b->storm, 0)) {
		vigil_throttle_emit(*key, 0, VIGIL_THROTTLE_STOP);
	}
	return 0;
}

/* May the cgroup (or uid) write one more process event now? If not, it is
 * counted, and its report is due a second after its first held event. */
static __always_inline bool vigil_proc_budget_ok(__u64 cgroup_id, __u32 uid, __u64 now)
{
	struct vigil_proc_budget_cfg *cfg;
	struct vigil_proc_budget *b, fresh = {};
	__u32 zero = 0;
	__u64 key;

	cfg = bpf_map_lookup_elem(&vigil_proc_budget_cfg, &zero);
	if (!cfg || !cfg->rate)
		return true;
	key = cfg->by == VIGIL_BUDGET_BY_UID ? VIGIL_BUDGET_UID_KEY | uid : cgroup_id;
	b = bpf_map_lookup_elem(&vigil_proc_budgets, &key);
	if (!b) {
		bpf_map_update_elem(&vigil_proc_budgets, &key, &fresh, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&vigil_proc_budgets, &key);
		if (!b)
			return true;
	}
	if (vigil_gcra(&b->tat, now, cfg->rate, cfg->burst))
		return true;
	vigil_count(VIGIL_CNT_PROC_THROTTLED);
	if (!b->storm && !__sync_lock_test_and_set(&b->storm, 1))
		vigil_throttle_emit(key, 0, VIGIL_THROTTLE_START);
	if (__sync_fetch_and_add(&b->held, 1) == 0) {
		/* Init fails (harmlessly, -EBUSY) on all but the first time. */
		bpf_timer_init(&b->report, &vigil_proc_budgets, VIGIL_CLOCK_MONOTONIC);
		bpf_timer_set_callback(&b->report, vigil_throttle_report);
		bpf_timer_start(&b->report, VIGIL_THROTTLE_REPORT_NS, 0);
	}
	return false;
}

#endif
