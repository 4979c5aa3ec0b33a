// SPDX-License-Identifier: GPL-2.0
/* See publish.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "log.h"
#include "publish_int.h"
#include "stream.h"

/* What a subject token is made of here: a '.' would split it, '*' and '>'
 * are wildcards, and spaces and controls are not allowed. */
static bool token_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_';
}

void pub_put_token(struct vigil_buf *b, const char *s, size_t n)
{
	if (!n)
		vbuf_putc(b, '_');
	for (size_t i = 0; i < n; i++)
		vbuf_putc(b, token_char(s[i]) ? s[i] : '_');
}

void vigil_pub_line(struct vigil_pub *p, const struct vigil_buf *batch, size_t from,
		    const char *node, const char *boot, uint32_t ring, uint64_t at,
		    const char *id_kind, uint64_t n)
{
	const char *line, *kind = "event", *q;
	size_t len = batch->len - from, klen = 5;
	struct pub_msg *m;

	/* A record that formats to nothing (a fork) leaves the batch empty,
	 * maybe still without a buffer: no pointer is made into it then. */
	if (!p || !len)
		return;
	line = batch->p + from;
	if (len > 2 && line[0] == '{' && line[1] == '"' &&
	    (q = memchr(line + 2, '"', len - 2))) {	/* {"process_exec":... */
		kind = line + 2;
		klen = q - kind;
	}
	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 1024;
		struct pub_msg *bigger = realloc(p->m, cap * sizeof(*p->m));

		if (!bigger) {
			p->oom = true;
			return;
		}
		p->m = bigger;
		p->cap = cap;
	}
	m = &p->m[p->n++];
	m->off = from;
	m->len = line[len - 1] == '\n' ? len - 1 : len;
	m->at = at;
	if (p->batch_layout)
		return pub_batch_line(p, m, node, boot, ring);
	m->names = p->names.len;
	/* Per event: no printf (lib/buf.h) */
	vbuf_puts(&p->names, p->prefix);
	vbuf_putc(&p->names, '.');
	pub_put_token(&p->names, node, strlen(node));
	vbuf_putc(&p->names, '.');
	pub_put_token(&p->names, kind, klen);
	vbuf_putc(&p->names, '\0');
	vbuf_puts(&p->names, boot);
	vbuf_putc(&p->names, '-');
	vbuf_put_u64(&p->names, ring);
	vbuf_putc(&p->names, '-');
	vbuf_puts(&p->names, id_kind);
	vbuf_put_u64(&p->names, n);
	vbuf_putc(&p->names, '\0');
}

void pub_refused(struct vigil_pub *p, natsStatus s, int code, const char *text)
{
	pthread_mutex_lock(&p->lock);
	p->last_status = s;
	p->last_code = code;
	snprintf(p->last_text, sizeof(p->last_text), "%s", text ? text : "");
	pthread_mutex_unlock(&p->lock);
}

static void on_pub_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
	struct vigil_pub *p = closure;

	(void)js;
	pub_refused(p, pae->Err, pae->ErrCode, pae->ErrText);
	atomic_fetch_add(&p->failed, 1);
}

/* Drops what libnats still holds of an attempt that did not complete: the
 * next attempt publishes it again, and the duplicate window keeps one. */
static void drop_pending(struct vigil_pub *p)
{
	natsMsgList pending;

	if (js_PublishAsyncGetPendingList(&pending, p->js) == NATS_OK)
		natsMsgList_Destroy(&pending);
}

/* Publishes every marked line once and waits for JetStream's acks. */
static natsStatus attempt(struct vigil_pub *p, const struct vigil_buf *batch)
{
	natsStatus s = NATS_OK, done;
	jsPubOptions wait;

	pthread_mutex_lock(&p->lock);
	p->last_status = NATS_OK;
	p->last_code = 0;
	p->last_text[0] = 0;
	pthread_mutex_unlock(&p->lock);
	atomic_store(&p->failed, 0);
	/* Not connected: publishing now would only fill libnats's reconnect
	 * buffer with another copy of the batch at each retry. */
	if (natsConnection_Status(p->nc) != NATS_CONN_STATUS_CONNECTED)
		return NATS_CONNECTION_DISCONNECTED;
	for (unsigned i = 0; i < p->n && s == NATS_OK; i++) {
		const char *subject = p->names.p + p->m[i].names;
		jsPubOptions o;

		jsPubOptions_Init(&o);
		o.MsgId = subject + strlen(subject) + 1;
		s = js_PublishAsync(p->js, subject, batch->p + p->m[i].off, (int)p->m[i].len, &o);
	}
	jsPubOptions_Init(&wait);
	wait.MaxWait = p->wait_ms;
	done = js_PublishAsyncComplete(p->js, &wait);
	if (s == NATS_OK)
		s = done;
	if (s != NATS_OK)
		drop_pending(p);
	else if (atomic_load(&p->failed)) {
		pthread_mutex_lock(&p->lock);
		s = p->last_status ?: NATS_ERR;
		pthread_mutex_unlock(&p->lock);
	}
	return s;
}

const char *pub_why(struct vigil_pub *p, natsStatus s, char *buf, size_t len)
{
	if (s == NATS_NO_RESPONDERS)
		return "no JetStream stream takes these subjects";
	pthread_mutex_lock(&p->lock);
	if (p->last_code)
		snprintf(buf, len, "%s, JetStream error %d: %s", natsStatus_GetText(s), p->last_code,
			 p->last_text);
	else
		snprintf(buf, len, "%s", natsStatus_GetText(s));
	pthread_mutex_unlock(&p->lock);
	return buf;
}

bool pub_wait_unless_stop(struct vigil_pub *p, int64_t ms)
{
	for (; ms > 0 && !*p->stop; ms -= 50) {
		if (p->on_hold)
			p->on_hold(p->on_hold_ctx);
		if (p->batch_layout) {	/* woken by an ack */
			poll(&(struct pollfd){ .fd = p->efd, .events = POLLIN }, 1, 50);
			pub_batch_pump(p);
			if (p->queued <= PUB_WINDOW)
				break;
		} else {
			nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
		}
	}
	return *p->stop;
}

/* Batch layout: the batch becomes a ticket in the pipeline; the loop goes
 * on unless more than PUB_WINDOW bytes wait for JetStream, then it waits
 * here (health goes on from on_hold) until there is room. */
static int send_pipelined(struct vigil_pub *p, const struct vigil_buf *batch, uint64_t mark,
			  uint64_t ticket)
{
	if (p->oom || pub_batch_take(p, batch, ticket, mark))
		return vlog_refuse(-ENOMEM, "JetStream: no memory to publish a batch of events");
	while (p->queued > PUB_WINDOW)
		if (pub_wait_unless_stop(p, 1000))
			return vlog_refuse(-EINTR, "stopping: %zu bytes of lines JetStream did not "
					"acknowledge are not acknowledged to their agents either",
					p->queued);
	return 0;
}

int vigil_pub_send(struct vigil_pub *p, const struct vigil_buf *batch, uint64_t mark,
		   uint64_t *ticket)
{
	double since = 0, told = 0;
	int64_t backoff = 100;
	char buf[256];
	int err = 0;

	*ticket = 0;
	if (!p)
		return 0;
	*ticket = ++p->tickets;
	if (p->batch_layout)
		return send_pipelined(p, batch, mark, *ticket);
	if (!p->n && !p->oom)
		goto done;
	if (p->oom || p->names.oom)
		return vlog_refuse(-ENOMEM, "JetStream: no memory to publish a batch of events");
	for (;;) {
		natsStatus s = attempt(p, batch);

		if (s == NATS_OK) {
			p->published += p->n;
			break;
		}
		p->refusals++;
		p->holding = true;
		if (p->oom || p->names.oom || p->scratch.oom)
			return vlog_err(-ENOMEM, "JetStream: no memory to publish a batch of events");
		if (!since) {
			vlog_info("JetStream at %s does not acknowledge (%s): holding %u events and "
				  "every agent, retrying", p->url, pub_why(p, s, buf, sizeof(buf)), p->n);
			since = told = vigil_stream_now();
			p->held++;
		} else if (vigil_stream_now() - told >= 30) {
			/* A refusal may be for good (a full stream that discards
			 * new messages, a message over its size, a permission):
			 * say it again, with how long it has lasted. */
			told = vigil_stream_now();
			vlog_info("JetStream at %s still does not acknowledge after %.0f s (%s): "
				  "holding %u events", p->url, told - since, pub_why(p, s, buf, sizeof(buf)),
				  p->n);
		}
		if (pub_wait_unless_stop(p, backoff)) {
			err = vlog_refuse(-EINTR, "stopping: %u events JetStream did not acknowledge are "
				       "not acknowledged to their agents either", p->n);
			break;
		}
		backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
	}
	p->holding = false;
	if (since && !err)
		vlog_info("JetStream at %s acknowledges again, after %.1f s", p->url,
			  vigil_stream_now() - since);
	if (err)
		return err;
done:
	p->done = *ticket;	/* one message per event: acknowledged before return */
	p->done_mark = mark;
	return 0;
}

uint64_t vigil_pub_done(const struct vigil_pub *p, uint64_t *mark)
{
	if (!p)
		return UINT64_MAX;
	*mark = p->done_mark;
	return p->done;
}

int vigil_pub_fd(const struct vigil_pub *p)
{
	return p && p->batch_layout ? p->efd : -1;
}

void vigil_pub_pump(struct vigil_pub *p)
{
	if (p && p->batch_layout)
		pub_batch_pump(p);
}

void vigil_pub_forget(struct vigil_pub *p)
{
	if (!p)
		return;
	p->oom = false;
	p->names.oom = 0;
	p->n = 0;
	p->names.len = 0;
}

/* PREFIX: tokens of letters, digits, '-' and '_', joined by single dots. */
static bool subject_ok(const char *s)
{
	size_t token = 0;

	for (; *s; s++) {
		if (*s == '.' && token)
			token = 0;
		else if (token_char(*s))
			token++;
		else
			return false;
	}
	return token > 0;
}

/* Whether the stream subject pattern takes every subject under want, a
 * "PREFIX.>" (tokens compared; '*' takes one, '>' the rest). */
static bool covers(const char *pattern, const char *want)
{
	for (;;) {
		size_t pl = strcspn(pattern, "."), wl = strcspn(want, ".");

		if (pl == 1 && *pattern == '>')
			return true;
		if (wl == 1 && *want == '>')
			return false;
		if (!(pl == 1 && *pattern == '*') && (pl != wl || memcmp(pattern, want, pl)))
			return false;
		if (!pattern[pl] || !want[wl])
			return !pattern[pl] && !want[wl];
		pattern += pl + 1;
		want += wl + 1;
	}
}

static int stream_check(struct vigil_pub *p, const char *stream)
{
	char want[sizeof(p->prefix) + 2];
	const char *subjects[] = { want };
	jsStreamInfo *si = NULL;
	jsStreamConfig cfg;
	jsErrCode code = 0;
	natsStatus s;
	bool ok = false;

	snprintf(want, sizeof(want), "%s.>", p->prefix);
	s = js_GetStreamInfo(&si, p->js, stream, NULL, &code);
	if (s == NATS_NOT_FOUND) {
		jsStreamConfig_Init(&cfg);
		cfg.Name = stream;
		cfg.Subjects = subjects;
		cfg.SubjectsLen = 1;
		cfg.Storage = js_FileStorage;
		/* An agent's reconnect plus spool replay fits in it. */
		cfg.Duplicates = (int64_t)(p->min_dup_window * 1e9);
		s = js_AddStream(&si, p->js, &cfg, NULL, &code);
		if (s != NATS_OK)
			return vlog_refuse(-EIO, "--publish %s: cannot create stream %s for %s: %s (JetStream error %d)",
					p->url, stream, want, nats_GetLastError(NULL), code);
		vlog_info("created JetStream stream %s for %s", stream, want);
		pub_check_durability(p, si);
		jsStreamInfo_Destroy(si);
		return 0;
	}
	if (s == NATS_NO_RESPONDERS || s == NATS_TIMEOUT) {
		bool refused;

		pthread_mutex_lock(&p->lock);
		refused = strcasestr(p->async_text, "permissions violation") != NULL;
		pthread_mutex_unlock(&p->lock);
		if (refused)
			return vlog_refuse(-EACCES, "--publish %s: the server refused permission for "
					"JetStream's API ($JS.API.>): %s", p->url, p->async_text);
		return vlog_refuse(-EIO, "--publish %s: no JetStream there (is the server run with -js?)",
				p->url);
	}
	if (s != NATS_OK)
		return vlog_refuse(-EIO, "--publish %s: cannot look up --publish-stream %s: %s", p->url,
				stream, nats_GetLastError(NULL));
	for (int i = 0; i < si->Config->SubjectsLen && !ok; i++)
		ok = covers(si->Config->Subjects[i], want);
	if (si->Config->NoAck) {
		jsStreamInfo_Destroy(si);
		return vlog_refuse(-EINVAL, "--publish %s: stream %s does not acknowledge (no_ack): "
				"nothing could ever be acknowledged to the agents", p->url, stream);
	}
	if (ok)
		pub_check_durability(p, si);
	jsStreamInfo_Destroy(si);
	if (!ok)
		return vlog_refuse(-EINVAL, "--publish %s: stream %s does not take subjects %s "
				"(add them, or choose --publish-stream or --publish-subject)",
				p->url, stream, want);
	return 0;
}

/* The URL list as logs show it: a password in it (nats://USER:PASS@HOST)
 * becomes "***". */
static void redact(const char *urls, char *out, size_t n)
{
	struct vigil_buf b = {};
	const char *u = urls;

	while (*u) {
		const char *end = strchr(u, ','), *at, *colon, *scheme = strstr(u, "://");

		if (!end)
			end = u + strlen(u);
		if (scheme >= end)
			scheme = NULL;
		at = memchr(u, '@', end - u);
		colon = scheme && at > scheme ? memchr(scheme + 3, ':', at - scheme - 3) : NULL;
		if (colon) {
			vbuf_put(&b, u, colon + 1 - u);
			vbuf_puts(&b, "***");
			vbuf_put(&b, at, end - at);
		} else {
			vbuf_put(&b, u, end - u);
		}
		if (*end)
			vbuf_putc(&b, *end++);
		u = end;
	}
	snprintf(out, n, "%.*s", (int)b.len, b.p ? b.p : "");
	vbuf_free(&b);
}

/* What libnats said about a failed connect, in the operator's terms: which
 * option to look at. */
static const char *connect_hint(const char *err, const struct vigil_pub_config *cfg)
{
	if (!err)
		return "";
	if (strstr(err, "certificate verify failed") || strstr(err, "verify error") ||
	    strstr(err, "issuer certificate") || strstr(err, "self-signed") ||
	    strstr(err, "self signed"))
		return " (the server's certificate is not signed by --publish-tls-ca, or does not "
		       "carry the expected name: --publish-tls-name)";
	if (strstr(err, "Authorization Violation") || strstr(err, "authorization violation"))
		return " (the server refused the credentials: --publish-creds, or user:password in "
		       "the URL)";
	if (strstr(err, "certificate required") || strstr(err, "alert") ||
	    strstr(err, "handshake"))
		return " (TLS handshake refused: does the server want a client certificate, "
		       "--publish-tls-cert and --publish-tls-key?)";
	/* TLS 1.3: a server that wants a client certificate closes the
	 * connection after the handshake, before its first reply. */
	if (strstr(err, "Expected 'PONG'") && !cfg->tls_cert &&
	    (cfg->tls_ca || !strncmp(cfg->urls, "tls://", 6)))
		return " (the server closed the connection after the TLS handshake: does it want a "
		       "client certificate, --publish-tls-cert and --publish-tls-key?)";
	if (strstr(err, "secure connection") || strstr(err, "TLS"))
		return " (the server and --publish disagree about TLS: tls:// or --publish-tls-ca "
		       "for a server that requires it, neither for one that does not)";
	return "";
}

/* Asynchronous errors from the server: a permission refused shows here
 * (the request it refused then times out). */
static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus s,
			   void *closure)
{
	struct vigil_pub *p = closure;
	const char *text = NULL;
	bool same;

	(void)sub;
	natsConnection_GetLastError(nc, &text);
	if (!text)
		text = natsStatus_GetText(s);
	pthread_mutex_lock(&p->lock);
	same = !strcmp(p->async_text, text);	/* said once, not per message */
	p->async_status = s;
	snprintf(p->async_text, sizeof(p->async_text), "%s", text);
	pthread_mutex_unlock(&p->lock);
	if (!same)
		vlog_info("--publish %s: the server says: %s", p->url, text);
}

static natsStatus set_tls(natsOptions *o, const struct vigil_pub_config *cfg, const char **what)
{
	natsStatus s = NATS_OK;

	if (!cfg->tls_ca && !cfg->tls_cert && !cfg->tls_name && strncmp(cfg->urls, "tls://", 6))
		return NATS_OK;
	s = natsOptions_SetSecure(o, true);
	if (s == NATS_OK && cfg->tls_ca && (*what = "--publish-tls-ca") &&
	    (s = natsOptions_LoadCATrustedCertificates(o, cfg->tls_ca)) != NATS_OK)
		return s;
	if (s == NATS_OK && cfg->tls_cert && (*what = "--publish-tls-cert/--publish-tls-key") &&
	    (s = natsOptions_LoadCertificatesChain(o, cfg->tls_cert, cfg->tls_key)) != NATS_OK)
		return s;
	if (s == NATS_OK && cfg->tls_name)
		s = natsOptions_SetExpectedHostname(o, cfg->tls_name);
	*what = NULL;
	return s;
}

/* "URL[,URL...]": a cluster's servers, tried in turn (natsOptions_SetURL
 * takes one). */
static natsStatus set_servers(natsOptions *o, const char *urls)
{
	char copy[1024], *save = NULL, *url;
	const char *list[16];
	int n = 0;

	if (snprintf(copy, sizeof(copy), "%s", urls) >= (int)sizeof(copy))
		return NATS_INVALID_ARG;
	for (url = strtok_r(copy, ",", &save); url; url = strtok_r(NULL, ",", &save)) {
		if (n == 16)
			return NATS_INVALID_ARG;
		list[n++] = url;
	}
	return n ? natsOptions_SetServers(o, list, n) : NATS_INVALID_ARG;
}

int vigil_pub_open(struct vigil_pub **out, const struct vigil_pub_config *cfg)
{
	struct vigil_pub *p = calloc(1, sizeof(*p));
	natsOptions *o = NULL;
	const char *what = NULL;
	jsOptions jo;
	natsStatus s;
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->efd < 0) {
		err = vlog_err(-errno, "eventfd");
		free(p);
		return err;
	}
	if (strlen(cfg->prefix) >= sizeof(p->prefix) || !subject_ok(cfg->prefix)) {
		vigil_pub_close(p);
		return vlog_refuse(-EINVAL, "--publish-subject '%s': want tokens like vigil or site.vigil "
				"(letters, digits, - and _, joined by dots)", cfg->prefix);
	}
	if (!*cfg->stream || strlen(cfg->stream) > 200 || strpbrk(cfg->stream, ".*> \t/\\")) {
		vigil_pub_close(p);
		return vlog_refuse(-EINVAL, "--publish-stream '%s': want a name without dots, spaces, "
				"slashes or wildcards", cfg->stream);
	}
	strcpy(p->prefix, cfg->prefix);
	strcpy(p->stream, cfg->stream);
	p->batch_layout = cfg->batch;
	p->min_dup_window = cfg->min_window;
	redact(cfg->urls, p->url, sizeof(p->url));
	p->wait_ms = cfg->wait * 1000;
	p->stop = cfg->stop;
	p->on_hold = cfg->holding;
	p->on_hold_ctx = cfg->holding_ctx;
	s = natsOptions_Create(&o);
	p->lib = true;
	if (s == NATS_OK)
		s = set_servers(o, cfg->urls);
	if (s == NATS_OK)
		s = natsOptions_SetName(o, "vigil-collector");
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);	/* the collector holds; it never gives up */
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(o, 500);
	/* A server that stops answering (stopped, its host gone) is left for
	 * another of the list within seconds, not libnats's 2 minutes. */
	if (s == NATS_OK)
		s = natsOptions_SetPingInterval(o, 1000);
	if (s == NATS_OK)
		s = natsOptions_SetMaxPingsOut(o, 3);
	if (s == NATS_OK && cfg->creds && (what = "--publish-creds") &&
	    (s = natsOptions_SetUserCredentialsFromFiles(o, cfg->creds, NULL)) == NATS_OK)
		what = NULL;
	if (s == NATS_OK)
		s = set_tls(o, cfg, &what);
	if (s == NATS_OK)
		s = natsOptions_SetErrorHandler(o, on_async_error, p);
	if (s == NATS_OK)
		s = natsConnection_Connect(&p->nc, o);
	natsOptions_Destroy(o);
	if (s != NATS_OK) {
		const char *e = nats_GetLastError(NULL);

		if (what)
			err = vlog_refuse(-EINVAL, "--publish %s: %s: %s", p->url, what,
				       e ? e : natsStatus_GetText(s));
		else
			err = vlog_refuse(-EIO, "--publish %s: cannot connect: %s%s", p->url,
				       e ? e : natsStatus_GetText(s), connect_hint(e, cfg));
		goto fail;
	}
	jsOptions_Init(&jo);
	jo.Wait = p->wait_ms;
	jo.PublishAsync.MaxPending = 1 << 16;
	jo.PublishAsync.StallWait = p->wait_ms;
	if (p->batch_layout) {	/* every ack, for the pipeline */
		jo.PublishAsync.AckHandler = pub_batch_on_ack;
		jo.PublishAsync.AckHandlerClosure = p;
	} else {
		jo.PublishAsync.ErrHandler = on_pub_error;
		jo.PublishAsync.ErrHandlerClosure = p;
	}
	s = natsConnection_JetStream(&p->js, p->nc, &jo);
	if (s != NATS_OK) {
		err = vlog_refuse(-EIO, "--publish %s: %s", p->url, natsStatus_GetText(s));
		goto fail;
	}
	if ((err = stream_check(p, cfg->stream)))
		goto fail;
	if (p->batch_layout)
		vlog_info("publishing to JetStream stream %s at %s, batches of one agent ring on "
			  "%s.batch.NODE.BOOT.RING", cfg->stream, p->url, p->prefix);
	else
		vlog_info("publishing to JetStream stream %s at %s, subjects %s.NODE.KIND",
			  cfg->stream, p->url, p->prefix);
	p->ready = true;
	*out = p;
	return 0;
fail:
	vigil_pub_close(p);
	return err;
}

void vigil_pub_close(struct vigil_pub *p)
{
	if (!p)
		return;
	if (p->ready && p->batch_layout)
		vlog_info("JetStream: %llu events published in %llu messages; %llu look-ups of an "
			  "agent ring's last message, %llu events found there already; held %llu "
			  "times", (unsigned long long)p->published, (unsigned long long)p->messages,
			  (unsigned long long)p->lookups, (unsigned long long)p->trimmed,
			  (unsigned long long)p->held);
	else if (p->ready)
		vlog_info("JetStream: %llu events published; held %llu times",
			  (unsigned long long)p->published, (unsigned long long)p->held);
	jsCtx_Destroy(p->js);
	natsConnection_Destroy(p->nc);
	if (p->lib)
		nats_CloseAndWait(2000);
	pub_batch_free(p);
	close(p->efd);
	pthread_mutex_destroy(&p->lock);
	vbuf_free(&p->names);
	vbuf_free(&p->scratch);
	free(p->rings);
	free(p->m);
	free(p);
}

void vigil_pub_counts(const struct vigil_pub *p, struct vigil_pub_counts *out)
{
	uint64_t pending = p->n;

	for (unsigned i = 0; i < p->nrings; i++)
		pending += p->rings[i].qn;	/* batch layout: in the pipeline */
	*out = (struct vigil_pub_counts){ .published = p->published, .pending = pending,
					  .messages = p->messages, .refusals = p->refusals,
					  .holding = p->holding };
}
