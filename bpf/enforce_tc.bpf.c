// SPDX-License-Identifier: GPL-2.0
/*
 * Network rules at TC (TCX ingress and egress) on the interfaces a policy
 * names: drop, reject (RST or ICMP port unreachable back to the sender) and
 * reset (RST to both ends), each reply rate-limited and each decision
 * reported. The agent attaches vigil_tc_ingress / vigil_tc_egress from a
 * thread inside the intended network namespace (agent/enforce/enforce_tc.c).
 *
 * Where the reply goes: a trigger seen at ingress came from the wire, so its
 * RST goes back out the same interface; one seen at egress came from a local
 * socket, so its RST is handed to the local stack (BPF_F_INGRESS), which
 * fails the socket at once (ECONNREFUSED for a SYN).
 *
 * vigil_tc_build_rst is the builder alone, for BPF_PROG_TEST_RUN: the unit
 * tests (tests/rst_build.c) and the agent's RSTs for idle flows use it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/bcast.bpf.h"
#include "lib/enforce.bpf.h"
#include "lib/flow.bpf.h"
#include "lib/pkt_csum.bpf.h"
#include "lib/pkt_rst.bpf.h"
#include "lib/pkt_icmp.bpf.h"
#include "lib/xdp_handoff.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define TC_ACT_UNSPEC (-1)	/* TCX_NEXT: no objection, the next program decides */
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7
#define BPF_F_INGRESS_FLAG 1

/*
 * Every packet vigil makes carries VIGIL_OWN_REPLY_MARK (include/vigil/
 * enforce_events.h): the replies sent back to the sender, the RST that a
 * reset sends on to the receiver, and the RSTs the agent injects for idle
 * flows (SO_MARK on its packet socket). Both hooks let a marked packet
 * through unexamined, so vigil never takes its own RST for a trigger (on a
 * router the RST to the receiver crosses the outgoing interface's egress
 * hook, and a RST handed to the local stack may be routed on) and never
 * drops it as one; and matching it against the policy again took a fifth
 * of vigil's BPF time per reply. The egress hook clears the mark (the packet
 * leaves); a marked packet delivered locally is consumed by its socket. A
 * packet that leaves with this mark set locally (SO_MARK, which needs
 * CAP_NET_ADMIN) passes the egress hook the same way.
 */
/* Keep per-flow sequence state at ingress (a router or bridge). */
const volatile __u8 vigil_track_flows = 0;

/* Where the answer to a trigger seen in dir goes: back out for ingress,
 * up to the local stack for egress. */
static __always_inline __u64 reply_flags(__u8 dir)
{
	return dir == VIGIL_DIR_INGRESS ? 0 : BPF_F_INGRESS_FLAG;
}

static __always_inline void mark_own(struct __sk_buff *skb)
{
	skb->mark = VIGIL_OWN_REPLY_MARK;
}

/* How the RST's TCP checksum is left: 1 PARTIAL (the trigger's pending sum
 * is at its TCP header, where the RST's will be), 0 complete, -1 no RST: a
 * PARTIAL trigger whose pending sum is anywhere else (the RST would get a
 * sum completed over the wrong bytes). */
static __always_inline int rst_partial(struct __sk_buff *skb, const struct vigil_pkt *p)
{
	if (vigil_ip_summed(skb) != VIGIL_CHECKSUM_PARTIAL)
		return 0;
	return vigil_partial_at(skb, p->l4_off, offsetof(struct tcphdr, check)) ? 1 : -1;
}

/* The RST back to the sender, in place of the trigger. */
static __always_inline int reject_tcp(struct __sk_buff *skb, const struct vigil_pkt *p, __u8 dir)
{
	int partial = rst_partial(skb, p);

	if (partial < 0 || vigil_tc_build_rst(skb, p, true, partial)) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return -1;
	}
	mark_own(skb);
	return bpf_redirect(skb->ifindex, reply_flags(dir));
}

static __always_inline int reject_udp(struct __sk_buff *skb, const struct vigil_pkt *p, __u8 dir)
{
	if (vigil_tc_build_icmp(skb, p)) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return -1;
	}
	mark_own(skb);
	return bpf_redirect(skb->ifindex, reply_flags(dir));
}

/*
 * Both ends: the RST to the sender goes out as a clone; the trigger itself
 * is rewritten again into the RST to the receiver and goes on its way, so
 * routing (or the local stack) takes it to the other end. Its seq is the
 * trigger's (the receiver's RCV.NXT when the trigger is the next segment in
 * order), or, with flow state (rcv_nxt != NULL), what the receiver last
 * acked when that is further on: a trigger that is a retransmission or a
 * keepalive probe (seq = SND.NXT - 1) carries an old seq, and a RST with
 * one is refused by the receiver.
 */
static __always_inline int reset_tcp(struct __sk_buff *skb, struct vigil_pkt *p, __u8 dir,
				     const __u32 *rcv_nxt)
{
	int partial = rst_partial(skb, p);
	__u32 mark = skb->mark;
	long err;

	if (partial < 0 || vigil_tc_build_rst(skb, p, true, partial)) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return -1;
	}
	mark_own(skb);	/* the clone's */
	err = bpf_clone_redirect(skb, skb->ifindex, reply_flags(dir));
	/* The RST going on: at ingress it is marked too (it may be routed out
	 * through another enforced interface); at egress it leaves now. */
	skb->mark = dir == VIGIL_DIR_INGRESS ? VIGIL_OWN_REPLY_MARK : mark;
	if (err) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return -1;
	}
	/* The packet is the bare RST now: nothing left to strip. */
	p->l4_off = p->l3_off + (p->family == VIGIL_AF_INET ? 20 : 40);
	p->l3_len = p->l4_off - p->l3_off;
	if (rcv_nxt && vigil_seq_after(*rcv_nxt, p->seq))
		p->seq = *rcv_nxt;
	if (vigil_tc_build_rst(skb, p, false, partial)) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return -1;
	}
	return 0;	/* sent on its way: see answer() */
}

/* The namespace the packet is in (a scalar: read for the broadcast walk). */
static __always_inline const struct net *pkt_net(struct __sk_buff *skb)
{
	return BPF_CORE_READ(vigil_skb_of(skb), dev, nd_net.net);
}

/* One packet being decided: what the subprograms below share. */
struct decision {
	struct vigil_pkt p;
	const struct vigil_pol_rule *r;
	__u32 id;
	__u32 ifindex;
	__u8 dir;
	__u8 reply;		/* enum vigil_reply, set by answer() */
	__u8 has_rcv_nxt;	/* flow state knows the receiver's RCV.NXT */
	__u32 rcv_nxt;
	__u64 now;		/* read once for the rate limits */
};

/* Answers d->p as rule d->r says; returns the TC verdict and sets d->reply.
 * A function of its own (not inlined), as report() and track(): the
 * builders' stack and the caller's do not fit in one 512-byte frame. */
static __noinline int answer(struct __sk_buff *skb, struct decision *d)
{
	struct vigil_pkt *p = &d->p;
	bool tcp = vigil_rst_eligible(p), udp = vigil_icmp_eligible(p);
	int ret;

	d->reply = VIGIL_REPLY_NONE;
	if (d->r->action == VIGIL_ACT_DROP)
		return TC_ACT_SHOT;
	if (p->proto != VIGIL_IPPROTO_TCP && p->proto != VIGIL_IPPROTO_UDP)
		return TC_ACT_SHOT;
	if ((!tcp && !udp) || !vigil_reply_addr_ok(p) || !vigil_tc_l4_csum_ok(skb, p) ||
	    vigil_directed_bcast(pkt_net(skb), p)) {
		d->reply = VIGIL_REPLY_INELIGIBLE;
		return TC_ACT_SHOT;
	}
	if (!vigil_reply_allowed(d->r, d->id, p->family, p->saddr, d->now)) {
		d->reply = VIGIL_REPLY_SUPPRESSED;
		return TC_ACT_SHOT;
	}
	if (udp) {
		ret = reject_udp(skb, p, d->dir);
		d->reply = VIGIL_REPLY_ICMP_UNREACH;
	} else if (d->r->action == VIGIL_ACT_RESET) {
		ret = reset_tcp(skb, p, d->dir, d->has_rcv_nxt ? &d->rcv_nxt : NULL);
		d->reply = VIGIL_REPLY_RST_BOTH;
	} else {
		ret = reject_tcp(skb, p, d->dir);
		d->reply = VIGIL_REPLY_RST_SENDER;
	}
	if (ret < 0) {
		d->reply = VIGIL_REPLY_NONE;
		return TC_ACT_SHOT;
	}
	/* reset_tcp's RST to the receiver goes on to the next program on the
	 * hook, as any packet vigil lets through; the replies sent back are
	 * redirected. */
	return ret == 0 ? TC_ACT_UNSPEC : ret;
}

static __noinline void report(const struct decision *d)
{
	vigil_enforce_report(&d->p, d->r, d->id, d->reply, d->dir, d->ifindex, d->now);
}

/* Does the packet's device put an Ethernet header before IP? */
static __always_inline bool skb_eth(struct __sk_buff *skb)
{
	return vigil_dev_type_eth(BPF_CORE_READ(vigil_skb_of(skb), dev, type));
}

/* The namespace the packet is in, as SO_NETNS_COOKIE names it to the agent. */
static __always_inline __u64 netns_cookie(struct __sk_buff *skb)
{
	return BPF_CORE_READ(vigil_skb_of(skb), dev, nd_net.net, net_cookie);
}

static __noinline struct vigil_flow *track(struct __sk_buff *skb, const struct decision *d)
{
	struct vigil_flow_tag tag = {};

	if (skb->vlan_present) {
		tag.tci = skb->vlan_tci;
		tag.proto = skb->vlan_proto;
	}
	return vigil_flow_track(&d->p, netns_cookie(skb), d->ifindex, tag, bpf_ktime_get_ns());
}

/* by_identity: only a packet XDP handed over by its identity is decided
 * (vigil_tc_xdp_ingress, untagged); everything else goes on. */
static __always_inline int enforce(struct __sk_buff *skb, __u8 dir, bool by_identity)
{
	struct vigil_flow *f = NULL;
	struct decision d = { .dir = dir, .ifindex = skb->ifindex };
	int verdict;

	/* What vigil does not act on goes to the next program on the hook (a
	 * TCX program attached after vigil's, then classic clsact filters),
	 * and passes if there is none: vigil allows nothing another tool
	 * would refuse. */
	if (skb->mark == VIGIL_OWN_REPLY_MARK) {
		if (dir == VIGIL_DIR_EGRESS)
			skb->mark = 0;
		return TC_ACT_UNSPEC;
	}
	if (vigil_pkt_parse(skb, false, skb_eth(skb), &d.p))
		return TC_ACT_UNSPEC;
	if (by_identity && !vigil_handoff_take(&d.p, netns_cookie(skb), d.ifindex))
		return TC_ACT_UNSPEC;
	if (d.p.unparsed)
		return vigil_unparsed_drop(&d.p, dir, d.ifindex) ? TC_ACT_SHOT : TC_ACT_UNSPEC;
	if (vigil_track_flows && dir == VIGIL_DIR_INGRESS) {
		f = track(skb, &d);
		d.has_rcv_nxt = f && vigil_flow_rcv_nxt(f, &d.p, &d.rcv_nxt);
	}
	d.r = vigil_pkt_rule(&d.p, dir, &d.id);
	if (!vigil_acts(d.r))
		d.r = vigil_reset_flow_rule(f, &d.p, &d.id);
	if (!vigil_acts(d.r))
		return TC_ACT_UNSPEC;
	d.now = bpf_ktime_get_ns();
	verdict = answer(skb, &d);
	if (f && d.r->action == VIGIL_ACT_RESET && d.p.proto == VIGIL_IPPROTO_TCP) {
		f->flags |= VIGIL_FLOW_RESET;
		f->rule_id = d.id;
	}
	report(&d);
	return verdict;
}

SEC("tc")
int vigil_tc_ingress(struct __sk_buff *skb)
{
	return enforce(skb, VIGIL_DIR_INGRESS, false);
}

SEC("tc")
int vigil_tc_egress(struct __sk_buff *skb)
{
	return enforce(skb, VIGIL_DIR_EGRESS, false);
}

/* TC ingress of an interface enforced with XDP: only what the XDP program
 * handed over to be reset is decided here, as vigil_tc_ingress would;
 * everything else it passed already. Handed over: tagged in the metadata
 * (VIGIL_XDP_META_RESET), or, untagged, named in vigil_xdp_handoff (an XDP
 * without metadata: lib/xdp_handoff.bpf.h). Reading data_meta needs no
 * helper: this program loads where bpf_xdp_adjust_meta is refused. */
SEC("tc")
int vigil_tc_xdp_ingress(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	__u32 *tag = (void *)(long)skb->data_meta;
	bool tagged = (void *)(tag + 1) <= data && *tag == VIGIL_XDP_META_RESET;

	return enforce(skb, VIGIL_DIR_INGRESS, !tagged);
}

/* An RST the agent injects for an idle flow: counted, and reported. */
static __noinline void report_injected(struct __sk_buff *skb, const struct vigil_pkt *p)
{
	__u32 id = skb->cb[0];
	const struct vigil_pol_rule *r = bpf_map_lookup_elem(&vigil_rules, &id);

	vigil_count(VIGIL_CNT_ENF_INJECTED);
	if (r)
		vigil_enforce_report(p, r, id, VIGIL_REPLY_INJECTED, VIGIL_DIR_INGRESS, skb->cb[1],
				     bpf_ktime_get_ns());
}

/*
 * The builder alone, for BPF_PROG_TEST_RUN: the input frame is a trigger,
 * the output the reply vigil would send for it (RST to the sender for TCP,
 * to the receiver with VIGIL_BUILD_TO_RECEIVER in skb->mark; ICMP port
 * unreachable for UDP), with a complete checksum. Returns 1 when a reply was
 * built, 0 when none is due (RST, fragment, bad checksum, group address), 2
 * when a helper refused. VIGIL_BUILD_TRUSTED skips the checksum check: the
 * agent's own triggers, made from flow state for idle flows, carry none.
 */

SEC("tc")
int vigil_tc_build(struct __sk_buff *skb)
{
	__u32 mark = skb->mark;	/* read once: clang would offset the ctx pointer */
	struct vigil_pkt p;

	if (vigil_pkt_parse(skb, false, skb_eth(skb), &p) || p.unparsed || !vigil_reply_addr_ok(&p))
		return 0;
	if (!(mark & VIGIL_BUILD_TRUSTED) && !vigil_l4_csum_verify(skb, false, &p))
		return 0;
	if (mark & VIGIL_BUILD_REPORT) {	/* the RST went out: nothing to build */
		report_injected(skb, &p);
		return 1;
	}
	if (vigil_rst_eligible(&p))
		return vigil_tc_build_rst(skb, &p, !(mark & VIGIL_BUILD_TO_RECEIVER), false) ? 2 : 1;
	if (vigil_icmp_eligible(&p))
		return vigil_tc_build_icmp(skb, &p) ? 2 : 1;
	return 0;
}
