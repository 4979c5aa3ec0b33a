/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads what the enforcement programs need from a packet (Ethernet, IPv4 or
 * IPv6 with its extension headers, TCP or UDP) into struct vigil_pkt, the
 * same way for TC (__sk_buff) and XDP (xdp_md). Everything is copied out
 * with the load_bytes helpers: the builders rewrite the packet afterwards,
 * and copies stay valid where packet pointers would not.
 *
 * Lengths come from the IP header, never from the frame: at TC a frame may
 * carry Ethernet padding (a bare ACK is padded from 54 to 60 bytes).
 */
#ifndef VIGIL_PKT_BPF_H
#define VIGIL_PKT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define VIGIL_ETH_HLEN 14
#define VIGIL_ETH_P_IP 0x0800
#define VIGIL_ETH_P_IPV6 0x86DD
#define VIGIL_AF_INET 2
#define VIGIL_AF_INET6 10
#define VIGIL_IPPROTO_TCP 6
#define VIGIL_IPPROTO_UDP 17
#define VIGIL_IPPROTO_ICMP 1
#define VIGIL_IPPROTO_ICMPV6 58

#define VIGIL_TCP_FIN 0x01
#define VIGIL_TCP_SYN 0x02
#define VIGIL_TCP_RST 0x04
#define VIGIL_TCP_PSH 0x08
#define VIGIL_TCP_ACK 0x10

/* IPv6 extension headers followed before giving up on a packet. */
#define VIGIL_IPV6_EXT_MAX 4

enum vigil_frag {
	VIGIL_FRAG_NONE = 0,
	VIGIL_FRAG_FIRST,	/* offset 0, more to come */
	VIGIL_FRAG_LATER,	/* a non-first fragment: no L4 header here */
};

struct vigil_pkt {
	__u8 dmac[6];
	__u8 smac[6];
	__u16 l3_off;		/* VIGIL_ETH_HLEN */
	__u16 l4_off;		/* past IP options / extension headers */
	__u16 l3_len;		/* l4_off - l3_off */
	__u16 l4_len;		/* L4 header + payload, from the IP header */
	__u8 family;
	__u8 proto;		/* the L4 protocol after extension headers */
	__u8 frag;		/* enum vigil_frag */
	__u8 tcp_flags;
	__u8 saddr[16];		/* network order; IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__be16 sport;
	__be16 dport;
	__u32 seq;		/* host order */
	__u32 ack_seq;
	__u16 window;
	__u16 l4_hlen;		/* TCP data offset * 4, or 8 for UDP */
	__u16 l4_check;		/* the L4 checksum field as read, raw */
	__u16 pad;
};

/* One way to read bytes for both kinds of context; xdp is a constant at
 * each call site, so the branch is gone after inlining. */
static __always_inline long vigil_load(void *ctx, bool xdp, __u32 off, void *to, __u32 len)
{
	return xdp ? bpf_xdp_load_bytes(ctx, off, to, len) : bpf_skb_load_bytes(ctx, off, to, len);
}

static __always_inline int vigil_parse_ipv4(void *ctx, bool xdp, struct vigil_pkt *p)
{
	struct iphdr ip;
	__u16 tot, hl, frag;

	if (vigil_load(ctx, xdp, p->l3_off, &ip, sizeof(ip)))
		return -1;
	hl = ip.ihl * 4;
	tot = bpf_ntohs(ip.tot_len);
	if (ip.version != 4 || hl < sizeof(ip) || tot < hl)
		return -1;
	frag = bpf_ntohs(ip.frag_off);
	if (frag & 0x1fff)
		p->frag = VIGIL_FRAG_LATER;
	else if (frag & 0x2000)
		p->frag = VIGIL_FRAG_FIRST;
	p->family = VIGIL_AF_INET;
	p->proto = ip.protocol;
	p->l3_len = hl;
	p->l4_off = p->l3_off + hl;
	p->l4_len = tot - hl;
	__builtin_memcpy(p->saddr, &ip.saddr, 4);
	__builtin_memcpy(p->daddr, &ip.daddr, 4);
	return 0;
}

static __always_inline int vigil_parse_ipv6(void *ctx, bool xdp, struct vigil_pkt *p)
{
	struct ipv6hdr ip6;
	__u32 off = p->l3_off + sizeof(ip6);
	__u8 next;
	int i;

	if (vigil_load(ctx, xdp, p->l3_off, &ip6, sizeof(ip6)))
		return -1;
	if (ip6.version != 6)
		return -1;
	next = ip6.nexthdr;
	__builtin_memcpy(p->saddr, &ip6.saddr, 16);
	__builtin_memcpy(p->daddr, &ip6.daddr, 16);
	p->family = VIGIL_AF_INET6;
	for (i = 0; i < VIGIL_IPV6_EXT_MAX; i++) {
		struct { __u8 next, len; __be16 frag_off; } ext;

		if (next != 0 && next != 43 && next != 44 && next != 60)
			break;	/* hop-by-hop, routing, fragment, destination */
		if (vigil_load(ctx, xdp, off, &ext, sizeof(ext)))
			return -1;
		if (next == 44) {
			__u16 fo = bpf_ntohs(ext.frag_off);

			if (fo & 0xfff8)
				p->frag = VIGIL_FRAG_LATER;
			else if (fo & 1)
				p->frag = VIGIL_FRAG_FIRST;
			off += 8;
		} else {
			off += (ext.len + 1) * 8;
		}
		next = ext.next;
	}
	p->proto = next;
	p->l3_len = off - p->l3_off;
	p->l4_off = off;
	if (bpf_ntohs(ip6.payload_len) < p->l3_len - sizeof(ip6))
		return -1;
	p->l4_len = bpf_ntohs(ip6.payload_len) - (p->l3_len - sizeof(ip6));
	return 0;
}

/* Fills p from the packet; 0 when it is IPv4 or IPv6 (the L4 fields only for
 * TCP and UDP that are not later fragments), -1 for anything else. */
static __always_inline int vigil_pkt_parse(void *ctx, bool xdp, struct vigil_pkt *p)
{
	struct ethhdr eth;
	__u16 proto;
	int err;

	__builtin_memset(p, 0, sizeof(*p));
	if (vigil_load(ctx, xdp, 0, &eth, sizeof(eth)))
		return -1;
	__builtin_memcpy(p->dmac, eth.h_dest, 6);
	__builtin_memcpy(p->smac, eth.h_source, 6);
	p->l3_off = VIGIL_ETH_HLEN;
	proto = bpf_ntohs(eth.h_proto);
	if (proto == VIGIL_ETH_P_IP)
		err = vigil_parse_ipv4(ctx, xdp, p);
	else if (proto == VIGIL_ETH_P_IPV6)
		err = vigil_parse_ipv6(ctx, xdp, p);
	else
		return -1;
	if (err || p->frag == VIGIL_FRAG_LATER)
		return err;
	if (p->proto == VIGIL_IPPROTO_TCP) {
		struct tcphdr th;

		if (p->l4_len < sizeof(th) || vigil_load(ctx, xdp, p->l4_off, &th, sizeof(th)))
			return -1;
		p->l4_hlen = th.doff * 4;
		if (p->l4_hlen < sizeof(th) || p->l4_hlen > p->l4_len)
			return -1;
		p->sport = th.source;
		p->dport = th.dest;
		p->seq = bpf_ntohl(th.seq);
		p->ack_seq = bpf_ntohl(th.ack_seq);
		p->window = bpf_ntohs(th.window);
		p->l4_check = th.check;
		/* the flags byte: offset 13 of the TCP header */
		p->tcp_flags = ((__u8 *)&th)[13];
	} else if (p->proto == VIGIL_IPPROTO_UDP) {
		struct udphdr uh;

		if (p->l4_len < sizeof(uh) || vigil_load(ctx, xdp, p->l4_off, &uh, sizeof(uh)))
			return -1;
		p->l4_hlen = sizeof(uh);
		p->sport = uh.source;
		p->dport = uh.dest;
		p->l4_check = uh.check;
	}
	return 0;
}

/* Folds a 32-bit one's-complement sum to 16 bits. */
static __always_inline __u16 vigil_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* The pseudo-header's sum for an L4 checksum (raw, as bpf_csum_diff sums). */
static __always_inline __u32 vigil_pseudo_sum(const struct vigil_pkt *p, const __u8 *saddr,
					      const __u8 *daddr, __u8 proto, __u32 l4_len)
{
	if (p->family == VIGIL_AF_INET) {
		struct { __u8 s[4], d[4]; __u8 zero, proto; __be16 len; } ph = {
			.zero = 0, .proto = proto, .len = bpf_htons(l4_len),
		};

		__builtin_memcpy(ph.s, saddr, 4);
		__builtin_memcpy(ph.d, daddr, 4);
		return bpf_csum_diff(NULL, 0, (void *)&ph, sizeof(ph), 0);
	} else {
		struct { __u8 s[16], d[16]; __be32 len; __u8 zero[3], proto; } ph = {
			.len = bpf_htonl(l4_len), .proto = proto,
		};

		__builtin_memcpy(ph.s, saddr, 16);
		__builtin_memcpy(ph.d, daddr, 16);
		return bpf_csum_diff(NULL, 0, (void *)&ph, sizeof(ph), 0);
	}
}

#endif
