/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vigild shows operators over HTTP (lib/http_health.h): its metrics
 * in Prometheus's text format and its readiness, rendered on the event
 * loop from the parts' own counters (docs/operations.md lists every
 * series). Rendering reads; it changes nothing and waits on nothing.
 */
#ifndef VIGIL_AGENT_METRICS_H
#define VIGIL_AGENT_METRICS_H

#include <stdbool.h>

struct vigil_buf;
struct vigil_bpf;
struct vigil_net;
struct vigil_pump;
struct vigil_sink_local;
struct vigil_sink_stream;
struct vigil_loss_monitor;
struct vigil_policy_state;
struct vigil_metrics_binary;

/* The running agent, as the composition root holds it. */
struct vigil_agent_view {
	const struct vigil_bpf *bpf;
	const struct vigil_net *net;
	const struct vigil_pump *pump;
	const struct vigil_sink_local *local;
	struct vigil_sink_stream *streams;
	unsigned nstreams;
	const struct vigil_loss_monitor *loss;
	struct vigil_policy_state *policy;
	const struct vigil_metrics_binary *binary;	/* --metrics-label binary; NULL: off */
	bool started;		/* attached, policy in force */
};

void vigil_agent_metrics(struct vigil_buf *out, const struct vigil_agent_view *v);
/* /readyz: true when ready; json says the state (ready, degraded, not
 * ready) and each reason. */
bool vigil_agent_readiness(struct vigil_buf *json, const struct vigil_agent_view *v);

#endif
