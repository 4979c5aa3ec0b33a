// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel feature probes from vmlinux BTF (agent/kernel_features.h). Each probe
 * reads the BTF afresh: there are few, all at start.
 */
#include <stdio.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel_features.h"
#include "log.h"

bool vigil_kernel_has_tracepoint(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	char type[128];
	bool found;

	if (!vmlinux) {
		vlog_debug("features: no vmlinux BTF to look for tracepoint %s", name);
		return true;
	}
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	found = btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF) > 0;
	btf__free(vmlinux);
	return found;
}
