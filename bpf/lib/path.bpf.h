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
	if (len > VIGIL_NAME_MAX)
		len = VIGIL_NAME_MAX;
	if (w->pos < len + 2) {	/* keep pos > 0: a length of VIGIL_PATH_BUF would mask to 0 */
		w->truncated = true;
		goto done;
	}
	if (name >= base && name + len <= base + VIGIL_DENTRY_SPAN && w->pos >= VIGIL_DENTRY_SPAN)
		vigil_name_copy(w->buf, w->pos, w->span, name + len - base, len);
	else
		bpf_probe_read_kernel(w->buf + ((w->pos - len) & VIGIL_PATH_MASK),
				      len & VIGIL_NAME_MAX, (void *)name);
	w->pos -= len + 1;
	w->buf[w->pos & VIGIL_PATH_MASK] = '/';
	w->dentry = parent;
	return 0;
done:
	w->done = true;
	return 1;
}

/* Returns the path's length; *start is its offset in buf. A path that does
 * not fit is cut at its root side and *truncated set. */
static __always_inline __u32 vigil_path_build(char *buf, const struct path *p,
					      const struct path *root, __u32 *start,
					      bool *truncated)
{
	struct vigil_path_walk w = {
		.buf = buf,
		.span = (__u8 *)buf + VIGIL_PATH_BUF,
		.dentry = BPF_CORE_READ(p, dentry),
		.mnt = container_of(BPF_CORE_READ(p, mnt), struct mount, mnt),
		.root_dentry = root ? BPF_CORE_READ(root, dentry) : NULL,
		.root_mnt = root ? BPF_CORE_READ(root, mnt) : NULL,
		.pos = vigil_loop_opaque(VIGIL_PATH_BUF),	/* loop.bpf.h */
	};

	vigil_mount_load(&w.up, w.mnt);
	bpf_loop(VIGIL_PATH_DEPTH, vigil_path_step, &w, 0);
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
