/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the publisher (publish.h): its state, shared by publish.c (the
 * connection, the stream, one message per event), publish_batch.c (many
 * records of one agent ring per message) and publish_check.c (what the
 * stream and the server promise).
 */
#ifndef VIGIL_COLLECTOR_PUBLISH_INT_H
#define VIGIL_COLLECTOR_PUBLISH_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <nats/nats.h>
#include "publish.h"

/* Bytes of lines the pipeline keeps for JetStream (batch layout) before the
 * collector stops reading: a few messages of the server's payload limit in
 * flight per ring, and what arrives meanwhile. */
#define PUB_WINDOW (16u << 20)

/* One line of the batch. */
struct pub_msg {
	size_t off, len;	/* the line in the batch, without its '\n' */
	size_t names;		/* event layout: offset in vigil_pub.names,
				 * "SUBJECT\0ID\0" */
	uint64_t at;		/* ring offset of the record it is of */
	unsigned ring;		/* batch layout: index in vigil_pub.rings */
};

/* Batch layout: a collector batch handed over (vigil_pub_send), kept until
 * JetStream has acknowledged each of its lines; tickets are done in order. */
struct pub_ticket {
	struct pub_ticket *next;
	uint64_t id, mark;	/* vigil_pub_send's */
	char *data;		/* the batch's bytes, copied */
	struct pub_msg *m;	/* its lines (off into data) */
	unsigned n, left;	/* lines, and those not acknowledged yet */
	size_t bytes;
};

/* A line waiting in its ring's queue. */
struct pub_ref {
	struct pub_ticket *t;
	unsigned i;		/* in t->m */
};

/* What libnats's thread saw of a message (on_pub_ack), for the loop. */
struct pub_result {
	char subject[512];
	uint64_t first, last;	/* its Vigil-First and Vigil-Last */
	uint64_t seq;
	bool ok, duplicate;
	natsStatus s;
	int code;
	char text[160];
};

/* An agent ring as the batch layout knows it: its subject, and what the
 * stream holds of it. */
struct pub_ring {
	char node[256], boot[33];
	uint32_t ring;
	char subject[512];	/* PREFIX.batch.NODE.BOOT.RING */
	/* seq and trim are the stream's: looked up (after a start, or after
	 * any attempt that failed), or what this collector's last publish
	 * left. Not known: look up before publishing. */
	bool known;
	uint64_t seq;		/* stream sequence of the subject's last message, 0: none */
	bool has_trim;
	uint64_t trim;		/* records at or before this ring offset are in the
				 * stream (the last message's Vigil-Last, as looked up) */
	uint64_t used;		/* the ticket that last had a line of it: which
				 * one goes when the table is full (never one
				 * with lines queued) */
	/* Its lines not in the stream yet, oldest first; the first inflight
	 * of them are in its one message in flight, known by its Vigil-First
	 * and Vigil-Last (which say what lines it holds: a message sent again
	 * from the same first line may hold more). */
	struct pub_ref *q;
	unsigned qhead, qn, qcap, inflight;
	uint64_t inflight_first, inflight_last;
	double retry_at;	/* refused: not again before */
	bool failed;		/* its last message was refused */
	int64_t backoff;	/* ms, doubled at each refusal in a row */
};

struct vigil_pub {
	natsConnection *nc;
	jsCtx *js;
	char prefix[128];
	char url[256];
	char stream[208];
	int64_t wait_ms;
	double min_dup_window;	/* seconds the stream's duplicate window must cover */
	bool batch_layout;
	volatile sig_atomic_t *stop;
	void (*on_hold)(void *ctx);	/* vigil_pub_config.holding */
	void *on_hold_ctx;
	struct pub_msg *m;
	unsigned n, cap;
	struct vigil_buf names;
	struct pub_ring *rings;
	unsigned nrings, rings_cap, last_ring;
	struct vigil_buf scratch;	/* a message's lines */
	/* The pipeline (batch layout): tickets in order, the oldest first. */
	struct pub_ticket *head, *tail;
	uint64_t tickets;	/* the last ticket given */
	uint64_t done, done_mark;	/* every ticket up to done is acknowledged */
	size_t queued;		/* bytes of the tickets kept */
	int efd;		/* eventfd: libnats's thread has results */
	struct pub_result *res;	/* under lock */
	unsigned nres, res_cap;
	bool lost;		/* under lock: a result found no room */
	unsigned failing;	/* rings whose last message was refused */
	double since, told;	/* holding since, last said */
	/* Set by libnats's thread, for messages JetStream refused or timed out. */
	atomic_uint failed;
	pthread_mutex_t lock;	/* the refusal below */
	natsStatus last_status;
	int last_code;
	char last_text[160];	/* the server's words */
	natsStatus async_status;	/* the last asynchronous error (NATS_OK: none) */
	char async_text[200];
	bool oom;		/* a line could not be marked: the batch fails */
	bool ready;		/* opened: its counts are worth a line at close */
	bool lib;		/* libnats was started: it is closed at the end */
	uint64_t published, held, messages, lookups, trimmed;
	uint64_t refusals;	/* attempts JetStream refused or did not acknowledge */
	bool holding;		/* agents held: JetStream does not acknowledge */
};

/* A subject token from any text: other characters than letters, digits,
 * '-' and '_' become '_'. */
void pub_put_token(struct vigil_buf *b, const char *s, size_t n);
/* Marks the line [from, end of batch) as one of ring (node, boot, ring). */
void pub_batch_line(struct vigil_pub *p, struct pub_msg *m, const char *node, const char *boot,
		    uint32_t ring);
/* Batch layout: takes the batch's marked lines as ticket `ticket` (copied)
 * and sends what can go; -ENOMEM. */
int pub_batch_take(struct vigil_pub *p, const struct vigil_buf *batch, uint64_t ticket,
		   uint64_t mark);
/* Batch layout: takes libnats's results, sends what can go (at most one
 * message in flight per ring), moves p->done on. */
void pub_batch_pump(struct vigil_pub *p);
/* libnats's callback for every message published (batch layout). */
void pub_batch_on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure);
/* Frees the tickets and the rings' queues. */
void pub_batch_free(struct vigil_pub *p);
/* Sleeps ms unless stop is set meanwhile; true when it is. */
bool pub_wait_unless_stop(struct vigil_pub *p, int64_t ms);
/* Says, in the log, what the stream and the server do not promise. */
void pub_check_durability(struct vigil_pub *p, const jsStreamInfo *si);
/* Records a refusal (status, JetStream error code and text) for pub_why. */
void pub_refused(struct vigil_pub *p, natsStatus s, int code, const char *text);
/* Why JetStream did not acknowledge (s, and the last refusal recorded), in
 * buf. */
const char *pub_why(struct vigil_pub *p, natsStatus s, char *buf, size_t len);

#endif
