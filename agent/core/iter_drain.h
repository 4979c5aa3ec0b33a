/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs a BPF iterator program once: attaches it, reads its output to the
 * end (the programs write what they find into maps or the ring; reading
 * just drives them) and detaches it. The iterator walks what the calling
 * thread sees (its network namespace, for iter/tcp and iter/udp).
 */
#ifndef VIGIL_ITER_DRAIN_H
#define VIGIL_ITER_DRAIN_H

struct bpf_program;

/* 0, or -errno when it could not be attached or started. */
int vigil_iter_drain(struct bpf_program *prog);

#endif
