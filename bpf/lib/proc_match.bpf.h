/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exec and file rules (vigil/proc_policy.h) matched against one exec or
 * open: the string tries first, for all rules at once (bit-parallel), then
 * the scalar selectors of the rules left, lowest id first. The first rule
 * that matches decides; nothing is reserved in the ring before that.
 */
#ifndef VIGIL_PROC_MATCH_BPF_H
#define VIGIL_PROC_MATCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>
#include <vigil/proc_policy.h>
#include "path.bpf.h"
#include "container_id.bpf.h"

struct pstr_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, VIGIL_PSTR_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct vigil_pstr_key));
	__uint(value_size, sizeof(struct vigil_pstr_set));
};

/* The tries: index (gen * VIGIL_PSTR_NUM + string) * 2 + rev. The agent
 * makes fresh tries for the generation it writes and puts them here. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2 * VIGIL_PSTR_NUM * 2);
	__type(key, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
	__array(values, struct pstr_trie);
} vigil_pstr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vigil_pstate);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pstate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct vigil_pconf);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pconf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * VIGIL_PRULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_prule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_prules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * VIGIL_PRULES_MAX);
	__type(key, __u32);
	__type(value, struct vigil_prule_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_prule_stats SEC(".maps");

/* Every outcome counted (enum vigil_pout), refusals included. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VIGIL_POUT_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vigil_pouts SEC(".maps");

/* One string of the hook: its bytes (path.bpf.h's buffer, the string at
 * buf + start), and whether it was read at all. */
struct pstr_val {
	char buf[VIGIL_PATH_BUF + VIGIL_NAME_MAX + 1];	/* + a key read in place */
	__u32 start, len;
	bool have, cut;
};

_Static_assert(sizeof(struct vigil_pstr_key) - sizeof(__u32) <= VIGIL_NAME_MAX + 1,
	       "a key read in place at the path's start ends within the buffer");

struct pmatch_scratch {
	struct pstr_val s[VIGIL_PSTR_NUM];
	struct vigil_pstr_key key;
	struct vigil_pbits fail;
	struct vigil_cid cid;
};

static __always_inline void pbits_or_andnot(struct vigil_pbits *fail, const struct vigil_pbits *need,
					    const struct vigil_pbits *hit, bool positive)
{
	/* A positive operator fails the rules that need it and were not hit;
	 * a negative one those that were. */
	if (positive) {
		fail->w[0] |= need->w[0] & ~hit->w[0];
		fail->w[1] |= need->w[1] & ~hit->w[1];
	} else {
		fail->w[0] |= need->w[0] & hit->w[0];
		fail->w[1] |= need->w[1] & hit->w[1];
	}
}

struct rev_ctx {
	struct pmatch_scratch *m;
	const char *buf;	/* the string's buffer */
	__u32 last;		/* the offset of its last byte */
	__u32 n;		/* the bytes to reverse */
};

/* REV_STEP bytes a call: with 128 postfix rules, 8 bytes a call took a
 * miss from 563-600 to 314-323 ns a run here (docs/policy.md). */
#define REV_STEP 8

static long rev_step(__u32 k, struct rev_ctx *r)
{
#pragma unroll
	for (__u32 j = 0; j < REV_STEP; j++) {
		__u32 i = k * REV_STEP + j;

		if (i >= r->n)
			break;
		r->m->key.s[i & (VIGIL_PSTR_MAX - 1)] = r->buf[(r->last - i) & VIGIL_PATH_MASK];
	}
	return 0;
}

/* Looks string which of the hook up in the tries of generation gen and
 * adds to m->fail the rules it fails. */
static __always_inline void pstr_match(struct pmatch_scratch *m, const struct vigil_pconf *conf,
				       __u32 gen, __u32 which)
{
	struct pstr_val *v = &m->s[which & 3];
	struct vigil_pbits none = {};
	const struct vigil_pstr_set *fwd = NULL, *rev = NULL;
	__u32 n = v->len > VIGIL_PSTR_MAX ? VIGIL_PSTR_MAX : v->len;
	__u32 idx = (gen * VIGIL_PSTR_NUM + which) * 2;
	const struct vigil_pbits *need = conf->need[which & 3];
	void *trie;

	if (which >= VIGIL_PSTR_NUM)
		return;
	if (v->have && n) {
		trie = bpf_map_lookup_elem(&vigil_pstr, &idx);
		m->key.prefixlen = n * 8;	/* the reversed key's too */
		if (trie) {
			__u32 at = v->start & VIGIL_PATH_MASK;

			/* The key where the string already is: its prefix length
			 * in the 4 bytes before it (left of the path: free), its
			 * bytes the string's; past n bytes the trie reads none.
			 * A copy into m->key would be a helper call. */
			if (at >= sizeof(__u32)) {
				*(__u32 *)(v->buf + at - sizeof(__u32)) = n * 8;
				fwd = bpf_map_lookup_elem(trie, v->buf + at - sizeof(__u32));
			} else {
				bpf_probe_read_kernel(m->key.s, n & (2 * VIGIL_PSTR_MAX - 1),
						      v->buf + at);
				fwd = bpf_map_lookup_elem(trie, &m->key);
			}
		}
		idx++;
		trie = (need[VIGIL_OP_POSTFIX].w[0] | need[VIGIL_OP_POSTFIX].w[1] |
			need[VIGIL_OP_NOT_POSTFIX].w[0] | need[VIGIL_OP_NOT_POSTFIX].w[1]) ?
			bpf_map_lookup_elem(&vigil_pstr, &idx) : NULL;
		if (trie) {
			struct rev_ctx r = {
				.m = m, .buf = v->buf, .last = v->start + v->len - 1, .n = n,
			};

			bpf_loop((n + REV_STEP - 1) / REV_STEP, rev_step, &r, 0);
			rev = bpf_map_lookup_elem(trie, &m->key);
		}
	}
	bool eq = fwd && fwd->len == v->len;

	pbits_or_andnot(&m->fail, &need[VIGIL_OP_EQ], eq ? &fwd->op[0] : &none, true);
	pbits_or_andnot(&m->fail, &need[VIGIL_OP_NOT_EQ], eq ? &fwd->op[1] : &none, false);
	pbits_or_andnot(&m->fail, &need[VIGIL_OP_PREFIX], fwd ? &fwd->op[2] : &none, true);
	pbits_or_andnot(&m->fail, &need[VIGIL_OP_NOT_PREFIX], fwd ? &fwd->op[3] : &none, false);
	pbits_or_andnot(&m->fail, &need[VIGIL_OP_POSTFIX], rev ? &rev->op[2] : &none, true);
	pbits_or_andnot(&m->fail, &need[VIGIL_OP_NOT_POSTFIX], rev ? &rev->op[3] : &none, false);
}

/* The path p into v, as a task whose root is root sees it; typed: p's
 * pointers are BTF-typed (path.bpf.h walks those with loads). */
static __always_inline void pstr_of_path(struct pstr_val *v, const struct path *p,
					 const struct path *root, const bool typed)
{
	bool cut = false;

	v->have = false;
	v->len = 0;
	v->cut = false;
	if (!p->dentry || !root->dentry)
		return;
	v->len = vigil_path_build(v->buf, p, root, &v->start, &cut, typed);
	v->cut = cut;
	v->have = true;
}

/* The container id of t's cgroup into its string, when it names one. */
static __always_inline void pstr_of_container(struct pmatch_scratch *m, struct task_struct *t)
{
	struct pstr_val *v = &m->s[VIGIL_PSTR_CONTAINER];

	v->start = 0;
	v->len = VIGIL_CID_LEN;
	v->cut = false;
	v->have = vigil_container_id(t, v->buf + VIGIL_CID_NAME, &m->cid);
	if (v->have)
		__builtin_memcpy(v->buf, m->cid.id, VIGIL_CID_LEN);
}

/* The path of a file into v. */
static __always_inline void pstr_of_file(struct pstr_val *v, struct file *f, const struct path *root)
{
	struct path p = {};

	if (f)
		BPF_CORE_READ_INTO(&p, f, f_path);
	pstr_of_path(v, &p, root, false);
}

/* What the task t is, for the scalar selectors. */
struct ptask {
	__u32 uid, euid;
	__u32 ns_host;	/* enum vigil_pns: those that are the host's */
	struct task_struct *t;
};

static __always_inline void ptask_fill(struct ptask *pt, struct task_struct *t)
{
	struct task_struct *init;
	struct nsproxy *nsp, *h;

	pt->t = t;
	pt->uid = BPF_CORE_READ(t, real_cred, uid.val);
	pt->euid = BPF_CORE_READ(t, real_cred, euid.val);
	pt->ns_host = 0;
	if (!BPF_CORE_READ(t, thread_pid, level))
		pt->ns_host |= VIGIL_PNS_PID;
	init = BPF_CORE_READ(t, thread_pid, numbers[0].ns, child_reaper);
	nsp = BPF_CORE_READ(t, nsproxy);
	h = BPF_CORE_READ(init, nsproxy);
	if (!nsp || !h)
		return;
	if (BPF_CORE_READ(nsp, mnt_ns, ns.inum) == BPF_CORE_READ(h, mnt_ns, ns.inum))
		pt->ns_host |= VIGIL_PNS_MNT;
	if (BPF_CORE_READ(nsp, net_ns, ns.inum) == BPF_CORE_READ(h, net_ns, ns.inum))
		pt->ns_host |= VIGIL_PNS_NET;
}

/* Is t in the cgroup (id at level) or below it? */
static __always_inline bool ptask_in_cgroup(struct task_struct *t, __u64 id, __u32 level)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	struct cgroup *anc;

	if (!cg || BPF_CORE_READ(cg, level) < (int)level)
		return false;
	anc = BPF_CORE_READ(cg, ancestors[level & 255]);
	return anc && BPF_CORE_READ(anc, kn, id) == id;
}

struct pfind {
	__u32 gen;
	__u32 intent;		/* the open's; any for exec */
	struct vigil_pbits cand;
	struct ptask *pt;
	__u32 found;		/* the rule id, or VIGIL_PRULES_MAX */
};

static long pfind_step(__u32 i, struct pfind *f)
{
	struct vigil_prule *r;
	__u32 key;

	if (!(f->cand.w[(i >> 6) & 1] & (1ull << (i & 63))))
		return 0;
	key = f->gen * VIGIL_PRULES_MAX + (i & (VIGIL_PRULES_MAX - 1));
	r = bpf_map_lookup_elem(&vigil_prules, &key);
	if (!r || !(r->flags & VIGIL_PRULE_ACTIVE))
		return 0;
	if (r->intent && !(r->intent & f->intent))
		return 0;
	if ((r->flags & VIGIL_PRULE_UID) && (f->pt->uid < r->uid_lo || f->pt->uid > r->uid_hi))
		return 0;
	if ((r->flags & VIGIL_PRULE_EUID) && (f->pt->euid < r->euid_lo || f->pt->euid > r->euid_hi))
		return 0;
	if ((f->pt->ns_host & r->ns_mask) != r->ns_host)
		return 0;
	if ((r->flags & VIGIL_PRULE_CGROUP) &&
	    !ptask_in_cgroup(f->pt->t, r->cgroup_id, r->cgroup_level))
		return 0;
	f->found = i;
	return 1;
}

#endif
