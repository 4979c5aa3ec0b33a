/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a path a call was given (a directory fd and a string, at the
 * call's entry: unlink, rename) names the agent's pin folder or something
 * in it. Compared as strings, skipping what the kernel's walk skips in the
 * common spellings: repeated slashes and "." components. ".." and symlinks
 * are not followed (docs/threat-model.md). A relative path is joined to its
 * directory's path (path.bpf.h) only when that directory is on bpffs, so an
 * unlink anywhere else costs an 8-byte read and a few loads: unlink is a
 * hot path (rm -r, package managers, build trees).
 *
 * The folder is read-only data the agent sets at load: vigil_pin_dir, its
 * canonical path, and vigil_pin_dir_len (0: nothing matches).
 */
#ifndef VIGIL_PIN_PATH_BPF_H
#define VIGIL_PIN_PATH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <vigil/events.h>
#include "fd.bpf.h"
#include "loop.bpf.h"
#include "path.bpf.h"

#define VIGIL_PIN_DIR_MAX 128	/* power of two: indexes are masked */
#define VIGIL_PIN_WALK_MAX 512	/* bytes of the joined path looked at */
#define BPF_FS_MAGIC_ 0xcafe4a11
#define AT_FDCWD_ -100
#define PIN_BUF (2 * VIGIL_PATH_BUF)
#define PIN_MASK (PIN_BUF - 1)

const volatile char vigil_pin_dir[VIGIL_PIN_DIR_MAX];
const volatile __u32 vigil_pin_dir_len;

/* The directory's path (path.bpf.h writes it to end at VIGIL_PATH_BUF),
 * a '/', then the string the call gave: one path to walk. */
struct pin_scratch {
	char buf[PIN_BUF + VIGIL_TAMPER_PIN_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pin_scratch);
} vigil_pin_scratch SEC(".maps");

struct pin_walk {
	const char *buf;
	__u32 i;	/* in buf */
	__u32 j;	/* in vigil_pin_dir */
	__u32 name;	/* on a match: where the name under the folder starts */
	bool slash;	/* the last byte taken was a '/' */
	bool matched;
};

static long pin_step(__u32 n, struct pin_walk *w)
{
	char c = w->buf[w->i & PIN_MASK];

	if (c == 0 || c == '/') {
		if (c == '/' && w->slash) {
			w->i++;		/* "//" is "/" */
			return 0;
		}
		if (c == '/' && w->buf[(w->i + 1) & PIN_MASK] == '.' &&
		    (w->buf[(w->i + 2) & PIN_MASK] == '/' || w->buf[(w->i + 2) & PIN_MASK] == 0)) {
			w->i += 2;	/* "/./" is "/" */
			return 0;
		}
		if (w->j == vigil_pin_dir_len) {	/* the folder, or a name in it */
			w->matched = true;
			w->name = c ? w->i + 1 : w->i;
			return 1;
		}
		if (c == 0 || vigil_pin_dir[w->j & (VIGIL_PIN_DIR_MAX - 1)] != '/')
			return 1;
		w->slash = true;
	} else {
		if (w->j >= vigil_pin_dir_len || vigil_pin_dir[w->j & (VIGIL_PIN_DIR_MAX - 1)] != c)
			return 1;
		w->slash = false;
	}
	w->i++;
	w->j++;
	return 0;
}

/* The directory a relative path starts from: dfd's, or the cwd's. */
static __always_inline bool pin_base(struct task_struct *cur, long dfd, struct path *dir)
{
	struct file *f;

	if (dfd == AT_FDCWD_) {
		*dir = cur->fs->pwd;	/* direct loads: this runs for every relative unlink */
		return true;
	}
	f = vigil_fd_file(cur, dfd);
	if (!f)
		return false;
	*dir = BPF_CORE_READ(f, f_path);
	return true;
}

/* An absolute path's first 8 bytes (head) can begin the folder's: the
 * first byte after its slashes is the folder's first name's first byte
 * (or a '.', or not in head). Most unlinks end here. */
static __always_inline bool pin_head_may_match(const char *head)
{
	for (int k = 1; k < 8; k++) {
		if (head[k] == '/')
			continue;
		return head[k] == '.' || head[k] == vigil_pin_dir[1];
	}
	return true;
}

/* True when dfd and upath (the call's arguments; dfd AT_FDCWD for the
 * calls without one) name the pin folder or something in it; name gets
 * what follows the folder (VIGIL_TAMPER_PIN_MAX bytes, cut). Cheapest
 * refusals first: the path's first 8 bytes, or for a relative path its
 * directory's superblock; only then the whole string. */
static __always_inline bool vigil_pin_path(struct task_struct *cur, long dfd, const char *upath,
					   char *name)
{
	struct pin_walk w = {};
	struct pin_scratch *s;
	__u32 zero = 0, start;
	struct path dir = {};
	char head[8] = {};
	bool head_read;
	char *rel;

	if (!vigil_pin_dir_len)
		return false;
	head_read = !bpf_probe_read_user(head, sizeof(head), upath);
	if (head_read && head[0] == '/' && !pin_head_may_match(head))
		return false;
	if (head_read && head[0] != '/' &&
	    (!pin_base(cur, dfd, &dir) || BPF_CORE_READ(dir.dentry, d_sb, s_magic) != BPF_FS_MAGIC_))
		return false;
	s = bpf_map_lookup_elem(&vigil_pin_scratch, &zero);
	if (!s)
		return false;
	rel = s->buf + VIGIL_PATH_BUF + 1;
	if (bpf_probe_read_user_str(rel, VIGIL_NAME_MAX + 1, upath) <= 1)
		return false;
	if (rel[0] == '/') {
		start = VIGIL_PATH_BUF + 1;
	} else {
		struct path root;
		bool cut;

		if (!head_read &&
		    (!pin_base(cur, dfd, &dir) ||
		     BPF_CORE_READ(dir.dentry, d_sb, s_magic) != BPF_FS_MAGIC_))
			return false;
		root = BPF_CORE_READ(cur, fs, root);
		vigil_path_build(s->buf, &dir, &root, &start, &cut, false);
		/* The walk used the bytes past the path as its scratch: the
		 * name read above is gone, read again after the folder. */
		s->buf[VIGIL_PATH_BUF] = '/';
		if (bpf_probe_read_user_str(rel, VIGIL_NAME_MAX + 1, upath) <= 1)
			return false;
	}
	w.buf = s->buf;
	w.i = vigil_loop_opaque(start);
	w.j = vigil_loop_opaque(0);
	bpf_loop(VIGIL_PIN_WALK_MAX, pin_step, &w, 0);
	if (!w.matched)
		return false;
	for (int k = 0; k < 8 && s->buf[w.name & PIN_MASK] == '/'; k++)
		w.name++;
	bpf_probe_read_kernel_str(name, VIGIL_TAMPER_PIN_MAX, s->buf + (w.name & PIN_MASK));
	return true;
}

#endif
