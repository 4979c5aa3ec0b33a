// SPDX-License-Identifier: GPL-2.0
/*
 * Events the agent itself has to tell (losses it learned of, the health
 * ring's records), written into the ring by syscall programs that the
 * agent runs with BPF_PROG_TEST_RUN: they get a sequence number and a place
 * in ring order like any other event, so every consumer of the stream,
 * local or remote, sees them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/ring.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EINVAL 22

SEC("syscall")
int inject_loss(struct vigil_loss *in)
{
	struct vigil_loss *ev = vigil_reserve(VIGIL_EV_LOSS, sizeof(*ev));

	if (!ev)
		return 0;
	ev->ring_full = in->ring_full;
	ev->recursion_misses = in->recursion_misses;
	ev->threads_exited = in->threads_exited;
	vigil_submit(ev);
	return 1;
}

/* The record is built in memory of the program's own: a ring output
 * copies from a map value, not from the syscall's context. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_health_inject);
} health_scratch SEC(".maps");

/* A health ring record wrapped as a health event (vigil/health_events.h),
 * copied into the main ring: 1 when written, 0 when the ring is full (the
 * agent tries again, the health ring keeping the record). Unlike every
 * other writer this one reserves before it takes a sequence number: a ring
 * still full loses nothing here, so it must leave no gap in seq and count
 * no loss (the agent retries at each poll while the ring stays full). */
SEC("syscall")
int inject_health(struct vigil_health_inject *in)
{
	struct vigil_health_inject *s;
	struct bpf_dynptr rec;
	struct vigil_hdr *h;
	__u32 zero = 0, len = in->len;

	if (len < sizeof(struct vigil_health) + sizeof(struct vigil_hdr) ||
	    len > sizeof(s->rec) || (len & 7))
		return -EINVAL;
	s = bpf_map_lookup_elem(&health_scratch, &zero);
	if (!s || bpf_probe_read_kernel(s->rec, len, in->rec))
		return -EINVAL;
	if (bpf_ringbuf_reserve_dynptr(&vigil_ring, len, 0, &rec)) {
		bpf_ringbuf_discard_dynptr(&rec, 0);	/* the verifier's rule: a no-op here */
		return 0;
	}
	h = (struct vigil_hdr *)s->rec;
	h->type = VIGIL_EV_HEALTH;
	h->size = len;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime = bpf_ktime_get_ns();
	h->seq = vigil_next_seq();
	bpf_dynptr_write(&rec, 0, s->rec, len, 0);
	bpf_ringbuf_submit_dynptr(&rec, vigil_wakeup_flag(len, true));
	return 1;
}
