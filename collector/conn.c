// SPDX-License-Identifier: GPL-2.0
/*
 * Agent connections: reassembly of records across reads in a fixed buffer,
 * the hello, acks. A connection costs CONN_BUF bytes and one struct, never
 * more, whatever the peer sends: a record can never be longer than
 * VIGIL_STREAM_REC_MAX, and the buffer holds several. On tls:// the same
 * path reads and acks through conn_tls.h (plus its session, bounded too);
 * clear text pays one test of k->tls per read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "collector.h"
#include "conn_tls.h"
#include "log.h"

#define BATCH_FLUSH (1u << 20)

_Static_assert(CONN_BUF >= 4 * VIGIL_STREAM_REC_MAX, "a connection buffer holds any record");

_Static_assert(ADDR_MAX >= INET6_ADDRSTRLEN, "an address fits");

/* host: the address alone (what an identity is bound to); peer: with port. */
static void peer_name(const struct sockaddr *sa, char addr[ADDR_MAX], char *peer, size_t n)
{
	strcpy(addr, "?");
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, addr, ADDR_MAX);
		snprintf(peer, n, "%s:%u", addr, ntohs(s->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, addr, ADDR_MAX);
		snprintf(peer, n, "[%s]:%u", addr, ntohs(s->sin6_port));
	} else {
		snprintf(peer, n, "?");
	}
}

int collector_conn_open(struct collector *c, int fd, const struct sockaddr *sa,
			struct ssl_ctx_st *tls)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char host[ADDR_MAX], peer[64];
	struct conn *k;
	__u8 addr[16];
	int err;

	collector_conn_addr(sa, addr);
	peer_name(sa, host, peer, sizeof(peer));
	if (tls && !collector_handshake_allowed(c, addr, host)) {
		c->refused++;
		close(fd);
		return -ECONNREFUSED;
	}
	if ((err = collector_conn_room(c, addr))) {
		c->refused++;
		close(fd);
		return err;
	}
	k = calloc(1, sizeof(*k));
	if (k)
		k->buf = malloc(CONN_BUF);
	if (!k || !k->buf) {
		free(k);
		close(fd);
		return -ENOMEM;
	}
	k->kind = EP_CONN;
	k->fd = fd;
	k->events = EPOLLIN;
	if (tls && conn_tls_open(k, tls)) {
		free(k->buf);
		free(k);
		close(fd);
		return -ENOMEM;
	}
	k->opened = k->last_rx = vigil_stream_now();
	memcpy(k->addr, addr, 16);
	memcpy(k->host, host, sizeof(k->host));
	memcpy(k->peer, peer, sizeof(k->peer));
	ev.data.ptr = k;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		err = -errno;
		conn_tls_free(k);
		free(k->buf);
		free(k);
		close(fd);
		return err;
	}
	c->conns[c->nconns++] = k;
	vlog_debug("connection from %s", k->peer);
	return 0;
}

void collector_conn_close(struct collector *c, struct conn *k, const char *why)
{
	for (unsigned i = 0; i < c->nconns; i++)
		if (c->conns[i] == k) {
			c->conns[i] = c->conns[--c->nconns];
			break;
		}
	if (why)
		vlog_info("closing %s%s%s: %s", k->peer, k->agent ? " from " : "",
			  k->agent ? k->agent->fmt.node_name : "", why);
	if (k->agent && k->agent->conn == k) {
		k->agent->conn = NULL;
		k->agent->last_seen = vigil_stream_now();
	}
	close(k->fd);
	k->fd = -1;
	/* Freed after this round of epoll events, which may still name it. */
	c->dead[c->ndead++] = k;
}

void collector_conn_reap(struct collector *c)
{
	while (c->ndead) {
		struct conn *k = c->dead[--c->ndead];

		conn_tls_free(k);
		free(k->buf);
		free(k);
	}
}

static void hostile(struct collector *c, struct conn *k, const char *why)
{
	c->closed_hostile++;
	collector_conn_close(c, k, why);
}

/* A tls:// peer refused: counted by reason, then closed as hostile. */
static void tls_refused(struct collector *c, struct conn *k, enum conn_tls_refusal r,
			const char *why)
{
	c->tls_refusals[r]++;
	hostile(c, k, why);
}

/* Tells the agent why its hello is refused, before the caller closes: a
 * refusal frame (docs/stream.md, "Refusals"), best effort. Bytes it sent
 * meanwhile are read and dropped first (a bounded amount): a close with
 * bytes unread resets the connection, and the reset can discard the
 * refusal before the agent reads it. */
static void tell_refusal(struct conn *k, enum vigil_stream_refusal code)
{
	struct vigil_stream_ack f;

	vigil_stream_refusal_build(&f, code);
	if (k->tls)
		conn_tls_ack(k, &f, sizeof(f));
	else
		send(k->fd, &f, sizeof(f), MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(k->fd, SHUT_WR);
	for (int i = 0; i < 16 && recv(k->fd, k->buf, CONN_BUF, MSG_DONTWAIT) > 0; i++)
		;
}

/* Who may take an identity (boot id, ring id); a may be NULL (a stream not
 * loaded, perhaps in the state file). Over TLS it is bound to the
 * certificate name that first proved it, also across collector restarts:
 * another name may never take it, nor may a plain connection (a stream
 * proved over TLS is not taken over in clear), whatever the address; a
 * certificate takes a stream that was only heard in clear. Without
 * authentication (docs/stream.md) it is bound to the address that proved
 * it: a connection from elsewhere may not take it over while the owner is
 * connected, nor within --rebind-after of its leaving. A restart of the
 * agent on the same host (or with the same certificate) replaces its old
 * connection. */
static const char *identity_taken(const struct collector *c, const struct agent *a,
				  const struct conn *k)
{
	const __u8 *bound = collector_cert_bound(c, a, k->hello.boot_id, k->hello.ring_id);
	const char *name = conn_tls_name(k);
	__u8 sha[32];

	if (bound && !name)
		return "was proved over TLS: a clear-text connection may not take it";
	if (bound) {
		conn_tls_name_sha256(name, sha);
		return memcmp(bound, sha, 32) ? "was proved by another certificate name" : NULL;
	}
	if (!a || name || !a->owner[0] || !strcmp(a->owner, k->host))
		return NULL;
	if (a->conn)
		return "is connected from another address";
	if (vigil_stream_now() - a->last_seen < c->rebind_after)
		return "was connected from another address within --rebind-after";
	return NULL;
}

/* Over TLS: the hello names the node its certificate names, and who it is
 * is logged. In clear text: the hello may not name a node a certificate
 * proved (a tcp:// listener beside a tls:// one). */
static int tls_hello(struct collector *c, struct conn *k)
{
	const char *name = conn_tls_name(k);

	if (!k->tls && collector_name_certified(c, k->hello.node_name)) {
		vlog_info("%s: clear-text hello names node %s, which a certificate proved: refused",
			  k->peer, k->hello.node_name);
		tell_refusal(k, VIGIL_REFUSE_CLEAR_NAME);
		return hostile(c, k, "node name proved over TLS"), -EPERM;
	}
	if (!k->tls)
		return 0;
	if (strcmp(k->hello.node_name, name)) {
		vlog_info("%s: hello names node %s, its certificate %s: refused", k->peer,
			  k->hello.node_name, name);
		tell_refusal(k, VIGIL_REFUSE_NAME);
		return tls_refused(c, k, TLS_REFUSED_NAME,
				   "hello names another node than its certificate"), -EPERM;
	}
	vlog_info("agent %s (cert CN %s, DNS SAN %s, issuer %s) connected from %s over TLS",
		  name, conn_tls_cn(k), name, conn_tls_issuer(k), k->peer);
	return 0;
}

/* The hello: which agent, which ring, from where in it. */
static int take_hello(struct collector *c, struct conn *k, size_t *p)
{
	const char *why = NULL, *name = conn_tls_name(k);
	int n = vigil_stream_hello_parse(k->buf, k->len, &k->hello, &why);
	struct agent *a;

	if (n < 0)
		return hostile(c, k, why), -EPROTO;
	if (!n)
		return 0;
	if (tls_hello(c, k))
		return -EPERM;
	a = collector_agent_find(c, k->hello.boot_id, k->hello.ring_id);
	if ((why = identity_taken(c, a, k))) {
		bool cert = collector_cert_bound(c, a, k->hello.boot_id, k->hello.ring_id);
		char boot[33];

		vigil_boot_id_str(k->hello.boot_id, boot);
		vlog_info("%s%s%s claims agent %s (boot %s, ring %u)%s%s, which %s: refused",
			  k->peer, name ? " with certificate " : "", name ? name : "",
			  a ? a->fmt.node_name : k->hello.node_name, boot, k->hello.ring_id,
			  a && a->cert[0] ? " proved by certificate " : "", a ? a->cert : "", why);
		tell_refusal(k, cert ? VIGIL_REFUSE_BOUND_CERT : VIGIL_REFUSE_BOUND_ADDR);
		if (cert && name)
			return tls_refused(c, k, TLS_REFUSED_BINDING,
					   "identity bound to another certificate"), -EPERM;
		return hostile(c, k, cert ? "identity bound to another certificate" :
					    "identity bound to another address"), -EPERM;
	}
	if (!a)
		a = collector_agent_get(c, &k->hello);
	if (!a && !collector_agent_room(c))
		a = collector_agent_get(c, &k->hello);
	if (!a) {
		tell_refusal(k, VIGIL_REFUSE_FULL);
		return collector_conn_close(c, k, "too many agents"), -ENOSPC;
	}
	if (name && collector_agent_bind(c, a, name)) {
		tell_refusal(k, VIGIL_REFUSE_FULL);
		return collector_conn_close(c, k, "no room for its stream in the table: every "
				     "entry live or bound to another certificate"), -ENOSPC;
	}
	if (a->conn)
		collector_conn_close(c, a->conn, "replaced by a new connection of the same agent");
	a->conn = k;
	a->udp = false;		/* TCP proved it: datagrams may not move it now */
	snprintf(a->owner, sizeof(a->owner), "%s", k->host);
	k->agent = a;
	k->hello_done = true;
	if (name)
		collector_handshake_done(k->addr);
	k->offset = k->acked = k->hello.start_offset;
	collector_agent_resume(c, a, k);
	vlog_info("agent %s (boot %s, ring %u, pid %u, uid %u) connected from %s at offset %llu",
		  a->fmt.node_name, a->boot_str, a->ring_id, k->hello.pid, k->hello.uid, k->peer,
		  (unsigned long long)k->offset);
	*p = n;
	return 0;
}

/* Takes the whole records in the buffer; a partial one waits for more. */
static int take(struct collector *c, struct conn *k)
{
	size_t p = 0;

	if (!k->hello_done && take_hello(c, k, &p))
		return -EPROTO;
	while (k->hello_done) {
		struct vigil_stream_rec rec;
		const char *why = NULL;
		int r = vigil_stream_rec_parse(&k->hello, k->buf + p, k->len - p, &rec, &why);
		struct agent *a = k->agent;

		if (r < 0)
			return hostile(c, k, why), -EPROTO;
		if (!r)
			break;
		if (k->offset < a->written && !collector_agent_in_hole(a, k))
			a->resent += !!rec.event;	/* written before: a re-send */
		else if (rec.event)
			collector_agent_record(c, a, rec.event, k->offset, true);
		k->offset += rec.span;
		if (k->offset > a->written)
			a->written = k->offset;
		p += rec.span;
	}
	if (p) {
		memmove(k->buf, k->buf + p, k->len - p);
		k->len -= p;
		k->partial_since = 0;
	}
	if (k->len && !k->partial_since)
		k->partial_since = vigil_stream_now();
	return 0;
}

/* Writes the batch out and hands it to JetStream; k is acknowledged up to
 * there once JetStream has it (acks.c). */
static int flush(struct collector *c, struct conn *k)
{
	struct agent *a = k->agent;
	uint64_t ticket, upto;
	int err;

	if ((err = collector_batch_out(c, &ticket))) {
		if (a)
			collector_agent_rewind(a);	/* nothing of it is acknowledged */
		collector_conn_close(c, k, "output failed");
		return err;
	}
	if (!a)
		return 0;
	a->out = a->written;
	upto = a->written < k->offset ? a->written : k->offset;
	if (upto > (a->nacks ? a->acks[a->nacks - 1].upto : k->acked))
		collector_ack_later(c, a, ticket, upto);
	collector_acks(c);
	return k->fd < 0 ? -EPIPE : 0;	/* closed: cannot record, or send */
}

/* recv(), or SSL_read() on tls://. */
static ssize_t conn_recv(struct conn *k, const char **why)
{
	if (k->tls)
		return conn_tls_read(k, k->buf + k->len, CONN_BUF - k->len, why);
	return recv(k->fd, k->buf + k->len, CONN_BUF - k->len, MSG_DONTWAIT);
}

/* On tls://, epoll watches for what TLS waits for: EPOLLOUT only while a
 * write is blocked (level-triggered, it would wake the loop for nothing). */
void collector_conn_tls_events(struct collector *c, struct conn *k)
{
	struct epoll_event ev = { .data.ptr = k };

	if (k->fd < 0 || (ev.events = conn_tls_events(k)) == k->events)
		return;
	if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, k->fd, &ev))
		return collector_conn_close(c, k, "epoll");
	k->events = ev.events;
}

/* The TLS handshake, driven by epoll readiness; it must end within
 * --hello-timeout (collector_conn_timeouts). */
static int tls_handshake(struct collector *c, struct conn *k)
{
	const char *why = NULL;
	int r = conn_tls_handshake(k, &why);

	if (r < 0) {
		tls_refused(c, k, conn_tls_refused(k), why);
		return -EPROTO;
	}
	if (!r)
		collector_conn_tls_events(c, k);
	return r ? 0 : -EAGAIN;
}

void collector_conn_readable(struct collector *c, struct conn *k)
{
	const char *why = NULL;

	if (k->tls && tls_handshake(c, k))
		return;
	for (;;) {
		ssize_t n = conn_recv(k, &why);

		if (n == 0) {
			if (!flush(c, k))
				collector_conn_close(c, k, k->len ? "closed inside a record" : NULL);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPROTO && why)
				return hostile(c, k, why);
			if (errno != EAGAIN)
				return collector_conn_close(c, k, strerror(errno));
			break;
		}
		k->len += n;
		k->last_rx = vigil_stream_now();
		if (take(c, k))
			return;	/* closed */
		if (c->batch.len > BATCH_FLUSH && flush(c, k))
			return;
	}
	if (!flush(c, k) && k->tls)
		collector_conn_tls_events(c, k);
}

void collector_conn_postpone(struct collector *c, double secs)
{
	for (unsigned i = 0; i < c->nconns; i++) {
		struct conn *k = c->conns[i];

		k->opened += secs;
		if (k->partial_since)
			k->partial_since += secs;
	}
}

void collector_conn_timeouts(struct collector *c, double now)
{
	for (unsigned i = 0; i < c->nconns; ) {
		struct conn *k = c->conns[i];

		if (!k->hello_done && now - k->opened > c->hello_timeout && k->tls &&
		    !conn_tls_name(k))
			tls_refused(c, k, TLS_REFUSED_TIMEOUT, "no TLS handshake in time");
		else if (!k->hello_done && now - k->opened > c->hello_timeout)
			hostile(c, k, "no hello in time");
		else if (k->partial_since && now - k->partial_since > c->frame_timeout)
			hostile(c, k, "a frame left unfinished");
		else
			i++;
	}
}
