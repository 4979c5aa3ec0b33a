/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel offers that some of vigil's programs need, probed
 * from its BTF at start, so that a missing piece turns one part off by name
 * instead of failing the whole load (docs/kernels.md).
 */
#ifndef VIGIL_AGENT_KERNEL_FEATURES_H
#define VIGIL_AGENT_KERNEL_FEATURES_H

#include <stdbool.h>

struct vigil_buf;

/* Classic tracepoint programs (tp/: syscalls, io_uring) are attached by
 * the tracepoint's id in tracefs, which a fresh machine may not have
 * mounted: mounts it at /sys/kernel/tracing when neither there nor under
 * debugfs. 0, or the mount's error, said. */
int vigil_tracefs_ready(void);

/* True when the kernel has the tracepoint NAME for tp_btf programs (its
 * btf_trace_NAME type). Unknown (no vmlinux BTF) counts as present: the
 * load then says what is wrong. */
bool vigil_kernel_has_tracepoint(const char *name);

/* How many arguments the tracepoint NAME passes to tp_btf programs (its
 * btf_trace_NAME prototype, less the context), or -1 when unknown (no
 * vmlinux BTF, no such tracepoint): some grew one (sched_process_exit's
 * group_dead, tcp_send_reset's reason) after the kernels fleets run. */
int vigil_kernel_tracepoint_args(const char *name);

/* True when the kernel has the kfunc NAME (a BTF function of vmlinux). */
bool vigil_kernel_has_kfunc(const char *name);

/* True when the kernel has TCX links (6.6); without them TC enforcement
 * is netlink clsact filters (agent/enforce/enforce_tc.c). */
bool vigil_kernel_has_tcx(void);

/* What the kernel has or lacks, decided by loading the program that needs
 * it or from BTF, and what vigild does with it or instead: logged once
 * ("kernel: has|no FEATURE: EFFECT") and kept for vigil status. */
void vigil_kernel_feature(const char *feature, bool present, const char *effect);
/* vigil_kernel_feature(feature, false, effect). */
void vigil_kernel_lacks(const char *feature, const char *effect);
/* The i-th feature decided (for metrics): false past the last. */
bool vigil_kernel_feature_at(unsigned i, const char **feature, bool *present);
/* For vigil status: one line saying nothing is missing when nothing is,
 * then one per feature decided, with its effect. */
void vigil_kernel_describe(struct vigil_buf *out);

/* Test-only switch: whether VIGIL_TEST_REFUSE (comma-separated: xdp_meta,
 * tcx, sock_destroy) names feature. vigild then acts as on a kernel that
 * refuses it, down the same path: the probes above say no, and a program
 * that needs a refused helper is made to fail its real load. Not for
 * production; documented in docs/kernels.md only. */
bool vigil_test_refuses(const char *feature);

#endif
