/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * For tests only: one case of the rule matcher as tests/rule_match.c hands
 * it to tests/bpf/rule_match.bpf.c through BPF_PROG_TEST_RUN, and what each
 * of bpf/lib/rule_match.bpf.h's and rule_walk.bpf.h's matchers decided.
 * The frame is struct rule_match_in then struct rule_match_out; the
 * program fills the second. Rule results are 1 + the rule id, 0 for none.
 */
#ifndef VIGIL_TEST_RULE_MATCH_CASE_H
#define VIGIL_TEST_RULE_MATCH_CASE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include <vigil/enforce_maps.h>

struct rule_match_in {
	/* Zero: BPF_PROG_TEST_RUN reads a TC program's input as an Ethernet
	 * frame, and a zero type keeps it from looking at what follows. */
	__u8 eth[14];
	__u8 family;		/* AF_INET, AF_INET6 */
	__u8 proto;		/* IPPROTO_TCP, IPPROTO_UDP, ... */
	__u8 dir;		/* VIGIL_DIR_INGRESS or VIGIL_DIR_EGRESS */
	__u8 proto_known;	/* for the unparsed walk: is proto known? */
	__u16 dport;		/* host order */
	__u8 peer[16];		/* network order; IPv4 in the first 4 bytes */
	__u32 pad;
	__u64 ancestors[VIGIL_CG_LEVELS];	/* the sender's cgroup ids by level */
};

struct rule_match_out {
	__u32 packet;		/* vigil_policy_match: TC and XDP */
	__u32 socket;		/* vigil_walk_ancestors: cgroup_skb, carried sockets */
	__u32 socket_scoped;	/* ... and its rule names a cgroup */
	__u32 deny;		/* vigil_deny_by(ancestors): sock_create, carried */
	__u32 unparsed;		/* vigil_policy_match_unparsed: a packet without ports */
	__u32 done;		/* 1: the program ran to the end */
};

VIGIL_STATIC_ASSERT(sizeof(struct rule_match_in) == 168, "rule_match_in layout");
VIGIL_STATIC_ASSERT(sizeof(struct rule_match_out) == 24, "rule_match_out layout");

#endif
