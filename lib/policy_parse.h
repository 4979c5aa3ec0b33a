/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Network policy files (YAML, docs/policy.md) read into rules. This file
 * only reads and checks: a file is taken whole or refused whole, with the
 * file, line and column of the first thing wrong. Turning rules into BPF
 * maps is the agent's (agent/enforce/rule_maps.c); nothing here touches the kernel.
 */
#ifndef VIGIL_POLICY_PARSE_H
#define VIGIL_POLICY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vigil/events.h>
#include <vigil/proc_policy.h>
#include <vigil/filter.h>
#include "redact.h"

/* Actions and directions are the BPF side's (enum vigil_action, enum
 * vigil_dir in vigil/enforce_events.h): one definition for both sides. */

/* An address block; family AF_INET or AF_INET6, addr in network order,
 * host bits zero (the parser refuses a block with host bits set). */
struct vigil_cidr {
	uint8_t family;
	uint8_t prefix;
	uint8_t addr[16];
};

#define VIGIL_RULE_NAME_MAX 64

struct vigil_rule {
	char name[VIGIL_RULE_NAME_MAX];	/* given, or "<file>:<line>" */
	uint8_t action;		/* enum vigil_action */
	uint8_t direction;	/* enum vigil_dir */
	uint8_t protocol;	/* IPPROTO_TCP, IPPROTO_UDP, 0 for any */
	uint16_t port_lo, port_hi;	/* remote port for egress, local for ingress; 0-65535 any */
	struct vigil_cidr *cidrs;	/* none: any address */
	unsigned n_cidrs;
	char **interfaces;	/* none: every interface the agent enforces on */
	unsigned n_interfaces;
	char **netns;		/* names under /run/netns, or paths; none: see docs */
	unsigned n_netns;
	char *cgroup;		/* cgroup v2 path for deny/reject of local processes */
	const char *file;	/* the vigil_policy's copy of the file name */
	unsigned line;
};

/* The strings of one selector ('binary', 'parent_binary', 'path'), by
 * operator (enum vigil_pstr_op): each list ANDed with the others. */
struct vigil_pstr_sel {
	char **vals[VIGIL_OP_NUM];
	unsigned n[VIGIL_OP_NUM];
};

/* An exec or file rule (docs/policy.md, "Process and file rules"). */
struct vigil_prule_spec {
	char name[VIGIL_RULE_NAME_MAX];
	uint8_t action;		/* post, nopost, signal, sigkill */
	uint8_t signal;		/* signal's N; 9 for sigkill */
	bool monitor;		/* its file's mode: monitor */
	uint32_t verbs;		/* bits (1 << enum vigil_verb): all exec, or all file */
	uint32_t intent;	/* enum vigil_intent, any of them; 0 any */
	struct vigil_pstr_sel str[VIGIL_PSTR_NUM];
	bool has_uid, has_euid;
	uint32_t uid_lo, uid_hi, euid_lo, euid_hi;
	uint32_t ns_mask, ns_host;	/* enum vigil_pns */
	char *cgroup;
	const char *file;
	unsigned line;
};

/* An export filter (docs/policy.md, "Filters"): the events of its kinds
 * whose subject matches every selector given (each list: any of its
 * values) are dropped (deny), or are the only ones of those kinds kept
 * (allow). */
struct vigil_filter_spec {
	char name[VIGIL_RULE_NAME_MAX];	/* given, or "<file>:<line>" */
	bool allow;
	uint32_t kinds;		/* bits (1 << enum vigil_filter_kind) */
	bool has_uid;
	uint32_t uid_lo, uid_hi;
	char **binary, **binary_prefix;	/* paths as the process sees them */
	unsigned n_binary, n_binary_prefix;
	char *cgroup;		/* cgroup v2 path: that cgroup and below */
	char *netns;		/* a name under /run/netns, or a path */
	const char *file;
	unsigned line;
};

struct vigil_policy {
	struct vigil_rule *rules;
	unsigned n_rules;
	struct vigil_prule_spec *prules;	/* exec and file rules, in file order */
	unsigned n_prules;
	char **files;		/* every file the rules came from, in load order */
	unsigned n_files;
	struct vigil_redact_policy *redact;	/* a file's `redact:`; NULL: the defaults */
	struct vigil_filter_spec *filters;	/* every file's `filters:`, in load order */
	unsigned n_filters;
};

/* Reads path and appends its rules to p. On any error p is left as it was
 * and err holds "file:line:column: what is wrong", never the file's text;
 * returns -EINVAL (bad content) or -errno (unreadable, or refused: not a
 * regular file, a symbolic link, not root's, writable by group or others,
 * over 1 MiB). Bounded in cost (size, depth and values), so the agent can
 * read a file on its event loop. */
int vigil_policy_add_file(struct vigil_policy *p, const char *path, char *err, size_t errlen);
/* The same for text already read (its checks of the file aside), named
 * path in p and in errors: what add_file does once it has the bytes. */
int vigil_policy_add_text(struct vigil_policy *p, const char *path, const unsigned char *text,
			  size_t len, char *err, size_t errlen);
void vigil_policy_free(struct vigil_policy *p);

/* Would rule r refuse the agent's own traffic to peer (an address
 * vigild streams to, socket type SOCK_STREAM or SOCK_DGRAM)? A refusing
 * rule matching it going out, or its replies coming in (to vigild's
 * ephemeral port: a rule whose ports meet ip_local_port_range). Rules
 * scoped to a cgroup are the caller's to weigh (vigild may not be in it). */
struct sockaddr_storage;
bool vigil_rule_covers_peer(const struct vigil_rule *r, const struct sockaddr_storage *peer,
			    int socktype);

const char *vigil_policy_action_name(unsigned action);
const char *vigil_verb_name(unsigned verb);
const char *vigil_filter_kind_name(unsigned kind);	/* enum vigil_filter_kind */	/* "exec", "openat", ... */
const char *vigil_policy_dir_name(unsigned dir);
const char *vigil_policy_proto_name(unsigned proto);
/* "10.0.0.0/8", "2001:db8::/32" */
void vigil_cidr_format(const struct vigil_cidr *c, char *out, size_t len);

#endif
