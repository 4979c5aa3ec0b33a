/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vigil's event records: the one definition shared by the BPF programs, the
 * agent, the collector and the stream spec (docs/stream.md). Every record in
 * the ring, and so on the wire, starts with struct vigil_hdr. Fixed-width,
 * little-endian (the node's byte order, announced in the stream hello),
 * explicitly padded: the static asserts below keep the layout honest.
 *
 * Changing a struct here changes the wire format: bump VIGIL_SCHEMA_MAJOR;
 * adding an event kind bumps VIGIL_SCHEMA_MINOR. Each version's line in
 * tests/schema_digests holds the digest of its kinds and layouts, so that
 * tests/stream_schema.t fails a change without a new version.
 */
#ifndef VIGIL_EVENTS_H
#define VIGIL_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The event schema, MAJOR.MINOR (docs/stream.md, "Schema versions"). A new
 * minor only adds event kinds: readers of the same major skip (and count)
 * the kinds they do not know. Any change to an existing kind's layout is a
 * new major, which readers refuse. On the wire and in the pinned
 * vigil_schema map: MAJOR | MINOR << 16.
 * 2.0: exec gained credentials, namespaces, file_len, ino, nlink.
 * 2.1: policy_hit (exec and file rules).
 * 3.0: connect, close and reset carry the socket cookie; throttle a phase
 *      (start, stop).
 * 3.1: 3.0 with policy_hit.
 * 3.2: heartbeat, blind and tamper (the node's health, from BPF); exec's
 *      flag REDACTED.
 * 3.3: prog_runs (each program's runs, by the heartbeat's tick), health
 *      (a health ring record, copied into the main ring by the agent) and
 *      tamper_pin (the pin folder's unlinks and renames, from BPF). */
#define VIGIL_SCHEMA_MAJOR 3
#define VIGIL_SCHEMA_MINOR 3
#define VIGIL_SCHEMA_VERSION (VIGIL_SCHEMA_MAJOR | VIGIL_SCHEMA_MINOR << 16)
#define VIGIL_SCHEMA_MAJOR_OF(v) ((v) & 0xffff)
#define VIGIL_SCHEMA_MINOR_OF(v) ((v) >> 16)

/* Type ids. Ranges leave room per part: 1-15 process, 16-31 network
 * observation, 32-47 enforcement, 48-63 reports, 64-79 agent-injected. */
enum vigil_event_type {
	VIGIL_EV_EXEC = 1,
	VIGIL_EV_EXIT = 2,
	VIGIL_EV_FORK = 3,
	VIGIL_EV_THROTTLE = 4,	/* process events a budget held back */
	VIGIL_EV_LOSS = 64,	/* injected by the agent: losses it learned of */
	VIGIL_EV_TYPE_MAX = 127,
};

/* The first type id of each part; a part's header defines its own ids. */
#define VIGIL_EV_NET_FIRST 16
#define VIGIL_EV_NET_LAST 31
#define VIGIL_EV_ENFORCE_FIRST 32
#define VIGIL_EV_ENFORCE_LAST 47
#define VIGIL_EV_REPORT_FIRST 48
#define VIGIL_EV_REPORT_LAST 63

/* Heads every record. seq is per boot, taken in BPF with one atomic counter
 * for every program: a gap in seq is a lost record, and (boot id, seq) names
 * a record uniquely for de-duplication downstream. */
struct vigil_hdr {
	__u16 type;	/* enum vigil_event_type */
	__u16 size;	/* whole event, this header included, padded to 8 */
	__u32 cpu;
	__u64 seq;
	__u64 ktime;	/* CLOCK_MONOTONIC ns when the event was taken */
};

/* Who a process is; the same in every process-related event. */
struct vigil_proc {
	__u32 pid;	/* tgid */
	__u32 tid;
	__u32 ppid;	/* real parent's tgid */
	__u32 uid;
	__u32 gid;
	__u32 auid;	/* login uid, (__u32)-1 when unset */
	/* (pid, exec_ktime) names one exec of one process on this boot: the
	 * CLOCK_MONOTONIC ns of the exec, or the task's start time for a
	 * process found at start or forked without exec. It is the "ktime"
	 * in Tetragon-style exec ids; BPF keeps it per tgid (vigil_execs). */
	__u64 exec_ktime;
	__u64 parent_exec_ktime;	/* 0 when the parent is unknown */
	__u64 cgroup_id;	/* cgroup v2 id (the cgroup directory's inode) */
};

enum vigil_exec_flags {
	VIGIL_EXEC_PROCFS = 1 << 0,	/* found running at start, not seen exec */
	VIGIL_EXEC_TRUNC_ARGS = 1 << 1,
	VIGIL_EXEC_TRUNC_PATH = 1 << 2,	/* binary path cut at its root side */
	VIGIL_EXEC_NO_CWD = 1 << 3,	/* cwd could not be resolved */
	VIGIL_EXEC_TRUNC_CWD = 1 << 4,
	VIGIL_EXEC_ROOT_CWD = 1 << 5,	/* cwd is "/" */
	VIGIL_EXEC_KTHREAD = 1 << 6,	/* procFS entry for a kernel thread */
	VIGIL_EXEC_NO_ARGS = 1 << 7,	/* arguments were not readable */
	/* The binary has no link left on any file system (i_nlink 0): a memfd,
	 * or a file deleted with no other hard link. */
	VIGIL_EXEC_FILELESS = 1 << 8,
	/* The binary is not at a path any more, or never was: deleted before
	 * or during exec, or an anonymous file (memfd). Then "binary" holds
	 * the exec filename (as given to execve: "/proc/self/fd/3",
	 * "/dev/fd/3" for execveat(AT_EMPTY_PATH)) and the file string holds
	 * the old path, or the anonymous file's name ("memfd:NAME"). */
	VIGIL_EXEC_UNLINKED = 1 << 9,
	/* the exec's process had not exec'd since its fork (Tetragon's
	 * "execve clone"); not set for an exec replacing an earlier one */
	VIGIL_EXEC_CLONE = 1 << 12,
	/* A procFS record of a process whose record was sent before (its exec,
	 * its fork, or an earlier agent's scan: its exec key is in
	 * vigil_execs): for process caches only, no line, so that one exec_id
	 * has one process_exec line. PROCFS is then clear when it exec'd. */
	VIGIL_EXEC_KNOWN = 1 << 13,
	/* secrets in the arguments were masked in BPF (vigil/redact.h), or
	 * the arguments dropped (args_len 0) when there were too many */
	VIGIL_EXEC_REDACTED = 1 << 14,
};

/* What a set-user-id, set-group-id or file-capability exec changed, as
 * Tetragon's binary_properties names it (vigil_exec_creds.secureexec). */
enum vigil_secureexec {
	VIGIL_SECEXEC_SETUID = 1 << 0,		/* euid differs from the real uid */
	VIGIL_SECEXEC_SETGID = 1 << 1,
	VIGIL_SECEXEC_FILE_CAPS = 1 << 2,	/* capabilities from the file's xattr */
	VIGIL_SECEXEC_SETUID_ROOT = 1 << 3,	/* a non-root uid became euid 0 */
	VIGIL_SECEXEC_SETGID_ROOT = 1 << 4,
};

/* Namespaces, in Tetragon's order (its Namespaces message). */
enum vigil_ns {
	VIGIL_NS_UTS, VIGIL_NS_IPC, VIGIL_NS_MNT, VIGIL_NS_PID, VIGIL_NS_PID_FOR_CHILDREN,
	VIGIL_NS_NET, VIGIL_NS_TIME, VIGIL_NS_TIME_FOR_CHILDREN, VIGIL_NS_CGROUP, VIGIL_NS_USER,
	VIGIL_NS_MAX,
};

/* Credentials, capabilities and namespaces right after the exec (the new
 * program's): what Tetragon reports as process_credentials, cap, ns and
 * binary_properties. Read at exec only: other events name the process's
 * exec-time values, as Tetragon's process cache does. */
struct vigil_exec_creds {
	__u32 euid, egid, suid, sgid, fsuid, fsgid;
	__u32 secureexec;	/* enum vigil_secureexec */
	__u32 nspid;		/* pid in its own pid namespace; 0 in the initial one */
	__u64 cap_permitted, cap_effective, cap_inheritable;
	__u32 ns[VIGIL_NS_MAX];	/* inode numbers, enum vigil_ns */
	__u32 ns_host;		/* bit (1 << enum vigil_ns) when that one is the host's */
	__u32 pad;
};

#define VIGIL_PATH_MAX 4096	/* binary, cwd */
#define VIGIL_ARGS_MAX 1024	/* argv bytes kept; more sets TRUNC_ARGS */
#define VIGIL_CGROUP_MAX 512

/*
 * process_exec. The strings follow the fixed part in this order, each with
 * its length here and no terminator: binary, args (argv, NUL-separated,
 * argv[0] included), cwd, cgroup path, file (only with VIGIL_EXEC_UNLINKED,
 * else empty). Then zero padding to 8.
 */
struct vigil_exec {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	struct vigil_exec_creds creds;
	__u32 flags;		/* enum vigil_exec_flags */
	__u16 binary_len;
	__u16 args_len;
	__u16 cwd_len;
	__u16 cgroup_len;
	__u16 file_len;
	__u16 pad;
	__u64 ino;		/* the binary's inode number, 0 when unknown */
	__u32 nlink;		/* its link count at exec (0: fileless) */
	__u32 pad2;
	char data[];
};

/* A new process (not a thread): the child starts as a copy of its parent. */
struct vigil_fork {
	struct vigil_hdr hdr;
	struct vigil_proc proc;	/* the child */
};

/* The last thread of a process exited. */
struct vigil_exit {
	struct vigil_hdr hdr;
	struct vigil_proc proc;
	__u32 exit_code;	/* as wait(2) encodes it: status << 8 | signal */
	__u32 pad;
};

/* Process events (exec, fork, exit) of one cgroup, or one uid, not written
 * because it was over its budget (--proc-budget), since the last such
 * report for it (phase HELD): one about a second after the first held
 * event, then one a second at most while it stays over. A storm starts
 * (START, at its first held event) and stops (STOP, a second after a
 * report when nothing more was held): throttled is 0 in those. */
struct vigil_throttle {
	struct vigil_hdr hdr;
	__u64 cgroup_id;	/* by cgroup; 0 by uid */
	__u64 throttled;
	__u32 uid;		/* by uid; (__u32)-1 by cgroup */
	__u32 by;		/* enum vigil_budget_by */
	__u32 phase;		/* enum vigil_throttle_phase */
	__u32 pad;
};

enum vigil_throttle_phase {
	VIGIL_THROTTLE_HELD = 0,	/* a count of held events */
	VIGIL_THROTTLE_START = 1,	/* the budget was first exceeded */
	VIGIL_THROTTLE_STOP = 2,	/* a second passed with nothing held */
};

enum vigil_budget_by {
	VIGIL_BUDGET_BY_CGROUP = 0,
	VIGIL_BUDGET_BY_UID = 1,
};

/* The budget, in the pinned map vigil_proc_budget_cfg (written by the agent
 * at each start): rate events a second per cgroup (or uid), bursts up to
 * burst. rate 0: no budget. */
struct vigil_proc_budget_cfg {
	__u32 rate;
	__u32 burst;
	__u32 by;	/* enum vigil_budget_by */
	__u32 pad;
};

/* What the agent learned was lost since its last report, injected into the
 * ring so every consumer of the stream sees it in order. */
struct vigil_loss {
	struct vigil_hdr hdr;
	__u64 ring_full;	/* failed reserves counted by BPF (all time) */
	__u64 recursion_misses;	/* programs skipped by the kernel (all time) */
	__u64 threads_exited;	/* thread exits counted, not reported */
};

#define VIGIL_EVENT_MAX_SIZE \
	(sizeof(struct vigil_exec) + VIGIL_PATH_MAX * 3 + VIGIL_ARGS_MAX + VIGIL_CGROUP_MAX)

/* The pinned counters map, one slot each, per CPU. Slots 0-15 are the
 * core's; network observation 16-31, enforcement 32-63. */
enum vigil_counter {
	VIGIL_CNT_RING_FULL = 0,
	VIGIL_CNT_THREAD_EXIT,
	VIGIL_CNT_OUTPUT_LOST,	/* user space: records the local output dropped */
	VIGIL_CNT_PROC_THROTTLED,	/* process events over a cgroup's budget */
	VIGIL_CNT_HEALTH_FULL,	/* health records the health ring refused */
	VIGIL_CNT_TAMPER_REFUSED_SKIPPED,	/* refused calls not recorded: the health ring half full */
	VIGIL_CNT_NET_FIRST = 16,
	VIGIL_CNT_ENFORCE_FIRST = 32,
	VIGIL_CNT_MAX = 64,
};

#define VIGIL_STATIC_ASSERT(c, m) _Static_assert(c, m)
VIGIL_STATIC_ASSERT(sizeof(struct vigil_hdr) == 24, "vigil_hdr layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_proc) == 48, "vigil_proc layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_exec_creds) == 104, "vigil_exec_creds layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_exec) == 208, "vigil_exec layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_fork) == 72, "vigil_fork layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_exit) == 80, "vigil_exit layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_loss) == 48, "vigil_loss layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_throttle) == 56, "vigil_throttle layout");
VIGIL_STATIC_ASSERT(sizeof(struct vigil_proc_budget_cfg) == 16, "vigil_proc_budget_cfg layout");
VIGIL_STATIC_ASSERT(VIGIL_EVENT_MAX_SIZE < 65536, "size fits hdr.size");


/* Each part's events, in its own header, in its own id range. */
#include <vigil/net_events.h>
#include <vigil/enforce_events.h>
#include <vigil/health_events.h>
VIGIL_STATIC_ASSERT(sizeof(struct vigil_policy_hit) == 184, "vigil_policy_hit layout");

#endif
