// SPDX-License-Identifier: GPL-2.0
/*
 * For tests only: a hook on openat's exit that checks nothing, standing in
 * for an earlier agent's file rule hook of another build left pinned
 * (tests/tamper_proc.t): it must not be trusted with the open check.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tracepoint/syscalls/sys_exit_openat")
int test_foreign_openat(void *ctx)
{
	return 0;
}
