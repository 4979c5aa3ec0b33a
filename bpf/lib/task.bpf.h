/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every process-related event says about a task: ids, credentials,
 * its exec key and its parent's, its cgroup. vigil_execs maps a live
 * process (tgid) to its exec key; it is pinned so every BPF object (process,
 * network) names processes the same way, and a restarted agent keeps it.
 */
#ifndef VIGIL_TASK_BPF_H
#define VIGIL_TASK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>
#include "loop.bpf.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tgid */
	__type(value, __u64);	/* exec_ktime */
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_execs SEC(".maps");

/* The exec key of a live process; its start time when we never saw it exec
 * (found at start, or a fork whose event was lost). */
static __always_inline __u64 vigil_exec_key_get(__u32 tgid, __u64 start_time)
{
	__u64 *k = bpf_map_lookup_elem(&vigil_execs, &tgid);

	return k ? *k : start_time;
}

static __always_inline void vigil_exec_key_set(const struct vigil_proc *p)
{
	/* Copies on the stack: p may be ring memory, which helpers take as
	 * one argument at most. */
	__u32 pid = p->pid;
	__u64 key = p->exec_ktime;

	bpf_map_update_elem(&vigil_execs, &pid, &key, BPF_ANY);
}

/* Older kernels call kernfs_node's parent "parent"; 6.15+ "__parent". */
struct kernfs_node___old {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *vigil_kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(kn->__parent))
		return BPF_CORE_READ(kn, __parent);
	return BPF_CORE_READ((struct kernfs_node___old *)kn, parent);
}

static __always_inline struct kernfs_node *vigil_task_cgroup_kn(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn);
}

/* Fills p for any task pointer (one from bpf_get_current_task(), or read
 * from kernel memory). */
static __always_inline void vigil_proc_fill(struct vigil_proc *p, struct task_struct *t,
					    __u64 exec_ktime)
{
	struct task_struct *parent = BPF_CORE_READ(t, real_parent);
	__u32 ppid = BPF_CORE_READ(parent, tgid);

	p->pid = BPF_CORE_READ(t, tgid);
	p->tid = BPF_CORE_READ(t, pid);
	p->ppid = ppid;
	p->uid = BPF_CORE_READ(t, real_cred, uid.val);
	p->gid = BPF_CORE_READ(t, real_cred, gid.val);
	p->auid = (__u32)-1;
	if (bpf_core_field_exists(t->loginuid))
		p->auid = BPF_CORE_READ(t, loginuid.val);
	p->exec_ktime = exec_ktime;
	p->parent_exec_ktime = ppid ? vigil_exec_key_get(ppid, BPF_CORE_READ(parent, start_time)) : 0;
	p->cgroup_id = BPF_CORE_READ(vigil_task_cgroup_kn(t), id);
}

/* The same for a BTF pointer t (a tp_btf argument, an iterator's task):
 * fields are loaded directly instead of through bpf_probe_read_kernel,
 * which was most of the fork and exit programs' time. */
static __always_inline void vigil_proc_fill_btf(struct vigil_proc *p, struct task_struct *t,
					    __u64 exec_ktime)
{
	struct task_struct *parent = t->real_parent;
	const struct cred *cred = t->real_cred;
	__u32 ppid = parent->tgid;

	p->pid = t->tgid;
	p->tid = t->pid;
	p->ppid = ppid;
	p->uid = cred->uid.val;
	p->gid = cred->gid.val;
	p->auid = (__u32)-1;
	if (bpf_core_field_exists(t->loginuid))
		p->auid = t->loginuid.val;
	p->exec_ktime = exec_ktime;
	p->parent_exec_ktime = ppid ? vigil_exec_key_get(ppid, parent->start_time) : 0;
	p->cgroup_id = t->cgroups->dfl_cgrp->kn->id;
}

struct vigil_cgroup_walk {
	char *buf;
	struct kernfs_node *kn;
	__u32 pos;
};

#define VIGIL_CGROUP_MASK (VIGIL_CGROUP_MAX - 1)

static long vigil_cgroup_step(__u32 i, struct vigil_cgroup_walk *w)
{
	struct kernfs_node *kn = w->kn;	/* a local: CO-RE relocates kn->name only */
	struct kernfs_node *parent = vigil_kn_parent(kn);
	const char *name;
	long len;

	if (!parent)
		return 1;	/* the root: its name is not part of the path */
	name = BPF_CORE_READ(kn, name);
	/* Names are read forward into the slot, then the slot is measured:
	 * the helper tells the length only after the copy. */
	if (w->pos < VIGIL_NAME_MAX + 2)
		return 1;
	len = bpf_probe_read_kernel_str(w->buf + VIGIL_PATH_BUF, VIGIL_NAME_MAX + 1, name);
	if (len <= 1)
		return 1;
	len -= 1;
	w->pos -= len;
	bpf_probe_read_kernel(w->buf + (w->pos & VIGIL_CGROUP_MASK), len & VIGIL_NAME_MAX,
			      w->buf + VIGIL_PATH_BUF);
	w->pos -= 1;
	w->buf[w->pos & VIGIL_CGROUP_MASK] = '/';
	w->kn = parent;
	return 0;
}

/* The task's cgroup v2 path, written backwards into buf (VIGIL_PATH_BUF +
 * VIGIL_NAME_MAX + 1 bytes) ending at VIGIL_CGROUP_MAX; "/" for the root. */
static __always_inline __u32 vigil_cgroup_path(char *buf, struct task_struct *t, __u32 *start)
{
	struct vigil_cgroup_walk w = {
		.buf = buf,
		.kn = vigil_task_cgroup_kn(t),
		.pos = vigil_loop_opaque(VIGIL_CGROUP_MAX),	/* loop.bpf.h */
	};

	if (w.kn)
		bpf_loop(16, vigil_cgroup_step, &w, 0);
	if (w.pos == VIGIL_CGROUP_MAX) {
		w.pos -= 1;
		buf[w.pos & VIGIL_CGROUP_MASK] = '/';
	}
	*start = w.pos & VIGIL_CGROUP_MASK;
	return VIGIL_CGROUP_MAX - w.pos;
}

#endif
