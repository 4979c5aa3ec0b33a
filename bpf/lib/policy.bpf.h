/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy maps (include/vigil/enforce_events.h, docs/enforce-maps.md) and
 * the one way to match against them. Every enforcing object (TC, XDP,
 * cgroup hooks, iterators) includes this file; the maps are pinned by name,
 * so all of them read the rules the agent wrote once.
 */
#ifndef VIGIL_POLICY_BPF_H
#define VIGIL_POLICY_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VIGIL_POL_PREFIXES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vigil_pol_key4);
	__type(value, struct vigil_pol_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pol4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VIGIL_POL_PREFIXES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vigil_pol_key6);
	__type(value, struct vigil_pol_set);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pol6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VIGIL_RULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_pol_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_RULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_rule_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_rule_stats SEC(".maps");

/* The packet or connect being decided, as the match needs it. */
struct vigil_match {
	__u8 family;		/* AF_INET, AF_INET6 */
	__u8 proto;
	__u8 dir;		/* one of VIGIL_DIR_INGRESS, VIGIL_DIR_EGRESS */
	__u16 dport;		/* host order */
	const __u8 *peer;	/* peer address, network order: 4 or 16 bytes */
};

/* The set of rules covering the peer address, 0 when none. */
static __always_inline __u64 vigil_policy_set(const struct vigil_match *m)
{
	struct vigil_pol_set *set;

	if (m->family == 2 /* AF_INET */) {
		struct vigil_pol_key4 k = { .prefixlen = 64, .dir = m->dir };

		__builtin_memcpy(k.addr, m->peer, 4);
		set = bpf_map_lookup_elem(&vigil_pol4, &k);
	} else {
		struct vigil_pol_key6 k = { .prefixlen = 160, .dir = m->dir };

		__builtin_memcpy(k.addr, m->peer, 16);
		set = bpf_map_lookup_elem(&vigil_pol6, &k);
	}
	return set ? set->rules : 0;
}

struct vigil_match_walk {
	const struct vigil_match *m;
	__u64 set;
	__u32 id;
	const struct vigil_pol_rule *rule;
};

/* One bpf_loop step: rule i, if it is in the set and matches, ends the walk.
 * A callback, not an open loop: the verifier checks it once instead of once
 * per rule and per path. */
static long vigil_match_step(__u32 i, void *ctx)
{
	struct vigil_match_walk *w = ctx;
	const struct vigil_pol_rule *r;
	__u32 k = i;

	if (!w->set)
		return 1;
	if (!(w->set & (1ULL << (i & 63))))
		return 0;
	w->set &= ~(1ULL << (i & 63));
	r = bpf_map_lookup_elem(&vigil_rules, &k);
	if (!r || !vigil_rule_covers(r, w->m->proto, w->m->dport))
		return 0;
	w->id = i;
	w->rule = r;
	return 1;
}

/* The first rule (lowest id) matching m; its id in *id, or NULL. At most
 * VIGIL_RULES_MAX steps, usually one or two. */
static __always_inline const struct vigil_pol_rule *vigil_policy_match(const struct vigil_match *m,
								    __u32 *id)
{
	struct vigil_match_walk w = { .m = m, .set = vigil_policy_set(m) };

	if (!w.set)
		return NULL;
	bpf_loop(VIGIL_RULES_MAX, vigil_match_step, &w, 0);
	*id = w.id;
	return w.rule;
}

static __always_inline struct vigil_rule_stats *vigil_rule_stats_of(__u32 id)
{
	return bpf_map_lookup_elem(&vigil_rule_stats, &id);
}

#endif
