// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RST and ICMP builders (bpf/lib/pkt_rst.bpf.h,
 * pkt_icmp.bpf.h) through BPF_PROG_TEST_RUN on crafted packets: the reply is
 * a pure function of the trigger, so every field of it is checked here
 * against what netfilter's nf_send_reset / icmp_send produce (the figures
 * docs/resets.md describes). Output: TAP, driven by rst_build.t.
 *
 * Run as root (loading BPF); nothing is attached or pinned.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <vigil/events.h>
#include <vigil/enforce_maps.h>
#include "enforce_tc.skel.h"

static int n_test, n_fail;
static int prog_fd;

static void ok(bool cond, const char *what)
{
	n_test++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_test, what);
	if (!cond)
		n_fail++;
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *b = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The L4 checksum over a pseudo-header and the segment: 0xffff when valid
 * (the segment's own checksum field included). */
static uint16_t l4_sum(int family, const uint8_t *l3, const uint8_t *l4, size_t len, uint8_t proto)
{
	uint32_t sum = 0;
	uint8_t tail[4] = { 0, proto, len >> 8, len & 0xff };
	uint8_t tail6[8] = { 0, 0, len >> 8, len & 0xff, 0, 0, 0, proto };

	if (family == AF_INET) {
		sum = csum_add(sum, l3 + 12, 8);
		sum = csum_add(sum, tail, 4);
	} else {
		sum = csum_add(sum, l3 + 8, 32);
		sum = csum_add(sum, tail6, 8);
	}
	return csum_fold(csum_add(sum, l4, len));
}

struct trig {
	int family;
	uint8_t flags;		/* TCP flags; 0 for UDP */
	bool udp;
	uint32_t seq, ack;
	unsigned payload;
	unsigned ip_opts;	/* IPv4 option bytes (multiple of 4) / IPv6 ext bytes (of 8) */
	unsigned pad_to;	/* Ethernet padding up to this frame length */
	bool bad_csum;
	uint16_t frag;		/* IPv4 frag_off field (host order) */
	bool v6_frag_later;	/* IPv6 fragment header with offset > 0 */
	const char *dst;	/* default 10.1.0.2 / fd00::2 */
};

static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa }, mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

/* Builds the trigger frame into f; returns its length. */
static size_t craft(const struct trig *t, uint8_t *f)
{
	struct ethhdr *eth = (struct ethhdr *)f;
	uint8_t *l3 = f + ETH_HLEN, *l4;
	size_t l4len = (t->udp ? sizeof(struct udphdr) : sizeof(struct tcphdr)) + t->payload;
	size_t len, i;

	memset(f, 0, 2048);
	memcpy(eth->h_dest, mac_b, 6);
	memcpy(eth->h_source, mac_a, 6);
	if (t->family == AF_INET) {
		struct iphdr *ip = (struct iphdr *)l3;

		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5 + t->ip_opts / 4;
		ip->ttl = 61;
		ip->tos = 0x10;
		ip->id = htons(4242);
		ip->frag_off = htons(t->frag);
		ip->protocol = t->udp ? IPPROTO_UDP : IPPROTO_TCP;
		inet_pton(AF_INET, "10.1.0.1", &ip->saddr);
		inet_pton(AF_INET, t->dst ? t->dst : "10.1.0.2", &ip->daddr);
		for (i = 0; i < t->ip_opts; i++)
			l3[20 + i] = 1;	/* NOP options */
		ip->tot_len = htons(ip->ihl * 4 + l4len);
		ip->check = htons(~csum_fold(csum_add(0, ip, ip->ihl * 4)));
		l4 = l3 + ip->ihl * 4;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)l3;
		uint8_t *ext = l3 + sizeof(*ip6);
		uint8_t proto = t->udp ? IPPROTO_UDP : IPPROTO_TCP;
		unsigned extlen = t->ip_opts + (t->v6_frag_later ? 8 : 0);

		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->hop_limit = 61;
		ip6->flow_lbl[2] = 7;
		inet_pton(AF_INET6, "fd00::1", &ip6->saddr);
		inet_pton(AF_INET6, t->dst ? t->dst : "fd00::2", &ip6->daddr);
		ip6->nexthdr = t->ip_opts ? 60 : t->v6_frag_later ? 44 : proto;
		if (t->ip_opts) {
			ext[0] = t->v6_frag_later ? 44 : proto;
			ext[1] = t->ip_opts / 8 - 1;
			ext[2] = 1;	/* PadN */
			ext[3] = t->ip_opts - 4;
			ext += t->ip_opts;
		}
		if (t->v6_frag_later) {
			ext[0] = proto;
			ext[2] = 0;
			ext[3] = 8 << 3;	/* offset 64 bytes */
			ext += 8;
		}
		ip6->payload_len = htons(extlen + l4len);
		l4 = ext;
	}
	if (t->udp) {
		struct udphdr *uh = (struct udphdr *)l4;

		uh->source = htons(40000);
		uh->dest = htons(53);
		uh->len = htons(l4len);
	} else {
		struct tcphdr *th = (struct tcphdr *)l4;

		th->source = htons(40000);
		th->dest = htons(80);
		th->seq = htonl(t->seq);
		th->ack_seq = htonl(t->ack);
		th->doff = 5;
		((uint8_t *)th)[13] = t->flags;
		th->window = htons(64240);
	}
	for (i = 0; i < t->payload; i++)
		l4[l4len - t->payload + i] = 'a' + i % 26;
	{
		uint16_t c = ~l4_sum(t->family, l3, l4, l4len, t->udp ? IPPROTO_UDP : IPPROTO_TCP);

		if (t->bad_csum)
			c ^= 0x5555;
		l4[t->udp ? 6 : 16] = c >> 8;
		l4[t->udp ? 7 : 17] = c & 0xff;
	}
	len = (l4 - f) + l4len;
	if (t->pad_to > len)
		len = t->pad_to;
	return len;
}

/* Frames start 2 bytes past a 4-byte boundary, so their IP headers are
 * aligned as the header structs want (UBSan checks). */
#define FRAME_ALIGN 2

struct reply {
	int ret;
	uint32_t len;
	uint16_t align;
	uint8_t f[2048];	/* at offset 10: 2 past a boundary */
};

struct frame_buf {
	uint16_t align;
	uint8_t f[2048];
} __attribute__((aligned(4)));

static int run(const struct trig *t, bool to_receiver, struct reply *r)
{
	static struct frame_buf buf;
	uint8_t *in = buf.f;
	struct __sk_buff ctx = { .mark = to_receiver ? VIGIL_BUILD_TO_RECEIVER : 0 };
	size_t len = craft(t, in);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len, .data_out = r->f,
		    .data_size_out = sizeof(r->f), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	int err = bpf_prog_test_run_opts(prog_fd, &o);

	if (err)
		return -errno;
	r->ret = o.retval;
	r->len = o.data_size_out;
	return 0;
}

/* Checks the RST frame r against what netfilter sends for t. */
static void check_rst(const char *name, const struct trig *t, const struct reply *r,
		      bool to_receiver)
{
	char what[160];
	const uint8_t *l3 = r->f + ETH_HLEN, *l4;
	const struct ethhdr *eth = (const struct ethhdr *)r->f;
	const struct tcphdr *th;
	uint32_t want_seq, want_ack = 0;
	uint8_t want_flags, flags;
	bool v4 = t->family == AF_INET;
	size_t want_len = ETH_HLEN + (v4 ? 20 : 40) + 20;
	bool addr_ok;

	snprintf(what, sizeof(what), "%s: a reply is built", name);
	ok(r->ret == 1, what);
	snprintf(what, sizeof(what), "%s: frame is %zu bytes (options, payload, padding gone)", name,
		 want_len);
	ok(r->len == want_len, what);
	l4 = l3 + (v4 ? 20 : 40);
	th = (const struct tcphdr *)l4;
	flags = l4[13];
	if (to_receiver) {
		want_seq = t->seq;
		want_ack = (t->flags & 0x10) ? t->ack : 0;
		want_flags = (t->flags & 0x10) ? 0x14 : 0x04;
	} else if (t->flags & 0x10) {
		want_seq = t->ack;
		want_flags = 0x04;
	} else {
		want_seq = 0;
		want_ack = t->seq + t->payload + !!(t->flags & 0x02) + !!(t->flags & 0x01);
		want_flags = 0x14;
	}
	snprintf(what, sizeof(what), "%s: seq %u ack %u flags 0x%02x window 0 (got %u %u 0x%02x %u)",
		 name, want_seq, want_ack, want_flags, ntohl(th->seq), ntohl(th->ack_seq), flags,
		 ntohs(th->window));
	ok(ntohl(th->seq) == want_seq && ntohl(th->ack_seq) == want_ack && flags == want_flags &&
	   th->window == 0 && th->doff == 5, what);
	if (v4) {
		const struct iphdr *ip = (const struct iphdr *)l3;
		uint32_t a, b;

		inet_pton(AF_INET, "10.1.0.1", &a);
		inet_pton(AF_INET, t->dst ? t->dst : "10.1.0.2", &b);
		addr_ok = to_receiver ? ip->saddr == a && ip->daddr == b : ip->saddr == b && ip->daddr == a;
		snprintf(what, sizeof(what), "%s: IPv4 header: ihl 5, tos 0, id 0, DF, ttl 64, checksum", name);
		ok(ip->ihl == 5 && ip->tos == 0 && ip->id == 0 && ntohs(ip->frag_off) == 0x4000 &&
		   ip->ttl == 64 && ntohs(ip->tot_len) == 40 && ip->protocol == IPPROTO_TCP &&
		   csum_fold(csum_add(0, ip, 20)) == 0xffff, what);
	} else {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)l3;
		struct in6_addr a, b;

		inet_pton(AF_INET6, "fd00::1", &a);
		inet_pton(AF_INET6, t->dst ? t->dst : "fd00::2", &b);
		addr_ok = to_receiver ? !memcmp(&ip6->saddr, &a, 16) && !memcmp(&ip6->daddr, &b, 16) :
					!memcmp(&ip6->saddr, &b, 16) && !memcmp(&ip6->daddr, &a, 16);
		snprintf(what, sizeof(what), "%s: IPv6 header: class and flow 0, hop limit 64, no ext", name);
		ok(ip6->priority == 0 && !ip6->flow_lbl[0] && !ip6->flow_lbl[1] && !ip6->flow_lbl[2] &&
		   ip6->hop_limit == 64 && ip6->nexthdr == IPPROTO_TCP && ntohs(ip6->payload_len) == 20,
		   what);
	}
	snprintf(what, sizeof(what), "%s: addresses, ports and MACs %s", name,
		 to_receiver ? "kept" : "swapped");
	ok(addr_ok &&
	   (to_receiver ? th->source == htons(40000) && th->dest == htons(80) &&
				  !memcmp(eth->h_dest, mac_b, 6) && !memcmp(eth->h_source, mac_a, 6) :
			  th->source == htons(80) && th->dest == htons(40000) &&
				  !memcmp(eth->h_dest, mac_a, 6) && !memcmp(eth->h_source, mac_b, 6)),
	   what);
	snprintf(what, sizeof(what), "%s: TCP checksum complete and right", name);
	ok(l4_sum(t->family, l3, l4, 20, IPPROTO_TCP) == 0xffff, what);
}

static void rst_case(const char *name, struct trig t)
{
	struct reply r;

	if (run(&t, false, &r)) {
		ok(false, name);
		return;
	}
	check_rst(name, &t, &r, false);
}

static void no_reply(const char *name, struct trig t)
{
	struct reply r;
	char what[160];

	snprintf(what, sizeof(what), "%s: no reply", name);
	ok(!run(&t, false, &r) && r.ret == 0, what);
}

static void icmp_case(const char *name, struct trig t)
{
	struct reply r;
	char what[160];
	struct frame_buf buf;
	uint8_t *in = buf.f;
	size_t in_len = craft(&t, in);
	bool v4 = t.family == AF_INET;
	size_t hl = ETH_HLEN + (v4 ? 20 : 40);
	size_t quote = (v4 ? 20 + t.ip_opts : 40 + t.ip_opts) + 8;
	const uint8_t *icmp;

	(void)in_len;
	snprintf(what, sizeof(what), "%s: a reply is built", name);
	ok(!run(&t, false, &r) && r.ret == 1, what);
	icmp = r.f + hl;
	snprintf(what, sizeof(what), "%s: %zu bytes: headers, ICMP, trigger's IP header + 8", name,
		 hl + 8 + quote);
	ok(r.len == hl + 8 + quote, what);
	snprintf(what, sizeof(what), "%s: port unreachable (%s)", name, v4 ? "3/3" : "1/4");
	ok(v4 ? icmp[0] == 3 && icmp[1] == 3 : icmp[0] == 1 && icmp[1] == 4, what);
	snprintf(what, sizeof(what), "%s: quote is the trigger's bytes", name);
	ok(!memcmp(icmp + 8, in + ETH_HLEN, quote), what);
	snprintf(what, sizeof(what), "%s: checksums right", name);
	if (v4) {
		const struct iphdr *ip = (const struct iphdr *)(r.f + ETH_HLEN);

		ok(csum_fold(csum_add(0, ip, 20)) == 0xffff &&
		   csum_fold(csum_add(0, icmp, 8 + quote)) == 0xffff && ip->protocol == IPPROTO_ICMP &&
		   ntohs(ip->tot_len) == 20 + 8 + quote && ip->ttl == 64, what);
	} else {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)(r.f + ETH_HLEN);

		ok(l4_sum(AF_INET6, r.f + ETH_HLEN, icmp, 8 + quote, IPPROTO_ICMPV6) == 0xffff &&
		   ip6->nexthdr == IPPROTO_ICMPV6 && ntohs(ip6->payload_len) == 8 + quote, what);
	}
}

static void forward_case(const char *name, struct trig t)
{
	struct reply r;

	if (run(&t, true, &r)) {
		ok(false, name);
		return;
	}
	check_rst(name, &t, &r, true);
}

static void suite(int family)
{
	const char *v = family == AF_INET ? "IPv4" : "IPv6";
	const unsigned opts = family == AF_INET ? 8 : 16;
	char n[64];

#define NAME(s) (snprintf(n, sizeof(n), "%s %s", v, s), n)
	rst_case(NAME("SYN seq 1000"), (struct trig){ family, 0x02, .seq = 1000 });
	rst_case(NAME("PSH|ACK seq 2000 ack 3000, 10 bytes"),
		 (struct trig){ family, 0x18, .seq = 2000, .ack = 3000, .payload = 10 });
	rst_case(NAME("FIN|ACK seq 4000 ack 5000"), (struct trig){ family, 0x11, .seq = 4000, .ack = 5000 });
	rst_case(NAME("FIN seq 6000, no ACK"), (struct trig){ family, 0x01, .seq = 6000 });
	rst_case(NAME("SYN seq 7000 with 5 bytes"), (struct trig){ family, 0x02, .seq = 7000, .payload = 5 });
	rst_case(NAME("bare ACK padded to 60 bytes"),
		 (struct trig){ family, 0x10, .seq = 8000, .ack = 9000, .pad_to = 60 });
	rst_case(NAME("SYN padded to 60 bytes: payload from the IP header"),
		 (struct trig){ family, 0x02, .seq = 9000, .pad_to = 60 });
	rst_case(NAME("PSH|ACK 300 bytes with IP options / ext header"),
		 (struct trig){ family, 0x18, .seq = 10000, .ack = 11000, .payload = 300, .ip_opts = opts });
	rst_case(NAME("PSH|ACK 1400 bytes"),
		 (struct trig){ family, 0x18, .seq = 12000, .ack = 13000, .payload = 1400 });
	no_reply(NAME("RST"), (struct trig){ family, 0x04, .seq = 1 });
	no_reply(NAME("RST|ACK"), (struct trig){ family, 0x14, .seq = 1, .ack = 2 });
	no_reply(NAME("bad checksum"), (struct trig){ family, 0x02, .seq = 1, .bad_csum = true });
	no_reply(NAME("bad checksum, 700 bytes"),
		 (struct trig){ family, 0x18, .seq = 1, .ack = 1, .payload = 700, .bad_csum = true });
	if (family == AF_INET) {
		no_reply(NAME("non-first fragment"), (struct trig){ family, 0x02, .seq = 1, .frag = 8 });
		no_reply(NAME("first fragment (MF)"), (struct trig){ family, 0x02, .seq = 1, .frag = 0x2000 });
		no_reply(NAME("to a multicast group"), (struct trig){ family, 0x02, .seq = 1, .dst = "224.0.0.9" });
		no_reply(NAME("to broadcast"), (struct trig){ family, 0x02, .seq = 1, .dst = "255.255.255.255" });
	} else {
		no_reply(NAME("non-first fragment"), (struct trig){ family, 0x02, .seq = 1, .v6_frag_later = true });
		no_reply(NAME("to a multicast group"), (struct trig){ family, 0x02, .seq = 1, .dst = "ff02::1" });
	}
	forward_case(NAME("to the receiver: PSH|ACK seq 2000 ack 3000"),
		     (struct trig){ family, 0x18, .seq = 2000, .ack = 3000, .payload = 10 });
	icmp_case(NAME("UDP 20 bytes"), (struct trig){ family, .udp = true, .payload = 20 });
	icmp_case(NAME("UDP with IP options / ext header"),
		  (struct trig){ family, .udp = true, .payload = 100, .ip_opts = opts });
	no_reply(NAME("UDP bad checksum"), (struct trig){ family, .udp = true, .payload = 20, .bad_csum = true });
#undef NAME
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(void)
{
	struct enforce_tc_bpf *skel;
	struct bpf_map *map;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(quiet);
	skel = enforce_tc_bpf__open();
	if (!skel) {
		printf("Bail out! cannot open the TC object: %s\n", strerror(errno));
		return 1;
	}
	/* Nothing of this run may land in a pin folder. */
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_map__set_max_entries(skel->maps.vigil_ring, 1 << 16);
	if (enforce_tc_bpf__load(skel)) {
		printf("Bail out! cannot load the TC object (verifier log above)\n");
		enforce_tc_bpf__destroy(skel);
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.vigil_tc_build);
	suite(AF_INET);
	suite(AF_INET6);
	printf("1..%d\n", n_test);
	enforce_tc_bpf__destroy(skel);
	return n_fail ? 1 : 0;
}
