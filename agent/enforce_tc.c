// SPDX-License-Identifier: GPL-2.0
/*
 * Loads vigil's TC and XDP enforcement objects (sharing the pinned ring and
 * policy maps) and attaches them as pinned links (TCX, XDP), each attach
 * from a thread in the intended network namespace (agent/netns.c). Owns
 * nothing of the policy: rules reach the programs through the pinned maps.
 */
#include <dirent.h>
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
/* Debian 12's linux/bpf.h predates TCX (Linux 6.6); the kernel's values. */
#define VIGIL_BPF_TCX_INGRESS 46
#define VIGIL_BPF_TCX_EGRESS 47

struct attachment {
	char netns[256];
	struct vigil_netns_id ns;
	char ifname[IF_NAMESIZE];
	int ifindex;
	bool xdp;
};

struct vigil_enforce_tc {
	struct enforce_tc_bpf *tc;
	struct enforce_xdp_bpf *xdp;
	char pin_dir[200];
	struct attachment at[ATTACH_MAX];
	unsigned n;
	bool track_flows;
	struct vigil_flow_reset idle;	/* with track_flows: idle flows' resets */
};

/* The instances this agent has open (the --enforce-on one, the policy's):
 * an interface gets one of them, or the second would take the first's
 * links over with its own programs (and options). */
static struct vigil_enforce_tc *open_set[4];

static bool enforced_here(uint64_t cookie, int ifindex)
{
	for (unsigned k = 0; k < 4; k++)
		for (unsigned i = 0; open_set[k] && i < open_set[k]->n; i++)
			if (open_set[k]->at[i].ns.cookie == cookie && open_set[k]->at[i].ifindex == ifindex)
				return true;
	return false;
}

int vigil_enforce_tc_open(struct vigil_enforce_tc **out, const struct vigil_enforce_tc_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = o->pin_dir);
	struct vigil_enforce_tc *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return vlog_err(-ENOMEM, "enforce: out of memory");
	if (snprintf(e->pin_dir, sizeof(e->pin_dir), "%s", o->pin_dir) >= (int)sizeof(e->pin_dir)) {
		free(e);
		return vlog_err(-ENAMETOOLONG, "enforce: pin folder name too long: %s", o->pin_dir);
	}
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
	for (unsigned k = 0; k < 4; k++)
		if (!open_set[k]) {
			open_set[k] = e;
			break;
		}
	*out = e;
	return 0;
fail:
	enforce_tc_bpf__destroy(e->tc);
	enforce_xdp_bpf__destroy(e->xdp);
	free(e);
	return err;
}

/* A link's pin: the namespace by its cookie (never given out again), the
 * interface by its index there, and the hook. */
static void link_pin(char *out, size_t len, const char *pin_dir, uint64_t cookie, int ifindex,
		     const char *hook)
{
	snprintf(out, len, "%s/" VIGIL_ENFORCE_LINK_PREFIX "%llx_%d_%s", pin_dir,
		 (unsigned long long)cookie, ifindex, hook);
}

struct tc_job {
	struct vigil_enforce_tc *e;
	struct attachment *a;
};

/* Puts prog on a hook of the interface as a pinned link. A link an earlier
 * agent pinned there is given this agent's program in place (no moment
 * without enforcement); one whose interface is gone is replaced. */
static int attach_hook(struct tc_job *j, uint64_t cookie, const char *hook, int prog_fd,
		       int attach_type)
{
	struct attachment *a = j->a;
	char path[512];
	int fd, err;

	link_pin(path, sizeof(path), j->e->pin_dir, cookie, a->ifindex, hook);
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		err = bpf_link_update(fd, prog_fd, NULL);
		close(fd);
		if (!err)
			return 0;
		vlog_debug("%s: the pinned link takes no program (%d): made again", path, err);
		unlink(path);
	}
	fd = bpf_link_create(prog_fd, a->ifindex, attach_type, NULL);
	if (fd < 0)
		return vlog_err(-errno, "cannot attach %s to %s in %s%s", hook, a->ifname, a->netns,
				attach_type == BPF_XDP ? " (another XDP program there?)" : "");
	err = bpf_obj_pin(fd, path);
	if (err)
		err = vlog_err(-errno, "cannot pin the %s link of %s in %s at %s", hook, a->ifname,
			       a->netns, path);
	close(fd);	/* the pin holds it; without one it goes now */
	return err;
}

/* In the namespace: find the interface, then attach. */
static int tc_job_run(void *arg)
{
	struct tc_job *j = arg;
	struct attachment *a = j->a;
	struct vigil_enforce_tc *e = j->e;
	int ifindex = if_nametoindex(a->ifname), err;
	uint64_t cookie;

	if (!ifindex)
		return vlog_err(-ENODEV, "no interface %s in network namespace %s", a->ifname, a->netns);
	if ((err = vigil_netns_cookie(&cookie)))
		return err;
	if (enforced_here(cookie, ifindex))
		return vlog_err(-EEXIST, "%s in %s is enforced on already (named twice: by --enforce-on "
				"and a policy, or by two rules' netns paths?)", a->ifname, a->netns);
	a->ifindex = ifindex;
	if (a->xdp)
		err = attach_hook(j, cookie, "xdp", bpf_program__fd(e->xdp->progs.vigil_xdp_ingress),
				  BPF_XDP);
	else
		err = attach_hook(j, cookie, "tc_ingress", bpf_program__fd(e->tc->progs.vigil_tc_ingress),
				  VIGIL_BPF_TCX_INGRESS);
	if (!err)
		err = attach_hook(j, cookie, "tc_egress", bpf_program__fd(e->tc->progs.vigil_tc_egress),
				  VIGIL_BPF_TCX_EGRESS);
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
	/* A failure may leave one hook attached and pinned: counted as ours,
	 * so that the agent's start removes it unless it is wanted. */
	err = vigil_netns_run(netns, tc_job_run, &j, &a->ns);
	if (a->ifindex)
		e->n++;
	if (err)
		return err;
	if (e->track_flows && (err = watch_netns(e, a->netns)))
		return err;
	vlog_info("enforcing on %s in %s (%s ingress, TC egress)", ifname, netns, xdp ? "XDP" : "TC");
	return 0;
}

bool vigil_enforce_tc_owns(const struct vigil_enforce_tc *e, const char *name)
{
	char path[512], base[512];

	if (!e)
		return false;
	snprintf(base, sizeof(base), "%s/%s", e->pin_dir, name);
	for (unsigned i = 0; i < e->n; i++) {
		const struct attachment *a = &e->at[i];
		const char *hooks[] = { a->xdp ? "xdp" : "tc_ingress", "tc_egress" };

		for (unsigned h = 0; h < 2; h++) {
			link_pin(path, sizeof(path), e->pin_dir, a->ns.cookie, a->ifindex, hooks[h]);
			if (!strcmp(path, base))
				return true;
		}
	}
	return false;
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

int vigil_enforce_links_prune(const char *pin_dir, struct vigil_enforce_tc *const *keep, unsigned n)
{
	DIR *d = opendir(pin_dir);
	struct dirent *de;
	int removed = 0;

	if (!d)
		return errno == ENOENT ? 0 : vlog_err(-errno, "cannot read %s", pin_dir);
	while ((de = readdir(d))) {
		char path[512];
		bool wanted = false;

		if (strncmp(de->d_name, VIGIL_ENFORCE_LINK_PREFIX, strlen(VIGIL_ENFORCE_LINK_PREFIX)))
			continue;
		for (unsigned i = 0; i < n && !wanted; i++)
			wanted = vigil_enforce_tc_owns(keep[i], de->d_name);
		if (wanted)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (unlink(path)) {
			vlog_err(-errno, "cannot remove %s", path);
			continue;
		}
		vlog_info("enforcement an earlier agent left is removed: %s (no rule or --enforce-on names it now)",
			  de->d_name);
		removed++;
	}
	closedir(d);
	return removed;
}

void vigil_enforce_tc_close(struct vigil_enforce_tc *e)
{
	if (!e)
		return;
	vigil_flow_reset_stop(&e->idle);
	for (unsigned k = 0; k < 4; k++)
		if (open_set[k] == e)
			open_set[k] = NULL;
	/* The links stay pinned: enforcement outlives the agent. */
	enforce_tc_bpf__destroy(e->tc);
	enforce_xdp_bpf__destroy(e->xdp);
	free(e);
}
