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

struct vigil_path_walk {
	char *buf;	/* VIGIL_PATH_BUF + VIGIL_NAME_MAX + 1 bytes */
	struct dentry *dentry;
	struct mount *mnt;
	struct dentry *mnt_root;	/* mnt's: read once a mount, not once a component */
	struct dentry *root_dentry;
	struct vfsmount *root_mnt;
	__u32 pos;
	bool truncated;
	bool done;
};

static long vigil_path_step(__u32 i, struct vigil_path_walk *w)
{
	struct dentry *d = w->dentry, *parent;
	struct mount *mnt = w->mnt;
	struct vfsmount *vfsmnt = &mnt->mnt;
	struct qstr name;
	__u32 len;

	if (d == w->root_dentry && vfsmnt == w->root_mnt)
		goto done;
	parent = BPF_CORE_READ(d, d_parent);
	if (d == w->mnt_root || d == parent) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

		if (d != w->mnt_root || up == mnt)
			goto done;	/* the top of the mount tree */
		w->dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = up;
		w->mnt_root = BPF_CORE_READ(up, mnt.mnt_root);
		return 0;
	}
	name = BPF_CORE_READ(d, d_name);
	len = name.len;
	if (len > VIGIL_NAME_MAX)
		len = VIGIL_NAME_MAX;
	if (w->pos < len + 2) {	/* keep pos > 0: a length of VIGIL_PATH_BUF would mask to 0 */
		w->truncated = true;
		goto done;
	}
	w->pos -= len;
	bpf_probe_read_kernel(w->buf + (w->pos & VIGIL_PATH_MASK), len & VIGIL_NAME_MAX, name.name);
	w->pos -= 1;
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
		.dentry = BPF_CORE_READ(p, dentry),
		.mnt = container_of(BPF_CORE_READ(p, mnt), struct mount, mnt),
		.root_dentry = root ? BPF_CORE_READ(root, dentry) : NULL,
		.root_mnt = root ? BPF_CORE_READ(root, mnt) : NULL,
		.pos = vigil_loop_opaque(VIGIL_PATH_BUF),	/* loop.bpf.h */
	};

	struct mount *mnt = w.mnt;	/* not w.mnt in the macro: CO-RE would relocate struct vigil_path_walk */

	w.mnt_root = BPF_CORE_READ(mnt, mnt.mnt_root);
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
