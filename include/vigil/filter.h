/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Export filters (a policy's `filters:` section, docs/policy.md): the map
 * ABI between the agent, which writes them (agent/core/filter_maps.c), and
 * the programs that drop an event before it takes a sequence number or a
 * byte of the ring (bpf/lib/filter.bpf.h). Not on the wire: a filtered
 * event is counted, per filter, in vigil_filter_hits.
 *
 * Two generations, as the process rules (vigil/proc_policy.h): the agent
 * writes the one not in force, fills every live process's binary bits for
 * it (the filter_scan iterator), then flips vigil_filter_conf.gen with one
 * update, so an event is filtered wholly by the old set or wholly by the
 * new.
 *
 *   vigil_filter_conf   array[1]: struct vigil_filter_conf
 *   vigil_filter_bin    LPM trie: struct vigil_filter_bin_key -> struct vigil_filter_bin
 *   vigil_filter_keys   hash: struct vigil_filter_key (a uid, network namespace
 *                       or cgroup) -> __u32 bits: the filters naming it
 *   vigil_filter_procs  hash: tgid -> struct vigil_filter_proc
 *   vigil_filter_hits   per-CPU array[2 * VIGIL_FILTER_SLOTS]: __u64
 *
 * An event is matched against every filter at once, as bitmasks (a bit
 * per filter): one lookup per selector, no loop over filters.
 * Binaries are matched once per process, at exec (and by the scan for the
 * processes already running), never per event: the result is a bit per
 * filter kept in vigil_filter_procs, inherited at fork.
 */
#ifndef VIGIL_FILTER_H
#define VIGIL_FILTER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define VIGIL_FILTERS_MAX 32	/* filters in force at once: a bit each */
#define VIGIL_FILTER_SLOTS (VIGIL_FILTERS_MAX + 1)	/* and the allow lists' misses */
#define VIGIL_FILTER_NOT_ALLOWED VIGIL_FILTERS_MAX	/* the slot of "not_allowed" */
#define VIGIL_FILTER_BIN_MAX 255	/* bytes of a binary path or prefix: with the generation, an LPM key's 256 */
#define VIGIL_FILTER_BIN_ENTRIES 1024	/* trie entries per generation */

/* The kinds a filter may drop, a bit each. Tamper, heartbeat, blind, loss,
 * throttle and policy decision records (enforce, policy_hit) have no bit:
 * they are never filtered (docs/operations.md, "Filters"). */
enum vigil_filter_kind {
	VIGIL_FK_EXEC = 0,
	VIGIL_FK_EXIT,
	VIGIL_FK_FORK,
	VIGIL_FK_CONNECT,
	VIGIL_FK_ACCEPT,
	VIGIL_FK_LISTEN,
	VIGIL_FK_CLOSE,
	VIGIL_FK_RESET,
	VIGIL_FK_NUM,
};

#define VIGIL_FILTER_UIDS_MAX 4096	/* uids all filters name, ranges counted out */
#define VIGIL_FILTER_KEYS (2 * (VIGIL_FILTER_UIDS_MAX + 2 * VIGIL_FILTERS_MAX))
#define VIGIL_FILTER_CGROUP_DEPTH 16	/* cgroup levels walked for "or below" */

enum vigil_filter_what {
	VIGIL_FILTER_BY_UID = 1,
	VIGIL_FILTER_BY_NETNS = 2,	/* the namespace's inode */
	VIGIL_FILTER_BY_CGROUP = 3,	/* the cgroup's id */
};

struct vigil_filter_key {
	__u32 gen;
	__u32 what;	/* enum vigil_filter_what */
	__u64 value;
};

/* One generation, as bits over its filters (bit i: filter i). A filter
 * matches when it names the event's kind and each selector it has holds;
 * a filter without a selector passes it. */
struct vigil_filter_set {
	__u32 n;		/* filters: ids 0..n-1 */
	__u32 kinds;		/* kinds some filter names (1 << enum vigil_filter_kind) */
	__u32 allow_kinds;	/* kinds some allow filter names: the rest of them is dropped */
	__u32 allow;		/* the allow filters; the others deny */
	__u32 by_kind[VIGIL_FK_NUM];	/* the filters naming each kind */
	__u32 binary;		/* filters with a binary selector */
	__u32 uid;		/* with a uid selector */
	__u32 netns;		/* with a netns selector */
	__u32 cgroup;		/* with a cgroup selector */
};

struct vigil_filter_conf {
	__u32 gen;		/* the generation in force */
	__u32 pad;
	struct vigil_filter_set set[2];
};

/* The generation leads the key (an 8-bit prefix every entry has), so one
 * trie holds both. */
struct vigil_filter_bin_key {
	__u32 prefixlen;	/* bits: 8 + 8 * the string's length */
	__u8 gen;
	__u8 s[VIGIL_FILTER_BIN_MAX];
};

/* LPM value: exact holds only when the binary is len bytes long; prefix
 * already has the bits of every shorter prefix ORed in (a lookup returns
 * the longest entry only). */
struct vigil_filter_bin {
	__u32 exact;
	__u32 prefix;
	__u32 len;
	__u32 pad;
};

struct vigil_filter_proc {
	__u32 bits[2];		/* per generation: filters whose binary selector matches */
};

#ifndef __VMLINUX_H__
_Static_assert(sizeof(struct vigil_filter_key) == 16, "vigil_filter_key layout");
_Static_assert(sizeof(struct vigil_filter_set) == 64, "vigil_filter_set layout");
_Static_assert(sizeof(struct vigil_filter_conf) == 136, "vigil_filter_conf layout");
_Static_assert(sizeof(struct vigil_filter_bin_key) == 260, "vigil_filter_bin_key layout");
#endif

#endif
