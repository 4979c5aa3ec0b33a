/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy maps (include/vigil/enforce_events.h, docs/enforce-maps.md) and
 * the one way to match against them. Every enforcing object (TC, XDP,
 * cgroup hooks, iterators) includes this file; the maps are pinned by name,
 * so all of them read the rules the agent wrote once.
 */
#ifndef VIGIL_RULE_MATCH_BPF_H
#define VIGIL_RULE_MATCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include <vigil/enforce_maps.h>

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

/* The walks' common start of a step: rule i, taken out of *set. 1 when the
 * set is empty (the walk ends); else 0, with *r the rule, or NULL when i is
 * not in the set. */
static __always_inline long vigil_set_take(__u64 *set, __u32 i, const struct vigil_pol_rule **r)
{
	__u32 k = i;

	*r = NULL;
	if (!*set)
		return 1;
	if (!(*set & (1ULL << (i & 63))))
		return 0;
	*set &= ~(1ULL << (i & 63));
	*r = bpf_map_lookup_elem(&vigil_rules, &k);
	return 0;
}

/* One bpf_loop step: rule i, if it is in the set and matches, ends the walk.
 * A callback, not an open loop: the verifier checks it once instead of once
 * per rule and per path. */
static long vigil_match_step(__u32 i, void *ctx)
{
	struct vigil_match_walk *w = ctx;
	const struct vigil_pol_rule *r;

	if (vigil_set_take(&w->set, i, &r))
		return 1;
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

struct vigil_unparsed_walk {
	__u64 set;
	__u8 proto;		/* valid when proto_known */
	__u8 proto_known;
	__u8 addr_known;	/* 0: set is every rule, its addresses unknown */
	__u32 id;
	const struct vigil_pol_rule *rule;	/* out: the rule to drop under */
};

static __always_inline bool vigil_action_acts(__u8 action)
{
	return action == VIGIL_ACT_DROP || action == VIGIL_ACT_REJECT || action == VIGIL_ACT_RESET;
}

/* One step for a packet whose port (maybe its protocol) is unknown. In
 * policy order: a rule that cannot match is skipped; a drop, reject or
 * reset that could match ends the walk with that rule (fail closed); an
 * allow or deny that surely matches (any port, the protocol known to fit)
 * ends it with none (the packet passes, as it would parsed); one that only
 * could match is passed over: a later rule that acts still refuses. */
static long vigil_unparsed_step(__u32 i, void *ctx)
{
	struct vigil_unparsed_walk *w = ctx;
	const struct vigil_pol_rule *r;
	bool sure;

	if (vigil_set_take(&w->set, i, &r))
		return 1;
	if (!r || !(r->flags & VIGIL_RULE_ACTIVE))
		return 0;
	if (r->proto && w->proto_known && r->proto != w->proto)
		return 0;
	if (vigil_action_acts(r->action)) {
		w->id = i;
		w->rule = r;
		return 1;
	}
	sure = w->addr_known && (!r->proto || w->proto_known) && r->port_lo == 0 &&
	       r->port_hi == 65535;
	return sure ? 1 : 0;
}

/* The rule an unparsed packet from (or to) m->peer is dropped under, or
 * NULL to let it pass: only rules covering the peer's address are looked
 * at, so a rule for other addresses never drops it. m->dport is ignored;
 * proto_known says whether m->proto is. m->family 0: the address is not
 * known either (VLAN tags past the walk): every rule is looked at, in
 * either direction, and no allow is sure to match. */
static __always_inline const struct vigil_pol_rule *
vigil_policy_match_unparsed(const struct vigil_match *m, bool proto_known, __u32 *id)
{
	struct vigil_unparsed_walk w = {
		.set = m->family ? vigil_policy_set(m) : ~0ULL,
		.proto = m->proto, .proto_known = proto_known, .addr_known = !!m->family,
	};

	if (!w.set)
		return NULL;
	bpf_loop(VIGIL_RULES_MAX, vigil_unparsed_step, &w, 0);
	*id = w.id;
	return w.rule;
}

static __always_inline struct vigil_rule_stats *vigil_rule_stats_of(__u32 id)
{
	return bpf_map_lookup_elem(&vigil_rule_stats, &id);
}

#endif
