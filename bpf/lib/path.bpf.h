/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Builds a path from a (dentry, vfsmount) pair by walking dentries and mounts
 * up to a root, as d_path does: bpf_d_path is refused in tracepoint programs
 * on this kernel. The walk is a bpf_loop, so its cost to the verifier does
 * not grow with the depth we allow.
 *
 * The path is written backwards into the end of a caller's buffer of
 * VIGIL_PATH_BUF bytes; the result starts at buf + pos.
 */
#ifndef VIGIL_PATH_BPF_H
#define VIGIL_PATH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>
#include "loop.bpf.h"

#define VIGIL_PATH_BUF VIGIL_PATH_MAX	/* power of two: offsets are masked */
#define VIGIL_PATH_MASK (VIGIL_PATH_BUF - 1)
#define VIGIL_NAME_MAX 255
#define VIGIL_PATH_DEPTH 64

/* A component costs one kernel read, not three: the dentry's bytes from
 * d_parent on, read at once, hold its parent, its name's length and
 * pointer and, for a short name, the name itself (d_iname, 32 bytes on
 * 6.1; d_shortname, 40 on 6.14+: both end within the span). On this
 * machine a bpf_probe_read_kernel costs about 30 ns (docs/policy.md,
 * "What matching costs"), more than the rest of a step. */
#define VIGIL_DENTRY_SPAN 128	/* power of two: offsets in it are masked */
_Static_assert(VIGIL_DENTRY_SPAN + 8 <= VIGIL_NAME_MAX + 1, "the span fits past the path");

/* A mount's parent, mountpoint and root dentry, one read a mount. */
struct vigil_mount_link {
	struct mount *parent;
	struct dentry *mountpoint;
	struct dentry *root;
};

struct vigil_path_walk {
	/* VIGIL_PATH_BUF + VIGIL_NAME_MAX + 1 bytes: the path, then room for
	 * a name's masked offset; the walk reads each dentry's span there
	 * (a map value: the name is copied from it at any alignment, which
	 * the stack refuses). */
	char *buf;
	__u8 *span;	/* buf + VIGIL_PATH_BUF, VIGIL_DENTRY_SPAN + 8 bytes */
	struct dentry *dentry;
	struct mount *mnt;
	struct vigil_mount_link up;	/* mnt's */
	struct dentry *root_dentry;
	struct vfsmount *root_mnt;
	/* The typed walk's (vigil_path_step_typed): BTF-typed pointers. */
	struct dentry *tdentry;
	struct vfsmount *tvfs;
	struct dentry *tmnt_root;
	__u32 steps;	/* components the typed walk put */
	__u32 pos;
	bool truncated;
	bool done;
};

/* mnt's link into *l: in one read when the three fields lie together (they
 * do in struct mount of every kernel since 3.3), else one read each. */
static __always_inline void vigil_mount_load(struct vigil_mount_link *l, struct mount *mnt)
{
	__u32 o_par = bpf_core_field_offset(struct mount, mnt_parent);

	if (bpf_core_field_offset(struct mount, mnt_mountpoint) == o_par + 8 &&
	    bpf_core_field_offset(struct mount, mnt.mnt_root) == o_par + 16) {
		bpf_probe_read_kernel(l, sizeof(*l), (char *)mnt + o_par);
		return;
	}
	l->parent = BPF_CORE_READ(mnt, mnt_parent);
	l->mountpoint = BPF_CORE_READ(mnt, mnt_mountpoint);
	l->root = BPF_CORE_READ(mnt, mnt.mnt_root);
}

/* Copies a name of len bytes that ends at span[end] to buf, ending at pos,
 * 8 bytes a store from the end. The first store may write bytes before
 * the name (the dentry's bytes before it) to buf before pos - len: left
 * of the path, or overwritten by its next component. */
static __always_inline void vigil_name_copy(char *buf, __u32 pos, const __u8 *span, __u32 end,
					    __u32 len)
{
	for (int k = 1; k <= VIGIL_DENTRY_SPAN / 8; k++) {
		if ((__u32)(k - 1) * 8 >= len)
			break;
		*(__u64 *)(buf + ((pos - k * 8) & VIGIL_PATH_MASK)) =
			*(const __u64 *)(span + ((end - k * 8) & (VIGIL_DENTRY_SPAN - 1)));
	}
}

/* Puts the name of len bytes before the path in w: from w->span, ending
 * at span[end], when in_span, else read from the kernel at name; then the
 * '/'. False when it does not fit (the walk is cut). */
static __always_inline bool vigil_path_put(struct vigil_path_walk *w, __u64 name, __u32 len,
					   bool in_span, __u32 end)
{
	if (len > VIGIL_NAME_MAX)
		len = VIGIL_NAME_MAX;
	if (w->pos < len + 2) {	/* keep pos > 0: a length of VIGIL_PATH_BUF would mask to 0 */
		w->truncated = true;
		return false;
	}
	if (in_span && w->pos >= VIGIL_DENTRY_SPAN)
		vigil_name_copy(w->buf, w->pos, w->span, end, len);
	else {
		/* Keeps the mask in the program: clang drops it after the
		 * clamp above, and 6.1's verifier cannot follow that proof. */
		barrier_var(len);
		bpf_probe_read_kernel(w->buf + ((w->pos - len) & VIGIL_PATH_MASK),
				      len & VIGIL_NAME_MAX, (void *)name);
	}
	w->pos -= len + 1;
	w->buf[w->pos & VIGIL_PATH_MASK] = '/';
	return true;
}

static long vigil_path_step(__u32 i, struct vigil_path_walk *w)
{
	struct dentry *d = w->dentry, *parent;
	struct mount *mnt = w->mnt;
	struct vfsmount *vfsmnt = &mnt->mnt;
	__u32 o_par = bpf_core_field_offset(struct dentry, d_parent);
	__u32 o_name = bpf_core_field_offset(struct dentry, d_name) - o_par;
	__u64 base = (__u64)d + o_par, name;
	__u32 len;

	if (d == w->root_dentry && vfsmnt == w->root_mnt)
		goto done;
	if (o_name > VIGIL_DENTRY_SPAN - 16)
		goto done;	/* no kernel lays struct dentry out so */
	bpf_probe_read_kernel(w->span, VIGIL_DENTRY_SPAN, (void *)base);
	parent = *(struct dentry **)w->span;
	if (d == w->up.root || d == parent) {
		struct mount *up = w->up.parent;

		if (d != w->up.root || up == mnt)
			goto done;	/* the top of the mount tree */
		w->dentry = w->up.mountpoint;
		w->mnt = up;
		vigil_mount_load(&w->up, up);
		return 0;
	}
	len = *(__u32 *)(w->span + ((o_name + 4) & (VIGIL_DENTRY_SPAN - 1)));	/* qstr.len */
	name = *(__u64 *)(w->span + ((o_name + 8) & (VIGIL_DENTRY_SPAN - 1)));
	if (!vigil_path_put(w, name, len, name >= base && name + len <= base + VIGIL_DENTRY_SPAN,
			    name + len - base))
		goto done;
	w->dentry = parent;
	return 0;
done:
	w->done = true;
	return 1;
}

/* Linux before 6.14 names the inline name buffer d_iname. */
struct dentry___v61 {
	unsigned char d_iname[32];
} __attribute__((preserve_access_index));

#define VIGIL_INLINE_MAX 40	/* DNAME_INLINE_LEN on 6.14+; 32 before */

/* The walk's step when the dentries are BTF-typed pointers (a file taken
 * from a typed task's fd_array): their fields are plain loads, no helper
 * call, and so is a short name's bytes, from the dentry's inline buffer.
 * A mount to cross stops it: struct mount is reached from a vfsmount by
 * container_of, which a typed pointer cannot take, and vigil_path_step
 * goes on from w->tdentry. */
/* One component; 1 when the walk stops (done, or a mount to cross). */
static __always_inline long vigil_path_typed_one(struct vigil_path_walk *w)
{
	struct dentry *d = w->tdentry, *parent;
	__u32 o_in, n_in, len;
	__u64 name;

	if (d == w->root_dentry && w->tvfs == w->root_mnt)
		goto done;
	parent = d->d_parent;
	if (d == w->tmnt_root || d == parent)
		return 1;
	w->steps++;
	if (bpf_core_field_exists(struct dentry, d_shortname)) {
		o_in = bpf_core_field_offset(struct dentry, d_shortname);
		n_in = bpf_core_field_size(struct dentry, d_shortname);
	} else {
		o_in = bpf_core_field_offset(struct dentry___v61, d_iname);
		n_in = bpf_core_field_size(struct dentry___v61, d_iname);
	}
	len = d->d_name.len;
	name = (__u64)d->d_name.name;
	if (bpf_core_field_exists(d->d_shortname.words) && name == (__u64)d + o_in &&
	    len < n_in && n_in <= VIGIL_INLINE_MAX) {
		/* 6.14+: the inline name as words, stored from the name's
		 * start; the last store runs up to 7 bytes past it, over the
		 * '/' and what follows, which are put back. */
		__u32 pos = w->pos, dst = pos - len;
		__u64 keep;

		if (pos < len + 2) {
			w->truncated = true;
			goto done;
		}
		keep = *(__u64 *)(w->buf + (pos & VIGIL_PATH_MASK));
#pragma unroll
		for (int j = 0; j < VIGIL_INLINE_MAX / 8; j++)
			if (j * 8 < len)
				*(__u64 *)(w->buf + ((dst + j * 8) & VIGIL_PATH_MASK)) =
					d->d_shortname.words[j];
		*(__u64 *)(w->buf + (pos & VIGIL_PATH_MASK)) = keep;
		w->pos = dst - 1;
		w->buf[w->pos & VIGIL_PATH_MASK] = '/';
		w->tdentry = parent;
		return 0;
	}
	if (name == (__u64)d + o_in && len < n_in && n_in <= VIGIL_INLINE_MAX) {
		const unsigned char *src = (const unsigned char *)d + o_in;

		/* At span + 8: vigil_name_copy's first word may start up to 7
		 * bytes before the name. */
#pragma unroll
		for (int j = 0; j < VIGIL_INLINE_MAX; j++)
			if (j < n_in)
				w->span[8 + j] = src[j];
	}
	if (!vigil_path_put(w, name, len, name == (__u64)d + o_in && len < n_in &&
			    n_in <= VIGIL_INLINE_MAX, 8 + len))
		goto done;
	w->tdentry = parent;
	return 0;
done:
	w->done = true;
	return 1;
}

/* Two components a call: a call and its return cost more than the loads
 * of a component here (every return is a safe-RET thunk on this CPU). */
static long vigil_path_step_typed(__u32 i, struct vigil_path_walk *w)
{
	return vigil_path_typed_one(w) ?: vigil_path_typed_one(w);
}

/* Returns the path's length; *start is its offset in buf. A path that does
 * not fit is cut at its root side and *truncated set. */
static __always_inline __u32 vigil_path_build(char *buf, const struct path *p,
					      const struct path *root, __u32 *start,
					      bool *truncated, const bool typed)
{
	struct vigil_path_walk w = {
		.buf = buf,
		.span = (__u8 *)buf + VIGIL_PATH_BUF,
		.pos = vigil_loop_opaque(VIGIL_PATH_BUF),	/* loop.bpf.h */
	};
	long steps = 0;

	if (typed) {	/* p's pointers are BTF-typed (a constant: two walks, not one) */
		w.root_dentry = root->dentry;	/* the caller's copy, not kernel memory */
		w.root_mnt = root->mnt;
		w.tdentry = p->dentry;
		w.tvfs = p->mnt;
		w.tmnt_root = p->mnt->mnt_root;
		bpf_loop(VIGIL_PATH_DEPTH / 2, vigil_path_step_typed, &w, 0);
		steps = w.steps;
		/* On at a mount: the pointers, as plain numbers (through the
		 * map value: a helper read would cost 30 ns), for the other walk. */
		*(__u64 *)w.span = (__u64)w.tdentry;
		*(__u64 *)(w.span + 8) = (__u64)w.tvfs;
		w.dentry = *(struct dentry **)w.span;
		w.mnt = container_of(*(struct vfsmount **)(w.span + 8), struct mount, mnt);
	} else {
		w.root_dentry = root ? BPF_CORE_READ(root, dentry) : NULL;
		w.root_mnt = root ? BPF_CORE_READ(root, mnt) : NULL;
		w.dentry = BPF_CORE_READ(p, dentry);
		w.mnt = container_of(BPF_CORE_READ(p, mnt), struct mount, mnt);
	}
	if (!w.done && steps < VIGIL_PATH_DEPTH) {
		vigil_mount_load(&w.up, w.mnt);
		bpf_loop(VIGIL_PATH_DEPTH - steps, vigil_path_step, &w, 0);
	}
	if (!w.done)
		w.truncated = true;
	if (w.pos == VIGIL_PATH_BUF) {	/* the root itself */
		w.pos -= 1;
		buf[w.pos & VIGIL_PATH_MASK] = '/';
	}
	*start = w.pos & VIGIL_PATH_MASK;
	*truncated = w.truncated;
	return VIGIL_PATH_BUF - w.pos;
}

#endif
