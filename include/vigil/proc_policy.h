/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exec and file rules (docs/policy.md, "Process and file rules"): the map
 * ABI between the agent (agent/enforce/proc_rules.c) and the program that
 * matches them (bpf/enforce_proc.bpf.c). Not on the wire: the event these
 * rules write is struct vigil_policy_hit (enforce_events.h).
 *
 * Every map comes twice, generation 0 and 1: the agent writes the one not
 * in force, whole, then flips vigil_pstate.gen with one map update, so an
 * exec or open is decided wholly by the old rules or wholly by the new.
 *
 *   vigil_pstate          array[1]: the generation in force, vigild's tgid
 *   vigil_pconf           array[2]: per generation, the rules of each verb
 *                         and what each rule needs of each string
 *   vigil_prules          array[2 * VIGIL_PRULES_MAX]: gen * MAX + id ->
 *                         the rule's scalar selectors and action
 *   vigil_prule_stats     per-CPU array, same keys: what each rule did
 *   vigil_puring          LRU hash: process -> its io_uring rings, submissions
 *                         and open submissions, which file rules do not see
 *   vigil_pcompat         LRU hash: process -> its execs of 32-bit binaries,
 *                         whose opens file rules do not see
 *   vigil_pstr_<D>_<F>_<G> LPM tries, D the string (path, bin, par, cid), F fwd
 *                         or rev (the string reversed: postfixes), G 0|1:
 *                         a string -> the rules listing it or a prefix of it
 */
#ifndef VIGIL_PROC_POLICY_H
#define VIGIL_PROC_POLICY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VIGIL_PRULES_MAX 128	/* exec and file rules in force at once */
#define VIGIL_PSTR_MAX 256	/* bytes of a pattern: an LPM key's data */
#define VIGIL_PSTR_ENTRIES 4096	/* patterns per trie */
#define VIGIL_CID_LEN 64	/* a container id: hex digits */
#define VIGIL_CID_MIN 12	/* the shortest prefix of one a rule may give (docker ps) */

/* What a rule is on ('on:'). A verb keeps its number for ever; later verbs
 * (unlink, rename, chmod, chown, link, symlink) take the next ones. */
enum vigil_verb {
	VIGIL_VERB_EXEC = 0,
	VIGIL_VERB_OPEN,
	VIGIL_VERB_OPENAT,
	VIGIL_VERB_OPENAT2,
	VIGIL_VERB_CREAT,
	VIGIL_VERB_MAX = 16,
};
#define VIGIL_VERBS_FILE (1u << VIGIL_VERB_OPEN | 1u << VIGIL_VERB_OPENAT | \
			  1u << VIGIL_VERB_OPENAT2 | 1u << VIGIL_VERB_CREAT)

/* Where the check of opens against the agent's /proc files runs, by call
 * (bits 1 << VIGIL_VERB_OPEN .. _CREAT; vigil_tamper_fold, one entry):
 * the file rule's hook of a call checks when its in_rule bit is set,
 * tamper's own hook when its own_skips bit is clear. Zero (a fresh map):
 * tamper's hooks alone. A move passes through both checking (in_rule set,
 * own_skips clear) for a grace period (agent/core/tamper.c). */
struct vigil_tamper_fold {
	__u32 in_rule;
	__u32 own_skips;
};

/* What an open asked for (a rule's 'intent', an event's args), and what
 * took effect. CREATE: O_CREAT given; CREATED: the open made the file.
 * TRUNCATE: O_TRUNC given on a regular file opened for writing: it is
 * truncated by the time the hook runs, whatever the rule does. */
enum vigil_intent {
	VIGIL_INTENT_READ = 1 << 0,
	VIGIL_INTENT_WRITE = 1 << 1,
	VIGIL_INTENT_CREATE = 1 << 2,
	VIGIL_INTENT_TRUNCATE = 1 << 3,
	VIGIL_INTENT_CREATED = 1 << 4,	/* in events only */
};

/* The strings a rule can match, and how. */
enum vigil_pstr {
	VIGIL_PSTR_PATH,	/* the file opened (file rules) */
	VIGIL_PSTR_BINARY,	/* the process's binary; at exec, the new one */
	VIGIL_PSTR_PARENT,	/* its parent's binary */
	VIGIL_PSTR_CONTAINER,	/* its cgroup's container id: 64 hex digits */
	VIGIL_PSTR_NUM,
};

enum vigil_pstr_op {
	VIGIL_OP_EQ,		/* 'equal', or 'in' for binaries */
	VIGIL_OP_NOT_EQ,	/* 'not_equal', 'not_in' */
	VIGIL_OP_PREFIX,	/* also a container id's 'in': an id or its first digits */
	VIGIL_OP_NOT_PREFIX,	/* and its 'not_in' */
	VIGIL_OP_POSTFIX,
	VIGIL_OP_NOT_POSTFIX,
	VIGIL_OP_NUM,
};

/* Sets of rules: bit id of w[id / 64]. */
struct vigil_pbits {
	__u64 w[2];
};

/* LPM key: the string's bytes (reversed in a rev trie), prefixlen in bits. */
struct vigil_pstr_key {
	__u32 prefixlen;
	__u8 s[VIGIL_PSTR_MAX];
};

/* LPM value. In a fwd trie: EQ, NOT_EQ the rules listing exactly this
 * string (they hold only when the looked-up string is len bytes long),
 * PREFIX, NOT_PREFIX the rules listing it or any shorter prefix of it (the
 * compiler ORs them in: a lookup returns the longest entry only). In a rev
 * trie the same for POSTFIX, NOT_POSTFIX, in the PREFIX slots. */
struct vigil_pstr_set {
	struct vigil_pbits op[4];	/* EQ, NOT_EQ, PREFIX, NOT_PREFIX */
	__u32 len;
	__u32 pad;
};

/* Per generation: which rules each verb runs, and which rules need what
 * of each string; BPF tests those bit-parallel, then the scalar selectors
 * of the rules left, from the lowest id. */
struct vigil_pconf {
	struct vigil_pbits verb[VIGIL_VERB_MAX];
	struct vigil_pbits need[VIGIL_PSTR_NUM][VIGIL_OP_NUM];
	__u32 strings[VIGIL_VERB_MAX];	/* bits (1 << enum vigil_pstr) some rule needs */
};

struct vigil_pstate {
	__u32 gen;		/* 0 or 1: the generation in force */
	__u32 agent_tgid;	/* vigild: never signalled */
};

enum vigil_prule_flags {
	VIGIL_PRULE_ACTIVE = 1 << 0,
	VIGIL_PRULE_MONITOR = 1 << 1,	/* the policy's mode: monitor */
	VIGIL_PRULE_UID = 1 << 2,
	VIGIL_PRULE_EUID = 1 << 3,
	VIGIL_PRULE_CGROUP = 1 << 4,
};

/* Namespaces a rule can ask about (bits in ns_mask, ns_host). */
enum vigil_pns {
	VIGIL_PNS_PID = 1 << 0,
	VIGIL_PNS_MNT = 1 << 1,
	VIGIL_PNS_NET = 1 << 2,
};

#define VIGIL_PRULE_NAME 64

struct vigil_prule {
	char name[VIGIL_PRULE_NAME];	/* copied into events */
	__u8 action;		/* enum vigil_action: post, nopost, signal, sigkill */
	__u8 signal;		/* for signal (sigkill: 9) */
	__u16 flags;		/* enum vigil_prule_flags */
	__u32 intent;		/* any of these (enum vigil_intent); 0: any open */
	__u32 uid_lo, uid_hi;	/* real uid range */
	__u32 euid_lo, euid_hi;
	__u32 ns_mask;		/* enum vigil_pns: which are asked about */
	__u32 ns_host;		/* of those: the host's (set) or not (clear) */
	__u64 cgroup_id;	/* the cgroup (v2 id) or one below it */
	__u32 cgroup_level;
	__u32 pad;
};

/* Why a signal due was not sent (vigil_policy_hit.outcome, and counted). */
enum vigil_pout {
	VIGIL_POUT_NONE = 0,		/* post: nothing to send */
	VIGIL_POUT_SIGNALLED,		/* sent */
	VIGIL_POUT_MONITOR,		/* mode: monitor: would have been sent */
	VIGIL_POUT_REFUSED_INIT,	/* the initial pid namespace's PID 1 */
	VIGIL_POUT_REFUSED_KTHREAD,
	VIGIL_POUT_REFUSED_EXITING,
	VIGIL_POUT_REFUSED_AGENT,	/* vigild itself */
	VIGIL_POUT_REFUSED_HELPER,	/* bpf_send_signal failed (-EPERM, -EAGAIN) */
	VIGIL_POUT_MAX,
};

struct vigil_prule_stats {
	__u64 hits;		/* matched (every action, every mode) */
	__u64 events;		/* written */
	__u64 events_lost;	/* ring full */
	__u64 signals;		/* sent: signal N */
	__u64 kills;		/* sent: SIGKILL */
	__u64 would_signal;	/* monitor mode */
	__u64 would_kill;
	__u64 refused;		/* due and not sent (VIGIL_POUT_REFUSED_*) */
};

/* io_uring per process (vigil_puring), counted while any file rule is in
 * force: IORING_OP_OPENAT and _OPENAT2 open files without a syscall, so
 * file rules never see them; these counts say they happened. */
#define VIGIL_PURING_ENTRIES 4096	/* processes; the least recently counted go first */

struct vigil_uring_key {
	__u32 tgid;
	__u32 pad;
	__u64 start_time;	/* the process's (its leader's), against pid reuse */
};

struct vigil_uring_count {
	__u64 rings;		/* io_uring_setup: rings made */
	__u64 submissions;	/* requests submitted, any opcode */
	__u64 opens;		/* of those, IORING_OP_OPENAT and IORING_OP_OPENAT2 */
	char comm[16];		/* the process's, when first counted */
};

/* 32-bit (ia32) binaries exec'd per process (vigil_pcompat, the same
 * key), counted while any file rule is in force: the syscalls tracepoints
 * never fire for ia32 syscalls, so file rules never see a 32-bit
 * process's opens; these counts say such processes ran. */
#define VIGIL_PCOMPAT_ENTRIES 4096	/* processes; the least recently counted go first */

struct vigil_compat_count {
	__u64 execs;		/* execs of a 32-bit binary */
	char comm[16];		/* the process's, at its first such exec */
};

#endif
