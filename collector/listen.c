// SPDX-License-Identifier: GPL-2.0
/* See listen.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "collector.h"
#include "listen.h"
#include "log.h"

#define ACCEPT_BACKOFF_MIN 0.05
#define ACCEPT_BACKOFF_MAX 1.0

bool collector_listen_tls(const char *url)
{
	return !strncmp(url, "tls://", 6);
}

static bool loopback(const struct sockaddr_storage *ss)
{
	static const __u8 v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const __u8 *a6 = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)a6) ||
	       (!memcmp(a6, v4mapped, 12) && a6[12] == 127);
}

int collector_listen(struct collector *c, const char *url, struct ssl_ctx_st *tls,
		     struct listener *l)
{
	struct sockaddr_storage ss;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = l };
	unsigned len;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", tcp_url[512];
	const char *scheme;
	int type, one = 1, err;

	/* tls:// is TCP underneath: lib/stream_url.c parses it as such. */
	if (collector_listen_tls(url)) {
		if (snprintf(tcp_url, sizeof(tcp_url), "tcp://%s", url + 6) >= (int)sizeof(tcp_url))
			return vlog_refuse(-EINVAL, "--listen %s: too long", url);
		if ((err = vigil_stream_url(tcp_url, &type, &ss, &len)))
			return err;
		l->tls = tls;
	} else if ((err = vigil_stream_url(url, &type, &ss, &len))) {
		return err;
	}
	l->kind = type == SOCK_STREAM ? EP_LISTEN_TCP : EP_LISTEN_UDP;
	l->fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return vlog_err(-errno, "--listen %s: socket", url);
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (type == SOCK_DGRAM) {
		int rcvbuf = 8 << 20;	/* bursts of datagrams wait here */

		setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	if (bind(l->fd, (struct sockaddr *)&ss, len) ||
	    (type == SOCK_STREAM && listen(l->fd, 128)))
		return vlog_err(-errno, "--listen %s: cannot listen", url);
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, l->fd, &ev))
		return vlog_err(-errno, "--listen %s: epoll", url);
	getsockname(l->fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	scheme = l->tls ? "tls" : type == SOCK_STREAM ? "tcp" : "udp";
	snprintf(l->url, sizeof(l->url), ss.ss_family == AF_INET ? "%s://%s:%u" : "%s://[%s]:%u",
		 scheme, host, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	vlog_info("listening on %s", l->url);
	if (!l->tls && !loopback(&ss))
		vlog_info("warning: %s://%s listens in clear text: anyone who reaches it can send "
			  "events in any node's name, and every event crosses the network "
			  "readable. %s:// is for labs and for links already encrypted "
			  "(WireGuard, IPsec); use tls:// elsewhere", scheme, host, scheme);
	return 0;
}

/* A peer that vanishes (host down, link cut) without a FIN or RST would
 * hold its slot forever: keepalive probes after half the peer timeout of
 * silence, 4 of them an eighth apart, find it within about the timeout;
 * TCP_USER_TIMEOUT ends it when our acks stay unacknowledged that long
 * (and, set, it also bounds the probing). The socket then reports
 * ETIMEDOUT and the connection is closed like any other. */
static void peer_timeouts(int fd, double timeout)
{
	int on = 1, cnt = 4;
	int idle = timeout / 2 >= 1 ? (int)(timeout / 2) : 1;
	int intvl = timeout / 8 >= 1 ? (int)(timeout / 8) : 1;
	unsigned user_ms = timeout * 1000;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
}

static void set_read(struct collector *c, struct listener *l, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = l };

	if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, l->fd, &ev))
		vlog_err(-errno, "listener: epoll");
}

static void pause_listener(struct collector *c, struct listener *l, int err)
{
	double now = vigil_stream_now();

	l->refused++;
	l->backoff = l->backoff ? l->backoff * 2 : ACCEPT_BACKOFF_MIN;
	if (l->backoff > ACCEPT_BACKOFF_MAX)
		l->backoff = ACCEPT_BACKOFF_MAX;
	l->resume_at = now + l->backoff;
	set_read(c, l, false);
	l->paused = true;
	if (l->paused_since)
		return;	/* said once per episode */
	l->paused_since = now;
	l->pauses++;
	vlog_info("cannot accept a connection: %s (%u open): pausing the listener, "
		  "trying again every %.0f ms to %.0f s", strerror(-err), c->nconns,
		  ACCEPT_BACKOFF_MIN * 1000, ACCEPT_BACKOFF_MAX);
}

void collector_accept(struct collector *c, struct listener *l)
{
	/* A new connection may evict one, which waits in c->dead until the
	 * round ends: past half of it, the rest wait in the backlog (the
	 * listener stays readable) for the next round. See conn_room.c. */
	while (c->ndead < c->max_conns) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_listener(c, l, -errno);
			else if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		if (l->paused_since) {
			vlog_info("accepting again after %.1f s out of resources (%llu attempts refused)",
				  vigil_stream_now() - l->paused_since, (unsigned long long)l->refused);
			l->paused_since = 0;
			l->backoff = 0;
		}
		peer_timeouts(fd, c->peer_timeout);
		if (collector_conn_open(c, fd, (struct sockaddr *)&ss, l->tls) == -ENOMEM)
			vlog_info("refusing a connection: out of memory");
	}
}

int collector_listen_resume(struct collector *c, struct listener *ls, int n, int max_ms)
{
	double now = vigil_stream_now();
	int ms = max_ms;

	for (int i = 0; i < n; i++) {
		struct listener *l = &ls[i];

		if (!l->paused)
			continue;
		if (now >= l->resume_at) {
			l->paused = false;	/* the next accept() tells */
			set_read(c, l, true);
		} else if ((l->resume_at - now) * 1000 + 1 < ms) {
			ms = (l->resume_at - now) * 1000 + 1;
		}
	}
	return ms;
}
