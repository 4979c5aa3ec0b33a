/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 32-bit processes (vigil/proc_policy.h, vigil_pcompat): the syscall
 * tracepoints the file rules hook (tp/syscalls/sys_exit_open*) never fire
 * for an ia32 syscall, so a 32-bit binary's opens are not matched; this
 * counts, per process, the execs of 32-bit binaries, so that blind spot is
 * visible. Attached with the file verbs' hooks (agent/enforce/proc_rules.c)
 * at sched_process_exec, so it costs an exec, not a syscall: counting the
 * syscalls themselves needs a program at every syscall's exit of every
 * task (the raw sys_exit), measured at about 95 ns a syscall here, and
 * int 0x80 from a 64-bit binary is not counted (docs/policy.md).
 */
#ifndef VIGIL_PROC_COMPAT_BPF_H
#define VIGIL_PROC_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <vigil/proc_policy.h>

/* arch/x86/include/asm/segment.h: __USER32_CS, GDT entry 4, RPL 3. A new
 * 32-bit image starts in it (compat_start_thread), a 64-bit one in
 * __USER_CS. */
#define USER32_CS_ 0x23

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_PCOMPAT_ENTRIES);
	__type(key, struct vigil_uring_key);	/* a process: tgid and start time */
	__type(value, struct vigil_compat_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pcompat SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_compat_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	struct vigil_compat_count *c;
	struct vigil_uring_key k;

	if (BPF_CORE_READ(regs, cs) != USER32_CS_)
		return 0;
	k = (struct vigil_uring_key){
		.tgid = BPF_CORE_READ(p, tgid),
		.start_time = BPF_CORE_READ(p, group_leader, start_time),
	};
	c = bpf_map_lookup_elem(&vigil_pcompat, &k);
	if (!c) {
		struct vigil_compat_count z = {};

		BPF_CORE_READ_STR_INTO(&z.comm, p, comm);
		bpf_map_update_elem(&vigil_pcompat, &k, &z, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&vigil_pcompat, &k);
		if (!c)
			return 0;
	}
	__sync_fetch_and_add(&c->execs, 1);
	return 0;
}

#endif
