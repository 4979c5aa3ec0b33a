// SPDX-License-Identifier: GPL-2.0
/*
 * Agents are acknowledged only for what is out: written to the export file
 * and, with --publish, acknowledged by JetStream. JetStream's acks come
 * later than the batch (the batch layout's pipeline, publish_batch.c), so
 * each flush leaves an ack waiting on its agent with the batch's ticket;
 * once vigil_pub_done reaches the ticket, the state file records the
 * agent's offset and the export file's size as of that batch, and then the
 * ack goes. Without --publish, or with one message per event, the ticket
 * is done before it is waited for, and the ack goes at once.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "collector.h"
#include "conn_tls.h"
#include "log.h"

void collector_ack_later(struct collector *c, struct agent *a, uint64_t ticket, uint64_t upto)
{
	struct agent_ack *k;

	if (!a->nacks)
		c->acking++;
	if (a->nacks == AGENT_ACKS)
		k = &a->acks[a->nacks - 1];	/* the last one waits longer */
	else
		k = &a->acks[a->nacks++];
	*k = (struct agent_ack){ ticket, upto, a->written };
}

int collector_conn_ack(struct collector *c, struct conn *k, uint64_t upto)
{
	struct vigil_stream_ack ack;
	ssize_t n;
	int err;

	vigil_stream_ack_build(&ack, upto);
	if (k->tls) {
		if ((err = conn_tls_ack(k, &ack, sizeof(ack))) < 0)
			return collector_conn_close(c, k, "cannot send an ack"), -EPIPE;
		if (err) {
			k->acked = upto;
		} else {
			vlog_debug("%s: ack %llu waits for the socket to take it (EPOLLOUT)",
				   k->peer, (unsigned long long)upto);
			collector_conn_tls_events(c, k);	/* also when not sent from
								 * its own read */
		}
		return 0;
	}
	n = send(k->fd, &ack, sizeof(ack), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n == (ssize_t)sizeof(ack))
		k->acked = upto;
	else if (n > 0 || (errno != EAGAIN && errno != EINTR))
		return collector_conn_close(c, k, "cannot send an ack"), -EPIPE;
	return 0;
}

/* Takes a's acks whose tickets are done: its offset done moves on, and the
 * table in memory records it. The highest upto taken, 0: none. */
static uint64_t take_done(struct collector *c, struct agent *a, uint64_t done, int *err)
{
	uint64_t upto = 0;
	unsigned n = 0;

	while (n < a->nacks && a->acks[n].ticket <= done) {
		upto = a->acks[n].upto;
		a->done = a->acks[n].written;
		n++;
	}
	if (!n)
		return 0;
	memmove(a->acks, a->acks + n, (a->nacks - n) * sizeof(*a->acks));
	a->nacks -= n;
	/* Also with no state file: the table in memory keeps the bindings. */
	*err = collector_agent_commit(c, a);
	return upto;
}

void collector_acks(struct collector *c)
{
	uint64_t mark = c->out.size, done = vigil_pub_done(c->pub, &mark);
	unsigned left = 0, seen = 0;
	int err = 0;

	if (!c->acking || !done)
		return;
	/* First every offset into the state file, then the acks. */
	for (unsigned i = 0; i < c->max_agents && seen < c->acking; i++) {
		struct agent *a = &c->agents[i];
		int e = 0;

		if (!a->used || !a->nacks)
			continue;
		seen++;
		a->ack_now = take_done(c, a, done, &e);
		if (e) {
			err = e;
			a->ack_now = 0;
			if (a->conn)
				collector_conn_close(c, a->conn, "cannot record progress");
		}
		left += a->nacks > 0;
	}
	if (!err && ((err = vigil_commit_write(&c->commit, mark)) ||
		     (c->out.sync && fdatasync(c->commit.fd) && (err = -errno))))
		vlog_err(err, "cannot record progress: no agent acknowledged");
	for (unsigned i = 0, n = 0; i < c->max_agents && n < seen; i++) {
		struct agent *a = &c->agents[i];
		struct conn *k = a->conn;
		uint64_t upto = a->ack_now;

		if (!a->used || !upto)
			continue;
		n++;
		a->ack_now = 0;
		if (err) {
			if (k)
				collector_conn_close(c, k, "cannot record progress");
			continue;
		}
		/* A connection that came since resumed at its last ack: it
		 * hears up to what it has sent again. */
		if (k && k->fd >= 0 && k->hello_done && (upto = upto < k->offset ? upto : k->offset) > k->acked)
			collector_conn_ack(c, k, upto);
	}
	c->acking = left;
}
