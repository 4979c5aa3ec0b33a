/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every policy action, once: X(ID, VALUE, NAME, CGROUP, KINDS).
 *   ID, VALUE  enum vigil_action's name and number. The number is in the
 *              pinned rule maps and on the wire (vigil_enforce.action): an
 *              action keeps its number for ever, a new one takes the next.
 *   NAME       what policy files, events, `vigil policy list` and the docs
 *              call it
 *   CGROUP     whether a rule of this action takes a 'cgroup' key
 *              (enum vigil_action_cgroup). A cgroup scope is about local
 *              senders, so a rule that has one is an egress rule. (Exec and
 *              file rules take 'cgroup' as a selector, whatever the action.)
 *   KINDS      the rule kinds that may take it (enum vigil_action_kinds):
 *              network rules, or exec and file rules (vigil/proc_policy.h)
 * From this list come enum vigil_action (enforce_events.h), the policy
 * parser's words and its messages about actions (lib/policy_parse.c), the
 * action names in events (lib/format_enforce.c), and the list docs/policy.md
 * is checked against (tests/policy_actions.c, tests/policy_parse.t). What an
 * action does is code: in bpf/ and agent/enforce/. A new action is a line
 * here, that code, and its words in docs/policy.md.
 * BPF includes it (through events.h): macros and enums only.
 */
#ifndef VIGIL_POLICY_ACTIONS_H
#define VIGIL_POLICY_ACTIONS_H

enum vigil_action_cgroup {
	VIGIL_ACT_CGROUP_NO,	/* a rule with 'cgroup' is refused */
	VIGIL_ACT_CGROUP_MAY,	/* then it refuses the cgroup's local processes */
	VIGIL_ACT_CGROUP_MUST,	/* a rule without 'cgroup' is refused */
};

/* Bits: which kinds of rule an action is for. */
enum vigil_action_kinds {
	VIGIL_KIND_NET = 1 << 0,	/* connections and packets */
	VIGIL_KIND_EXEC = 1 << 1,	/* on: exec */
	VIGIL_KIND_FILE = 1 << 2,	/* on: open, openat, openat2, creat */
	VIGIL_KIND_PROC = VIGIL_KIND_EXEC | VIGIL_KIND_FILE,
};

#define VIGIL_POLICY_ACTIONS(X)							\
	X(VIGIL_ACT_ALLOW, 1, allow, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_NET)		\
	X(VIGIL_ACT_DROP, 2, drop, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_NET)		\
	/* RST / ICMP unreachable to the sender */				\
	X(VIGIL_ACT_REJECT, 3, reject, VIGIL_ACT_CGROUP_MAY, VIGIL_KIND_NET)	\
	/* RST both ways; live local sockets destroyed */			\
	X(VIGIL_ACT_RESET, 4, reset, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_NET)		\
	/* local connect/sendmsg refused (cgroup hooks) */			\
	X(VIGIL_ACT_DENY, 5, deny, VIGIL_ACT_CGROUP_MUST, VIGIL_KIND_NET)		\
	/* an event (process_tracepoint), nothing done */			\
	X(VIGIL_ACT_POST, 6, post, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_PROC)		\
	/* counted in the rule's hits, no event */				\
	X(VIGIL_ACT_NOPOST, 7, nopost, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_PROC)	\
	/* the signal 'signal: N' to the process, and an event */		\
	X(VIGIL_ACT_SIGNAL, 8, signal, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_PROC)	\
	/* SIGKILL to the process, and an event */				\
	X(VIGIL_ACT_SIGKILL, 9, sigkill, VIGIL_ACT_CGROUP_NO, VIGIL_KIND_PROC)

enum vigil_action {
#define VIGIL_ACTION_ENUM(id, value, name, cgroup, kinds) id = value,
	VIGIL_POLICY_ACTIONS(VIGIL_ACTION_ENUM)
#undef VIGIL_ACTION_ENUM
};

#endif
