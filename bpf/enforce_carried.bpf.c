// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets carried into a denied cgroup. A socket keeps the cgroup it was
 * created in: the kernel runs the connect, sendmsg and packet hooks of that
 * cgroup, so a socket made outside a cgroup a deny rule names and carried in
 * (its process moved in, or the fd passed over a unix socket) escapes
 * enforce_cgroup's hooks. When a policy lands, the agent runs:
 *
 * 1. carried_scan (iter/task_file): every open file of every task in a
 *    cgroup some deny rule names; a socket is recorded in vigil_carried by
 *    address when it is connected to a destination the first matching rule
 *    denies (or rejects) for the holder's cgroup but not for the cgroup it
 *    was made in (whose hooks are the ones that run), or when it is a packet
 *    socket (AF_PACKET: no cgroup hook runs for those; they are reported,
 *    not ended).
 * 2. carried_destroy_tcp/udp (iter/tcp, iter/udp), in each namespace the
 *    scan found such sockets in: bpf_sock_destroy on the sockets recorded,
 *    and on no other (address, namespace cookie, family and peer port must
 *    all match: an address freed and reused in between would not).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "lib/enforce.bpf.h"
#include "lib/rule_walk.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern int bpf_sock_destroy(struct sock_common *sk) __ksym;

#define AF_INET 2
#define AF_INET6 10
#define AF_PACKET 17
#define TCP_TIME_WAIT 6
#define TCP_CLOSE 7
#define TCP_LISTEN 10
#define TCP_NEW_SYN_RECV 12

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);	/* the socket's address */
	__type(value, struct vigil_carried);
} vigil_carried SEC(".maps");

/* The destroy pass: the namespace it may touch, and what it did. */
struct carried_target {
	__u64 netns_cookie;
	__u32 destroyed;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct carried_target);
} carried_target SEC(".maps");

/* Cgroup ids of cg and its ancestors, by level, as the walk wants them. */
static __always_inline void cgroup_ancestors(struct cgroup *cg, __u64 *out)
{
	int level = BPF_CORE_READ(cg, level);

	for (int i = 0; i < VIGIL_CG_LEVELS; i++) {
		struct cgroup *a = NULL;

		out[i] = 0;
		if (i > level)
			continue;
		bpf_probe_read_kernel(&a, sizeof(a), &cg->ancestors[i]);
		out[i] = a ? BPF_CORE_READ(a, kn, id) : 0;
	}
}

/* The peer of a connected inet socket, as enforce_sockdestroy reads it. 0
 * when there is one. */
static __always_inline int sock_peer(struct sock_common *skc, __u8 *daddr, struct vigil_match *m)
{
	__u16 family = BPF_CORE_READ(skc, skc_family);
	__u8 state = BPF_CORE_READ(skc, skc_state);

	if (m->proto == VIGIL_IPPROTO_TCP && (state == TCP_LISTEN || state == TCP_TIME_WAIT ||
					      state == TCP_CLOSE || state == TCP_NEW_SYN_RECV))
		return -1;
	m->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	if (!m->dport)
		return -1;	/* not connected: no peer to match */
	if (family == AF_INET) {
		bpf_core_read(daddr, 4, &skc->skc_daddr);
		m->family = AF_INET;
	} else if (family == AF_INET6) {
		bpf_core_read(daddr, 16, &skc->skc_v6_daddr);
		m->family = AF_INET6;
		if (!*(__u64 *)daddr && *(__u32 *)(daddr + 8) == bpf_htonl(0xffff)) {
			__builtin_memcpy(daddr, daddr + 12, 4);
			m->family = AF_INET;
		}
	} else {
		return -1;
	}
	m->peer = daddr;
	m->dir = VIGIL_DIR_EGRESS;
	return 0;
}

SEC("iter/task_file")
int carried_scan(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct vigil_walk w = {};
	struct vigil_carried c = {};
	struct sock_common *skc;
	struct vigil_match m = {};
	struct socket *sock;
	struct sock *sk;
	__u8 daddr[16] = {};
	__u32 denied;
	__u64 key;

	if (!task || !file)
		return 0;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return 0;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return 0;
	cgroup_ancestors(BPF_CORE_READ(task, cgroups, dfl_cgrp), w.ancestors);
	denied = vigil_deny_by(w.ancestors);
	if (!denied)
		return 0;	/* the holder is in no denied cgroup */
	skc = &sk->__sk_common;
	c.family = BPF_CORE_READ(skc, skc_family);
	c.netns_cookie = BPF_CORE_READ(skc, skc_net.net, net_cookie);
	c.pid = BPF_CORE_READ(task, tgid);
	c.rule_id = denied - 1;
	key = (__u64)sk;
	if (c.family == AF_PACKET) {
		/* No hook covers these, wherever they were made. Kept across
		 * scans, so each is counted and reported once. */
		if (!bpf_map_update_elem(&vigil_carried, &key, &c, BPF_NOEXIST))
			vigil_count(VIGIL_CNT_ENF_PACKET_SOCKETS);
		return 0;
	}
	m.proto = BPF_CORE_READ(sk, sk_protocol);
	if (m.proto != VIGIL_IPPROTO_TCP && m.proto != VIGIL_IPPROTO_UDP)
		return 0;
	if (sock_peer(skc, daddr, &m))
		return 0;
	/* Denied for the holder's cgroup... */
	vigil_walk_ancestors(&m, &w);
	if (!w.scoped || (w.action != VIGIL_ACT_DENY && w.action != VIGIL_ACT_REJECT))
		return 0;
	c.rule_id = w.id;
	c.dport = m.dport;
	/* ...and not refused by the hooks of the cgroup it was made in, the
	 * ones the kernel runs for it (made in the denied cgroup: the
	 * cgroup_skb backstop drops its packets). */
	cgroup_ancestors(BPF_CORE_READ(sk, sk_cgrp_data.cgroup), w.ancestors);
	vigil_walk_ancestors(&m, &w);
	if (w.scoped && (w.action == VIGIL_ACT_DENY || w.action == VIGIL_ACT_REJECT))
		return 0;
	bpf_map_update_elem(&vigil_carried, &key, &c, BPF_ANY);
	return 0;
}

static __always_inline int destroy(struct sock_common *skc)
{
	struct carried_target *t;
	struct vigil_carried *c;
	struct vigil_rule_stats *st;
	__u32 zero = 0, id;
	__u64 key = (__u64)skc;

	t = bpf_map_lookup_elem(&carried_target, &zero);
	if (!t || !skc || BPF_CORE_READ(skc, skc_net.net, net_cookie) != t->netns_cookie)
		return 0;
	c = bpf_map_lookup_elem(&vigil_carried, &key);
	if (!c || c->netns_cookie != t->netns_cookie || c->family != BPF_CORE_READ(skc, skc_family) ||
	    c->dport != bpf_ntohs(BPF_CORE_READ(skc, skc_dport)))
		return 0;
	id = c->rule_id;
	if (bpf_sock_destroy(skc))
		return 0;
	t->destroyed++;
	vigil_count(VIGIL_CNT_ENF_CARRIED_DESTROYED);
	st = vigil_rule_stats_of(id);
	if (st)
		st->hits++;
	return 0;
}

SEC("iter/tcp")
int carried_destroy_tcp(struct bpf_iter__tcp *ctx)
{
	return destroy(ctx->sk_common);
}

SEC("iter/udp")
int carried_destroy_udp(struct bpf_iter__udp *ctx)
{
	return destroy((struct sock_common *)ctx->udp_sk);
}
