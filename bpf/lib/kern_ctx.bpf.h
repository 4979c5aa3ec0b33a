/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own struct behind a TC or XDP context: the context pointer
 * is the sk_buff or xdp_buff itself. Read with bpf_probe_read_kernel
 * (BPF_CORE_READ), not through the bpf_cast_to_kern_ctx kfunc: that one
 * came with Linux 6.2, and one build must load on 6.1 too. The verifier
 * lets a privileged program hand the context's address to the helper.
 * The few reads are on the reject path and the flow tracker, not per byte.
 */
#ifndef VIGIL_KERN_CTX_BPF_H
#define VIGIL_KERN_CTX_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

static __always_inline const struct sk_buff *vigil_skb_of(const struct __sk_buff *skb)
{
	return (const struct sk_buff *)(const void *)skb;
}

static __always_inline const struct xdp_buff *vigil_xdp_buff_of(const struct xdp_md *xdp)
{
	return (const struct xdp_buff *)(const void *)xdp;
}

#endif
