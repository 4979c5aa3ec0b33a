// SPDX-License-Identifier: GPL-2.0
/*
 * bench/proc_policy.sh's configuration (a): the hooks vigil's exec and file
 * rules attach to (bpf/enforce_proc.bpf.c), with programs that do nothing.
 * What they cost is what attaching costs: the tracepoint's call, and for
 * the syscall tracepoints every task moving onto the kernel's traced
 * syscall path (entry and exit work, SYSCALL_WORK_SYSCALL_TRACEPOINT).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_process_exec")
int BPF_PROG(empty_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_open")
int empty_open(void *ctx) { return 0; }

SEC("tracepoint/syscalls/sys_exit_openat")
int empty_openat(void *ctx) { return 0; }

SEC("tracepoint/syscalls/sys_exit_openat2")
int empty_openat2(void *ctx) { return 0; }

SEC("tracepoint/syscalls/sys_exit_creat")
int empty_creat(void *ctx) { return 0; }
