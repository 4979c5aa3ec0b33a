/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file behind a fd in a task's file table, read as the kernel's fdget
 * would find it (no reference taken: a probe read that sees a fd closed
 * meanwhile reads as NULL or as the file that replaced it).
 */
#ifndef VIGIL_FD_BPF_H
#define VIGIL_FD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

static __always_inline struct file *vigil_fd_file(struct task_struct *t, long fd)
{
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

#endif
