/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mutual TLS 1.3 on a collector connection (tls:// listeners, OpenSSL 3),
 * non-blocking inside the collector's one epoll loop: the handshake and
 * every read and ack go as far as the socket lets them and say what they
 * wait for (EPOLLOUT is asked for only while a write is blocked). A peer
 * is verified against --tls-ca; its node name is its certificate's first
 * DNS subject alternative name. tcp:// connections never come here.
 */
#ifndef VIGIL_COLLECTOR_CONN_TLS_H
#define VIGIL_COLLECTOR_CONN_TLS_H

#include <stddef.h>
#include <sys/types.h>

struct ssl_ctx_st;
struct conn;
struct conn_tls;

/* Why a TLS peer was refused, for vigil_collector_tls_refusals_total{reason}
 * (docs/operations.md): OpenSSL's hundreds of errors and verify results
 * mapped into a fixed, small set, so the series stay few whatever peers
 * send. */
enum conn_tls_refusal {
	TLS_REFUSED_NO_CERT,	/* no client certificate */
	TLS_REFUSED_UNTRUSTED,	/* its chain does not verify against --tls-ca */
	TLS_REFUSED_EXPIRED,	/* expired, or not yet valid */
	TLS_REFUSED_USAGE,	/* not for client authentication (extended key usage) */
	TLS_REFUSED_NAME,	/* no usable first DNS SAN, or a hello naming another node */
	TLS_REFUSED_BINDING,	/* a stream bound to another certificate name */
	TLS_REFUSED_NOT_TLS,	/* the first bytes were not TLS (clear text, HTTP) */
	TLS_REFUSED_PROTOCOL,	/* TLS below 1.3, no common cipher or group */
	TLS_REFUSED_PEER_ALERT,	/* the peer aborted with an alert (e.g. it does not
				 * trust the collector's certificate) */
	TLS_REFUSED_CLOSED,	/* the peer closed or reset during the handshake */
	TLS_REFUSED_TIMEOUT,	/* no handshake within --hello-timeout */
	TLS_REFUSED_OTHER,	/* any other TLS error */
	TLS_REFUSED_N
};

const char *conn_tls_refusal_name(enum conn_tls_refusal r);

/* The server's context from --tls-cert, --tls-key, --tls-ca; NULL when one
 * cannot be read or the key does not match the certificate (logged, naming
 * the option). */
struct ssl_ctx_st *conn_tls_ctx(const char *cert, const char *key, const char *ca);
void conn_tls_ctx_free(struct ssl_ctx_st *ctx);

/* Starts the server side of a handshake on k->fd: k->tls. -ENOMEM. */
int conn_tls_open(struct conn *k, struct ssl_ctx_st *ctx);
void conn_tls_free(struct conn *k);
/* Drives the handshake: 1 done (the peer's certificate verified, its node
 * name taken), 0 waiting for the socket, -1 refused (*why says why for the
 * log, conn_tls_refused() in which of the fixed reasons). */
int conn_tls_handshake(struct conn *k, const char **why);
enum conn_tls_refusal conn_tls_refused(const struct conn *k);
/* As recv(): > 0 bytes, 0 the peer closed, -1 with errno (EAGAIN: nothing
 * yet; EPROTO: a TLS error, *why says which). */
ssize_t conn_tls_read(struct conn *k, void *buf, size_t n, const char **why);
/* Writes one ack of 16 bytes; a blocked write is kept and finished by the
 * next call (TLS must retry the same bytes), which then sends the newest.
 * 1 written, 0 blocked (EPOLLOUT asked for), -1 failed. */
int conn_tls_ack(struct conn *k, const void *ack, size_t n);
/* The events k's socket should be watched for: EPOLLIN, and EPOLLOUT while
 * TLS waits to write. */
unsigned conn_tls_events(const struct conn *k);
/* The authenticated node name (the first DNS SAN), and for the log the
 * certificate's CN and issuer. Valid once the handshake is done. */
const char *conn_tls_name(const struct conn *k);
const char *conn_tls_cn(const struct conn *k);
/* SHA-256 of a certificate name: what the state file binds a stream to. */
void conn_tls_name_sha256(const char *name, unsigned char out[32]);
const char *conn_tls_issuer(const struct conn *k);

#endif
