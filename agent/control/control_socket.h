/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Serves the control socket (lib/control.h) from the agent's main loop, and
 * re-reads the policy on SIGHUP: `vigil policy load|list|reload`. Requests
 * are served between ring polls and nothing here waits: a connection waits
 * in clients[] until its request has come (polled each tick, read with
 * MSG_DONTWAIT) or its deadline passes. A request's own work is bounded by
 * the policy file limits (lib/policy_parse.c). An "events" request
 * ("events\0vigil" or "events\0tetragon") is answered '0' and its connection
 * kept: the agent's events follow on it (agent/sinks/subscribers.h).
 */
#ifndef VIGIL_AGENT_CONTROL_H
#define VIGIL_AGENT_CONTROL_H

#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
struct vigil_buf;
struct vigil_policy_state;
struct vigil_subscribers;

/* How long a connected client may take to send its request, and how many
 * may wait at once (the oldest gives way to a new one). */
#define VIGIL_CONTROL_CLIENT_MS 2000
#define VIGIL_CONTROL_CLIENTS 16

struct vigil_control_client {
	int fd;
	uint64_t deadline_ms;
};

#define VIGIL_CONTROL_PEERS 8

struct vigil_control {
	int fd;
	/* Where vigild streams to (--send): a rule that would refuse that
	 * traffic is warned about at every load. */
	struct sockaddr_storage peers[VIGIL_CONTROL_PEERS];
	int peer_socktype[VIGIL_CONTROL_PEERS];
	const char *peer_url[VIGIL_CONTROL_PEERS];
	unsigned n_peers;
	/* vigild enforces on interfaces of its own (--enforce-on): a rule that
	 * acts on packets only has somewhere to act. */
	bool packet_path;
	struct vigil_control_client clients[VIGIL_CONTROL_CLIENTS];
	unsigned n_clients;
	char *req;	/* VIGIL_CONTROL_MSG_MAX bytes, for the request being read */
	char path[108];
	struct vigil_policy_state *policy;	/* the composition root's (agent/vigild.c) */
	/* What `vigil status` shows of the running agent, a line each: its
	 * streams (--send), its records by kind, what the kernel lacks
	 * (the "streams" verb, its first use); NULL: nothing. */
	void (*describe_streams)(void *ctx, struct vigil_buf *out);
	void *streams_ctx;
	volatile sig_atomic_t *hup;	/* set by the SIGHUP handler */
	/* `vigil events`: an "events" request's connection stays open and
	 * becomes a subscriber here (NULL: refused). */
	struct vigil_subscribers *subs;
};

/* Notes the --send URLs (before vigil_control_start): loads warn about
 * rules that would refuse vigild's own stream. */
int vigil_control_peers(struct vigil_control *c, const char *const *urls, unsigned n);
/* Checks the --policy files before anything is loaded; logs what is wrong. */
int vigil_control_check(char *const *files, unsigned n);
/* Opens the control socket, serving requests on the policy state p (loaded,
 * not yet applied): first in a start, as it tells whether another agent
 * serves these pins. */
int vigil_control_start(struct vigil_control *c, const char *pin_dir, struct vigil_policy_state *p,
			volatile sig_atomic_t *hup);
/* Puts the files in force (none: an empty policy; a plain vigild observes
 * only, whatever an earlier agent left pinned) and warns about rules that
 * would refuse vigild's own streams. The last step of a start: a refused
 * policy leaves the one in force as it was. */
int vigil_control_enforce(struct vigil_control *c, char *const *files, unsigned n);
/* Handles a pending SIGHUP and waiting requests; cheap when there are none. */
void vigil_control_tick(struct vigil_control *c);
void vigil_control_close(struct vigil_control *c);

#endif
