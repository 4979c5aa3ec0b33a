/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Export filters (vigil/filter.h), asked before an event takes a sequence
 * number or ring space: a filtered event is no gap in seq and no loss, only
 * one count in vigil_filter_hits for the filter that dropped it.
 *
 * What is asked of an event is what its record already holds (the
 * struct vigil_proc of its subject) plus its network namespace; the
 * binary is a bit per filter kept per process (vigil_filter_procs),
 * decided at exec: nothing here builds a string. With no filter naming the
 * kind, the cost is one array lookup.
 */
#ifndef VIGIL_FILTER_BPF_H
#define VIGIL_FILTER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>
#include <vigil/filter.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_filter_conf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filter_conf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * VIGIL_FILTERS_MAX);
	__type(key, __u32);
	__type(value, struct vigil_filter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VIGIL_FILTER_BIN_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct vigil_filter_bin_key));
	__uint(value_size, sizeof(struct vigil_filter_bin));
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filter_bin SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tgid */
	__type(value, struct vigil_filter_proc);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filter_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * VIGIL_FILTER_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filter_hits SEC(".maps");

/* LPM keys are too big for the stack. Slot 0 for tracepoints, 1 for the
 * agent's scan (an iterator, which an exec on its CPU may preempt). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct vigil_filter_bin_key);
} vigil_filter_key SEC(".maps");

/* Which filters of generation gen a binary path (kernel memory, len bytes)
 * matches; slot: which key scratch (see vigil_filter_key). */
static __always_inline __u32 vigil_filter_bin_bits(const char *path, __u32 len, __u32 gen,
						   __u32 slot)
{
	struct vigil_filter_bin_key *k = bpf_map_lookup_elem(&vigil_filter_key, &slot);
	struct vigil_filter_bin *v;
	__u32 n = len > VIGIL_FILTER_BIN_MAX ? VIGIL_FILTER_BIN_MAX : len;	/* longer: its start */

	if (!k || !n)
		return 0;
	k->gen = gen;
	k->prefixlen = 8 + n * 8;
	if (bpf_probe_read_kernel(k->s, n & 255, path))
		return 0;
	v = bpf_map_lookup_elem(&vigil_filter_bin, k);
	if (!v)
		return 0;
	return v->prefix | (v->len == len ? v->exact : 0);
}

/* Decides, at exec, which filters the binary at path matches, for both
 * generations that have binary selectors, and keeps it for the process's
 * later events. Only when some filter names a binary: otherwise nothing is
 * kept (and nothing looked up). */
static __always_inline void vigil_filter_exec(__u32 tgid, const char *path, __u32 len, __u32 slot)
{
	__u32 zero = 0;
	struct vigil_filter_conf *c = bpf_map_lookup_elem(&vigil_filter_conf, &zero);
	struct vigil_filter_proc fp = {};

	if (!c || !(c->binary[0] | c->binary[1])) {
		bpf_map_delete_elem(&vigil_filter_procs, &tgid);
		return;
	}
	if (c->binary[0])
		fp.bits[0] = vigil_filter_bin_bits(path, len, 0, slot);
	if (c->binary[1])
		fp.bits[1] = vigil_filter_bin_bits(path, len, 1, slot);
	bpf_map_update_elem(&vigil_filter_procs, &tgid, &fp, BPF_ANY);
}

/* A child runs its parent's binary until it execs. */
static __always_inline void vigil_filter_fork(__u32 parent, __u32 child)
{
	struct vigil_filter_proc *fp = bpf_map_lookup_elem(&vigil_filter_procs, &parent);

	if (fp)
		bpf_map_update_elem(&vigil_filter_procs, &child, fp, BPF_ANY);
}

static __always_inline void vigil_filter_exit(__u32 tgid)
{
	bpf_map_delete_elem(&vigil_filter_procs, &tgid);
}

/* Is cgroup cg the cgroup at level with id want, or below it? */
static __always_inline bool vigil_filter_in_cgroup(struct cgroup *cg, __u64 want, __u32 level)
{
	struct cgroup *anc;

	if (!cg || BPF_CORE_READ(cg, level) < (int)level)
		return false;
	anc = BPF_CORE_READ(cg, ancestors[level & 255]);
	return anc && BPF_CORE_READ(anc, kn, id) == want;
}

/* What a filter may ask of an event's subject. */
struct vigil_filter_subject {
	__u32 pid;	/* tgid */
	__u32 uid;	/* real uid, as struct vigil_proc's */
	__u64 cgroup_id;
	struct cgroup *cg;	/* its cgroup, for "or below"; NULL: only cgroup_id is known */
	__u32 netns;	/* network namespace inode; 0 unknown */
};

struct vigil_filter_ask {
	const struct vigil_filter_subject *p;
	__u32 gen, kind, bin;
	__u32 deny;	/* the first deny filter that matched, or VIGIL_FILTERS_MAX */
	bool allowed;	/* an allow filter matched */
};

static long vigil_filter_step(__u32 i, struct vigil_filter_ask *a)
{
	__u32 key = a->gen * VIGIL_FILTERS_MAX + (i & (VIGIL_FILTERS_MAX - 1));
	struct vigil_filter *f = bpf_map_lookup_elem(&vigil_filters, &key);
	__u32 fl;

	if (!f || !(f->kinds & (1u << a->kind)))
		return 0;
	fl = f->flags;
	if ((fl & VIGIL_FILTER_UID) && (a->p->uid < f->uid_lo || a->p->uid > f->uid_hi))
		return 0;
	if ((fl & VIGIL_FILTER_BINARY) && !(a->bin & (1u << (i & 31))))
		return 0;
	if ((fl & VIGIL_FILTER_NETNS) && a->p->netns != f->netns_ino)
		return 0;
	if ((fl & VIGIL_FILTER_CGROUP) &&
	    !(a->p->cg ? vigil_filter_in_cgroup(a->p->cg, f->cgroup_id, f->cgroup_level)
		       : a->p->cgroup_id == f->cgroup_id))
		return 0;
	if (fl & VIGIL_FILTER_ALLOW) {
		a->allowed = true;
		return 0;	/* a deny filter later in the list still drops it */
	}
	a->deny = i;
	return 1;
}

/* Does some filter in force name kind (enum vigil_filter_kind)? Lets a
 * caller skip gathering the subject when none does. */
static __always_inline bool vigil_filter_on(__u32 kind)
{
	__u32 zero = 0;
	struct vigil_filter_conf *c = bpf_map_lookup_elem(&vigil_filter_conf, &zero);

	return c && (c->kinds[c->gen & 1] & (1u << kind));
}

/* The subject of a network event: the socket's owner, and the socket's
 * namespace (sk NULL: unknown). Its cgroup's ancestors are known only when
 * the owner is the current process (not in softirq): otherwise a cgroup
 * selector matches the owner's own cgroup only, not those below. */
static __always_inline void vigil_filter_subject_of(struct vigil_filter_subject *sub,
						    const struct vigil_proc *p,
						    const struct sock *sk)
{
	struct task_struct *cur = bpf_get_current_task_btf();

	sub->pid = p->pid;
	sub->uid = p->uid;
	sub->cgroup_id = p->cgroup_id;
	sub->cg = NULL;
	if (cur->tgid == p->pid) {
		struct cgroup *cg = cur->cgroups->dfl_cgrp;

		if (cg->kn->id == p->cgroup_id)
			sub->cg = cg;
	}
	sub->netns = sk ? BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) : 0;
}

/* The subject of a process event: the task itself. */
static __always_inline void vigil_filter_subject_task(struct vigil_filter_subject *sub,
						      struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);

	sub->pid = BPF_CORE_READ(t, tgid);
	sub->uid = BPF_CORE_READ(t, real_cred, uid.val);
	/* Not sub->cg in the macro: CO-RE would relocate our own struct. */
	sub->cg = cg;
	sub->cgroup_id = BPF_CORE_READ(cg, kn, id);
	sub->netns = BPF_CORE_READ(t, nsproxy, net_ns, ns.inum);
}

/* Should the event of kind (enum vigil_filter_kind) about subject p be
 * dropped? Counted if so. An unknown field matches no selector that asks
 * for it. */
static __always_inline bool vigil_filtered(__u32 kind, const struct vigil_filter_subject *p)
{
	__u32 zero = 0, slot;
	struct vigil_filter_conf *c = bpf_map_lookup_elem(&vigil_filter_conf, &zero);
	struct vigil_filter_ask a = { .p = p, .kind = kind, .deny = VIGIL_FILTERS_MAX };
	struct vigil_filter_proc *fp;
	__u32 n;
	__u64 *hits;

	if (!c)
		return false;
	a.gen = c->gen & 1;
	if (!(c->kinds[a.gen] & (1u << kind)))
		return false;	/* the common case: one lookup */
	if (c->binary[a.gen]) {
		fp = bpf_map_lookup_elem(&vigil_filter_procs, &p->pid);
		a.bin = fp ? fp->bits[a.gen] : 0;
	}
	n = c->n[a.gen];
	if (n > VIGIL_FILTERS_MAX)
		n = VIGIL_FILTERS_MAX;
	bpf_loop(n, vigil_filter_step, &a, 0);
	if (a.deny < VIGIL_FILTERS_MAX)
		slot = a.deny;
	else if ((c->allow_kinds[a.gen] & (1u << kind)) && !a.allowed)
		slot = VIGIL_FILTER_NOT_ALLOWED;
	else
		return false;
	slot += a.gen * VIGIL_FILTER_SLOTS;
	hits = bpf_map_lookup_elem(&vigil_filter_hits, &slot);
	if (hits)
		*hits += 1;	/* per CPU */
	return true;
}

#endif
