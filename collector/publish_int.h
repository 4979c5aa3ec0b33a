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

/* One line of the batch. */
struct pub_msg {
	size_t off, len;	/* the line in the batch, without its '\n' */
	size_t names;		/* event layout: offset in vigil_pub.names,
				 * "SUBJECT\0ID\0" */
	uint64_t at;		/* ring offset of the record it is of */
	unsigned ring;		/* batch layout: index in vigil_pub.rings */
	bool sent;		/* batch layout: in the stream already */
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
	uint64_t used;		/* the attempt that last had a line of it: which
				 * one goes when the table is full */
	uint64_t round;		/* the attempt that last published it */
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
	uint64_t batches;	/* attempts made */
	struct vigil_buf scratch;	/* a message's lines, when not contiguous */
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
/* Publishes the batch's lines not yet in the stream, one message per agent
 * ring at a time; the status of the first failure. */
natsStatus pub_batch_attempt(struct vigil_pub *p, const struct vigil_buf *batch);
/* Says, in the log, what the stream and the server do not promise. */
void pub_check_durability(struct vigil_pub *p, const jsStreamInfo *si);
/* Records a refusal (status, JetStream error code and text) for why(). */
void pub_refused(struct vigil_pub *p, natsStatus s, int code, const char *text);

#endif
