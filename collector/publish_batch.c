// SPDX-License-Identifier: GPL-2.0
/*
 * The batch layout (--publish-layout batch): a message carries consecutive
 * JSON lines of one agent ring, on that ring's own subject
 * PREFIX.batch.NODE.BOOT.RING, with headers Vigil-First and Vigil-Last (the
 * ring offsets of its first and last record) and Vigil-Lines.
 *
 * Pipelined: vigil_pub_send hands a collector batch over as a ticket and
 * returns; the loop reads on while JetStream stores. Acks come back on
 * libnats's thread (pub_batch_on_ack), which only queues them and wakes
 * the loop (vigil_pub_fd); the loop (pub_batch_pump) sends each ring's next
 * message when the one before is acknowledged, coalescing the lines queued
 * meanwhile up to the server's payload limit. A ticket is done when each
 * of its lines is in the stream, and tickets are done in order: the
 * collector acknowledges an agent only up to the last ticket done.
 *
 * Resumable: one message in flight per ring, published with
 * Nats-Expected-Last-Subject-Sequence set to the stream sequence of the
 * ring's message before it, so a message never lands where the one before
 * did not (a leader failover that loses k makes k+1 fail too; the ring then
 * reads the stream and publishes again from the first line not in it). One
 * in flight, because that sequence is the stream's (every subject's
 * messages count in it) and known only once the message before is
 * acknowledged. A second message in flight would have to name a sequence
 * predicted, and a prediction is not safe: when another collector writes
 * to the stream, message k-1 may get the very sequence predicted for k,
 * and then k+1 lands although k was refused. Lines queued behind the
 * message in flight make the next one bigger instead; the pipeline runs
 * across rings and against the loop's own work.
 *
 * Whoever else wrote to the subject meanwhile (a collector the agent
 * switched to or from, or an attempt of ours that timed out but landed)
 * makes the server refuse the message; the collector then reads the
 * subject's last message, drops every line at or before its Vigil-Last,
 * and publishes the rest after it. So no line is stored twice and none is
 * skipped, wherever two collectors cut their batches. Nats-Msg-Id
 * (NODE:BOOT:RING:FIRST:LAST) is the second guard: it names exactly the
 * records a message holds, so a partial message and a fuller one never
 * share an id (the fuller one would be dropped as a duplicate).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "publish_int.h"
#include "stream.h"

#define RINGS_MAX 8192		/* rings remembered; one forgotten is looked up again */
#define HDR_ROOM 1024		/* of max_payload, kept for the headers */

static bool same_ring(const struct pub_ring *r, const char *node, const char *boot,
		      uint32_t ring)
{
	return r->ring == ring && !strcmp(r->boot, boot) && !strcmp(r->node, node);
}

/* The ring's index in p->rings, made when new; -1: no memory. */
static int ring_index(struct vigil_pub *p, const char *node, const char *boot, uint32_t ring)
{
	struct pub_ring *r;
	struct vigil_buf s = {};
	unsigned i;

	if (p->last_ring < p->nrings && same_ring(&p->rings[p->last_ring], node, boot, ring))
		return p->last_ring;
	for (i = 0; i < p->nrings; i++)
		if (same_ring(&p->rings[i], node, boot, ring))
			return p->last_ring = i;
	if (p->nrings == RINGS_MAX) {	/* the least recently used idle one goes */
		for (unsigned j = 0, found = i = 0; j < p->nrings; j++)
			if (!p->rings[j].qn && (!found++ || p->rings[j].used < p->rings[i].used))
				i = j;
		if (p->rings[i].qn)
			return -1;	/* every ring has lines queued */
		free(p->rings[i].q);
	} else {
		if (p->nrings == p->rings_cap) {
			unsigned cap = p->rings_cap ? p->rings_cap * 2 : 16;
			struct pub_ring *bigger = realloc(p->rings, cap * sizeof(*bigger));

			if (!bigger)
				return -1;
			p->rings = bigger;
			p->rings_cap = cap;
		}
		i = p->nrings++;
	}
	r = &p->rings[i];
	memset(r, 0, sizeof(*r));
	snprintf(r->node, sizeof(r->node), "%s", node);
	snprintf(r->boot, sizeof(r->boot), "%s", boot);
	r->ring = ring;
	vbuf_puts(&s, p->prefix);
	vbuf_puts(&s, ".batch.");
	pub_put_token(&s, node, strlen(node));
	vbuf_putc(&s, '.');
	pub_put_token(&s, boot, strlen(boot));
	vbuf_putc(&s, '.');
	vbuf_put_u64(&s, ring);
	snprintf(r->subject, sizeof(r->subject), "%.*s", (int)s.len, s.p ? s.p : "");
	vbuf_free(&s);
	return p->last_ring = i;
}

void pub_batch_line(struct vigil_pub *p, struct pub_msg *m, const char *node, const char *boot,
		    uint32_t ring)
{
	int i = ring_index(p, node, boot, ring);

	if (i < 0) {
		p->oom = true;
		return;
	}
	m->ring = i;
	p->rings[i].used = p->tickets + 1;
}

static uint64_t header_u64(natsMsg *m, const char *key, bool *found)
{
	const char *v = NULL;

	*found = natsMsgHeader_Get(m, key, &v) == NATS_OK && v;
	return *found ? strtoull(v, NULL, 10) : 0;
}

/* Reads what the stream holds of r: its subject's last message. */
static natsStatus look_up(struct vigil_pub *p, struct pub_ring *r)
{
	natsMsg *m = NULL;
	jsErrCode code = 0;
	jsOptions o;
	natsStatus s;

	jsOptions_Init(&o);
	o.Wait = p->wait_ms;
	p->lookups++;
	s = js_GetLastMsg(&m, p->js, p->stream, r->subject, &o, &code);
	if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) {
		r->seq = 0;
		r->has_trim = false;
		r->known = true;
		return NATS_OK;
	}
	if (s != NATS_OK) {
		pub_refused(p, s, code, nats_GetLastError(NULL));
		return s;
	}
	r->seq = natsMsg_GetSequence(m);
	r->trim = header_u64(m, "Vigil-Last", &r->has_trim);
	natsMsg_Destroy(m);
	if (!r->has_trim) {
		vlog_info("JetStream: the last message on %s has no Vigil-Last header (not a vigil "
			  "batch): publishing after it", r->subject);
	}
	r->known = true;
	return NATS_OK;
}

/* The message of the first n lines queued on ring r: their bytes, each
 * line with its '\n'. */
static natsStatus build(struct vigil_pub *p, const struct pub_ring *r, unsigned n,
			natsMsg **out)
{
	const struct pub_ref *q = r->q + r->qhead;
	const struct pub_msg *first = &q[0].t->m[q[0].i], *last = &q[n - 1].t->m[q[n - 1].i];
	char id[400], num[24];
	natsStatus s;

	p->scratch.len = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct pub_msg *m = &q[i].t->m[q[i].i];

		vbuf_put(&p->scratch, q[i].t->data + m->off, m->len + 1);
	}
	if (p->scratch.oom)
		return NATS_NO_MEMORY;
	s = natsMsg_Create(out, r->subject, NULL, p->scratch.p, (int)p->scratch.len);
	snprintf(id, sizeof(id), "%s:%s:%" PRIu32 ":%" PRIu64 ":%" PRIu64,
		 r->node, r->boot, r->ring, first->at, last->at);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(*out, "Nats-Msg-Id", id);
	snprintf(num, sizeof(num), "%" PRIu64, r->seq);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(*out, "Nats-Expected-Last-Subject-Sequence", num);
	snprintf(num, sizeof(num), "%" PRIu64, first->at);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(*out, "Vigil-First", num);
	snprintf(num, sizeof(num), "%" PRIu64, last->at);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(*out, "Vigil-Last", num);
	snprintf(num, sizeof(num), "%u", n);
	if (s == NATS_OK)
		s = natsMsgHeader_Set(*out, "Vigil-Lines", num);
	return s;
}

/* The first n lines queued on r are in the stream: off its queue, and
 * counted off their tickets. */
static void ring_pop(struct pub_ring *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		r->q[r->qhead + i].t->left--;
	r->qhead += n;
	r->qn -= n;
	if (!r->qn)
		r->qhead = 0;
}

/* Appends a line to r's queue; false: no memory. */
static bool ring_push(struct pub_ring *r, struct pub_ticket *t, unsigned i)
{
	if (r->qhead + r->qn == r->qcap) {
		if (r->qhead) {	/* room at the front: moved there */
			memmove(r->q, r->q + r->qhead, r->qn * sizeof(*r->q));
			r->qhead = 0;
		} else {
			unsigned cap = r->qcap ? r->qcap * 2 : 256;
			struct pub_ref *bigger = realloc(r->q, cap * sizeof(*bigger));

			if (!bigger)
				return false;
			r->q = bigger;
			r->qcap = cap;
		}
	}
	r->q[r->qhead + r->qn++] = (struct pub_ref){ t, i };
	return true;
}

int pub_batch_take(struct vigil_pub *p, const struct vigil_buf *batch, uint64_t ticket,
		   uint64_t mark)
{
	struct pub_ticket *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->id = ticket;
	t->mark = mark;
	t->n = t->left = p->n;
	t->bytes = batch->len + p->n * sizeof(*t->m);
	if (p->n && (!(t->data = malloc(batch->len)) || !(t->m = malloc(p->n * sizeof(*t->m))))) {
		free(t->data);
		free(t);
		return -ENOMEM;
	}
	if (p->n) {
		memcpy(t->data, batch->p, batch->len);
		memcpy(t->m, p->m, p->n * sizeof(*t->m));
	}
	for (unsigned i = 0; i < t->n; i++)
		if (!ring_push(&p->rings[t->m[i].ring], t, i)) {
			/* Taken back (each at the end of its ring's queue):
			 * the batch is not out, its agents are not acknowledged. */
			while (i--)
				p->rings[t->m[i].ring].qn--;
			free(t->data);
			free(t->m);
			free(t);
			return -ENOMEM;
		}
	if (p->tail)
		p->tail->next = t;
	else
		p->head = t;
	p->tail = t;
	p->queued += t->bytes;
	pub_batch_pump(p);
	return 0;
}

void pub_batch_on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
	struct vigil_pub *p = closure;
	struct pub_result r = { .ok = pa != NULL };
	uint64_t one = 1;
	bool found;

	(void)js;
	snprintf(r.subject, sizeof(r.subject), "%s", natsMsg_GetSubject(msg));
	r.first = header_u64(msg, "Vigil-First", &found);
	r.last = header_u64(msg, "Vigil-Last", &found);
	if (pa) {
		r.seq = pa->Sequence;
		r.duplicate = pa->Duplicate;
	} else if (pae) {
		r.s = pae->Err;
		r.code = pae->ErrCode;
		snprintf(r.text, sizeof(r.text), "%s", pae->ErrText ? pae->ErrText : "");
	}
	natsMsg_Destroy(msg);
	pthread_mutex_lock(&p->lock);
	if (p->nres == p->res_cap) {
		unsigned cap = p->res_cap ? p->res_cap * 2 : 64;
		struct pub_result *bigger = realloc(p->res, cap * sizeof(*bigger));

		if (bigger) {
			p->res = bigger;
			p->res_cap = cap;
		}
	}
	/* No room: the result is lost; the loop then takes every message in
	 * flight as refused, and reads what the stream holds. */
	if (p->nres < p->res_cap)
		p->res[p->nres++] = r;
	else
		p->lost = true;
	pthread_mutex_unlock(&p->lock);
	if (write(p->efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the loop has a wake-up waiting already */
	}
}

/* The ring whose message in flight res is of; NULL: a message given up
 * already (its ring was refused since, or forgotten). Matched by its first
 * and last line: a ring refused while its message was in flight (the
 * results lost for want of memory) may send again from the same first
 * line with more lines, and the late result of the first message must
 * not take those as stored. */
static struct pub_ring *ring_of(struct vigil_pub *p, const struct pub_result *res)
{
	for (unsigned i = 0; i < p->nrings; i++) {
		struct pub_ring *r = &p->rings[i];

		if (r->inflight && r->inflight_first == res->first &&
		    r->inflight_last == res->last && !strcmp(r->subject, res->subject))
			return r;
	}
	return NULL;
}

/* A refusal, or an ack that did not come: the stream says what it holds of
 * r at the next look-up, not before r's backoff. */
static void refused(struct vigil_pub *p, struct pub_ring *r, natsStatus s, int code,
		    const char *text)
{
	char buf[256];

	r->known = false;
	r->inflight = 0;
	r->retry_at = vigil_stream_now() + r->backoff / 1000.0;
	r->backoff = r->backoff * 2 > 5000 ? 5000 : r->backoff * 2;
	p->refusals++;
	pub_refused(p, s, code, text);
	if (!r->failed) {
		r->failed = true;
		p->failing++;
	}
	if (!p->since) {
		vlog_info("JetStream at %s does not acknowledge (%s): holding the lines of %s and "
			  "after, and their agents, retrying", p->url, pub_why(p, s, buf, sizeof(buf)),
			  r->subject);
		p->since = p->told = vigil_stream_now();
		p->held++;
	}
}

static void acknowledged(struct vigil_pub *p, struct pub_ring *r, const struct pub_result *res)
{
	unsigned n = r->inflight;

	if (res->duplicate)
		r->known = false;	/* stored before: read where the subject is */
	else
		r->seq = res->seq;
	r->inflight = 0;
	r->backoff = 100;
	if (r->failed) {
		r->failed = false;
		p->failing--;
	}
	ring_pop(r, n);
	p->published += n;
	p->messages++;
}

/* What libnats's thread queued. */
static void take_results(struct vigil_pub *p)
{
	struct pub_result *res;
	uint64_t count;
	unsigned n;
	bool lost;

	if (read(p->efd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing came since the last read */
	}
	pthread_mutex_lock(&p->lock);
	res = p->res;
	n = p->nres;
	p->res = NULL;
	p->nres = p->res_cap = 0;
	lost = p->lost;
	p->lost = false;
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < n; i++) {
		struct pub_ring *r = ring_of(p, &res[i]);

		if (!r)
			continue;	/* given up already */
		if (res[i].ok)
			acknowledged(p, r, &res[i]);
		else
			refused(p, r, res[i].s, res[i].code, res[i].text);
	}
	free(res);
	for (unsigned i = 0; lost && i < p->nrings; i++)
		if (p->rings[i].inflight)
			refused(p, &p->rings[i], NATS_NO_MEMORY, 0, "an ack lost for want of memory");
}

/* Sends ring r's next message: its queued lines not in flight, up to the
 * server's payload limit, never cut between lines of one record (a gap
 * line and its record share an offset), after those the stream holds
 * already. */
static void send_ring(struct vigil_pub *p, struct pub_ring *r)
{
	size_t room = natsConnection_GetMaxPayload(p->nc), bytes = 0;
	unsigned n = 0, cut = 0;
	natsMsg *msg = NULL;
	jsPubOptions o;
	natsStatus s;

	room = room > 2 * HDR_ROOM ? room - HDR_ROOM : HDR_ROOM;
	if (!r->known && (s = look_up(p, r)) != NATS_OK)
		return refused(p, r, s, 0, nats_GetLastError(NULL));
	while (r->qn && r->has_trim) {	/* in the stream already */
		const struct pub_ref *t = &r->q[r->qhead];

		if (t->t->m[t->i].at > r->trim)
			break;
		ring_pop(r, 1);
		p->trimmed++;
	}
	for (; n < r->qn; n++) {
		const struct pub_ref *t = &r->q[r->qhead + n];
		const struct pub_msg *m = &t->t->m[t->i];

		if (n && bytes + m->len + 1 > room && cut)
			break;
		if (n) {
			const struct pub_ref *e = t - 1;

			if (e->t->m[e->i].at != m->at)
				cut = n;	/* a message may end before this line */
		}
		bytes += m->len + 1;
	}
	if (n < r->qn)
		n = cut;
	if (!n)
		return;
	s = build(p, r, n, &msg);
	jsPubOptions_Init(&o);
	o.MaxWait = p->wait_ms;
	if (s == NATS_OK)
		s = js_PublishMsgAsync(p->js, &msg, &o);
	natsMsg_Destroy(msg);
	if (s != NATS_OK)
		return refused(p, r, s, 0, nats_GetLastError(NULL));
	r->inflight = n;
	r->inflight_first = r->q[r->qhead].t->m[r->q[r->qhead].i].at;
	r->inflight_last = r->q[r->qhead + n - 1].t->m[r->q[r->qhead + n - 1].i].at;
}

/* Frees the tickets whose lines are all in the stream, oldest first: the
 * collector may acknowledge up to the last. */
static void retire_tickets(struct vigil_pub *p)
{
	struct pub_ticket *t;

	while ((t = p->head) && !t->left) {
		p->done = t->id;
		p->done_mark = t->mark;
		p->queued -= t->bytes;
		p->head = t->next;
		if (!p->head)
			p->tail = NULL;
		free(t->data);
		free(t->m);
		free(t);
	}
}

void pub_batch_pump(struct vigil_pub *p)
{
	double now = vigil_stream_now();
	bool connected;

	take_results(p);
	connected = natsConnection_Status(p->nc) == NATS_CONN_STATUS_CONNECTED;
	for (unsigned i = 0; i < p->nrings; i++) {
		struct pub_ring *r = &p->rings[i];

		if (!r->qn || r->inflight || now < r->retry_at)
			continue;
		/* Not connected: publishing now would only fill libnats's
		 * reconnect buffer; the next pump tries. */
		if (!connected) {
			refused(p, r, NATS_CONNECTION_DISCONNECTED, 0, NULL);
			continue;
		}
		send_ring(p, r);
	}
	retire_tickets(p);
	if (p->since && !p->failing) {
		vlog_info("JetStream at %s acknowledges again, after %.1f s", p->url,
			  vigil_stream_now() - p->since);
		p->since = 0;
	} else if (p->since && now - p->told >= 30) {
		/* A refusal may be for good (a full stream that discards new
		 * messages, a message over its size, a permission): said
		 * again, with how long it has lasted. */
		char buf[256];

		p->told = now;
		vlog_info("JetStream at %s still does not acknowledge after %.0f s (%s): holding "
			  "%zu bytes of lines", p->url, now - p->since,
			  pub_why(p, p->last_status, buf, sizeof(buf)), p->queued);
	}
	p->holding = p->since != 0;
}

void pub_batch_free(struct vigil_pub *p)
{
	while (p->head) {
		struct pub_ticket *t = p->head;

		p->head = t->next;
		free(t->data);
		free(t->m);
		free(t);
	}
	for (unsigned i = 0; i < p->nrings; i++)
		free(p->rings[i].q);
	free(p->res);
}
