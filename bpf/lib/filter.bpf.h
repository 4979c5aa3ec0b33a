/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Export filters (vigil/filter.h), asked before an event takes a sequence
 * number or ring space: a filtered event is no gap in seq and no loss, only
 * one count in vigil_filter_hits for the filter that dropped it.
 *
 * What is asked of an event is what its record already holds (the
 * struct vigil_proc of its subject) plus its network namespace; the
 * binary is a bit per filter kept per process (vigil_filter_procs),
 * decided at exec: nothing here builds a string. Every filter is matched
 * at once, as bits: one lookup per selector in use, no loop over filters
 * (a loop's frame would not fit on net_state's stack). With no filter
 * naming the kind, the cost is one array lookup.
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
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VIGIL_FILTER_KEYS);
	__type(key, struct vigil_filter_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_filter_keys SEC(".maps");

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

/* The network programs' lookup key (vigil_filtered_owner). busy: one is
 * in use on this CPU; a program that interrupts its user keeps its event
 * unasked rather than overwrite the key. */
struct vigil_filter_scratch {
	struct vigil_filter_key k;
	__u32 busy;
	__u32 match;	/* the filters still matching */
	__u32 drop_unallowed;	/* an allow filter names the kind */
	__u32 pid;	/* the subject's, as a map key: 6.1 takes no key in a
			 * global function's argument (PTR_TO_MEM) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_filter_scratch);
} vigil_filter_net_key SEC(".maps");

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
	/* Keeps the mask in the program: clang drops it after the clamp
	 * above, and 6.1's verifier cannot follow that proof. */
	barrier_var(n);
	if (bpf_probe_read_kernel(k->s, n & 255, path))
		return 0;
	v = bpf_map_lookup_elem(&vigil_filter_bin, k);
	if (!v)
		return 0;
	return v->prefix | (v->len == len ? v->exact : 0);
}

/* Decides, at exec, which filters the binary at path matches, for both
 * generations that have binary selectors, and keeps it for the process's
 * later events. */
static __always_inline void vigil_filter_exec(__u32 tgid, const char *path, __u32 len, __u32 slot)
{
	__u32 zero = 0;
	struct vigil_filter_conf *c = bpf_map_lookup_elem(&vigil_filter_conf, &zero);
	struct vigil_filter_proc fp = {};

	/* No binary filter: nothing kept, nothing cleared (bits left from
	 * an earlier set are not read, and the scan rewrites them all before
	 * a set with binaries is put in force). One lookup per exec. */
	if (!c || !(c->set[0].binary | c->set[1].binary))
		return;
	if (c->set[0].binary)
		fp.bits[0] = vigil_filter_bin_bits(path, len, 0, slot);
	if (c->set[1].binary)
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

/* What a filter may ask of a process event's subject: what its record
 * says (pid, uid, cgroup_id of p), its cgroup and its network namespace. */
struct vigil_filter_subject {
	struct vigil_proc p;
	struct cgroup *cg;	/* NULL: only p.cgroup_id is known */
	__u32 netns;	/* network namespace inode; 0 unknown */
	__u32 pad;	/* no hole: a global function reads the whole struct */
};

/* Does some filter in force name kind (enum vigil_filter_kind)? Lets a
 * caller skip gathering the subject when none does. */
static __always_inline bool vigil_filter_on(__u32 kind)
{
	__u32 zero = 0;
	struct vigil_filter_conf *c = bpf_map_lookup_elem(&vigil_filter_conf, &zero);

	return c && (c->set[c->gen & 1].kinds & (1u << kind));
}

/* The filters of generation k->gen naming k->what = value. */
static __always_inline __u32 vigil_filter_bits(struct vigil_filter_key *k, __u32 what, __u64 value)
{
	__u32 *bits;

	k->what = what;
	k->value = value;
	bits = bpf_map_lookup_elem(&vigil_filter_keys, k);
	return bits ? *bits : 0;
}

struct vigil_filter_walk {
	struct cgroup *cg;
	__u32 gen, level, bits;
};

static long vigil_filter_cgroup_step(__u32 l, struct vigil_filter_walk *w)
{
	struct vigil_filter_key k = { .gen = w->gen };
	struct cgroup *cg = w->cg, *anc;	/* not w->cg in the macro: CO-RE */

	if (l > w->level)
		return 1;
	anc = BPF_CORE_READ(cg, ancestors[l & 255]);
	if (anc)
		w->bits |= vigil_filter_bits(&k, VIGIL_FILTER_BY_CGROUP, BPF_CORE_READ(anc, kn, id));
	return 0;
}

/* The filters naming the subject's cgroup or one above it: its ancestors
 * are walked when cg is known, else only its own id is. */
static __always_inline __u32 vigil_filter_cgroup_bits(struct vigil_filter_key *k, __u64 id,
						      struct cgroup *cg)
{
	struct vigil_filter_walk w = { .cg = cg, .gen = k->gen };

	if (!cg)
		return vigil_filter_bits(k, VIGIL_FILTER_BY_CGROUP, id);
	w.level = BPF_CORE_READ(cg, level);
	bpf_loop(VIGIL_FILTER_CGROUP_DEPTH, vigil_filter_cgroup_step, &w, 0);
	return w.bits;
}

/* The lowest filter id in bits (not 0). BPF has no ctz, and a table
 * would take stack. */
static __always_inline __u32 vigil_filter_lowest(__u32 bits)
{
	__u32 x = bits & -bits, n = 0;

	n += x & 0xffff0000u ? 16 : 0;
	n += x & 0xff00ff00u ? 8 : 0;
	n += x & 0xf0f0f0f0u ? 4 : 0;
	n += x & 0xccccccccu ? 2 : 0;
	n += x & 0xaaaaaaaau ? 1 : 0;
	return n;
}

/* The decision, and its count: the lowest deny filter that matches drops
 * the event; else, when an allow filter names its kind, it is dropped
 * unless one of those matches ("not_allowed"). What it works on lives in
 * w, not in locals: net_state leaves this frame 32 bytes of stack, and
 * locals would be spilled there. */
static __always_inline int vigil_filter_decide(struct vigil_filter_scratch *w, __u32 kind,
					       const struct vigil_proc *p, struct cgroup *cg,
					       __u32 netns)
{
	struct vigil_filter_conf *c;
	struct vigil_filter_proc *fp;
	__u64 *hits;

	w->k.gen = 0;
	c = bpf_map_lookup_elem(&vigil_filter_conf, &w->k.gen);
	if (!c || kind >= VIGIL_FK_NUM)
		return 0;
	w->k.gen = c->gen & 1;
#define SET(f) (w->k.gen ? c->set[1].f : c->set[0].f)
	if (!(SET(kinds) & (1u << kind)))
		return 0;	/* the common case: one lookup */
	w->match = SET(by_kind[kind & 7]);
	w->drop_unallowed = SET(allow_kinds) & (1u << kind);
	if (w->match & SET(binary)) {
		w->pid = p->pid;
		fp = bpf_map_lookup_elem(&vigil_filter_procs, &w->pid);
		w->match &= ~SET(binary) | (fp ? (w->k.gen ? fp->bits[1] : fp->bits[0]) : 0);
	}
	if (w->match & SET(uid))
		w->match &= ~SET(uid) | vigil_filter_bits(&w->k, VIGIL_FILTER_BY_UID, p->uid);
	if (w->match & SET(netns))
		w->match &= ~SET(netns) |
			    (netns ? vigil_filter_bits(&w->k, VIGIL_FILTER_BY_NETNS, netns) : 0);
	if (w->match & SET(cgroup))
		w->match &= ~SET(cgroup) | vigil_filter_cgroup_bits(&w->k, p->cgroup_id, cg);
	if (w->match & ~SET(allow))
		w->k.what = vigil_filter_lowest(w->match & ~SET(allow));
	else if (w->drop_unallowed && !(w->match & SET(allow)))
		w->k.what = VIGIL_FILTER_NOT_ALLOWED;
	else
		return 0;
#undef SET
	w->k.what += w->k.gen * VIGIL_FILTER_SLOTS;
	hits = bpf_map_lookup_elem(&vigil_filter_hits, &w->k.what);
	if (hits)
		*hits += 1;	/* per CPU */
	return 1;
}

/* The subject of a process event: the task itself. */
static __always_inline void vigil_filter_subject_task(struct vigil_filter_subject *sub,
						      struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);

	__builtin_memset(sub, 0, sizeof(*sub));
	sub->p.pid = BPF_CORE_READ(t, tgid);
	sub->p.uid = BPF_CORE_READ(t, real_cred, uid.val);
	/* Not sub->cg in the macro: CO-RE would relocate our own struct. */
	sub->cg = cg;
	sub->p.cgroup_id = BPF_CORE_READ(cg, kn, id);
	sub->netns = BPF_CORE_READ(t, nsproxy, net_ns, ns.inum);
}

/* Should the process event of kind (enum vigil_filter_kind) about subject
 * p be dropped? Counted if so. An unknown field matches no selector that
 * asks for it. Global functions, here and below, so the verifier checks
 * the loop once and not at each place a program asks. */
__noinline int vigil_filtered(__u32 kind, const struct vigil_filter_subject *p)
{
	struct vigil_filter_scratch w = {};

	if (!p)
		return 0;
	return vigil_filter_decide(&w, kind, &p->p, p->cg, p->netns);
}

/* The same for a network event, whose subject is its socket's owner as
 * recorded (these hooks often run in softirq, where current is not the
 * subject), in the socket's namespace netns (0: unknown). A cgroup
 * selector matches the owner's own cgroup only, not those below it: the
 * walk up its ancestors would not fit on net_state's stack, which leaves
 * this frame 32 bytes; the lookup key is per CPU for the same reason. */
__noinline int vigil_filtered_owner(__u32 kind, const struct vigil_proc *owner, __u32 netns)
{
	__u32 zero = 0;
	struct vigil_filter_scratch *s = bpf_map_lookup_elem(&vigil_filter_net_key, &zero);
	int drop;

	if (!owner || !s || s->busy)
		return 0;	/* interrupted a user of the key: keep the event */
	s->busy = 1;
	drop = vigil_filter_decide(s, kind, owner, NULL, netns);
	s->busy = 0;
	return drop;
}

#endif
