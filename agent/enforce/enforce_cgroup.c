// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup hooks (bpf/enforce_cgroup.bpf.c) attached to the cgroups that
 * deny and reject rules name, and only to those: never on vigil's own to the
 * root cgroup. Links are pinned as cgroup_<id>_<prog>, so enforcement
 * outlives the agent, and a cgroup no rule names any more is detached by
 * removing its pins.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "enforce/rule_maps.h"
#include "enforce_cgroup.skel.h"

#define CGROUP2_MAGIC 0x63677270
#define CG_PIN_PREFIX "cgroup_"

/* Where cgroup v2 is mounted here (/sys/fs/cgroup, or /sys/fs/cgroup/unified
 * on hybrid systems): found at run time, never assumed. */
int vigil_cgroup2_mount(char *out, size_t len)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			err = 0;
			break;
		}
	}
	endmntent(f);
	return err;
}

int vigil_cgroup_resolve(const char *path, struct vigil_cgroup_ref *out, char *err, size_t errlen)
{
	char root[256], real[PATH_MAX], real_root[PATH_MAX];
	const char *rel;
	struct statfs sf;
	struct stat st, rst;
	size_t rlen;

	if (vigil_cgroup2_mount(root, sizeof(root))) {
		snprintf(err, errlen, "cgroup '%s': cgroup v2 is not mounted", path);
		return -ENOENT;
	}
	rlen = strlen(root);
	if (!strncmp(path, root, rlen) && (path[rlen] == '/' || !path[rlen]))
		rel = path + rlen;	/* an absolute path on the mount */
	else
		rel = path;		/* below the mount */
	while (*rel == '/')
		rel++;
	snprintf(out->path, sizeof(out->path), "%s/%s", root, rel);
	if (strstr(rel, "..")) {
		snprintf(err, errlen, "cgroup '%s': '..' is not allowed", path);
		return -EINVAL;
	}
	if (stat(out->path, &st) || !S_ISDIR(st.st_mode) || statfs(out->path, &sf) ||
	    sf.f_type != CGROUP2_MAGIC) {
		snprintf(err, errlen, "cgroup '%s': %s is not a cgroup v2 directory", path, out->path);
		return -ENOENT;
	}
	/* The root cgroup holds every process on the node: hooks that refuse
	 * go only below it, on cgroups a rule names. Compared by inode, so
	 * "/", "." and the mount's own path are all the root. */
	if (stat(root, &rst) || (rst.st_dev == st.st_dev && rst.st_ino == st.st_ino)) {
		snprintf(err, errlen, "cgroup '%s' is the root cgroup: refused (its hooks would "
			 "refuse for every process on the node)", path);
		return -EPERM;
	}
	out->id = st.st_ino;
	/* The hooks match ancestor_cgroup_id(level): count the levels of the
	 * directory itself (symlinks, '.' and '//' resolved), not of the
	 * string the rule spelled. */
	if (!realpath(out->path, real) || !realpath(root, real_root) ||
	    strncmp(real, real_root, strlen(real_root)) || real[strlen(real_root)] != '/') {
		snprintf(err, errlen, "cgroup '%s': %s is not below the cgroup v2 mount %s", path,
			 out->path, root);
		return -ENOENT;
	}
	out->level = 0;
	for (const char *p = real + strlen(real_root); *p; p++)
		if (*p == '/')
			out->level++;
	if (out->level >= VIGIL_CG_LEVELS) {
		snprintf(err, errlen, "cgroup '%s' is %u levels below the cgroup v2 root: the "
			 "packet hook tells apart %d at most, so the rule would not match there "
			 "(refused)", path, out->level, VIGIL_CG_LEVELS - 1);
		return -E2BIG;
	}
	return 0;
}

static int attach_one(struct vigil_policy_state *s, const struct vigil_cgroup_ref *ref)
{
	struct bpf_program *progs[] = {
		s->cg->progs.enforce_connect4, s->cg->progs.enforce_connect6,
		s->cg->progs.enforce_sendmsg4, s->cg->progs.enforce_sendmsg6,
		s->cg->progs.enforce_sock_create, s->cg->progs.enforce_skb_egress,
	};
	const char *path = ref->path;
	char pin[512];
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return vlog_err(-errno, "cannot open cgroup %s", path);
	for (unsigned i = 0; i < sizeof(progs) / sizeof(progs[0]) && !err; i++) {
		struct bpf_link *link;

		snprintf(pin, sizeof(pin), "%s/" CG_PIN_PREFIX "%" PRIu64 "_%s", s->pin_dir, ref->id,
			 bpf_program__name(progs[i]));
		if (!access(pin, F_OK))
			continue;	/* attached by an earlier load or agent */
		link = bpf_program__attach_cgroup(progs[i], fd);
		if (!link) {
			err = vlog_err(-errno, "cannot attach %s to cgroup %s",
				       bpf_program__name(progs[i]), path);
			break;
		}
		err = bpf_link__pin(link, pin);
		if (err)
			vlog_err(err, "cannot pin %s", pin);
		bpf_link__destroy(link);	/* the pin holds it */
	}
	close(fd);
	if (!err)
		vlog_debug("cgroup hooks on %s (id %" PRIu64 ")", path, ref->id);
	return err;
}

int vigil_cgroup_attach(struct vigil_policy_state *s, const struct vigil_cgroup_ref *refs, unsigned n)
{
	int err;

	for (unsigned i = 0; i < n; i++)
		if ((err = attach_one(s, &refs[i])))
			return err;
	return 0;
}

int vigil_cgroup_detach_others(struct vigil_policy_state *s, const struct vigil_cgroup_ref *refs,
			       unsigned n)
{
	char pin[512];
	struct dirent *de;
	DIR *d;

	d = opendir(s->pin_dir);
	if (!d)
		return vlog_err(-errno, "cannot read pin folder %s", s->pin_dir);
	while ((de = readdir(d))) {
		uint64_t id;
		bool keep = false;

		if (sscanf(de->d_name, CG_PIN_PREFIX "%" SCNu64 "_", &id) != 1)
			continue;
		for (unsigned i = 0; i < n && !keep; i++)
			keep = refs[i].id == id;
		if (keep)
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", s->pin_dir, de->d_name);
		if (unlink(pin))
			vlog_err(-errno, "cannot detach %s", pin);
	}
	closedir(d);
	return 0;
}
