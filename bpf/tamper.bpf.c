// SPDX-License-Identifier: GPL-2.0
/*
 * Tamper records, written from BPF into the health ring
 * (vigil_health_reserve, lib/health.bpf.h) so they reach the collector even
 * when what they record is the agent's death and the main ring filled while
 * it was gone; of what processes other than the agent do:
 * - every signal generated for the agent (kill, tgkill, pidfd_send_signal,
 *   the OOM killer's SIGKILL: who sent which);
 * - bpf() calls that detach a link of vigil's or replace its program (the
 *   link is vigil's when its program uses this pin folder's shared maps),
 *   and that update or delete in one of vigil's maps (those whose ids the
 *   agent lists in vigil_tamper_maps, agent/core/tamper.c), its map of
 *   maps included (a swap);
 * - ptrace attaches to the agent, process_vm_writev and process_vm_readv
 *   on it, pidfd_getfd on its pidfd;
 * - opens of /proc/<agent>/mem, maps and environ (tamper_proc below);
 * - unlinks and renames of the pin folder or anything in it.
 * Fds are resolved through the caller's file table at the call's entry;
 * the call's result is taken at its exit (vigil_tamper_calls holds what
 * the entry found until then). The agent writes its tgid at each start
 * (vigil_agent_tgid); the programs stay attached, by pinned links, while
 * it is gone. docs/threat-model.md says what is not seen.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "lib/health.bpf.h"
#include "lib/prog_runs.bpf.h"
#include "lib/fd.bpf.h"
#include "lib/path.bpf.h"
#include "lib/pin_path.bpf.h"
#include "lib/task.bpf.h"
#include "lib/tamper.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The ids of vigil's maps (key: id; value unused), kept by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_tamper_maps SEC(".maps");

/* A call seen at its entry, by thread, until its exit gives the result. */
struct tamper_call {
	__u32 what;
	__u32 arg;
	char name[VIGIL_TAMPER_PIN_MAX];	/* PIN_*: the name under the folder */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* calls in flight at once: more are not recorded */
	__type(key, __u64);	/* pid_tgid */
	__type(value, struct tamper_call);
} vigil_tamper_calls SEC(".maps");

/* How many calls vigil_tamper_calls holds. The exits of unlink, rename
 * and bpf() run for every call, and nearly always find none kept: a zero
 * here spares them the hash lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} vigil_tamper_waiting SEC(".maps");

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

#define USED_MAPS_MAX 16	/* a vigil program uses fewer; the ring comes early */
#define CMD_MAP_UPDATE_ELEM 2
#define CMD_MAP_DELETE_ELEM 3
#define CMD_MAP_LOOKUP_AND_DELETE_ELEM 21
#define CMD_MAP_LOOKUP_AND_DELETE_BATCH 25
#define CMD_MAP_UPDATE_BATCH 26
#define CMD_MAP_DELETE_BATCH 27
#define CMD_LINK_UPDATE 29
#define CMD_LINK_DETACH 34
#define BATCH_MAP_FD_OFF 36	/* union bpf_attr's batch: map_fd after 4 u64s and count */
#define PTRACE_ATTACH_ 16
#define PTRACE_SEIZE_ 0x4206
#define PIDFS_MAGIC_ 0x50494446

/* What the entry found, kept for the exit. */
static __always_inline void call_keep(__u32 what, __u32 arg, const char *name)
{
	struct tamper_call c = { .what = what, .arg = arg };
	__u64 id = bpf_get_current_pid_tgid(), *n;
	__u32 zero = 0;

	if (name)
		__builtin_memcpy(c.name, name, sizeof(c.name));
	if (bpf_map_update_elem(&vigil_tamper_calls, &id, &c, BPF_NOEXIST)) {
		bpf_map_update_elem(&vigil_tamper_calls, &id, &c, BPF_EXIST);	/* a stale one */
		return;
	}
	n = bpf_map_lookup_elem(&vigil_tamper_waiting, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void call_forget(__u64 id, __u64 *n)
{
	if (!bpf_map_delete_elem(&vigil_tamper_calls, &id))
		__sync_fetch_and_add(n, -1);
}

/* A refused call changed nothing, and any user can make one at syscall
 * rate (an unlink under the pin folder is refused EACCES, a ptrace of the
 * agent EPERM): each would be a record in the health ring and then in the
 * stream. So refused calls get at most REFUSED_PER_S records a second
 * (node-wide; the window's reset races, a few more may pass), and only
 * while the health ring is under half full, which leaves the other half
 * to heartbeats and to calls that did something while vigild is away.
 * The rest are counted (tamper_refused_not_recorded). */
#define REFUSED_PER_S 64

struct refused_window {
	__u64 second;
	__u64 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct refused_window);
} vigil_tamper_refused SEC(".maps");

static __always_inline bool refused_room(void)
{
	__u64 second = bpf_ktime_get_ns() / 1000000000ull;
	struct refused_window *w;
	__u32 zero = 0;

	if (bpf_ringbuf_query(&vigil_health_ring, BPF_RB_AVAIL_DATA) >= VIGIL_HEALTH_RING_SIZE / 2)
		return false;
	w = bpf_map_lookup_elem(&vigil_tamper_refused, &zero);
	if (!w)
		return false;
	if (w->second != second) {
		w->second = second;
		w->n = 0;
	}
	return __sync_fetch_and_add(&w->n, 1) < REFUSED_PER_S;
}

/* At the exit: the record, with the result, of a call the entry kept
 * (one of whats, a bit mask: a thread's stale entry is not another call's). */
static __always_inline void call_record(long ret, __u32 whats)
{
	struct task_struct *cur;
	struct tamper_call *c;
	struct vigil_tamper *ev;
	__u32 zero = 0, *agent;
	__u64 id, *n;
	bool pin;

	n = bpf_map_lookup_elem(&vigil_tamper_waiting, &zero);
	if (!n || !*n)
		return;
	id = bpf_get_current_pid_tgid();
	c = bpf_map_lookup_elem(&vigil_tamper_calls, &id);
	if (!c)
		return;
	agent = bpf_map_lookup_elem(&vigil_agent_tgid, &zero);
	/* A caller that became the agent meanwhile is a restarting agent
	 * claiming the folder (vigil_tamper_claim): its own write. */
	if (!agent || !(whats & (1u << (c->what & 31))) || (__u32)(id >> 32) == *agent) {
		call_forget(id, n);
		return;
	}
	if (ret < 0 && !refused_room()) {
		vigil_count(VIGIL_CNT_TAMPER_REFUSED_SKIPPED);
		call_forget(id, n);
		return;
	}
	cur = bpf_get_current_task_btf();
	pin = c->what == VIGIL_TAMPER_PIN_UNLINK || c->what == VIGIL_TAMPER_PIN_RENAME;
	ev = pin ? tamper_begin(cur, *agent, c->what, VIGIL_EV_TAMPER_PIN,
				sizeof(struct vigil_tamper_pin)) :
		   tamper_begin(cur, *agent, c->what, VIGIL_EV_TAMPER, sizeof(struct vigil_tamper));
	if (ev) {
		ev->arg = c->arg;
		ev->result = ret;
		if (pin)
			__builtin_memcpy(((struct vigil_tamper_pin *)ev)->name, c->name,
					 sizeof(c->name));
		tamper_commit(ev);
	}
	call_forget(id, n);
}

/* The link behind fd in cur's file table, if its program uses this pin
 * folder's ring, counters or exec keys (every vigil program uses one):
 * its id, else 0. Every read is a probe: a fd that is no link
 * reads as no match. */
static __always_inline __u32 vigil_link_id(struct task_struct *cur, __u32 fd)
{
	struct file *f = vigil_fd_file(cur, fd);
	struct bpf_map **maps, *m;
	struct bpf_prog_aux *aux;
	struct bpf_link *link;
	__u32 n;

	if (!f)
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

/* The map behind fd, if the agent listed its id: the id, else 0; *outer
 * says it is a map of maps. */
static __always_inline __u32 vigil_map_id(struct task_struct *cur, __u32 fd, bool *outer)
{
	struct file *f = vigil_fd_file(cur, fd);
	struct bpf_map *m;
	__u32 id, type;

	if (!f)
		return 0;
	m = BPF_CORE_READ(f, private_data);
	id = BPF_CORE_READ(m, id);
	if (!id || !bpf_map_lookup_elem(&vigil_tamper_maps, &id))
		return 0;
	type = BPF_CORE_READ(m, map_type);
	*outer = type == BPF_MAP_TYPE_ARRAY_OF_MAPS || type == BPF_MAP_TYPE_HASH_OF_MAPS;
	return id;
}

SEC("tracepoint/syscalls/sys_enter_bpf")
int tamper_bpf(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	long cmd = ctx->args[0];
	__u32 fd, id, what, off = 0;
	bool outer = false;

	vigil_prog_run(VIGIL_PROG_TAMPER_BPF);
	switch (cmd) {
	case CMD_LINK_DETACH: what = VIGIL_TAMPER_LINK_DETACH; break;
	case CMD_LINK_UPDATE: what = VIGIL_TAMPER_LINK_UPDATE; break;
	case CMD_MAP_UPDATE_ELEM: what = VIGIL_TAMPER_MAP_UPDATE; break;
	case CMD_MAP_DELETE_ELEM:
	case CMD_MAP_LOOKUP_AND_DELETE_ELEM: what = VIGIL_TAMPER_MAP_DELETE; break;
	case CMD_MAP_UPDATE_BATCH: what = VIGIL_TAMPER_MAP_UPDATE; off = BATCH_MAP_FD_OFF; break;
	case CMD_MAP_DELETE_BATCH:
	case CMD_MAP_LOOKUP_AND_DELETE_BATCH:
		what = VIGIL_TAMPER_MAP_DELETE;
		off = BATCH_MAP_FD_OFF;
		break;
	default: return 0;
	}
	if (!agent_other_than(cur))
		return 0;
	/* link_fd and map_fd come first in their commands' part of union
	 * bpf_attr, but for the batches' */
	if (bpf_probe_read_user(&fd, sizeof(fd), (void *)ctx->args[1] + off))
		return 0;
	if (what == VIGIL_TAMPER_LINK_DETACH || what == VIGIL_TAMPER_LINK_UPDATE) {
		id = vigil_link_id(cur, fd);
	} else {
		id = vigil_map_id(cur, fd, &outer);
		if (outer && what == VIGIL_TAMPER_MAP_UPDATE)
			what = VIGIL_TAMPER_MAP_SWAP;
	}
	if (id)
		call_keep(what, id, NULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_bpf")
int tamper_bpf_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, 1u << VIGIL_TAMPER_LINK_DETACH | 1u << VIGIL_TAMPER_LINK_UPDATE |
				      1u << VIGIL_TAMPER_MAP_UPDATE | 1u << VIGIL_TAMPER_MAP_DELETE |
				      1u << VIGIL_TAMPER_MAP_SWAP);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(tamper_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct vigil_tamper *ev;
	__u32 agent = agent_other_than(cur);

	vigil_prog_run(VIGIL_PROG_TAMPER_SIGNAL);
	if (!agent || task->tgid != agent)
		return 0;
	ev = tamper_begin(cur, agent, VIGIL_TAMPER_SIGNAL, VIGIL_EV_TAMPER, sizeof(*ev));
	if (!ev)
		return 0;
	ev->arg = sig;
	ev->result = result;
	tamper_commit(ev);
	return 0;
}

/* Whether pid, as a call names it (in the caller's pid namespace), is a
 * thread of the agent's: looked up in the initial namespace, where the
 * agent's tgid was taken, when the caller is there (else compared as a
 * number). */
static __always_inline bool names_agent(struct task_struct *cur, __s32 pid, __u32 agent)
{
	struct task_struct *t;
	bool hit;

	if (pid <= 0)
		return false;
	if ((__u32)pid == agent)
		return true;
	if (!bpf_task_from_pid || cur->thread_pid->level != 0)
		return false;
	t = bpf_task_from_pid(pid);
	if (!t)
		return false;
	hit = t->tgid == agent;
	bpf_task_release(t);
	return hit;
}

SEC("tracepoint/syscalls/sys_enter_ptrace")
int tamper_ptrace(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	long req = ctx->args[0];
	__s32 pid = ctx->args[1];
	__u32 agent;

	vigil_prog_run(VIGIL_PROG_TAMPER_PTRACE);
	if (req != PTRACE_ATTACH_ && req != PTRACE_SEIZE_)
		return 0;
	agent = agent_other_than(cur);
	if (agent && names_agent(cur, pid, agent))
		call_keep(req == PTRACE_ATTACH_ ? VIGIL_TAMPER_PTRACE_ATTACH :
						  VIGIL_TAMPER_PTRACE_SEIZE, pid, NULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ptrace")
int tamper_ptrace_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, 1u << VIGIL_TAMPER_PTRACE_ATTACH | 1u << VIGIL_TAMPER_PTRACE_SEIZE);
	return 0;
}

static __always_inline int vm_enter(__s32 pid, __u32 what)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 agent = agent_other_than(cur);

	if (agent && names_agent(cur, pid, agent))
		call_keep(what, pid, NULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_process_vm_writev")
int tamper_vm_writev(struct trace_event_raw_sys_enter *ctx)
{
	return vm_enter(ctx->args[0], VIGIL_TAMPER_VM_WRITEV);
}

SEC("tracepoint/syscalls/sys_exit_process_vm_writev")
int tamper_vm_writev_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, 1u << VIGIL_TAMPER_VM_WRITEV);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_process_vm_readv")
int tamper_vm_readv(struct trace_event_raw_sys_enter *ctx)
{
	return vm_enter(ctx->args[0], VIGIL_TAMPER_VM_READV);
}

SEC("tracepoint/syscalls/sys_exit_process_vm_readv")
int tamper_vm_readv_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, 1u << VIGIL_TAMPER_VM_READV);
	return 0;
}

/* The task a pidfd names: its struct pid's first task. The pid is the
 * inode's on pidfs (6.9 on), the file's on the anonymous inode "[pidfd]"
 * before. */
static __always_inline struct task_struct *pidfd_task(struct file *f)
{
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry);
	struct hlist_node *first;
	struct pid *pid;
	char name[8] = {};

	if (BPF_CORE_READ(d, d_sb, s_magic) == PIDFS_MAGIC_) {
		pid = BPF_CORE_READ(f, f_inode, i_private);
	} else {
		bpf_probe_read_kernel(name, 7, BPF_CORE_READ(d, d_name.name));
		if (!bytes_same(name, "[pidfd]", 7))
			return NULL;
		pid = BPF_CORE_READ(f, private_data);
	}
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID_].first);
	return first ? container_of(first, struct task_struct, pid_links[PIDTYPE_PID_]) : NULL;
}

SEC("tracepoint/syscalls/sys_enter_pidfd_getfd")
int tamper_pidfd_getfd(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf(), *t;
	__u32 agent = agent_other_than(cur);
	struct file *f;

	if (!agent || !(f = vigil_fd_file(cur, ctx->args[0])) || !(t = pidfd_task(f)))
		return 0;
	if (BPF_CORE_READ(t, tgid) == agent)
		call_keep(VIGIL_TAMPER_PIDFD_GETFD, ctx->args[1], NULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_pidfd_getfd")
int tamper_pidfd_getfd_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, 1u << VIGIL_TAMPER_PIDFD_GETFD);
	return 0;
}

/* An open's exit, unless a file rule's hook checks this call's opens
 * (lib/tamper.bpf.h). The run is counted there when it is. */
static __always_inline int tamper_open_exit(long ret, __u32 verb)
{
	struct task_struct *cur;
	struct file *f;

	if (vigil_tamper_own_skips(verb))
		return 0;
	if (verb == VIGIL_VERB_OPENAT)
		vigil_prog_run(VIGIL_PROG_TAMPER_OPENAT);
	if (ret < 0)
		return 0;
	cur = bpf_get_current_task_btf();
	f = bpf_rdonly_cast ? vigil_fd_file_typed(cur, ret) : vigil_fd_file(cur, ret);
	if (f)
		vigil_tamper_open_file(cur, f, ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int tamper_openat(struct trace_event_raw_sys_exit *ctx)
{
	return tamper_open_exit(ctx->ret, VIGIL_VERB_OPENAT);
}

SEC("tracepoint/syscalls/sys_exit_open")
int tamper_open(struct trace_event_raw_sys_exit *ctx)
{
	return tamper_open_exit(ctx->ret, VIGIL_VERB_OPEN);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int tamper_openat2(struct trace_event_raw_sys_exit *ctx)
{
	return tamper_open_exit(ctx->ret, VIGIL_VERB_OPENAT2);
}

/* creat(2) opens an existing file too: O_WRONLY, a way to /proc/PID/mem. */
SEC("tracepoint/syscalls/sys_exit_creat")
int tamper_creat(struct trace_event_raw_sys_exit *ctx)
{
	return tamper_open_exit(ctx->ret, VIGIL_VERB_CREAT);
}

/* An unlink or rename of dfd/upath, when it names the pin folder or
 * something in it: kept for the exit. A rename is also kept when its
 * target (ndfd/npath) is in the folder: renaming another bpffs object
 * onto a pin replaces the pin (or swaps it out, RENAME_EXCHANGE), and the
 * name recorded is then the pin's. dfd is an int: the register's upper
 * half is not its sign (AT_FDCWD reads as 0xffffff9c). */
static __always_inline int pin_enter2(long dfd, const char *upath, long ndfd, const char *npath,
				      __u32 what)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	char name[VIGIL_TAMPER_PIN_MAX] = {};

	if (!agent_other_than(cur))
		return 0;
	if (vigil_pin_path(cur, dfd, upath, name) ||
	    (npath && vigil_pin_path(cur, ndfd, npath, name)))
		call_keep(what, 0, name);
	return 0;
}

static __always_inline int pin_enter(long dfd, const char *upath, __u32 what)
{
	return pin_enter2(dfd, upath, 0, NULL, what);
}

#define PIN_WHATS (1u << VIGIL_TAMPER_PIN_UNLINK | 1u << VIGIL_TAMPER_PIN_RENAME)

SEC("tracepoint/syscalls/sys_enter_unlink")
int tamper_unlink(struct trace_event_raw_sys_enter *ctx)
{
	return pin_enter(AT_FDCWD_, (const char *)ctx->args[0], VIGIL_TAMPER_PIN_UNLINK);
}

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int tamper_unlinkat(struct trace_event_raw_sys_enter *ctx)
{
	vigil_prog_run(VIGIL_PROG_TAMPER_UNLINKAT);
	return pin_enter((int)ctx->args[0], (const char *)ctx->args[1], VIGIL_TAMPER_PIN_UNLINK);
}

SEC("tracepoint/syscalls/sys_enter_rename")
int tamper_rename(struct trace_event_raw_sys_enter *ctx)
{
	return pin_enter2(AT_FDCWD_, (const char *)ctx->args[0], AT_FDCWD_,
			  (const char *)ctx->args[1], VIGIL_TAMPER_PIN_RENAME);
}

SEC("tracepoint/syscalls/sys_enter_renameat")
int tamper_renameat(struct trace_event_raw_sys_enter *ctx)
{
	return pin_enter2((int)ctx->args[0], (const char *)ctx->args[1], (int)ctx->args[2],
			  (const char *)ctx->args[3], VIGIL_TAMPER_PIN_RENAME);
}

SEC("tracepoint/syscalls/sys_enter_renameat2")
int tamper_renameat2(struct trace_event_raw_sys_enter *ctx)
{
	return pin_enter2((int)ctx->args[0], (const char *)ctx->args[1], (int)ctx->args[2],
			  (const char *)ctx->args[3], VIGIL_TAMPER_PIN_RENAME);
}

SEC("tracepoint/syscalls/sys_exit_unlink")
int tamper_unlink_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, PIN_WHATS);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_unlinkat")
int tamper_unlinkat_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, PIN_WHATS);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_rename")
int tamper_rename_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, PIN_WHATS);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_renameat")
int tamper_renameat_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, PIN_WHATS);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_renameat2")
int tamper_renameat2_exit(struct trace_event_raw_sys_exit *ctx)
{
	call_record(ctx->ret, PIN_WHATS);
	return 0;
}
