/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vigil keeps per TCP socket, and how it reads a socket's ends.
 *
 * State changes mostly happen in softirq, where the current task is whoever
 * the interrupt landed on, so the owning process is recorded in socket-local
 * storage where the socket is in process context (connect, listen), cloned
 * into accepted sockets from their listener (BPF_F_CLONE), and corrected at
 * the first send or receive. The map is pinned: programs that outlive the
 * agent and the socket iterator of the next agent share it.
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

#ifndef AF_INET
#define AF_INET 2
#define AF_INET6 10
#endif
#ifndef IPPROTO_TCP
#define IPPROTO_TCP 6
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#define ECONNABORTED 103
#endif

struct vigil_sk {
	struct vigil_proc owner;
	__u64 start_ktime;	/* connect() or handshake done; 0: unknown */
	__u32 flags;		/* enum vigil_conn_flags */
	__u8 dir;		/* enum vigil_conn_dir */
	__u8 reason;		/* enum vigil_close_reason: the first seen */
	__u8 closed;		/* its close was reported */
	__u8 refined;		/* owner checked at a send or receive */
	__u16 sport;		/* local port: gone from the socket at CLOSE */
	__u16 pad;
	__u32 pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct vigil_sk);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_sks SEC(".maps");

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

static __always_inline struct vigil_sk *vigil_sk_get(const void *sk, bool create)
{
	return bpf_sk_storage_get(&vigil_sks, (void *)sk, NULL,
				  create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
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
