// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: a classic clsact filter of "another tool" that drops TCP
 * to port 8000, to show that vigil's TC programs leave the packets they do
 * not act on to the filters after them (tests/reject_tc.t).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tc")
int test_tc_drop_8000(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct tcphdr *tcp = (void *)(ip + 1);

	if ((void *)(tcp + 1) > end || eth->h_proto != bpf_htons(0x0800) ||
	    ip->protocol != IPPROTO_TCP || ip->ihl != 5)
		return -1;	/* TC_ACT_UNSPEC */
	return tcp->dest == bpf_htons(8000) ? 2 /* TC_ACT_SHOT */ : -1;
}
