/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vigil keeps per TCP socket, and how it reads a socket's ends.
 *
 * State changes mostly happen in softirq, where the current task is whoever
 * the interrupt landed on, so the owning process is recorded where the
 * socket is in process context (connect, listen), handed to accepted
 * sockets from their listener, and corrected at the first send or receive.
 *
 * The table (sock_table.bpf.h) is vigil's own, not socket-local storage:
 * storage costs two allocations and an RCU-deferred free per socket, and a
 * copy per accepted child (BPF_F_CLONE), about 5 % of a loopback
 * connection's time in bench/net.sh, half of what watching TCP cost. The
 * price is that vigil removes entries itself, at the close. Listeners are
 * also kept by the end they are bound to, which an accepted socket's local
 * end (or its wildcard) names. The maps are pinned: programs that outlive
 * the agent and the socket iterator of the next agent share them.
 */
#ifndef VIGIL_SOCK_BPF_H
#define VIGIL_SOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <vigil/events.h>
#include "ring.bpf.h"
#include "path.bpf.h"	/* task.bpf.h needs its sizes */
#include "task.bpf.h"
#include "sock_table.bpf.h"

#ifndef AF_INET
#define AF_INET 2
#define AF_INET6 10
#endif
#ifndef IPPROTO_TCP
#define IPPROTO_TCP 6
#endif
#ifndef ECONNABORTED
#define ECONNABORTED 103
#endif

#define VIGIL_LISTENERS_MAX (1 << 16)

/* A listener by the end it is bound to (a wildcard address is zeros). */
struct vigil_listen_key {
	__u32 netns;
	__u16 family;
	__u16 port;
	__u8 addr[16];
};

struct vigil_listener {
	__u64 sk;		/* which socket, so only its own close removes it */
	struct vigil_proc owner;
	__u32 flags;		/* enum vigil_conn_flags */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, VIGIL_LISTENERS_MAX);
	__type(key, struct vigil_listen_key);
	__type(value, struct vigil_listener);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_listeners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_net_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_net_config SEC(".maps");

static __always_inline __u32 vigil_net_flags(void)
{
	__u32 zero = 0;
	struct vigil_net_config *c = bpf_map_lookup_elem(&vigil_net_config, &zero);

	return c ? c->flags : 0;
}

/* Who sent the first FIN, as a socket's state says it: a local FIN leads
 * through FIN_WAIT1 (then FIN_WAIT2, CLOSING, TIME_WAIT), the peer's through
 * CLOSE_WAIT (then LAST_ACK). Read where it matters (at a RST, at CLOSE)
 * rather than kept at each transition: those runs then need no lookup. */
static __always_inline __u8 vigil_fin_reason(int state)
{
	switch (state) {
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
	case TCP_CLOSING:
	case TCP_TIME_WAIT:
		return VIGIL_CLOSE_LOCAL_FIN;
	case TCP_CLOSE_WAIT:
	case TCP_LAST_ACK:
		return VIGIL_CLOSE_PEER_FIN;
	}
	return VIGIL_CLOSE_UNKNOWN;
}

/* The calling process, named by its exec key like process events name it. */
static __always_inline void vigil_owner_current(struct vigil_proc *p)
{
	struct task_struct *t = bpf_get_current_task_btf();

	vigil_proc_fill_btf(p, t, vigil_exec_key_get(t->tgid, t->group_leader->start_time));
}

/*
 * Sockets are read through the BTF pointers the tracepoints and iterators
 * give (direct, CO-RE relocated loads) rather than with a probe-read helper
 * per field: these run about ten times per connection.
 */

/* Data bytes, each counted once: the socket's own counters also count
 * sequence space (SYN, FIN) and retransmissions. tp from bpf_skc_to_tcp_sock. */
static __always_inline __u64 vigil_tcp_data_sent(const struct tcp_sock *tp)
{
	return tp->bytes_sent - tp->bytes_retrans;
}

static __always_inline __u64 vigil_tcp_data_received(const struct tcp_sock *tp)
{
	__u64 n = tp->bytes_received;

	/* tcp_fin() sets SOCK_DONE; the FIN took one byte of sequence. */
	if (n && (tp->inet_conn.icsk_inet.sk.__sk_common.skc_flags & (1UL << SOCK_DONE)))
		n--;
	return n;
}

/* Any socket (full, request or timewait): its sock_common says its ends. */
static __always_inline void vigil_tuple_from_sk(struct vigil_tuple *t, const struct sock_common *skc)
{
	__u16 family = skc->skc_family;

	t->family = family;
	t->protocol = IPPROTO_TCP;
	t->sport = skc->skc_num;
	t->dport = bpf_ntohs(skc->skc_dport);
	t->netns = skc->skc_net.net->ns.inum;
	if (family == AF_INET6) {
		*(__u64 *)t->saddr = *(__u64 *)&skc->skc_v6_rcv_saddr;
		*(__u64 *)(t->saddr + 8) = *((__u64 *)&skc->skc_v6_rcv_saddr + 1);
		*(__u64 *)t->daddr = *(__u64 *)&skc->skc_v6_daddr;
		*(__u64 *)(t->daddr + 8) = *((__u64 *)&skc->skc_v6_daddr + 1);
	} else {
		*(__u32 *)t->saddr = skc->skc_rcv_saddr;
		*(__u32 *)t->daddr = skc->skc_daddr;
	}
}

/* The same, for a socket a program has no BTF pointer to (a classic
 * tracepoint's, found through a file table): every field read with a
 * probe read, which the direct loads above avoid where they can. */
static __always_inline void vigil_tuple_from_sk_read(struct vigil_tuple *t,
						     const struct sock_common *skc)
{
	__u16 family = BPF_CORE_READ(skc, skc_family);

	t->family = family;
	t->protocol = IPPROTO_TCP;
	t->sport = BPF_CORE_READ(skc, skc_num);
	t->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	t->netns = BPF_CORE_READ(skc, skc_net.net, ns.inum);
	if (family == AF_INET6) {
		bpf_core_read(t->saddr, sizeof(t->saddr), &skc->skc_v6_rcv_saddr);
		bpf_core_read(t->daddr, sizeof(t->daddr), &skc->skc_v6_daddr);
	} else {
		BPF_CORE_READ_INTO((__u32 *)t->saddr, skc, skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)t->daddr, skc, skc_daddr);
	}
}

/* The listener bound to t's local end (t from the listener, or from a
 * child as the kernel cloned it). */
static __always_inline void vigil_listen_key_of(struct vigil_listen_key *k, const struct vigil_tuple *t)
{
	k->netns = t->netns;
	k->family = t->family;
	k->port = t->sport;
	__builtin_memcpy(k->addr, t->saddr, 16);
}

static __always_inline void vigil_listener_add(const void *sk, const struct vigil_tuple *t,
					       const struct vigil_proc *owner, __u32 flags)
{
	struct vigil_listener l = { .sk = vigil_sk_key(sk), .owner = *owner, .flags = flags };
	struct vigil_listen_key k;

	vigil_listen_key_of(&k, t);
	if (bpf_map_update_elem(&vigil_listeners, &k, &l, BPF_ANY))
		vigil_count(VIGIL_CNT_NET_NO_STORAGE);
}

/* Only the socket that is the entry's: with SO_REUSEPORT several listen on
 * one end, and the last one to listen names the children (the first send
 * or receive corrects them). */
static __always_inline void vigil_listener_remove(const void *sk, const struct vigil_tuple *t)
{
	struct vigil_listen_key k;
	struct vigil_listener *l;

	vigil_listen_key_of(&k, t);
	l = bpf_map_lookup_elem(&vigil_listeners, &k);
	if (l && l->sk == vigil_sk_key(sk))
		bpf_map_delete_elem(&vigil_listeners, &k);
}

/* The listener a child came from: bound to the child's local address, else
 * to the wildcard of its family, else (an IPv4 child) a dual-stack [::]. A
 * child's local end is a full address, so it does not name a wildcard
 * listener as it is. */
static __always_inline const struct vigil_listener *vigil_listener_of(const struct vigil_tuple *t)
{
	struct vigil_listen_key k;
	struct vigil_listener *l;

	vigil_listen_key_of(&k, t);
	l = bpf_map_lookup_elem(&vigil_listeners, &k);
	if (l)
		return l;
	__builtin_memset(k.addr, 0, sizeof(k.addr));
	l = bpf_map_lookup_elem(&vigil_listeners, &k);
	if (l || k.family != AF_INET)
		return l;
	k.family = AF_INET6;
	return bpf_map_lookup_elem(&vigil_listeners, &k);
}

/* The ends of the connection an incoming segment belongs to, for a RST
 * the kernel answers it with when no socket takes it: local is where the
 * segment went. Returns false when the headers cannot be read. */
static __always_inline bool vigil_tuple_from_rx_skb(struct vigil_tuple *t, const struct sk_buff *skb)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header), th = BPF_CORE_READ(skb, transport_header);
	struct tcphdr tcp;
	__u8 version;

	if (bpf_probe_read_kernel(&version, 1, head + nh) ||
	    bpf_probe_read_kernel(&tcp, sizeof(tcp), head + th))
		return false;
	t->protocol = IPPROTO_TCP;
	t->sport = bpf_ntohs(tcp.dest);
	t->dport = bpf_ntohs(tcp.source);
	t->netns = BPF_CORE_READ(skb, dev, nd_net.net, ns.inum);
	if ((version >> 4) == 6) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh))
			return false;
		t->family = AF_INET6;
		__builtin_memcpy(t->saddr, &ip6.daddr, 16);
		__builtin_memcpy(t->daddr, &ip6.saddr, 16);
	} else {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh))
			return false;
		t->family = AF_INET;
		__builtin_memcpy(t->saddr, &ip.daddr, 4);
		__builtin_memcpy(t->daddr, &ip.saddr, 4);
	}
	return true;
}

static __always_inline bool vigil_addr_loopback(const __u8 *a, __u16 family)
{
	if (family == AF_INET)
		return a[0] == 127;
	/* ::1, or ::ffff:127.0.0.0/104 */
	if (*(__u64 *)a != 0)
		return false;
	if (*(__u32 *)(a + 8) == 0)
		return *(__u32 *)(a + 12) == bpf_htonl(1);
	return *(__u32 *)(a + 8) == bpf_htonl(0xffff) && a[12] == 127;
}

static __always_inline bool vigil_tuple_loopback(const struct vigil_tuple *t)
{
	return vigil_addr_loopback(t->saddr, t->family) && vigil_addr_loopback(t->daddr, t->family);
}

/* Whether a per-connection event of this kind goes into the ring. Decided
 * before anything is reserved; what is held back is counted. */
static __always_inline bool vigil_net_wanted(const struct vigil_tuple *t, __u8 dir)
{
	__u32 flags = vigil_net_flags();
	bool skip = (flags & VIGIL_NET_REPORT_ONLY) ||
		    ((flags & VIGIL_NET_NO_LISTEN) && dir == VIGIL_CONN_LISTEN) ||
		    ((flags & VIGIL_NET_NO_LOOPBACK) && vigil_tuple_loopback(t));

	if (skip)
		vigil_count(VIGIL_CNT_NET_FILTERED);
	return !skip;
}

#endif
