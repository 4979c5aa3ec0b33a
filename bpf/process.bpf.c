// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: exec, fork (processes, not threads) and exit (once per
 * process, when its last thread goes), from tp_btf tracepoints only, plus a
 * sleepable task iterator that reports the processes already running when
 * the agent starts (flag PROCFS), through the same ring, so every consumer
 * of the stream sees them in order.
 *
 * vigil_execs keeps each live process's exec key (pid, exec_ktime) so every
 * event can name its parent exactly, whatever user space has cached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "lib/ring.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/proc_budget.bpf.h"
#include "lib/creds.bpf.h"
#include "lib/redact.bpf.h"
#include "lib/filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define EXEC_DATA_BUF (16384 + 4096)	/* offsets masked to 16K, lengths to 4K; per-CPU values stay under 32K */
#define EXEC_OFF_MASK 16383

struct exec_scratch {
	struct vigil_redact_work redact;
	char path[VIGIL_PATH_BUF + VIGIL_NAME_MAX + 1];
	union {
		struct vigil_exec ev;	/* its data[] runs on into raw */
		char raw[sizeof(struct vigil_exec) + EXEC_DATA_BUF];
	};
};

/* Tracepoints run with preemption off, one at a time per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_scratch);
} exec_scratch SEC(".maps");

/* The iterator sleeps (it reads other processes' memory): it must not share
 * per-CPU scratch with tracepoints that may run on its CPU meanwhile. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_scratch);
} iter_scratch SEC(".maps");

static __always_inline __u32 append_path(struct exec_scratch *s, __u32 off, const struct path *p,
					 const struct path *root, bool *truncated)
{
	__u32 start, len = vigil_path_build(s->path, p, root, &start, truncated, false);

	len &= VIGIL_PATH_MASK;	/* at most VIGIL_PATH_BUF - 1 is kept */
	/* Keeps the mask below in the program: clang drops it when it can
	 * prove off small, and 6.1's verifier cannot follow that proof
	 * ("R1 unbounded memory access"; docs/kernels.md). */
	barrier_var(off);
	bpf_probe_read_kernel(s->ev.data + (off & EXEC_OFF_MASK), len, s->path + start);
	return len;
}

static __always_inline __u32 append_cgroup(struct exec_scratch *s, __u32 off, struct task_struct *t)
{
	__u32 start, len = vigil_cgroup_path(s->path, t, &start);

	len &= VIGIL_CGROUP_MAX - 1;
	barrier_var(off);	/* as in append_path */
	bpf_probe_read_kernel(s->ev.data + (off & EXEC_OFF_MASK), len, s->path + start);
	return len;
}

/* An anonymous file (memfd, shm) has a dentry that is its own parent and
 * is not the root of its mount: it never had a path, only a name. */
static __always_inline bool file_is_anon(struct dentry *d, const struct path *p)
{
	return d == BPF_CORE_READ(d, d_parent) && d != BPF_CORE_READ(p, mnt, mnt_root);
}

/* Sets ino and nlink, and the FILELESS and UNLINKED flags, from the binary's
 * file. Unlinked: the dentry was dropped from the hash (deleted; a mount's
 * root is unhashed too but is no deletion) or is anonymous. */
static __always_inline __u32 file_facts(struct vigil_exec *ev, struct file *file)
{
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct inode *inode = BPF_CORE_READ(file, f_inode);
	__u32 flags = 0;

	ev->ino = BPF_CORE_READ(inode, i_ino);
	ev->nlink = BPF_CORE_READ(inode, i_nlink);
	if (!ev->nlink)
		flags |= VIGIL_EXEC_FILELESS;
	if (file_is_anon(d, &file->f_path) ||
	    (!BPF_CORE_READ(d, d_hash.pprev) && d != BPF_CORE_READ(file, f_path.mnt, mnt_root)))
		flags |= VIGIL_EXEC_UNLINKED;
	return flags;
}

/* The anonymous file's name ("memfd:NAME"), at most VIGIL_NAME_MAX bytes. */
static __always_inline __u32 append_anon_name(struct exec_scratch *s, __u32 off, struct dentry *d)
{
	struct qstr name = BPF_CORE_READ(d, d_name);
	__u32 len = name.len;

	if (len > VIGIL_NAME_MAX)
		len = VIGIL_NAME_MAX;
	len &= VIGIL_NAME_MAX;
	if (bpf_probe_read_kernel(s->ev.data + (off & EXEC_OFF_MASK), len, name.name))
		return 0;
	return len;
}

/* The file's path, or its name when it is anonymous. */
static __always_inline __u32 append_file(struct exec_scratch *s, __u32 off, struct file *file,
					 const struct path *root, bool *cut)
{
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);

	if (file_is_anon(d, &file->f_path))
		return append_anon_name(s, off, d);
	return append_path(s, off, &file->f_path, root, cut);
}

/* Masks secrets in the arguments at off, before they reach the ring. */
static __always_inline __u32 redact_args(struct exec_scratch *s, __u32 off, __u32 len,
					 struct task_struct *t)
{
	bool redacted;

	barrier_var(off);	/* as in append_path */
	len = vigil_redact_args(&s->redact, s->ev.data + (off & EXEC_OFF_MASK),
				len & (VIGIL_ARGS_MAX * 2 - 1), t->comm, &redacted);
	if (redacted)
		s->ev.flags |= VIGIL_EXEC_REDACTED;
	return len;
}

/* Builds and sends a process_exec for t. bin is the executable, NULL when
 * unknown; filename the name exec was given (kernel memory), NULL when
 * unknown. sleepable selects how argv is read. */
static __always_inline int emit_exec(struct exec_scratch *s, struct task_struct *t,
				     struct file *bin, const char *filename, __u64 exec_ktime,
				     __u32 flags, bool sleepable)
{
	struct vigil_exec *ev = &s->ev;
	unsigned long arg_start, arg_end;
	struct fs_struct *fs;
	struct mm_struct *mm;
	__u32 off = 0, len;
	bool cut = false;
	long err;

	ev->hdr.type = VIGIL_EV_EXEC;
	ev->hdr.ktime = bpf_ktime_get_ns();
	vigil_proc_fill_btf(&ev->proc, t, exec_ktime ? exec_ktime : ev->hdr.ktime);
	vigil_exec_key_set(&ev->proc);
	fs = BPF_CORE_READ(t, fs);
	/* Flags gather in the map value, not a register: the verifier does
	 * not track what is stored there, so the paths that set different
	 * flags merge instead of multiplying. */
	ev->flags = flags;
	ev->ino = 0;
	ev->nlink = 0;
	ev->pad = 0;
	ev->pad2 = 0;

	len = 0;
	if (bin) {
		ev->flags |= file_facts(ev, bin);
		if ((ev->flags & VIGIL_EXEC_UNLINKED) && filename) {
			/* As Tetragon: the name exec was given. The file's
			 * old path or anonymous name follows at the end. */
			err = bpf_probe_read_kernel_str(s->ev.data + (off & EXEC_OFF_MASK),
							VIGIL_PATH_BUF, filename);
			len = err > 0 ? err - 1 : 0;
			cut = err == VIGIL_PATH_BUF;	/* the name ran on: cut at its end */
		} else {
			len = append_file(s, off, bin, fs ? &fs->root : NULL, &cut);
		}
		if (cut)
			ev->flags |= VIGIL_EXEC_TRUNC_PATH;
	}
	len &= VIGIL_PATH_MASK;
	ev->binary_len = len;
	off += len;
	/* The binary's filter bits, decided once here for the process's
	 * later events (the start snapshot's processes get theirs from the
	 * agent's filter scan: a sleepable program may not look up a trie);
	 * then this exec's own fate, before any more work. */
	if (!sleepable)
		vigil_filter_exec(ev->proc.pid, s->ev.data, len, 0);
	if (vigil_filter_on(VIGIL_FK_EXEC)) {
		struct vigil_filter_subject sub;

		vigil_filter_subject_task(&sub, t);
		if (vigil_filtered(VIGIL_FK_EXEC, &sub))
			return 0;
	}

	mm = BPF_CORE_READ(t, mm);
	arg_start = BPF_CORE_READ(mm, arg_start);
	arg_end = BPF_CORE_READ(mm, arg_end);
	len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > VIGIL_ARGS_MAX) {
		len = VIGIL_ARGS_MAX;
		ev->flags |= VIGIL_EXEC_TRUNC_ARGS;
	}
	len &= (VIGIL_ARGS_MAX * 2 - 1);
	barrier_var(off);	/* as in append_path */
	if (sleepable)
		err = bpf_copy_from_user_task(s->ev.data + (off & EXEC_OFF_MASK), len,
					      (void *)arg_start, t, 0);
	else
		err = bpf_probe_read_user(s->ev.data + (off & EXEC_OFF_MASK), len, (void *)arg_start);
	if (err) {
		len = 0;
		ev->flags |= VIGIL_EXEC_NO_ARGS;
	} else if (len && !(ev->flags & VIGIL_EXEC_TRUNC_ARGS)) {
		len--;	/* the last argument's terminator */
	}
	len = redact_args(s, off, len, t);
	ev->args_len = len;
	off += len;

	len = 0;
	if (fs) {
		cut = false;
		len = append_path(s, off, &fs->pwd, &fs->root, &cut);
		if (cut)
			ev->flags |= VIGIL_EXEC_TRUNC_CWD;
		if (len == 1)
			ev->flags |= VIGIL_EXEC_ROOT_CWD;
	} else {
		ev->flags |= VIGIL_EXEC_NO_CWD;
	}
	ev->cwd_len = len;
	off += len;

	len = append_cgroup(s, off, t);
	ev->cgroup_len = len;
	off += len;

	len = 0;
	if (bin && (ev->flags & VIGIL_EXEC_UNLINKED)) {
		cut = false;
		len = append_file(s, off, bin, fs ? &fs->root : NULL, &cut);
		if (cut)
			ev->flags |= VIGIL_EXEC_TRUNC_PATH;
	}
	ev->file_len = len;
	off += len;

	/* Zero the padding we send: the ring's bytes go on the wire as they lie. */
	len = (8 - (off & 7)) & 7;
	for (int i = 0; i < 8; i++)
		if (i < len)
			s->ev.data[(off + i) & EXEC_OFF_MASK] = 0;
	off = (off + len) & EXEC_OFF_MASK;
	return vigil_output(&ev->hdr, sizeof(*ev) + off);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 zero = 0;
	struct exec_scratch *s = bpf_map_lookup_elem(&exec_scratch, &zero);
	__u32 tgid = p->tgid, flags = 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 *key;

	vigil_prog_run(VIGIL_PROG_PROCESS_EXEC);
	if (!vigil_proc_budget_ok(p->cgroups->dfl_cgrp->kn->id, p->real_cred->uid.val, now)) {
		/* Unseen, but its children still name it exactly. */
		bpf_map_update_elem(&vigil_execs, &tgid, &now, BPF_ANY);
		return 0;
	}
	if (!s)
		return 0;
	/* Its exec key is still its fork's (its start time) unless it exec'd
	 * since: then this exec replaces a program, no "clone". */
	key = bpf_map_lookup_elem(&vigil_execs, &tgid);
	if (key && *key == p->start_time)
		flags |= VIGIL_EXEC_CLONE;
	vigil_exec_creds_fill(&s->ev.creds, p);
	s->ev.creds.secureexec = vigil_secureexec(&s->ev.creds, bprm, p);
	emit_exec(s, p, bprm->file, bprm->filename, 0, flags, false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	struct vigil_fork *ev;

	vigil_prog_run(VIGIL_PROG_PROCESS_FORK);
	if (child->pid != child->tgid || (child->flags & PF_KTHREAD))
		return 0;	/* a thread, or a kernel thread */
	vigil_filter_fork(parent->tgid, child->tgid);
	if (vigil_filter_on(VIGIL_FK_FORK)) {
		struct vigil_filter_subject sub;
		__u32 tgid = child->tgid;
		__u64 key = child->start_time;

		vigil_filter_subject_task(&sub, child);
		if (vigil_filtered(VIGIL_FK_FORK, &sub)) {
			/* Unseen, but its children still name it exactly. */
			bpf_map_update_elem(&vigil_execs, &tgid, &key, BPF_ANY);
			return 0;
		}
	}
	if (!vigil_proc_budget_ok(child->cgroups->dfl_cgrp->kn->id, child->real_cred->uid.val,
				  bpf_ktime_get_ns())) {
		__u32 tgid = child->tgid;
		__u64 key = child->start_time;

		bpf_map_update_elem(&vigil_execs, &tgid, &key, BPF_ANY);
		return 0;
	}
	ev = vigil_reserve(VIGIL_EV_FORK, sizeof(*ev));
	if (!ev)
		return 0;
	vigil_proc_fill_btf(&ev->proc, child, child->start_time);
	vigil_exec_key_set(&ev->proc);
	vigil_submit(ev);
	return 0;
}

static __always_inline int exit_of(struct task_struct *p, bool group_dead)
{
	struct vigil_exit *ev;
	__u32 tgid = p->tgid;

	if (p->flags & PF_KTHREAD)
		return 0;
	if (!group_dead) {
		vigil_count(VIGIL_CNT_THREAD_EXIT);
		return 0;
	}
	ev = NULL;
	if (vigil_filter_on(VIGIL_FK_EXIT)) {
		struct vigil_filter_subject sub;

		vigil_filter_subject_task(&sub, p);
		if (vigil_filtered(VIGIL_FK_EXIT, &sub))
			goto out;
	}
	if (vigil_proc_budget_ok(p->cgroups->dfl_cgrp->kn->id, p->real_cred->uid.val,
				 bpf_ktime_get_ns()))
		ev = vigil_reserve(VIGIL_EV_EXIT, sizeof(*ev));
	if (ev) {
		vigil_proc_fill_btf(&ev->proc, p, vigil_exec_key_get(tgid, p->start_time));
		ev->exit_code = p->exit_code;
		ev->pad = 0;
		vigil_submit(ev);
	}
out:
	vigil_filter_exit(tgid);
	bpf_map_delete_elem(&vigil_execs, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct *p, bool group_dead)
{
	vigil_prog_run(VIGIL_PROG_PROCESS_EXIT);
	return exit_of(p, group_dead);
}

/* The thread group's end already said (process_exit_nogd). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} exit_said SEC(".maps");

/* Where the tracepoint has no group_dead (Debian 12's 6.1): do_exit() has already
 * decremented signal->live when it fires, so the group is dead when it is
 * zero. Threads exiting together may each see zero: the first to mark the
 * group leader says it (the agent loads one of the two programs). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(process_exit_nogd, struct task_struct *p)
{
	__u32 *said;

	vigil_prog_run(VIGIL_PROG_PROCESS_EXIT);
	if (p->signal->live.counter)
		return exit_of(p, false);
	said = bpf_task_storage_get(&exit_said, p->group_leader, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (said && __sync_lock_test_and_set(said, 1))
		return 0;
	return exit_of(p, true);
}

/* The agent's second pass sets it (vigil_bpf_scan_procfs): only processes
 * that no record named yet. */
volatile bool procfs_new_only;

/* Run by the agent at start, before it attaches the process programs and
 * again (new processes only) after: one process_exec (PROCFS) per live
 * process, so the snapshot precedes live events in the ring. Parents come
 * before children in pid order except across pid wrap-around; exec keys
 * are exact either way (see vigil_execs). A process a record named before
 * (its exec key is in vigil_execs: it exec'd or forked while the programs
 * ran, or an earlier agent's scan found it) is sent flagged KNOWN, for
 * the caches of a resumed agent and its collector, and makes no line. */
SEC("iter.s/task")
int process_procfs(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u32 zero = 0, flags = VIGIL_EXEC_PROCFS;
	struct exec_scratch *s;
	struct file *exe;
	__u64 key, *known;
	__u32 tgid;

	if (!t || t->pid != t->tgid || (t->flags & PF_KTHREAD) || t->exit_state)
		return 0;
	tgid = t->tgid;
	known = bpf_map_lookup_elem(&vigil_execs, &tgid);
	key = known ? *known : t->start_time;
	if (known) {
		if (procfs_new_only)
			return 0;
		/* An exec key other than its start time: it was seen exec. */
		flags = VIGIL_EXEC_KNOWN | (key == t->start_time ? VIGIL_EXEC_PROCFS : 0);
	}
	s = bpf_map_lookup_elem(&iter_scratch, &zero);
	if (!s)
		return 0;
	exe = BPF_CORE_READ(t, mm, exe_file);
	vigil_exec_creds_fill(&s->ev.creds, t);
	emit_exec(s, t, exe, NULL, key, flags, true);
	return 0;
}
