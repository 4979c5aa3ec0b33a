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

/* What the kernel lacks and what vigild does instead: logged once
 * ("kernel: no FEATURE: EFFECT") and kept for vigil status. */
void vigil_kernel_lacks(const char *feature, const char *effect);
/* One line per thing vigild turned off for this kernel, or one saying
 * nothing is missing, for vigil status. */
void vigil_kernel_describe(struct vigil_buf *out);

#endif
