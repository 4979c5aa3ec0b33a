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
#include "enforce/flow_reset.h"
#include "log.h"
#include "core/netns.h"
#include <vigil/enforce_maps.h>

/* The first rule (lowest id) matching a packet to dport seen at hook dir,
 * peer its source (ingress) or destination (egress) address, as
 * bpf/lib/rule_match.bpf.h decides it; -1 when none. */
static int first_rule(struct vigil_flow_reset *r, uint8_t dir, uint8_t family, const uint8_t *peer,
		      uint8_t proto, uint16_t dport)
{
	struct vigil_pol_key6 k6 = { .prefixlen = 160, .dir = dir };
	struct vigil_pol_key4 k4 = { .prefixlen = 64, .dir = dir };
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
	int flows;		/* reset at both ends */
	int sent, failed;	/* RSTs */
};

/* Runs the TC builder on in (len bytes) with mark and cb; its return. */
static int build_run(struct vigil_flow_reset *r, void *in, uint32_t len, void *out,
		     uint32_t *out_len, uint32_t mark, unsigned rule_id, uint32_t ifindex)
{
	struct __sk_buff ctx = { .mark = mark, .cb = { rule_id, ifindex } };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len, .data_out = out,
		    .data_size_out = out_len ? *out_len : 0, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));

	if (bpf_prog_test_run_opts(r->build_fd, &o))
		return -errno;
	if (out_len)
		*out_len = o.data_size_out;
	return o.retval;
}

#define VIGIL_VLAN_HLEN 4	/* an 802.1Q or 802.1ad tag: TPID and TCI */

/*
 * Frames the built RST (an Ethernet frame of *len bytes at *frame, with
 * VIGIL_VLAN_HLEN bytes of room before it) as side sd's packets came: with
 * their VLAN tag, or without the Ethernet header on a device that has none.
 * -EOPNOTSUPP for tags in the data, which the TC builder does not answer
 * either (docs/resets.md).
 */
static int frame_as_side(const struct vigil_flow_side *sd, uint8_t **frame, uint32_t *len,
			 struct sockaddr_ll *to)
{
	uint8_t *f = *frame;

	if (sd->l2 & VIGIL_FLOW_L2_TAGS_IN_DATA)
		return -EOPNOTSUPP;
	if (sd->l2 & VIGIL_FLOW_L2_NONE) {
		struct ethhdr *eth = (struct ethhdr *)f;

		to->sll_protocol = eth->h_proto;
		to->sll_halen = 0;
		*frame = f + ETH_HLEN;
		*len -= ETH_HLEN;
		return 0;
	}
	memcpy(to->sll_addr, sd->src_mac, ETH_ALEN);
	if (sd->l2 & VIGIL_FLOW_L2_VLAN) {
		uint16_t tci = htons(sd->vlan_tci);

		f -= VIGIL_VLAN_HLEN;
		memmove(f, f + VIGIL_VLAN_HLEN, 2 * ETH_ALEN);
		memcpy(f + 2 * ETH_ALEN, &sd->vlan_proto, 2);
		memcpy(f + 2 * ETH_ALEN + 2, &tci, 2);
		*frame = f;
		*len += VIGIL_VLAN_HLEN;
	}
	return 0;
}

/* The RST to side s, built by the TC builder and sent toward s with vigil's
 * own mark (its egress hook lets it by: SO_MARK on pfd); counted and
 * reported once it went out. */
static int send_rst(struct vigil_flow_reset *r, int pfd, const struct vigil_flow_key *k,
		    const struct vigil_flow *f, int s, unsigned rule_id)
{
	/* Frames 2 bytes past a 4-byte boundary: their IP headers aligned; the
	 * output with room before it for a VLAN tag. */
	struct { uint16_t align; uint8_t f[128]; } __attribute__((aligned(4))) in_buf;
	struct { uint16_t align; uint8_t tag[VIGIL_VLAN_HLEN]; uint8_t f[128]; }
		__attribute__((aligned(4))) out_buf;
	uint8_t *in = in_buf.f, *out = out_buf.f;
	uint32_t ifindex = f->side[s].ifindex, len = sizeof(out_buf.f), in_len;
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = ifindex,
		.sll_halen = ETH_ALEN,
	};
	int ret;

	in_len = trigger(k, f, s, in);
	ret = build_run(r, in, in_len, out, &len, VIGIL_BUILD_TRUSTED, rule_id, ifindex);
	if (ret != 1)
		return ret < 0 ? ret : -EINVAL;
	if ((ret = frame_as_side(&f->side[s], &out, &len, &to)))
		return ret;
	if (sendto(pfd, out, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	r->injected++;
	ret = build_run(r, in, in_len, NULL, NULL, VIGIL_BUILD_TRUSTED | VIGIL_BUILD_REPORT,
			rule_id, ifindex);
	if (ret < 0)
		vlog_err(ret, "flow reset: a RST went out, but its event could not be written");
	return 0;
}

/*
 * Whether rule id decides a packet of the flow, either way, at either hook:
 * a forwarded packet from side s crosses the ingress hook of the interface
 * toward s (matched on its source address, addr[s]) and the egress hook of
 * the one toward the other side (on its destination, addr[!s]); both with
 * its destination port. As the TC programs match it (docs/policy.md).
 */
static bool flow_matches(struct vigil_flow_reset *r, const struct vigil_flow_key *k, unsigned id)
{
	for (int s = 0; s < 2; s++) {
		uint16_t dport = ntohs(k->port[!s]);

		if (first_rule(r, VIGIL_DIR_INGRESS, k->family, k->addr[s], k->proto, dport) == (int)id ||
		    first_rule(r, VIGIL_DIR_EGRESS, k->family, k->addr[!s], k->proto, dport) == (int)id)
			return true;
	}
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
	uint32_t mark = VIGIL_OWN_REPLY_MARK;
	int pfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), err = 0;

	if (pfd < 0)
		return vlog_err(-errno, "flow reset: cannot open a packet socket");
	if (setsockopt(pfd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		err = vlog_err(-errno, "flow reset: cannot mark the packet socket");
		goto out;
	}
	if ((err = vigil_netns_cookie(&cookie))) {
		vlog_err(err, "flow reset: cannot read the namespace cookie");
		goto out;
	}
	while (!bpf_map_get_next_key(r->flows_fd, prev, &next)) {
		int sent = 0;

		k = next;
		prev = &k;
		if (k.netns_cookie != cookie || bpf_map_lookup_elem(r->flows_fd, &k, &f))
			continue;
		if ((f.flags & VIGIL_FLOW_RESET) || !f.side[0].seen || !f.side[1].seen ||
		    !flow_matches(r, &k, p->id))
			continue;
		for (int s = 0; s < 2; s++) {
			if ((err = send_rst(r, pfd, &k, &f, s, p->id))) {
				if (err == -EOPNOTSUPP)
					vlog_warn("flow reset: no RST toward ifindex %u: its frames carry "
						  "VLAN tags in their data, which vigil does not rebuild",
						  f.side[s].ifindex);
				else
					vlog_err(err, "flow reset: cannot send a RST toward ifindex %u",
						 f.side[s].ifindex);
				p->failed++;
				continue;
			}
			sent++;
		}
		p->sent += sent;
		p->flows += sent == 2;
		/* Marked even when a RST did not go out: what its ends still
		 * send is answered by the TC program. */
		f.flags |= VIGIL_FLOW_RESET;
		f.rule_id = p->id;
		bpf_map_update_elem(r->flows_fd, &k, &f, BPF_EXIST);
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
	if (p.sent || p.failed)
		vlog_info("reset rule %u: %d idle flows reset at both ends from their state "
			  "(%d RSTs sent, %d could not be)", id, p.flows, p.sent, p.failed);
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

/* Wakes every watcher at once when a policy lands (vigil_flow_reset_kick):
 * a generation count under a lock, waited on with a monotonic clock. */
static pthread_mutex_t kick_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kick_cond;
static pthread_once_t kick_once = PTHREAD_ONCE_INIT;
static unsigned long kick_gen;

static void kick_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&kick_cond, &a);
	pthread_condattr_destroy(&a);
}

void vigil_flow_reset_kick(void)
{
	pthread_once(&kick_once, kick_init);
	pthread_mutex_lock(&kick_lock);
	kick_gen++;
	pthread_cond_broadcast(&kick_cond);
	pthread_mutex_unlock(&kick_lock);
}

/* Sleeps up to ms milliseconds, or until a kick after generation *gen. */
static void nap(unsigned long *gen, long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += ms * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&kick_lock);
	while (kick_gen == *gen &&
	       pthread_cond_timedwait(&kick_cond, &kick_lock, &until) != ETIMEDOUT)
		;
	*gen = kick_gen;
	pthread_mutex_unlock(&kick_lock);
}

static void *watch(void *arg)
{
	struct vigil_flow_reset *r = arg;
	unsigned long gen;

	pthread_mutex_lock(&kick_lock);
	gen = kick_gen;
	pthread_mutex_unlock(&kick_lock);
	/* The first look only learns the rules already in force (their flows,
	 * if any, were dealt with when they landed); a watcher restarted for a
	 * new namespace keeps what it saw, so a rule that landed meanwhile is
	 * still news. */
	look(r, !r->primed);
	r->primed = true;
	while (!r->stop) {
		nap(&gen, 50);
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
	pthread_once(&kick_once, kick_init);
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
	vigil_flow_reset_kick();
	pthread_join(r->thread, NULL);
	r->running = false;
}
