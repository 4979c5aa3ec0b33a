// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: a hook on sched_process_exec that writes nothing,
 * standing in for an earlier agent's process_exec of another build left
 * pinned (tests/restart.t): the next agent replaces it with its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_process_exec")
int BPF_PROG(test_foreign_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return 0;
}
