/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an exec's process runs with: credentials, capabilities, namespaces
 * and its pid in its own pid namespace (struct vigil_exec_creds), and what a
 * set-user-id, set-group-id or file-capability binary changed. Direct loads
 * from BTF pointers (tp_btf arguments, the task iterator's task): a few
 * dozen loads, nothing next to an exec's own cost.
 */
#ifndef VIGIL_CREDS_BPF_H
#define VIGIL_CREDS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>

#ifndef S_ISUID
#define S_ISUID 04000
#define S_ISGID 02000
#endif

/* The pid namespace the task lives in, and its pid there; the level is
 * read as a number and bounded, so the array index is a plain read. */
static __always_inline void vigil_task_pidns(struct task_struct *t, __u32 *nspid, __u32 *inum)
{
	struct pid *pid = t->thread_pid;
	unsigned int level = pid ? pid->level : 0;
	struct upid up = {};

	*nspid = 0;
	*inum = 0;
	if (!pid)
		return;
	bpf_probe_read_kernel(&up, sizeof(up),
			      (void *)((unsigned long)pid + bpf_core_field_offset(struct pid, numbers) +
				       (level & 31) * sizeof(struct upid)));
	/* As Tetragon: 0 in the initial namespace, so only a namespace's own
	 * init (a container's) has nspid 1. */
	if (level)
		*nspid = up.nr;
	if (up.ns)
		*inum = BPF_CORE_READ(up.ns, ns.inum);
}

/* The host's namespaces are those of the initial pid namespace's init
 * (its child reaper, reached from level 0 of any task's pid): no kernel
 * global is in BTF to compare with. A bit per enum vigil_ns. */
static __always_inline void vigil_ns_host(struct vigil_exec_creds *c, struct task_struct *t)
{
	struct task_struct *init = t->thread_pid->numbers[0].ns->child_reaper;
	struct nsproxy *h = init ? init->nsproxy : NULL;
	__u32 host[VIGIL_NS_MAX] = {};

	if (!h)
		return;
	host[VIGIL_NS_UTS] = h->uts_ns->ns.inum;
	host[VIGIL_NS_IPC] = h->ipc_ns->ns.inum;
	host[VIGIL_NS_MNT] = h->mnt_ns->ns.inum;
	host[VIGIL_NS_PID] = t->thread_pid->numbers[0].ns->ns.inum;
	host[VIGIL_NS_PID_FOR_CHILDREN] = host[VIGIL_NS_PID];
	host[VIGIL_NS_NET] = h->net_ns->ns.inum;
	host[VIGIL_NS_TIME] = h->time_ns->ns.inum;
	host[VIGIL_NS_TIME_FOR_CHILDREN] = host[VIGIL_NS_TIME];
	host[VIGIL_NS_CGROUP] = h->cgroup_ns->ns.inum;
	host[VIGIL_NS_USER] = init->real_cred->user_ns->ns.inum;
	for (int i = 0; i < VIGIL_NS_MAX; i++)
		if (c->ns[i] && c->ns[i] == host[i])
			c->ns_host |= 1u << i;
}

/* Before Linux 6.3 a capability set was two 32-bit words. */
struct kernel_cap_struct___old {
	__u32 cap[2];
};

static __always_inline __u64 vigil_caps(const kernel_cap_t *k)
{
	const struct kernel_cap_struct___old *old = (const void *)k;

	if (bpf_core_field_exists(k->val))
		return BPF_CORE_READ(k, val);
	return BPF_CORE_READ(old, cap[0]) | (__u64)BPF_CORE_READ(old, cap[1]) << 32;
}

static __always_inline void vigil_exec_creds_fill(struct vigil_exec_creds *c, struct task_struct *t)
{
	const struct cred *cred = t->real_cred;
	struct nsproxy *nsp = t->nsproxy;

	c->euid = cred->euid.val;
	c->egid = cred->egid.val;
	c->suid = cred->suid.val;
	c->sgid = cred->sgid.val;
	c->fsuid = cred->fsuid.val;
	c->fsgid = cred->fsgid.val;
	c->cap_permitted = vigil_caps(&cred->cap_permitted);
	c->cap_effective = vigil_caps(&cred->cap_effective);
	c->cap_inheritable = vigil_caps(&cred->cap_inheritable);
	c->ns[VIGIL_NS_USER] = cred->user_ns->ns.inum;
	vigil_task_pidns(t, &c->nspid, &c->ns[VIGIL_NS_PID]);
	c->secureexec = 0;
	c->pad = 0;
	c->ns_host = 0;
	if (!nsp)	/* an exiting task: its namespaces are gone */
		goto gone;
	c->ns[VIGIL_NS_UTS] = nsp->uts_ns->ns.inum;
	c->ns[VIGIL_NS_IPC] = nsp->ipc_ns->ns.inum;
	c->ns[VIGIL_NS_MNT] = nsp->mnt_ns->ns.inum;
	c->ns[VIGIL_NS_PID_FOR_CHILDREN] = nsp->pid_ns_for_children->ns.inum;
	c->ns[VIGIL_NS_NET] = nsp->net_ns->ns.inum;
	c->ns[VIGIL_NS_TIME] = nsp->time_ns->ns.inum;
	c->ns[VIGIL_NS_TIME_FOR_CHILDREN] = nsp->time_ns_for_children->ns.inum;
	c->ns[VIGIL_NS_CGROUP] = nsp->cgroup_ns->ns.inum;
	vigil_ns_host(c, t);
	return;
gone:
	for (int i = 0; i < VIGIL_NS_MAX; i++)
		if (i != VIGIL_NS_USER && i != VIGIL_NS_PID)
			c->ns[i] = 0;
}

/*
 * At sched_process_exec the new credentials are committed and the old ones
 * gone, but what the exec did is still in bprm: per_clear is set when the
 * file's set-id bits applied or it raised capabilities. The real ids do not
 * change at exec, so an effective id that differs from the real one came
 * from the file, as in Tetragon's bprm_committing_creds check.
 */
static __always_inline __u32 vigil_secureexec(const struct vigil_exec_creds *c,
					       struct linux_binprm *bprm, struct task_struct *t)
{
	umode_t mode = bprm->file->f_inode->i_mode;
	__u32 uid = t->real_cred->uid.val, gid = t->real_cred->gid.val, s = 0;

	if (!bprm->per_clear)
		return 0;
	if (c->euid != uid) {
		s |= VIGIL_SECEXEC_SETUID;
		if (uid && !c->euid)
			s |= VIGIL_SECEXEC_SETUID_ROOT;
	}
	if (c->egid != gid) {
		s |= VIGIL_SECEXEC_SETGID;
		if (gid && !c->egid)
			s |= VIGIL_SECEXEC_SETGID_ROOT;
	}
	/* Left: capabilities raised by the file itself (no set-id bit, no
	 * ambient set, which would cancel file capabilities). */
	if (!(mode & (S_ISUID | S_ISGID)) && c->cap_permitted && !vigil_caps(&t->real_cred->cap_ambient))
		s |= VIGIL_SECEXEC_FILE_CAPS;
	return s;
}

#endif
