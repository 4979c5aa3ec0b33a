// SPDX-License-Identifier: GPL-2.0
/*
 * The stream benchmark's producer (bench/stream.sh): on getppid() from the
 * benchmark's own process only, writes a burst of fixed-size events (64 or
 * 512 bytes, a vigil_hdr each, with a sequence number) into its own ring,
 * as fast as the kernel allows, with bpf_loop. Its own ring, not pinned:
 * nothing here touches vigil's pins or another process's events.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <vigil/events.h>
#include "lib/wakeup.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define NR_getppid 110	/* x86_64 */
#define BENCH_TYPE 127

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);	/* the harness sets the size */
} bench_ring SEC(".maps");

const volatile __u32 bench_pid;
const volatile __u32 bench_big;		/* 512-byte events, else 64 */
const volatile __u32 bench_burst = 128;
const volatile __u32 bench_no_wakeup = 1;	/* vigil's policy; 0: the kernel's default */
const volatile __u64 bench_wakeup_bytes = 1 << 20;

__u64 bench_seq;
__u64 bench_full;	/* failed reserves */

static __always_inline __u64 wakeup_flag(__u32 size)
{
	if (!bench_no_wakeup)
		return 0;
	return vigil_wakeup_flag_for(bpf_ringbuf_query(&bench_ring, BPF_RB_AVAIL_DATA), size,
				     bench_wakeup_bytes);
}

static __always_inline void fill_text(__u64 *p, int words)
{
	for (int i = 0; i < words; i++)
		p[i] = 0x746e656d75677261ull;	/* "argument" */
}

static long one(__u32 i, void *ctx)
{
	struct vigil_hdr *h;
	__u32 size = bench_big ? 512 : 64;

	if (bench_big)
		h = bpf_ringbuf_reserve(&bench_ring, 512, 0);
	else
		h = bpf_ringbuf_reserve(&bench_ring, 64, 0);
	if (!h) {
		__sync_fetch_and_add(&bench_full, 1);
		return 1;	/* full: end the burst */
	}
	h->type = BENCH_TYPE;
	h->size = size;
	h->cpu = i;
	h->seq = ++bench_seq;	/* one producer thread: no atomic needed */
	h->ktime = 0;
	/* The rest is text, as arguments and paths are in real events: what
	 * a JSON consumer (c) encodes as a string, and what every consumer
	 * ships. */
	if (bench_big)
		fill_text((__u64 *)(h + 1), (512 - sizeof(*h)) / 8);
	else
		fill_text((__u64 *)(h + 1), (64 - sizeof(*h)) / 8);
	bpf_ringbuf_submit(h, wakeup_flag(size));
	return 0;
}

SEC("raw_tp/sys_enter")
int bench_produce(struct bpf_raw_tracepoint_args *ctx)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != bench_pid || ctx->args[1] != NR_getppid)
		return 0;
	bpf_loop(bench_burst, one, NULL, 0);
	return 0;
}
