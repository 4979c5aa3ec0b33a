// SPDX-License-Identifier: GPL-2.0
/*
 * Loads vigil's TC and XDP enforcement objects (sharing the pinned ring and
 * policy maps) and attaches them as pinned links (TCX, XDP), each attach
 * from a thread in the intended network namespace (agent/core/netns.c). Owns
 * nothing of the policy: rules reach the programs through the pinned maps.
 *
 * A kernel without TCX (before Linux 6.6) gets netlink clsact filters for
 * the TC hooks instead: not links, so nothing to pin, and this agent
 * removes them (and its XDP links, whose resets go through TC) when it
 * stops: there, enforcement does not outlive the agent.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/feature_load.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "enforce/enforce_tc.h"
#include "enforce/flow_reset.h"
#include "log.h"
#include "core/netns.h"
#include "enforce_tc.skel.h"
#include "enforce_xdp.skel.h"

#define ATTACH_MAX 64
/* An interface's hooks: 0 ingress (TC, or XDP), 1 TC egress, and with XDP
 * 2, TC ingress for the resets XDP hands over (vigil_tc_xdp_ingress). */
#define HOOKS 3
/* Debian 12's linux/bpf.h predates TCX (Linux 6.6); the kernel's values. */
#define VIGIL_BPF_TCX_INGRESS 46
#define VIGIL_BPF_TCX_EGRESS 47
#define VIGIL_BPF_F_BEFORE (1U << 3)
/* Without TCX: vigil's clsact filters, one per hook at this handle, first
 * in priority (as BPF_F_BEFORE puts the TCX links first). */
#define VIGIL_CLSACT_HANDLE 0x7669	/* "vi" */
#define VIGIL_CLSACT_PRIORITY 1

struct attachment {
	char netns[256];
	struct vigil_netns_id ns;
	char ifname[IF_NAMESIZE];
	int ifindex;
	bool xdp;
	unsigned made;		/* hooks (bit h for hook h: HOOKS) whose links this agent made */
	bool clsact;		/* without TCX: the interface has its clsact qdisc */
	int fd[3];		/* the links, held while the agent runs: a `vigil unpin`
				 * meanwhile ends them only when it stops */
};

struct vigil_enforce_tc {
	struct enforce_tc_bpf *tc;
	struct enforce_xdp_bpf *xdp;	/* NULL: this kernel refuses XDP */
	struct bpf_program *xdp_prog;	/* the XDP ingress program loaded */
	char pin_dir[256];
	struct attachment at[ATTACH_MAX];
	unsigned n;
	bool track_flows;
	bool tcx;		/* the kernel has TCX links; else clsact filters */
	struct vigil_flow_reset idle;	/* with track_flows: idle flows' resets */
};

/* The instances this agent has open (the --enforce-on one, the policy's):
 * an interface gets one of them, or the second would take the first's
 * links over with its own programs (and options). */
#define OPEN_MAX 4
static struct vigil_enforce_tc *open_set[OPEN_MAX];

/* The attachment of the interface that an instance has already, or NULL;
 * *owner is set to that instance. */
static struct attachment *enforced_by(uint64_t cookie, int ifindex, struct vigil_enforce_tc **owner)
{
	for (unsigned k = 0; k < OPEN_MAX; k++)
		for (unsigned i = 0; open_set[k] && i < open_set[k]->n; i++)
			if (open_set[k]->at[i].ns.cookie == cookie && open_set[k]->at[i].ifindex == ifindex) {
				*owner = open_set[k];
				return &open_set[k]->at[i];
			}
	return NULL;
}

/* The features the XDP object's programs give (docs/kernels.md). */
#define XDP_META "XDP metadata (bpf_xdp_adjust_meta in XDP programs)"
#define XDP_META_HAS "XDP hands resets to TC in the frame's metadata (by packet identity " \
	"where a driver has no room)"
#define XDP_META_NO "XDP hands resets to TC by packet identity (vigil_xdp_handoff)"
#define XDP_ENFORCE "XDP enforcement"
#define XDP_ENFORCE_NO "interfaces asked for with :xdp are enforced with TC ingress instead"

/* The XDP object, opened and loaded; meta: with the program that tags the
 * frame's metadata (vigil_xdp_ingress), else the one that hands resets
 * over by identity only. */
static int load_xdp(struct vigil_enforce_tc *e, const struct vigil_enforce_tc_opts *o, bool meta,
		    struct vigil_refusal *r)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = o->pin_dir);
	int err;

	memset(r, 0, sizeof(*r));
	e->xdp = enforce_xdp_bpf__open_opts(&oo);
	if (!e->xdp)
		return vlog_err(-errno, "cannot open the XDP enforcement object");
	if ((err = vigil_obj_prepare(e->xdp->obj, o->ring_size)))
		return err;
	e->xdp->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	e->xdp->rodata->vigil_track_flows = o->track_flows;
	bpf_program__set_autoload(e->xdp->progs.vigil_xdp_ingress, meta);
	bpf_program__set_autoload(e->xdp->progs.vigil_xdp_ingress_nometa, !meta);
	/* The test switch: the real program, refused as that kernel does. */
	if (meta && vigil_test_refuses("xdp_meta") &&
	    (err = vigil_prog_refuse_helper(e->xdp->progs.vigil_xdp_ingress, BPF_FUNC_xdp_adjust_meta)))
		return vlog_err(err, "VIGIL_TEST_REFUSE=xdp_meta: cannot rewrite vigil_xdp_ingress");
	err = vigil_skel_load_told(e->xdp->skeleton, r);
	if (!err)
		e->xdp_prog = meta ? e->xdp->progs.vigil_xdp_ingress : e->xdp->progs.vigil_xdp_ingress_nometa;
	return err;
}

/* XDP, as far as this kernel takes it: without the metadata helper, the
 * handoff by identity; without XDP at all, TC for :xdp interfaces. Never
 * fatal: TC enforcement does not depend on XDP. */
static void open_xdp(struct vigil_enforce_tc *e, const struct vigil_enforce_tc_opts *o)
{
	struct vigil_refusal r;
	char what[sizeof(r.why) + 100];
	bool meta_refused;
	int err = load_xdp(e, o, true, &r);

	if (!err) {
		vigil_kernel_feature(XDP_META, true, XDP_META_HAS);
		return;
	}
	/* Only this refusal turns to the other program: any other stops
	 * XDP, whichever program it names. */
	meta_refused = r.prog && r.helper && !strcmp(bpf_program__name(r.prog), "vigil_xdp_ingress");
	enforce_xdp_bpf__destroy(e->xdp);
	e->xdp = NULL;
	if (meta_refused) {
		snprintf(what, sizeof(what), XDP_META " (the verifier: %s)", r.why);
		vigil_kernel_lacks(what, XDP_META_NO);
		if (!(err = load_xdp(e, o, false, &r)))
			return;
		enforce_xdp_bpf__destroy(e->xdp);
		e->xdp = NULL;
	}
	snprintf(what, sizeof(what), XDP_ENFORCE " (%s: %s)",
		 r.prog ? bpf_program__name(r.prog) : "its load", r.why[0] ? r.why : strerror(-err));
	vigil_kernel_lacks(what, XDP_ENFORCE_NO);
}

int vigil_enforce_tc_open(struct vigil_enforce_tc **out, const struct vigil_enforce_tc_opts *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = o->pin_dir);
	struct vigil_enforce_tc *e;
	struct vigil_refusal r;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return vlog_refuse(-ENOMEM, "enforce: out of memory");
	if (snprintf(e->pin_dir, sizeof(e->pin_dir), "%s", o->pin_dir) >= (int)sizeof(e->pin_dir)) {
		free(e);
		return vlog_refuse(-ENAMETOOLONG, "enforce: pin folder name too long: %s", o->pin_dir);
	}
	e->tc = enforce_tc_bpf__open_opts(&oo);
	if (!e->tc) {
		err = vlog_err(-errno, "cannot open the TC enforcement object");
		goto fail;
	}
	if ((err = vigil_obj_prepare(e->tc->obj, o->ring_size)))
		goto fail;
	e->tc->rodata->vigil_wakeup_bytes = o->wakeup_bytes;
	e->tc->rodata->vigil_track_flows = o->track_flows;
	if ((err = vigil_skel_load_told(e->tc->skeleton, &r))) {
		vlog_err(err, "the kernel refuses TC enforcement (%s: %s): no packet enforcement, "
			 "vigild does not start (run with -v for the verifier log)",
			 r.prog ? bpf_program__name(r.prog) : "its load", r.why[0] ? r.why : "see -v");
		goto fail;
	}
	open_xdp(e, o);
	e->track_flows = o->track_flows;
	e->tcx = vigil_kernel_has_tcx();
	vigil_kernel_feature("TCX links (6.6+)", e->tcx, e->tcx ?
			     "TC enforcement is pinned links: it outlives the agent" :
			     "TC enforcement is netlink clsact filters, removed when vigild "
			     "stops: enforcement on interfaces does not outlive the agent");
	e->idle = (struct vigil_flow_reset){
		.build_fd = bpf_program__fd(e->tc->progs.vigil_tc_build),
		.flows_fd = bpf_map__fd(e->tc->maps.vigil_flows),
		.rules_fd = bpf_map__fd(e->tc->maps.vigil_rules),
		.pol4_fd = bpf_map__fd(e->tc->maps.vigil_pol4),
		.pol6_fd = bpf_map__fd(e->tc->maps.vigil_pol6),
	};
	for (unsigned k = 0; k <= OPEN_MAX; k++)
		if (k == OPEN_MAX) {
			err = vlog_refuse(-E2BIG, "enforce: too many instances");
			goto fail;
		} else if (!open_set[k]) {
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

/* A TC hook's direction: only hook 1 is egress (HOOKS). */
static bool is_egress(unsigned h)
{
	return h == 1;
}

static const char *hook_name(const struct attachment *a, unsigned h)
{
	return is_egress(h) ? "tc_egress" : h == 0 && a->xdp ? "xdp" : "tc_ingress";
}

static unsigned hooks_of(const struct attachment *a)
{
	return a->xdp ? HOOKS : 2;
}

static void hook_pin(char *out, size_t len, const struct vigil_enforce_tc *e,
		     const struct attachment *a, unsigned h)
{
	link_pin(out, len, e->pin_dir, a->ns.cookie, a->ifindex, hook_name(a, h));
}

/* Detaches a pinned link (also when another holder keeps it open) and
 * removes its pin. */
static void remove_link(const char *path)
{
	int fd = bpf_obj_get(path);

	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(path) && errno != ENOENT)
		vlog_err(-errno, "cannot remove %s", path);
}

static bool is_tc_hook(const struct attachment *a, unsigned h)
{
	return !(h == 0 && a->xdp);
}


static __u32 prog_id_of(int prog_fd);

/* The clsact filters of a's TC hooks in mask, in a's namespace. */
struct clsact_job {
	const struct vigil_enforce_tc *e;
	const struct attachment *a;
	unsigned mask;
};

/* In the namespace: removes vigil's filter from each hook in the mask, if
 * it still runs one of this instance's programs on a's interface (another
 * device may have its index now). */
static int clsact_detach_run(void *arg)
{
	const struct clsact_job *j = arg;
	const struct attachment *a = j->a;
	__u32 ours[3] = { prog_id_of(bpf_program__fd(j->e->tc->progs.vigil_tc_ingress)),
			  prog_id_of(bpf_program__fd(j->e->tc->progs.vigil_tc_egress)),
			  prog_id_of(bpf_program__fd(j->e->tc->progs.vigil_tc_xdp_ingress)) };
	uint64_t cookie;

	if (vigil_netns_cookie(&cookie) || cookie != a->ns.cookie)
		return 0;	/* the name leads to another namespace now */
	for (unsigned h = 0; h < hooks_of(a); h++) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a->ifindex,
			    .attach_point = is_egress(h) ? BPF_TC_EGRESS : BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, q, .handle = VIGIL_CLSACT_HANDLE,
			    .priority = VIGIL_CLSACT_PRIORITY);
		int err;

		if (!(j->mask & (1u << h)))
			continue;
		if (bpf_tc_query(&hook, &q) ||
		    (q.prog_id != ours[0] && q.prog_id != ours[1] && q.prog_id != ours[2]))
			continue;
		q.prog_id = 0;	/* a detach names the filter by handle and priority only */
		if ((err = bpf_tc_detach(&hook, &q)) && err != -ENOENT)
			vlog_err(err, "cannot remove the %s filter of %s in %s", hook_name(a, h),
				 a->ifname, a->netns);
	}
	return 0;
}

/* Removes a's links (or clsact filters): every hook, or only those this
 * agent made. */
static void take_back(const struct vigil_enforce_tc *e, struct attachment *a, bool only_made)
{
	struct clsact_job j = { .e = e, .a = a };
	char path[512];

	for (unsigned h = 0; h < hooks_of(a); h++) {
		if (only_made && !(a->made & (1u << h)))
			continue;
		if (!e->tcx && is_tc_hook(a, h)) {
			j.mask |= 1u << h;
			continue;
		}
		if (a->fd[h] >= 0)
			bpf_link_detach(a->fd[h]);
		hook_pin(path, sizeof(path), e, a, h);
		remove_link(path);
	}
	/* A namespace that is gone took its filters along. */
	if (j.mask && a->ifindex)
		vigil_netns_run(a->netns, clsact_detach_run, &j, NULL);
	a->made = 0;
}

static void close_fds(struct attachment *a)
{
	for (unsigned h = 0; h < HOOKS; h++) {
		if (a->fd[h] >= 0)
			close(a->fd[h]);
		a->fd[h] = -1;
	}
}

struct tc_job {
	struct vigil_enforce_tc *e;
	struct attachment *a;
};

/* BPF_PROG_QUERY as Linux 6.6 lays it out (libbpf 1.1 has no link_ids). */
struct tcx_query {
	__u32 target_ifindex;
	__u32 attach_type;
	__u32 query_flags;
	__u32 attach_flags;
	__u64 prog_ids;
	__u32 count;
	__u32 pad;
	__u64 prog_attach_flags;
	__u64 link_ids;
	__u64 link_attach_flags;
	__u64 revision;
};

/* Whether a TCX hook here holds link_id: 1 yes, 0 no, -errno. */
static int tcx_has_link(int ifindex, int attach_type, __u32 link_id)
{
	/* BPF_MPROG_MAX: a hook holds no more. The kernel fills link ids only
	 * when it is given program ids to fill too. */
	__u32 progs[64], links[64] = {};
	struct tcx_query q = { .target_ifindex = ifindex, .attach_type = attach_type,
			       .count = 64, .prog_ids = (__u64)(unsigned long)progs,
			       .link_ids = (__u64)(unsigned long)links };

	if (syscall(__NR_bpf, BPF_PROG_QUERY, &q, sizeof(q)))
		return errno == ENODEV ? 0 : -errno;
	for (__u32 i = 0; i < q.count && i < 64; i++)
		if (links[i] == link_id)
			return 1;
	return 0;
}

/* Whether the device here runs XDP program prog_id, in any mode: 1, 0 or
 * -errno. */
static int xdp_runs(int ifindex, __u32 prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	if (err)
		return err == -ENODEV ? 0 : err;
	return prog_id && (q.prog_id == prog_id || q.drv_prog_id == prog_id ||
			   q.skb_prog_id == prog_id || q.hw_prog_id == prog_id);
}

static __u32 prog_id_of(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) ? 0 : info.id;
}

/* In the namespace: whether the pinned link in fd is on this interface's
 * hook here (1), elsewhere or on a device that went (0), or -errno when
 * that cannot be told. A link follows its device into another namespace,
 * and another device may take its index here. A TCX hook lists its links;
 * XDP shows only programs, and one agent's program runs on every interface
 * it enforces on, so for XDP this is only a first check (see attach_hook). */
static int link_here(int fd, const struct attachment *a, int attach_type)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (attach_type == BPF_XDP)
		return xdp_runs(a->ifindex, info.prog_id);
	return tcx_has_link(a->ifindex, attach_type, info.id);
}

/* Makes prog's link on hook h and pins it at path. */
static int make_link(struct tc_job *j, unsigned h, int prog_fd, int attach_type, const char *path)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = attach_type == BPF_XDP ? 0 : VIGIL_BPF_F_BEFORE);
	struct attachment *a = j->a;
	const char *hook = hook_name(a, h);
	int fd = bpf_link_create(prog_fd, a->ifindex, attach_type, &lo), err;

	if (fd < 0) {
		err = -errno;
		return vlog_err(err, "cannot attach %s to %s in %s%s", hook, a->ifname, a->netns,
				attach_type != BPF_XDP ? (err == -EINVAL ? " (TCX needs Linux 6.6 or later)" : "") :
				" (another XDP program there? a vigil link pinned under another name: "
				"vigil unpin)");
	}
	if (bpf_obj_pin(fd, path)) {
		err = vlog_err(-errno, "cannot pin the %s link of %s in %s at %s", hook, a->ifname,
			       a->netns, path);
		bpf_link_detach(fd);
		close(fd);
		return err;
	}
	a->made |= 1u << h;
	a->fd[h] = fd;
	return 0;
}

/* Puts prog on hook h of the interface as a pinned link, first on the hook
 * (an enforcer that an earlier program's "pass" cannot bypass). A link an
 * earlier agent pinned there gets this agent's program in place: no moment
 * without enforcement, the same place on the hook. One that is elsewhere
 * now (its device went, or moved to another namespace) is detached and
 * made again; so is one that refuses the new program (after a gap, said). */
static int attach_hook(struct tc_job *j, unsigned h, int prog_fd, int attach_type)
{
	struct attachment *a = j->a;
	const char *hook = hook_name(a, h);
	char path[512];
	int fd, here, err;

	hook_pin(path, sizeof(path), j->e, a, h);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return make_link(j, h, prog_fd, attach_type, path);
	here = link_here(fd, a, attach_type);
	if (here < 0) {
		close(fd);
		return vlog_err(here, "cannot tell where the %s link pinned at %s is: left as it is",
				hook, path);
	}
	if (here) {
		err = bpf_link_update(fd, prog_fd, NULL);
		/* XDP: the program here must now be this agent's, or the link
		 * just updated was another device's. */
		if (!err && attach_type == BPF_XDP && xdp_runs(a->ifindex, prog_id_of(prog_fd)) != 1)
			err = -EXDEV;
		if (!err) {
			a->fd[h] = fd;
			return 0;
		}
		vlog_info("%s: the link %s (%d): detached and made again", path,
			  err == -EXDEV ? "was another device's" : "refuses this agent's program", err);
	} else {
		vlog_info("%s: the link is no longer on %s in %s (its device went or moved): made again",
			  path, a->ifname, a->netns);
	}
	bpf_link_detach(fd);
	close(fd);
	unlink(path);
	return make_link(j, h, prog_fd, attach_type, path);
}

/* In the namespace, without TCX: prog as vigil's clsact filter on hook h,
 * in place of one an earlier agent left there (atomically: no gap). */
static int clsact_attach(struct tc_job *j, unsigned h, int prog_fd)
{
	struct attachment *a = j->a;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = a->ifindex,
		    .attach_point = is_egress(h) ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = VIGIL_CLSACT_HANDLE,
		    .priority = VIGIL_CLSACT_PRIORITY, .prog_fd = prog_fd, .flags = BPF_TC_F_REPLACE);
	int err = a->clsact ? 0 : bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return vlog_err(err, "cannot add a clsact qdisc to %s in %s", a->ifname, a->netns);
	a->clsact = true;	/* one per interface, for both directions */
	if ((err = bpf_tc_attach(&hook, &opts)))
		return vlog_err(err, "cannot attach %s to %s in %s as a clsact filter",
				hook_name(a, h), a->ifname, a->netns);
	a->made |= 1u << h;
	return 0;
}

static int attach_tc(struct tc_job *j, unsigned h, int prog_fd)
{
	if (!j->e->tcx)
		return clsact_attach(j, h, prog_fd);
	return attach_hook(j, h, prog_fd, is_egress(h) ? VIGIL_BPF_TCX_EGRESS : VIGIL_BPF_TCX_INGRESS);
}

/* In the namespace: find the interface, then attach. 1: this instance has
 * it already, under another name of the namespace, which it now goes by. */
static int tc_job_run(void *arg)
{
	struct tc_job *j = arg;
	struct attachment *a = j->a, *had;
	struct vigil_enforce_tc *e = j->e, *owner = NULL;
	int ifindex = if_nametoindex(a->ifname), err;

	if (!ifindex)
		return vlog_refuse(-ENODEV, "no such interface %s in network namespace %s", a->ifname,
				a->netns);
	if ((err = vigil_netns_cookie(&a->ns.cookie)))
		return err;
	had = enforced_by(a->ns.cookie, ifindex, &owner);
	if (had && owner == e && had->xdp == a->xdp && !e->track_flows) {
		vlog_info("%s in %s: enforced on already, as %s in %s", a->ifname, a->netns,
			  had->ifname, had->netns);
		strcpy(had->netns, a->netns);	/* a reload that spells the namespace anew */
		return 1;
	}
	/* Named twice (a policy and --enforce-on): the second would take the
	 * first's links over with its own programs and options. */
	if (had)
		return vlog_refuse(-EEXIST, "%s in %s is enforced on already: name each interface once, "
				"in a policy or with --enforce-on", a->ifname, a->netns);
	a->ifindex = ifindex;
	if (a->xdp && !e->xdp) {
		vlog_info("%s in %s: asked for with XDP, which this kernel refuses (vigil status): "
			  "enforced with TC ingress instead", a->ifname, a->netns);
		a->xdp = false;
	}
	if (a->xdp)
		err = attach_hook(j, 0, bpf_program__fd(e->xdp_prog), BPF_XDP);
	else
		err = attach_tc(j, 0, bpf_program__fd(e->tc->progs.vigil_tc_ingress));
	if (!err)
		err = attach_tc(j, 1, bpf_program__fd(e->tc->progs.vigil_tc_egress));
	if (!err && a->xdp)
		err = attach_tc(j, 2, bpf_program__fd(e->tc->progs.vigil_tc_xdp_ingress));
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
		return vlog_refuse(-E2BIG, "flow tracking in more than %d namespaces",
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
		return vlog_refuse(-E2BIG, "enforce: more than %d interfaces", ATTACH_MAX);
	if (strlen(netns) >= sizeof(a->netns) || strlen(ifname) >= sizeof(a->ifname))
		return vlog_refuse(-ENAMETOOLONG, "enforce: name too long: %s/%s", netns, ifname);
	a = &e->at[e->n];
	memset(a, 0, sizeof(*a));
	strcpy(a->netns, netns);
	strcpy(a->ifname, ifname);
	a->xdp = xdp;
	a->fd[0] = a->fd[1] = a->fd[2] = -1;
	j.a = a;
	err = vigil_netns_run(netns, tc_job_run, &j, &a->ns);
	if (err == 1)
		return 0;
	if (err) {
		/* Half attached: what this agent made goes; a link it only
		 * updated stays, now with this agent's program. */
		take_back(e, a, true);
		close_fds(a);
		return err;
	}
	e->n++;
	if (e->track_flows && (err = watch_netns(e, a->netns)))
		return err;
	vlog_info("enforcing on %s in %s (%s ingress, TC egress%s)", ifname, netns,
		  !a->xdp ? "TC" : e->xdp_prog == e->xdp->progs.vigil_xdp_ingress ?
		  "XDP (resets through TC, handed over in metadata)" :
		  "XDP (resets through TC, handed over by packet identity)",
		  e->tcx ? "" : "; clsact filters, removed when vigild stops");
	return 0;
}

unsigned vigil_enforce_tc_count(const struct vigil_enforce_tc *e)
{
	return e ? e->n : 0;
}

void vigil_enforce_tc_rollback(struct vigil_enforce_tc *e, unsigned n)
{
	while (e && e->n > n) {
		struct attachment *a = &e->at[--e->n];

		take_back(e, a, true);
		close_fds(a);
	}
}

int vigil_enforce_tc_detach(struct vigil_enforce_tc *e, const char *netns, const char *ifname)
{
	if (e && e->track_flows)
		return -EBUSY;	/* its watcher holds the attachments' names */
	for (unsigned i = 0; e && i < e->n; i++) {
		struct attachment *a = &e->at[i];

		if (strcmp(a->netns, netns) || strcmp(a->ifname, ifname))
			continue;
		take_back(e, a, false);
		close_fds(a);
		vlog_info("no longer enforcing on %s in %s", ifname, netns);
		e->at[i] = e->at[--e->n];
		return 0;
	}
	return -ENOENT;
}

bool vigil_enforce_tc_owns(const struct vigil_enforce_tc *e, const char *name)
{
	char path[512], base[512];

	if (!e)
		return false;
	snprintf(base, sizeof(base), "%s/%s", e->pin_dir, name);
	for (unsigned i = 0; i < e->n; i++)
		for (unsigned h = 0; h < hooks_of(&e->at[i]); h++) {
			hook_pin(path, sizeof(path), e, &e->at[i], h);
			if (!strcmp(path, base))
				return true;
		}
	return false;
}

/* NETNS/IFNAME[:xdp] into buf: *netns, *ifname point into it. */
static int parse_spec(const char *spec, char buf[300], char **netns, char **ifname, bool *xdp)
{
	char *slash, *colon;

	*xdp = false;
	if (snprintf(buf, 300, "%s", spec) >= 300)
		return vlog_refuse(-ENAMETOOLONG, "--enforce-on %s: too long", spec);
	slash = strrchr(buf, '/');
	if (!slash || slash == buf || !slash[1])
		return vlog_refuse(-EINVAL, "--enforce-on %s: want NETNS/IFNAME[:xdp]", spec);
	*slash = 0;
	colon = strchr(slash + 1, ':');
	if (colon) {
		if (strcmp(colon, ":xdp"))
			return vlog_refuse(-EINVAL, "--enforce-on %s: unknown mode '%s'", spec, colon + 1);
		*colon = 0;
		*xdp = true;
	}
	*netns = buf;
	*ifname = slash + 1;
	return 0;
}

int vigil_enforce_spec_check(const char *spec)
{
	char buf[300], *netns, *ifname, why[400];
	bool xdp;
	int err = parse_spec(spec, buf, &netns, &ifname, &xdp);

	if (err)
		return err;
	if ((err = vigil_netns_check(netns, why, sizeof(why))))
		return vlog_refuse(err, "--enforce-on %s: %s", spec, why);
	return 0;
}

int vigil_enforce_tc_attach_spec(struct vigil_enforce_tc *e, const char *spec)
{
	char buf[300], *netns, *ifname;
	bool xdp;
	int err = parse_spec(spec, buf, &netns, &ifname, &xdp);

	return err ? err : vigil_enforce_tc_attach(e, netns, ifname, xdp);
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
		remove_link(path);
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
	for (unsigned k = 0; k < OPEN_MAX; k++)
		if (open_set[k] == e)
			open_set[k] = NULL;
	/* The links stay pinned: enforcement outlives the agent. Without TCX
	 * the TC hooks are filters this agent removes now, and the XDP links
	 * go too: their resets are built by the TC ingress program. */
	for (unsigned i = 0; i < e->n; i++) {
		if (!e->tcx)
			take_back(e, &e->at[i], false);
		close_fds(&e->at[i]);
	}
	enforce_tc_bpf__destroy(e->tc);
	enforce_xdp_bpf__destroy(e->xdp);
	free(e);
}
