// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel feature probes from vmlinux BTF (agent/core/kernel_features.h). Each probe
 * reads the BTF afresh: there are few, at start; the one policy loads ask
 * again (TCX) is kept.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "buf.h"
#include "core/kernel_features.h"
#include "log.h"

#define LACKS_MAX 16

/* Filled at start, on the agent's one thread, before the control socket
 * answers. */
static struct {
	const char *feature, *effect;
} lacks[LACKS_MAX];
static unsigned n_lacks;

/* Is there a type NAME of KIND in vmlinux BTF? Unknown counts as yes. */
static bool vmlinux_has(const char *name, int kind)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux) {
		vlog_debug("kernel features: no vmlinux BTF to look for %s", name);
		return true;
	}
	found = btf__find_by_name_kind(vmlinux, name, kind) > 0;
	btf__free(vmlinux);
	return found;
}

bool vigil_kernel_has_tracepoint(const char *name)
{
	char type[128];

	snprintf(type, sizeof(type), "btf_trace_%s", name);
	return vmlinux_has(type, BTF_KIND_TYPEDEF);
}

int vigil_kernel_tracepoint_args(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const struct btf_type *t;
	char type[128];
	int id, n = -1;

	if (!vmlinux)
		return -1;
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(vmlinux, id) : NULL;
	t = t ? btf__type_by_id(vmlinux, t->type) : NULL;	/* a pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(vmlinux, t->type) : NULL;
	if (t && btf_is_func_proto(t) && btf_vlen(t) >= 1)
		n = btf_vlen(t) - 1;
	btf__free(vmlinux);
	return n;
}

bool vigil_kernel_has_kfunc(const char *name)
{
	return vmlinux_has(name, BTF_KIND_FUNC);
}

/* Probed once: each instance of the enforcement objects asks, and reading
 * vmlinux BTF costs tens of milliseconds. */
bool vigil_kernel_has_tcx(void)
{
	static int has = -1;

	if (has < 0)
		has = vmlinux_has("tcx_entry", BTF_KIND_STRUCT);
	return has;
}

void vigil_kernel_lacks(const char *feature, const char *effect)
{
	/* Said once, however many parts ask (stream sinks, enforcement
	 * instances). */
	for (unsigned i = 0; i < n_lacks; i++)
		if (!strcmp(lacks[i].feature, feature) && !strcmp(lacks[i].effect, effect))
			return;
	vlog_info("kernel: no %s: %s", feature, effect);
	if (n_lacks < LACKS_MAX)
		lacks[n_lacks++] = (typeof(lacks[0])){ feature, effect };
}

void vigil_kernel_describe(struct vigil_buf *out)
{
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	if (!n_lacks)
		vbuf_printf(out, "kernel %s: nothing vigild uses is missing\n", u.release);
	for (unsigned i = 0; i < n_lacks; i++)
		vbuf_printf(out, "kernel %s: no %s: %s\n", u.release, lacks[i].feature,
			    lacks[i].effect);
}
