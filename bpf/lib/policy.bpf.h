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

/* The first rule (lowest id) matching m; its id in *id, or NULL. A bounded
 * walk over the set bits: at most VIGIL_RULES_MAX lookups, usually one. */
static __always_inline const struct vigil_pol_rule *vigil_policy_match(const struct vigil_match *m,
								    __u32 *id)
{
	__u64 set = vigil_policy_set(m);
	__u32 i;

	for (i = 0; i < VIGIL_RULES_MAX && set; i++) {
		const struct vigil_pol_rule *r;
		__u32 k = i;

		if (!(set & (1ULL << i)))
			continue;
		set &= ~(1ULL << i);
		r = bpf_map_lookup_elem(&vigil_rules, &k);
		if (!r || !(r->flags & VIGIL_RULE_ACTIVE))
			continue;
		if (r->proto && r->proto != m->proto)
			continue;
		if (m->dport < r->port_lo || m->dport > r->port_hi)
			continue;
		*id = i;
		return r;
	}
	return NULL;
}

static __always_inline struct vigil_rule_stats *vigil_rule_stats_of(__u32 id)
{
	return bpf_map_lookup_elem(&vigil_rule_stats, &id);
}

#endif
