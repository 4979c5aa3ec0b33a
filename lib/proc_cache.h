/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Live processes by pid, built only from the event stream (exec, fork, exit),
 * so the agent and the collector rebuild the same cache from the same
 * records. It gives each event the process's binary, arguments and cwd and
 * its parent's. A process that exited stays findable until
 * VIGIL_PROC_EXITED_KEEP later exits (or its pid is reused): events that
 * come after its exit (a socket closed in softirq, a child's exit naming its
 * parent) still name its binary.
 *
 * Bounded twice: by entries (max) and by bytes (max_bytes: each entry's
 * struct, its strings and the allocator's share, vigil_proc_entry_bytes()).
 * A new process that would pass either bound first frees the processes that
 * exited, oldest first; when that is not enough it is not cached (the events
 * still carry exact exec ids and are flagged "miss"). The collector keeps
 * one cache per agent stream, fed by the network: the byte bound is what
 * keeps a peer sending long arguments from taking its memory.
 */
#ifndef VIGIL_PROC_CACHE_H
#define VIGIL_PROC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vigil/events.h>

struct vigil_proc_entry {
	struct vigil_proc_entry *next;
	struct vigil_proc proc;
	struct vigil_exec_creds creds;	/* at its exec (a fork: its parent's) */
	uint32_t flags;		/* enum vigil_exec_flags, plus PROC_* below */
	uint16_t binary_len, args_len, cwd_len, cgroup_len;
	int32_t exited_slot;	/* its place among the exited; -1 while alive */
	char *binary, *args, *cwd, *cgroup;	/* one allocation, at binary */
	/* Unique in its cache, from 1: an entry never changes once made (a new exec
	 * or fork of the pid is a new entry), so what was written from it
	 * can be kept by this number (struct vigil_process_memo). */
	uint64_t serial;
};

#define VIGIL_PROC_CLONE (1U << 16)	/* forked, never exec'd */
/* Tetragon's in_init_tree: the init of a pid namespace other than the
 * initial one (nspid 1), or forked from a process that is; kept across
 * forks and execs. */
#define VIGIL_PROC_IN_INIT_TREE (1U << 17)
#define VIGIL_PROC_EXITED_KEEP 4096
/* Processes the agent's cache holds; the collector's holds as many, within
 * its byte budget. */
#define VIGIL_PROC_CACHE_MAX 65536

struct vigil_proc_cache {
	struct vigil_proc_entry **slots;
	size_t nslots;		/* a power of two */
	size_t count;
	size_t max;
	size_t bytes;		/* vigil_proc_entry_bytes() of every entry */
	size_t max_bytes;	/* SIZE_MAX unless vigil_proc_cache_budget() set one */
	size_t nexited;		/* non-NULL among exited[] */
	size_t exited_bytes;	/* what those hold */
	uint64_t misses;	/* not cached: full, or no memory (a fork of an
				 * unknown parent is not: see lookups_missed) */
	/* Finds of one exec of a pid that found nothing: an event whose
	 * process (or parent) details are missing from its line. Started
	 * before the stream, gone for long, or not cached (misses). */
	uint64_t lookups_missed;
	struct vigil_proc_entry *exited[VIGIL_PROC_EXITED_KEEP];	/* oldest at exited_next */
	unsigned exited_next;
	uint64_t serials;	/* entries made so far */
};

int vigil_proc_cache_init(struct vigil_proc_cache *c, size_t max);
/* Caps the bytes the entries hold (none by default). */
void vigil_proc_cache_budget(struct vigil_proc_cache *c, size_t max_bytes);
/* What one entry holding strings of n bytes in all costs the budget. */
size_t vigil_proc_entry_bytes(size_t n);
void vigil_proc_cache_free(struct vigil_proc_cache *c);
struct vigil_proc_entry *vigil_proc_cache_get(struct vigil_proc_cache *c, uint32_t pid);
/* exec_ktime 0 matches any exec of pid. */
struct vigil_proc_entry *vigil_proc_cache_find(struct vigil_proc_cache *c, uint32_t pid,
					      uint64_t exec_ktime);
struct vigil_proc_entry *vigil_proc_cache_exec(struct vigil_proc_cache *c,
					      const struct vigil_exec *ev);
struct vigil_proc_entry *vigil_proc_cache_fork(struct vigil_proc_cache *c,
					      const struct vigil_fork *ev);
/* A process (known, or exited and still kept) whose exec was in the cgroup,
 * NULL if none: a walk of the whole cache, for rare lines only. */
const struct vigil_proc_entry *vigil_proc_cache_in_cgroup(const struct vigil_proc_cache *c,
							 uint64_t cgroup_id);
/* The process exited: kept a while for late events, then freed. */
void vigil_proc_cache_exited(struct vigil_proc_cache *c, uint32_t pid, uint64_t exec_ktime);

#endif
