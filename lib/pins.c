// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "log.h"
#include "pins.h"

#define BPF_FS_MAGIC_NUM 0xcafe4a11

int vigil_pins_lock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return err;
	}
	return fd;
}

int vigil_bpffs_prepare(const char *dir)
{
	struct statfs st;
	char path[256];

	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC_NUM) {
		mkdir("/sys/fs/bpf", 0700);
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
			return vlog_err(-errno, "cannot mount bpffs at /sys/fs/bpf");
		vlog_info("mounted bpffs at /sys/fs/bpf");
	}
	snprintf(path, sizeof(path), "%s", dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(path, 0700);
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST) {
		int err = -errno;
		struct stat dst;
		/* Not root, on a folder that may well be there: not "create". */
		bool there = !stat(path, &dst) || errno != ENOENT;

		return vlog_err(err, "cannot %s pin folder %s", there ? "use" : "create", path);
	}
	if (statfs(path, &st) || st.f_type != BPF_FS_MAGIC_NUM)
		return vlog_refuse(-EINVAL, "pin folder %s is not on bpffs", path);
	return 0;
}

int vigil_pinned_fd(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

int vigil_linked_prog_fd(const char *dir, const char *name)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);
	int lfd = vigil_pinned_fd(dir, name), pfd = -1;

	if (lfd < 0)
		return -1;
	if (!bpf_obj_get_info_by_fd(lfd, &li, &len))
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
	close(lfd);
	return pfd < 0 ? -1 : pfd;
}

static struct vigil_linked_prog *held_find(struct vigil_linked_progs *h, uint64_t ino)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->p[i].ino == ino)
			return &h->p[i];
	return NULL;
}

static struct vigil_linked_prog *held_add(struct vigil_linked_progs *h, uint64_t ino, int fd)
{
	if (h->n == h->cap) {
		unsigned cap = h->cap ? 2 * h->cap : 64;
		struct vigil_linked_prog *p = realloc(h->p, cap * sizeof(*p));

		if (!p)
			return NULL;
		h->p = p;
		h->cap = cap;
	}
	h->p[h->n] = (struct vigil_linked_prog){ .ino = ino, .fd = fd };
	return &h->p[h->n++];
}

uint64_t vigil_recursion_misses(const char *dir, struct vigil_linked_progs *h)
{
	uint64_t total = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	unsigned kept = 0;

	if (!d)
		return 0;
	for (unsigned i = 0; i < h->n; i++)
		h->p[i].seen = false;
	while ((de = readdir(d))) {
		struct vigil_linked_prog *p;
		int fd;

		if (strncmp(de->d_name, VIGIL_LINK_PREFIX, strlen(VIGIL_LINK_PREFIX)))
			continue;
		p = held_find(h, de->d_ino);
		if (!p) {
			if ((fd = vigil_linked_prog_fd(dir, de->d_name)) < 0)
				continue;
			if (!(p = held_add(h, de->d_ino, fd))) {
				close(fd);
				continue;
			}
		}
		p->seen = true;
	}
	closedir(d);
	/* Links gone from the folder: their programs let go. */
	for (unsigned i = 0; i < h->n; i++) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi);

		if (!h->p[i].seen) {
			close(h->p[i].fd);
			continue;
		}
		if (!bpf_obj_get_info_by_fd(h->p[i].fd, &pi, &len))
			total += pi.recursion_misses;
		h->p[kept++] = h->p[i];
	}
	h->n = kept;
	return total;
}

void vigil_linked_progs_free(struct vigil_linked_progs *h)
{
	for (unsigned i = 0; i < h->n; i++)
		close(h->p[i].fd);
	free(h->p);
	*h = (struct vigil_linked_progs){};
}

void vigil_pins_note_dir(const char *dir, struct vigil_pin_set *s)
{
	char path[256];

	*s = (struct vigil_pin_set){};
	snprintf(path, sizeof(path), "%s", dir);
	for (size_t i = 1; ; i++) {
		if (path[i] == '/' || !path[i]) {
			char c = path[i];

			path[i] = 0;
			if (access(path, F_OK)) {
				s->made_from = i;
				return;
			}
			path[i] = c;
		}
		if (!path[i])
			return;
	}
}

int vigil_pins_snapshot(const char *dir, struct vigil_pin_set *s)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && !err) {
		char **more;

		if (!vigil_pin_is_ours(de->d_name))
			continue;
		more = realloc(s->names, (s->n + 1) * sizeof(*more));
		if (!more || !(more[s->n] = strdup(de->d_name)))
			err = -ENOMEM;
		if (more)
			s->names = more;
		if (!err)
			s->n++;
	}
	closedir(d);
	return err;
}

void vigil_pin_set_free(struct vigil_pin_set *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	s->names = NULL;
	s->n = 0;
}

static bool in_set(const struct vigil_pin_set *s, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

int vigil_pins_rollback(const char *dir, struct vigil_pin_set *s)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (d) {
		while ((de = readdir(d))) {
			if (!vigil_pin_is_ours(de->d_name) || in_set(s, de->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (!unlink(path))
				n++;
		}
		closedir(d);
	}
	vigil_pins_remove_made_dirs(dir, s);
	vigil_pin_set_free(s);
	return n;
}

void vigil_pins_remove_made_dirs(const char *dir, const struct vigil_pin_set *s)
{
	char path[256];

	/* deepest first, each only if nothing is left in it */
	snprintf(path, sizeof(path), "%s", dir);
	while (s->made_from && strlen(path) >= s->made_from) {
		char *slash = strrchr(path, '/');

		if (rmdir(path) || !slash)
			break;
		*slash = 0;
	}
}

bool vigil_pin_is_ours(const char *name)
{
	static const char *const prefixes[] = { VIGIL_MAP_PREFIX, VIGIL_LINK_PREFIX,
						VIGIL_ENFORCE_LINK_PREFIX, VIGIL_CGROUP_LINK_PREFIX };

	for (unsigned i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])) && name[strlen(prefixes[i])])
			return true;
	return false;
}

int vigil_unpin_all(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int n = 0, fd;
	char path[512];

	/* A folder without the schema map is not vigil's (a typo'd or a
	 * shared one such as /sys/fs/bpf itself): touch nothing there. */
	fd = vigil_pinned_fd(dir, VIGIL_SCHEMA_PIN);
	if (fd < 0 && errno != ENOENT)
		return -errno;	/* there, and not ours to open (not root) */
	if (fd < 0) {
		struct stat st;

		if (stat(dir, &st))
			return -errno;
		return S_ISDIR(st.st_mode) ? -ENOMSG : -ENOTDIR;
	}
	close(fd);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		/* the schema map last: an unpin cut short stays one to redo */
		if (!vigil_pin_is_ours(de->d_name) || !strcmp(de->d_name, VIGIL_SCHEMA_PIN))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!unlink(path))
			n++;
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/%s", dir, VIGIL_SCHEMA_PIN);
	if (!unlink(path))
		n++;
	rmdir(dir);	/* only if nothing else is left in it */
	return n;
}
