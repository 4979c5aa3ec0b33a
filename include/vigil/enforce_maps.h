/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The map ABI between the agent and the enforcement programs: the policy
 * maps' keys and values, flow state, the carried-socket scan's findings.
 * Not on the wire: a collector never sees these (the enforcement events
 * are in enforce_events.h).
 *
 * The policy maps (docs/enforce-maps.md says how rules compile into them):
 *
 *   vigil_pol4, vigil_pol6   LPM tries: (direction, peer address) -> the set
 *                            of rules whose CIDRs cover that address.
 *   vigil_rules              array[VIGIL_RULES_MAX]: rule id -> what the
 *                            rule matches past the address, and its action.
 *   vigil_rule_stats         per-CPU array[VIGIL_RULES_MAX]: rule id -> hits
 *                            and what was sent or suppressed (never lost).
 *
 * A packet is matched by one LPM lookup (longest prefix), then the rule ids
 * in the set are tried from the lowest: the first whose protocol and port
 * match decides. Rule id order is policy order.
 */
#ifndef VIGIL_ENFORCE_MAPS_H
#define VIGIL_ENFORCE_MAPS_H

#include <vigil/events.h>

/*
 * LPM keys. The address is the peer's: the source of an ingress packet, the
 * destination of an egress one (network byte order). dir is matched whole,
 * so prefixlen = 32 (for dir) + the CIDR's prefix length; a rule without
 * addresses is the /0 entry (prefixlen 32).
 */
struct vigil_pol_key4 {
	__u32 prefixlen;
	__u32 dir;		/* VIGIL_DIR_INGRESS or VIGIL_DIR_EGRESS, one */
	__u8 addr[4];
};

struct vigil_pol_key6 {
	__u32 prefixlen;
	__u32 dir;
	__u8 addr[16];
};

/*
 * LPM value: bit i set = rule i applies to addresses under this prefix. An
 * LPM lookup returns the longest prefix only, so each entry must also carry
 * the bits of every shorter prefix that covers it (the /0 entry's included):
 * the compiler ORs them in.
 */
struct vigil_pol_set {
	__u64 rules;
};

enum vigil_rule_flags {
	VIGIL_RULE_ACTIVE = 1 << 0,	/* slot in use; others never match */
};

/*
 * What a rule matches past the address, what it does, and how often it may
 * answer. The limits are token buckets (rate per second, burst); 0 takes the
 * default VIGIL_DEF_*. Replies (RST, ICMP) are limited per rule and per
 * source address; events per rule. What a limit holds back is counted in
 * vigil_rule_stats and reported in the next event's suppressed field.
 */
struct vigil_pol_rule {
	__u8 action;		/* enum vigil_action */
	__u8 proto;		/* IPPROTO_TCP, IPPROTO_UDP, 0 any */
	__u16 flags;		/* enum vigil_rule_flags */
	__u16 port_lo;		/* destination port range, host order; */
	__u16 port_hi;		/*   0-65535 for any */
	__u32 reply_rate;	/* replies/s from this rule */
	__u32 reply_burst;
	__u32 src_rate;		/* replies/s to one source address */
	__u32 src_burst;
	__u32 event_rate;	/* events/s from this rule */
	__u32 event_burst;
};

/* Does rule r, in force, cover proto to dport (host order)? The one test
 * past the address (the tries' part), for the BPF programs and the agent. */
static inline __attribute__((always_inline)) int
vigil_rule_covers(const struct vigil_pol_rule *r, __u8 proto, __u16 dport)
{
	return (r->flags & VIGIL_RULE_ACTIVE) && (!r->proto || r->proto == proto) &&
	       dport >= r->port_lo && dport <= r->port_hi;
}

#define VIGIL_DEF_REPLY_RATE 1000
#define VIGIL_DEF_REPLY_BURST 200
#define VIGIL_DEF_SRC_RATE 100
#define VIGIL_DEF_SRC_BURST 20
#define VIGIL_DEF_EVENT_RATE 100
#define VIGIL_DEF_EVENT_BURST 100

/*
 * vigil_rule_cgroup (array, key: rule id; added by the policy/cgroup part):
 * the cgroup v2 a deny or reject rule is scoped to. The cgroup hooks skip a
 * rule whose cgroup is not the task's or an ancestor of it; id 0: the rule
 * names no cgroup (the hooks let its traffic through to TC).
 */
struct vigil_pol_cgroup {
	__u64 id;		/* cgroup v2 id: the directory's inode */
	__u32 level;		/* depth below the v2 root (root: 0) */
	__u32 pad;
};

/* Cgroup depths the packet hook (cgroup_skb) and the carried-socket scan
 * tell apart: they judge a rule by the sender's ancestor ids at levels 0 to
 * VIGIL_CG_LEVELS - 1, so a rule naming a cgroup deeper than that never
 * matches there (bpf/lib/rule_walk.bpf.h): such a rule is refused at load.
 * A power of two: it masks the level. */
#define VIGIL_CG_LEVELS 16

/* Per rule, per CPU: user space sums the CPUs. */
struct vigil_rule_stats {
	__u64 hits;		/* packets (or connects) the rule decided */
	__u64 replies;		/* RSTs and ICMP errors sent */
	__u64 replies_suppressed;	/* held back by a reply limit */
	__u64 events;		/* events written */
	__u64 events_suppressed;	/* held back by the event limit */
};

/*
 * Per-flow TCP sequence state, kept by the TC program for flows it forwards,
 * so a reset rule can end an idle flow without a trigger packet (the agent
 * injects RSTs from it). Key: the two ends ordered so that side 0 has the
 * lower (address, port); both directions of a flow find one entry. The
 * namespace is part of the key: the same addresses may be reused in another.
 */
struct vigil_flow_key {
	__u8 family;
	__u8 proto;
	__u16 pad;
	__u16 port[2];		/* network order */
	__u8 addr[2][16];	/* network order, IPv4 in the first 4 bytes */
	__u64 netns_cookie;	/* of the namespace the packets were seen in */
};

/* What one end sends, seen where its packets enter the host running vigil. */
struct vigil_flow_side {
	__u32 seq_next;		/* its next seq: last seq + payload + SYN + FIN */
	__u32 ack;		/* its last ack_seq: its RCV.NXT (host order) */
	__u32 ifindex;		/* where its packets come in (RSTs to it go out) */
	__u16 window;
	__u8 src_mac[6];	/* its packets' Ethernet source ... */
	__u8 dst_mac[6];	/* ... and destination */
	__u8 seen;		/* 1 once a packet from this side was seen */
	__u8 l2;		/* enum vigil_flow_l2: how its frames were framed */
	__u16 vlan_tci;		/* with VIGIL_FLOW_L2_VLAN: the tag ... */
	__u16 vlan_proto;	/* ... and its TPID, network order (802.1Q, 802.1ad) */
};

/* A RST the agent injects toward a side must be framed as that side's
 * packets came: an injected frame that lacks their VLAN tag lands on the
 * wrong segment, and one with an Ethernet header on a device that has none
 * is garbage there. */
enum vigil_flow_l2 {
	VIGIL_FLOW_L2_VLAN = 1 << 0,	/* one tag, kept in the skb (not in the data) */
	VIGIL_FLOW_L2_NONE = 1 << 1,	/* the device has no Ethernet header */
	VIGIL_FLOW_L2_TAGS_IN_DATA = 1 << 2,	/* tags vigil does not rebuild */
};

enum vigil_flow_flags {
	VIGIL_FLOW_RESET = 1 << 0,	/* reset by vigil: keep answering */
};

struct vigil_flow {
	struct vigil_flow_side side[2];
	__u64 last_ns;		/* bpf_ktime_get_ns of the last packet */
	__u32 rule_id;		/* the reset rule, when VIGIL_FLOW_RESET */
	__u32 flags;		/* enum vigil_flow_flags */
};

#define VIGIL_FLOWS_MAX 65536

/*
 * The TC builder alone (vigil_tc_build), run with BPF_PROG_TEST_RUN by the
 * unit tests and by the agent for idle flows: these bits in the input
 * skb's mark say what to build. With VIGIL_BUILD_REPORT, cb[0] holds the
 * rule id and cb[1] the ifindex the RST leaves by, for the event.
 */
enum vigil_build_flags {
	VIGIL_BUILD_TO_RECEIVER = 1 << 0,	/* the forward RST, not the sender's */
	VIGIL_BUILD_TRUSTED = 1 << 1,		/* the agent's own trigger: no checksum */
	/* Build nothing: count the RST built for this trigger as injected and
	 * write its event (the agent runs this once the RST went out). */
	VIGIL_BUILD_REPORT = 1 << 2,
};

/*
 * The skb mark of every packet vigil makes (replies, the RST a reset sends
 * on, the RSTs injected for idle flows): vigil's TC hooks let such a packet
 * through unexamined, so its own RSTs are never taken for triggers
 * (bpf/enforce_tc.bpf.c).
 */
#define VIGIL_OWN_REPLY_MARK 0x76676c72	/* "vglr" */

/* A socket found by the carried-in scan or the send and receive hooks
 * (bpf/enforce_carried.bpf.c), keyed by its address: held or used by a task
 * in a cgroup a deny rule names, made outside it (so the cgroup's hooks
 * never run for it), and either connected to a destination the first
 * matching rule denies there (family AF_INET/6, to be destroyed in its
 * namespace) or a packet socket (family AF_PACKET, which no hook covers:
 * reported). */
struct vigil_carried {
	__u64 netns_cookie;
	__u64 cookie;	/* the socket's, where it had one (a freed address reused) */
	__u32 pid;	/* a process holding it (its namespace is joined by pid) */
	__u32 rule_id;	/* the deny rule that names the holder's cgroup */
	__u16 family;
	__u16 dport;
	__u8 reported;	/* set by the agent once it logged this one */
	__u8 in_use;	/* found by a send or receive, not in a file table */
	__u16 pad;
};

VIGIL_STATIC_ASSERT(sizeof(struct vigil_pol_key4) == 12, "vigil_pol_key4 layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_pol_key6) == 24, "vigil_pol_key6 layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_pol_rule) == 32, "vigil_pol_rule layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_rule_stats) == 40, "vigil_rule_stats layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_pol_cgroup) == 16, "vigil_pol_cgroup layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_enforce) == 136, "vigil_enforce layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_carried) == 32, "vigil_carried layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_flow_key) == 48, "vigil_flow_key layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_flow_side) == 32, "vigil_flow_side layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_flow) == 80, "vigil_flow layout");
VIGIL_STATIC_ASSERT(VIGIL_CNT_ENF_UNPARSED_VLAN < VIGIL_CNT_ENF_SOCK_FIRST, "packet-path counters fit");
VIGIL_STATIC_ASSERT(VIGIL_RULES_MAX == 8 * sizeof(__u64), "a rule is one bit of vigil_pol_set");
VIGIL_STATIC_ASSERT(!(VIGIL_CG_LEVELS & (VIGIL_CG_LEVELS - 1)), "VIGIL_CG_LEVELS masks a level");

#endif
