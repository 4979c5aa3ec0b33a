/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP resets built in the trigger packet itself, as netfilter's
 * nf_send_reset / nf_send_reset6 build theirs (docs/resets.md):
 *
 *   to the sender (reject; the reverse half of reset): addresses and ports
 *     swapped; trigger has ACK: seq = its ack_seq, flags RST; else seq 0,
 *     ack = seq + payload + SYN + FIN, flags RST|ACK. Window 0, no options.
 *   to the receiver (the forward half of reset, from a host in the middle):
 *     addresses kept, seq = the trigger's seq (the receiver's RCV.NXT when the
 *     trigger is the next in-order segment: it never reaches the receiver).
 *
 * IPv4: tos 0, id 0, DF, TTL 64 (the ip_default_ttl netfilter's netdev
 * variant uses); IPv6: traffic class and flow label 0, hop limit 64. IP
 * options and IPv6 extension headers are stripped: the whole frame is
 * written anew, a pure function of struct vigil_pkt. The frame is built
 * here; rewriting the packet into it is the TC or XDP writer's job.
 */
#ifndef VIGIL_PKT_RST_BPF_H
#define VIGIL_PKT_RST_BPF_H

#include "pkt.bpf.h"

#define VIGIL_RST_TTL 64

/* The frames start at eth; the 2 bytes before it align the IP header. */
struct vigil_frame4 {
	__u16 align;
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
};

struct vigil_frame6 {
	__u16 align;
	struct ethhdr eth;
	struct ipv6hdr ip;
	struct tcphdr tcp;
};

#define VIGIL_FRAME_LEN(f) (sizeof(f) - sizeof(__u16))

union vigil_rst_frame {
	struct vigil_frame4 v4;
	struct vigil_frame6 v6;
};

/* Frames are built here, not on the 512-byte stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union vigil_rst_frame);
} vigil_rst_scratch SEC(".maps");

/* netfilter's rule: no reset for a reset or a fragment (checksums and
 * addresses are checked by the caller and vigil_rst_addr_ok). Nor for a
 * frame with VLAN tags in its data: the builders write Ethernet and IP
 * headers with nothing between them (a tag the stack keeps in the skb's
 * vlan fields, the only one at TC in most frames, goes back with the reply;
 * docs/resets.md). */
static __always_inline bool vigil_reply_shape_ok(const struct vigil_pkt *p)
{
	return p->frag == VIGIL_FRAG_NONE && !p->unparsed && !p->vlan_data;
}

static __always_inline bool vigil_rst_eligible(const struct vigil_pkt *p)
{
	return p->proto == VIGIL_IPPROTO_TCP && vigil_reply_shape_ok(p) &&
	       !(p->tcp_flags & VIGIL_TCP_RST);
}

/* No reply to or from broadcast, multicast or unspecified addresses. */
static __always_inline bool vigil_reply_addr_ok(const struct vigil_pkt *p)
{
	if (p->family == VIGIL_AF_INET) {
		__u8 s = p->saddr[0], d = p->daddr[0];

		if ((s & 0xf0) == 0xe0 || (d & 0xf0) == 0xe0)	/* 224/4 */
			return false;
		if (*(__u32 *)p->daddr == 0xffffffff || *(__u32 *)p->saddr == 0xffffffff ||
		    *(__u32 *)p->saddr == 0)
			return false;
		return true;
	}
	if (p->saddr[0] == 0xff || p->daddr[0] == 0xff)
		return false;
	return *(__u64 *)p->saddr || *(__u64 *)&p->saddr[8];
}

/* The RST's TCP header for the trigger p; to_sender chooses the half. */
static __always_inline void vigil_rst_tcp(const struct vigil_pkt *p, bool to_sender,
					  struct tcphdr *th)
{
	__u32 payload = p->l4_len - p->l4_hlen;
	__u8 *flags = (__u8 *)th + 13;

	__builtin_memset(th, 0, sizeof(*th));
	th->doff = sizeof(*th) / 4;
	if (!to_sender) {
		th->source = p->sport;
		th->dest = p->dport;
		th->seq = bpf_htonl(p->seq);
		if (p->tcp_flags & VIGIL_TCP_ACK) {
			th->ack_seq = bpf_htonl(p->ack_seq);
			*flags = VIGIL_TCP_RST | VIGIL_TCP_ACK;
		} else {
			*flags = VIGIL_TCP_RST;
		}
		return;
	}
	th->source = p->dport;
	th->dest = p->sport;
	if (p->tcp_flags & VIGIL_TCP_ACK) {
		th->seq = bpf_htonl(p->ack_seq);
		*flags = VIGIL_TCP_RST;
	} else {
		th->ack_seq = bpf_htonl(p->seq + payload + !!(p->tcp_flags & VIGIL_TCP_SYN) +
					!!(p->tcp_flags & VIGIL_TCP_FIN));
		*flags = VIGIL_TCP_RST | VIGIL_TCP_ACK;
	}
}

/* The bytes of a built frame's Ethernet header left out: all of them on a
 * device without one (l3_off 0), where the reply starts with IP too. */
static __always_inline __u32 vigil_l2_skip(const struct vigil_pkt *p)
{
	return p->l3_off ? 0 : VIGIL_ETH_HLEN;
}

/* The IPv4 header checksum of a 20-byte header. */
static __always_inline __u16 vigil_ip4_csum(struct iphdr *ip)
{
	ip->check = 0;
	return ~vigil_csum_fold(bpf_csum_diff(NULL, 0, (void *)ip, sizeof(*ip), 0));
}

/*
 * The whole RST frame for trigger p into f; its length is returned. partial:
 * leave the TCP checksum as CHECKSUM_PARTIAL wants it (the pseudo-header sum
 * only; the stack or the device adds the rest, as for netfilter's own RST),
 * else the full sum.
 */
static __always_inline __u32 vigil_rst_frame(const struct vigil_pkt *p, bool to_sender,
					     bool partial, union vigil_rst_frame *f)
{
	const __u8 *src = to_sender ? p->daddr : p->saddr;
	const __u8 *dst = to_sender ? p->saddr : p->daddr;
	struct tcphdr *th;
	struct ethhdr *eth = &f->v4.eth;
	__u32 len, sum;

	if (to_sender) {
		__builtin_memcpy(eth->h_dest, p->smac, 6);
		__builtin_memcpy(eth->h_source, p->dmac, 6);
	} else {
		__builtin_memcpy(eth->h_dest, p->dmac, 6);
		__builtin_memcpy(eth->h_source, p->smac, 6);
	}
	if (p->family == VIGIL_AF_INET) {
		struct iphdr *ip = &f->v4.ip;

		eth->h_proto = bpf_htons(VIGIL_ETH_P_IP);
		__builtin_memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(struct tcphdr));
		ip->frag_off = bpf_htons(0x4000);	/* DF */
		ip->ttl = VIGIL_RST_TTL;
		ip->protocol = VIGIL_IPPROTO_TCP;
		__builtin_memcpy(&ip->saddr, src, 4);
		__builtin_memcpy(&ip->daddr, dst, 4);
		ip->check = vigil_ip4_csum(ip);
		th = &f->v4.tcp;
		len = VIGIL_FRAME_LEN(f->v4);
	} else {
		struct ipv6hdr *ip6 = &f->v6.ip;

		eth->h_proto = bpf_htons(VIGIL_ETH_P_IPV6);
		__builtin_memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->payload_len = bpf_htons(sizeof(struct tcphdr));
		ip6->nexthdr = VIGIL_IPPROTO_TCP;
		ip6->hop_limit = VIGIL_RST_TTL;
		__builtin_memcpy(&ip6->saddr, src, 16);
		__builtin_memcpy(&ip6->daddr, dst, 16);
		th = &f->v6.tcp;
		len = VIGIL_FRAME_LEN(f->v6);
	}
	vigil_rst_tcp(p, to_sender, th);
	sum = vigil_pseudo_sum(p, src, dst, VIGIL_IPPROTO_TCP, sizeof(*th));
	if (partial) {
		th->check = vigil_csum_fold(sum);
	} else {
		sum = bpf_csum_diff(NULL, 0, (void *)th, sizeof(*th), sum);
		th->check = ~vigil_csum_fold(sum);
	}
	return len;
}

/*
 * Rewrites the TC packet into frame f of len bytes: first the bytes past
 * the fixed IP header are removed (options, extension headers: room is
 * taken out right after the MAC header, so what follows keeps its place and
 * a CHECKSUM_PARTIAL skb's csum_start still points at the TCP header), then
 * the tail is cut (payload, TCP options, Ethernet padding), then the frame
 * written whole. 0, or a negative error from the helper that refused.
 */
static __always_inline long vigil_tc_write_frame(struct __sk_buff *skb, const struct vigil_pkt *p,
						 void *f, __u32 len, __u32 l4_off_new)
{
	__s32 extra = (__s32)p->l4_off - (__s32)l4_off_new;
	long err;

	if (extra > 0) {
		err = bpf_skb_adjust_room(skb, -extra, BPF_ADJ_ROOM_MAC, 0);
		if (err)
			return err;
	}
	err = bpf_skb_change_tail(skb, len, 0);
	if (err)
		return err;
	/* RECOMPUTE_CSUM keeps a CHECKSUM_COMPLETE skb's csum true to the new
	 * bytes (the trims and cuts above keep it already), so a RST the
	 * stack receives is not a checksum fault; a no-op for other skbs. */
	return bpf_skb_store_bytes(skb, 0, f, len, BPF_F_RECOMPUTE_CSUM);
}

/* The RST for trigger p written into the TC packet. */
static __always_inline long vigil_tc_build_rst(struct __sk_buff *skb, const struct vigil_pkt *p,
					       bool to_sender, bool partial)
{
	__u32 zero = 0, len;
	union vigil_rst_frame *f = bpf_map_lookup_elem(&vigil_rst_scratch, &zero);

	if (!f)
		return -1;
	len = vigil_rst_frame(p, to_sender, partial, f) - vigil_l2_skip(p);
	return vigil_tc_write_frame(skb, p, (__u8 *)&f->v4.eth + vigil_l2_skip(p), len,
				    len - sizeof(struct tcphdr));
}

/* The same at XDP: the front is cut (all of it is rewritten), then the tail.
 * XDP has no checksum state: always the full sum. */
static __always_inline long vigil_xdp_build_rst(struct xdp_md *xdp, const struct vigil_pkt *p)
{
	__u32 zero = 0, len;
	union vigil_rst_frame *f = bpf_map_lookup_elem(&vigil_rst_scratch, &zero);
	__s32 extra, cut;
	long err;

	if (!f)
		return -1;
	len = vigil_rst_frame(p, true, false, f) - vigil_l2_skip(p);
	extra = (__s32)p->l4_off - (__s32)(len - sizeof(struct tcphdr));

	if (extra > 0 && (err = bpf_xdp_adjust_head(xdp, extra)))
		return err;
	cut = (__s32)bpf_xdp_get_buff_len(xdp) - (__s32)len;
	if (cut < 0)
		return -1;
	if (cut > 0 && (err = bpf_xdp_adjust_tail(xdp, -cut)))
		return err;
	if (!vigil_l2_skip(p))
		return bpf_xdp_store_bytes(xdp, 0, &f->v4.eth, len);
	/* the verifier does not tie len to the skip: bound it here */
	if (len > VIGIL_FRAME_LEN(f->v6) - VIGIL_ETH_HLEN || len < 1)
		return -1;
	return bpf_xdp_store_bytes(xdp, 0, &f->v4.ip, len);
}

#endif
