/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ICMP (ICMPv6) port unreachable for a UDP trigger, built in the packet: no
 * kfunc for it exists on this kernel. The reply quotes the trigger's IP
 * header (with its options or extension headers) and the first 8 bytes past
 * it, the UDP header: enough for the sender's stack to find its socket and
 * fail a connected UDP socket with ECONNREFUSED.
 *
 * IPv4: tos 0xc0 (internetwork control, as icmp_send), id 0, TTL 64,
 * type 3 code 3. IPv6: hop limit 64, type 1 code 4, the checksum over the
 * pseudo-header too. The ICMP checksum is always complete: the quote is
 * copied out first and summed whole.
 *
 * A CHECKSUM_PARTIAL trigger (sent locally, or over veth) stays PARTIAL: no
 * helper clears it, and its csum_start still points at the UDP header, now
 * inside the quote. Where the sum is then completed (a device without
 * checksum offload, skb_checksum_help) the quoted UDP checksum would be
 * rewritten after the ICMP checksum was taken over it, and the sender would
 * drop the reply. So that field is set to the one value the completion
 * leaves as it is (vigil_csum_fixed), and the ICMP sum taken over that.
 */
#ifndef VIGIL_PKT_ICMP_BPF_H
#define VIGIL_PKT_ICMP_BPF_H

#include "pkt.bpf.h"
#include "pkt_csum.bpf.h"
#include "pkt_rst.bpf.h"

/* The longest quote: IP header (options, extension headers) + 8. */
#define VIGIL_ICMP_QUOTE_MAX 120

/* As the RST frames: the headers start at eth, IP aligned. */
struct vigil_icmp_head4 {
	__u16 align;
	struct ethhdr eth;
	struct iphdr ip;
	__u8 type, code;
	__u16 check;
	__u32 unused;
};

struct vigil_icmp_head6 {
	__u16 align;
	struct ethhdr eth;
	struct ipv6hdr ip;
	__u8 type, code;
	__u16 check;
	__u32 unused;
};

union vigil_icmp_head {
	struct vigil_icmp_head4 v4;
	struct vigil_icmp_head6 v6;
};

/* ICMP header and quote, summed; the quote is read from the packet. */
struct vigil_icmp_body {
	__u8 type, code;
	__u16 check;
	__u32 unused;
	__u8 quote[VIGIL_ICMP_QUOTE_MAX];
};

struct vigil_icmp_scratch {
	union vigil_icmp_head h;
	struct vigil_icmp_body b;
};

/* Built here, not on the 512-byte stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_icmp_scratch);
} vigil_icmp_scratch SEC(".maps");

/* No ICMP error for a fragment or a packet to or from a group address
 * (addresses in vigil_reply_addr_ok), nor a frame with VLAN tags in its
 * data (vigil_reply_shape_ok); the quote must fit. */
static __always_inline bool vigil_icmp_eligible(const struct vigil_pkt *p)
{
	return p->proto == VIGIL_IPPROTO_UDP && vigil_reply_shape_ok(p) &&
	       p->l3_len + 8 <= VIGIL_ICMP_QUOTE_MAX;
}

/*
 * The UDP checksum field F that completing a CHECKSUM_PARTIAL sum over the
 * 8-byte UDP header leaves unchanged: F = csum_fold(rest + F), rest the sum
 * of ports and length. In one's complement (mod 0xffff) that is 2F = -rest,
 * so F = -rest / 2, and halving is multiplying by 0x8000 (2 * 0x8000 is 1).
 * A sum of 0 is written as 0xffff (CSUM_MANGLED_0), the other zero.
 */
static __always_inline __u16 vigil_csum_fixed(const __u8 *udp)
{
	__u32 rest = (__u32)*(__u16 *)udp + *(__u16 *)(udp + 2) + *(__u16 *)(udp + 4);
	__u32 neg = 0xffff - vigil_csum_fold(rest) % 0xffff;
	__u32 f = neg * 0x8000u % 0xffff;

	return f ? f : 0xffff;
}

/*
 * Builds the new headers in h (Ethernet, IP, ICMP) for trigger p; reads the
 * quote into b to sum it. Returns the length of h, 0 when unreadable. qlen
 * is set to the quote's length. partial: the trigger is CHECKSUM_PARTIAL at
 * its UDP header: the quoted checksum becomes vigil_csum_fixed's.
 */
static __always_inline __u32 vigil_icmp_head(void *ctx, bool xdp, const struct vigil_pkt *p,
					     bool partial, union vigil_icmp_head *h,
					     struct vigil_icmp_body *b, __u32 *qlen)
{
	struct ethhdr *eth = &h->v4.eth;
	__u32 q = p->l3_len + 8, sum;

	if (q > VIGIL_ICMP_QUOTE_MAX || q < 28)
		return 0;
	*qlen = q;
	if (vigil_load(ctx, xdp, p->l3_off, b->quote, q))
		return 0;
	if (partial) {
		__u8 *udp = &b->quote[q - 8];

		*(__u16 *)(udp + 6) = vigil_csum_fixed(udp);
	}
	__builtin_memcpy(eth->h_dest, p->smac, 6);
	__builtin_memcpy(eth->h_source, p->dmac, 6);
	if (p->family == VIGIL_AF_INET) {
		struct iphdr *ip = &h->v4.ip;

		eth->h_proto = bpf_htons(VIGIL_ETH_P_IP);
		__builtin_memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = 0xc0;
		ip->tot_len = bpf_htons(sizeof(*ip) + 8 + q);
		ip->ttl = VIGIL_RST_TTL;
		ip->protocol = VIGIL_IPPROTO_ICMP;
		__builtin_memcpy(&ip->saddr, p->daddr, 4);
		__builtin_memcpy(&ip->daddr, p->saddr, 4);
		ip->check = vigil_ip4_csum(ip);
		b->type = 3;	/* destination unreachable */
		b->code = 3;	/* port unreachable */
		sum = bpf_csum_diff(NULL, 0, (void *)b, 8 + q, 0);
		h->v4.type = b->type;
		h->v4.code = b->code;
		h->v4.check = ~vigil_csum_fold(sum);
		h->v4.unused = 0;
		return VIGIL_FRAME_LEN(h->v4);
	}
	{
		struct ipv6hdr *ip6 = &h->v6.ip;

		eth->h_proto = bpf_htons(VIGIL_ETH_P_IPV6);
		__builtin_memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->payload_len = bpf_htons(8 + q);
		ip6->nexthdr = VIGIL_IPPROTO_ICMPV6;
		ip6->hop_limit = VIGIL_RST_TTL;
		__builtin_memcpy(&ip6->saddr, p->daddr, 16);
		__builtin_memcpy(&ip6->daddr, p->saddr, 16);
		b->type = 1;	/* destination unreachable */
		b->code = 4;	/* port unreachable */
		sum = vigil_pseudo_sum(p, p->daddr, p->saddr, VIGIL_IPPROTO_ICMPV6, 8 + q);
		sum = bpf_csum_diff(NULL, 0, (void *)b, 8 + q, sum);
		h->v6.type = b->type;
		h->v6.code = b->code;
		h->v6.check = ~vigil_csum_fold(sum);
		h->v6.unused = 0;
		return VIGIL_FRAME_LEN(h->v6);
	}
}

/* TC: cut the trigger after the quote, make room for the new headers right
 * after the MAC header (the quote keeps its place in the buffer, so a
 * PARTIAL skb's csum_start still points at the quoted UDP header), write
 * them; for a PARTIAL trigger, the quoted UDP checksum too. A PARTIAL
 * trigger whose pending sum is anywhere else gets no reply. */
static __always_inline long vigil_tc_build_icmp(struct __sk_buff *skb, const struct vigil_pkt *p)
{
	__u32 zero = 0, q, hlen, skip;
	struct vigil_icmp_scratch *s = bpf_map_lookup_elem(&vigil_icmp_scratch, &zero);
	bool partial = vigil_ip_summed(skb) == VIGIL_CHECKSUM_PARTIAL;
	long err;

	if (!s)
		return -1;
	if (partial && !vigil_partial_at(skb, p->l4_off, offsetof(struct udphdr, check)))
		return -1;
	hlen = vigil_icmp_head(skb, false, p, partial, &s->h, &s->b, &q);
	if (!hlen)
		return -1;
	err = bpf_skb_change_tail(skb, p->l3_off + q, 0);
	if (err)
		return err;
	err = bpf_skb_adjust_room(skb, hlen - VIGIL_ETH_HLEN, BPF_ADJ_ROOM_MAC, 0);
	if (err)
		return err;
	/* RECOMPUTE_CSUM: as for the RST (vigil_tc_write_frame). */
	skip = vigil_l2_skip(p);
	err = bpf_skb_store_bytes(skb, 0, (__u8 *)&s->h.v4.eth + skip, hlen - skip,
				  BPF_F_RECOMPUTE_CSUM);
	if (err || !partial)
		return err;
	if (q > VIGIL_ICMP_QUOTE_MAX)	/* vigil_icmp_head checked it; for the verifier */
		return -1;
	return bpf_skb_store_bytes(skb, hlen - skip + q - 2, &s->b.quote[q - 2], 2,
				   BPF_F_RECOMPUTE_CSUM);
}

/* XDP: the same with the head grown and the tail cut. */
static __always_inline long vigil_xdp_build_icmp(struct xdp_md *xdp, const struct vigil_pkt *p)
{
	__u32 zero = 0, q, hlen;
	struct vigil_icmp_scratch *s = bpf_map_lookup_elem(&vigil_icmp_scratch, &zero);
	__s32 cut;
	long err;

	if (!s)
		return -1;
	hlen = vigil_icmp_head(xdp, true, p, false, &s->h, &s->b, &q);
	if (!hlen)
		return -1;
	cut = (__s32)bpf_xdp_get_buff_len(xdp) - (__s32)(p->l3_off + q);
	if (cut > 0 && (err = bpf_xdp_adjust_tail(xdp, -cut)))
		return err;
	err = bpf_xdp_adjust_head(xdp, -(__s32)(hlen - VIGIL_ETH_HLEN));
	if (err)
		return err;
	if (!vigil_l2_skip(p))
		return bpf_xdp_store_bytes(xdp, 0, &s->h.v4.eth, hlen);
	if (hlen > VIGIL_FRAME_LEN(s->h.v6) || hlen <= VIGIL_ETH_HLEN)	/* for the verifier */
		return -1;
	return bpf_xdp_store_bytes(xdp, 0, &s->h.v4.ip, hlen - VIGIL_ETH_HLEN);
}

#endif
