// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets carried into a denied cgroup. A socket keeps the cgroup it was
 * created in: the kernel runs the connect, sendmsg and packet hooks of that
 * cgroup, so a socket made outside a cgroup a deny rule names and carried in
 * (its process moved in, or the fd passed over a unix socket) escapes
 * enforce_cgroup's hooks. The agent ends those that a task of the denied
 * cgroup holds or uses:
 *
 * 1. carried_scan (iter/task_file), when a policy lands and every 5 s:
 *    every open file of every task in a cgroup some deny rule names; a
 *    socket is recorded in vigil_carried by address when it is connected to
 *    a destination the first matching rule denies (or rejects) for the
 *    holder's cgroup but not for the cgroup it was made in (whose hooks are
 *    the ones that run), or when it is a packet socket (AF_PACKET: no
 *    cgroup hook runs for those; they are reported, not ended).
 * 2. carried_send/carried_recv (tp_btf/sock_send_length, sock_recv_length),
 *    while a deny rule is in force: the same judgement for a socket a task
 *    sends on or reads from, wherever its file is held (an io_uring fixed
 *    file, a descriptor in flight in a unix socket: no file table the scan
 *    walks). These run after the call: what the first such call sent has
 *    left; the agent ends the socket within its next tick (50 ms).
 * 3. carried_destroy_tcp/udp (iter/tcp, iter/udp), in each namespace such
 *    sockets were recorded in: bpf_sock_destroy on the sockets recorded,
 *    and on no other (address, namespace cookie, family and peer port must
 *    all match, and the socket cookie where it was known: an address freed
 *    and reused in between would not).
 *
 * Why not judge packets by the sending task at cgroup_skb egress: the
 * kernel runs the cgroup_skb programs of the socket's cgroup, and vigil
 * attaches none to a cgroup no rule names (the one a carried socket was
 * made in), so a backstop on the denied cgroup never sees these packets.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>
#include "lib/enforce.bpf.h"
#include "lib/prog_runs.bpf.h"
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

/* What the holder's use of sk means, in c (rule, family, pid): 0 for
 * nothing, CARRIED_INET for a socket to destroy (connected to a destination
 * the first matching rule denies, or rejects, for the holder's cgroup but
 * not for the cgroup it was made in, whose hooks are the ones the kernel
 * runs for it: made in the denied cgroup, the cgroup_skb backstop drops its
 * packets), CARRIED_PACKET for a packet socket (no hook covers those,
 * wherever they were made). task: a task in holder_cg that holds or uses
 * sk. */
#define CARRIED_INET 1
#define CARRIED_PACKET 2

static __always_inline int carried_judge(struct task_struct *task, struct cgroup *holder_cg,
					 struct sock *sk, struct vigil_carried *c)
{
	struct sock_common *skc = &sk->__sk_common;
	struct vigil_walk w = {};
	struct vigil_match m = {};
	__u8 daddr[16] = {};
	__u32 denied;

	cgroup_ancestors(holder_cg, w.ancestors);
	denied = vigil_deny_by(w.ancestors);
	if (!denied)
		return 0;	/* the holder is in no denied cgroup */
	c->family = BPF_CORE_READ(skc, skc_family);
	c->netns_cookie = BPF_CORE_READ(skc, skc_net.net, net_cookie);
	c->pid = BPF_CORE_READ(task, tgid);
	c->rule_id = denied - 1;
	if (c->family == AF_PACKET)
		return CARRIED_PACKET;
	m.proto = BPF_CORE_READ(sk, sk_protocol);
	if (m.proto != VIGIL_IPPROTO_TCP && m.proto != VIGIL_IPPROTO_UDP)
		return 0;
	if (sock_peer(skc, daddr, &m))
		return 0;
	/* Denied for the holder's cgroup... */
	vigil_walk_ancestors(&m, &w);
	if (!w.scoped || (w.action != VIGIL_ACT_DENY && w.action != VIGIL_ACT_REJECT))
		return 0;
	c->rule_id = w.id;
	c->dport = m.dport;
	/* ...and not refused by the hooks of the cgroup it was made in. */
	cgroup_ancestors(BPF_CORE_READ(sk, sk_cgrp_data.cgroup), w.ancestors);
	vigil_walk_ancestors(&m, &w);
	if (w.scoped && (w.action == VIGIL_ACT_DENY || w.action == VIGIL_ACT_REJECT))
		return 0;
	return CARRIED_INET;
}

SEC("iter/task_file")
int carried_scan(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *file = ctx->file;
	struct vigil_carried c = {};
	struct socket *sock;
	struct sock *sk;
	__u64 key;
	int what;

	if (!task || !file)
		return 0;
	sock = bpf_sock_from_file(file);
	if (!sock)
		return 0;
	sk = sock->sk;
	if (!sk)
		return 0;
	what = carried_judge(task, BPF_CORE_READ(task, cgroups, dfl_cgrp), sk, &c);
	if (!what)
		return 0;
	key = (__u64)sk;
	c.cookie = BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);	/* 0: none made yet */
	/* Kept until handled (packet sockets: until the policy changes, so
	 * each is counted and reported once). */
	if (!bpf_map_update_elem(&vigil_carried, &key, &c, BPF_NOEXIST) && what == CARRIED_PACKET)
		vigil_count(VIGIL_CNT_ENF_PACKET_SOCKETS);
	return 0;
}

/*
 * What the walk of file tables cannot see: a socket whose file is held
 * elsewhere (an io_uring fixed file, a descriptor in flight in a unix
 * socket) is still used by a task, and the send and receive paths name
 * that task. A connected inet socket sent on or read from by a task of
 * another cgroup than the one it was made in is judged as the scan judges
 * it, with that task as its holder; one to destroy is recorded and
 * carried_found bumped, which the agent watches (every 50 ms) to run the
 * destroy pass. An io_uring request runs in the submitting task or in its
 * io-wq workers, threads of the same process, so of its cgroup. Attached
 * only while a deny rule is in force; a socket used in the cgroup it was
 * made in (nearly every one) costs a family test and a cgroup id compare.
 */
__u32 carried_found = 0;

static __always_inline int carried_use(struct sock *sk)
{
	struct vigil_carried c = {}, *old;
	struct cgroup *made_in;
	struct task_struct *task;
	__u16 family;
	__u64 key;

	if (!sk)
		return 0;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	made_in = sk->sk_cgrp_data.cgroup;
	if (!made_in || bpf_get_current_cgroup_id() == BPF_CORE_READ(made_in, kn, id))
		return 0;
	task = bpf_get_current_task_btf();
	if (carried_judge(task, BPF_CORE_READ(task, cgroups, dfl_cgrp), sk, &c) != CARRIED_INET)
		return 0;
	c.in_use = 1;
	c.cookie = bpf_get_socket_cookie(sk);
	key = (__u64)sk;
	old = bpf_map_lookup_elem(&vigil_carried, &key);
	if (old && (old->cookie == c.cookie || !old->cookie))
		return 0;	/* recorded already */
	/* None, or a socket freed at this address since. */
	if (bpf_map_update_elem(&vigil_carried, &key, &c, BPF_ANY))
		return 0;
	vigil_count(VIGIL_CNT_ENF_CARRIED_IN_USE);
	__sync_fetch_and_add(&carried_found, 1);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(carried_send, struct sock *sk, int ret)
{
	vigil_prog_run(VIGIL_PROG_CARRIED_SEND);
	return carried_use(sk);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(carried_recv, struct sock *sk, int ret)
{
	vigil_prog_run(VIGIL_PROG_CARRIED_RECV);
	return carried_use(sk);
}

/* Destroys skc if the scan or a send recorded it and the agent has not
 * handled it yet, and forgets it: what stays in vigil_carried after a pass
 * was not destroyed (and is marked reported: inert until forgotten). */
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
	if (!c || c->reported || c->netns_cookie != t->netns_cookie ||
	    c->family != BPF_CORE_READ(skc, skc_family) ||
	    c->dport != bpf_ntohs(BPF_CORE_READ(skc, skc_dport)) ||
	    (c->cookie && c->cookie != BPF_CORE_READ(skc, skc_cookie.counter)))
		return 0;
	id = c->rule_id;
	if (bpf_sock_destroy(skc))
		return 0;
	bpf_map_delete_elem(&vigil_carried, &key);
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
