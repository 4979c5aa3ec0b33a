/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet path of enforcement: vigil's TC programs (TCX ingress and
 * egress, bpf/enforce_tc.bpf.c), or XDP for ingress (bpf/enforce_xdp.bpf.c),
 * on the interfaces the policy names, in the network namespace it names.
 *
 * Interface indexes repeat across namespaces, so every attach runs in a
 * short-lived thread that has joined the intended namespace
 * (setns is per thread; the agent's own thread never moves). The root
 * namespace, where the node's own connections live, is refused unless it is
 * named explicitly as /proc/1/ns/net.
 *
 * Each hook is a BPF link (TCX for TC, an XDP link) pinned in the agent's
 * pin folder, so enforcement outlives the agent: a stopped or crashed agent
 * leaves the programs running on the pinned policy maps, and the next one
 * gives its own programs to the same links. What the next agent's
 * configuration no longer names, it removes at start
 * (vigil_enforce_links_prune), and a policy reload what the new policy no
 * longer names (vigil_enforce_tc_detach); `vigil unpin` removes everything.
 * Before Linux 6.6 (no TCX) the TC hooks are netlink clsact filters, which
 * the agent removes when it stops (docs/resets.md).
 */
#ifndef VIGIL_ENFORCE_TC_H
#define VIGIL_ENFORCE_TC_H

#include <stdbool.h>
#include <stdint.h>
#include "pins.h"	/* VIGIL_ENFORCE_LINK_PREFIX */

struct vigil_enforce_tc;

struct vigil_enforce_tc_opts {
	const char *pin_dir;	/* the agent's: ring and policy maps shared */
	uint64_t ring_size;
	uint64_t wakeup_bytes;
	bool track_flows;	/* keep per-flow seq state (a router, a bridge) */
};

/* Loads the TC and XDP objects; attaches nothing. */
int vigil_enforce_tc_open(struct vigil_enforce_tc **out, const struct vigil_enforce_tc_opts *o);
/* Attaches to ifname in netns (a name under /run/netns, or a path): TC on
 * ingress and egress, or with xdp, XDP on ingress and TC on egress. An
 * interface another instance of this agent enforces on is refused
 * (-EEXIST); one this instance has under another name of the namespace now
 * goes by this one. A failure leaves nothing this call made. */
int vigil_enforce_tc_attach(struct vigil_enforce_tc *e, const char *netns, const char *ifname,
			    bool xdp);
/* How many interfaces e has; vigil_enforce_tc_rollback(e, n) takes back
 * those attached since (the links it made, not those an earlier agent left,
 * which it only updated): for a reload refused after it attached some, and
 * with 0 for a start that failed. An instance that tracks flows goes on
 * watching the namespaces until it is closed. NULL e: nothing. */
unsigned vigil_enforce_tc_count(const struct vigil_enforce_tc *e);
void vigil_enforce_tc_rollback(struct vigil_enforce_tc *e, unsigned n);
/* Detaches and unpins what e attached to ifname in netns (-ENOENT: none).
 * Not for an instance that tracks flows (-EBUSY): its watcher holds the
 * names. */
int vigil_enforce_tc_detach(struct vigil_enforce_tc *e, const char *netns, const char *ifname);
/* "NETNS/IFNAME[:xdp]", as --enforce-on takes it. */
int vigil_enforce_tc_attach_spec(struct vigil_enforce_tc *e, const char *spec);
/* Before anything is loaded: the spec's spelling and that its namespace
 * exists (the interface is looked up in it only when attaching). */
int vigil_enforce_spec_check(const char *spec);
/* Whether e attached the link pinned as name (in its pin folder). NULL e:
 * false. */
bool vigil_enforce_tc_owns(const struct vigil_enforce_tc *e, const char *name);
/* Removes the enforcement links pinned in pin_dir that none of the n
 * instances (some may be NULL) attached: an earlier agent's, for interfaces
 * this one does not name. Returns how many. */
int vigil_enforce_links_prune(const char *pin_dir, struct vigil_enforce_tc *const *keep, unsigned n);
/* Frees; the links stay pinned and running (without TCX, the filters and
 * XDP links are removed). */
void vigil_enforce_tc_close(struct vigil_enforce_tc *e);

#endif
