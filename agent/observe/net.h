/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network observation and periodic reports: loads bpf/net.bpf.c and
 * bpf/report.bpf.c beside the core's objects, on the same pins and ring,
 * writes their run-time settings, arms the report timer, and marks the TCP
 * sockets that existed before the agent in every network namespace. It
 * observes only: nothing here refuses, drops or destroys anything.
 */
#ifndef VIGIL_AGENT_NET_H
#define VIGIL_AGENT_NET_H

#include <stdbool.h>
#include <stdint.h>

struct net_bpf;
struct report_bpf;
struct vigil_bpf;

struct vigil_net_opts {
	uint64_t report_interval_ns;	/* 0: no reports */
	bool report_only;	/* reports only: no per-connection events */
	bool no_listen;		/* no events about listening sockets */
	bool no_loopback;	/* no events when both ends are loopback */
	uint32_t max_sockets;	/* socket table entries; 0: the pinned table's, or the build's */
	bool no_io_hooks;	/* owners named at accept(), not at the first send or receive */
};

#define VIGIL_REPORT_INTERVAL_DEFAULT_S 10

struct vigil_net {
	struct net_bpf *net;
	struct report_bpf *report;
	bool resumed;	/* programs were running already, pinned */
};

int vigil_net_load(struct vigil_net *n, const struct vigil_bpf *b, const struct vigil_net_opts *o);
/* Marks the TCP sockets of every network namespace that predate the agent
 * (socket iterator, run from a thread that joins each namespace in turn). */
int vigil_net_scan_sockets(struct vigil_net *n);
void vigil_net_close(struct vigil_net *n);
/* Once the start cannot fail: detaches the owner hooks an earlier agent
 * attached that these options do not want (vigil_obj_detach_unwanted). */
int vigil_net_detach_unwanted(struct vigil_net *n, const char *pin_dir);

#endif
