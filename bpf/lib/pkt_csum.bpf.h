/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Is the trigger's L4 checksum good? netfilter sends no RST or ICMP for a
 * packet with a bad checksum (nf_ip_checksum), and neither do we: a reply to
 * a corrupted packet would answer a flow that does not exist.
 *
 * At TC the kernel often knows already (ip_summed, read from the sk_buff:
 * kern_ctx.bpf.h): CHECKSUM_PARTIAL (sent locally, or over veth: only
 * the pseudo-header sum is in the field yet) and CHECKSUM_UNNECESSARY
 * (checked by the device) count as good, as in nf_ip_checksum. Otherwise,
 * and always at XDP, the sum is computed over the segment, copied into a
 * per-CPU scratch buffer so that bpf_csum_diff can walk it in 512-byte steps.
 */
#ifndef VIGIL_PKT_CSUM_BPF_H
#define VIGIL_PKT_CSUM_BPF_H

#include "kern_ctx.bpf.h"
#include "pkt.bpf.h"

#define VIGIL_CHECKSUM_NONE 0
#define VIGIL_CHECKSUM_UNNECESSARY 1
#define VIGIL_CHECKSUM_COMPLETE 2
#define VIGIL_CHECKSUM_PARTIAL 3

/* Segments longer than this with no checksum state get no reply. */
#define VIGIL_CSUM_SCRATCH 1536

struct vigil_csum_scratch {
	__u8 b[VIGIL_CSUM_SCRATCH + 4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_csum_scratch);
} vigil_csum_scratch SEC(".maps");

static __always_inline __u8 vigil_ip_summed(struct __sk_buff *skb)
{
	const struct sk_buff *k = vigil_skb_of(skb);

	return BPF_CORE_READ_BITFIELD_PROBED(k, ip_summed);
}

/* A CHECKSUM_PARTIAL skb: is the sum the stack or device still owes the one
 * starting off bytes into the frame, its field at off + field? */
static __always_inline bool vigil_partial_at(struct __sk_buff *skb, __u32 off, __u16 field)
{
	const struct sk_buff *k = vigil_skb_of(skb);
	__u64 data_off = (__u64)BPF_CORE_READ(k, data) - (__u64)BPF_CORE_READ(k, head);

	return BPF_CORE_READ(k, csum_start) == data_off + off && BPF_CORE_READ(k, csum_offset) == field;
}

/* Computes the L4 checksum of the segment p describes; true when it holds. */
static __always_inline bool vigil_l4_csum_verify(void *ctx, bool xdp, const struct vigil_pkt *p)
{
	struct vigil_csum_scratch *s;
	__u32 zero = 0, len = p->l4_len, rlen, sum;

	if (p->proto == VIGIL_IPPROTO_UDP && p->family == VIGIL_AF_INET && !p->l4_check)
		return true;	/* IPv4 UDP without a checksum */
	/* len - 1 below the bound, then + 1: a verifier before Linux 6.8 learns
	 * nothing from len != 0, and the load needs a length of at least 1.
	 * barrier_var keeps the compiler from folding it back into len. */
	len -= 1;
	if (len >= VIGIL_CSUM_SCRATCH)
		return false;
	barrier_var(len);
	len += 1;
	s = bpf_map_lookup_elem(&vigil_csum_scratch, &zero);
	if (!s)
		return false;
	if (vigil_load(ctx, xdp, p->l4_off, s->b, len))
		return false;
	rlen = (len + 3) & ~3u;
	/* zero the bytes that round the length up to a whole word */
	*(__u32 *)&s->b[len] = 0;
	sum = vigil_pseudo_sum(p, p->saddr, p->daddr, p->proto, len);
#pragma unroll
	for (int i = 0; i < VIGIL_CSUM_SCRATCH / 512; i++) {
		__u32 off = i * 512, n;

		if (off >= rlen)
			break;
		n = rlen - off;
		if (n > 512)
			n = 512;
		sum = bpf_csum_diff(NULL, 0, (void *)&s->b[off], n, sum);
	}
	return vigil_csum_fold(sum) == 0xffff;
}

static __always_inline bool vigil_tc_l4_csum_ok(struct __sk_buff *skb, const struct vigil_pkt *p)
{
	__u8 summed = vigil_ip_summed(skb);

	if (summed == VIGIL_CHECKSUM_PARTIAL || summed == VIGIL_CHECKSUM_UNNECESSARY)
		return true;
	return vigil_l4_csum_verify(skb, false, p);
}

#endif
