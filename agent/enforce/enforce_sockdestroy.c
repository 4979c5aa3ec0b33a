// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the socket-destroying iterators in the namespaces a reset rule names.
 * An iterator walks the namespace of the thread that creates it, so each
 * runs in a thread that joined the namespace (agent/core/netns.c), which learns
 * the namespace's cookie there; the BPF side checks every socket's cookie
 * against it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/iter_drain.h"
#include "core/feature_load.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "log.h"
#include "core/netns.h"
#include "enforce/rule_maps.h"
#include "enforce/enforce_sockdestroy.h"
#include "enforce_sockdestroy.skel.h"

struct sd_target {	/* as in bpf/enforce_sockdestroy.bpf.c */
	uint64_t netns_cookie;
	uint32_t rule_id;
	uint32_t destroyed;
};

struct sd_job {
	struct vigil_policy_state *s;
	unsigned rule_id;
	int destroyed;
};

/* Runs inside the namespace (vigil_netns_run): learns its cookie, and
 * creates and drains the iterators here, so they walk this namespace. */
static int sd_run(void *arg)
{
	struct sd_job *j = arg;
	struct enforce_sockdestroy_bpf *sd = j->s->sd;
	struct sd_target t = { .rule_id = j->rule_id };
	int map = bpf_map__fd(sd->maps.sd_target);
	uint32_t zero = 0;
	int err;

	if ((err = vigil_netns_cookie(&t.netns_cookie)))
		return vlog_err(err, "cannot read the network namespace's cookie");
	if (bpf_map_update_elem(map, &zero, &t, 0))
		return vlog_err(-errno, "cannot set the socket-destroy target");
	err = vigil_iter_drain(sd->progs.destroy_tcp);
	if (!err)
		err = vigil_iter_drain(sd->progs.destroy_udp);
	if (err)
		vlog_err(err, "socket iterator failed");
	if (!bpf_map_lookup_elem(map, &zero, &t))
		j->destroyed = t.destroyed;
	return err;
}

int vigil_sock_destroy_rule(struct vigil_policy_state *s, const struct vigil_rule *r, unsigned id)
{
	int total = 0, err = 0;

	if (!r->n_netns) {
		vlog_info("rule '%s': names no network namespace, so no live socket is destroyed",
			  r->name);
		return 0;
	}
	if (!s->sd) {	/* said once at start */
		vlog_info("rule '%s': live local sockets are not destroyed (no bpf_sock_destroy)",
			  r->name);
		return 0;
	}
	for (unsigned i = 0; i < r->n_netns; i++) {
		struct sd_job j = { .s = s, .rule_id = id };
		/* One namespace at a time: sd_target holds one. */
		int e = vigil_netns_run(r->netns[i], sd_run, &j, NULL);

		if (e)
			err = e;
		total += j.destroyed;
		vlog_info("rule '%s': %d live sockets destroyed in %s", r->name, j.destroyed,
			  r->netns[i]);
	}
	return err ? err : total;
}

int vigil_sock_destroy_init(struct vigil_policy_state *s, uint64_t ring_size)
{
	int err;

	/* Before 6.5: reset rules still reset flows by packets (docs/kernels.md). */
	if (!vigil_kernel_has_kfunc("bpf_sock_destroy")) {
		vigil_kernel_lacks("bpf_sock_destroy kfunc (6.5+)",
				   "reset rules do not destroy live local sockets (flows are still "
				   "reset by packets)");
		return 0;
	}
	if ((err = vigil_skel_open(enforce_sockdestroy, &s->sd, s->pin_dir, ring_size)))
		return err;
	/* The BTF said yes; the verifier decides. A refusal turns this
	 * part off alone, said in one line (-v: the verifier's log). */
	if (!vigil_skel_load_feature(s->sd->skeleton, "bpf_sock_destroy kfunc (6.5+)",
				     "reset rules destroy live local sockets in the namespaces they name",
				     "reset rules do not destroy live local sockets (flows are still reset by packets)")) {
		enforce_sockdestroy_bpf__destroy(s->sd);
		s->sd = NULL;
	}
	return 0;
}

void vigil_sock_destroy_close(struct vigil_policy_state *s)
{
	enforce_sockdestroy_bpf__destroy(s->sd);
	s->sd = NULL;
}
