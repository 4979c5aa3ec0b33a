// SPDX-License-Identifier: GPL-2.0
/*
 * The frame program of bench/syn_sender: run by the kernel's XDP packet
 * generator (BPF_PROG_TEST_RUN, live frames) on each SYN, it holds the frame
 * until its slot (one every interval_ns) and redirects it out of the
 * sender's veth. Pacing here, frame by frame, rather than between test runs:
 * a test run costs about 25 ms of teardown, and a run's frames leave back to
 * back, which a veth's 256-frame ring would mostly drop.
 *
 * It also writes the SYN into the frame every time: the generator fills a
 * page once and resends it as it comes back, and a receiver that builds its
 * RST in place (vigil's TC and XDP programs) has turned it into a RST.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 out_ifindex;
const volatile __u64 interval_ns;
#define SYN_LEN 54	/* Ethernet, IPv4 and TCP headers, no options */
__u8 syn[SYN_LEN];	/* set by the sender after load */

__u64 next_ns;	/* the next frame's slot; one sending thread */

static long before_slot(__u32 i, __u64 *now)
{
	*now = bpf_ktime_get_ns();
	return *now >= next_ns;	/* 1 ends the loop */
}

SEC("xdp")
int syn_pace(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u64 now = bpf_ktime_get_ns();

	if (data + SYN_LEN > end)
		return XDP_ABORTED;
	__builtin_memcpy(data, syn, SYN_LEN);
	/* Behind by more than 16 slots (the start, a test run's teardown):
	 * start over from now rather than catch up in a burst. */
	if (now > next_ns + 16 * interval_ns)
		next_ns = now;
	bpf_loop(1 << 23, before_slot, &now, 0);
	next_ns += interval_ns;
	return bpf_redirect(out_ifindex, 0);
}
