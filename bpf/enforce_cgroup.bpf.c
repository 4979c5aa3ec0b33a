// SPDX-License-Identifier: GPL-2.0
/*
 * Local connects and unconnected UDP sends refused before any packet leaves:
 * cgroup/connect4/6 and cgroup/sendmsg4/6. The first rule that matches the
 * destination decides, in policy order, skipping rules scoped to a cgroup
 * the task is not in. Only a `deny` (EPERM) or `reject` (ECONNREFUSED
 * through bpf_set_retval) rule that names the task's cgroup refuses here;
 * any other first match lets the call through to the packet path (TC).
 *
 * What those hooks never see, so that `deny` means no packet leaves:
 * cgroup/sock_create refuses raw sockets and ICMP ping sockets in a cgroup
 * any deny rule names (they choose their destination per packet, and
 * connect is not needed to send), and cgroup_skb/egress drops the packets of
 * sockets in the cgroup to denied destinations (sockets connected before the
 * rule was loaded).
 *
 * The agent attaches these programs only to cgroups a rule names, never on
 * its own to the root: what they can refuse is what a policy asked for.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/enforce.bpf.h"	/* vigil_enforce_event */
#include "lib/rule_walk.bpf.h"
#include "lib/path.bpf.h"	/* task.bpf.h needs its sizes */
#include "lib/task.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define ECONNREFUSED 111
#define SOCK_ALLOW 1
#define SOCK_REFUSE 0

/* One refusal, with the process that asked: counted always, an event when
 * the rule's event bucket allows (vigil_enforce_event). */
static __always_inline void report(struct bpf_sock_addr *ctx, const struct vigil_match *m,
				   const struct vigil_walk *w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vigil_rule_stats *st = vigil_rule_stats_of(w->id);
	const struct vigil_pol_rule *r;
	struct vigil_enforce *ev;
	__u32 id = w->id;

	vigil_count(w->action == VIGIL_ACT_DENY ? VIGIL_CNT_ENF_CONNECT_DENIED
						: VIGIL_CNT_ENF_CONNECT_REJECTED);
	if (st)
		st->hits++;	/* per CPU */
	r = bpf_map_lookup_elem(&vigil_rules, &id);
	if (!r)
		return;
	ev = vigil_enforce_event(r, id, st, bpf_ktime_get_ns());
	if (!ev)
		return;
	vigil_proc_fill(&ev->proc, task,
			vigil_exec_key_get(task->tgid, BPF_CORE_READ(task, start_time)));
	ev->reply = VIGIL_REPLY_CONNECT_REFUSED;
	ev->dir = VIGIL_DIR_EGRESS;
	ev->family = m->family;
	ev->proto = m->proto;
	ev->flags = VIGIL_ENF_HAS_PROC;
	ev->dport = m->dport;
	__builtin_memcpy(ev->daddr, m->peer, m->family == 2 ? 4 : 16);
	ev->cookie = bpf_get_socket_cookie(ctx);
	vigil_submit(ev);
	if (st)
		st->events++;
}

static __always_inline int decide(struct bpf_sock_addr *ctx, const struct vigil_match *m)
{
	struct vigil_walk w = { .by_cgroup = VIGIL_WALK_TASK };

	vigil_walk(m, &w);
	/* The first match decides; only refusals scoped to a cgroup are ours,
	 * anything else goes on to the packet path. */
	if (!w.scoped || (w.action != VIGIL_ACT_DENY && w.action != VIGIL_ACT_REJECT))
		return SOCK_ALLOW;
	report(ctx, m, &w);
	if (w.action == VIGIL_ACT_REJECT)
		bpf_set_retval(-ECONNREFUSED);
	return SOCK_REFUSE;	/* EPERM unless a retval was set */
}

/* The destination as the hooks see it: user_ip4/6 and user_port. */
static __always_inline int decide_to(struct bpf_sock_addr *ctx, __u8 family, const void *daddr)
{
	struct vigil_match m = {
		.family = family,
		.proto = ctx->protocol,
		.dir = VIGIL_DIR_EGRESS,
		.dport = bpf_ntohs(ctx->user_port),
		.peer = daddr,
	};

	return decide(ctx, &m);
}

static __always_inline int decide4(struct bpf_sock_addr *ctx)
{
	__u32 daddr = ctx->user_ip4;

	return decide_to(ctx, 2 /* AF_INET */, &daddr);
}

static __always_inline int decide6(struct bpf_sock_addr *ctx)
{
	__u32 daddr[4] = {
		ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3],
	};

	/* ::ffff:a.b.c.d from a dual-stack socket is IPv4 on the wire: it
	 * meets the IPv4 rules, or an IPv6 socket would walk around them. */
	if (!daddr[0] && !daddr[1] && daddr[2] == bpf_htonl(0xffff))
		return decide_to(ctx, 2 /* AF_INET */, &daddr[3]);
	return decide_to(ctx, 10 /* AF_INET6 */, daddr);
}

SEC("cgroup/connect4")
int enforce_connect4(struct bpf_sock_addr *ctx)
{
	return decide4(ctx);
}

SEC("cgroup/connect6")
int enforce_connect6(struct bpf_sock_addr *ctx)
{
	return decide6(ctx);
}

/* Runs only for sends that carry an address (unconnected UDP). */
SEC("cgroup/sendmsg4")
int enforce_sendmsg4(struct bpf_sock_addr *ctx)
{
	return decide4(ctx);
}

SEC("cgroup/sendmsg6")
int enforce_sendmsg6(struct bpf_sock_addr *ctx)
{
	return decide6(ctx);
}

#define VIGIL_SOCK_DGRAM 2
#define VIGIL_SOCK_RAW 3

/*
 * Raw sockets (any protocol: with IP_HDRINCL they write any header) and
 * ICMP/ICMPv6 ping sockets (SOCK_DGRAM, which need no CAP_NET_RAW where
 * net.ipv4.ping_group_range allows): refused with EPERM for a task in a
 * cgroup that any deny rule names, whatever the rule's addresses and ports:
 * such a socket reaches any address, and no connect or sendmsg hook sees
 * where. Runs for AF_INET and AF_INET6 sockets only (packet sockets are not
 * inet: docs/policy.md says what is left).
 */
SEC("cgroup/sock_create")
int enforce_sock_create(struct bpf_sock *sk)
{
	__u32 type = sk->type, proto = sk->protocol;
	__u32 found;

	if (type != VIGIL_SOCK_RAW &&
	    !(type == VIGIL_SOCK_DGRAM && (proto == VIGIL_IPPROTO_ICMP || proto == VIGIL_IPPROTO_ICMPV6)))
		return SOCK_ALLOW;
	found = vigil_task_denied();
	if (!found)
		return SOCK_ALLOW;
	vigil_count(VIGIL_CNT_ENF_SOCK_REFUSED);
	found = (found - 1) & (VIGIL_RULES_MAX - 1);
	{
		struct vigil_rule_stats *st = vigil_rule_stats_of(found);

		if (st)
			st->hits++;
	}
	return SOCK_REFUSE;
}

/* The destination of a packet as the cgroup_skb hook sees it: from its IP
 * header at offset 0 (no Ethernet header here). 0 when it is IPv4 or IPv6. */
static __always_inline int skb_dest(struct __sk_buff *skb, struct vigil_pkt *p)
{
	__u8 first;

	__builtin_memset(p, 0, sizeof(*p));
	if (bpf_skb_load_bytes(skb, 0, &first, 1))
		return -1;
	p->l3_off = 0;
	if (first >> 4 == 4)
		return vigil_parse_ipv4(skb, false, p);
	if (first >> 4 == 6)
		return vigil_parse_ipv6(skb, false, p);
	return -1;
}

/*
 * The backstop: a packet from a socket in a cgroup a rule names (the hook
 * runs for the cgroup the socket was created in) to a destination the
 * first matching rule denies or rejects for that cgroup is dropped. The
 * connect hook refused every connect made while the rule was in force; this
 * catches sockets connected before. Counted (enforce_egress_dropped) and
 * counted on the rule.
 */
SEC("cgroup_skb/egress")
int enforce_skb_egress(struct __sk_buff *skb)
{
	struct vigil_walk w = {};
	struct vigil_rule_stats *st;
	struct vigil_match m;
	struct vigil_pkt p;
	int i;

	if (skb_dest(skb, &p))
		return SOCK_ALLOW;
	if (!p.unparsed && p.frag != VIGIL_FRAG_LATER && vigil_l4_port_hlen(p.proto)) {
		struct { __be16 sport, dport; } ports;

		if (!bpf_skb_load_bytes(skb, p.l4_off, &ports, sizeof(ports)))
			p.dport = ports.dport;
	}
	for (i = 0; i < VIGIL_CG_LEVELS; i++)
		w.ancestors[i] = bpf_skb_ancestor_cgroup_id(skb, i);
	m.family = p.family;
	m.proto = p.proto;
	m.dir = VIGIL_DIR_EGRESS;
	m.dport = bpf_ntohs(p.dport);
	m.peer = p.daddr;
	vigil_walk_ancestors(&m, &w);
	if (!w.scoped || (w.action != VIGIL_ACT_DENY && w.action != VIGIL_ACT_REJECT))
		return SOCK_ALLOW;
	vigil_count(VIGIL_CNT_ENF_EGRESS_DROPPED);
	st = vigil_rule_stats_of(w.id);
	if (st)
		st->hits++;
	return SOCK_REFUSE;
}
