/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file behind a fd in a task's file table, read as the kernel's fdget
 * would find it (no reference taken: a read that sees a fd closed
 * meanwhile reads as NULL or as the file that replaced it). t is a BTF
 * pointer (bpf_get_current_task_btf()): the table is reached by direct
 * loads, which cost a fraction of a bpf_probe_read_kernel each, as this
 * runs at the exit of every open.
 */
#ifndef VIGIL_FD_BPF_H
#define VIGIL_FD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

/* Linux 6.2+: a pointer read as a number, made BTF-typed again, so that
 * its fields and those it leads to are plain loads. Weak: on 6.1 it is 0,
 * and the programs that call it unconditionally are not loaded. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* The slot itself is in an array of pointers the verifier does not type:
 * a helper call. */
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

/* The same with the slot a load too, and the file BTF-typed: the slot is
 * made a struct kiocb, whose first field has been a struct file pointer
 * since before BTF. Only where bpf_rdonly_cast exists (a caller checks,
 * or is one of the *_cast programs 6.1 does not load). */
static __always_inline struct file *vigil_fd_file_typed(struct task_struct *t, long fd)
{
	struct fdtable *fdt = t->files->fdt;
	struct kiocb *slot;

	if (bpf_core_field_offset(struct kiocb, ki_filp))	/* no kernel lays it out so */
		return bpf_rdonly_cast(vigil_fd_file(t, fd), bpf_core_type_id_kernel(struct file));
	if (!fdt || fd < 0 || fd >= fdt->max_fds)
		return NULL;
	slot = bpf_rdonly_cast((void *)(fdt->fd + fd), bpf_core_type_id_kernel(struct kiocb));
	return slot->ki_filp;
}

#endif
