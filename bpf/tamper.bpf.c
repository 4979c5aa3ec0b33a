// SPDX-License-Identifier: GPL-2.0
/*
 * Tamper records, written from BPF into the health ring
 * (vigil_health_reserve, lib/health.bpf.h) so they reach the collector even
 * when what they record is the agent's death and the main ring filled while
 * it was gone: every signal generated for the agent by another process
 * (kill, tgkill, pidfd_send_signal, the OOM killer's SIGKILL: who sent
 * which). The agent writes its tgid at each start
 * (vigil_agent_tgid); the programs stay attached, by pinned links, while
 * it is gone. And bpf() calls by other processes that detach a link of
 * vigil's or replace its program: the link fd is resolved through the
 * caller's file table, at the call's entry, and the link is vigil's when
 * its program uses this pin folder's shared maps. docs/threat-model.md says what
 * is not seen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lib/health.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/path.bpf.h"
#include "lib/task.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_agent_tgid SEC(".maps");

#define USED_MAPS_MAX 16	/* a vigil program uses fewer; the ring comes early */
#define CMD_LINK_UPDATE 29
#define CMD_LINK_DETACH 34

static __always_inline struct vigil_tamper *tamper_begin(struct task_struct *cur, __u32 agent,
							 __u32 what)
{
	struct vigil_tamper *ev = vigil_health_reserve(VIGIL_EV_TAMPER, sizeof(*ev));

	if (!ev)
		return NULL;
	vigil_proc_fill_btf(&ev->proc, cur,
			    vigil_exec_key_get(cur->tgid, cur->group_leader->start_time));
	ev->what = what;
	ev->agent_pid = agent;
	ev->result = 0;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	return ev;
}

/* The link behind fd in cur's file table, if its program uses this pin
 * folder's ring, counters or exec keys (every vigil program uses one):
 * its id, else 0. Every read is a probe: a fd that is no link
 * reads as no match. */
static __always_inline __u32 vigil_link_id(struct task_struct *cur, __u32 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(cur, files, fdt);
	struct bpf_map **maps, *m;
	struct bpf_prog_aux *aux;
	struct bpf_link *link;
	struct file **fds, *f;
	__u32 n;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	link = BPF_CORE_READ(f, private_data);
	aux = BPF_CORE_READ(link, prog, aux);
	maps = BPF_CORE_READ(aux, used_maps);
	n = BPF_CORE_READ(aux, used_map_cnt);
	for (int i = 0; i < USED_MAPS_MAX; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_kernel(&m, sizeof(m), &maps[i]))
			break;
		if (m == (void *)&vigil_ring || m == (void *)&vigil_counters ||
		    m == (void *)&vigil_execs)
			return BPF_CORE_READ(link, id);
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_bpf")
int tamper_bpf(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 zero = 0, *agent, fd, id, what;
	long cmd = ctx->args[0];
	struct vigil_tamper *ev;

	vigil_prog_run(VIGIL_PROG_TAMPER_BPF);
	if (cmd == CMD_LINK_DETACH)
		what = VIGIL_TAMPER_LINK_DETACH;
	else if (cmd == CMD_LINK_UPDATE)
		what = VIGIL_TAMPER_LINK_UPDATE;
	else
		return 0;
	agent = bpf_map_lookup_elem(&vigil_agent_tgid, &zero);
	if (!agent || cur->tgid == *agent)
		return 0;	/* the agent detaches what its options no longer want */
	/* link_fd comes first in both commands' part of union bpf_attr */
	if (bpf_probe_read_user(&fd, sizeof(fd), (void *)ctx->args[1]))
		return 0;
	id = vigil_link_id(cur, fd);
	if (!id)
		return 0;
	ev = tamper_begin(cur, *agent, what);
	if (!ev)
		return 0;
	ev->arg = id;
	vigil_health_submit(ev);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(tamper_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct vigil_tamper *ev;
	__u32 zero = 0, *agent;

	vigil_prog_run(VIGIL_PROG_TAMPER_SIGNAL);
	agent = bpf_map_lookup_elem(&vigil_agent_tgid, &zero);
	if (!agent || !*agent || task->tgid != *agent || cur->tgid == *agent)
		return 0;
	ev = tamper_begin(cur, *agent, VIGIL_TAMPER_SIGNAL);
	if (!ev)
		return 0;
	ev->arg = sig;
	ev->result = result;
	vigil_health_submit(ev);
	return 0;
}
