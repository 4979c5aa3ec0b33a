// SPDX-License-Identifier: GPL-2.0
/*
 * Live local sockets ended when a `reset` rule lands: socket iterators
 * (iter/tcp, iter/udp) that call bpf_sock_destroy on every connected socket
 * whose first matching rule is the one landing. The local side then sees
 * ECONNABORTED; a TCP peer gets a RST.
 *
 * An iterator walks the network namespace of the thread that created it.
 * The agent creates one per namespace the rule names, from a thread that
 * joined it, and writes that namespace's cookie in sd_target: a socket of
 * any other namespace is left alone, whatever thread created the iterator.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "lib/enforce.bpf.h"	/* vigil_enforce_event */

char LICENSE[] SEC("license") = "GPL";

extern int bpf_sock_destroy(struct sock_common *sk) __ksym;

#define AF_INET 2
#define AF_INET6 10
/* States with no connection to end: listeners, mini sockets, closed. */
#define TCP_TIME_WAIT 6
#define TCP_CLOSE 7
#define TCP_LISTEN 10
#define TCP_NEW_SYN_RECV 12

struct sd_target {
	__u64 netns_cookie;	/* the only namespace this run may touch */
	__u32 rule_id;
	__u32 destroyed;	/* sockets destroyed by this run */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sd_target);
} sd_target SEC(".maps");

/* Is rule t->rule_id the first match for this socket's peer, with the
 * remote port (egress) or the local port (ingress) as destination? Returns
 * the direction that matched (the rule in *rule), 0 for none. */
static __always_inline __u8 rule_decides(struct sd_target *t, struct vigil_match *m, __u16 rport,
					 __u16 lport, const struct vigil_pol_rule **rule)
{
	const struct vigil_pol_rule *r;
	__u32 id = 0;

	*rule = NULL;
	m->dir = VIGIL_DIR_EGRESS;
	m->dport = rport;
	r = vigil_policy_match(m, &id);
	if (r && r->action == VIGIL_ACT_RESET && id == t->rule_id) {
		*rule = r;
		return VIGIL_DIR_EGRESS;
	}
	m->dir = VIGIL_DIR_INGRESS;
	m->dport = lport;
	r = vigil_policy_match(m, &id);
	if (r && r->action == VIGIL_ACT_RESET && id == t->rule_id) {
		*rule = r;
		return VIGIL_DIR_INGRESS;
	}
	return 0;
}

/* family is the peer's as matched: AF_INET for a v4-mapped IPv6 socket. An
 * event when the rule's event bucket allows (vigil_enforce_event), as for
 * every enforcing hook: a namespace with many sockets cannot fill the ring. */
static __always_inline void report(struct sd_target *t, const struct vigil_pol_rule *r,
				   struct vigil_rule_stats *st, struct sock_common *skc, __u8 family,
				   __u8 proto, __u8 dir, const __u8 *daddr, __u16 rport, __u16 lport)
{
	struct vigil_enforce *ev = vigil_enforce_event(r, t->rule_id, st, bpf_ktime_get_ns());

	if (!ev)
		return;
	ev->reply = VIGIL_REPLY_SOCK_DESTROYED;
	ev->dir = dir;
	ev->family = family;
	ev->proto = proto;
	ev->sport = lport;
	ev->dport = rport;
	if (family == AF_INET) {
		bpf_core_read(ev->saddr, 4, &skc->skc_rcv_saddr);
		__builtin_memcpy(ev->daddr, daddr, 4);
	} else {
		bpf_core_read(ev->saddr, 16, &skc->skc_v6_rcv_saddr);
		__builtin_memcpy(ev->daddr, daddr, 16);
	}
	ev->cookie = bpf_get_socket_cookie(skc);
	vigil_submit(ev);
	if (st)
		st->events++;
}

static __always_inline int consider(struct sock_common *skc, __u8 proto)
{
	__u8 daddr[16] = {};
	struct vigil_match m = { .proto = proto, .peer = daddr };
	const struct vigil_pol_rule *r;
	struct vigil_rule_stats *st;
	struct sd_target *t;
	__u16 family, rport, lport;
	__u32 zero = 0;
	__u8 state, dir;

	t = bpf_map_lookup_elem(&sd_target, &zero);
	if (!t || !skc || BPF_CORE_READ(skc, skc_net.net, net_cookie) != t->netns_cookie)
		return 0;
	state = BPF_CORE_READ(skc, skc_state);
	if (proto == IPPROTO_TCP && (state == TCP_LISTEN || state == TCP_TIME_WAIT ||
				     state == TCP_CLOSE || state == TCP_NEW_SYN_RECV))
		return 0;
	rport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	lport = BPF_CORE_READ(skc, skc_num);
	if (!rport)
		return 0;	/* not connected: no peer to match */
	family = BPF_CORE_READ(skc, skc_family);
	if (family == AF_INET) {
		bpf_core_read(daddr, 4, &skc->skc_daddr);
		m.family = AF_INET;
	} else if (family == AF_INET6) {
		bpf_core_read(daddr, 16, &skc->skc_v6_daddr);
		m.family = AF_INET6;
		/* ::ffff:a.b.c.d is an IPv4 peer: match it against IPv4 rules. */
		if (!*(__u64 *)daddr && *(__u32 *)(daddr + 8) == bpf_htonl(0xffff)) {
			__builtin_memcpy(daddr, daddr + 12, 4);
			m.family = AF_INET;
		}
	} else {
		return 0;
	}
	dir = rule_decides(t, &m, rport, lport, &r);
	if (!dir || !r)
		return 0;
	if (bpf_sock_destroy(skc))
		return 0;
	t->destroyed++;
	vigil_count(VIGIL_CNT_ENF_SOCK_DESTROYED);
	st = vigil_rule_stats_of(t->rule_id);
	if (st)
		st->hits++;
	report(t, r, st, skc, m.family, proto, dir, daddr, rport, lport);
	return 0;
}

SEC("iter/tcp")
int destroy_tcp(struct bpf_iter__tcp *ctx)
{
	return consider(ctx->sk_common, IPPROTO_TCP);
}

SEC("iter/udp")
int destroy_udp(struct bpf_iter__udp *ctx)
{
	return consider((struct sock_common *)ctx->udp_sk, IPPROTO_UDP);
}
