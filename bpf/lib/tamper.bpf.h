/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bpf/tamper.bpf.c shares with the file rules' hooks
 * (bpf/enforce_proc.bpf.c): the agent's tgid, the one writer of tamper
 * records, and the check of an opened file against the agent's /proc
 * files. Every open passes that check: in tamper_open, tamper_openat,
 * tamper_openat2 and tamper_creat while no file rule hooks the call, and
 * in the rule's own hook while one does (vigil_tamper_fold), so an open
 * pays one program, not two. The agent moves the check
 * (agent/core/tamper.c): through a state where both hooks check, held for
 * an RCU grace period, so that whichever hooks a run of the tracepoint
 * sees, one of them checks (an open in that window may be recorded
 * twice).
 */
#ifndef VIGIL_TAMPER_BPF_H
#define VIGIL_TAMPER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/proc_policy.h>
#include "health.bpf.h"
#include "fd.bpf.h"
#include "task.bpf.h"

#define PROC_SUPER_MAGIC_ 0x9fa0
#define PIDTYPE_PID_ 0

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_agent_tgid SEC(".maps");

/* Which hook of each open call checks its opens (vigil/proc_policy.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_tamper_fold);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_tamper_fold SEC(".maps");

/* tamper.bpf.c's hook of the call skips the check. */
static __always_inline bool vigil_tamper_own_skips(__u32 verb)
{
	__u32 zero = 0;
	struct vigil_tamper_fold *f = bpf_map_lookup_elem(&vigil_tamper_fold, &zero);

	return f && (f->own_skips & (1u << verb));
}

/* The file rule's hook of the call checks. */
static __always_inline bool vigil_tamper_in_rule(__u32 verb)
{
	__u32 zero = 0;
	struct vigil_tamper_fold *f = bpf_map_lookup_elem(&vigil_tamper_fold, &zero);

	return f && (f->in_rule & (1u << verb));
}

/* The one place tamper records are reserved in a ring, and submitted
 * (tamper_commit): type VIGIL_EV_TAMPER (struct vigil_tamper) or
 * VIGIL_EV_TAMPER_PIN (struct vigil_tamper_pin, which begins with one). */
static __always_inline struct vigil_tamper *tamper_begin(struct task_struct *cur, __u32 agent,
							 __u32 what, __u16 type, __u32 size)
{
	struct vigil_tamper *ev = vigil_health_reserve(type, size);

	if (!ev)
		return NULL;
	vigil_proc_fill_btf(&ev->proc, cur,
			    vigil_exec_key_get(cur->tgid, cur->group_leader->start_time));
	ev->what = what;
	ev->agent_pid = agent;
	ev->result = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	return ev;
}

static __always_inline void tamper_commit(struct vigil_tamper *ev)
{
	vigil_health_submit(ev);
}

/* The agent's tgid, or 0 when cur is the agent or none started yet: the
 * agent does to itself what its options and policies ask. */
static __always_inline __u32 agent_other_than(struct task_struct *cur)
{
	__u32 zero = 0, *agent = bpf_map_lookup_elem(&vigil_agent_tgid, &zero);

	if (!agent || !*agent || cur->tgid == *agent)
		return 0;
	return *agent;
}

/* The first n bytes of a and b are the same (n a constant; clang would
 * turn __builtin_memcmp into a call to memcmp, which BPF does not have). */
static __always_inline bool bytes_same(const char *a, const char *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The magic of the superblock f is on. With bpf_rdonly_cast the three
 * hops are direct loads, not helper calls: this runs at every open's exit. */
static __always_inline __u64 file_sb_magic(struct file *f)
{
	if (bpf_rdonly_cast) {
		struct file *t = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));

		return t->f_inode->i_sb->s_magic;
	}
	return BPF_CORE_READ(f, f_inode, i_sb, s_magic);
}

/* An open, at its exit (the fd installed, f its file, ret the fd): of the
 * agent's mem, maps or environ under /proc (any proc mount, by task
 * directory or by thread's)? The target comes from the proc inode, not
 * the path: exact, and cheaper than building one. Every open passes
 * here, so the order is by cost: the agent's own opens first, then the
 * file's superblock magic; only proc files read further. */
static __always_inline void vigil_tamper_open_file(struct task_struct *cur, struct file *f, long ret)
{
	struct hlist_node *first;
	struct vigil_tamper *ev;
	struct proc_inode *pi;
	struct task_struct *t;
	struct inode *ino;
	struct pid *pid;
	__u32 agent, what, flags;
	char name[8] = {};

	agent = agent_other_than(cur);
	if (!agent)
		return;
	if (file_sb_magic(f) != PROC_SUPER_MAGIC_)
		return;
	ino = BPF_CORE_READ(f, f_inode);
	pi = container_of(ino, struct proc_inode, vfs_inode);
	pid = BPF_CORE_READ(pi, pid);
	if (!pid)
		return;
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID_].first);
	if (!first)
		return;
	t = container_of(first, struct task_struct, pid_links[PIDTYPE_PID_]);
	if (BPF_CORE_READ(t, tgid) != agent)
		return;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (bytes_same(name, "mem", 4))
		what = VIGIL_TAMPER_PROC_MEM;
	else if (bytes_same(name, "maps", 5))
		what = VIGIL_TAMPER_PROC_MAPS;
	else if (bytes_same(name, "environ", 8))
		what = VIGIL_TAMPER_PROC_ENVIRON;
	else
		return;
	/* the flags the file kept (O_CREAT and O_TRUNC are not kept) */
	flags = BPF_CORE_READ(f, f_flags);
	ev = tamper_begin(cur, agent, what, VIGIL_EV_TAMPER, sizeof(*ev));
	if (!ev)
		return;
	ev->arg = flags;
	ev->result = ret;
	tamper_commit(ev);
}

#endif
