/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file behind a fd in a task's file table, read as the kernel's fdget
 * would find it (no reference taken: a probe read that sees a fd closed
 * meanwhile reads as NULL or as the file that replaced it). t is a BTF
 * pointer (bpf_get_current_task_btf()): the table is reached by direct
 * loads, which cost a fraction of a bpf_probe_read_kernel each, as this
 * runs at the exit of every open; only the slot itself, in an array of
 * pointers the verifier does not type, is a helper call.
 */
#ifndef VIGIL_FD_BPF_H
#define VIGIL_FD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

static __always_inline struct file *vigil_fd_file(struct task_struct *t, long fd)
{
	struct fdtable *fdt = t->files->fdt;
	struct file **fds;
	struct file *f = NULL;

	if (!fdt || fd < 0 || fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

#endif
