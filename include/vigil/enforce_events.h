/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Enforcement events (drops, rejects, resets vigil made), on the wire:
 * type ids VIGIL_EV_ENFORCE_FIRST..LAST, counters from
 * VIGIL_CNT_ENFORCE_FIRST, and the actions and directions rules name. The
 * maps between the agent and the enforcement programs are apart, in
 * enforce_maps.h. Included by events.h; do not include directly.
 */
#ifndef VIGIL_ENFORCE_EVENTS_H
#define VIGIL_ENFORCE_EVENTS_H

/* Rule ids are bit numbers in struct vigil_pol_set. */
#define VIGIL_RULES_MAX 64
#define VIGIL_POL_PREFIXES_MAX 4096	/* entries per LPM trie */

/* enum vigil_action: the actions' catalogue. */
#include <vigil/policy_actions.h>

/* Bits: a rule for both directions sets both; an LPM key holds one. */
enum vigil_dir {
	VIGIL_DIR_INGRESS = 1 << 0,
	VIGIL_DIR_EGRESS = 1 << 1,
	VIGIL_DIR_ANY = VIGIL_DIR_INGRESS | VIGIL_DIR_EGRESS,
};

/* What vigil did to answer, in an event. */
enum vigil_reply {
	VIGIL_REPLY_NONE = 0,		/* drop, or nothing to answer */
	VIGIL_REPLY_RST_SENDER,		/* reject: RST back to the sender */
	VIGIL_REPLY_RST_BOTH,		/* reset: RST to both ends */
	VIGIL_REPLY_ICMP_UNREACH,	/* reject of UDP: port unreachable */
	VIGIL_REPLY_SUPPRESSED,		/* due, held back by a rate limit */
	VIGIL_REPLY_INELIGIBLE,		/* RST, fragment or bad checksum: none due */
	VIGIL_REPLY_INJECTED,		/* idle flow: RSTs built from flow state */
	VIGIL_REPLY_SOCK_DESTROYED,	/* live local socket destroyed */
	VIGIL_REPLY_CONNECT_REFUSED,	/* local connect refused (cgroup) */
	VIGIL_REPLY_UNPARSED,		/* ports unreadable, a rule could match: dropped */
	VIGIL_REPLY_MAX,
};

enum vigil_enforce_type {
	VIGIL_EV_ENFORCE = VIGIL_EV_ENFORCE_FIRST,	/* struct vigil_enforce */
	VIGIL_EV_POLICY_HIT,	/* struct vigil_policy_hit: exec and file rules */
};

enum vigil_enforce_flags {
	VIGIL_ENF_HAS_PROC = 1 << 0,	/* proc is filled (local process known) */
};

/*
 * One drop, reject or reset. Packets seen at TC or XDP rarely know their
 * process: proc is then zero and VIGIL_ENF_HAS_PROC clear. Addresses are in
 * network byte order (IPv4 in the first 4 bytes), ports in host order.
 */
struct vigil_enforce {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	__u32 rule_id;
	__u8 action;		/* enum vigil_action */
	__u8 reply;		/* enum vigil_reply */
	__u8 dir;		/* VIGIL_DIR_INGRESS / EGRESS at the hook */
	__u8 family;		/* AF_INET, AF_INET6 */
	__u8 proto;		/* IPPROTO_* */
	__u8 tcp_flags;		/* the trigger's flags byte (FIN 0x01 .. CWR 0x80) */
	__u16 flags;		/* enum vigil_enforce_flags */
	__u32 ifindex;		/* interface of the hook; 0 for socket hooks */
	__u16 sport;
	__u16 dport;
	__u32 suppressed;	/* this rule's events held back since its last one */
	__u8 saddr[16];
	__u8 daddr[16];
	__u64 cookie;		/* socket cookie where known, else 0 */
};

enum vigil_policy_hit_flags {
	VIGIL_PHIT_PATH_CUT = 1 << 0,	/* the path was cut at its root side */
	VIGIL_PHIT_BINARY_CUT = 1 << 1,
	VIGIL_PHIT_MONITOR = 1 << 2,	/* the rule's policy is in mode: monitor */
};

/*
 * An exec or file rule matched (vigil/proc_policy.h), as Tetragon's
 * process_tracepoint says it. path is the file opened (for exec: the new
 * binary), binary the process's own binary at the hook (for exec: the
 * same). They follow the fixed part, path then binary, no terminators,
 * then zero padding to 8.
 */
struct vigil_policy_hit {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	char rule[64];		/* the rule's name, NUL-padded */
	__u32 rule_id;		/* its slot */
	__u8 action;		/* enum vigil_action */
	__u8 verb;		/* enum vigil_verb */
	__u8 signal;		/* the signal due (signal, sigkill), else 0 */
	__u8 outcome;		/* enum vigil_pout */
	__s64 result;		/* the syscall's return (the fd); 0 for exec */
	__u32 open_flags;	/* as the caller gave them (O_*) */
	__u32 intent;		/* enum vigil_intent, what took effect included */
	__u64 ino;		/* the file's inode number */
	__u32 dev;		/* its super block's dev_t (kernel encoding) */
	__u32 flags;		/* enum vigil_policy_hit_flags */
	__u16 path_len;
	__u16 binary_len;
	__u32 pad;
	char data[];
};

/* Counter slots: 32-47 the packet path (TC/XDP), 48-63 the socket hooks
 * (cgroup connect/sendmsg, socket-destroying iterators). */
enum vigil_enforce_counter {
	VIGIL_CNT_ENF_DROP = VIGIL_CNT_ENFORCE_FIRST,
	VIGIL_CNT_ENF_REJECT,
	VIGIL_CNT_ENF_RESET,
	VIGIL_CNT_ENF_RST_SENT,
	VIGIL_CNT_ENF_ICMP_SENT,
	VIGIL_CNT_ENF_REPLY_SUPPRESSED,
	VIGIL_CNT_ENF_INELIGIBLE,	/* RST, fragment, bad checksum: no reply */
	VIGIL_CNT_ENF_EVENT_SUPPRESSED,
	VIGIL_CNT_ENF_BUILD_FAILED,	/* a helper refused to reshape the packet */
	VIGIL_CNT_ENF_INJECTED,		/* RSTs injected for idle flows */
	/* Dropped unanswered because their ports could not be read and a rule
	 * covering the sender could match them (docs/policy.md). */
	VIGIL_CNT_ENF_UNPARSED_FRAG,	/* short first fragment, fragment inside TCP's header */
	VIGIL_CNT_ENF_UNPARSED_EXT,	/* IPv6 extension headers past the walk, or cut */
	VIGIL_CNT_ENF_UNPARSED_TRUNC,	/* TCP or UDP header cut short */
	VIGIL_CNT_ENF_UNPARSED_VLAN,	/* VLAN tags past the walk: address unknown too */
	VIGIL_CNT_ENF_SOCK_FIRST = VIGIL_CNT_ENFORCE_FIRST + 16,	/* 48-63 */
	/* The socket hooks' (added by the policy/cgroup part). */
	VIGIL_CNT_ENF_CONNECT_DENIED = VIGIL_CNT_ENF_SOCK_FIRST,	/* EPERM */
	VIGIL_CNT_ENF_CONNECT_REJECTED,	/* ECONNREFUSED */
	VIGIL_CNT_ENF_SOCK_DESTROYED,	/* live sockets a reset rule ended */
	VIGIL_CNT_ENF_SOCK_REFUSED,	/* raw and ping sockets refused (deny) */
	VIGIL_CNT_ENF_EGRESS_DROPPED,	/* packets the cgroup_skb backstop dropped */
	VIGIL_CNT_ENF_CARRIED_DESTROYED,	/* sockets carried into a denied cgroup, ended */
	VIGIL_CNT_ENF_PACKET_SOCKETS,	/* packet sockets found held in a denied cgroup */
	VIGIL_CNT_ENF_CARRIED_IN_USE,	/* carried sockets found by a send or receive */
};

#endif
