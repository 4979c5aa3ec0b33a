// SPDX-License-Identifier: GPL-2.0
/*
 * Exec and file rules (docs/policy.md, "Process and file rules"), matched
 * where the kernel has decided: at sched_process_exec (the new image is in
 * place, its first instruction not yet run) and at the exit of open,
 * openat, openat2 and creat (the fd is installed, not yet returned). The
 * rule that matches first may post an event, send a signal or SIGKILL;
 * never to the initial namespace's PID 1, a kernel thread, an exiting task
 * or vigild itself, and in mode: monitor to nobody (counted as would-have).
 *
 * A hook whose verb no rule names returns after two map lookups; strings
 * are built only for what some rule of the verb asks about.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "lib/ring.bpf.h"
#include "lib/fd.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/proc_match.bpf.h"
#include "lib/proc_uring.bpf.h"	/* what file rules do not see: io_uring's opens */
#include "lib/proc_compat.bpf.h"	/* and 32-bit processes' */
#include "lib/tamper.bpf.h"	/* the open check, while a file rule hooks the call */

char LICENSE[] SEC("license") = "GPL";

#ifndef PF_EXITING
#define PF_EXITING 0x00000004
#endif
#define FMODE_CREATED_BIT 0x100000	/* include/linux/fs.h: FMODE_CREATED */
#define O_ACCMODE_ 00000003
#define O_WRONLY_ 00000001
#define O_RDWR_ 00000002
#define O_CREAT_ 00000100
#define O_TRUNC_ 00001000
#define S_IFMT_ 00170000
#define S_IFREG_ 0100000

#define HIT_DATA (2 * VIGIL_PATH_BUF)
#define HIT_MASK (VIGIL_PATH_BUF - 1)

struct scratch {
	struct pmatch_scratch m;
	union {
		struct vigil_policy_hit ev;
		char raw[sizeof(struct vigil_policy_hit) + HIT_DATA + 8];
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} pscratch SEC(".maps");

/* What the hook saw, for the event. */
struct hook {
	__u8 verb;
	__u32 open_flags;
	__u32 intent;
	__s64 result;
	struct file *file;	/* opened, or the new binary */
	struct path path;	/* an opened file's */
};

static __always_inline void count_out(__u32 out)
{
	__u64 *c = bpf_map_lookup_elem(&vigil_pouts, &out);

	if (c)
		*c += 1;
}

/* Sends the rule's signal to the current process, unless it is one vigil
 * never signals; returns the outcome (enum vigil_pout). */
static __always_inline __u32 take_action(const struct vigil_prule *r, struct task_struct *t,
					 __u32 agent_tgid, struct vigil_prule_stats *st)
{
	bool kill = r->action == VIGIL_ACT_SIGKILL;
	__u32 flags = BPF_CORE_READ(t, flags), tgid = BPF_CORE_READ(t, tgid);

	if (r->action != VIGIL_ACT_SIGNAL && !kill)
		return VIGIL_POUT_NONE;
	if (r->flags & VIGIL_PRULE_MONITOR) {
		if (st)
			*(kill ? &st->would_kill : &st->would_signal) += 1;
		return VIGIL_POUT_MONITOR;
	}
	/* tgid is the pid in the initial namespace: 1 is its init only; a
	 * container's PID 1 has another and is killable. */
	__u32 out = tgid == 1 ? VIGIL_POUT_REFUSED_INIT :
		    (flags & PF_KTHREAD) ? VIGIL_POUT_REFUSED_KTHREAD :
		    (flags & PF_EXITING) ? VIGIL_POUT_REFUSED_EXITING :
		    tgid == agent_tgid ? VIGIL_POUT_REFUSED_AGENT : VIGIL_POUT_SIGNALLED;

	if (out == VIGIL_POUT_SIGNALLED && bpf_send_signal(r->signal))
		out = VIGIL_POUT_REFUSED_HELPER;
	if (st && out == VIGIL_POUT_SIGNALLED)
		*(kill ? &st->kills : &st->signals) += 1;
	else if (st)
		st->refused++;
	return out;
}

static __always_inline __u32 copy_str(struct scratch *s, __u32 off, const struct pstr_val *v)
{
	__u32 len = v->have ? v->len & HIT_MASK : 0;

	barrier_var(off);
	bpf_probe_read_kernel(s->ev.data + (off & HIT_MASK), len, v->buf + (v->start & VIGIL_PATH_MASK));
	return len;
}

static __always_inline void post(struct scratch *s, const struct vigil_prule *r, __u32 id,
				 struct task_struct *t, const struct hook *h, __u32 out,
				 struct vigil_prule_stats *st)
{
	struct vigil_policy_hit *ev = &s->ev;
	const struct pstr_val *path = &s->m.s[h->verb == VIGIL_VERB_EXEC ? VIGIL_PSTR_BINARY :
					     VIGIL_PSTR_PATH];
	const struct pstr_val *bin = &s->m.s[VIGIL_PSTR_BINARY];
	struct file *file = h->file;	/* not h->file in the macro: CO-RE would relocate struct hook */
	struct inode *ino = BPF_CORE_READ(file, f_inode);
	__u32 off = 0, len, tgid = BPF_CORE_READ(t, tgid);

	ev->hdr.type = VIGIL_EV_POLICY_HIT;
	ev->hdr.ktime = bpf_ktime_get_ns();
	vigil_proc_fill(&ev->proc, t, vigil_exec_key_get(tgid, BPF_CORE_READ(t, start_time)));
	__builtin_memcpy(ev->rule, r->name, sizeof(ev->rule));
	ev->rule_id = id;
	ev->action = r->action;
	ev->verb = h->verb;
	ev->signal = r->signal;
	ev->outcome = out;
	ev->result = h->result;
	ev->open_flags = h->open_flags;
	ev->intent = h->intent;
	ev->ino = BPF_CORE_READ(ino, i_ino);
	ev->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	ev->flags = (r->flags & VIGIL_PRULE_MONITOR) ? VIGIL_PHIT_MONITOR : 0;
	ev->pad = 0;
	len = copy_str(s, off, path);
	if (path->cut)
		ev->flags |= VIGIL_PHIT_PATH_CUT;
	ev->path_len = len;
	off += len;
	len = 0;
	if (h->verb != VIGIL_VERB_EXEC) {	/* for exec, path is the binary */
		len = copy_str(s, off, bin);
		if (bin->cut)
			ev->flags |= VIGIL_PHIT_BINARY_CUT;
	}
	ev->binary_len = len;
	off += len;
	len = (8 - (off & 7)) & 7;
	for (int i = 0; i < 8; i++)
		if (i < len)
			s->ev.data[(off + i) & (HIT_DATA - 1)] = 0;
	off = (off + len) & (HIT_DATA - 1);
	if (vigil_output(&ev->hdr, sizeof(*ev) + off))
		st ? st->events_lost++ : 0;
	else if (st)
		st->events++;
}

/* Matches the hook's rules and acts. t is current; typed: h->path's
 * pointers are BTF-typed (a constant: each hook inlines one decide a kind). */
static __always_inline int decide(struct task_struct *t, struct hook *h, const bool typed)
{
	__u32 zero = 0, gen, key;
	struct vigil_pstate *state = bpf_map_lookup_elem(&vigil_pstate, &zero);
	const struct vigil_pconf *conf;
	struct vigil_prule_stats *st;
	struct vigil_prule *r;
	struct scratch *s;
	struct ptask pt;
	struct pfind f;
	struct path root = {};
	struct fs_struct *fs = t->fs;	/* t is BTF-typed: loads, not helper calls */
	__u32 out, strings;

	if (!state)
		return 0;
	gen = state->gen & 1;
	conf = bpf_map_lookup_elem(&vigil_pconf, &gen);
	if (!conf)
		return 0;
	f.cand = conf->verb[h->verb & (VIGIL_VERB_MAX - 1)];
	if (!(f.cand.w[0] | f.cand.w[1]))
		return 0;
	s = bpf_map_lookup_elem(&pscratch, &zero);
	if (!s)
		return 0;
	strings = conf->strings[h->verb & (VIGIL_VERB_MAX - 1)];
	s->m.fail.w[0] = s->m.fail.w[1] = 0;
	if (fs) {
		root.dentry = fs->root.dentry;
		root.mnt = fs->root.mnt;
	}
	/* Each string is read, or marked unread, before anything reads it:
	 * parent and container only where the rules want them (pstr_match),
	 * path and binary also by post(). A string's flags lie at the end of
	 * its 4 KiB buffer: those not touched spare the run a cache line and
	 * a page each. */
	if (h->verb == VIGIL_VERB_EXEC) {
		pstr_of_path(&s->m.s[VIGIL_PSTR_BINARY], &h->path, &root, typed);
		if (strings & (1u << VIGIL_PSTR_PATH))	/* an exec has none */
			s->m.s[VIGIL_PSTR_PATH].have = false;
	} else {
		if (strings & (1u << VIGIL_PSTR_PATH))
			pstr_of_path(&s->m.s[VIGIL_PSTR_PATH], &h->path, &root, typed);
		else
			s->m.s[VIGIL_PSTR_PATH].have = false;
		if (strings & (1u << VIGIL_PSTR_BINARY))
			pstr_of_file(&s->m.s[VIGIL_PSTR_BINARY], BPF_CORE_READ(t, mm, exe_file), &root);
		else
			s->m.s[VIGIL_PSTR_BINARY].have = false;
	}
	if (strings & (1u << VIGIL_PSTR_PARENT))
		pstr_of_file(&s->m.s[VIGIL_PSTR_PARENT], BPF_CORE_READ(t, real_parent, mm, exe_file), &root);
	if (strings & (1u << VIGIL_PSTR_CONTAINER))
		pstr_of_container(&s->m, t);
	if (strings & (1u << VIGIL_PSTR_PATH))
		pstr_match(&s->m, conf, gen, VIGIL_PSTR_PATH);
	if (strings & (1u << VIGIL_PSTR_BINARY))
		pstr_match(&s->m, conf, gen, VIGIL_PSTR_BINARY);
	if (strings & (1u << VIGIL_PSTR_PARENT))
		pstr_match(&s->m, conf, gen, VIGIL_PSTR_PARENT);
	if (strings & (1u << VIGIL_PSTR_CONTAINER))
		pstr_match(&s->m, conf, gen, VIGIL_PSTR_CONTAINER);
	f.cand.w[0] &= ~s->m.fail.w[0];
	f.cand.w[1] &= ~s->m.fail.w[1];
	if (!(f.cand.w[0] | f.cand.w[1]))
		return 0;
	ptask_fill(&pt, t);
	f.gen = gen;
	f.intent = h->verb == VIGIL_VERB_EXEC ? ~0u : h->intent;
	f.pt = &pt;
	f.found = VIGIL_PRULES_MAX;
	bpf_loop(VIGIL_PRULES_MAX, pfind_step, &f, 0);
	if (f.found >= VIGIL_PRULES_MAX)
		return 0;
	key = gen * VIGIL_PRULES_MAX + f.found;
	r = bpf_map_lookup_elem(&vigil_prules, &key);
	if (!r)
		return 0;
	st = bpf_map_lookup_elem(&vigil_prule_stats, &key);
	if (st)
		st->hits++;
	out = take_action(r, t, state->agent_tgid, st);
	count_out(out);
	if (r->action == VIGIL_ACT_NOPOST)
		return 0;
	/* The event names the process's binary too. */
	if (h->verb != VIGIL_VERB_EXEC && !s->m.s[VIGIL_PSTR_BINARY].have)
		pstr_of_file(&s->m.s[VIGIL_PSTR_BINARY], BPF_CORE_READ(t, mm, exe_file), &root);
	if (h->verb != VIGIL_VERB_EXEC && !s->m.s[VIGIL_PSTR_PATH].have)
		pstr_of_path(&s->m.s[VIGIL_PSTR_PATH], &h->path, &root, typed);
	post(s, r, f.found, t, h, out, st);
	return 0;
}

/* bprm->file is BTF-typed: its path's pointers too, with loads. The
 * typed walk is loaded where the *_cast open hooks are (6.2+): the one
 * kernel older than that we test on, 6.1, runs the helper walk. */
static __always_inline int exec_hook(struct task_struct *p, struct linux_binprm *bprm,
				     const bool typed)
{
	struct file *f = bprm->file;
	struct hook h = { .verb = VIGIL_VERB_EXEC, .file = f };

	vigil_prog_run(VIGIL_PROG_POLICY_EXEC);
	if (typed) {
		h.path.dentry = f->f_path.dentry;
		h.path.mnt = f->f_path.mnt;
	} else {
		BPF_CORE_READ_INTO(&h.path, f, f_path);
	}
	return decide(p, &h, typed);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_policy_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return exec_hook(p, bprm, false);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_policy_exec_cast, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return exec_hook(p, bprm, true);
}

/* What the hooks want of an opened file. */
struct file_view {
	struct path path;
	struct file *file;
	__u32 mode;
};

static __always_inline void file_load(struct file_view *v, struct file *f)
{
	BPF_CORE_READ_INTO(&v->path, f, f_path);
	v->mode = BPF_CORE_READ(f, f_mode);
	v->file = f;
}

/* What the open asked for and what took effect: flags as given (the
 * file's f_flags lose O_CREAT and O_TRUNC), the created bit from f_mode. */
static __always_inline __u32 open_intent(__u32 flags, const struct file_view *v)
{
	__u32 acc = flags & O_ACCMODE_, in = 0;
	struct file *f = v->file;

	if (acc != O_WRONLY_)
		in |= VIGIL_INTENT_READ;
	if (acc == O_WRONLY_ || acc == O_RDWR_)
		in |= VIGIL_INTENT_WRITE;
	if (flags & O_CREAT_)
		in |= VIGIL_INTENT_CREATE;
	if (v->mode & FMODE_CREATED_BIT)
		in |= VIGIL_INTENT_CREATED;
	/* The inode's mode only when it can matter: one read fewer an open. */
	if ((flags & O_TRUNC_) && (in & VIGIL_INTENT_WRITE) &&
	    (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT_) == S_IFREG_)
		in |= VIGIL_INTENT_TRUNCATE;
	return in;
}

/* At a syscall's exit the task's saved user registers still hold its
 * arguments (x86_64: di, si, dx). cast: the program may call
 * bpf_rdonly_cast, and walks the opened file's path with loads. */
static __always_inline int open_exit(long ret, __u8 verb, const bool cast)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	struct hook h = { .verb = verb, .result = ret };
	struct file_view fv;
	__u64 flags = 0;
	/* tamper.bpf.c's check of this open, when this hook has it; its run
	 * counted as tamper's own hook counts it */
	bool tamper = vigil_tamper_in_rule(verb);

	if (tamper && verb == VIGIL_VERB_OPENAT)
		vigil_prog_run(VIGIL_PROG_TAMPER_OPENAT);
	if (ret < 0)
		return 0;	/* failed opens are not matched (docs/policy.md) */
	switch (verb) {
	case VIGIL_VERB_OPEN: flags = regs->si; break;	/* BTF-typed: a load */
	case VIGIL_VERB_OPENAT: flags = regs->dx; break;
	case VIGIL_VERB_CREAT: flags = O_CREAT_ | O_WRONLY_ | O_TRUNC_; break;
	case VIGIL_VERB_OPENAT2: {
		/* struct open_how's first field, from user memory: it may have
		 * changed since the kernel read it (docs/policy.md). */
		void *how = (void *)regs->dx;

		bpf_probe_read_user(&flags, sizeof(flags), how);
		break;
	}
	}
	h.open_flags = flags;
	h.file = cast ? vigil_fd_file_typed(t, ret) : vigil_fd_file(t, ret);
	if (!h.file)
		return 0;
	if (tamper)
		vigil_tamper_open_file(t, h.file, ret);
	if (cast) {
		/* bpf_rdonly_cast (lib/fd.bpf.h): 6.1 does not load the *_cast
		 * programs (agent/enforce/proc_rules.c) */
		struct file *f = h.file;

		h.path.dentry = f->f_path.dentry;
		h.path.mnt = f->f_path.mnt;
		fv.mode = f->f_mode;
		fv.file = f;
		h.intent = open_intent(flags, &fv);
		return decide(t, &h, true);
	}
	file_load(&fv, h.file);
	h.path = fv.path;
	h.intent = open_intent(flags, &fv);
	return decide(t, &h, false);
}

SEC("tracepoint/syscalls/sys_exit_open")
int proc_policy_open(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPEN);
	return open_exit(ctx->ret, VIGIL_VERB_OPEN, false);
}

SEC("tracepoint/syscalls/sys_exit_open")
int proc_policy_open_cast(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPEN);
	return open_exit(ctx->ret, VIGIL_VERB_OPEN, true);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int proc_policy_openat(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPENAT);
	return open_exit(ctx->ret, VIGIL_VERB_OPENAT, false);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int proc_policy_openat_cast(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPENAT);
	return open_exit(ctx->ret, VIGIL_VERB_OPENAT, true);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int proc_policy_openat2(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPENAT2);
	return open_exit(ctx->ret, VIGIL_VERB_OPENAT2, false);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int proc_policy_openat2_cast(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_OPENAT2);
	return open_exit(ctx->ret, VIGIL_VERB_OPENAT2, true);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int proc_policy_creat(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_CREAT);
	return open_exit(ctx->ret, VIGIL_VERB_CREAT, false);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int proc_policy_creat_cast(struct trace_event_raw_sys_exit *ctx)
{
	vigil_prog_run(VIGIL_PROG_POLICY_CREAT);
	return open_exit(ctx->ret, VIGIL_VERB_CREAT, true);
}
