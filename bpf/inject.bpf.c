// SPDX-License-Identifier: GPL-2.0
/*
 * Events the agent itself has to tell (losses it learned of), written into
 * the ring by a syscall program that the agent runs with BPF_PROG_TEST_RUN:
 * they get a sequence number and a place in ring order like any other event,
 * so every consumer of the stream, local or remote, sees them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "lib/ring.bpf.h"

char LICENSE[] SEC("license") = "GPL";

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
