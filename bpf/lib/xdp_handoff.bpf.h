/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XDP hands a reset to TC by the packet's identity when it cannot tag the
 * frame's metadata (a kernel whose verifier refuses bpf_xdp_adjust_meta to
 * XDP, a driver that gives XDP no metadata room): the XDP program writes an
 * entry keyed by what names this one packet (namespace, interface,
 * addresses, ports, seq), and vigil_tc_xdp_ingress on that interface takes
 * it when the same packet reaches TC ingress.
 *
 * Not a per-CPU "last frame" slot: GRO merges frames before TC (the merged
 * skb keeps its first segment's seq, which XDP saw), RPS runs TC ingress on
 * another CPU than XDP, and a frame dropped between XDP and TC would leave
 * a slot that resets the next unrelated flow. An entry here matches one
 * packet of one flow, is taken once, and counts only for
 * VIGIL_HANDOFF_TTL_NS; what is never taken the LRU forgets.
 */
#ifndef VIGIL_XDP_HANDOFF_BPF_H
#define VIGIL_XDP_HANDOFF_BPF_H

#include "pkt.bpf.h"

#define VIGIL_HANDOFFS_MAX 4096
/* Between XDP and TC ingress a frame waits microseconds, or a NAPI poll
 * and a backlog queue under load: a second is generous and still short. */
#define VIGIL_HANDOFF_TTL_NS 1000000000ull

struct vigil_handoff_key {
	__u64 netns_cookie;	/* ifindexes repeat across namespaces */
	__u32 ifindex;
	__u32 seq;		/* which packet of the flow */
	__u8 family;
	__u8 proto;
	__be16 sport;
	__be16 dport;
	__u16 pad;
	__u8 saddr[16];
	__u8 daddr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_HANDOFFS_MAX);
	__type(key, struct vigil_handoff_key);
	__type(value, __u64);	/* when XDP handed it over (ktime ns) */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_xdp_handoff SEC(".maps");

static __always_inline void vigil_handoff_key_of(const struct vigil_pkt *p, __u64 netns_cookie,
						 __u32 ifindex, struct vigil_handoff_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->netns_cookie = netns_cookie;
	k->ifindex = ifindex;
	k->seq = p->seq;
	k->family = p->family;
	k->proto = p->proto;
	k->sport = p->sport;
	k->dport = p->dport;
	__builtin_memcpy(k->saddr, p->saddr, 16);
	__builtin_memcpy(k->daddr, p->daddr, 16);
}

/* XDP: p is to be reset by TC. 0, or the map's error. */
static __always_inline long vigil_handoff_put(const struct vigil_pkt *p, __u64 netns_cookie,
					      __u32 ifindex)
{
	struct vigil_handoff_key k;
	__u64 now = bpf_ktime_get_ns();

	vigil_handoff_key_of(p, netns_cookie, ifindex, &k);
	return bpf_map_update_elem(&vigil_xdp_handoff, &k, &now, BPF_ANY);
}

/* TC ingress: whether XDP handed p over, lately; the entry is used up. */
static __always_inline bool vigil_handoff_take(const struct vigil_pkt *p, __u64 netns_cookie,
					       __u32 ifindex)
{
	struct vigil_handoff_key k;
	__u64 *at;
	bool fresh;

	if (p->proto != VIGIL_IPPROTO_TCP || p->unparsed)
		return false;	/* only TCP resets are handed over */
	vigil_handoff_key_of(p, netns_cookie, ifindex, &k);
	at = bpf_map_lookup_elem(&vigil_xdp_handoff, &k);
	if (!at)
		return false;
	fresh = bpf_ktime_get_ns() - *at <= VIGIL_HANDOFF_TTL_NS;
	bpf_map_delete_elem(&vigil_xdp_handoff, &k);
	return fresh;
}

#endif
