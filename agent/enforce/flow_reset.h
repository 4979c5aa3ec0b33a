/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resets for flows that are idle when a reset rule lands. With no packet
 * crossing, the TC program has no trigger to turn into RSTs; the flow state
 * it kept (vigil_flows: each end's next seq, its ack, the interface and MAC
 * addresses its packets came with) is enough to build them. For each end, a
 * trigger as that end would send it is built here and handed to the TC
 * builder (vigil_tc_build, through BPF_PROG_TEST_RUN: the same code that
 * answers real packets), and the RST it returns is sent out the interface
 * toward that end with a packet socket opened inside the namespace.
 *
 * The flow is then marked reset, so whatever its ends still send is answered
 * by the TC program. A watcher thread notices reset rules landing by reading
 * vigil_rules every 50 ms, and at once when the policy code calls
 * vigil_flow_reset_kick after it wrote the maps. The RSTs carry vigil's own
 * mark (VIGIL_OWN_REPLY_MARK), so the egress hook they leave by lets them by.
 */
#ifndef VIGIL_FLOW_RESET_H
#define VIGIL_FLOW_RESET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <vigil/events.h>

#define VIGIL_FLOW_RESET_NS_MAX 16

struct vigil_flow_reset {
	int build_fd;		/* vigil_tc_build */
	int flows_fd, rules_fd, pol4_fd, pol6_fd;
	const char *netns[VIGIL_FLOW_RESET_NS_MAX];	/* where flows are tracked */
	unsigned n_netns;
	uint8_t seen_action[VIGIL_RULES_MAX];	/* of each active slot, last look */
	pthread_t thread;
	bool running;
	bool primed;		/* seen_action holds a look already */
	volatile bool stop;
	uint64_t injected;	/* RSTs sent (gone out), all time */
};

/* Starts the watcher (the fds and namespaces filled in by the caller). */
int vigil_flow_reset_start(struct vigil_flow_reset *r);
void vigil_flow_reset_stop(struct vigil_flow_reset *r);
/* Wakes every watcher to look at the rules now (a policy just landed). */
void vigil_flow_reset_kick(void);
/* Resets every tracked flow whose first matching rule is reset rule id, in
 * every namespace; returns how many flows, or -errno. */
int vigil_flow_reset_rule(struct vigil_flow_reset *r, unsigned id);

#endif
