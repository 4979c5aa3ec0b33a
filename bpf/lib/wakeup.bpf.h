/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a commit wakes the ring's consumer (BPF_RB_FORCE_WAKEUP) rather than
 * leaving it to its own poll timer (BPF_RB_NO_WAKEUP).
 *
 * Once each time the unconsumed bytes cross another multiple of the
 * threshold, not at every commit past it: a forced wakeup queues an
 * irq_work, a self-IPI (an APIC write that traps under a hypervisor), and a
 * consumer that holds records on purpose (a stream sink waiting for its
 * collector's acks keeps megabytes in the ring) would otherwise cost the
 * producing CPU one per event: measured at 29 % of the stream benchmark's
 * producer. A crossing missed in a race with the consumer is made up by the
 * next multiple or by the consumer's poll timer.
 */
#ifndef VIGIL_WAKEUP_BPF_H
#define VIGIL_WAKEUP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define VIGIL_RINGBUF_HDR 8	/* the kernel's per-record header */

/* The ring space a record of size bytes takes. */
static __always_inline __u64 vigil_ringbuf_span(__u32 size)
{
	return ((__u64)size + VIGIL_RINGBUF_HDR + 7) & ~7ULL;
}

/* avail: the bytes available with this record counted (BPF_RB_AVAIL_DATA
 * after its reserve; before a bpf_ringbuf_output, that plus
 * vigil_ringbuf_span(size)); size: the record's size. */
static __always_inline __u64 vigil_wakeup_flag_for(__u64 avail, __u32 size, __u64 threshold)
{
	__u64 rec = vigil_ringbuf_span(size);
	__u64 before = avail > rec ? avail - rec : 0;

	if (!threshold)
		return BPF_RB_NO_WAKEUP;
	return avail / threshold != before / threshold ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

#endif
