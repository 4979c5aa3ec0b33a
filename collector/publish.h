/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Publishing to NATS JetStream (--publish): every JSON line the collector
 * writes is also a JetStream message, on subject PREFIX.NODE.KIND, with a
 * message id made of the agent's boot id, ring and sequence number. The
 * stream's duplicate window drops a line that a re-send after a reconnect,
 * or another collector, publishes again, so nothing needs to know how many
 * collectors there are.
 *
 * A TCP agent's records are acknowledged only once JetStream has
 * acknowledged them: while JetStream is away, the collector holds the batch
 * and retries, and the agents keep theirs in their rings and spools.
 */
#ifndef VIGIL_COLLECTOR_PUBLISH_H
#define VIGIL_COLLECTOR_PUBLISH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "buf.h"

struct vigil_pub;

struct vigil_pub_config {
	const char *urls;	/* nats://HOST:PORT, comma-separated for a cluster */
	const char *prefix;	/* subjects are PREFIX.NODE.KIND */
	const char *stream;	/* created with subjects PREFIX.> when missing */
	const char *creds;	/* a NATS credentials file, or NULL */
	/* TLS (any of them set, or a tls:// URL, turns it on): the CA that
	 * signs the servers, the client's certificate chain and key (PEM),
	 * the name the server's certificate must carry. */
	const char *tls_ca, *tls_cert, *tls_key, *tls_name;
	double wait;		/* seconds an attempt waits for JetStream's acks */
	bool batch;		/* the batch layout (publish_batch.c), else one
				 * message per event */
	double min_window;	/* seconds of duplicate window wanted: warned
				 * about when shorter, set on a stream created */
	volatile sig_atomic_t *stop;	/* set: give up holding a batch */
	/* Called between the attempts while agents are held (NULL: none),
	 * and while the batch layout's pipeline is full: the collector's
	 * loop waits here then, so its health goes on from it. */
	void (*holding)(void *ctx);
	void *holding_ctx;
};

/* Connects and checks (or creates) the stream; errors name the URL. */
int vigil_pub_open(struct vigil_pub **pub, const struct vigil_pub_config *cfg);
/* The line of batch from `from` to its end (one line, '\n' included) is
 * an event of agent (node, boot id string, ring), of the record at ring
 * offset at (a gap: of the record that revealed it, or where lost bytes
 * start); id_kind and n make its message id in the event layout: "r" and
 * the sequence number for a record, "g" and the first missing sequence
 * number for a gap, "o" and the offset for lost bytes. */
void vigil_pub_line(struct vigil_pub *pub, const struct vigil_buf *batch, size_t from,
		    const char *node, const char *boot, uint32_t ring, uint64_t at,
		    const char *id_kind, uint64_t n);
/* Publishes the lines marked in batch as ticket *ticket (tickets count up
 * from 1; 0 for a NULL pub, which has nothing to do): 0; or stop was set
 * (-EINTR), or memory ran out (-ENOMEM). One message per event: retries
 * until JetStream has acknowledged every line, then returns. Batch layout
 * (publish_batch.c): pipelined, returns once the lines are copied and
 * there is room for more; vigil_pub_done says when they are in the stream.
 * mark: the caller's, given back by vigil_pub_done (the export file's
 * size after the batch). */
int vigil_pub_send(struct vigil_pub *pub, const struct vigil_buf *batch, uint64_t mark,
		   uint64_t *ticket);
/* The last ticket JetStream has acknowledged each line of, with every
 * ticket before it, and its mark (0: none yet). NULL pub: UINT64_MAX, mark
 * untouched. */
uint64_t vigil_pub_done(const struct vigil_pub *pub, uint64_t *mark);
/* Readable when acks came back (the batch layout's pipeline): the loop then
 * calls vigil_pub_pump. -1: none to watch. */
int vigil_pub_fd(const struct vigil_pub *pub);
/* Takes the acks that came, sends what can go, retries what was refused
 * once its backoff is over: call on vigil_pub_fd and now and then. */
void vigil_pub_pump(struct vigil_pub *pub);
/* Clears the marks, once the batch is out or given up. */
void vigil_pub_forget(struct vigil_pub *pub);
void vigil_pub_close(struct vigil_pub *pub);

/* What --metrics shows of publishing (collector/metrics.c). */
struct vigil_pub_counts {
	uint64_t published;	/* events JetStream acknowledged */
	uint64_t pending;	/* events of the batch not acknowledged yet */
	uint64_t messages;	/* messages JetStream acknowledged */
	uint64_t refusals;	/* attempts refused or unacknowledged (each retried) */
	bool holding;		/* agents held until JetStream acknowledges */
};
void vigil_pub_counts(const struct vigil_pub *pub, struct vigil_pub_counts *out);

#endif
