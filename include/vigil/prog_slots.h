/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The vigil programs whose runs the heartbeat counts, each with a slot in
 * the per-CPU array vigil_prog_runs (bpf/lib/prog_runs.bpf.h) and in
 * struct vigil_prog_runs. X(SLOT, NAME): NAME is the program's name, as
 * its link is pinned (link_NAME) and as docs/events.md lists it. Two
 * programs that are alternatives for one hook (only one loads) share a
 * slot. A new program is a line here: the record's layout keeps
 * VIGIL_PROG_SLOTS slots whatever the list holds, so the wire does not
 * change; the names are user space's.
 */
#ifndef VIGIL_PROG_SLOTS_H
#define VIGIL_PROG_SLOTS_H

#define VIGIL_PROG_SLOT_LIST(X)				\
	X(VIGIL_PROG_PROCESS_EXEC, process_exec)		\
	X(VIGIL_PROG_PROCESS_FORK, process_fork)		\
	X(VIGIL_PROG_PROCESS_EXIT, process_exit)		\
	X(VIGIL_PROG_NET_STATE, net_state)			\
	X(VIGIL_PROG_NET_RST_IN, net_rst_in)			\
	X(VIGIL_PROG_NET_RST_OUT, net_rst_out)			\
	X(VIGIL_PROG_NET_RETRANS, net_retrans)			\
	X(VIGIL_PROG_NET_SEND, net_send)			\
	X(VIGIL_PROG_NET_RECV, net_recv)			\
	X(VIGIL_PROG_NET_ACCEPT4, net_accept4)			\
	X(VIGIL_PROG_NET_ACCEPT, net_accept)			\
	X(VIGIL_PROG_REPORT_EXEC, report_exec)			\
	X(VIGIL_PROG_POLICY_EXEC, proc_policy_exec)		\
	X(VIGIL_PROG_POLICY_OPEN, proc_policy_open)		\
	X(VIGIL_PROG_POLICY_OPENAT, proc_policy_openat)	\
	X(VIGIL_PROG_POLICY_OPENAT2, proc_policy_openat2)	\
	X(VIGIL_PROG_POLICY_CREAT, proc_policy_creat)		\
	X(VIGIL_PROG_CARRIED_SEND, carried_send)		\
	X(VIGIL_PROG_CARRIED_RECV, carried_recv)		\
	X(VIGIL_PROG_TAMPER_BPF, tamper_bpf)			\
	X(VIGIL_PROG_TAMPER_SIGNAL, tamper_signal)		\
	X(VIGIL_PROG_TAMPER_PTRACE, tamper_ptrace)		\
	X(VIGIL_PROG_TAMPER_OPENAT, tamper_openat)		\
	X(VIGIL_PROG_TAMPER_UNLINKAT, tamper_unlinkat)

enum vigil_prog_slot {
#define VIGIL_PROG_SLOT_ENUM(slot, name) slot,
	VIGIL_PROG_SLOT_LIST(VIGIL_PROG_SLOT_ENUM)
#undef VIGIL_PROG_SLOT_ENUM
	VIGIL_PROG_SLOTS_USED,
};

/* The record's slots: room for programs to come without a new layout. */
#define VIGIL_PROG_SLOTS 32

/* Each CPU's run counts, the value of vigil_prog_runs' one entry: one
 * lookup at a program's entry, and the timer reads a CPU's whole row. */
struct vigil_prog_counts {
	__u64 runs[VIGIL_PROG_SLOTS];
};

#endif
