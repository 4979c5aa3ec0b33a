// SPDX-License-Identifier: GPL-2.0
/* See enforce_carried.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "enforce/enforce_carried.h"
#include "core/iter_drain.h"
#include "core/feature_load.h"
#include "core/kernel_features.h"
#include "core/loader.h"
#include "log.h"
#include "core/netns.h"
#include "enforce/rule_maps.h"
#include "enforce_carried.skel.h"

#define AF_PACKET_ 17
#define AF_INET 2
#define AF_INET6 10
#define CARRIED_MAX 4096	/* as vigil_carried's max_entries */

struct carried_target {	/* as in bpf/enforce_carried.bpf.c */
	uint64_t netns_cookie;
	uint32_t destroyed;
	uint32_t pad;
};

struct destroy_job {
	struct enforce_carried_bpf *obj;
	uint64_t netns_cookie;
	uint32_t destroyed;
};

/* Inside the namespace: the destroy iterators walk it, touching only the
 * sockets the scan recorded for it. */
static int destroy_here(void *arg)
{
	struct destroy_job *j = arg;
	struct carried_target t = { .netns_cookie = j->netns_cookie };
	int map = bpf_map__fd(j->obj->maps.carried_target);
	uint32_t zero = 0;
	uint64_t here;
	int err;

	if ((err = vigil_netns_cookie(&here)))
		return vlog_err(err, "cannot read the network namespace's cookie");
	if (here != j->netns_cookie)
		return vlog_refuse(-ESRCH, "the namespace changed under the process that held the socket");
	if (bpf_map_update_elem(map, &zero, &t, 0))
		return vlog_err(-errno, "cannot set the carried-socket target");
	err = vigil_iter_drain(j->obj->progs.carried_destroy_tcp);
	if (!err)
		err = vigil_iter_drain(j->obj->progs.carried_destroy_udp);
	if (err)
		vlog_err(err, "carried-socket iterator failed");
	if (!bpf_map_lookup_elem(map, &zero, &t))
		j->destroyed = t.destroyed;
	return err;
}

static const struct vigil_rule *rule_of(const struct vigil_policy_state *s, uint32_t id)
{
	for (unsigned i = 0; i < s->in_force.n_rules; i++)
		if (s->slot[i] == id)
			return &s->in_force.rules[i];
	return NULL;
}

static bool names_root(const struct vigil_rule *r)
{
	for (unsigned i = 0; r && i < r->n_netns; i++)
		if (!strcmp(r->netns[i], VIGIL_NETNS_ROOT))
			return true;
	return false;
}

static bool same_ns(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The destroy pass for the namespace of entry i, once: later entries of
 * the same namespace are marked done. Returns how many it destroyed (-errno:
 * none; 0 also when the namespace is the root one, which the rule must name
 * in netns to be touched). */
static int destroy_ns(struct vigil_policy_state *s, const struct vigil_carried *v, unsigned n,
		      unsigned i, bool *done)
{
	const struct vigil_rule *r = rule_of(s, v[i].rule_id);
	struct destroy_job j = { .obj = s->carried, .netns_cookie = v[i].netns_cookie };
	char path[64];
	const char *ns = path;
	int err;

	for (unsigned k = i; k < n; k++)
		if (v[k].netns_cookie == v[i].netns_cookie && v[k].family != AF_PACKET_)
			done[k] = true;
	snprintf(path, sizeof(path), "/proc/%u/ns/net", v[i].pid);
	if (same_ns(path, VIGIL_NETNS_ROOT)) {
		if (!names_root(r)) {
			vlog_info("deny rule '%s': pid %u holds a socket made outside its cgroup, in the "
				  "root network namespace, which the rule does not name in netns: "
				  "left alone", r ? r->name : "?", v[i].pid);
			return 0;
		}
		ns = VIGIL_NETNS_ROOT;
	}
	err = vigil_netns_run(ns, destroy_here, &j, NULL);
	if (err)
		return err;
	vlog_info("deny rule '%s': %u sockets carried into its cgroup destroyed (pid %u's namespace)",
		  r ? r->name : "?", j.destroyed, v[i].pid);
	return j.destroyed;
}

/* Removes the entries of family fam (0: every one); only_reported: only
 * those the agent has handled already. */
static void forget(int map, uint16_t fam, bool only_reported)
{
	struct vigil_carried v;
	uint64_t key, next;

	for (int more = !bpf_map_get_next_key(map, NULL, &next); more;) {
		key = next;
		more = !bpf_map_get_next_key(map, &key, &next);
		if (fam || only_reported) {
			if (bpf_map_lookup_elem(map, &key, &v) || (fam && v.family != fam) ||
			    (only_reported && !v.reported))
				continue;
		}
		bpf_map_delete_elem(map, &key);
	}
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static uint32_t found_so_far(const struct vigil_policy_state *s)
{
	return __atomic_load_n(&s->carried->bss->carried_found, __ATOMIC_ACQUIRE);
}

/*
 * What the scan and the send and receive hooks recorded: packet sockets
 * reported, inet sockets destroyed, one pass per namespace. The destroy
 * pass forgets what it destroyed; what stays (gone meanwhile, left alone
 * in the root namespace, a namespace that could not be joined) is marked
 * reported, so a hidden socket used again is not logged at each use: the
 * next rescan forgets those and judges them afresh.
 */
static int handle_recorded(struct vigil_policy_state *s)
{
	static struct vigil_carried vals[CARRIED_MAX];
	static uint64_t keys[CARRIED_MAX];
	static bool done[CARRIED_MAX];
	int map = bpf_map__fd(s->carried->maps.vigil_carried);
	uint64_t key, next;
	unsigned n = 0;
	int total = 0, err = 0;

	for (int more = !bpf_map_get_next_key(map, NULL, &next); more && n < CARRIED_MAX;) {
		key = next;
		more = !bpf_map_get_next_key(map, &key, &next);
		if (bpf_map_lookup_elem(map, &key, &vals[n]) || vals[n].reported)
			continue;
		keys[n] = key;
		done[n] = false;
		n++;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct vigil_rule *r = rule_of(s, vals[i].rule_id);

		if (vals[i].family != AF_PACKET_)
			continue;
		vlog_info("deny rule '%s': pid %u holds a packet socket (AF_PACKET), which deny does "
			  "not cover (docs/policy.md)", r ? r->name : "?", vals[i].pid);
	}
	for (unsigned i = 0; i < n; i++) {
		int e;

		if (done[i] || vals[i].family == AF_PACKET_)
			continue;
		e = destroy_ns(s, vals, n, i, done);
		if (e < 0)
			err = e;
		else
			total += e;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct vigil_rule *r = rule_of(s, vals[i].rule_id);
		struct vigil_carried v;

		if (bpf_map_lookup_elem(map, &keys[i], &v)) {	/* destroyed */
			if (vals[i].in_use)
				vlog_info("deny rule '%s': pid %u sent or received on a socket made "
					  "outside its cgroup, to port %u: destroyed",
					  r ? r->name : "?", vals[i].pid, vals[i].dport);
			continue;
		}
		v.reported = 1;
		bpf_map_update_elem(map, &keys[i], &v, BPF_EXIST);
	}
	return err ? err : total;
}

int vigil_deny_carried_scan(struct vigil_policy_state *s, bool fresh)
{
	struct timespec t0;
	uint32_t found = found_so_far(s);
	int map = bpf_map__fd(s->carried->maps.vigil_carried);
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->carried_next = t0.tv_sec + VIGIL_CARRIED_RESCAN_S;
	/* Inet sockets handled and still there are judged afresh; packet
	 * sockets stay known (reported once) until the policy changes. */
	forget(map, fresh ? 0 : AF_INET, !fresh);
	forget(map, fresh ? 0 : AF_INET6, !fresh);
	if ((err = vigil_iter_drain(s->carried->progs.carried_scan)))
		return vlog_err(err, "carried-socket scan failed");
	vlog_debug("deny: carried-socket scan of every task's files took %.3f ms", ms_since(&t0));
	s->carried_found = found;
	return handle_recorded(s);
}

/* The send and receive hooks run while a deny rule is in force (they cost
 * a little at every socket call of the machine), not otherwise. */
static int watch(struct vigil_policy_state *s, bool on)
{
	struct enforce_carried_bpf *o = s->carried;

	if (!on) {
		bpf_link__destroy(o->links.carried_send);
		bpf_link__destroy(o->links.carried_recv);
		o->links.carried_send = o->links.carried_recv = NULL;
		return 0;
	}
	if (!o->links.carried_send && !(o->links.carried_send = bpf_program__attach(o->progs.carried_send)))
		return vlog_err(-errno, "cannot attach the carried-socket send hook");
	if (!o->links.carried_recv && !(o->links.carried_recv = bpf_program__attach(o->progs.carried_recv)))
		return vlog_err(-errno, "cannot attach the carried-socket receive hook");
	return 0;
}

int vigil_deny_carried_landed(struct vigil_policy_state *s)
{
	int err;

	if (!s->carried)
		return 0;
	err = watch(s, s->carried_rescan);
	if (s->carried_rescan) {
		int e = vigil_deny_carried_scan(s, true);

		if (!err && e < 0)
			err = e;
	}
	return err;
}

void vigil_deny_carried_tick(struct vigil_policy_state *s)
{
	struct timespec now;
	uint32_t found;

	if (!s->carried_rescan || !s->carried)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec >= s->carried_next) {
		vigil_deny_carried_scan(s, false);
		return;
	}
	found = found_so_far(s);
	if (found == s->carried_found)
		return;
	/* Read before the pass: a socket recorded during it is handled by
	 * the next tick. */
	s->carried_found = found;
	handle_recorded(s);
}

int vigil_deny_carried_init(struct vigil_policy_state *s, uint64_t ring_size)
{
	int err;

	/* Before 6.5: deny rules still refuse what the cgroup's hooks see
	 * (docs/kernels.md). */
	if (!vigil_kernel_has_kfunc("bpf_sock_destroy")) {
		vigil_kernel_lacks("bpf_sock_destroy kfunc (6.5+)",
				   "sockets carried into a denied cgroup are not ended (the cgroup's "
				   "hooks still refuse what they see)");
		return 0;
	}
	if ((err = vigil_skel_open(enforce_carried, &s->carried, s->pin_dir, ring_size)))
		return err;
	/* The BTF said yes; the verifier decides. A refusal turns this
	 * part off alone, said in one line (-v: the verifier's log). */
	if (!vigil_skel_load_feature(s->carried->skeleton, "bpf_sock_destroy kfunc (6.5+)",
				     "sockets carried into a denied cgroup are ended",
				     "sockets carried into a denied cgroup are not ended (the cgroup's hooks still refuse what they see)")) {
		enforce_carried_bpf__destroy(s->carried);
		s->carried = NULL;
	}
	return 0;
}

void vigil_deny_carried_close(struct vigil_policy_state *s)
{
	enforce_carried_bpf__destroy(s->carried);
	s->carried = NULL;
	s->carried_rescan = false;
}
