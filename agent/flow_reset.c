// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "flow_reset.h"
#include "log.h"
#include "netns.h"

/* The first rule (lowest id) matching a packet from peer to dport, as
 * bpf/lib/policy.bpf.h decides it; -1 when none. */
static int first_rule(struct vigil_flow_reset *r, uint8_t family, const uint8_t *peer,
		      uint8_t proto, uint16_t dport)
{
	struct vigil_pol_key6 k6 = { .prefixlen = 160, .dir = VIGIL_DIR_INGRESS };
	struct vigil_pol_key4 k4 = { .prefixlen = 64, .dir = VIGIL_DIR_INGRESS };
	struct vigil_pol_set set;
	int err;

	if (family == AF_INET) {
		memcpy(k4.addr, peer, 4);
		err = bpf_map_lookup_elem(r->pol4_fd, &k4, &set);
	} else {
		memcpy(k6.addr, peer, 16);
		err = bpf_map_lookup_elem(r->pol6_fd, &k6, &set);
	}
	if (err)
		return -1;
	for (uint32_t i = 0; i < VIGIL_RULES_MAX; i++) {
		struct vigil_pol_rule rule;

		if (!(set.rules & (1ULL << i)) || bpf_map_lookup_elem(r->rules_fd, &i, &rule) ||
		    !vigil_rule_covers(&rule, proto, dport))
			continue;
		return i;
	}
	return -1;
}

/* The ACK side s of the flow would send now, as an Ethernet frame. */
static size_t trigger(const struct vigil_flow_key *k, const struct vigil_flow *f, int s,
		      uint8_t *out)
{
	const struct vigil_flow_side *sd = &f->side[s];
	struct ethhdr *eth = (struct ethhdr *)out;
	struct tcphdr *th;
	size_t l3;

	memset(out, 0, 128);
	memcpy(eth->h_dest, sd->dst_mac, 6);
	memcpy(eth->h_source, sd->src_mac, 6);
	if (k->family == AF_INET) {
		struct iphdr *ip = (struct iphdr *)(out + ETH_HLEN);

		eth->h_proto = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_TCP;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*th));
		memcpy(&ip->saddr, k->addr[s], 4);
		memcpy(&ip->daddr, k->addr[!s], 4);
		l3 = sizeof(*ip);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(out + ETH_HLEN);

		eth->h_proto = htons(ETH_P_IPV6);
		ip6->version = 6;
		ip6->hop_limit = 64;
		ip6->nexthdr = IPPROTO_TCP;
		ip6->payload_len = htons(sizeof(*th));
		memcpy(&ip6->saddr, k->addr[s], 16);
		memcpy(&ip6->daddr, k->addr[!s], 16);
		l3 = sizeof(*ip6);
	}
	th = (struct tcphdr *)(out + ETH_HLEN + l3);
	th->source = k->port[s];
	th->dest = k->port[!s];
	th->seq = htonl(sd->seq_next);
	th->ack_seq = htonl(sd->ack);
	th->doff = 5;
	th->ack = 1;
	th->window = htons(sd->window);
	return ETH_HLEN + l3 + sizeof(*th);
}

struct ns_pass {
	struct vigil_flow_reset *r;
	unsigned id;
	int flows;
};

/* The RST to side s, built by the TC builder and sent toward s. */
static int send_rst(struct vigil_flow_reset *r, int pfd, const struct vigil_flow_key *k,
		    const struct vigil_flow *f, int s, unsigned rule_id)
{
	/* Frames 2 bytes past a 4-byte boundary: their IP headers aligned. */
	struct { uint16_t align; uint8_t f[128]; } __attribute__((aligned(4))) in_buf, out_buf;
	uint8_t *in = in_buf.f, *out = out_buf.f;
	struct __sk_buff ctx = {
		.mark = VIGIL_BUILD_TRUSTED | VIGIL_BUILD_REPORT,
		.cb = { rule_id, f->side[s].ifindex },
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out,
		    .data_size_out = sizeof(out_buf.f), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = f->side[s].ifindex,
		.sll_halen = ETH_ALEN,
	};

	o.data_size_in = trigger(k, f, s, in);
	if (bpf_prog_test_run_opts(r->build_fd, &o))
		return -errno;
	if (o.retval != 1)
		return -EINVAL;
	memcpy(to.sll_addr, f->side[s].src_mac, ETH_ALEN);
	if (sendto(pfd, out, o.data_size_out, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	r->injected++;
	return 0;
}

static bool flow_matches(struct vigil_flow_reset *r, const struct vigil_flow_key *k, unsigned id)
{
	for (int s = 0; s < 2; s++)
		if (first_rule(r, k->family, k->addr[s], k->proto, ntohs(k->port[!s])) == (int)id)
			return true;
	return false;
}

/* In one namespace: every tracked flow of it that rule id covers. */
static int reset_in_ns(void *arg)
{
	struct ns_pass *p = arg;
	struct vigil_flow_reset *r = p->r;
	struct vigil_flow_key k, next, *prev = NULL;
	struct vigil_flow f;
	uint64_t cookie;
	int pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), err = 0;

	if (pfd < 0)
		return vlog_err(-errno, "flow reset: cannot open a packet socket");
	if ((err = vigil_netns_cookie(&cookie))) {
		vlog_err(err, "flow reset: cannot read the namespace cookie");
		goto out;
	}
	while (!bpf_map_get_next_key(r->flows_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.netns_cookie != cookie || bpf_map_lookup_elem(r->flows_fd, &k, &f))
			continue;
		if ((f.flags & VIGIL_FLOW_RESET) || !f.side[0].seen || !f.side[1].seen ||
		    !flow_matches(r, &k, p->id))
			continue;
		for (int s = 0; s < 2; s++)
			if ((err = send_rst(r, pfd, &k, &f, s, p->id)))
				vlog_err(err, "flow reset: cannot send a RST toward ifindex %u",
					 f.side[s].ifindex);
		f.flags |= VIGIL_FLOW_RESET;
		f.rule_id = p->id;
		bpf_map_update_elem(r->flows_fd, &k, &f, BPF_EXIST);
		p->flows++;
	}
	err = 0;
out:
	close(pfd);
	return err;
}

int vigil_flow_reset_rule(struct vigil_flow_reset *r, unsigned id)
{
	struct ns_pass p = { .r = r, .id = id };
	int err = 0;

	for (unsigned i = 0; i < r->n_netns; i++) {
		int e = vigil_netns_run(r->netns[i], reset_in_ns, &p, NULL);

		if (e)
			err = e;
	}
	if (p.flows)
		vlog_info("reset rule %u: %d idle flows reset from their state", id, p.flows);
	return err ? err : p.flows;
}

/* Reset rules that became active since the last look. */
static void look(struct vigil_flow_reset *r, bool first)
{
	for (uint32_t i = 0; i < VIGIL_RULES_MAX; i++) {
		struct vigil_pol_rule rule;
		uint8_t a = 0;

		if (!bpf_map_lookup_elem(r->rules_fd, &i, &rule) && (rule.flags & VIGIL_RULE_ACTIVE))
			a = rule.action;
		if (a == VIGIL_ACT_RESET && r->seen_action[i] != a && !first)
			vigil_flow_reset_rule(r, i);
		r->seen_action[i] = a;
	}
}

static void *watch(void *arg)
{
	struct vigil_flow_reset *r = arg;
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	/* The first look only learns the rules already in force (their flows,
	 * if any, were dealt with when they landed); a watcher restarted for a
	 * new namespace keeps what it saw, so a rule that landed meanwhile is
	 * still news. */
	look(r, !r->primed);
	r->primed = true;
	while (!r->stop) {
		nanosleep(&ts, NULL);
		look(r, false);
	}
	return NULL;
}

int vigil_flow_reset_start(struct vigil_flow_reset *r)
{
	int err;

	/* A watcher stopped to change its namespaces starts again: without
	 * this its new thread would see the old stop and leave at once. */
	r->stop = false;
	err = pthread_create(&r->thread, NULL, watch, r);

	if (err)
		return vlog_err(-err, "cannot start the flow-reset watcher");
	r->running = true;
	return 0;
}

void vigil_flow_reset_stop(struct vigil_flow_reset *r)
{
	if (!r->running)
		return;
	r->stop = true;
	pthread_join(r->thread, NULL);
	r->running = false;
}
