/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Token buckets for what enforcement sends and writes: replies (RST, ICMP)
 * per rule and per source address, so spoofed traffic cannot turn vigil
 * into a reflector, and events per rule, so a flood cannot fill the ring.
 *
 * Each bucket is one __u64 in GCRA form (gcra.bpf.h).
 */
#ifndef VIGIL_RATELIMIT_BPF_H
#define VIGIL_RATELIMIT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include <vigil/enforce_maps.h>
#include "gcra.bpf.h"

/* Per rule: the reply and event buckets and the events held back since the
 * last event written (reported in its suppressed field). */
struct vigil_rule_rl {
	__u64 reply_tat;
	__u64 event_tat;
	__u64 events_held;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VIGIL_RULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_rule_rl);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_rule_rl SEC(".maps");

struct vigil_src_rl_key {
	__u32 rule_id;
	__u8 family;
	__u8 pad[3];
	__u8 addr[16];
};

/* Per (rule, source): least recently used sources are forgotten first, so a
 * spoofed flood of many sources only ever costs the per-rule bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct vigil_src_rl_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_src_rl SEC(".maps");

#define VIGIL_OR_DEFAULT(v, d) ((v) ? (v) : (d))

/* May rule id answer (RST or ICMP) the source addr now? The source's
 * bucket first: one noisy (or spoofed) source spends its own tokens, not the
 * rule's, so it cannot starve the answers every other source is due. */
static __always_inline bool vigil_reply_allowed(const struct vigil_pol_rule *r, __u32 id,
						__u8 family, const __u8 *src, __u64 now)
{
	struct vigil_src_rl_key k = { .rule_id = id, .family = family };
	struct vigil_rule_rl *rl = bpf_map_lookup_elem(&vigil_rule_rl, &id);
	__u64 *tat, fresh = 0;

	if (!rl)
		return false;
	if (family == 2)
		__builtin_memcpy(k.addr, src, 4);
	else
		__builtin_memcpy(k.addr, src, 16);
	tat = bpf_map_lookup_elem(&vigil_src_rl, &k);
	if (!tat) {
		bpf_map_update_elem(&vigil_src_rl, &k, &fresh, BPF_NOEXIST);
		tat = bpf_map_lookup_elem(&vigil_src_rl, &k);
		if (!tat)
			return false;
	}
	if (!vigil_gcra(tat, now, VIGIL_OR_DEFAULT(r->src_rate, VIGIL_DEF_SRC_RATE),
			VIGIL_OR_DEFAULT(r->src_burst, VIGIL_DEF_SRC_BURST)))
		return false;
	return vigil_gcra(&rl->reply_tat, now, VIGIL_OR_DEFAULT(r->reply_rate, VIGIL_DEF_REPLY_RATE),
			  VIGIL_OR_DEFAULT(r->reply_burst, VIGIL_DEF_REPLY_BURST));
}

/* May rule id write an event now? If not, it is held and counted. */
static __always_inline bool vigil_event_allowed(const struct vigil_pol_rule *r, __u32 id,
						__u64 now, __u32 *held)
{
	struct vigil_rule_rl *rl = bpf_map_lookup_elem(&vigil_rule_rl, &id);

	if (!rl)
		return false;
	if (!vigil_gcra(&rl->event_tat, now, VIGIL_OR_DEFAULT(r->event_rate, VIGIL_DEF_EVENT_RATE),
			VIGIL_OR_DEFAULT(r->event_burst, VIGIL_DEF_EVENT_BURST))) {
		__sync_fetch_and_add(&rl->events_held, 1);
		return false;
	}
	*held = __sync_lock_test_and_set(&rl->events_held, 0);
	return true;
}

#endif
