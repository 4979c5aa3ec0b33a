/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-flow TCP sequence state for flows crossing a host that runs vigil's
 * TC ingress program (struct vigil_flow): what each end sent last, where its
 * packets come in, and with which MAC addresses. A reset rule that lands on
 * an idle flow has no trigger packet to turn into RSTs; the agent builds
 * them from this state instead. A flow vigil reset stays marked, so its
 * retransmissions and challenge ACKs are answered too.
 */
#ifndef VIGIL_FLOW_BPF_H
#define VIGIL_FLOW_BPF_H

#include <vigil/enforce_maps.h>
#include "pkt.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_FLOWS_MAX);
	__type(key, struct vigil_flow_key);
	__type(value, struct vigil_flow);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_flows SEC(".maps");

/* a < b for (address, port) pairs, compared as bytes */
static __always_inline bool vigil_end_lower(const __u8 *a, __u16 pa, const __u8 *b, __u16 pb)
{
	for (int i = 0; i < 16; i++)
		if (a[i] != b[i])
			return a[i] < b[i];
	return pa < pb;
}

/* The flow's key, and which side (0 or 1) p's sender is. */
static __always_inline int vigil_flow_key_of(const struct vigil_pkt *p, __u64 netns_cookie,
					     struct vigil_flow_key *k)
{
	int s = vigil_end_lower(p->saddr, p->sport, p->daddr, p->dport) ? 0 : 1;

	__builtin_memset(k, 0, sizeof(*k));
	k->family = p->family;
	k->proto = p->proto;
	k->netns_cookie = netns_cookie;
	/* Branches, not k->port[s]: clang turns an indexed stack address into
	 * a pointer OR the verifier refuses. */
	if (s == 0) {
		k->port[0] = p->sport;
		k->port[1] = p->dport;
		__builtin_memcpy(k->addr[0], p->saddr, 16);
		__builtin_memcpy(k->addr[1], p->daddr, 16);
	} else {
		k->port[1] = p->sport;
		k->port[0] = p->dport;
		__builtin_memcpy(k->addr[1], p->saddr, 16);
		__builtin_memcpy(k->addr[0], p->daddr, 16);
	}
	return s;
}

static __always_inline bool vigil_seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/* The one VLAN tag the stack keeps outside a frame's data (TC sees it in
 * the skb; XDP sees tags only in the data). */
struct vigil_flow_tag {
	__u16 tci;
	__u16 proto;		/* network order; 0: no tag kept */
};

/* Records what p's sender sent, seen arriving on ifindex with tag (the tag
 * kept outside the data, if any); returns the flow (NULL when untracked).
 * A bare SYN starts over: a new flow on old ports. */
static __always_inline struct vigil_flow *vigil_flow_track(const struct vigil_pkt *p,
							   __u64 netns_cookie, __u32 ifindex,
							   struct vigil_flow_tag tag, __u64 now)
{
	struct vigil_flow_key k;
	struct vigil_flow *f;
	struct vigil_flow_side *sd;
	__u32 next;
	int s;

	if (p->proto != VIGIL_IPPROTO_TCP || p->frag != VIGIL_FRAG_NONE || p->unparsed)
		return NULL;
	s = vigil_flow_key_of(p, netns_cookie, &k);
	if ((p->tcp_flags & (VIGIL_TCP_SYN | VIGIL_TCP_ACK)) == VIGIL_TCP_SYN) {
		bpf_map_delete_elem(&vigil_flows, &k);
		return NULL;
	}
	if (!(p->tcp_flags & VIGIL_TCP_ACK))
		return NULL;
	f = bpf_map_lookup_elem(&vigil_flows, &k);
	if (!f) {
		struct vigil_flow fresh = {};

		bpf_map_update_elem(&vigil_flows, &k, &fresh, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&vigil_flows, &k);
		if (!f)
			return NULL;
	}
	sd = &f->side[s & 1];
	next = p->seq + (p->l4_len - p->l4_hlen) + !!(p->tcp_flags & VIGIL_TCP_SYN) +
	       !!(p->tcp_flags & VIGIL_TCP_FIN);
	if (!sd->seen || vigil_seq_after(next, sd->seq_next))
		sd->seq_next = next;
	if (!sd->seen || vigil_seq_after(p->ack_seq, sd->ack))
		sd->ack = p->ack_seq;
	sd->window = p->window;
	sd->ifindex = ifindex;
	__builtin_memcpy(sd->src_mac, p->smac, 6);
	__builtin_memcpy(sd->dst_mac, p->dmac, 6);
	sd->l2 = (tag.proto ? VIGIL_FLOW_L2_VLAN : 0) | (p->l3_off ? 0 : VIGIL_FLOW_L2_NONE) |
		 (p->vlan_data ? VIGIL_FLOW_L2_TAGS_IN_DATA : 0);
	sd->vlan_tci = tag.tci;
	sd->vlan_proto = tag.proto;
	sd->seen = 1;
	f->last_ns = now;
	return f;
}

/* What p's receiver last acked (its RCV.NXT as it last told), when the
 * flow state has seen it send. */
static __always_inline bool vigil_flow_rcv_nxt(const struct vigil_flow *f,
					       const struct vigil_pkt *p, __u32 *rcv_nxt)
{
	/* The receiver is side 1 when the sender's end is the lower. */
	const struct vigil_flow_side *sd =
		vigil_end_lower(p->saddr, p->sport, p->daddr, p->dport) ? &f->side[1] : &f->side[0];

	if (!sd->seen)
		return false;
	*rcv_nxt = sd->ack;
	return true;
}

#endif
