// SPDX-License-Identifier: GPL-2.0
/* A batch of JSON lines goes out: to the export file (or stdout), then to
 * JetStream. Whoever acknowledges agents does so only after this, and with
 * JetStream only once its ticket is done (acks.c). */
#include "collector.h"
#include "log.h"

int collector_batch_out(struct collector *c, uint64_t *ticket)
{
	double t0 = vigil_stream_now(), held;
	int err = 0;

	*ticket = 0;
	if (c->out.fd >= 0 && c->batch.len &&
	    ((err = vigil_export_write(&c->out, c->batch.p, c->batch.len)) ||
	     (c->out.sync && (err = vigil_export_sync(&c->out)))))
		vlog_err(err, "cannot write events out");
	else
		err = vigil_pub_send(c->pub, &c->batch, c->out.size, ticket);
	vigil_pub_forget(c->pub);
	/* A JetStream outage held everyone: a frame half read before it, or a
	 * hello not yet read, is not the peer's fault. */
	held = vigil_stream_now() - t0;
	if (held > 0.5)
		collector_conn_postpone(c, held);
	c->batch.len = 0;
	return err;
}
