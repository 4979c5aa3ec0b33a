/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the TC and XDP enforcement programs share past the packet builders:
 * finding the rule for a parsed packet, counting, and the enforce event
 * (rate-limited per rule; the counters keep the total).
 */
#ifndef VIGIL_ENFORCE_BPF_H
#define VIGIL_ENFORCE_BPF_H

#include "ring.bpf.h"
#include "rule_match.bpf.h"
#include "ratelimit.bpf.h"
#include "pkt.bpf.h"

/* The rule deciding p seen in direction dir (its id in *id), or NULL;
 * reversed: as if p had come from its destination (the flow's other way). */
static __always_inline const struct vigil_pol_rule *vigil_pkt_rule_as(const struct vigil_pkt *p,
								    __u8 dir, bool reversed,
								    __u32 *id)
{
	bool from_src = (dir == VIGIL_DIR_INGRESS) != reversed;
	struct vigil_match m = {
		.family = p->family,
		.proto = p->proto,
		.dir = dir,
		.dport = bpf_ntohs(reversed ? p->sport : p->dport),
		.peer = from_src ? p->saddr : p->daddr,
	};

	return vigil_policy_match(&m, id);
}

static __always_inline const struct vigil_pol_rule *vigil_pkt_rule(const struct vigil_pkt *p,
								 __u8 dir, __u32 *id)
{
	return vigil_pkt_rule_as(p, dir, false, id);
}

/*
 * A flow vigil reset stays reset while a reset rule in force covers it:
 * whatever its ends still send is answered under that rule. The packet's
 * own direction was matched already; here the flow's other one is, as
 * either hook would see it (on a router each packet crosses an ingress and
 * an egress hook: the rule may have named the other end's port with its
 * source address, or with its destination address). Matched again, not
 * looked up by the id the flow was reset under: ids move when a policy is
 * reloaded, and an unloaded rule answers nothing.
 */
static __noinline const struct vigil_pol_rule *vigil_reset_flow_rule(const struct vigil_flow *f,
								     const struct vigil_pkt *p,
								     __u32 *id)
{
	const struct vigil_pol_rule *r;

	if (!f || !(f->flags & VIGIL_FLOW_RESET))
		return NULL;
	r = vigil_pkt_rule_as(p, VIGIL_DIR_INGRESS, true, id);
	if (r && r->action == VIGIL_ACT_RESET)
		return r;
	r = vigil_pkt_rule_as(p, VIGIL_DIR_EGRESS, true, id);
	return r && r->action == VIGIL_ACT_RESET ? r : NULL;
}

/*
 * XDP hands a reset to TC: XDP can send one frame (back to the sender), a
 * reset sends two. The XDP program passes the trigger up with this tag in
 * its metadata (bpf_xdp_adjust_meta); vigil_tc_xdp_ingress, on the same
 * interface's TC ingress, decides it again as TC does (the same maps) and
 * resets both ends. Without metadata (a kernel that refuses the helper to
 * XDP, a driver without room), XDP names the packet in vigil_xdp_handoff
 * instead (lib/xdp_handoff.bpf.h); the rest TC passes at once.
 */
#define VIGIL_XDP_META_RESET 0x76677273	/* "vgrs" */

static __always_inline bool vigil_acts(const struct vigil_pol_rule *r)
{
	return r && r->action != VIGIL_ACT_ALLOW && r->action != VIGIL_ACT_DENY;
}

static __always_inline void vigil_action_count(__u8 action)
{
	if (action == VIGIL_ACT_DROP)
		vigil_count(VIGIL_CNT_ENF_DROP);
	else if (action == VIGIL_ACT_REJECT)
		vigil_count(VIGIL_CNT_ENF_REJECT);
	else if (action == VIGIL_ACT_RESET)
		vigil_count(VIGIL_CNT_ENF_RESET);
}

/* Counts the reply in the rule's stats and the counters. */
static __always_inline void vigil_reply_count(__u32 id, __u8 reply)
{
	struct vigil_rule_stats *st = vigil_rule_stats_of(id);

	switch (reply) {
	case VIGIL_REPLY_RST_SENDER:
	case VIGIL_REPLY_RST_BOTH:
		vigil_count(VIGIL_CNT_ENF_RST_SENT);
		if (st)
			st->replies += reply == VIGIL_REPLY_RST_BOTH ? 2 : 1;
		break;
	case VIGIL_REPLY_ICMP_UNREACH:
		vigil_count(VIGIL_CNT_ENF_ICMP_SENT);
		if (st)
			st->replies++;
		break;
	case VIGIL_REPLY_SUPPRESSED:
		vigil_count(VIGIL_CNT_ENF_REPLY_SUPPRESSED);
		if (st)
			st->replies_suppressed++;
		break;
	case VIGIL_REPLY_INELIGIBLE:
		vigil_count(VIGIL_CNT_ENF_INELIGIBLE);
		break;
	}
}

/* An enforce event for rule id, reserved if the rule's event bucket allows
 * (else held, counted, and reported by the rule's next event): everything
 * past the header zeroed, suppressed filled in. NULL when none is due.
 * Every enforcing hook writes its events through here; submit with
 * vigil_submit and count st->events. now: bpf_ktime_get_ns(), read once by
 * the caller for all it decides on a packet. */
static __always_inline struct vigil_enforce *vigil_enforce_event(const struct vigil_pol_rule *r,
								__u32 id,
								struct vigil_rule_stats *st,
								__u64 now)
{
	struct vigil_enforce *ev;
	__u32 held = 0;

	if (!vigil_event_allowed(r, id, now, &held)) {
		vigil_count(VIGIL_CNT_ENF_EVENT_SUPPRESSED);
		if (st)
			st->events_suppressed++;
		return NULL;
	}
	ev = vigil_reserve_at(VIGIL_EV_ENFORCE, sizeof(*ev), now);
	if (!ev)
		return NULL;
	__builtin_memset(&ev->proc, 0, sizeof(*ev) - sizeof(ev->hdr));
	ev->rule_id = id;
	ev->action = r->action;
	ev->suppressed = held;
	return ev;
}

/* One decision on a packet: counted always, an event when the rule's event
 * bucket allows. */
static __always_inline void vigil_enforce_report(const struct vigil_pkt *p,
						 const struct vigil_pol_rule *r, __u32 id,
						 __u8 reply, __u8 dir, __u32 ifindex, __u64 now)
{
	struct vigil_rule_stats *st = vigil_rule_stats_of(id);
	struct vigil_enforce *ev;

	vigil_action_count(r->action);
	vigil_reply_count(id, reply);
	if (st)
		st->hits++;
	ev = vigil_enforce_event(r, id, st, now);
	if (!ev)
		return;
	ev->reply = reply;
	ev->dir = dir;
	ev->family = p->family;
	ev->proto = p->proto;
	ev->tcp_flags = p->proto == VIGIL_IPPROTO_TCP ? p->tcp_flags : 0;
	ev->ifindex = ifindex;
	ev->sport = bpf_ntohs(p->sport);
	ev->dport = bpf_ntohs(p->dport);
	__builtin_memcpy(ev->saddr, p->saddr, 16);
	__builtin_memcpy(ev->daddr, p->daddr, 16);
	vigil_submit(ev);
	if (st)
		st->events++;
}

/*
 * Fail closed: a packet whose ports vigil could not read (p->unparsed) is
 * dropped, never answered, when a drop, reject or reset rule covering its
 * peer could match it; counted under its reason and reported under that
 * rule (reply "dropped_unparsed"; a frame whose address is unknown too,
 * VIGIL_UNPARSED_VLAN, is counted without an event). True: drop it. False: no rule could
 * match, it goes on as any packet vigil does not act on. Not inlined: the
 * callers' frames are full.
 */
static __noinline bool vigil_unparsed_drop(const struct vigil_pkt *p, __u8 dir, __u32 ifindex)
{
	struct vigil_match m = {
		.family = p->family,
		.proto = p->proto,
		.dir = dir,
		.peer = dir == VIGIL_DIR_INGRESS ? p->saddr : p->daddr,
	};	/* family 0 (VLAN tags past the walk): no address to look up */
	const struct vigil_pol_rule *r;
	__u32 id = 0;

	r = vigil_policy_match_unparsed(&m, p->proto_known, &id);
	if (!r)
		return false;
	vigil_count(p->unparsed == VIGIL_UNPARSED_FRAG  ? VIGIL_CNT_ENF_UNPARSED_FRAG :
		    p->unparsed == VIGIL_UNPARSED_EXT ? VIGIL_CNT_ENF_UNPARSED_EXT :
		    p->unparsed == VIGIL_UNPARSED_VLAN ? VIGIL_CNT_ENF_UNPARSED_VLAN :
							 VIGIL_CNT_ENF_UNPARSED_TRUNC);
	if (!p->family) {
		/* no addresses to put in an event: the counters and the rule's hits */
		struct vigil_rule_stats *st = vigil_rule_stats_of(id);

		vigil_action_count(r->action);
		if (st)
			st->hits++;
		return true;
	}
	vigil_enforce_report(p, r, id, VIGIL_REPLY_UNPARSED, dir, ifindex, bpf_ktime_get_ns());
	return true;
}

#endif
