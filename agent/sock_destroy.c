// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the socket-destroying iterators in the namespaces a reset rule names.
 * setns() is per thread and an iterator walks the namespace of the thread
 * that creates it, so each namespace gets a short-lived thread that joins
 * it, learns its cookie, and creates and drains the iterators there; the
 * agent's own thread never leaves its namespace. The BPF side checks each
 * socket's namespace cookie against the one learned here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h"
#include "log.h"
#include "policy_state.h"
#include "sock_destroy.h"
#include "enforce_sockdestroy.skel.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

struct sd_target {	/* as in bpf/enforce_sockdestroy.bpf.c */
	uint64_t netns_cookie;
	uint32_t rule_id;
	uint32_t destroyed;
};

struct sd_job {
	struct vigil_policy_state *s;
	const char *ns_path;
	unsigned rule_id;
	int destroyed;
	int err;
};

int vigil_netns_path(const char *netns, char *out, size_t len)
{
	int n = netns[0] == '/' ? snprintf(out, len, "%s", netns)
				: snprintf(out, len, "/run/netns/%s", netns);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int netns_cookie(uint64_t *cookie)
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

static int drain(struct bpf_program *prog)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, NULL);
	char buf[64];
	int fd, err = 0;

	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

static void *sd_thread(void *arg)
{
	struct sd_job *j = arg;
	struct enforce_sockdestroy_bpf *sd = j->s->sd;
	struct sd_target t = { .rule_id = j->rule_id };
	uint32_t zero = 0;
	int fd;

	fd = open(j->ns_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		j->err = vlog_err(-errno, "cannot open network namespace %s", j->ns_path);
		return NULL;
	}
	/* From here this thread, and only it, lives in the namespace. */
	if (setns(fd, CLONE_NEWNET)) {
		j->err = vlog_err(-errno, "cannot join network namespace %s", j->ns_path);
		close(fd);
		return NULL;
	}
	close(fd);
	if ((j->err = netns_cookie(&t.netns_cookie))) {
		vlog_err(j->err, "cannot read the cookie of network namespace %s", j->ns_path);
		return NULL;
	}
	if (bpf_map_update_elem(bpf_map__fd(sd->maps.sd_target), &zero, &t, 0)) {
		j->err = vlog_err(-errno, "cannot set the socket-destroy target");
		return NULL;
	}
	j->err = drain(sd->progs.destroy_tcp);
	if (!j->err)
		j->err = drain(sd->progs.destroy_udp);
	if (j->err)
		vlog_err(j->err, "socket iterator in %s failed", j->ns_path);
	if (!bpf_map_lookup_elem(bpf_map__fd(sd->maps.sd_target), &zero, &t))
		j->destroyed = t.destroyed;
	return NULL;
}

int vigil_sock_destroy_rule(struct vigil_policy_state *s, const struct vigil_rule *r, unsigned id)
{
	char path[256];
	int total = 0, err = 0;

	if (!r->n_netns) {
		vlog_info("rule '%s': names no network namespace, so no live socket is destroyed",
			  r->name);
		return 0;
	}
	for (unsigned i = 0; i < r->n_netns; i++) {
		struct sd_job j = { .s = s, .ns_path = path, .rule_id = id };
		pthread_t th;
		int e;

		if ((e = vigil_netns_path(r->netns[i], path, sizeof(path)))) {
			err = e;
			continue;
		}
		/* One run at a time: sd_target holds one namespace. */
		if ((e = pthread_create(&th, NULL, sd_thread, &j))) {
			err = vlog_err(-e, "cannot start a thread for namespace %s", path);
			continue;
		}
		pthread_join(th, NULL);
		if (j.err)
			err = j.err;
		total += j.destroyed;
		vlog_info("rule '%s': %d live sockets destroyed in %s", r->name, j.destroyed, path);
	}
	return err ? err : total;
}

int vigil_sock_destroy_init(struct vigil_policy_state *s, uint64_t ring_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = s->pin_dir);
	int err;

	s->sd = enforce_sockdestroy_bpf__open_opts(&oo);
	if (!s->sd)
		return vlog_err(-errno, "cannot open BPF object enforce_sockdestroy");
	if ((err = vigil_obj_prepare(s->sd->obj, ring_size)))
		return err;
	if ((err = enforce_sockdestroy_bpf__load(s->sd)))
		return vlog_err(err, "cannot load BPF object enforce_sockdestroy (run with -v for the verifier log)");
	return 0;
}

void vigil_sock_destroy_close(struct vigil_policy_state *s)
{
	enforce_sockdestroy_bpf__destroy(s->sd);
	s->sd = NULL;
}
