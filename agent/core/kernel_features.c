// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel feature probes from vmlinux BTF (agent/core/kernel_features.h). Each probe
 * reads the BTF afresh: there are few, at start; the one policy loads ask
 * again (TCX) is kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "buf.h"
#include "core/kernel_features.h"
#include "log.h"

#define FEATURES_MAX 24

/* Filled at start, on the agent's one thread, before the control socket
 * answers (a policy load may add one later, on the same thread). Copies:
 * some names carry the verifier's reason. */
static struct {
	char feature[320], effect[200];
	bool present;
} features[FEATURES_MAX];
static unsigned n_features;

#define TRACEFS_MAGIC_NUM 0x74726163

int vigil_tracefs_ready(void)
{
	struct statfs st;

	if (!statfs("/sys/kernel/tracing", &st) && st.f_type == TRACEFS_MAGIC_NUM)
		return 0;
	if (!statfs("/sys/kernel/debug/tracing", &st) && st.f_type == TRACEFS_MAGIC_NUM)
		return 0;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return vlog_err(-errno, "cannot mount tracefs at /sys/kernel/tracing: "
				"the syscall tracepoints are found there");
	vlog_info("mounted tracefs at /sys/kernel/tracing");
	return 0;
}

/* VIGIL_TEST_REFUSE, test-only (docs/kernels.md): a comma-separated list
 * of features vigild acts as if the kernel refused. */
bool vigil_test_refuses(const char *feature)
{
	const char *list = getenv("VIGIL_TEST_REFUSE"), *at;
	size_t n = strlen(feature);

	for (at = list; at && (at = strstr(at, feature)); at += n)
		if ((at == list || at[-1] == ',') && (at[n] == ',' || !at[n]))
			return true;
	return false;
}

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

/* The test switch names a kfunc without its bpf_ prefix (sock_destroy). */
bool vigil_kernel_has_kfunc(const char *name)
{
	if (vigil_test_refuses(strncmp(name, "bpf_", 4) ? name : name + 4))
		return false;
	return vmlinux_has(name, BTF_KIND_FUNC);
}

/* Probed once: each instance of the enforcement objects asks, and reading
 * vmlinux BTF costs tens of milliseconds. */
bool vigil_kernel_has_tcx(void)
{
	static int has = -1;

	if (has < 0)
		has = !vigil_test_refuses("tcx") && vmlinux_has("tcx_entry", BTF_KIND_STRUCT);
	return has;
}

void vigil_kernel_feature(const char *feature, bool present, const char *effect)
{
	/* Said once, however many parts ask (stream sinks, enforcement
	 * instances). */
	for (unsigned i = 0; i < n_features; i++)
		if (!strcmp(features[i].feature, feature) && !strcmp(features[i].effect, effect) &&
		    features[i].present == present)
			return;
	vlog_info("kernel: %s %s: %s", present ? "has" : "no", feature, effect);
	if (n_features == FEATURES_MAX)
		return;
	snprintf(features[n_features].feature, sizeof(features[0].feature), "%s", feature);
	snprintf(features[n_features].effect, sizeof(features[0].effect), "%s", effect);
	features[n_features++].present = present;
}

void vigil_kernel_lacks(const char *feature, const char *effect)
{
	vigil_kernel_feature(feature, false, effect);
}

bool vigil_kernel_feature_at(unsigned i, const char **feature, bool *present)
{
	if (i >= n_features)
		return false;
	*feature = features[i].feature;
	*present = features[i].present;
	return true;
}

void vigil_kernel_describe(struct vigil_buf *out)
{
	struct utsname u;
	bool lacks = false;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	for (unsigned i = 0; i < n_features; i++)
		lacks |= !features[i].present;
	if (!lacks)
		vbuf_printf(out, "kernel %s: nothing vigild uses is missing\n", u.release);
	for (unsigned i = 0; i < n_features; i++)
		vbuf_printf(out, "kernel %s: %s %s: %s\n", u.release,
			    features[i].present ? "has" : "no", features[i].feature,
			    features[i].effect);
}
