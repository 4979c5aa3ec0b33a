/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Linux before 6.7 verifies a bpf_loop callback once, from the state at its
 * call (6.7 verifies it "as if called an unknown number of times"). A field
 * of the loop's context that starts as a constant then looks constant
 * inside the callback: its branches on that field look decided, and the
 * verifier removes the side it never took, so from the second step on the
 * callback runs without it. Seen on Debian 12's 6.1: the broadcast walk
 * never looked at an address (docs/kernels.md). A field that changes from
 * step to step starts from vigil_loop_opaque(value): the same value, which
 * the verifier cannot know, as it comes through a map (.bss, always zero).
 */
#ifndef VIGIL_LOOP_BPF_H
#define VIGIL_LOOP_BPF_H

#include "vmlinux.h"

static volatile __u64 vigil_loop_zero;

static __always_inline __u64 vigil_loop_opaque(__u64 v)
{
	return v + vigil_loop_zero;
}

#endif
