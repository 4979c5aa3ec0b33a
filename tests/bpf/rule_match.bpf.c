// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: the rule matchers of bpf/lib/rule_match.bpf.h and
 * rule_walk.bpf.h, run on one case (tests/bpf/rule_match_case.h) through
 * BPF_PROG_TEST_RUN by tests/rule_match.c, which fills the policy maps.
 *
 * A TC program, not a syscall one: syscall programs are sleepable, and
 * sleepable programs may not use the LPM tries. The case comes in as the
 * test frame's bytes (a TC context, __sk_buff, has no room for it) and the
 * results go back in them. Every matcher that does not read the current
 * task runs on each case; the sender's cgroup is the case's ancestor ids.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/rule_walk.bpf.h"
#include "rule_match_case.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tc")
int rule_match_case(struct __sk_buff *skb)
{
	struct rule_match_in in;
	struct rule_match_out out = {};
	struct vigil_walk w = {};
	const struct vigil_pol_rule *r;
	struct vigil_match m;
	__u32 id = 0;

	if (bpf_skb_load_bytes(skb, 0, &in, sizeof(in)))
		return 1;
	m.family = in.family;
	m.proto = in.proto;
	m.dir = in.dir;
	m.dport = in.dport;
	m.peer = in.peer;

	r = vigil_policy_match(&m, &id);
	out.packet = r ? id + 1 : 0;

	__builtin_memcpy(w.ancestors, in.ancestors, sizeof(w.ancestors));
	vigil_walk_ancestors(&m, &w);
	out.socket = w.action ? w.id + 1 : 0;
	out.socket_scoped = w.action ? w.scoped : 0;

	out.deny = vigil_deny_by(in.ancestors);

	id = 0;
	r = vigil_policy_match_unparsed(&m, in.proto_known, &id);
	out.unparsed = r ? id + 1 : 0;

	out.done = 1;
	if (bpf_skb_store_bytes(skb, sizeof(in), &out, sizeof(out), 0))
		return 1;
	return 0;
}
