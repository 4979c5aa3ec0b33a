/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Directed broadcast addresses: no reply to or from one (netfilter's
 * nf_send_reset gives none to a destination that routes as broadcast). The
 * kernel makes a broadcast route for every IPv4 address of a prefix shorter
 * than /31 (fib_add_ifaddr: the prefix with all host bits set) and for an
 * address's explicit broadcast (`ip addr add ... brd X`). These are read
 * live from the namespace the packet is in, on every interface of it (a
 * router takes a packet to another interface's subnet broadcast as a
 * broadcast too), so an address added later counts at once, with no help
 * from the agent. The walk is bounded (VIGIL_BCAST_STEPS interfaces and
 * addresses together: a namespace with more is walked in part) and runs
 * only for a packet about to be answered. IPv6 has no broadcast (multicast is refused by
 * vigil_reply_addr_ok).
 */
#ifndef VIGIL_BCAST_BPF_H
#define VIGIL_BCAST_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "loop.bpf.h"
#include "pkt.bpf.h"

#define VIGIL_BCAST_STEPS 1024	/* interfaces and addresses, together */

struct vigil_bcast_walk {
	__u64 head;		/* &net->dev_base_head */
	__u64 node;		/* the current device's dev_list */
	__u64 ifa;		/* its next address (struct in_ifaddr), 0 at its end */
	__be32 a, b;		/* the packet's addresses */
	bool found;
};

/* One step: one address of the current device, or on to the next device.
 * One flat bpf_loop callback, verified once, whatever the bounds. */
static long vigil_bcast_step(__u32 i, struct vigil_bcast_walk *w)
{
	const struct in_ifaddr *ifa = (const void *)w->ifa;	/* locals: CO-RE reads go through them */
	const struct list_head *node = (const void *)w->node;
	const struct net_device *dev;
	struct in_device *in;
	__be32 mask, brd, d;

	if (!ifa) {
		node = BPF_CORE_READ(node, next);
		if (!node || (__u64)node == w->head)
			return 1;
		w->node = (__u64)node;
		dev = (const void *)((__u64)node - bpf_core_field_offset(struct net_device, dev_list));
		in = BPF_CORE_READ(dev, ip_ptr);
		w->ifa = in ? (__u64)BPF_CORE_READ(in, ifa_list) : 0;
		return 0;
	}
	mask = BPF_CORE_READ(ifa, ifa_mask);
	brd = BPF_CORE_READ(ifa, ifa_broadcast);
	d = (BPF_CORE_READ(ifa, ifa_local) & mask) | ~mask;
	if ((BPF_CORE_READ(ifa, ifa_prefixlen) < 31 && (d == w->a || d == w->b)) ||
	    (brd && (brd == w->a || brd == w->b))) {
		w->found = true;
		return 1;
	}
	w->ifa = (__u64)BPF_CORE_READ(ifa, ifa_next);
	return 0;
}

/* True when p goes to or comes from a directed broadcast address of the
 * namespace net (the packet's device's). */
static __always_inline bool vigil_directed_bcast(const struct net *net, const struct vigil_pkt *p)
{
	struct vigil_bcast_walk w = {};

	if (p->family != VIGIL_AF_INET || !net)
		return false;
	__builtin_memcpy(&w.a, p->saddr, 4);
	__builtin_memcpy(&w.b, p->daddr, 4);
	w.head = (__u64)net + bpf_core_field_offset(struct net, dev_base_head);
	w.node = w.head;	/* the first step moves to the first device */
	w.ifa = vigil_loop_opaque(0);	/* not a constant to the verifier: loop.bpf.h */
	bpf_loop(VIGIL_BCAST_STEPS, vigil_bcast_step, &w, 0);
	return w.found;
}

#endif
