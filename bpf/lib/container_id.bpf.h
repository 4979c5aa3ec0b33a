/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The container id a task's cgroup names, for the 'container' selector of
 * exec and file rules: read in BPF because the agent cannot know the
 * containers started after a policy is loaded. Runtimes name a
 * container's cgroup docker-<id>.scope (Docker with systemd),
 * cri-containerd-<id>.scope, crio-<id>.scope, libpod-<id>.scope (podman),
 * or <id> (the cgroupfs drivers: /docker/<id>), <id> 64 lowercase hex
 * digits. The innermost of the task's cgroup and its nearest ancestors
 * that names one wins, as lib/ids.c decides the events' 'docker' field,
 * so a container that makes cgroups of its own stays itself.
 *
 * kernfs names are read once per cgroup and the answer (an id or none)
 * cached by the cgroup's id, which the kernel never reuses within a boot:
 * an exec or open of a known cgroup costs one hash lookup.
 */
#ifndef VIGIL_CONTAINER_ID_BPF_H
#define VIGIL_CONTAINER_ID_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/proc_policy.h>

#define VIGIL_CID_DEPTH 8	/* the cgroup and its 7 nearest ancestors */
#define VIGIL_CID_NAME 128	/* bytes of a name read: longer ones name no container */
#define VIGIL_CID_CACHE 4096	/* cgroups; the least recently used go first */

struct vigil_cid {
	char id[VIGIL_CID_LEN];
	__u32 found;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_CID_CACHE);
	__type(key, __u64);	/* the cgroup's id */
	__type(value, struct vigil_cid);
} vigil_pcid SEC(".maps");

static __always_inline bool cid_starts(const char *buf, const char *with, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		if (buf[i] != with[i])
			return false;
	return true;
}

/* The offset of the id in a cgroup's name of len bytes, or -1. */
static __always_inline int cid_parse(const char *buf, __u32 len)
{
	__u32 pl, rest;

	if (cid_starts(buf, "cri-containerd-", 15))
		pl = 15;
	else if (cid_starts(buf, "docker-", 7) || cid_starts(buf, "libpod-", 7))
		pl = 7;
	else if (cid_starts(buf, "crio-", 5))
		pl = 5;
	else
		pl = 0;
	rest = len - pl;
	if (len < pl || (rest != VIGIL_CID_LEN && rest != VIGIL_CID_LEN + 6))
		return -1;
	if (rest != VIGIL_CID_LEN && !cid_starts(buf + pl + VIGIL_CID_LEN, ".scope", 6))
		return -1;
	for (__u32 i = 0; i < VIGIL_CID_LEN; i++) {
		char c = buf[(pl + i) & (VIGIL_CID_NAME - 1)];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
	}
	return pl;
}

struct cid_walk {
	struct cgroup *cg;
	char *buf;		/* VIGIL_CID_NAME bytes and more */
	struct vigil_cid *out;
	int level;
};

static long cid_step(__u32 i, struct cid_walk *w)
{
	struct cgroup *cg = w->cg, *anc;	/* not w->cg in the macro: CO-RE would relocate struct cid_walk */
	int level = w->level - (int)i, at;
	const char *name;
	long n;

	if (level < 1)
		return 1;	/* the root cgroup names no container */
	anc = BPF_CORE_READ(cg, ancestors[level & 255]);
	name = BPF_CORE_READ(anc, kn, name);
	n = bpf_probe_read_kernel_str(w->buf, VIGIL_CID_NAME, name);
	if (n <= 1 || n >= VIGIL_CID_NAME)
		return 0;
	at = cid_parse(w->buf, n - 1);
	if (at < 0)
		return 0;
	for (__u32 j = 0; j < VIGIL_CID_LEN; j++)
		w->out->id[j] = w->buf[(at + j) & (VIGIL_CID_NAME - 1)];
	w->out->found = 1;
	return 1;
}

/* The container id of t's cgroup into out (cached); false when it names
 * none. buf: VIGIL_CID_NAME bytes of scratch. */
static __always_inline bool vigil_container_id(struct task_struct *t, char *buf,
					       struct vigil_cid *out)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u64 id = BPF_CORE_READ(cg, kn, id);
	struct vigil_cid *c;
	struct cid_walk w = { .cg = cg, .buf = buf, .out = out };

	if (!cg)
		return false;
	c = bpf_map_lookup_elem(&vigil_pcid, &id);
	if (c) {
		__builtin_memcpy(out, c, sizeof(*out));
		return out->found;
	}
	out->found = 0;
	w.level = BPF_CORE_READ(cg, level);
	bpf_loop(VIGIL_CID_DEPTH, cid_step, &w, 0);
	bpf_map_update_elem(&vigil_pcid, &id, out, BPF_ANY);
	return out->found;
}

#endif
