/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io_uring per process (vigil/proc_policy.h, vigil_puring): rings made and
 * requests submitted, opens among them. An IORING_OP_OPENAT runs in the
 * kernel without a syscall, so the file rules' syscall hooks never see it;
 * these counts make such opens visible as unseen. Attached with the file
 * verbs' hooks (agent/enforce/proc_rules.c). The tracepoint of a
 * submission is io_uring_submit_req (6.0 on), io_uring_submit_sqe before:
 * the agent attaches this program to whichever the kernel has.
 */
#ifndef VIGIL_PROC_URING_BPF_H
#define VIGIL_PROC_URING_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/proc_policy.h>

#define IORING_OP_OPENAT_ 18	/* include/uapi/linux/io_uring.h */
#define IORING_OP_OPENAT2_ 28

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, VIGIL_PURING_ENTRIES);
	__type(key, struct vigil_uring_key);
	__type(value, struct vigil_uring_count);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_puring SEC(".maps");

/* Before 6.0 (io_uring_submit_sqe); only its opcode is read. */
struct trace_event_raw_io_uring_submit_sqe___old {
	u8 opcode;
} __attribute__((preserve_access_index));

/* The current process's counts, made on first use. */
static __always_inline struct vigil_uring_count *uring_count(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct vigil_uring_key k = {
		.tgid = t->tgid,
		.start_time = BPF_CORE_READ(t, group_leader, start_time),
	};
	struct vigil_uring_count *c = bpf_map_lookup_elem(&vigil_puring, &k);

	if (c)
		return c;
	struct vigil_uring_count z = {};

	BPF_CORE_READ_STR_INTO(&z.comm, t, group_leader, comm);
	bpf_map_update_elem(&vigil_puring, &k, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&vigil_puring, &k);
}

SEC("tracepoint/io_uring/io_uring_create")
int proc_uring_create(void *ctx)
{
	struct vigil_uring_count *c = uring_count();

	if (c)
		__sync_fetch_and_add(&c->rings, 1);
	return 0;
}

SEC("tracepoint/io_uring/io_uring_submit_req")
int proc_uring_submit(void *ctx)
{
	struct vigil_uring_count *c = uring_count();
	__u8 op;

	if (!c)
		return 0;
	if (bpf_core_type_exists(struct trace_event_raw_io_uring_submit_req))
		op = BPF_CORE_READ((struct trace_event_raw_io_uring_submit_req *)ctx, opcode);
	else
		op = BPF_CORE_READ((struct trace_event_raw_io_uring_submit_sqe___old *)ctx, opcode);
	__sync_fetch_and_add(&c->submissions, 1);
	if (op == IORING_OP_OPENAT_ || op == IORING_OP_OPENAT2_)
		__sync_fetch_and_add(&c->opens, 1);
	return 0;
}

#endif
