// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "core/netns.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

struct netns_job {
	const char *netns;
	char path[256];
	int (*fn)(void *arg);
	void *arg;
	struct vigil_netns_id id;
	int err;
};

static bool same(const struct stat *a, const char *path)
{
	struct stat b;

	return !stat(path, &b) && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* PID 1's namespace, or, where PID 1 is out of our sight (a container), the
 * one the agent started in: its main thread never leaves it. */
static bool is_root(const struct stat *ns)
{
	return same(ns, "/proc/1/ns/net") || same(ns, "/proc/self/ns/net");
}

static bool names_root(const char *netns)
{
	return !strcmp(netns, VIGIL_NETNS_ROOT);
}

int vigil_netns_path(const char *netns, char *out, size_t len)
{
	int n;

	if (!netns || !*netns || (netns[0] != '/' && strchr(netns, '/')))
		return -EINVAL;
	n = netns[0] == '/' ? snprintf(out, len, "%s", netns)
			    : snprintf(out, len, "/run/netns/%s", netns);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int vigil_netns_check(const char *netns, char *err, size_t errlen)
{
	struct stat ns;
	char path[256];
	int ret = vigil_netns_path(netns, path, sizeof(path));

	if (ret) {
		snprintf(err, errlen, "network namespace '%s': not a name under /run/netns or a path",
			 netns);
		return ret;
	}
	if (stat(path, &ns)) {
		ret = -errno;
		snprintf(err, errlen, "network namespace '%s': %s %s", netns, path,
			 ret == -ENOENT ? "not found" : strerror(-ret));
		return ret;
	}
	if (is_root(&ns) && !names_root(netns)) {
		snprintf(err, errlen, "network namespace '%s' is the root namespace: name it as "
			 VIGIL_NETNS_ROOT " if that is meant", netns);
		return -EPERM;
	}
	return 0;
}

int vigil_netns_cookie(uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		err = -errno;
	close(fd);
	return err;
}

static void *netns_thread(void *arg)
{
	struct netns_job *j = arg;
	struct stat ns;
	int fd = open(j->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		j->err = vlog_err(-errno, "cannot open network namespace %s", j->path);
		return NULL;
	}
	if (fstat(fd, &ns)) {
		j->err = vlog_err(-errno, "cannot identify network namespace %s", j->path);
		goto out;
	}
	j->id.dev = ns.st_dev;
	j->id.ino = ns.st_ino;
	if (is_root(&ns) && !names_root(j->netns)) {
		j->err = vlog_refuse(-EPERM, "%s is the root network namespace: refused unless named "
				  "as " VIGIL_NETNS_ROOT, j->netns);
		goto out;
	}
	/* From here this thread, and only it, lives in the namespace. */
	if (setns(fd, CLONE_NEWNET)) {
		j->err = vlog_err(-errno, "cannot join network namespace %s", j->path);
		goto out;
	}
	/* The cookie, unlike the inode number, is never given out again. */
	if ((j->err = vigil_netns_cookie(&j->id.cookie))) {
		vlog_err(j->err, "cannot read the cookie of network namespace %s", j->path);
		goto out;
	}
	j->err = j->fn(j->arg);
out:
	close(fd);
	return NULL;
}

static int run(struct netns_job *jp, struct vigil_netns_id *id)
{
	struct netns_job j = *jp;
	const char *netns = j.netns;
	pthread_t t;
	int err;

	if (vigil_netns_path(netns, j.path, sizeof(j.path)))
		return vlog_refuse(-EINVAL, "invalid network namespace name '%s'", netns ? netns : "");
	err = pthread_create(&t, NULL, netns_thread, &j);
	if (err)
		return vlog_err(-err, "cannot start a thread for network namespace %s", netns);
	pthread_join(t, NULL);
	if (id)
		*id = j.id;
	return j.err;
}

int vigil_netns_run(const char *netns, int (*fn)(void *arg), void *arg, struct vigil_netns_id *id)
{
	struct netns_job j = { .netns = netns, .fn = fn, .arg = arg };

	return run(&j, id);
}
