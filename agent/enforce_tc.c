// SPDX-License-Identifier: GPL-2.0
/*
 * Loads vigil's TC and XDP enforcement objects (sharing the pinned ring and
 * policy maps) and attaches them, each attach and detach from a thread in
 * the intended network namespace (agent/netns.c). Owns nothing of the
 * policy: rules reach the programs through the pinned maps.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "enforce_tc.h"
#include "flow_reset.h"
#include "loader.h"
#include "log.h"
#include "netns.h"
#include "enforce_tc.skel.h"
#include "enforce_xdp.skel.h"

#define ATTACH_MAX 64
/* Our filters' handle and priority on clsact: "vg", and first. */
#define TC_HANDLE 0x7667
#define TC_PRIO 1

struct attachment {
	char netns[256];
	struct vigil_netns_id ns;
	char ifname[IF_NAMESIZE];
	int ifindex;
	bool xdp;
	bool made_clsact;	/* we created the qdisc: we remove it */
};

struct vigil_enforce_tc {
	struct enforce_tc_bpf *tc;
	struct enforce_xdp_bpf *xdp;
	struct attachment at[ATTACH_MAX];
	unsigned n;
	bool track_flows;
	struct vigil_flow_reset idle;	/* with track_flows: idle flows' resets */
};

int vigil_enforce_tc_open(struct vigil_enforce_tc **out, const struct vigil_enforce_tc_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = o->pin_dir);
	struct vigil_enforce_tc *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return vlog_err(-ENOMEM, "enforce: out of memory");
	e->tc = enforce_tc_bpf__open_opts(&oo);
	e->xdp = enforce_xdp_bpf__open_opts(&oo);
	if (!e->tc || !e->xdp) {
		err = vlog_err(-errno, "cannot open the TC/XDP enforcement objects");
		goto fail;
	}
	if ((err = vigil_obj_prepare(e->tc->obj, o->ring_size)) ||
	    (err = vigil_obj_prepare(e->xdp->obj, o->ring_size)))
		goto fail;
	e->tc->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	e->xdp->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	e->tc->rodata->vigil_track_flows = o->track_flows;
	if ((err = enforce_tc_bpf__load(e->tc))) {
		vlog_err(err, "cannot load BPF object enforce_tc (run with -v for the verifier log)");
		goto fail;
	}
	if ((err = enforce_xdp_bpf__load(e->xdp))) {
		vlog_err(err, "cannot load BPF object enforce_xdp (run with -v for the verifier log)");
		goto fail;
	}
	e->track_flows = o->track_flows;
	e->idle = (struct vigil_flow_reset){
		.build_fd = bpf_program__fd(e->tc->progs.vigil_tc_build),
		.flows_fd = bpf_map__fd(e->tc->maps.vigil_flows),
		.rules_fd = bpf_map__fd(e->tc->maps.vigil_rules),
		.pol4_fd = bpf_map__fd(e->tc->maps.vigil_pol4),
		.pol6_fd = bpf_map__fd(e->tc->maps.vigil_pol6),
	};
	*out = e;
	return 0;
fail:
	enforce_tc_bpf__destroy(e->tc);
	enforce_xdp_bpf__destroy(e->xdp);
	free(e);
	return err;
}

struct tc_job {
	struct vigil_enforce_tc *e;
	struct attachment *a;
	bool detach;
};

static int tc_filter(struct attachment *a, enum bpf_tc_attach_point where, int prog_fd, bool detach)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a->ifindex, .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TC_HANDLE, .priority = TC_PRIO);
	const char *side = where == BPF_TC_INGRESS ? "ingress" : "egress";
	int err;

	if (detach) {
		err = bpf_tc_detach(&hook, &opts);
		return err && err != -ENOENT ?
			vlog_err(err, "cannot detach TC %s from %s in %s", side, a->ifname, a->netns) : 0;
	}
	opts.prog_fd = prog_fd;
	opts.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&hook, &opts);
	return err ? vlog_err(err, "cannot attach TC %s to %s in %s", side, a->ifname, a->netns) : 0;
}

/* In the namespace: find the interface, then attach or detach. */
static int tc_job_run(void *arg)
{
	struct tc_job *j = arg;
	struct attachment *a = j->a;
	LIBBPF_OPTS(bpf_tc_hook, clsact, .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_xdp_attach_opts, xo);
	int ifindex = if_nametoindex(a->ifname), xdp_fd = bpf_program__fd(j->e->xdp->progs.vigil_xdp_ingress);
	int err = 0, e2;

	if (!ifindex)
		return vlog_err(-ENODEV, "no interface %s in network namespace %s", a->ifname, a->netns);
	if (j->detach) {
		if (ifindex != a->ifindex)
			return vlog_err(-ENODEV, "interface %s in %s changed: left as it is", a->ifname, a->netns);
		if (a->xdp) {
			xo.old_prog_fd = xdp_fd;
			if ((e2 = bpf_xdp_detach(ifindex, 0, &xo)))
				err = vlog_err(e2, "cannot detach XDP from %s in %s", a->ifname, a->netns);
		} else {
			err = tc_filter(a, BPF_TC_INGRESS, -1, true);
		}
		if ((e2 = tc_filter(a, BPF_TC_EGRESS, -1, true)))
			err = e2;
		clsact.ifindex = ifindex;
		if (!err && a->made_clsact && (e2 = bpf_tc_hook_destroy(&clsact)) && e2 != -ENOENT)
			err = vlog_err(e2, "cannot remove clsact from %s in %s", a->ifname, a->netns);
		return err;
	}
	a->ifindex = ifindex;
	clsact.ifindex = ifindex;
	err = bpf_tc_hook_create(&clsact);
	if (err && err != -EEXIST)
		return vlog_err(err, "cannot add clsact to %s in %s", a->ifname, a->netns);
	a->made_clsact = !err;
	if (a->xdp) {
		err = bpf_xdp_attach(ifindex, xdp_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		if (err)
			return vlog_err(err, "cannot attach XDP to %s in %s (another program there?)",
					a->ifname, a->netns);
	} else if ((err = tc_filter(a, BPF_TC_INGRESS, bpf_program__fd(j->e->tc->progs.vigil_tc_ingress),
				    false))) {
		return err;
	}
	return tc_filter(a, BPF_TC_EGRESS, bpf_program__fd(j->e->tc->progs.vigil_tc_egress), false);
}

static int detach(struct vigil_enforce_tc *e, struct attachment *a)
{
	struct tc_job j = { .e = e, .a = a, .detach = true };
	/* Only where we attached: a namespace made again under the same name
	 * holds someone else's qdisc and filters, perhaps on the same ifindex. */
	int err = vigil_netns_run_in(a->netns, &a->ns, tc_job_run, &j);

	if (err == -ESTALE) {
		vlog_info("network namespace %s was replaced; nothing to detach", a->netns);
		return 0;
	}
	return err;
}

/* Idle flows of netns are reset too when a reset rule lands. The watcher
 * is stopped while its list of namespaces changes. */
static int watch_netns(struct vigil_enforce_tc *e, const char *netns)
{
	struct vigil_flow_reset *r = &e->idle;

	for (unsigned i = 0; i < r->n_netns; i++)
		if (!strcmp(r->netns[i], netns))
			return 0;
	if (r->n_netns == VIGIL_FLOW_RESET_NS_MAX)
		return vlog_err(-E2BIG, "flow tracking in more than %d namespaces",
				VIGIL_FLOW_RESET_NS_MAX);
	vigil_flow_reset_stop(r);
	r->netns[r->n_netns++] = netns;	/* an attachment's copy: lives as long */
	return vigil_flow_reset_start(r);
}

int vigil_enforce_tc_attach(struct vigil_enforce_tc *e, const char *netns, const char *ifname,
			    bool xdp)
{
	struct attachment *a;
	struct tc_job j = { .e = e };
	int err;

	if (e->n >= ATTACH_MAX)
		return vlog_err(-E2BIG, "enforce: more than %d interfaces", ATTACH_MAX);
	if (strlen(netns) >= sizeof(a->netns) || strlen(ifname) >= sizeof(a->ifname))
		return vlog_err(-ENAMETOOLONG, "enforce: name too long: %s/%s", netns, ifname);
	a = &e->at[e->n];
	memset(a, 0, sizeof(*a));
	strcpy(a->netns, netns);
	strcpy(a->ifname, ifname);
	a->xdp = xdp;
	j.a = a;
	err = vigil_netns_run(netns, tc_job_run, &j, &a->ns);
	if (err) {
		if (a->ifindex)	/* half attached: take back what went on */
			detach(e, a);
		return err;
	}
	e->n++;
	if (e->track_flows && (err = watch_netns(e, a->netns)))
		return err;
	vlog_info("enforcing on %s in %s (%s ingress, TC egress)", ifname, netns, xdp ? "XDP" : "TC");
	return 0;
}

int vigil_enforce_tc_attach_spec(struct vigil_enforce_tc *e, const char *spec)
{
	char buf[300], *slash, *colon;
	bool xdp = false;

	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		return vlog_err(-ENAMETOOLONG, "--enforce-on %s: too long", spec);
	slash = strrchr(buf, '/');
	if (!slash || slash == buf || !slash[1])
		return vlog_err(-EINVAL, "--enforce-on %s: want NETNS/IFNAME[:xdp]", spec);
	*slash = 0;
	colon = strchr(slash + 1, ':');
	if (colon) {
		if (strcmp(colon, ":xdp"))
			return vlog_err(-EINVAL, "--enforce-on %s: unknown mode '%s'", spec, colon + 1);
		*colon = 0;
		xdp = true;
	}
	return vigil_enforce_tc_attach(e, buf, slash + 1, xdp);
}

void vigil_enforce_tc_close(struct vigil_enforce_tc *e)
{
	if (!e)
		return;
	vigil_flow_reset_stop(&e->idle);
	while (e->n)
		detach(e, &e->at[--e->n]);
	enforce_tc_bpf__destroy(e->tc);
	enforce_xdp_bpf__destroy(e->xdp);
	free(e);
}
