// SPDX-License-Identifier: GPL-2.0
/*
 * Network rules at XDP, an option for ingress: drop and reject (RST or ICMP
 * port unreachable back out with XDP_TX) here, cheaper than TC per packet:
 * no skb is built for what it drops or answers. A reset needs two frames,
 * one to each end, and XDP sends one: the trigger is passed up to
 * vigil_tc_xdp_ingress on the same interface, which resets both ends as TC
 * does; tagged in its metadata (VIGIL_XDP_META_RESET), or, where XDP has no
 * metadata, named by its identity in vigil_xdp_handoff. With --track-flows
 * this program keeps the flow state that TC ingress keeps in TC mode (idle
 * flows' resets).
 *
 * XDP sees no checksum state, so every trigger's checksum is computed. Over
 * veth, packets a local socket sent arrive with partial checksums unless the
 * sending side has tx checksumming off; those get no reply (counted as
 * ineligible) and are dropped.
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

/* Keep per-flow sequence state (a router or bridge). */
const volatile __u8 vigil_track_flows = 0;

struct decision {
	struct vigil_pkt p;
	const struct vigil_pol_rule *r;
	__u32 id;
	__u32 ifindex;
	__u8 reply;
	__u64 now;	/* read once for the rate limits */
};

/* The namespace the frame arrived in (a scalar: read for the broadcast walk). */
static __always_inline const struct net *xdp_net(struct xdp_md *xdp)
{
	return BPF_CORE_READ(vigil_xdp_buff_of(xdp), rxq, dev, nd_net.net);
}

/* Answers d->p in place; the XDP verdict. Not inlined: see enforce_tc. */
static __noinline int answer(struct xdp_md *xdp, struct decision *d)
{
	struct vigil_pkt *p = &d->p;
	bool tcp = vigil_rst_eligible(p), udp = vigil_icmp_eligible(p);
	long err;

	d->reply = VIGIL_REPLY_NONE;
	if (d->r->action == VIGIL_ACT_DROP)
		return XDP_DROP;
	if (p->proto != VIGIL_IPPROTO_TCP && p->proto != VIGIL_IPPROTO_UDP)
		return XDP_DROP;
	if ((!tcp && !udp) || !vigil_reply_addr_ok(p) || !vigil_l4_csum_verify(xdp, true, p) ||
	    vigil_directed_bcast(xdp_net(xdp), p)) {
		d->reply = VIGIL_REPLY_INELIGIBLE;
		return XDP_DROP;
	}
	if (!vigil_reply_allowed(d->r, d->id, p->family, p->saddr, d->now)) {
		d->reply = VIGIL_REPLY_SUPPRESSED;
		return XDP_DROP;
	}
	err = udp ? vigil_xdp_build_icmp(xdp, p) : vigil_xdp_build_rst(xdp, p);
	if (err) {
		vigil_count(VIGIL_CNT_ENF_BUILD_FAILED);
		return XDP_DROP;
	}
	d->reply = udp ? VIGIL_REPLY_ICMP_UNREACH : VIGIL_REPLY_RST_SENDER;
	return XDP_TX;
}

static __noinline void report(const struct decision *d)
{
	vigil_enforce_report(&d->p, d->r, d->id, d->reply, VIGIL_DIR_INGRESS, d->ifindex, d->now);
}

/* The namespace the frame arrived in, as SO_NETNS_COOKIE names it. */
static __always_inline __u64 xdp_netns_cookie(struct xdp_md *xdp)
{
	return BPF_CORE_READ(vigil_xdp_buff_of(xdp), rxq, dev, nd_net.net, net_cookie);
}

static __noinline struct vigil_flow *track(struct xdp_md *xdp, const struct decision *d)
{
	struct vigil_flow_tag none = {};	/* XDP sees tags in the data only */

	return vigil_flow_track(&d->p, xdp_netns_cookie(xdp), d->ifindex, none, bpf_ktime_get_ns());
}

/* Tags the frame for vigil_tc_xdp_ingress: 0, or the helper's error (a
 * driver without metadata room). Only vigil_xdp_ingress calls the helper:
 * a kernel whose verifier refuses it to XDP still loads the other. */
static __always_inline int hand_to_tc_meta(struct xdp_md *xdp)
{
	__u32 *tag;

	if (bpf_xdp_adjust_meta(xdp, -(int)sizeof(*tag)))
		return -1;
	tag = (void *)(long)xdp->data_meta;
	if ((void *)(tag + 1) > (void *)(long)xdp->data)
		return -1;
	*tag = VIGIL_XDP_META_RESET;
	return 0;
}

/* Hands d->p to vigil_tc_xdp_ingress: in the frame's metadata where meta
 * is set and the driver has room, else by the packet's identity
 * (lib/xdp_handoff.bpf.h). 0 when handed over. */
static __always_inline int hand_to_tc(struct xdp_md *xdp, const struct decision *d, bool meta)
{
	if (meta && !hand_to_tc_meta(xdp))
		return 0;
	return vigil_handoff_put(&d->p, xdp_netns_cookie(xdp), d->ifindex) ? -1 : 0;
}

/* meta: a constant at each program below, so each is its own code. */
static __always_inline int xdp_enforce(struct xdp_md *xdp, bool meta)
{
	struct decision d = { .ifindex = xdp->ingress_ifindex };
	struct vigil_flow *f = NULL;
	int verdict;

	if (vigil_pkt_parse(xdp, true,
			    vigil_dev_type_eth(BPF_CORE_READ(vigil_xdp_buff_of(xdp), rxq, dev, type)),
			    &d.p))
		return XDP_PASS;
	if (d.p.unparsed)
		return vigil_unparsed_drop(&d.p, VIGIL_DIR_INGRESS, d.ifindex) ? XDP_DROP : XDP_PASS;
	if (vigil_track_flows)
		f = track(xdp, &d);
	d.r = vigil_pkt_rule(&d.p, VIGIL_DIR_INGRESS, &d.id);
	if (!vigil_acts(d.r))
		d.r = vigil_reset_flow_rule(f, &d.p, &d.id);
	if (!vigil_acts(d.r))
		return XDP_PASS;
	/* A reset goes to TC whole (both RSTs, the limits, the event); only
	 * when it cannot be handed over does XDP answer the sender alone. */
	if (d.r->action == VIGIL_ACT_RESET && d.p.proto == VIGIL_IPPROTO_TCP) {
		if (f) {
			f->flags |= VIGIL_FLOW_RESET;
			f->rule_id = d.id;
		}
		if (!hand_to_tc(xdp, &d, meta))
			return XDP_PASS;
	}
	d.now = bpf_ktime_get_ns();
	verdict = answer(xdp, &d);
	report(&d);
	return verdict;
}

/* The handoff through metadata, and by identity where the driver has no
 * metadata room (feature "xdp_meta", docs/kernels.md). */
SEC("xdp")
int vigil_xdp_ingress(struct xdp_md *xdp)
{
	return xdp_enforce(xdp, true);
}

/* For a kernel that refuses bpf_xdp_adjust_meta to XDP: the handoff by
 * identity only. The agent loads one of the two. */
SEC("xdp")
int vigil_xdp_ingress_nometa(struct xdp_md *xdp)
{
	return xdp_enforce(xdp, false);
}
