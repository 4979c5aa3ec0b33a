// SPDX-License-Identifier: GPL-2.0
/*
 * Local connects and unconnected UDP sends refused before any packet leaves:
 * cgroup/connect4/6 and cgroup/sendmsg4/6. The first rule that matches the
 * destination decides, in policy order, skipping rules scoped to a cgroup
 * the task is not in. Only a `deny` (EPERM) or `reject` (ECONNREFUSED
 * through bpf_set_retval) rule that names the task's cgroup refuses here;
 * any other first match lets the call through to the packet path (TC).
 *
 * The agent attaches these programs only to cgroups a rule names, never on
 * its own to the root: what they can refuse is what a policy asked for.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/ring.bpf.h"
#include "lib/policy_walk.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define ECONNREFUSED 111
#define SOCK_ALLOW 1
#define SOCK_REFUSE 0

static __always_inline int decide(const struct vigil_match *m)
{
	struct vigil_walk w = { .by_cgroup = 1 };
	struct vigil_rule_stats *st;

	vigil_walk(m, &w);
	/* The first match decides; only refusals scoped to a cgroup are ours,
	 * anything else goes on to the packet path. */
	if (!w.scoped || (w.action != VIGIL_ACT_DENY && w.action != VIGIL_ACT_REJECT))
		return SOCK_ALLOW;
	st = vigil_rule_stats_of(w.id);
	if (st)
		st->hits++;	/* per CPU */
	if (w.action == VIGIL_ACT_REJECT)
		bpf_set_retval(-ECONNREFUSED);
	return SOCK_REFUSE;	/* EPERM unless a retval was set */
}

static __always_inline int decide4(struct bpf_sock_addr *ctx)
{
	__u32 daddr = ctx->user_ip4;
	struct vigil_match m = {
		.family = 2 /* AF_INET */,
		.proto = ctx->protocol,
		.dir = VIGIL_DIR_EGRESS,
		.dport = bpf_ntohs(ctx->user_port),
		.peer = (const __u8 *)&daddr,
	};

	return decide(&m);
}

static __always_inline int decide6(struct bpf_sock_addr *ctx)
{
	__u32 daddr[4] = {
		ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3],
	};
	struct vigil_match m = {
		.family = 10 /* AF_INET6 */,
		.proto = ctx->protocol,
		.dir = VIGIL_DIR_EGRESS,
		.dport = bpf_ntohs(ctx->user_port),
		.peer = (const __u8 *)daddr,
	};

	return decide(&m);
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
