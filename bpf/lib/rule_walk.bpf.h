/* SPDX-License-Identifier: GPL-2.0 */
/*
 * First-match for the cgroup hooks: vigil_policy_match's walk (lowest rule
 * id wins, a bpf_loop callback), plus what only these hooks need: rules
 * scoped to a cgroup (vigil_rule_cgroup) are skipped unless the task is in
 * that cgroup, and the match says whether the rule was scoped.
 */
#ifndef VIGIL_RULE_WALK_BPF_H
#define VIGIL_RULE_WALK_BPF_H

#include "lib/rule_match.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VIGIL_RULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_pol_cgroup);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_rule_cgroup SEC(".maps");

enum vigil_walk_by {
	VIGIL_WALK_ALL = 0,	/* every rule, scoped or not */
	VIGIL_WALK_TASK,	/* skip rules scoped to a cgroup the task is not in */
};

struct vigil_walk {
	__u64 set;		/* rules covering the peer (vigil_policy_set) */
	__u16 dport;
	__u8 proto;
	__u8 by_cgroup;		/* enum vigil_walk_by (vigil_walk) */
	__u64 ancestors[VIGIL_CG_LEVELS];	/* vigil_walk_ancestors: id by level */
	__u32 id;		/* out: the first matching rule */
	__u8 action;		/* out: its action, 0 when none matched */
	__u8 scoped;		/* out: the rule names a cgroup */
};

static __always_inline long walk_step(__u32 i, struct vigil_walk *w, bool by_ancestors)
{
	const struct vigil_pol_rule *r;
	struct vigil_pol_cgroup *cg;
	__u32 k = i & (VIGIL_RULES_MAX - 1);

	if (!w->set)
		return 1;
	if (!(w->set & (1ULL << k)))
		return 0;
	w->set &= ~(1ULL << k);
	r = bpf_map_lookup_elem(&vigil_rules, &k);
	if (!r || !vigil_rule_covers(r, w->proto, w->dport))
		return 0;
	cg = bpf_map_lookup_elem(&vigil_rule_cgroup, &k);
	if (cg && cg->id) {
		if (by_ancestors &&
		    (cg->level >= VIGIL_CG_LEVELS ||
		     w->ancestors[cg->level & (VIGIL_CG_LEVELS - 1)] != cg->id))
			return 0;
		if (!by_ancestors && w->by_cgroup == VIGIL_WALK_TASK &&
		    bpf_get_current_ancestor_cgroup_id(cg->level) != cg->id)
			return 0;
		w->scoped = 1;
	}
	w->id = k;
	w->action = r->action;
	return 1;
}

/* Two callbacks, so that a walk by ancestors (a packet's socket, in
 * cgroup_skb) holds no call of bpf_get_current_ancestor_cgroup_id: Linux
 * 6.1 refuses that helper there, even on a branch never taken (the walk's
 * state reaches the step through bpf_loop, so nothing is pruned). */
static long vigil_walk_step(__u32 i, struct vigil_walk *w)
{
	return walk_step(i, w, false);
}

static long vigil_walk_step_ancestors(__u32 i, struct vigil_walk *w)
{
	return walk_step(i, w, true);
}

struct vigil_deny_by {
	const __u64 *ancestors;	/* cgroup ids by level (VIGIL_CG_LEVELS), by ancestors */
	__u32 found;		/* out: 1 + rule id */
};

/* One step of a deny search: rule i a deny scoped to the cgroup (or an
 * ancestor of it)? The cgroup is d->ancestors' or, not by_ancestors, the
 * current task's. */
static __always_inline long deny_step(__u32 i, struct vigil_deny_by *d, bool by_ancestors)
{
	const struct vigil_pol_rule *r;
	struct vigil_pol_cgroup *cg;
	__u32 k = i & (VIGIL_RULES_MAX - 1);
	__u64 id;

	r = bpf_map_lookup_elem(&vigil_rules, &k);
	if (!r || !(r->flags & VIGIL_RULE_ACTIVE) || r->action != VIGIL_ACT_DENY)
		return 0;
	cg = bpf_map_lookup_elem(&vigil_rule_cgroup, &k);
	if (!cg || !cg->id)
		return 0;
	if (by_ancestors)
		id = cg->level < VIGIL_CG_LEVELS ? d->ancestors[cg->level & (VIGIL_CG_LEVELS - 1)] : 0;
	else
		id = bpf_get_current_ancestor_cgroup_id(cg->level);
	if (id != cg->id)
		return 0;
	d->found = k + 1;
	return 1;
}

/* Two callbacks, as for the walk: a search by given ancestors holds no call
 * of bpf_get_current_ancestor_cgroup_id, which Linux 6.1 refuses outside
 * tracing and cgroup programs (tests/bpf/rule_match.bpf.c is a TC one). */
static long vigil_deny_step(__u32 i, struct vigil_deny_by *d)
{
	return deny_step(i, d, true);
}

static long vigil_deny_step_task(__u32 i, struct vigil_deny_by *d)
{
	return deny_step(i, d, false);
}

/* 1 + the id of the first deny rule scoped to the cgroup whose ancestors
 * (ids by level) are given, whatever the rule's addresses and ports; 0
 * when none. */
static __always_inline __u32 vigil_deny_by(const __u64 *ancestors)
{
	struct vigil_deny_by d = { .ancestors = ancestors };

	bpf_loop(VIGIL_RULES_MAX, vigil_deny_step, &d, 0);
	return d.found;
}

/* The same for the current task's cgroup. */
static __always_inline __u32 vigil_task_denied(void)
{
	struct vigil_deny_by d = {};

	bpf_loop(VIGIL_RULES_MAX, vigil_deny_step_task, &d, 0);
	return d.found;
}

static __always_inline void walk_start(const struct vigil_match *m, struct vigil_walk *w)
{
	w->set = vigil_policy_set(m);
	w->dport = m->dport;
	w->proto = m->proto;
	w->action = 0;
	w->scoped = 0;
}

/* Fills w->id and w->action (0: no rule matched); by w->by_cgroup,
 * VIGIL_WALK_ALL or VIGIL_WALK_TASK. */
static __always_inline void vigil_walk(const struct vigil_match *m, struct vigil_walk *w)
{
	walk_start(m, w);
	if (w->set)
		bpf_loop(VIGIL_RULES_MAX, vigil_walk_step, w, 0);
}

/* The same, rules scoped to a cgroup judged by w->ancestors. */
static __always_inline void vigil_walk_ancestors(const struct vigil_match *m, struct vigil_walk *w)
{
	walk_start(m, w);
	if (w->set)
		bpf_loop(VIGIL_RULES_MAX, vigil_walk_step_ancestors, w, 0);
}

#endif
