// SPDX-License-Identifier: GPL-2.0
/*
 * The binary bits of the processes already running, for a generation of
 * export filters the agent has just written and not yet put in force
 * (vigil/filter.h): run once per write, before the flip, so a reload does
 * not forget what a long-lived process is. Processes that exec meanwhile
 * decide their bits at exec (process.bpf.c), against the same written set.
 * The path is the one an exec event names: the executable as the process
 * sees it, up to its root.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "lib/ring.bpf.h"	/* every object shares the ring (loader.c checks) */
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/filter.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The generation to fill: the agent sets it before each run. */
volatile __u32 scan_gen;

struct scan_buf {
	char path[VIGIL_PATH_BUF + VIGIL_NAME_MAX + 1];
};

/* One scan at a time (the agent's). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scan_buf);
} scan_buf SEC(".maps");

SEC("iter/task")	/* not sleepable: it looks up a trie */
int filter_scan(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct vigil_filter_proc fp = {}, *old;
	__u32 zero = 0, tgid, start, len, bits, gen = scan_gen & 1;
	struct scan_buf *b;
	struct file *exe;
	struct fs_struct *fs;
	struct path p, root;
	bool cut = false;

	if (!t || t->pid != t->tgid || (t->flags & PF_KTHREAD) || t->exit_state)
		return 0;
	b = bpf_map_lookup_elem(&scan_buf, &zero);
	exe = BPF_CORE_READ(t, mm, exe_file);
	fs = BPF_CORE_READ(t, fs);
	if (!b || !exe || !fs)
		return 0;
	tgid = t->tgid;
	BPF_CORE_READ_INTO(&p, exe, f_path);
	BPF_CORE_READ_INTO(&root, fs, root);
	len = vigil_path_build(b->path, &p, &root, &start, &cut, false);
	old = bpf_map_lookup_elem(&vigil_filter_procs, &tgid);
	if (old)
		fp = *old;
	bits = vigil_filter_bin_bits(b->path + (start & VIGIL_PATH_MASK), len & VIGIL_PATH_MASK,
				     gen, 1);
	/* Two stores, not fp.bits[gen]: the verifier refuses the stack
	 * address clang makes of that. */
	if (gen)
		fp.bits[1] = bits;
	else
		fp.bits[0] = bits;
	bpf_map_update_elem(&vigil_filter_procs, &tgid, &fp, BPF_ANY);
	return 0;
}
