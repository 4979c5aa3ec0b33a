/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads what the enforcement programs need from a packet (Ethernet and up to
 * VIGIL_VLAN_DATA_MAX VLAN tags; IPv4 or IPv6 with its extension headers;
 * TCP, or the ports of UDP, UDP-Lite, SCTP or DCCP) into struct vigil_pkt, the same way for TC (__sk_buff) and XDP
 * (xdp_md). Everything is copied out with the load_bytes helpers: the builders rewrite the packet afterwards,
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
#define VIGIL_ETH_P_8021Q 0x8100
#define VIGIL_ETH_P_8021AD 0x88A8
#define VIGIL_AF_INET 2
#define VIGIL_AF_INET6 10
#define VIGIL_IPPROTO_TCP 6
#define VIGIL_IPPROTO_UDP 17
#define VIGIL_IPPROTO_DCCP 33
#define VIGIL_IPPROTO_SCTP 132
#define VIGIL_IPPROTO_UDPLITE 136
#define VIGIL_IPPROTO_ICMP 1
#define VIGIL_IPPROTO_ICMPV6 58

#define VIGIL_TCP_FIN 0x01
#define VIGIL_TCP_SYN 0x02
#define VIGIL_TCP_RST 0x04
#define VIGIL_TCP_PSH 0x08
#define VIGIL_TCP_ACK 0x10

/* IPv6 extension headers walked before a packet is called unparsed (and
 * dropped where a rule could match it: docs/policy.md, "Packets vigil
 * cannot read"). The kernel walks any number; 16 is past what real traffic
 * carries and within the verifier's budget (docs/resets.md). */
#define VIGIL_IPV6_EXT_MAX 16

/*
 * VLAN tags (802.1Q, 802.1ad) read in the frame between the Ethernet header
 * and IP. At TC the outermost tag is never in the data: the stack moves it
 * into the skb's vlan fields before TC ingress (skb_vlan_untag, offload or
 * not), and a sender's stays there until after TC egress; the reply keeps
 * those fields. At XDP tags are in the data unless the NIC stripped them.
 * The kernel strips any number of VID 0 tags and takes what is behind to
 * IP: a frame with more tags than this is unparsed (VIGIL_UNPARSED_VLAN).
 */
#define VIGIL_VLAN_DATA_MAX 2

/* Device types (ARPHRD_*) whose frames start with an Ethernet header; on
 * any other (tun and WireGuard: NONE; raw IP, IP tunnels, PPP) they start
 * with the IP header, at TC (skb->mac_len 0) and at generic XDP alike. */
#define VIGIL_ARPHRD_ETHER 1
#define VIGIL_ARPHRD_LOOPBACK 772

static __always_inline bool vigil_dev_type_eth(__u16 type)
{
	return type == VIGIL_ARPHRD_ETHER || type == VIGIL_ARPHRD_LOOPBACK;
}

/* The minimum TCP header: a fragment starting inside it could rewrite the
 * ports or flags the first fragment showed (RFC 1858). */
#define VIGIL_TCP_HLEN_MIN 20

/* Why a packet could not be read far enough to match a port (the packet
 * path's counters VIGIL_CNT_ENF_UNPARSED_*). */
enum vigil_unparsed {
	VIGIL_UNPARSED_NONE = 0,
	VIGIL_UNPARSED_FRAG,	/* a first fragment without the whole L4 header, or
				 * a later one that starts inside the TCP header */
	VIGIL_UNPARSED_EXT,	/* IPv6 extension headers past VIGIL_IPV6_EXT_MAX,
				 * or cut short */
	VIGIL_UNPARSED_TRUNC,	/* the L4 header is cut short or its length is wrong */
	VIGIL_UNPARSED_VLAN,	/* VLAN tags past VIGIL_VLAN_DATA_MAX: no address
				 * either (family 0) */
};

enum vigil_frag {
	VIGIL_FRAG_NONE = 0,
	VIGIL_FRAG_FIRST,	/* offset 0, more to come */
	VIGIL_FRAG_LATER,	/* a non-first fragment: no L4 header here */
};

struct vigil_pkt {
	__u8 dmac[6];
	__u8 smac[6];
	__u16 l3_off;		/* VIGIL_ETH_HLEN + 4 per VLAN tag in the data;
				 * 0: no Ethernet header (the device's type) */
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
	__u16 l4_hlen;		/* TCP data offset * 4, else vigil_l4_port_hlen */
	__u16 l4_check;		/* the L4 checksum field as read, raw */
	__u8 unparsed;		/* enum vigil_unparsed: L4 fields not to be trusted */
	__u8 proto_known;	/* 0 when unparsed left proto unresolved */
	__u8 vlan_data;		/* VLAN tags in the data, before l3_off */
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
	if (frag & 0x1fff) {
		p->frag = VIGIL_FRAG_LATER;
		if (ip.protocol == VIGIL_IPPROTO_TCP && (frag & 0x1fff) * 8 < VIGIL_TCP_HLEN_MIN)
			p->unparsed = VIGIL_UNPARSED_FRAG;
	} else if (frag & 0x2000) {
		p->frag = VIGIL_FRAG_FIRST;
	}
	p->family = VIGIL_AF_INET;
	p->proto = ip.protocol;
	p->proto_known = 1;
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
	/* Payload length 0: a jumbogram (the kernel accepts one only past
	 * 65535 bytes) or a BIG TCP packet the local stack made: as before,
	 * left to the kernel, not called unparsed. */
	if (ip6.version != 6 || !ip6.payload_len)
		return -1;
	next = ip6.nexthdr;
	__builtin_memcpy(p->saddr, &ip6.saddr, 16);
	__builtin_memcpy(p->daddr, &ip6.daddr, 16);
	p->family = VIGIL_AF_INET6;
	for (i = 0; i < VIGIL_IPV6_EXT_MAX; i++) {
		struct { __u8 next, len; __be16 frag_off; } ext;

		/* hop-by-hop, routing, fragment, destination, AH, mobility,
		 * HIP, shim6: the kernel walks past each to reach TCP or UDP */
		if (next != 0 && next != 43 && next != 44 && next != 60 && next != 51 &&
		    next != 135 && next != 139 && next != 140)
			break;
		if (vigil_load(ctx, xdp, off, &ext, sizeof(ext))) {
			p->unparsed = VIGIL_UNPARSED_EXT;
			break;
		}
		if (next == 44) {
			__u16 fo = bpf_ntohs(ext.frag_off);

			if (fo & 0xfff8)
				p->frag = VIGIL_FRAG_LATER;
			else if (fo & 1)
				p->frag = VIGIL_FRAG_FIRST;
			if (ext.next == VIGIL_IPPROTO_TCP && (fo & 0xfff8) &&
			    (fo & 0xfff8) < VIGIL_TCP_HLEN_MIN)
				p->unparsed = VIGIL_UNPARSED_FRAG;
			off += 8;
		} else if (next == 51) {
			off += (ext.len + 2) * 4;	/* AH counts 4-byte words */
		} else {
			off += (ext.len + 1) * 8;
		}
		next = ext.next;
	}
	p->proto = next;
	p->l3_len = off - p->l3_off;
	p->l4_off = off;
	if (!p->unparsed && (next == 0 || next == 43 || next == 44 || next == 60 || next == 51 ||
			     next == 135 || next == 139 || next == 140))
		p->unparsed = VIGIL_UNPARSED_EXT;	/* the chain goes on past the walk */
	if (p->unparsed == VIGIL_UNPARSED_EXT)
		return 0;	/* proto stays unknown (proto_known 0) */
	p->proto_known = 1;
	if (bpf_ntohs(ip6.payload_len) < p->l3_len - sizeof(ip6)) {
		p->unparsed = VIGIL_UNPARSED_EXT;	/* headers past the payload */
		return 0;
	}
	p->l4_len = bpf_ntohs(ip6.payload_len) - (p->l3_len - sizeof(ip6));
	return 0;
}

/*
 * The shortest header of an L4 protocol whose ports are at offsets 0 and 2
 * (the ones a port rule matches: docs/policy.md), 0 for any other. The
 * egress backstop (enforce_cgroup) reads ports by this too.
 */
static __always_inline __u16 vigil_l4_port_hlen(__u8 proto)
{
	switch (proto) {
	case VIGIL_IPPROTO_TCP: return 20;
	case VIGIL_IPPROTO_UDP:
	case VIGIL_IPPROTO_UDPLITE: return 8;
	case VIGIL_IPPROTO_SCTP: return 12;	/* the common header */
	case VIGIL_IPPROTO_DCCP: return 12;	/* the generic header, short sequence numbers */
	}
	return 0;
}

/* An L4 header that cannot be read whole: in a first fragment, a
 * fragment's fault, else a truncated packet. */
static __always_inline int vigil_l4_short(struct vigil_pkt *p)
{
	p->unparsed = p->frag == VIGIL_FRAG_FIRST ? VIGIL_UNPARSED_FRAG : VIGIL_UNPARSED_TRUNC;
	return 0;
}

static __always_inline bool vigil_eth_p_vlan(__u16 proto)
{
	return proto == VIGIL_ETH_P_8021Q || proto == VIGIL_ETH_P_8021AD;
}

/* Ethernet and the VLAN tags in the data: the ethertype behind them (host
 * order), or 0 for a frame that cannot be read. */
static __always_inline __u16 vigil_parse_eth(void *ctx, bool xdp, struct vigil_pkt *p)
{
	struct ethhdr eth;
	__u16 proto;

	if (vigil_load(ctx, xdp, 0, &eth, sizeof(eth)))
		return 0;
	__builtin_memcpy(p->dmac, eth.h_dest, 6);
	__builtin_memcpy(p->smac, eth.h_source, 6);
	p->l3_off = VIGIL_ETH_HLEN;
	proto = bpf_ntohs(eth.h_proto);
#pragma unroll
	for (int i = 0; i < VIGIL_VLAN_DATA_MAX; i++) {
		struct { __be16 tci, proto; } tag;

		if (!vigil_eth_p_vlan(proto))
			break;
		if (vigil_load(ctx, xdp, p->l3_off, &tag, sizeof(tag)))
			return 0;
		proto = bpf_ntohs(tag.proto);
		p->l3_off += sizeof(tag);
		p->vlan_data++;
	}
	if (vigil_eth_p_vlan(proto))
		p->unparsed = VIGIL_UNPARSED_VLAN;
	return proto;
}

/* A frame with no Ethernet header: its IP version says which it is. */
static __always_inline __u16 vigil_parse_l3_start(void *ctx, bool xdp)
{
	__u8 first;

	if (vigil_load(ctx, xdp, 0, &first, 1))
		return 0;
	return first >> 4 == 4 ? VIGIL_ETH_P_IP : first >> 4 == 6 ? VIGIL_ETH_P_IPV6 : 0;
}

/*
 * Fills p from the packet; 0 when it is IPv4 or IPv6, -1 for anything else
 * (and for an IP header that cannot be read: the kernel drops those itself).
 * eth: the device's frames start with an Ethernet header (vigil_dev_type_eth),
 * else with the IP header. The L4 fields are filled only for the protocols with ports
 * (vigil_l4_port_hlen) and not for later fragments; the TCP ones for TCP. A packet whose ports cannot be read (enum vigil_unparsed)
 * returns 0 with p->unparsed set and no L4 fields: the caller must not
 * match it as if its port were 0, nor answer it.
 */
static __always_inline int vigil_pkt_parse(void *ctx, bool xdp, bool eth, struct vigil_pkt *p)
{
	__u16 proto;
	int err;

	__builtin_memset(p, 0, sizeof(*p));
	proto = eth ? vigil_parse_eth(ctx, xdp, p) : vigil_parse_l3_start(ctx, xdp);
	if (p->unparsed)
		return 0;	/* VLAN tags past the walk: nothing else is known */
	if (proto == VIGIL_ETH_P_IP)
		err = vigil_parse_ipv4(ctx, xdp, p);
	else if (proto == VIGIL_ETH_P_IPV6)
		err = vigil_parse_ipv6(ctx, xdp, p);
	else
		return -1;
	if (err || p->unparsed || p->frag == VIGIL_FRAG_LATER)
		return err;
	if (p->proto == VIGIL_IPPROTO_TCP) {
		struct tcphdr th;

		if (p->l4_len < sizeof(th) || vigil_load(ctx, xdp, p->l4_off, &th, sizeof(th)))
			return vigil_l4_short(p);
		p->l4_hlen = th.doff * 4;
		if (p->l4_hlen < sizeof(th) || p->l4_hlen > p->l4_len)
			return vigil_l4_short(p);
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
			return vigil_l4_short(p);
		p->l4_hlen = sizeof(uh);
		p->sport = uh.source;
		p->dport = uh.dest;
		p->l4_check = uh.check;
	} else if (vigil_l4_port_hlen(p->proto)) {
		/* UDP-Lite, SCTP, DCCP: the ports (vigil answers none of them) */
		struct { __be16 sport, dport; } ports;
		__u16 hlen = vigil_l4_port_hlen(p->proto);

		if (p->l4_len < hlen || vigil_load(ctx, xdp, p->l4_off, &ports, sizeof(ports)))
			return vigil_l4_short(p);
		p->l4_hlen = hlen;
		p->sport = ports.sport;
		p->dport = ports.dport;
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
