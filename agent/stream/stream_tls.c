// SPDX-License-Identifier: GPL-2.0
/* See stream_tls.h. Everything here is non-blocking, like the sink. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "log.h"
#include "stream.h"
#include "stream/stream_tls.h"
#include "stream/stream_tx.h"

bool vigil_tls_url(const char *url)
{
	return !strncmp(url, "tls://", 6);
}

/* A readable file, or the option named with why not. */
static int readable(const char *opt, const char *path, const char *url)
{
	FILE *f;

	if (!path)
		return vlog_refuse(-EINVAL, "--send %s needs %s (and --tls-cert, --tls-key, --tls-ca)",
				url, opt);
	f = fopen(path, "r");
	if (!f)
		return vlog_err(-errno, "%s %s: %s", opt, path, strerror(errno));
	fclose(f);
	return 0;
}

/* OpenSSL's reason for the last error, for a message. */
static const char *ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_peek_last_error());

	return r ? r : "unknown error";
}

/* The collector's ticket: kept for the next connection's resumption, and
 * proof that it accepted our certificate (a TLS 1.3 server refuses a client
 * certificate only after the client's handshake is done). */
static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct vigil_tls *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));

	t->got_ticket = true;
	/* A connection made before a SIGHUP re-read the files: its ticket
	 * would resume the old identity. */
	if (SSL_get_SSL_CTX(ssl) != t->ctx)
		return 0;
	/* A copy: the connection's own session is marked not resumable when
	 * the connection is cut without close_notify, as ours are. */
	sess = SSL_SESSION_dup(sess);
	if (!sess)
		return 0;
	if (t->session)
		SSL_SESSION_free(t->session);
	t->session = sess;
	return 0;	/* the original stays the connection's */	/* ours now */
}

/* What the collector will make of our certificate, said at start and at
 * each reload: it takes the node's identity from the first DNS subject
 * alternative name and compares it with the hello's node name, and refuses
 * a certificate out of its validity period. */
static void check_identity(SSL_CTX *ctx, const struct vigil_tls_opts *o)
{
	X509 *cert = SSL_CTX_get0_certificate(ctx);
	GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	const char *dns = NULL;
	int dns_len = 0;

	for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans) && !dns; i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);

		if (g->type == GEN_DNS) {
			dns = (const char *)ASN1_STRING_get0_data(g->d.dNSName);
			dns_len = ASN1_STRING_length(g->d.dNSName);
		}
	}
	if (!dns)
		vlog_info("warning: --tls-cert %s has no DNS subject alternative name: a collector "
			  "takes the node's identity from it", o->cert);
	else if (o->node_name && ((int)strlen(o->node_name) != dns_len ||
				  memcmp(o->node_name, dns, dns_len)))
		vlog_info("warning: --tls-cert %s is for node '%.*s', this agent's node name is '%s' "
			  "(--node-name): a collector refuses a hello that claims another node",
			  o->cert, dns_len, dns, o->node_name);
	GENERAL_NAMES_free(sans);
	if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0)
		vlog_info("warning: --tls-cert %s has expired: a collector refuses it", o->cert);
	else if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0)
		vlog_info("warning: --tls-cert %s is not valid yet: a collector refuses it", o->cert);
}

/* The context for o: every file checked, each failure logged naming its
 * option. */
static SSL_CTX *make_ctx(const struct vigil_tls_opts *o, const char *url, bool warn, int *errp)
{
	SSL_CTX *ctx;
	int err;

	if ((err = readable("--tls-cert", o->cert, url)) || (err = readable("--tls-key", o->key, url)) ||
	    (err = readable("--tls-ca", o->ca, url)))
		return *errp = err, NULL;
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx)
		return *errp = vlog_refuse(-ENOMEM, "--send %s: cannot make a TLS context: %s", url,
					ssl_reason()), NULL;
	ERR_clear_error();
	err = -EINVAL;
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION))
		vlog_err(err, "--send %s: TLS 1.3 unavailable: %s", url, ssl_reason());
	else if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1)
		vlog_err(err, "--tls-cert %s: not a PEM certificate: %s", o->cert, ssl_reason());
	else if (SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1 &&
		 ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH)
		vlog_err(err, "--tls-key %s: not a PEM private key: %s", o->key, ssl_reason());
	else if (SSL_CTX_check_private_key(ctx) != 1)
		vlog_err(err, "--tls-key %s does not match --tls-cert %s: %s", o->key, o->cert,
			 ssl_reason());
	/* AES-128-GCM first: a quarter faster than AES-256 here, and the
	 * suite every kernel TLS (and NIC offload) has. */
	else if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
					  "TLS_CHACHA20_POLY1305_SHA256") != 1)
		vlog_err(err, "--send %s: cannot set the TLS 1.3 suites: %s", url, ssl_reason());
	else if (SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1)
		vlog_err(err, "--tls-ca %s: no PEM CA certificate in it: %s", o->ca, ssl_reason());
	else
		err = 0;
	ERR_clear_error();
	if (err) {
		SSL_CTX_free(ctx);
		return *errp = err, NULL;
	}
	if (warn)
		check_identity(ctx, o);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* The kernel encrypts when it can (CONFIG_TLS); else SSL_write from the
	 * ring's pages, on a non-blocking socket: a write may take part of a
	 * range, and one that must be retried is retried from the same ring
	 * bytes, at another address when the ring's mapping wraps. A
	 * collector gone without close_notify is a connection lost, as on
	 * tcp://: acks are framed, a truncation cannot fake one. */
	SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS | SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, new_session);
	return ctx;
}

int vigil_tls_init(struct vigil_tls *t, const struct vigil_tls_opts *o, const char *url)
{
	unsigned char ip[16];
	SSL_CTX *ctx;
	int err = 0;

	ctx = make_ctx(o, url, !t, &err);
	if (!ctx || !t) {
		SSL_CTX_free(ctx);
		return err;
	}
	*t = (struct vigil_tls){ .ctx = ctx };
	if (o->server_name)
		snprintf(t->server_name, sizeof(t->server_name), "%s", o->server_name);
	else if ((err = vigil_stream_url_host(url, t->server_name, sizeof(t->server_name)))) {
		vigil_tls_free(t);
		return err;
	}
	t->name_is_ip = inet_pton(AF_INET, t->server_name, ip) == 1 ||
			inet_pton(AF_INET6, t->server_name, ip) == 1;
	SSL_CTX_set_app_data(ctx, t);
	return 0;
}

int vigil_tls_reload(struct vigil_tls *t, const struct vigil_tls_opts *o, const char *url)
{
	int err = 0;
	SSL_CTX *ctx = make_ctx(o, url, true, &err);

	if (!ctx)
		return err;
	/* A connection's session holds its own reference to the old one. */
	SSL_CTX_free(t->ctx);
	t->ctx = ctx;
	SSL_CTX_set_app_data(ctx, t);
	if (t->session)
		SSL_SESSION_free(t->session);	/* resumed, it would be the old identity's */
	t->session = NULL;
	return 0;
}

void vigil_tls_free(struct vigil_tls *t)
{
	if (t->session)
		SSL_SESSION_free(t->session);
	SSL_CTX_free(t->ctx);
	t->session = NULL;
	t->ctx = NULL;
}

int vigil_tls_start(struct vigil_tls *t, struct vigil_tx *tx, int fd)
{
	SSL *ssl = SSL_new(t->ctx);
	int ok;

	if (!ssl)
		return -ENOMEM;
	ok = SSL_set_fd(ssl, fd);
	if (ok && t->name_is_ip)
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), t->server_name);
	else if (ok)
		ok = SSL_set1_host(ssl, t->server_name) &&
		     SSL_set_tlsext_host_name(ssl, t->server_name);
	/* The name in a subject alternative name, never the subject's CN. */
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
	if (ok && t->session)
		ok = SSL_set_session(ssl, t->session);
	if (!ok) {
		SSL_free(ssl);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_connect_state(ssl);
	t->got_ticket = false;
	tx->ssl = ssl;
	tx->tls_pending = 0;
	return 0;
}

void vigil_tls_close(struct vigil_tx *tx)
{
	SSL_free(tx->ssl);
	tx->ssl = NULL;
	tx->tls_pending = 0;
}

/* Why a TLS call failed, and which option to look at. */
static int failed(const struct vigil_tls *t, SSL *ssl, int ret, const char *during, char *why,
		  size_t n)
{
	int e = SSL_get_error(ssl, ret);
	unsigned long le = ERR_peek_last_error();
	int reason = ERR_GET_REASON(le);
	long v = SSL_get_verify_result(ssl);
	int err = -EKEYREJECTED;

	if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED &&
	    (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH))
		snprintf(why, n, "TLS %s: the collector's certificate is not for '%s' (%s): check "
			 "--tls-server-name", during, t->server_name, X509_verify_cert_error_string(v));
	else if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED &&
		 (v == X509_V_ERR_CERT_HAS_EXPIRED || v == X509_V_ERR_CERT_NOT_YET_VALID))
		snprintf(why, n, "TLS %s: the collector's certificate is out of its validity period "
			 "(%s): the collector's certificate must be renewed", during,
			 X509_verify_cert_error_string(v));
	else if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED)
		snprintf(why, n, "TLS %s: the collector's certificate is refused (%s): check --tls-ca "
			 "(the CA that signed the collector's certificate)", during,
			 X509_verify_cert_error_string(v));
	else if (reason == SSL_R_TLSV1_ALERT_UNKNOWN_CA || reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
		 reason == SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED ||
		 reason == SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED ||
		 reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN ||
		 reason == SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE ||
		 reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED ||
		 reason == SSL_R_TLSV1_ALERT_ACCESS_DENIED)
		snprintf(why, n, "TLS %s: the collector refused our certificate (%s): check --tls-cert "
			 "(signed by the CA the collector trusts, for this node, not expired)", during,
			 ERR_reason_error_string(le));
	else if ((e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN) && !le) {
		err = -ECONNRESET;
		snprintf(why, n, "TLS %s: the collector closed the connection%s%s", during,
			 ret == 0 || e == SSL_ERROR_ZERO_RETURN ? "" : " (reset)",
			 strcmp(during, "handshake") ? "" : " (is it listening with tls://?)");
	} else {
		err = -EPROTO;
		snprintf(why, n, "TLS %s failed: %s%s", during, le ? ssl_reason() : "no reason given",
			 reason == SSL_R_WRONG_VERSION_NUMBER
				 ? " (is the collector listening with tls://?)" : "");
	}
	ERR_clear_error();
	return err;
}

int vigil_tls_handshake(const struct vigil_tls *t, struct vigil_tx *tx, char *why, size_t n)
{
	int r, e;

	ERR_clear_error();
	r = SSL_connect(tx->ssl);
	if (r == 1)
		return 1;
	e = SSL_get_error(tx->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	return failed(t, tx->ssl, r, "handshake", why, n);
}

int vigil_tls_accepted(const struct vigil_tls *t, struct vigil_tx *tx, char *why, size_t n)
{
	size_t got;
	char c;
	int r, e;

	ERR_clear_error();
	r = SSL_peek_ex(tx->ssl, &c, 1, &got);	/* new_session() sees the tickets */
	if (r == 1 || t->got_ticket)
		return 1;
	e = SSL_get_error(tx->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	return failed(t, tx->ssl, r, "session", why, n);
}

bool vigil_tls_ktls_send(struct vigil_tx *tx)
{
	return BIO_get_ktls_send(SSL_get_wbio(tx->ssl));
}

ssize_t vigil_tls_read(const struct vigil_tls *t, struct vigil_tx *tx, void *buf, size_t len,
		       char *why, size_t n)
{
	size_t got;
	int r, e;

	ERR_clear_error();
	r = SSL_read_ex(tx->ssl, buf, len, &got);
	if (r == 1)
		return got;
	e = SSL_get_error(tx->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return -EAGAIN;
	if ((e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL) && !ERR_peek_last_error())
		return 0;	/* the end, as a plain connection's */
	return failed(t, tx->ssl, r, "session", why, n);
}

void vigil_tls_describe(struct vigil_tx *tx, char *out, size_t n)
{
	snprintf(out, n, "%s %s%s", SSL_get_version(tx->ssl), SSL_get_cipher_name(tx->ssl),
		 SSL_session_reused(tx->ssl) ? ", resumed" : "");
}

int vigil_tls_send(struct vigil_tx *t, const void *p, size_t len)
{
	const char *at = p;
	size_t done = 0;

	/* A write that must be retried is retried with at least as many
	 * bytes (OpenSSL holds the record it began); those bytes are still
	 * the same ring (or spool) bytes at t->sent. */
	if (len < t->tls_pending)
		return 0;
	while (done < len) {
		size_t n = 0;
		int r, e;

		ERR_clear_error();
		r = SSL_write_ex(t->ssl, at + done, len - done, &n);
		if (r == 1) {
			done += n;
			t->tls_pending = 0;
			continue;
		}
		e = SSL_get_error(t->ssl, r);
		if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
			t->tls_pending = len - done;
			break;
		}
		ERR_clear_error();
		t->tls_pending = 0;
		return e == SSL_ERROR_SYSCALL && errno ? -errno : -EPIPE;
	}
	if (done) {
		t->sent += done;
		t->sends++;
		t->bytes += done;
	}
	return 0;
}
