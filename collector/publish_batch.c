// SPDX-License-Identifier: GPL-2.0
/*
 * The batch layout (--publish-layout batch): a message carries consecutive
 * JSON lines of one agent ring, on that ring's own subject
 * PREFIX.batch.NODE.BOOT.RING, with headers Vigil-First and Vigil-Last (the
 * ring offsets of its first and last record) and Vigil-Lines.
 *
 * Resumable: one message in flight per ring, published with
 * Nats-Expected-Last-Subject-Sequence set to the stream sequence of the
 * ring's last message. Whoever else wrote to the subject meanwhile (a
 * collector the agent switched to or from, or an attempt of ours that timed
 * out but landed) makes the server refuse it; the collector then reads the
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
#include "log.h"
#include "publish_int.h"

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
	if (p->nrings == RINGS_MAX) {	/* the least recently used goes */
		for (unsigned j = i = 0; j < p->nrings; j++)
			if (p->rings[j].used < p->rings[i].used)
				i = j;
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
	m->sent = false;
	p->rings[i].used = p->batches;
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

/* The message of lines [from, to) of the batch (indices in p->m, all of
 * ring r): their bytes, each line with its '\n'. */
static natsStatus build(struct vigil_pub *p, const struct vigil_buf *batch, const unsigned *idx,
			unsigned n, const struct pub_ring *r, natsMsg **out)
{
	const struct pub_msg *first = &p->m[idx[0]], *last = &p->m[idx[n - 1]];
	char id[400], num[24];
	const char *data = batch->p + first->off;
	size_t len = last->off + last->len + 1 - first->off;
	natsStatus s;

	/* Lines of one ring are contiguous unless another ring's came
	 * between them (UDP): those are copied. */
	if (len != 0) {
		size_t sum = 0;

		for (unsigned i = 0; i < n; i++)
			sum += p->m[idx[i]].len + 1;
		if (sum != len) {
			p->scratch.len = 0;
			for (unsigned i = 0; i < n; i++)
				vbuf_put(&p->scratch, batch->p + p->m[idx[i]].off,
					 p->m[idx[i]].len + 1);
			if (p->scratch.oom)
				return NATS_NO_MEMORY;
			data = p->scratch.p;
			len = p->scratch.len;
		}
	}
	s = natsMsg_Create(out, r->subject, NULL, data, (int)len);
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

/* Publishes one message and waits for its ack; r follows what the stream
 * then holds. */
static natsStatus publish_one(struct vigil_pub *p, const struct vigil_buf *batch,
			      const unsigned *idx, unsigned n, struct pub_ring *r)
{
	natsMsg *msg = NULL;
	jsPubAck *pa = NULL;
	jsErrCode code = 0;
	jsPubOptions o;
	natsStatus s = build(p, batch, idx, n, r, &msg);

	jsPubOptions_Init(&o);
	o.MaxWait = p->wait_ms;
	if (s == NATS_OK)
		s = js_PublishMsg(&pa, p->js, msg, &o, &code);
	natsMsg_Destroy(msg);
	if (s != NATS_OK) {
		/* Refused (another wrote to the subject) or unanswered (it may
		 * have landed): the stream says which, at the next look-up. */
		r->known = false;
		pub_refused(p, s, code, nats_GetLastError(NULL));
		return s;
	}
	if (pa->Duplicate)
		r->known = false;	/* stored before: read where the subject is */
	else
		r->seq = pa->Sequence;
	jsPubAck_Destroy(pa);
	for (unsigned i = 0; i < n; i++)
		p->m[idx[i]].sent = true;
	p->messages++;
	return NATS_OK;
}

/* Publishes ring ri's lines that are not in the stream yet, in messages
 * under the server's payload limit, never cutting between lines of one
 * record (a gap line and its record share an offset). */
static natsStatus publish_ring(struct vigil_pub *p, const struct vigil_buf *batch, unsigned ri,
			       unsigned *idx)
{
	struct pub_ring *r = &p->rings[ri];
	size_t room = natsConnection_GetMaxPayload(p->nc), bytes = 0;
	unsigned n = 0, cut = 0;
	natsStatus s;

	room = room > 2 * HDR_ROOM ? room - HDR_ROOM : HDR_ROOM;
	if (!r->known && (s = look_up(p, r)) != NATS_OK)
		return s;
	for (unsigned i = 0; i < p->n; i++) {
		struct pub_msg *m = &p->m[i];

		if (m->ring != ri || m->sent)
			continue;
		if (r->has_trim && m->at <= r->trim) {
			m->sent = true;	/* in the stream already */
			p->trimmed++;
			continue;
		}
		if (n && bytes + m->len + 1 > room && cut) {
			unsigned rest = n - cut;

			if ((s = publish_one(p, batch, idx, cut, r)) != NATS_OK)
				return s;
			memmove(idx, idx + cut, rest * sizeof(*idx));
			n = rest;
			bytes = 0;
			for (unsigned j = 0; j < n; j++)
				bytes += p->m[idx[j]].len + 1;
			cut = 0;
		}
		if (n && p->m[idx[n - 1]].at != m->at)
			cut = n;	/* a message may end before this line */
		idx[n++] = i;
		bytes += m->len + 1;
	}
	return n ? publish_one(p, batch, idx, n, r) : NATS_OK;
}

natsStatus pub_batch_attempt(struct vigil_pub *p, const struct vigil_buf *batch)
{
	unsigned *idx = malloc((p->n ? p->n : 1) * sizeof(*idx));
	natsStatus s = NATS_OK;

	if (!idx)
		return NATS_NO_MEMORY;
	p->batches++;
	/* Each ring once, in the order its first line came. */
	for (unsigned i = 0; i < p->n && s == NATS_OK; i++) {
		struct pub_ring *r = &p->rings[p->m[i].ring];

		if (r->round == p->batches)
			continue;
		r->round = p->batches;
		s = publish_ring(p, batch, p->m[i].ring, idx);
	}
	free(idx);
	return s;
}
