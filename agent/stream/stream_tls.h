/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mutual TLS for vigild --send tls:// (OpenSSL 3, TLS 1.3 only): the
 * agent's certificate and key, the CA the collector's certificate must chain
 * to, and the name it must carry. After the handshake either the kernel
 * encrypts (kTLS TX: the ring's pages go out with send() as on tcp://) or
 * SSL_write encrypts straight from the ring's pages (VIGIL_TX_TLS in
 * stream_tx.h): one pass over the bytes, no copy into a buffer of ours.
 * Acks come back through SSL_read.
 */
#ifndef VIGIL_STREAM_TLS_H
#define VIGIL_STREAM_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ssl_ctx_st;
struct ssl_st;
struct ssl_session_st;
struct vigil_tx;

struct vigil_tls_opts {
	const char *cert, *key, *ca;	/* PEM files */
	const char *server_name;	/* NULL: the URL's host */
	const char *node_name;		/* warned about when the certificate is for another */
};

struct vigil_tls {
	struct ssl_ctx_st *ctx;
	char server_name[256];
	bool name_is_ip;		/* checked as an IP SAN */
	struct ssl_session_st *session;	/* the last ticket: resumption */
	bool got_ticket;		/* the collector sent a ticket on this connection:
					 * it accepted our certificate */
};

/* True for a tls:// URL. */
bool vigil_tls_url(const char *url);
/* Checks the options for URL (all three files given, readable, the key
 * matching the certificate, the CA file holding certificates) and builds the
 * context; each failure is logged naming the option. t may be NULL (a check
 * at start only, which also warns when the certificate is not for o->node_name
 * or out of its validity period). */
int vigil_tls_init(struct vigil_tls *t, const struct vigil_tls_opts *o, const char *url);
void vigil_tls_free(struct vigil_tls *t);
/* Reads the files again (SIGHUP): new connections use them, the one up
 * keeps its session. On error (logged) the context in force stays. */
int vigil_tls_reload(struct vigil_tls *t, const struct vigil_tls_opts *o, const char *url);

/* A new session on connected socket fd, kept in tx->ssl. */
int vigil_tls_start(struct vigil_tls *t, struct vigil_tx *tx, int fd);
/* Drops tx's session (no close_notify: the connection is cut). */
void vigil_tls_close(struct vigil_tx *tx);
/* One handshake step: 1 done, 0 in progress, -EKEYREJECTED (a certificate
 * refused, by either side) or -EPROTO with why set. */
int vigil_tls_handshake(const struct vigil_tls *t, struct vigil_tx *tx, char *why, size_t n);
/* After the handshake: reads what the collector sent (its tickets, or the
 * alert refusing our certificate) and leaves application bytes to
 * vigil_tls_read. 1 accepted (a ticket came, or bytes), 0 nothing yet,
 * or -EKEYREJECTED/-ECONNRESET/-EPROTO with why set. */
int vigil_tls_accepted(const struct vigil_tls *t, struct vigil_tx *tx, char *why, size_t n);
/* True when OpenSSL handed the session's TX keys to the kernel. */
bool vigil_tls_ktls_send(struct vigil_tx *tx);
/* SSL_read: bytes read, 0 at the end, -EAGAIN, or -EKEYREJECTED/-EPROTO
 * with why set. */
ssize_t vigil_tls_read(const struct vigil_tls *t, struct vigil_tx *tx, void *buf, size_t len,
		       char *why, size_t n);
/* "TLSv1.3 TLS_AES_256_GCM_SHA384, resumed" for the log. */
void vigil_tls_describe(struct vigil_tx *tx, char *out, size_t n);

/* The VIGIL_TX_TLS path of stream_tx.h: SSL_write from p. */
int vigil_tls_send(struct vigil_tx *t, const void *p, size_t len);

#endif
