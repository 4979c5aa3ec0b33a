/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's listening sockets. A TCP listener that cannot accept for
 * want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) would be
 * reported readable again at once, forever, with the connection still in
 * its backlog: it is paused instead (taken out of epoll's read set) and
 * tried again after a backoff, 50 ms doubling to 1 s, until an accept
 * succeeds. The waiting peers stay in the kernel's backlog meanwhile.
 */
#ifndef VIGIL_COLLECTOR_LISTEN_H
#define VIGIL_COLLECTOR_LISTEN_H

#include <stdbool.h>
#include <stdint.h>

struct collector;
struct ssl_ctx_st;

struct listener {
	int kind;		/* EP_LISTEN_TCP or EP_LISTEN_UDP: first, as in every epoll item */
	int fd;
	bool paused;		/* accept() ran out of resources: not in epoll's read set */
	double resume_at;	/* when a paused listener is tried again */
	double backoff;		/* the pause after the next failure */
	double paused_since;	/* start of the episode */
	uint64_t pauses;	/* episodes */
	uint64_t refused;	/* accept() failures for want of resources */
	struct ssl_ctx_st *tls;	/* tls://: every connection speaks TLS (conn_tls.h) */
	char url[80];		/* as bound: the port a port 0 got */
};

/* Opens, binds and registers a listener for url (tcp://, tls:// or
 * udp://); tls: the TLS context a tls:// listener needs. A listener in
 * clear text on an address other than loopback is warned about, once. */
int collector_listen(struct collector *c, const char *url, struct ssl_ctx_st *tls,
		     struct listener *l);
/* True for a tls:// URL. */
bool collector_listen_tls(const char *url);
/* Accepts every waiting connection; pauses l when it runs out of resources. */
void collector_accept(struct collector *c, struct listener *l);
/* Puts back in epoll's read set every paused listener whose backoff is over;
 * the milliseconds until the next one is due, at most max_ms. */
int collector_listen_resume(struct collector *c, struct listener *ls, int n, int max_ms);

#endif
