// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: a VLAN access port made of TC programs, on a kernel
 * built without 802.1Q devices. vlan_port_in lets in only frames tagged
 * with VLAN_PORT_VID (in the skb or in the data) and takes the tag off;
 * vlan_port_out tags what leaves untagged. Attached with tc after vigil's
 * programs (classic clsact filters run after TCX), so vigil sees the
 * tagged frames as on a real trunk. tests/reset_router_l2.t.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "GPL";

#define VLAN_PORT_VID 100
#define ETH_P_8021Q 0x8100
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2

SEC("tc")
int vlan_port_in(struct __sk_buff *skb)
{
	if (!skb->vlan_present || (skb->vlan_tci & 0xfff) != VLAN_PORT_VID)
		return TC_ACT_SHOT;
	return bpf_skb_vlan_pop(skb) ? TC_ACT_SHOT : TC_ACT_OK;
}

SEC("classifier")	/* a section of its own, for tc's "sec" */
int vlan_port_out(struct __sk_buff *skb)
{
	if (skb->vlan_present || skb->protocol == bpf_htons(ETH_P_8021Q))
		return TC_ACT_OK;	/* tagged already (vigil's injected RST) */
	return bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), VLAN_PORT_VID) ? TC_ACT_SHOT
									: TC_ACT_OK;
}
