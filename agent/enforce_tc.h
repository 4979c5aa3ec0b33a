/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The packet path of enforcement: vigil's TC programs (clsact ingress and
 * egress, bpf/enforce_tc.bpf.c), or XDP for ingress (bpf/enforce_xdp.bpf.c),
 * on the interfaces the policy names, in the network namespace it names.
 *
 * Interface indexes repeat across namespaces, so every attach and detach
 * runs in a short-lived thread that has joined the intended namespace
 * (setns is per thread; the agent's own thread never moves). The root
 * namespace, where the node's own connections live, is refused unless it is
 * named explicitly as /proc/1/ns/net.
 *
 * What is attached here is detached by vigil_enforce_tc_close: netlink TC
 * filters are not links and cannot be pinned, so they go with the agent.
 */
#ifndef VIGIL_ENFORCE_TC_H
#define VIGIL_ENFORCE_TC_H

#include <stdbool.h>
#include <stdint.h>

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
 * ingress and egress, or with xdp, XDP on ingress and TC on egress. */
int vigil_enforce_tc_attach(struct vigil_enforce_tc *e, const char *netns, const char *ifname,
			    bool xdp);
/* "NETNS/IFNAME[:xdp]", as --enforce-on takes it. */
int vigil_enforce_tc_attach_spec(struct vigil_enforce_tc *e, const char *spec);
/* Detaches everything attached, then frees. */
void vigil_enforce_tc_close(struct vigil_enforce_tc *e);

#endif
