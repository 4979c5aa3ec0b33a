// SPDX-License-Identifier: GPL-2.0
/*
 * See conn_tls.h. What a TLS session adds to a connection: this struct, the
 * SSL object and the peer's certificate (a few KiB), and OpenSSL's record
 * buffers, about 34 KiB while a record is in flight; they are released when
 * idle (SSL_MODE_RELEASE_BUFFERS). docs/stream.md, "Memory", counts 64 KiB.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "collector.h"
#include "conn_tls.h"
#include "log.h"

#define ACK_MAX 16

struct conn_tls {
	SSL *ssl;
	bool done;		/* handshake finished, name taken */
	bool read_wants_write;	/* the handshake or a read waits to write */
	bool ack_blocked;	/* ack[] was cut short: TLS retries it as is */
	enum conn_tls_refusal refused;	/* why the handshake failed */
	uint8_t ack[ACK_MAX];
	size_t ack_len;
	char name[VIGIL_STREAM_NAME_MAX + 1];	/* first DNS SAN */
	char cn[64];
	char issuer[256];
};

/* The newest OpenSSL error as text; the queue is emptied (it is shared by
 * every connection). */
static const char *ssl_reason(void)
{
	static char buf[160];
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	if (r)
		snprintf(buf, sizeof(buf), "%s", r);
	else if (e)
		snprintf(buf, sizeof(buf), "OpenSSL error %lx", e);
	else
		snprintf(buf, sizeof(buf), "unknown TLS error");
	ERR_clear_error();
	return buf;
}

struct ssl_ctx_st *conn_tls_ctx(const char *cert, const char *key, const char *ca)
{
	static const unsigned char sid_ctx[] = "vigil-collector";
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	STACK_OF(X509_NAME) *names;

	if (!ctx) {
		vlog_refuse(-ENOMEM, "TLS: cannot make a context: %s", ssl_reason());
		return NULL;
	}
	if (!SSL_CTX_use_certificate_chain_file(ctx, cert)) {
		vlog_refuse(-EINVAL, "--tls-cert %s: cannot load the certificate: %s", cert, ssl_reason());
		goto fail;
	}
	/* OpenSSL checks the key against the certificate as it loads it. */
	if (!SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) &&
	    ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
		vlog_refuse(-EINVAL, "--tls-key %s: cannot load the private key: %s", key, ssl_reason());
		goto fail;
	}
	if (!SSL_CTX_check_private_key(ctx)) {
		ERR_clear_error();
		vlog_refuse(-EINVAL, "--tls-key %s does not match --tls-cert %s", key, cert);
		goto fail;
	}
	if (!SSL_CTX_load_verify_locations(ctx, ca, NULL)) {
		vlog_refuse(-EINVAL, "--tls-ca %s: cannot load the CA: %s", ca, ssl_reason());
		goto fail;
	}
	/* Named in the certificate request: the agent picks what it sends. */
	if ((names = SSL_load_client_CA_file(ca)))
		SSL_CTX_set_client_CA_list(ctx, names);
	ERR_clear_error();
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	/* Mutual: no certificate, or one the CA did not sign, fails the
	 * handshake. A certificate limited to other uses than a client's
	 * (extended key usage) is refused too. */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
	/* Resumption (stateless tickets) with client certificates wants it. */
	SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1);
	/* A peer that closes without close_notify ends its stream as a TCP
	 * close does: records are framed, a cut one is seen as such. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

void conn_tls_ctx_free(struct ssl_ctx_st *ctx)
{
	SSL_CTX_free(ctx);
}

int conn_tls_open(struct conn *k, struct ssl_ctx_st *ctx)
{
	struct conn_tls *t = calloc(1, sizeof(*t));

	if (!t || !(t->ssl = SSL_new(ctx)) || !SSL_set_fd(t->ssl, k->fd)) {
		if (t)
			SSL_free(t->ssl);
		free(t);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_accept_state(t->ssl);
	k->tls = t;
	return 0;
}

void conn_tls_free(struct conn *k)
{
	if (!k->tls)
		return;
	SSL_free(k->tls->ssl);
	free(k->tls);
	k->tls = NULL;
}

/* Printable ASCII only, for the log and the JSON lines' node name. */
static void printable(char *dst, size_t n, const unsigned char *src, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < n; i++)
		dst[i] = src[i] > 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = 0;
}

/* The first DNS SAN, which must be a plain host name (no NUL, nothing
 * unprintable, not empty, fits a hello's node name). */
static const char *take_names(struct conn_tls *t)
{
	X509 *cert = SSL_get0_peer_certificate(t->ssl);
	GENERAL_NAMES *sans;
	const char *why = "its certificate has no DNS subject alternative name";
	char cn[sizeof(t->cn)];

	if (!cert)
		return "no certificate";	/* SSL_VERIFY_FAIL_IF_NO_PEER_CERT: not reached */
	sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
		const unsigned char *s;
		int len;

		if (g->type != GEN_DNS)
			continue;
		s = ASN1_STRING_get0_data(g->d.dNSName);
		len = ASN1_STRING_length(g->d.dNSName);
		why = NULL;
		if (len <= 0 || len > VIGIL_STREAM_NAME_MAX || memchr(s, 0, len))
			why = "its certificate's first DNS subject alternative name is empty, too "
			      "long or holds a NUL";
		for (int j = 0; !why && j < len; j++)
			if (s[j] <= 0x20 || s[j] >= 0x7f)
				why = "its certificate's first DNS subject alternative name has a "
				      "byte that is not printable ASCII";
		if (!why) {
			memcpy(t->name, s, len);
			t->name[len] = 0;
		}
		break;
	}
	GENERAL_NAMES_free(sans);
	if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn,
				      sizeof(cn)) < 0)
		snprintf(cn, sizeof(cn), "-");
	printable(t->cn, sizeof(t->cn), (const unsigned char *)cn, strlen(cn));
	X509_NAME_oneline(X509_get_issuer_name(cert), t->issuer, sizeof(t->issuer));
	ERR_clear_error();
	return why;
}

/* Why a TLS operation failed, for the log. */
static const char *failed(struct conn_tls *t, int ret)
{
	static char buf[200];
	int e = SSL_get_error(t->ssl, ret);
	long v = SSL_get_verify_result(t->ssl);

	if (e == SSL_ERROR_SYSCALL && !ERR_peek_error()) {
		snprintf(buf, sizeof(buf), "TLS: %s", errno ? strerror(errno) : "the peer closed");
		return buf;
	}
	if (v != X509_V_OK) {
		ERR_clear_error();
		snprintf(buf, sizeof(buf), "TLS: certificate refused: %s",
			 X509_verify_cert_error_string(v));
		return buf;
	}
	snprintf(buf, sizeof(buf), "TLS: %s", ssl_reason());
	return buf;
}

const char *conn_tls_refusal_name(enum conn_tls_refusal r)
{
	static const char *const names[TLS_REFUSED_N] = {
		[TLS_REFUSED_NO_CERT] = "no_certificate",
		[TLS_REFUSED_UNTRUSTED] = "untrusted",
		[TLS_REFUSED_EXPIRED] = "expired",
		[TLS_REFUSED_USAGE] = "usage",
		[TLS_REFUSED_NAME] = "name",
		[TLS_REFUSED_BINDING] = "binding",
		[TLS_REFUSED_NOT_TLS] = "not_tls",
		[TLS_REFUSED_PROTOCOL] = "protocol",
		[TLS_REFUSED_PEER_ALERT] = "peer_alert",
		[TLS_REFUSED_CLOSED] = "closed",
		[TLS_REFUSED_TIMEOUT] = "timeout",
		[TLS_REFUSED_OTHER] = "other",
	};

	return (unsigned)r < TLS_REFUSED_N ? names[r] : "other";
}

/* Which fixed reason a failed handshake falls in: the verify result when
 * the peer's certificate was refused, else the reason of OpenSSL's newest
 * error (read before failed() empties the queue). */
static enum conn_tls_refusal classify(struct conn_tls *t, int ret)
{
	int e = SSL_get_error(t->ssl, ret);
	unsigned long err = ERR_peek_last_error();
	int reason = ERR_GET_REASON(err);

	if ((e == SSL_ERROR_SYSCALL && !err) || e == SSL_ERROR_ZERO_RETURN)
		return TLS_REFUSED_CLOSED;
	switch (SSL_get_verify_result(t->ssl)) {
	case X509_V_OK:
		break;
	case X509_V_ERR_CERT_HAS_EXPIRED:
	case X509_V_ERR_CERT_NOT_YET_VALID:
	case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD:
	case X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD:
		return TLS_REFUSED_EXPIRED;
	case X509_V_ERR_INVALID_PURPOSE:
		return TLS_REFUSED_USAGE;
	default:
		return TLS_REFUSED_UNTRUSTED;
	}
	if (ERR_GET_LIB(err) != ERR_LIB_SSL)
		return TLS_REFUSED_OTHER;
	switch (reason) {
	case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		return TLS_REFUSED_NO_CERT;
	case SSL_R_HTTP_REQUEST:
	case SSL_R_HTTPS_PROXY_REQUEST:
	case SSL_R_WRONG_VERSION_NUMBER:
	case SSL_R_PACKET_LENGTH_TOO_LONG:
	case SSL_R_UNKNOWN_PROTOCOL:
		return TLS_REFUSED_NOT_TLS;
	case SSL_R_UNSUPPORTED_PROTOCOL:
	case SSL_R_VERSION_TOO_LOW:
	case SSL_R_NO_SHARED_CIPHER:
	case SSL_R_NO_SHARED_GROUPS:
	case SSL_R_TLSV1_ALERT_PROTOCOL_VERSION:
		return TLS_REFUSED_PROTOCOL;
	}
	/* Alerts the peer sent are reasons SSL_AD_REASON_OFFSET + alert. */
	if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256)
		return TLS_REFUSED_PEER_ALERT;
	return TLS_REFUSED_OTHER;
}

enum conn_tls_refusal conn_tls_refused(const struct conn *k)
{
	return k->tls->refused;
}

int conn_tls_handshake(struct conn *k, const char **why)
{
	struct conn_tls *t = k->tls;
	int r;

	if (t->done)
		return 1;
	t->read_wants_write = false;
	ERR_clear_error();
	errno = 0;
	r = SSL_do_handshake(t->ssl);
	if (r == 1) {
		if ((*why = take_names(t))) {
			t->refused = TLS_REFUSED_NAME;
			return -1;
		}
		t->done = true;
		return 1;
	}
	switch (SSL_get_error(t->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		return 0;
	case SSL_ERROR_WANT_WRITE:
		t->read_wants_write = true;
		return 0;
	}
	t->refused = classify(t, r);
	*why = failed(t, r);
	return -1;
}

ssize_t conn_tls_read(struct conn *k, void *buf, size_t n, const char **why)
{
	struct conn_tls *t = k->tls;
	int r;

	t->read_wants_write = false;
	ERR_clear_error();
	errno = 0;
	r = SSL_read(t->ssl, buf, n > (1u << 30) ? 1 << 30 : (int)n);
	if (r > 0)
		return r;
	switch (SSL_get_error(t->ssl, r)) {
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_WANT_WRITE:	/* a key update's answer waits */
		t->read_wants_write = true;
		/* fall through */
	case SSL_ERROR_WANT_READ:
		errno = EAGAIN;
		return -1;
	}
	*why = failed(t, r);
	errno = EPROTO;
	return -1;
}

static int write_ack(struct conn_tls *t)
{
	int r;

	ERR_clear_error();
	r = SSL_write(t->ssl, t->ack, t->ack_len);
	if (r > 0) {
		t->ack_blocked = false;
		return 1;
	}
	t->ack_blocked = true;
	switch (SSL_get_error(t->ssl, r)) {
	case SSL_ERROR_WANT_WRITE:
	case SSL_ERROR_WANT_READ:
		return 0;
	}
	vlog_debug("%s", failed(t, r));
	return -1;
}

int conn_tls_ack(struct conn *k, const void *ack, size_t n)
{
	struct conn_tls *t = k->tls;
	int r;

	if (n > ACK_MAX)
		return -1;
	/* A write cut short is finished with the same bytes first. */
	if (t->ack_blocked && (r = write_ack(t)) <= 0)
		return r;
	memcpy(t->ack, ack, n);
	t->ack_len = n;
	return write_ack(t);
}

unsigned conn_tls_events(const struct conn *k)
{
	return EPOLLIN | (k->tls->read_wants_write || k->tls->ack_blocked ? EPOLLOUT : 0);
}

const char *conn_tls_name(const struct conn *k)
{
	return k->tls && k->tls->done ? k->tls->name : NULL;
}

void conn_tls_name_sha256(const char *name, unsigned char out[32])
{
	SHA256((const unsigned char *)name, strlen(name), out);
}

const char *conn_tls_cn(const struct conn *k)
{
	return k->tls->cn;
}

const char *conn_tls_issuer(const struct conn *k)
{
	return k->tls->issuer;
}
