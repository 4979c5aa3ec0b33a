// SPDX-License-Identifier: GPL-2.0
/*
 * Tamper records, written from BPF so they reach the ring even when what
 * they record is the agent's death: every signal generated for the agent
 * by another process (kill, tgkill, pidfd_send_signal, the OOM killer's
 * SIGKILL: who sent which). The agent writes its tgid at each start
 * (vigil_agent_tgid); the programs stay attached, by pinned links, while
 * it is gone. docs/threat-model.md says what is not seen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "lib/ring.bpf.h"
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

SEC("tp_btf/signal_generate")
int BPF_PROG(tamper_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct vigil_tamper *ev;
	__u32 zero = 0, *agent;

	agent = bpf_map_lookup_elem(&vigil_agent_tgid, &zero);
	if (!agent || !*agent || task->tgid != *agent || cur->tgid == *agent)
		return 0;
	ev = vigil_reserve(VIGIL_EV_TAMPER, sizeof(*ev));
	if (!ev)
		return 0;
	vigil_proc_fill_btf(&ev->proc, cur,
			    vigil_exec_key_get(cur->tgid, cur->group_leader->start_time));
	ev->what = VIGIL_TAMPER_SIGNAL;
	ev->agent_pid = *agent;
	ev->sig = sig;
	ev->result = result;
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	vigil_submit(ev);
	return 0;
}
