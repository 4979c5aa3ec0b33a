/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy in force: the files it came from, and the rules compiled into
 * the pinned policy maps (docs/enforce-maps.md) that every enforcing program
 * reads. A new policy is read, checked and resolved against the system
 * (cgroups, namespaces) in full before any map changes; if anything is
 * wrong, the policy in force stays as it was.
 */
#ifndef VIGIL_RULE_MAPS_H
#define VIGIL_RULE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vigil/events.h>
#include <vigil/enforce_maps.h>
#include "policy_parse.h"

struct vigil_tamper_progs;

struct enforce_cgroup_bpf;
struct enforce_sockdestroy_bpf;
struct enforce_carried_bpf;
struct vigil_enforce_tc;
struct vigil_proc_rules;
struct vigil_filter_maps;

#define VIGIL_POLICY_FILES_MAX 32
#define VIGIL_POLICY_TC_MAX 32	/* interfaces the policy has attached */

struct vigil_policy_tc_at {
	char netns[256];
	char ifname[16];
};

struct vigil_policy_state {
	char pin_dir[256];
	struct enforce_cgroup_bpf *cg;	/* holds the policy maps and cgroup hooks */
	struct enforce_sockdestroy_bpf *sd;
	struct enforce_carried_bpf *carried;	/* agent/enforce/enforce_carried.c */
	struct vigil_proc_rules *proc;	/* exec and file rules: agent/enforce/proc_rules.c */
	bool carried_rescan;	/* a deny rule is in force: rescan now and then */
	int64_t carried_next;	/* when (CLOCK_MONOTONIC s) */
	uint32_t carried_found;	/* the send and receive hooks' finds, as last handled */
	int rules_fd, pol4_fd, pol6_fd, stats_fd, cgroup_fd;
	int redact_conf_fd, redact_keys_fd;	/* the exec programs' (core/redact_maps.h) */
	struct vigil_filter_maps *filters;	/* export filters: enforce/filter_maps.h */
	struct vigil_policy in_force;
	uint8_t slot[VIGIL_RULES_MAX];	/* rule i of in_force is rule id slot[i] */
	struct vigil_rule_stats base[VIGIL_RULES_MAX];	/* counted in slots it left */
	char *files[VIGIL_POLICY_FILES_MAX];	/* what --policy and load named */
	unsigned n_files;
	uint64_t ring_size;
	struct vigil_enforce_tc *tc;	/* opened when a rule first names an interface */
	struct vigil_policy_tc_at tc_at[VIGIL_POLICY_TC_MAX];
	unsigned n_tc;
};

/* Loads the policy maps (pinned in pin_dir, shared with every enforcing
 * object) and the cgroup hooks; attaches nothing. tamper: the tamper
 * programs, whose open checks the file rules' hooks take over while
 * attached (core/tamper.h); NULL: none. */
int vigil_policy_init(struct vigil_policy_state *s, const char *pin_dir, uint64_t ring_size,
		      struct vigil_tamper_progs *tamper);
/* Reads files (replacing the list in force) and makes them the policy in
 * force; on error nothing changes and err says why ("file:line:col: ..."). */
int vigil_policy_apply(struct vigil_policy_state *s, char *const *files, unsigned n, char *err,
		       size_t errlen);
/* Reads and resolves files as apply would, changing nothing: for a start
 * that must not touch the node when its policy is bad. */
int vigil_policy_check(char *const *files, unsigned n, char *err, size_t errlen);
/* Re-reads the files in force (SIGHUP). */
int vigil_policy_reload(struct vigil_policy_state *s, char *err, size_t errlen);
/* Re-reads the files in force but those named (each must be in force). */
int vigil_policy_unload(struct vigil_policy_state *s, char *const *drop, unsigned ndrop, char *err,
			size_t errlen);
/* The counters of rule pos of the policy in force (summed over the CPUs,
 * and over the slots the rule has had). */
int vigil_policy_rule_stats(struct vigil_policy_state *s, unsigned pos, struct vigil_rule_stats *sum);
void vigil_policy_close(struct vigil_policy_state *s);

/* agent/enforce/enforce_cgroup.c: cgroup hooks attached to the cgroups rules name. */
struct vigil_cgroup_ref {
	uint64_t id;
	uint32_t level;
	char path[512];	/* on the cgroup v2 mount */
};
/* Where cgroup v2 is mounted here, found at run time. */
int vigil_cgroup2_mount(char *out, size_t len);
/* Resolves a rule's cgroup (a path below the cgroup v2 mount, or an
 * absolute path on it). */
int vigil_cgroup_resolve(const char *path, struct vigil_cgroup_ref *out, char *err, size_t errlen);
/* Attaches the hooks to every cgroup in refs not attached yet (links pinned
 * as cgroup_<id>_<prog>). */
int vigil_cgroup_attach(struct vigil_policy_state *s, const struct vigil_cgroup_ref *refs, unsigned n);
/* Detaches them from every cgroup not in refs (removes its link pins). */
int vigil_cgroup_detach_others(struct vigil_policy_state *s, const struct vigil_cgroup_ref *refs,
			       unsigned n);

/* agent/enforce/rule_interfaces.c: TC on the interfaces rules name, in their namespaces. */
/* Each interface of r is there in each namespace r names. */
int vigil_policy_tc_check(const struct vigil_rule *r, char *err, size_t errlen);
/* Attaches the interfaces of p not attached yet. */
int vigil_policy_tc_attach(struct vigil_policy_state *s, const struct vigil_policy *p);
/* Where the attachments stood before a policy's attach, so that a policy
 * refused after it attached some takes them back (the links it made). */
struct vigil_policy_tc_mark {
	unsigned n_tc, n_at;
};
void vigil_policy_tc_mark(const struct vigil_policy_state *s, struct vigil_policy_tc_mark *m);
void vigil_policy_tc_rollback(struct vigil_policy_state *s, const struct vigil_policy_tc_mark *m);
/* Detaches the interfaces attached for an earlier policy that p does not
 * name; after p's rules are in force. */
void vigil_policy_tc_detach_others(struct vigil_policy_state *s, const struct vigil_policy *p);
void vigil_policy_tc_close(struct vigil_policy_state *s);

#endif
